//! A 2048 job's columns as text: its spec (`game`), its answer or game record
//! (`game_result`) and, while it runs, its latest news (`progress_game`). Numbers and
//! names; a game record's steps three characters each. A value that does not parse back
//! is a damaged row; a record that does not replay is one too.

use std::time::Duration;

use crate::games::twenty48::game::Objective;
use crate::games::twenty48::{Board, Dir, GameRecord, Shape, Spawn, Step, replay};
use crate::jobs::game::{GameOutcome, GameProgress, GameSpec, GameTask, PlayedSoFar, Playout};
use crate::jobs::spec::JobLimits;
use crate::search::Stop;
use crate::search::game::Answer;

/// Stands for "none".
const NONE: &str = "-";

fn optional<T: ToString>(value: Option<T>) -> String {
    value.map_or(NONE.to_string(), |v| v.to_string())
}

fn parse_optional<T: std::str::FromStr>(text: &str) -> Option<Option<T>> {
    match text {
        NONE => Some(None),
        text => text.parse().ok().map(Some),
    }
}

fn board_text(board: Board) -> String {
    format!("{:x}", board.0)
}

fn parse_board(text: &str) -> Option<Board> {
    u64::from_str_radix(text, 16).ok().map(Board)
}

/// `score`, or `reach:E` for a tile of 2^E.
fn objective_text(objective: Objective) -> String {
    match objective {
        Objective::Score => "score".into(),
        Objective::Reach(e) => format!("reach:{e}"),
    }
}

fn parse_objective(text: &str) -> Option<Objective> {
    match text.split_once(':') {
        None if text == "score" => Some(Objective::Score),
        Some(("reach", e)) => e.parse().ok().map(Objective::Reach),
        _ => None,
    }
}

/// `rows cols objective move BOARD`, or `rows cols objective playout SEED NODES MS START`.
pub(super) fn spec_text(spec: &GameSpec) -> String {
    let head = format!(
        "{} {} {}",
        spec.shape.rows(),
        spec.shape.cols(),
        objective_text(spec.objective)
    );
    match &spec.task {
        GameTask::Move(board) => format!("{head} move {}", board_text(*board)),
        GameTask::Playout {
            start,
            seed,
            per_move,
        } => format!(
            "{head} playout {seed} {} {} {}",
            optional(per_move.max_nodes),
            optional(per_move.timeout.map(|t| t.as_millis())),
            optional(start.map(board_text)),
        ),
    }
}

pub(super) fn parse_spec(text: &str) -> Option<GameSpec> {
    let f: Vec<&str> = text.split(' ').collect();
    let shape = Shape::new(f.first()?.parse().ok()?, f.get(1)?.parse().ok()?).ok()?;
    let objective = parse_objective(f.get(2)?)?;
    let task = match &f[3..] {
        ["move", board] => GameTask::Move(parse_board(board)?),
        ["playout", seed, nodes, ms, start] => GameTask::Playout {
            seed: seed.parse().ok()?,
            per_move: JobLimits {
                max_nodes: parse_optional(nodes)?,
                timeout: parse_optional::<u64>(ms)?.map(Duration::from_millis),
                max_memory_bytes: None,
            },
            start: match *start {
                NONE => None,
                board => Some(parse_board(board)?),
            },
        },
        _ => return None,
    };
    Some(GameSpec {
        shape,
        objective,
        task,
    })
}

/// `BEST VALUE DEPTH EXACT MOVE=VALUE,…` (values as Rust prints them: they read back
/// exactly).
fn answer_text(a: &Answer<Dir>) -> String {
    let values: Vec<String> = a
        .move_values
        .iter()
        .map(|(m, v)| format!("{}={v}", m.name()))
        .collect();
    format!(
        "{} {} {} {} {}",
        optional(a.best.map(Dir::name)),
        a.value,
        a.depth,
        u8::from(a.exact),
        optional((!values.is_empty()).then(|| values.join(",")))
    )
}

fn parse_answer(f: &[&str]) -> Option<Answer<Dir>> {
    let [best, value, depth, exact, values] = f else {
        return None;
    };
    Some(Answer {
        best: match *best {
            NONE => None,
            name => Some(Dir::parse(name)?),
        },
        value: value.parse().ok()?,
        depth: depth.parse().ok()?,
        exact: *exact == "1",
        move_values: match *values {
            NONE => Vec::new(),
            values => values
                .split(',')
                .map(|mv| {
                    let (m, v) = mv.split_once('=')?;
                    Some((Dir::parse(m)?, v.parse().ok()?))
                })
                .collect::<Option<_>>()?,
        },
    })
}

fn stop_text(stop: Option<Stop>) -> &'static str {
    match stop {
        None => NONE,
        Some(Stop::Cancelled) => "cancelled",
        Some(Stop::NodeLimit) => "nodes",
        Some(Stop::TimeLimit) => "time",
        Some(Stop::MemoryLimit) => "memory",
    }
}

fn parse_stop(text: &str) -> Option<Option<Stop>> {
    Some(match text {
        NONE => None,
        "cancelled" => Some(Stop::Cancelled),
        "nodes" => Some(Stop::NodeLimit),
        "time" => Some(Stop::TimeLimit),
        "memory" => Some(Stop::MemoryLimit),
        _ => return None,
    })
}

/// A step as three characters: the move's index in [`Dir::ALL`], the cell in hex, the
/// spawn's exponent.
fn steps_text(steps: &[Step]) -> String {
    steps
        .iter()
        .map(|s| {
            let dir = Dir::ALL.iter().position(|&d| d == s.dir).unwrap_or(0);
            format!("{dir}{:x}{}", s.spawn.cell, s.spawn.exponent)
        })
        .collect()
}

fn parse_steps(text: &str) -> Option<Vec<Step>> {
    let digits: Vec<u32> = text
        .chars()
        .map(|c| c.to_digit(16))
        .collect::<Option<_>>()?;
    if digits.len() % 3 != 0 {
        return None;
    }
    digits
        .chunks(3)
        .map(|c| {
            Some(Step {
                dir: *Dir::ALL.get(c[0] as usize)?,
                spawn: Spawn {
                    cell: c[1] as usize,
                    exponent: c[2] as u8,
                },
            })
        })
        .collect()
}

/// `move …answer`, or `playout ELAPSED_US NODES STOP ROWS COLS START STEPS`.
pub(super) fn outcome_text(outcome: &GameOutcome) -> String {
    match outcome {
        GameOutcome::Move(answer) => format!("move {}", answer_text(answer)),
        GameOutcome::Playout(p) => format!(
            "playout {} {} {} {} {} {} {}",
            p.elapsed.as_micros(),
            p.nodes,
            stop_text(p.stop),
            p.record.shape.rows(),
            p.record.shape.cols(),
            board_text(p.record.start),
            optional((!p.record.steps.is_empty()).then(|| steps_text(&p.record.steps)))
        ),
    }
}

pub(super) fn parse_outcome(text: &str) -> Option<GameOutcome> {
    let f: Vec<&str> = text.split(' ').collect();
    match f.as_slice() {
        ["move", answer @ ..] => parse_answer(answer).map(GameOutcome::Move),
        ["playout", elapsed, nodes, stop, rows, cols, start, steps] => {
            let shape = Shape::new(rows.parse().ok()?, cols.parse().ok()?).ok()?;
            let start = parse_board(start)?;
            let steps = match *steps {
                NONE => Vec::new(),
                steps => parse_steps(steps)?,
            };
            let played = replay(shape, start, &steps).ok()?;
            Some(GameOutcome::Playout(Playout {
                record: GameRecord {
                    shape,
                    start,
                    steps,
                },
                score: played.score,
                max_tile: played.max_tile,
                moves: played.moves,
                elapsed: Duration::from_micros(elapsed.parse().ok()?),
                nodes: nodes.parse().ok()?,
                stop: parse_stop(stop)?,
            }))
        }
        _ => None,
    }
}

/// `answer …`, or `played MOVES SCORE MAX_TILE NODES ELAPSED_US`.
pub(super) fn progress_text(progress: &GameProgress) -> String {
    match progress {
        GameProgress::Answer(answer) => format!("answer {}", answer_text(answer)),
        GameProgress::Played(p) => {
            format!(
                "played {} {} {} {} {}",
                p.moves,
                p.score,
                p.max_tile,
                p.nodes,
                p.elapsed.as_micros()
            )
        }
    }
}

pub(super) fn parse_progress(text: &str) -> Option<GameProgress> {
    let f: Vec<&str> = text.split(' ').collect();
    match f.as_slice() {
        ["answer", answer @ ..] => parse_answer(answer).map(GameProgress::Answer),
        ["played", moves, score, max_tile, nodes, elapsed] => {
            Some(GameProgress::Played(PlayedSoFar {
                moves: moves.parse().ok()?,
                score: score.parse().ok()?,
                max_tile: max_tile.parse().ok()?,
                nodes: nodes.parse().ok()?,
                elapsed: Duration::from_micros(elapsed.parse().ok()?),
            }))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::game::{Estimate, GameAlgorithm, Play, playout};
    use crate::search::{CancelFlag, Limits};

    #[test]
    fn specs_outcomes_and_progress_read_back_as_written() {
        let shape = Shape::new(3, 4).expect("a shape");
        let board = shape
            .board(&[2, 0, 4, 0, 0, 8, 0, 0, 0, 0, 0, 2])
            .expect("a board");
        let specs = [
            GameSpec {
                shape,
                objective: Objective::Reach(11),
                task: GameTask::Move(board),
            },
            GameSpec {
                shape,
                objective: Objective::Score,
                task: GameTask::Playout {
                    start: Some(board),
                    seed: 9_007_199_254_740_991,
                    per_move: JobLimits {
                        max_nodes: Some(100),
                        timeout: Some(Duration::from_millis(5)),
                        max_memory_bytes: None,
                    },
                },
            },
        ];
        for spec in specs {
            assert_eq!(parse_spec(&spec_text(&spec)), Some(spec));
        }
        let answer = Answer {
            best: Some(Dir::Left),
            value: 1_234.567_891_234_5,
            move_values: vec![(Dir::Up, 0.1 + 0.2), (Dir::Left, 1_234.567_891_234_5)],
            depth: 3,
            exact: false,
        };
        let over = Answer {
            best: None,
            value: 0.0,
            move_values: Vec::new(),
            depth: 0,
            exact: true,
        };
        let play = Play {
            estimate: Estimate::shipped(),
            shape,
            objective: Objective::Score,
            start: None,
            seed: 3,
            algorithm: GameAlgorithm::Greedy,
            per_move: Limits::default(),
        };
        let mut game = playout(&play, Limits::default(), &CancelFlag::new(), &mut |_| {});
        assert!(game.moves > 10);
        // Stored to the microsecond.
        game.elapsed = Duration::from_micros(game.elapsed.as_micros() as u64);
        for outcome in [
            GameOutcome::Move(answer.clone()),
            GameOutcome::Move(over),
            GameOutcome::Playout(game),
        ] {
            assert_eq!(parse_outcome(&outcome_text(&outcome)), Some(outcome));
        }
        let played = GameProgress::Played(PlayedSoFar {
            moves: 5,
            score: 64,
            max_tile: 32,
            nodes: 77,
            elapsed: Duration::from_micros(1234),
        });
        for progress in [GameProgress::Answer(answer), played] {
            assert_eq!(parse_progress(&progress_text(&progress)), Some(progress));
        }
    }

    #[test]
    fn a_record_that_does_not_replay_is_refused() {
        // Moving up on a board whose tiles are all on the top row changes nothing.
        assert_eq!(parse_outcome("playout 1 1 - 2 2 11 001"), None);
        assert!(parse_outcome("playout 1 1 - 2 2 11 -").is_some());
    }
}
