//! From a push sequence to LURD: the player's walk before each push is a shortest
//! path around the boxes, found by breadth-first search.

use super::board::{Board, NONE};
use super::{Direction, Push};

/// The LURD text for `pushes` from the level's start, or `None` if a push cannot be
/// reached or played (which a correct search never produces).
pub fn lurd(board: &Board, pushes: &[Push]) -> Option<String> {
    let n = board.n_squares();
    let mut boxes = vec![false; n];
    for &b in board.start_boxes() {
        boxes[b as usize] = true;
    }
    let mut player = board.start_player();
    let mut text = String::new();
    let mut came_from: Vec<Option<Direction>> = vec![None; n];
    let mut seen = vec![false; n];
    let mut queue = Vec::with_capacity(n);
    let mut walk = Vec::new();
    for push in pushes {
        let target = board.neighbour(push.square, push.direction.opposite());
        let beyond = board.neighbour(push.square, push.direction);
        if target == NONE
            || beyond == NONE
            || !boxes[push.square as usize]
            || boxes[beyond as usize]
        {
            return None;
        }
        seen.iter_mut().for_each(|s| *s = false);
        queue.clear();
        queue.push(player);
        seen[player as usize] = true;
        board.breadth_first(
            &mut queue,
            &mut seen,
            |s| !boxes[s as usize],
            |s, direction| came_from[s as usize] = Some(direction),
        );
        if !seen[target as usize] {
            return None;
        }
        walk.clear();
        let mut square = target;
        while square != player {
            let direction = came_from[square as usize]?;
            walk.push(direction);
            square = board.neighbour(square, direction.opposite());
        }
        text.extend(walk.iter().rev().map(|d| d.letter(false)));
        text.push(push.direction.letter(true));
        boxes[push.square as usize] = false;
        boxes[beyond as usize] = true;
        player = push.square;
    }
    Some(text)
}
