//! 2048 on the wire: the objective, a playout's settings, a move's answer, a game record
//! (returned by playouts, replayed by `/v1/validate`) and a running game's news.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::RequestError;
use super::random_seed;
use crate::games::twenty48::game::Objective;
use crate::games::twenty48::{
    BoardError, Dir, GameRecord, MAX_EXPONENT, Played, Shape, Spawn, Step, replay,
};
use crate::jobs::game::{GameOutcome, GameProgress, PlayedSoFar, Playout};
use crate::puzzles::sokoban::generate::MAX_SEED;
use crate::search::game::Answer;

/// The objective that values positions by the score still to come.
pub const SCORE_OBJECTIVE: &str = "score";

/// `objective`: a name (`optimal`, `any`; `score` for 2048), or `{"reach": tile}`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum ObjectiveRequest {
    Name(String),
    Reach { reach: u64 },
}

impl ObjectiveRequest {
    /// A 2048 objective; none is `score`.
    pub fn game(objective: Option<&ObjectiveRequest>) -> Result<Objective, RequestError> {
        match objective {
            None => Ok(Objective::Score),
            Some(ObjectiveRequest::Name(name)) if name == SCORE_OBJECTIVE => Ok(Objective::Score),
            Some(ObjectiveRequest::Name(name)) => Err(RequestError::UnknownName {
                field: "objective",
                value: name.clone(),
                expected: format!("{SCORE_OBJECTIVE}, {{\"reach\": tile}}"),
            }),
            Some(ObjectiveRequest::Reach { reach }) => {
                let tile = *reach;
                if tile.is_power_of_two() && (4..=1 << MAX_EXPONENT).contains(&tile) {
                    Ok(Objective::Reach(tile.trailing_zeros() as u8))
                } else {
                    Err(RequestError::ReachTile(tile))
                }
            }
        }
    }

    pub fn from_game(objective: Objective) -> ObjectiveRequest {
        match objective {
            Objective::Score => ObjectiveRequest::Name(SCORE_OBJECTIVE.to_string()),
            Objective::Reach(e) => ObjectiveRequest::Reach { reach: 1 << e },
        }
    }
}

/// `playout`: play a whole 2048 game, each move searched within its own budget.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PlayoutRequest {
    /// The spawns' seed (and the start's, without `cells`); absent: a random one,
    /// reported back so the game can be played again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms_per_move: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes_per_move: Option<u64>,
}

impl PlayoutRequest {
    /// The seed to play, drawn when absent, once the request is checked: an error when
    /// the seed is over [`MAX_SEED`] or no move budget is given.
    pub fn checked_seed(&self) -> Result<u64, RequestError> {
        if self.ms_per_move.is_none() && self.nodes_per_move.is_none() {
            return Err(RequestError::NoMoveBudget);
        }
        match self.seed {
            Some(seed) if seed > MAX_SEED => Err(RequestError::PlayoutSeed(seed)),
            Some(seed) => Ok(seed),
            None => Ok(random_seed()),
        }
    }
}

/// A move's answer: the best move, the position's value and each legal move's.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct AnswerView {
    /// `null` when the game is over.
    #[serde(rename = "move")]
    pub best: Option<String>,
    pub value: f64,
    pub move_values: BTreeMap<String, f64>,
    pub depth: u32,
    pub exact: bool,
}

impl From<&Answer<Dir>> for AnswerView {
    fn from(a: &Answer<Dir>) -> AnswerView {
        AnswerView {
            best: a.best.map(|d| d.name().to_string()),
            value: a.value,
            move_values: a
                .move_values
                .iter()
                .map(|(d, v)| (d.name().to_string(), *v))
                .collect(),
            depth: a.depth,
            exact: a.exact,
        }
    }
}

/// A whole game, compact enough that a long one fits a request body: its board's size,
/// its start, its moves (a letter each: `u d l r`) and its spawns (two characters each:
/// the cell's row-major index in hex, then `2` or `4`), the n-th spawn after the n-th
/// move.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GameRecordView {
    pub rows: usize,
    pub cols: usize,
    pub start: Vec<u64>,
    pub moves: String,
    pub spawns: String,
}

/// Why a record cannot be read as a game: a field that is not one.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RecordError {
    #[error("{0}")]
    Board(#[from] BoardError),
    #[error("move {step}: '{letter}' is not one of u, d, l, r")]
    Move { step: usize, letter: char },
    #[error("spawn {step}: expected a cell in hex (0-f) and 2 or 4, not '{text}'")]
    Spawn { step: usize, text: String },
    #[error("{moves} moves need {moves} spawns, not {spawns}")]
    Count { moves: usize, spawns: usize },
}

impl RecordError {
    /// The field at fault, under the record.
    pub fn field(&self) -> &'static str {
        match self {
            RecordError::Board(BoardError::Size { .. }) => "rows",
            RecordError::Board(_) => "start",
            RecordError::Move { .. } => "moves",
            RecordError::Spawn { .. } | RecordError::Count { .. } => "spawns",
        }
    }
}

/// A move's letter: its name's first.
fn letter(dir: Dir) -> char {
    dir.name().chars().next().unwrap_or('?')
}

impl From<&GameRecord> for GameRecordView {
    fn from(r: &GameRecord) -> GameRecordView {
        GameRecordView {
            rows: r.shape.rows(),
            cols: r.shape.cols(),
            start: r.shape.values(r.start),
            moves: r.steps.iter().map(|s| letter(s.dir)).collect(),
            spawns: r
                .steps
                .iter()
                .map(|s| format!("{:x}{}", s.spawn.cell, 1 << s.spawn.exponent))
                .collect(),
        }
    }
}

impl GameRecordView {
    pub fn into_record(self) -> Result<GameRecord, RecordError> {
        let shape = Shape::new(self.rows, self.cols)?;
        let start = shape.board(&self.start)?;
        let moves: Vec<char> = self.moves.chars().collect();
        let spawns: Vec<char> = self.spawns.chars().collect();
        if spawns.len() != 2 * moves.len() {
            return Err(RecordError::Count {
                moves: moves.len(),
                spawns: spawns.len() / 2,
            });
        }
        let steps = moves
            .iter()
            .zip(spawns.chunks(2))
            .enumerate()
            .map(|(i, (&m, spawn))| {
                let step = i + 1;
                let dir = Dir::ALL
                    .iter()
                    .copied()
                    .find(|&d| letter(d) == m)
                    .ok_or(RecordError::Move { step, letter: m })?;
                let exponent = match spawn[1] {
                    '2' => 1,
                    '4' => 2,
                    _ => 0,
                };
                match spawn[0].to_digit(16) {
                    Some(cell) if exponent > 0 => Ok(Step {
                        dir,
                        spawn: Spawn {
                            cell: cell as usize,
                            exponent,
                        },
                    }),
                    _ => Err(RecordError::Spawn {
                        step,
                        text: spawn.iter().collect(),
                    }),
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(GameRecord {
            shape,
            start,
            steps,
        })
    }
}

/// A played game: its record and what it came to.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct PlayoutView {
    pub record: GameRecordView,
    pub score: u64,
    pub max_tile: u64,
    pub moves: usize,
    pub moves_per_second: f64,
}

impl From<&Playout> for PlayoutView {
    fn from(p: &Playout) -> PlayoutView {
        PlayoutView {
            record: GameRecordView::from(&p.record),
            score: p.score,
            max_tile: p.max_tile,
            moves: p.moves,
            moves_per_second: (p.moves_per_second() * 10.0).round() / 10.0,
        }
    }
}

/// A game's result fields: a move's answer, or a played game.
pub fn outcome_views(outcome: Option<&GameOutcome>) -> (Option<AnswerView>, Option<PlayoutView>) {
    match outcome {
        Some(GameOutcome::Move(answer)) => (Some(AnswerView::from(answer)), None),
        Some(GameOutcome::Playout(playout)) => (None, Some(PlayoutView::from(playout))),
        None => (None, None),
    }
}

/// A playout's news: moves made, the score and the largest tile so far.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
pub struct PlayedView {
    pub moves: usize,
    pub score: u64,
    pub max_tile: u64,
}

impl From<&PlayedSoFar> for PlayedView {
    fn from(p: &PlayedSoFar) -> PlayedView {
        PlayedView {
            moves: p.moves,
            score: p.score,
            max_tile: p.max_tile,
        }
    }
}

/// A running game's news: the root's answer so far, or the game so far.
pub fn progress_views(progress: Option<&GameProgress>) -> (Option<AnswerView>, Option<PlayedView>) {
    match progress {
        Some(GameProgress::Answer(answer)) => (Some(AnswerView::from(answer)), None),
        Some(GameProgress::Played(played)) => (None, Some(PlayedView::from(played))),
        None => (None, None),
    }
}

/// `/v1/validate`'s answer for a game record.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GameCheckView {
    pub legal: bool,
    pub moves: usize,
    pub score: u64,
    pub max_tile: u64,
    /// No move is legal on the last board.
    pub over: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<super::StepErrorView>,
    /// The score the request claimed, checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score_matches: Option<bool>,
}

/// Replays `record`; a step that breaks a rule ends the replay there, as a plan's does.
pub fn check_record(record: &GameRecord, claimed: Option<u64>) -> GameCheckView {
    match replay(record.shape, record.start, &record.steps) {
        Ok(Played {
            score,
            max_tile,
            moves,
            over,
            ..
        }) => GameCheckView {
            legal: true,
            moves,
            score,
            max_tile,
            over,
            error: None,
            score_matches: claimed.map(|c| c == score),
        },
        Err(error) => {
            let step = error.step();
            let before = replay(record.shape, record.start, &record.steps[..step - 1])
                .expect("the steps before the first bad one replay");
            GameCheckView {
                legal: false,
                moves: before.moves,
                score: before.score,
                max_tile: before.max_tile,
                over: false,
                error: Some(super::StepErrorView {
                    step,
                    reason: error.to_string(),
                }),
                score_matches: claimed.map(|_| false),
            }
        }
    }
}
