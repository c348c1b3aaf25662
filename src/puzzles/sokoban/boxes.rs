//! Boxes as a bitset over the board's squares, one bit a square in 64-bit words: a
//! state's boxes, a corral's boxes, or any other set of squares (walls for a walk).

use smallvec::SmallVec;

use super::board::Board;

/// Words a [`BoxSet`] holds inline: 192 squares, more than any level of the common
/// collections has (XSokoban's largest has 181), in a 32-byte state key.
pub(super) const INLINE_WORDS: usize = 3;

/// Boxes as a bitset over squares.
pub type BoxSet = SmallVec<[u64; INLINE_WORDS]>;

/// The number of words a bitset over `board`'s squares takes.
pub(super) fn words(board: &Board) -> usize {
    board.n_squares().div_ceil(64)
}

#[inline]
pub fn has_box(boxes: &[u64], square: u16) -> bool {
    boxes[square as usize / 64] >> (square % 64) & 1 == 1
}

#[inline]
pub(super) fn flip(boxes: &mut [u64], square: u16) {
    boxes[square as usize / 64] ^= 1 << (square % 64);
}

/// The squares of a bitset, in increasing order.
pub fn squares(boxes: &[u64]) -> impl Iterator<Item = u16> + '_ {
    boxes.iter().enumerate().flat_map(|(w, &word)| {
        let mut bits = word;
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                (w * 64) as u16 + bit as u16
            })
        })
    })
}
