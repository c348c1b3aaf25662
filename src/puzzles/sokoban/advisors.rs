//! Two of Festival's advisors (Shoham & Schaeffer, 2020) that look at the board, not
//! only at features. When no move packs a box, the *opener* takes the box nearest the
//! goals being filled further away from them, out of the way in; the *explorer* takes
//! a box, by a move that can be undone, off a square from which the player can then
//! push a box it could not push before. Each names at most one child of an expansion,
//! which the feature-space search then takes at no weight: both lead across plateaus
//! where no move changes a feature.

use std::cell::{OnceCell, RefCell};

use super::Direction;
use super::board::{Board, NONE};
use super::box_moves::BoxMove;
use super::boxes::has_box;
use crate::search::{Candidate, Features, Interrupt, Stop};

/// Boards with more squares than this go without the explorer: its table of which
/// square a box can be pushed to from which takes squares² bits (512 KiB here).
const MAX_SQUARES: usize = 2048;

/// The advisors' per-level table and scratch space.
#[derive(Default)]
pub(super) struct Advisors {
    /// Built on first use: only searches with the advisors ask for it.
    reach: OnceCell<Option<PushReach>>,
    scratch: RefCell<Scratch>,
}

#[derive(Default)]
struct Scratch {
    distance: Vec<u16>,
    seen: Vec<bool>,
    queue: Vec<u16>,
}

impl Advisors {
    /// Marks the children of the position `boxes` (features `features`) that the
    /// opener and the explorer name.
    pub(super) fn advise(
        &self,
        board: &Board,
        interrupt: &Interrupt,
        (boxes, features): (&[u64], &Features),
        children: &mut [Candidate<BoxMove>],
    ) {
        if let Some(i) = self.opener(board, boxes, features, children) {
            children[i].advised = true;
        }
        let reach = self
            .reach
            // A build cut short leaves no table; the search stops at once anyway.
            .get_or_init(|| PushReach::new(board, interrupt).ok().flatten());
        if let Some(i) = reach
            .as_ref()
            .and_then(|reach| explorer(reach, board, boxes, features, children))
        {
            children[i].advised = true;
        }
    }

    /// Unless some child packs a box: of the children that pack none fewer and cut the
    /// floor into no more areas, the one moving the box nearest (walking) to the empty
    /// goals of the deepest packing layer, without bringing it nearer; of those, the
    /// one taking it furthest.
    fn opener(
        &self,
        board: &Board,
        boxes: &[u64],
        features: &Features,
        children: &[Candidate<BoxMove>],
    ) -> Option<usize> {
        if children.iter().any(|c| c.features[0] < features[0]) {
            return None;
        }
        let deepest = board.deepest_empty_layer(|g| has_box(boxes, g))?;
        let scratch = &mut *self.scratch.borrow_mut();
        let Scratch {
            distance,
            seen,
            queue,
        } = scratch;
        let n = board.n_squares();
        distance.clear();
        distance.resize(n, u16::MAX);
        seen.clear();
        seen.resize(n, false);
        queue.clear();
        for &g in board.goals() {
            if !has_box(boxes, g) && board.layer_of(g) == Some(deepest) {
                distance[g as usize] = 0;
                seen[g as usize] = true;
                queue.push(g);
            }
        }
        board.breadth_first(
            queue,
            seen,
            |_| true,
            |s, direction| {
                let back = board.neighbour(s, direction.opposite());
                distance[s as usize] = distance[back as usize] + 1;
            },
        );
        let mut best: Option<(usize, u16, u16)> = None;
        for (i, child) in children.iter().enumerate() {
            if child.features[0] > features[0] || child.features[1] > features[1] {
                continue;
            }
            let near = distance[child.action.from as usize];
            let after = distance[child.action.to as usize];
            if after < near {
                continue;
            }
            if best.is_none_or(|(_, n, a)| near < n || (near == n && after > a)) {
                best = Some((i, near, after));
            }
        }
        best.map(|(i, _, _)| i)
    }
}

/// Of the children that pack none fewer, whose box could be pushed back where it came
/// from, and whose move frees a square from which the player can push a neighbouring
/// box onto live floor: the one with the least features, then the least estimate.
fn explorer(
    reach: &PushReach,
    board: &Board,
    boxes: &[u64],
    features: &Features,
    children: &[Candidate<BoxMove>],
) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, child) in children.iter().enumerate() {
        let BoxMove { from, to, .. } = child.action;
        if child.features[0] > features[0]
            || !reach.reaches(to, from)
            || !opens_a_push(board, boxes, from, to)
        {
            continue;
        }
        if best.is_none_or(|b| (child.features, child.h) < (children[b].features, children[b].h)) {
            best = Some(i);
        }
    }
    best
}

/// Whether, with the box of `boxes` on `from` taken to `to`, the player standing on
/// `from` can push a box beside it onto a square that is neither dead nor taken.
fn opens_a_push(board: &Board, boxes: &[u64], from: u16, to: u16) -> bool {
    Direction::ALL.into_iter().any(|direction| {
        let beside = board.neighbour(from, direction);
        if beside == NONE || beside == to || !has_box(boxes, beside) {
            return false;
        }
        let beyond = board.neighbour(beside, direction);
        beyond != NONE && beyond != to && !has_box(boxes, beyond) && !board.is_dead(beyond)
    })
}

/// Which square a box can be pushed to from which on an otherwise empty board (floor
/// behind it for each push; whether the player can walk there is not asked).
struct PushReach {
    n: usize,
    /// Bit `from * n + to`.
    bits: Vec<u64>,
}

impl PushReach {
    /// `None` for boards above [`MAX_SQUARES`]; polls `interrupt` per square.
    fn new(board: &Board, interrupt: &Interrupt) -> Result<Option<PushReach>, Stop> {
        let n = board.n_squares();
        if n > MAX_SQUARES {
            return Ok(None);
        }
        let mut bits = vec![0u64; (n * n).div_ceil(64)];
        let mut pushes = vec![u16::MAX; n];
        let mut queue = Vec::with_capacity(n);
        for from in 0..n as u16 {
            interrupt.poll(4 * n as u32)?;
            pushes.fill(u16::MAX);
            queue.clear();
            queue.push(from);
            board.pushes_from(&mut queue, &mut pushes, |_| false);
            for to in queue.iter() {
                let bit = from as usize * n + *to as usize;
                bits[bit / 64] |= 1 << (bit % 64);
            }
        }
        Ok(Some(PushReach { n, bits }))
    }

    fn reaches(&self, from: u16, to: u16) -> bool {
        let bit = from as usize * self.n + to as usize;
        self.bits[bit / 64] >> (bit % 64) & 1 == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzles::sokoban::Level;
    use crate::puzzles::sokoban::boxes::{BoxSet, flip, words};

    fn board(text: &str) -> (Board, impl Fn(usize, usize) -> u16) {
        let level = Level::parse(text).expect("a valid level");
        let board = Board::new(&level);
        let cols = level.cols();
        let copy = board.clone();
        (board, move |row, col| copy.square(row * cols + col))
    }

    fn boxes(board: &Board, squares: &[u16]) -> BoxSet {
        let mut boxes: BoxSet = smallvec::smallvec![0; words(board)];
        squares.iter().for_each(|&s| flip(&mut boxes, s));
        boxes
    }

    fn child(from: u16, to: u16, features: Features) -> Candidate<BoxMove> {
        let side = Direction::Left;
        Candidate {
            action: BoxMove { from, to, side },
            features,
            h: 0,
            advised: false,
        }
    }

    /// The corner goal is filled first. Nothing packs a box: the opener takes the box
    /// nearest that goal further away from it, however far the others go.
    #[test]
    fn the_opener_moves_the_box_nearest_the_next_goal_out_of_the_way() {
        let (board, at) = board("#########\n#..     #\n#  $ $ @#\n#########");
        let (near, far) = (at(2, 3), at(2, 5));
        let boxes = boxes(&board, &[near, far]);
        let same = [2, 1, 0, 0];
        let mut children = [
            child(near, at(1, 3), same),         // nearer the goal
            child(far, at(2, 6), same),          // the box further off
            child(near, at(1, 4), same),         // as far as before
            child(near, at(2, 4), same),         // further: the one
            child(near, at(2, 6), [2, 2, 0, 0]), // cuts the floor in two
        ];
        let advisors = Advisors::default();
        let chosen = advisors.opener(&board, &boxes, &same, &children);
        assert_eq!(chosen, Some(3));
        children[1].features = [1, 1, 0, 0];
        assert_eq!(
            advisors.opener(&board, &boxes, &same, &children),
            None,
            "a move packs a box"
        );
    }

    /// Taking the upper box right lets the player stand where it was and push the
    /// lower box down; taking the lower box right (which cuts the floor in two) lets it
    /// push the upper one up, onto the top row, from where it still reaches the goal
    /// along the wall.
    #[test]
    fn the_explorer_frees_a_square_to_push_a_box_from() {
        let (board, at) =
            board("########\n#.     #\n#.  $  #\n#   $  #\n#      #\n#     @#\n########");
        let (upper, lower) = (at(2, 4), at(3, 4));
        let boxes = boxes(&board, &[upper, lower]);
        let reach = PushReach::new(&board, &Interrupt::never())
            .expect("never interrupted")
            .expect("a small board");
        let parent = [2, 1, 0, 0];
        let mut children = [
            child(lower, at(3, 5), [2, 2, 0, 0]),
            child(upper, at(2, 5), [2, 1, 0, 0]),
            // Each frees the square above the lower box, but has no way back: nothing
            // pushes a box off the top row or away from the right-hand wall.
            child(upper, at(1, 4), [2, 1, 0, 0]),
            child(upper, at(2, 6), [1, 1, 0, 0]),
        ];
        assert_eq!(
            explorer(&reach, &board, &boxes, &parent, &children),
            Some(1)
        );
        children[1].features = [3, 1, 0, 0];
        assert_eq!(
            explorer(&reach, &board, &boxes, &parent, &children),
            Some(0),
            "unpacks a box"
        );
        assert!(!reach.reaches(at(2, 6), upper));
    }
}
