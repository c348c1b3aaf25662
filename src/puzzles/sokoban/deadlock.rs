//! Freeze deadlocks: a box that can never move again, off a goal, makes the level
//! unsolvable. The test is the classic recursion (sokobano.de, "deadlocks"): a box is
//! blocked on an axis by a wall, by dead squares on both sides, or by a neighbouring
//! box that is itself frozen while this one counts as a wall. It covers 2×2 blocks and
//! the longer chains of boxes and walls.

use super::Direction;
use super::board::{Board, NONE};
use super::boxes::has_box;

/// True when the box just pushed onto `square` is frozen together with a box that is
/// off its goal. `frozen` is scratch space (the boxes of the chain under test).
pub fn freeze_deadlock(board: &Board, boxes: &[u64], square: u16, frozen: &mut Vec<u16>) -> bool {
    frozen.clear();
    is_frozen(board, boxes, square, frozen) && frozen.iter().any(|&s| !board.is_goal(s))
}

fn is_frozen(board: &Board, boxes: &[u64], square: u16, frozen: &mut Vec<u16>) -> bool {
    frozen.push(square);
    let mark = frozen.len();
    let blocked = axis_blocked(
        board,
        boxes,
        square,
        [Direction::Left, Direction::Right],
        frozen,
    ) && axis_blocked(
        board,
        boxes,
        square,
        [Direction::Up, Direction::Down],
        frozen,
    );
    if !blocked {
        // Boxes found frozen on the way were only frozen if this one is.
        frozen.truncate(mark - 1);
    }
    blocked
}

fn axis_blocked(
    board: &Board,
    boxes: &[u64],
    square: u16,
    sides: [Direction; 2],
    frozen: &mut Vec<u16>,
) -> bool {
    let [a, b] = sides.map(|d| board.neighbour(square, d));
    let wall = |s: u16| s == NONE || frozen.contains(&s);
    if wall(a) || wall(b) {
        return true;
    }
    if board.is_dead(a) && board.is_dead(b) {
        return true;
    }
    [a, b]
        .into_iter()
        .any(|s| has_box(boxes, s) && is_frozen(board, boxes, s, frozen))
}
