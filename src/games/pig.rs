//! Pig: two players and a die. On a turn a player rolls as often as they like, adding
//! each roll to the turn's total, until they hold (the total is banked) or roll a 1 (it is
//! lost); the first to bank `goal` points wins. The exact chance of winning under
//! optimal play, by value iteration (Neller and Presser 2004), is what the game-tree
//! searches are checked against.

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
