//! The search back from the goal (Festival's backward search): boxes start on the
//! goals, with the player anywhere, and are pulled, a whole box move at a time, until
//! the level's start comes back. Every position it reaches can be pushed on to the
//! goal (its pulls reversed), so forward deadlock tests have nothing to find; instead
//! a box is never pulled onto a square no start box can be pushed to. A forward and a
//! backward search that store the same position meet there
//! ([`crate::search::solve_interleaved`]).

use super::board::{Board, NONE};
use super::box_moves::{BoxMove, BoxMoveDomain, Placed, Way};
use super::boxes::{BoxSet, flip, has_box, squares, words};
use super::domain::State;
use super::flood::Flood;
use crate::search::{Cost, Features, Successor};

/// What a search from the goal needs besides the forward domain.
pub(super) struct Backward {
    /// The level's start, as a key: the position the search is looking for.
    start: State,
    /// [`Board::pushes_from_start`].
    from_start: Vec<u16>,
}

impl Backward {
    /// Asks nothing of the forward domain's bound, which a start with a box on a dead
    /// square does not have.
    pub fn new(board: &Board) -> Backward {
        let mut boxes: BoxSet = smallvec::smallvec![0; words(board)];
        for &b in board.start_boxes() {
            flip(&mut boxes, b);
        }
        let player = Flood::default().fill(board, &boxes, board.start_player());
        let start = State {
            boxes,
            player,
            bound: 0,
        };
        let from_start = board.pushes_from_start();
        Backward { start, from_start }
    }

    /// No start box can ever be pushed to `square`.
    pub fn is_dead(&self, square: u16) -> bool {
        self.from_start[square as usize] == u16::MAX
    }

    pub fn is_start(&self, state: &State) -> bool {
        *state == self.start
    }

    /// The pulls still needed, at least: each box's distance back to its nearest start
    /// square.
    fn estimate(&self, boxes: &[u64]) -> Cost {
        squares(boxes)
            .map(|b| Cost::from(self.from_start[b as usize]))
            .sum()
    }

    /// The goal position with the player anywhere (`NONE`), where the search begins.
    pub fn root(&self, board: &Board) -> Placed {
        let mut boxes: BoxSet = smallvec::smallvec![0; words(board)];
        for &g in board.goals() {
            flip(&mut boxes, g);
        }
        let regions = Flood::default().count_regions(board, &boxes);
        let bound = self.estimate(&boxes);
        Placed {
            position: State {
                boxes,
                player: NONE,
                bound,
            },
            regions,
        }
    }

    /// FESS's features going backward: boxes not yet on a start square, and the areas
    /// the boxes cut the floor into.
    pub fn features(&self, placed: &Placed) -> Features {
        let away = squares(&placed.position.boxes)
            .filter(|&b| !has_box(&self.start.boxes, b))
            .count();
        [away as u16, placed.regions, 0, 0]
    }

    /// The push that undoes pull `pull`: the box goes back, and the player ends where
    /// it stood before the pull.
    pub fn undo(pull: BoxMove) -> BoxMove {
        BoxMove {
            from: pull.to,
            to: pull.from,
            side: pull.side,
        }
    }
}

impl BoxMoveDomain {
    /// The children of `placed` by one box's pulls (see [`Backward`]); each move's
    /// side is where the player stood before it, so that [`Backward::undo`] can put
    /// the player back. From the root, the player may start in any area.
    pub(super) fn expand_pulls(
        &self,
        backward: &Backward,
        placed: &Placed,
        out: &mut Vec<Successor<Placed, BoxMove>>,
        known: &mut dyn FnMut(&Placed, Cost) -> bool,
    ) {
        let state = &placed.position;
        let board = self.board();
        let scratch = &mut *self.pushes.scratch();
        let anywhere = state.player == NONE;
        if !anywhere {
            scratch.region.fill(board, &state.boxes, state.player);
        }
        let region = &scratch.region;
        let walk = &mut *self.walk.borrow_mut();
        let walk_work = 4 * board.n_squares() as u32;
        let mut cut_short = false;
        for from in squares(&state.boxes) {
            if cut_short || self.pushes.interrupt().poll(walk_work).is_err() {
                break;
            }
            walk.run(
                board,
                &state.boxes,
                (from, Way::Pull(backward)),
                |s| anywhere || region.reached(s),
                |landing| {
                    if self.pushes.poll_child(out.len()).is_err() {
                        cut_short = true;
                        return false;
                    }
                    let mut child = placed.after(from, &landing);
                    let cost = Cost::from(landing.pushes);
                    if known(&child, cost) {
                        return true;
                    }
                    child.position.bound = backward.estimate(&child.position.boxes);
                    out.push(Successor {
                        action: BoxMove {
                            from,
                            to: landing.to,
                            side: landing.origin,
                        },
                        state: child,
                        cost,
                    });
                    true
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Board, Level, Portfolio, Snapshots, Techniques, Variant, plan, replay};
    use super::super::{Bound, read_collection, solve_interleaved};
    use crate::search::{Advice, Budget, Origin, Outcome};

    fn variant(origin: Origin) -> Variant {
        Variant {
            techniques: Techniques::any(Bound::Matching),
            advice: Advice::EveryImprovement,
            weight: 1,
            origin,
        }
    }

    fn turns(variants: &[Variant]) -> Portfolio {
        Portfolio {
            variants: variants.to_vec(),
            sprint: None,
        }
    }

    /// The plan `variants` find on `text`, replayed: whether it solves the level.
    fn solves(text: &str, variants: &[Variant]) -> bool {
        let lvl = Level::parse(text).expect("level");
        let board = Board::new(&lvl);
        let (report, _) = solve_interleaved(&board, &turns(variants), &mut Budget::unlimited());
        let Outcome::Solved(solution) = report.outcome else {
            panic!("{:?}", report.outcome);
        };
        let plan = plan::lurd(&board, &solution.actions).expect("plan");
        replay(&lvl, &plan, Snapshots::None).solved
    }

    /// The box starts in a corner: the level is dead before any search, and the search
    /// from the goal is set up without the bound such a start lacks.
    #[test]
    fn a_start_with_a_dead_box_is_unsolvable_with_a_search_from_the_goal_beside() {
        let text = "#######\n##  . #\n###   #\n##  # #\n###   #\n#$@#  #\n#######";
        let board = Board::new(&Level::parse(text).expect("level"));
        let variants = [variant(Origin::Start), variant(Origin::Goal)];
        let (report, _) = solve_interleaved(&board, &turns(&variants), &mut Budget::unlimited());
        assert_eq!(report.outcome, Outcome::Unsolvable);
    }

    #[test]
    fn a_search_from_the_goal_alone_finds_a_plan_that_replays() {
        let xsokoban = include_str!("../../../benches/data/xsokoban90.xsb");
        let text = &read_collection(xsokoban)[0].text;
        assert!(solves(text, &[variant(Origin::Goal)]));
    }

    #[test]
    fn searches_from_both_ends_meet_and_the_joined_plan_replays() {
        let xsokoban = include_str!("../../../benches/data/xsokoban90.xsb");
        let text = &read_collection(xsokoban)[0].text;
        assert!(solves(
            text,
            &[variant(Origin::Start), variant(Origin::Goal)]
        ));
    }
}
