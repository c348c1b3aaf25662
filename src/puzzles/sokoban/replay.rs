//! The LURD plan validator: replays a plan on the level and says whether every step is
//! legal, which one is not and why, and whether all boxes end on goals.

use super::{Direction, Level};
use crate::puzzles::StepError;

/// Which boards [`replay`] records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Snapshots {
    None,
    /// After every step.
    EachStep,
    /// After every push only (what a solution's `boards` shows).
    EachPush,
}

/// The validator's verdict on a LURD plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    pub legal: bool,
    /// Legal and every box on a goal at the end.
    pub solved: bool,
    /// Steps played before the first illegal one (all of them when legal).
    pub moves: usize,
    pub pushes: usize,
    pub error: Option<StepError>,
    /// XSB boards, as [`Snapshots`] asked.
    pub boards: Vec<String>,
}

/// The number of pushes (upper-case letters) in a LURD plan.
pub fn count_pushes(plan: &str) -> usize {
    plan.chars().filter(char::is_ascii_uppercase).count()
}

/// Replays `plan` from the level's start. Upper case must push a box and lower case
/// must not, so a plan's push count is exactly what it claims.
pub fn replay(level: &Level, plan: &str, snapshots: Snapshots) -> Replay {
    let mut boxes = level.boxes.clone();
    let mut player = level.player;
    let mut result = Replay {
        legal: true,
        solved: false,
        moves: 0,
        pushes: 0,
        error: None,
        boards: Vec::new(),
    };
    let at = |cell: usize| {
        format!(
            "row {}, column {}",
            cell / level.cols + 1,
            cell % level.cols + 1
        )
    };
    for (i, letter) in plan.chars().enumerate() {
        let fail = |reason: String| StepError {
            step: i + 1,
            reason,
        };
        let Some((direction, push)) = Direction::from_letter(letter) else {
            result.error = Some(fail(format!(
                "'{letter}' is not a LURD step (use l, u, r, d; upper case to push)"
            )));
            break;
        };
        let target = match level.step(player, direction) {
            Some(cell) if !level.walls[cell] => cell,
            _ => {
                result.error = Some(fail(format!(
                    "the player at {} walks into a wall going {}",
                    at(player),
                    direction.name()
                )));
                break;
            }
        };
        if boxes[target] {
            if !push {
                result.error = Some(fail(format!(
                    "'{letter}' moves the box at {} but is written in lower case",
                    at(target)
                )));
                break;
            }
            let beyond = level.step(target, direction);
            let Some(beyond) = beyond.filter(|&c| !level.walls[c] && !boxes[c]) else {
                result.error = Some(fail(format!(
                    "the box at {} cannot be pushed {}: the way is blocked",
                    at(target),
                    direction.name()
                )));
                break;
            };
            boxes[target] = false;
            boxes[beyond] = true;
            result.pushes += 1;
        } else if push {
            result.error = Some(fail(format!(
                "'{letter}' is written as a push but there is no box at {}",
                at(target)
            )));
            break;
        }
        player = target;
        result.moves += 1;
        if snapshots == Snapshots::EachStep || (snapshots == Snapshots::EachPush && push) {
            result.boards.push(level.xsb_with(&boxes, player));
        }
    }
    result.legal = result.error.is_none();
    result.solved = result.legal && boxes.iter().zip(&level.goals).all(|(&b, &g)| b == g);
    result
}
