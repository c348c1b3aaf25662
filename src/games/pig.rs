//! Pig: two players and a die. On a turn a player rolls as often as they like, adding
//! each roll to the turn's total, until they hold (the total is banked) or roll a 1 (it is
//! lost); the first to bank `goal` points wins. The exact chance of winning under
//! optimal play, by value iteration (Neller and Presser 2004), is what the game-tree
//! searches are checked against. [`Pig`] is the game for the engine: the seed's white
//! and black decision vertices (the first player maximises its chance of winning, the
//! second minimises it) with the die's chance vertices between them.

use crate::search::game::{Game, Side};

/// Pig to `goal` for the engine. Values are the first player's chance of winning.
#[derive(Clone, Copy, Debug)]
pub struct Pig {
    pub goal: u8,
}

crate::named_enum! {
    /// A Pig move.
    pub enum PigMove {
        Roll = "roll",
        Hold = "hold",
    }
}

/// What a state is: a player to decide, the die about to be rolled, a hold about to be
/// banked, or the game won.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    Turn,
    Rolling,
    Holding,
    Won,
}

/// A Pig position, from the side of the player to move: their banked score, the
/// opponent's, the turn's total so far, and whether they are the first player. For a
/// won game, `first` says whether the first player won.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PigState {
    pub phase: Phase,
    pub me: u8,
    pub other: u8,
    pub turn: u8,
    pub first: bool,
}

impl PigState {
    /// The game's start: the first player to move, nothing banked.
    pub fn start() -> PigState {
        PigState {
            phase: Phase::Turn,
            me: 0,
            other: 0,
            turn: 0,
            first: true,
        }
    }

    /// The other player's turn, `banked` added to the mover's score.
    fn pass(self, banked: u8) -> PigState {
        PigState {
            phase: Phase::Turn,
            me: self.other,
            other: self.me + banked,
            turn: 0,
            first: !self.first,
        }
    }

    fn won(self) -> PigState {
        PigState {
            phase: Phase::Won,
            me: 0,
            other: 0,
            turn: 0,
            first: self.first,
        }
    }

    /// The first player's value of a won game.
    fn first_value(self) -> f64 {
        if self.first { 1.0 } else { 0.0 }
    }
}

impl Game for Pig {
    type State = PigState;
    type Move = PigMove;

    fn side(&self, s: &PigState) -> Side {
        if s.first { Side::Max } else { Side::Min }
    }

    fn moves(&self, s: &PigState, out: &mut Vec<(PigMove, f64, PigState)>) {
        if s.phase != Phase::Turn {
            return;
        }
        let after = |phase| PigState { phase, ..*s };
        out.push((PigMove::Roll, 0.0, after(Phase::Rolling)));
        // A turn starts with a roll: holding nothing would only pass it.
        if s.turn > 0 {
            out.push((PigMove::Hold, 0.0, after(Phase::Holding)));
        }
    }

    fn final_value(&self, s: &PigState) -> f64 {
        s.first_value()
    }

    fn outcomes(&self, a: &PigState, out: &mut Vec<(f64, PigState)>) {
        match a.phase {
            Phase::Rolling => {
                out.push((1.0 / 6.0, a.pass(0)));
                for r in 2..=6u8 {
                    let turn = a.turn + r;
                    let next = if a.me + turn >= self.goal {
                        a.won()
                    } else {
                        PigState {
                            phase: Phase::Turn,
                            turn,
                            ..*a
                        }
                    };
                    out.push((1.0 / 6.0, next));
                }
            }
            Phase::Holding if a.me + a.turn >= self.goal => out.push((1.0, a.won())),
            Phase::Holding => out.push((1.0, a.pass(a.turn))),
            Phase::Turn | Phase::Won => {}
        }
    }

    /// The mover's lead (banked plus the turn's total, against the opponent's) as a
    /// share of the goal, around even chances; the first player's view.
    fn estimate(&self, a: &PigState) -> f64 {
        let lead =
            (f64::from(a.me) + f64::from(a.turn) - f64::from(a.other)) / f64::from(self.goal);
        let mover = (0.5 + lead / 2.0).clamp(0.0, 1.0);
        if a.first { mover } else { 1.0 - mover }
    }
}

/// The chance that the player to move wins with optimal play by both sides, for every
/// position: `p[i][j][k]` with `i` their banked score, `j` the opponent's, `k` the
/// turn's total (`i + k < goal`). Iterated until no value moves by more than `tolerance`.
pub fn win_chances(goal: usize, tolerance: f64) -> Vec<Vec<Vec<f64>>> {
    let mut p = vec![vec![vec![0.0; goal]; goal]; goal];
    loop {
        let mut change: f64 = 0.0;
        for i in 0..goal {
            for j in 0..goal {
                for k in 0..goal - i {
                    let new = best(&p, goal, i, j, k).0;
                    change = change.max((new - p[i][j][k]).abs());
                    p[i][j][k] = new;
                }
            }
        }
        if change < tolerance {
            return p;
        }
    }
}

/// The value of rolling, of holding, and the larger, at (i, j, k) under `p`.
fn best(p: &[Vec<Vec<f64>>], goal: usize, i: usize, j: usize, k: usize) -> (f64, f64, f64) {
    // A 1 passes the turn with nothing banked.
    let mut roll = (1.0 - p[j][i][0]) / 6.0;
    for r in 2..=6 {
        roll += if i + k + r >= goal {
            1.0 // holding at once then wins
        } else {
            p[i][j][k + r]
        } / 6.0;
    }
    // Holding nothing only passes the turn: a turn starts with a roll.
    let hold = if k == 0 {
        0.0
    } else if i + k >= goal {
        1.0
    } else {
        1.0 - p[j][i + k][0]
    };
    (roll.max(hold), roll, hold)
}

/// Whether the player to move should roll at (i, j, k), by `p`.
pub fn should_roll(p: &[Vec<Vec<f64>>], goal: usize, i: usize, j: usize, k: usize) -> bool {
    let (_, roll, hold) = best(p, goal, i, j, k);
    roll > hold
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::search::Budget;
    use crate::search::game::{best_first, expectimax, iterate};

    #[test]
    fn the_engine_values_pig_as_value_iteration_does() {
        let goal = 100;
        let p = win_chances(goal, 1e-13);
        let report = iterate::solve(
            &Pig { goal: goal as u8 },
            &PigState::start(),
            1e-13,
            &mut Budget::unlimited(),
        );
        assert_eq!(report.stop, None);
        assert!(report.answer.exact);
        let value = report.answer.value;
        assert!((value - p[0][0][0]).abs() <= 1e-9, "{value} {}", p[0][0][0]);
        assert!((value - 0.5306).abs() < 5e-5, "{value}");
        // Positions of the second player: their chance is 1 minus the first's value.
        for (me, other, turn) in [(50, 60, 20), (90, 0, 9), (97, 97, 1)] {
            let s = PigState {
                phase: Phase::Turn,
                me,
                other,
                turn,
                first: false,
            };
            let report = iterate::solve(&Pig { goal: 100 }, &s, 1e-13, &mut Budget::unlimited());
            let theirs = p[me as usize][other as usize][turn as usize];
            assert!((1.0 - report.answer.value - theirs).abs() <= 1e-9);
            let roll = should_roll(&p, goal, me.into(), other.into(), turn.into());
            let best = report.answer.best.expect("a move");
            assert_eq!(best == PigMove::Roll, roll, "{me} {other} {turn}");
        }
    }

    #[test]
    fn searches_with_more_nodes_come_closer_to_pigs_value() {
        let goal = 20u8;
        let exact = win_chances(goal.into(), 1e-13)[0][0][0];
        let error = |nodes| {
            let mut budget = Budget::new(
                crate::search::Limits {
                    max_nodes: Some(nodes),
                    ..crate::search::Limits::default()
                },
                crate::search::CancelFlag::new(),
            );
            let report = best_first::search(
                &Pig { goal },
                &PigState::start(),
                best_first::Preferences::default(),
                &mut budget,
                1024,
                &mut |_| {},
            );
            (report.answer.value - exact).abs()
        };
        let (small, large) = (error(1_000), error(300_000));
        assert!(large < small, "{small} {large}");
        assert!(large < 0.05, "{small} {large}");
        // Depth-limited expectimax with the die's chances, to a depth past most turns.
        let mut budget = Budget::new(
            crate::search::Limits {
                max_nodes: Some(300_000),
                ..crate::search::Limits::default()
            },
            crate::search::CancelFlag::new(),
        );
        let report = expectimax::search(
            &Pig { goal },
            &PigState::start(),
            0.0,
            u32::MAX,
            &mut budget,
            &mut |_| {},
        );
        assert!(
            (report.answer.value - exact).abs() < 0.05,
            "{}",
            report.answer.value
        );
    }

    #[test]
    fn the_first_player_wins_pig_to_100_about_53_percent_of_the_time() {
        let p = win_chances(100, 1e-12);
        // Neller and Presser, "Optimal play of the dice game Pig" (2004): 0.5306.
        assert!((p[0][0][0] - 0.5306).abs() < 5e-5, "{}", p[0][0][0]);
        // A turn total that wins is banked; a small one is risked.
        assert!(!should_roll(&p, 100, 90, 0, 10));
        assert!(should_roll(&p, 100, 0, 0, 2));
    }

    #[test]
    fn a_tiny_pig_agrees_with_a_simulation_of_its_policy() {
        let goal = 10;
        let p = win_chances(goal, 1e-13);
        let mut rng = crate::search::rng::Rng::new(3);
        let games = 200_000;
        let mut first_wins = 0;
        for _ in 0..games {
            let (mut scores, mut turn, mut mover) = ([0usize; 2], 0usize, 0usize);
            loop {
                let (i, j) = (scores[mover], scores[1 - mover]);
                if should_roll(&p, goal, i, j, turn) {
                    let die = 1 + rng.below(6);
                    if die == 1 {
                        turn = 0;
                        mover = 1 - mover;
                    } else {
                        turn += die;
                        if i + turn >= goal {
                            scores[mover] += turn;
                            break;
                        }
                    }
                } else {
                    scores[mover] += turn;
                    if scores[mover] >= goal {
                        break;
                    }
                    turn = 0;
                    mover = 1 - mover;
                }
            }
            first_wins += usize::from(scores[0] >= goal);
        }
        let simulated = first_wins as f64 / games as f64;
        // Three standard deviations of the mean of 200,000 games.
        assert!(
            (simulated - p[0][0][0]).abs() < 0.0034,
            "{simulated} vs {}",
            p[0][0][0]
        );
    }
}
