//! Row tables: every row of 2, 3 or 4 cells slid toward its start and toward its end,
//! with the score of its merges, computed once. A move is then a table lookup per row
//! (or column).

use std::sync::OnceLock;

/// Highest exponent a cell holds (2^15 = 32768): two of them do not merge.
pub const MAX_EXPONENT: u8 = 15;

/// The slides of every row of one width: indexed by the row's nibbles, cell 0 lowest.
pub struct RowTable {
    /// The row slid toward cell 0, and the score of its merges.
    pub toward_start: Vec<(u16, u32)>,
    /// The row slid toward its last cell.
    pub toward_end: Vec<(u16, u32)>,
}

/// Slides `cells` (exponents, 0 empty) toward index 0: tiles close up, and each pair of
/// equal neighbours, from index 0 on, merges once. Returns the merges' score.
pub fn slide(cells: &mut [u8]) -> u32 {
    let tiles: Vec<u8> = cells.iter().copied().filter(|&c| c != 0).collect();
    let mut out = Vec::with_capacity(cells.len());
    let mut score = 0;
    let mut i = 0;
    while i < tiles.len() {
        if i + 1 < tiles.len() && tiles[i] == tiles[i + 1] && tiles[i] < MAX_EXPONENT {
            out.push(tiles[i] + 1);
            score += 1u32 << (tiles[i] + 1);
            i += 2;
        } else {
            out.push(tiles[i]);
            i += 1;
        }
    }
    out.resize(cells.len(), 0);
    cells.copy_from_slice(&out);
    score
}

fn pack(cells: &[u8]) -> u16 {
    cells
        .iter()
        .enumerate()
        .fold(0, |row, (i, &c)| row | (u16::from(c) << (4 * i)))
}

fn unpack(row: u16, width: usize) -> Vec<u8> {
    (0..width).map(|i| ((row >> (4 * i)) & 0xF) as u8).collect()
}

fn build(width: usize) -> RowTable {
    let n = 1usize << (4 * width);
    let mut toward_start = Vec::with_capacity(n);
    let mut toward_end = Vec::with_capacity(n);
    for row in 0..n {
        let mut cells = unpack(row as u16, width);
        let score = slide(&mut cells);
        toward_start.push((pack(&cells), score));
        let mut cells = unpack(row as u16, width);
        cells.reverse();
        let score = slide(&mut cells);
        cells.reverse();
        toward_end.push((pack(&cells), score));
    }
    RowTable {
        toward_start,
        toward_end,
    }
}

/// The table for rows of `width` cells (2 to 4).
pub fn table(width: usize) -> &'static RowTable {
    static TABLES: [OnceLock<RowTable>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    TABLES[width - 2].get_or_init(|| build(width))
}
