//! The packing order, found by pulling boxes out of a board with every goal filled
//! (Festival's parking order, Rolling Stone's goal-room analysis): each round removes
//! the goal boxes that can be pulled all the way out, onto floor where boxes come from,
//! past the goal boxes still standing. A level is packed in the reverse order: a box
//! pulled out in round k can be pushed back in once every goal of the later rounds
//! holds a box, since a pull path with more boxes standing is still one with fewer.

use super::Direction;
use super::board::{Board, NONE};
use crate::search::{Interrupt, Stop};

/// Per goal (as numbered in [`Board::goals`]), its packing layer: 0 for the goals
/// emptied first (filled last), and so on. Goals that can never be pulled out go in
/// first of all (the deepest layer).
pub(super) fn layers(board: &Board, interrupt: &Interrupt) -> Result<Vec<u16>, Stop> {
    let n = board.n_squares();
    let goals = board.goals();
    let sources = source_areas(board);
    let mut targets = vec![false; n];
    let mut filled: Vec<bool> = (0..n as u16).map(|s| board.is_goal(s)).collect();
    let mut layer = vec![u16::MAX; goals.len()];
    let mut reached = vec![false; n];
    let mut queue: Vec<u16> = Vec::with_capacity(n);
    let mut pull = Pull::new(n);
    for round in 0.. {
        interrupt.poll(4 * (n + goals.len()) as u32)?;
        reached.copy_from_slice(&sources);
        queue.clear();
        queue.extend((0..n as u16).filter(|&s| sources[s as usize]));
        board.breadth_first(&mut queue, &mut reached, |s| !filled[s as usize], |_, _| {});
        // A box pulled out must land where a start box can be pushed past the goal
        // boxes still standing: a corner of the source area no box can enter, or one
        // it enters only across goals that are full when this one is filled, is no way
        // out.
        let from_start = board.pushes_from_start_past(|s| filled[s as usize]);
        for (target, (&pushes, &source)) in targets.iter_mut().zip(from_start.iter().zip(&sources))
        {
            *target = source && pushes != u16::MAX;
        }
        let mut peeled = Vec::new();
        for (i, &goal) in goals.iter().enumerate() {
            if filled[goal as usize]
                && pull.out(board, goal, (&filled, &reached, &targets), interrupt)?
            {
                peeled.push(i);
            }
        }
        if peeled.is_empty() {
            break;
        }
        for i in peeled {
            filled[goals[i] as usize] = false;
            layer[i] = round;
        }
    }
    let deepest = layer
        .iter()
        .filter(|&&l| l != u16::MAX)
        .max()
        .map_or(0, |l| l + 1);
    layer
        .iter_mut()
        .filter(|l| **l == u16::MAX)
        .for_each(|l| *l = deepest);
    Ok(layer)
}

/// The squares of the areas the floor falls into with the goals walled off that
/// hold the player or a box off a goal at the start; goals themselves are not in
/// them, not even the one the player may start on. A pocket of a goal room, which the
/// player reaches only as the goals around it empty, is not a source.
fn source_areas(board: &Board) -> Vec<bool> {
    let mut source = vec![false; board.n_squares()];
    let mut queue = vec![board.start_player()];
    queue.extend(board.start_boxes().iter().filter(|&&b| !board.is_goal(b)));
    for &s in &queue {
        source[s as usize] = true;
    }
    board.breadth_first(&mut queue, &mut source, |s| !board.is_goal(s), |_, _| {});
    for &g in board.goals() {
        source[g as usize] = false;
    }
    source
}

/// A breadth-first search over one box's pulls: nodes are (box square, the side the
/// player stands on), and between pulls the player walks anywhere the box and the
/// standing goal boxes leave open.
struct Pull {
    seen: Vec<bool>,
    nodes: Vec<(u16, Direction)>,
    walk: Vec<bool>,
    walk_queue: Vec<u16>,
}

impl Pull {
    fn new(n: usize) -> Pull {
        Pull {
            seen: vec![false; 4 * n],
            nodes: Vec::new(),
            walk: vec![false; n],
            walk_queue: Vec::new(),
        }
    }

    /// Whether the box on `goal` can be pulled onto a `targets` square, the boxes on
    /// the other `filled` goals standing and the player starting anywhere in `reached`.
    fn out(
        &mut self,
        board: &Board,
        goal: u16,
        (filled, reached, targets): (&[bool], &[bool], &[bool]),
        interrupt: &Interrupt,
    ) -> Result<bool, Stop> {
        let n = board.n_squares();
        self.seen.fill(false);
        self.nodes.clear();
        let blocked = |s: u16, at: u16| s == at || (filled[s as usize] && s != goal);
        for side in Direction::ALL {
            let stand = board.neighbour(goal, side);
            if stand != NONE && reached[stand as usize] {
                self.visit(goal, side);
            }
        }
        let mut next = 0;
        while next < self.nodes.len() {
            interrupt.poll(n as u32)?;
            let (at, side) = self.nodes[next];
            next += 1;
            // The player on `stand` steps back to `back`, pulling the box onto `stand`.
            let stand = board.neighbour(at, side);
            let back = board.neighbour(stand, side);
            if back == NONE || blocked(back, at) {
                continue;
            }
            if targets[stand as usize] {
                return Ok(true);
            }
            self.walk.fill(false);
            self.walk[back as usize] = true;
            self.walk_queue.clear();
            self.walk_queue.push(back);
            let walk = &mut self.walk;
            board.breadth_first(
                &mut self.walk_queue,
                walk,
                |s| !blocked(s, stand),
                |_, _| {},
            );
            for beside in Direction::ALL {
                let s = board.neighbour(stand, beside);
                if s != NONE && self.walk[s as usize] {
                    self.visit(stand, beside);
                }
            }
        }
        Ok(false)
    }

    fn visit(&mut self, square: u16, side: Direction) {
        let node = 4 * square as usize + side.index();
        if !self.seen[node] {
            self.seen[node] = true;
            self.nodes.push((square, side));
        }
    }
}
