//! Dead squares, asking where the player can walk: a box on a dead square can reach no
//! goal even with no other box on the board. Between two pushes the player goes round
//! the box only where the floor allows, so a box pushed into a pocket whose far side
//! the player can reach only through the box's own square never comes back out, though
//! there is floor behind it. The push distances of the matching bound
//! ([`Board::distance`]) do not ask: the higher bound that asking gives reorders the
//! feature-space search, on XSokoban for the worse (level 11 took 2.6 times as long),
//! while here asking only finds more boxes that are lost.
//!
//! Which sides of the box the player can walk between, the box standing in the way, is
//! one search of the whole floor ([`Cuts`]): the pieces a square's removal leaves.

use super::Direction;
use super::board::{Board, NONE, UNREACHABLE};
use super::boxes::words;
use super::cuts::Cuts;
use crate::search::{Interrupt, Stop};

/// Per square, whether no goal can be reached from it.
pub(super) fn dead_squares(board: &Board, interrupt: &Interrupt) -> Result<Vec<bool>, Stop> {
    let n = board.n_squares();
    let cuts = floor_cuts(board);
    let mut dead = vec![true; n];
    let mut pushes = Pushes::new(n);
    for &goal in board.goals() {
        interrupt.poll(16 * n as u32)?;
        pushes.to(board, &cuts, goal);
        for (dead, &d) in dead.iter_mut().zip(&pushes.row) {
            *dead &= d == UNREACHABLE;
        }
    }
    Ok(dead)
}

/// A breadth-first search over pulls from one goal, by (box square, side of the player).
struct Pushes {
    /// Per square, the fewest pushes to the goal with the player on the best side.
    row: Vec<u16>,
    seen: Vec<bool>,
    queue: Vec<(u16, Direction)>,
}

impl Pushes {
    fn new(n: usize) -> Pushes {
        Pushes {
            row: vec![UNREACHABLE; n],
            seen: vec![false; 4 * n],
            queue: Vec::with_capacity(4 * n),
        }
    }

    /// Fills `row` with the pushes to `goal` from each square on an otherwise empty
    /// board, the player starting on whichever side of the box suits best.
    fn to(&mut self, board: &Board, cuts: &Cuts, goal: u16) {
        self.row.fill(UNREACHABLE);
        self.seen.fill(false);
        self.queue.clear();
        self.row[goal as usize] = 0;
        // The player may end anywhere: every side of the goal is a start.
        for side in Direction::ALL {
            if board.neighbour(goal, side) != NONE {
                self.seen[4 * goal as usize + side.index()] = true;
                self.queue.push((goal, side));
            }
        }
        let mut next = 0;
        while next < self.queue.len() {
            let (at, side) = self.queue[next];
            next += 1;
            // The player on `stand` steps back to `back`, pulling the box onto `stand`:
            // undone, that is a push from `stand` to `at` with the player on `back`.
            let stand = board.neighbour(at, side);
            let back = board.neighbour(stand, side);
            if back == NONE {
                continue;
            }
            if self.row[stand as usize] == UNREACHABLE {
                self.row[stand as usize] = self.row[at as usize] + 1;
            }
            let piece = cuts.piece(board, stand, back);
            for around in Direction::ALL {
                let node = 4 * stand as usize + around.index();
                let beside = board.neighbour(stand, around);
                if beside != NONE && !self.seen[node] && cuts.piece(board, stand, beside) == piece {
                    self.seen[node] = true;
                    self.queue.push((stand, around));
                }
            }
        }
    }
}

/// The floor with no box on it, searched once: where the player can walk with a box on
/// any one square.
fn floor_cuts(board: &Board) -> Cuts {
    let mut cuts = Cuts::default();
    cuts.analyse(board, &vec![0; words(board)], board.start_player());
    cuts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzles::sokoban::Level;

    fn board(text: &str) -> Board {
        Board::new(&Level::parse(text).expect("a valid level"))
    }

    /// Distances by brute force: a breadth-first search over pushes from the box on
    /// `square` with the player on any other square, the player walking anywhere the
    /// box leaves open between pushes.
    fn brute_force(board: &Board, square: u16, goal: u16) -> u16 {
        let n = board.n_squares();
        let mut seen = vec![false; n * n];
        let mut queue: Vec<(u16, u16, u16)> = (0..n as u16)
            .filter(|&player| player != square)
            .map(|player| (square, player, 0))
            .collect();
        let mut next = 0;
        while next < queue.len() {
            let (at, player, pushes) = queue[next];
            next += 1;
            if at == goal {
                return pushes;
            }
            let mut walk = vec![false; n];
            walk[player as usize] = true;
            let mut reached = vec![player];
            board.breadth_first(&mut reached, &mut walk, |s| s != at, |_, _| {});
            for direction in Direction::ALL {
                let behind = board.neighbour(at, direction.opposite());
                let to = board.neighbour(at, direction);
                if behind != NONE && to != NONE && walk[behind as usize] {
                    let key = to as usize * n + at as usize;
                    if !seen[key] {
                        seen[key] = true;
                        queue.push((to, at, pushes + 1));
                    }
                }
            }
        }
        UNREACHABLE
    }

    #[test]
    fn pushes_match_a_search_over_box_and_player() {
        let levels = [
            // A loop the player can walk round.
            "#######\n#.    #\n# ### #\n# #@# #\n#  $  #\n#######\n",
            // A one-wide dead end off a room: a box pushed into it never comes back out.
            "########\n#   #  #\n# $    #\n#.@##  #\n########\n",
            // A corridor: the box goes one way or the other, as the player stands.
            "#########\n#.@ $   #\n#########\n",
            // A pocket off a corridor.
            "#######\n#.  $@#\n### ###\n  # #\n  ###\n",
            // A loop with a one-wide spur, goals on both sides.
            "#########\n#.   $ @#\n# ### ###\n#  $. #\n#######\n",
        ];
        for text in levels {
            let board = board(text);
            let cuts = floor_cuts(&board);
            let mut pushes = Pushes::new(board.n_squares());
            for &goal in board.goals() {
                pushes.to(&board, &cuts, goal);
                for square in 0..board.n_squares() as u16 {
                    assert_eq!(
                        pushes.row[square as usize],
                        brute_force(&board, square, goal),
                        "square {square} goal {goal} of\n{text}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_box_in_a_pocket_cannot_be_pushed_out() {
        // Below the corridor, a pocket two deep: a box on its first square could go
        // back up only with the player below it, where the box itself bars the way.
        let board = board("#######\n#.  $@#\n### ###\n  # #\n  ###\n");
        let pocket = board.square(2 * 7 + 3);
        assert_eq!(
            board.distance(0, pocket),
            3,
            "the count that ignores the player"
        );
        assert!(board.is_dead(pocket));
    }
}
