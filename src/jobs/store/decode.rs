//! A row of the `jobs` table back into a [`JobRecord`]: a value that does not parse is a
//! damaged row ([`StoreError::Corrupt`]), never a default.

use std::time::Duration;

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{
    JobRecord, LevelCounts, Owner, ProgressRecord, ResultRecord, Stage, StoreError, game,
    generation,
};
use crate::jobs::id::JobId;
use crate::jobs::spec::{
    AlgorithmChoice, Heuristic, HeuristicChoice, JobLimits, JobSpec, Objective, PuzzleKind,
    PuzzleSpec,
};
use crate::puzzles::sliding::pdb::PartitionKind;
use crate::puzzles::sliding::{GoalSpec, SlidingPuzzle};
use crate::puzzles::sokoban::Level;
use crate::search::Weight;

fn numbers(text: &str) -> Option<Vec<u64>> {
    text.split_whitespace().map(|t| t.parse().ok()).collect()
}

pub(super) fn record(row: &AnyRow) -> Result<JobRecord, StoreError> {
    let id = JobId::from(row.try_get::<String, _>("id")?);
    let corrupt = |why: &str| StoreError::Corrupt {
        id: id.to_string(),
        why: why.to_string(),
    };
    let kind = PuzzleKind::parse(&row.try_get::<String, _>("puzzle_type")?)
        .ok_or_else(|| corrupt("puzzle_type"))?;
    let generate: Option<String> = row.try_get("generate")?;
    let puzzle = match (kind, generate) {
        (PuzzleKind::Twenty48, _) => {
            let spec: Option<String> = row.try_get("game")?;
            PuzzleSpec::Twenty48(
                spec.as_deref()
                    .and_then(game::parse_spec)
                    .ok_or_else(|| corrupt("game"))?,
            )
        }
        (PuzzleKind::Sokoban, Some(params)) => PuzzleSpec::Generate(
            generation::parse_params(&params).ok_or_else(|| corrupt("generate"))?,
        ),
        (PuzzleKind::Sokoban, None) => {
            let level = row
                .try_get::<Option<String>, _>("level")?
                .ok_or_else(|| corrupt("level"))?;
            PuzzleSpec::Sokoban(Level::parse(&level).map_err(|e| corrupt(&e.to_string()))?)
        }
        (PuzzleKind::Sliding, _) => {
            let tiles =
                numbers(&row.try_get::<String, _>("tiles")?).ok_or_else(|| corrupt("tiles"))?;
            let goal =
                numbers(&row.try_get::<String, _>("goal")?).ok_or_else(|| corrupt("goal"))?;
            let cols: i64 = row.try_get("cols")?;
            let puzzle = SlidingPuzzle::new(&tiles, Some(cols as usize), &GoalSpec::Tiles(goal))
                .map_err(|e| corrupt(&e.to_string()))?;
            PuzzleSpec::Sliding(puzzle)
        }
    };
    let partition = match row.try_get::<Option<String>, _>("partition_kind")? {
        Some(name) => Some(PartitionKind::parse(&name).ok_or_else(|| corrupt("partition_kind"))?),
        None => None,
    };
    let heuristic = |column: &str, partition| -> Result<HeuristicChoice, StoreError> {
        let name: Option<String> = row.try_get(column)?;
        let kind = name
            .as_deref()
            .and_then(Heuristic::parse)
            .ok_or_else(|| corrupt(column))?;
        Ok(HeuristicChoice::new(kind, partition))
    };
    let algorithm = |column: &str| -> Result<AlgorithmChoice, StoreError> {
        let name: Option<String> = row.try_get(column)?;
        name.as_deref()
            .and_then(AlgorithmChoice::parse)
            .ok_or_else(|| corrupt(column))
    };
    let spec = JobSpec {
        puzzle,
        algorithm: algorithm("algorithm")?,
        heuristic: heuristic("heuristic", partition)?,
        objective: Objective::parse(&row.try_get::<String, _>("objective")?)
            .ok_or_else(|| corrupt("objective"))?,
        weight: row
            .try_get::<Option<i64>, _>("weight_percent")?
            .map(|w| Weight::from_percent(w as u32)),
        limits: JobLimits {
            max_nodes: row
                .try_get::<Option<i64>, _>("max_nodes")?
                .map(|n| n as u64),
            timeout: row
                .try_get::<Option<i64>, _>("timeout_ms")?
                .map(|t| Duration::from_millis(t as u64)),
            max_memory_bytes: None,
        },
        include_boards: row.try_get::<i64, _>("include_boards")? != 0,
    };
    let status: String = row.try_get("status")?;
    let reason: Option<String> = row.try_get("reason")?;
    let error: Option<String> = row.try_get("error")?;
    let stage = Stage::from_columns(&status, reason.as_deref(), error.as_deref())
        .map_err(|e| corrupt(&e.to_string()))?;
    let progress = match row.try_get::<Option<i64>, _>("progress_nodes")? {
        Some(nodes) if stage == Stage::Running => Some(ProgressRecord {
            nodes_expanded: nodes as u64,
            threshold: row
                .try_get::<Option<i64>, _>("progress_threshold")?
                .map(|t| t as u32),
            elapsed_ms: row
                .try_get::<Option<i64>, _>("progress_elapsed_ms")?
                .unwrap_or(0) as u64,
            levels: match (
                row.try_get::<Option<i64>, _>("progress_made")?,
                row.try_get::<Option<i64>, _>("progress_tried")?,
            ) {
                (Some(made), Some(tried)) => Some(LevelCounts {
                    made: made as u64,
                    tried: tried as u64,
                }),
                _ => None,
            },
            game: match row.try_get::<Option<String>, _>("progress_game")? {
                Some(text) => {
                    Some(game::parse_progress(&text).ok_or_else(|| corrupt("progress_game"))?)
                }
                None => None,
            },
        }),
        _ => None,
    };
    let resolved: Option<String> = row.try_get("resolved_algorithm")?;
    let result = match resolved {
        Some(_) if stage.is_terminal() => Some(ResultRecord {
            algorithm: algorithm("resolved_algorithm")?,
            heuristic: heuristic("resolved_heuristic", None)?,
            plan: row.try_get("plan")?,
            length: row
                .try_get::<Option<i64>, _>("plan_length")?
                .map(|l| l as usize),
            optimal: row.try_get::<Option<i64>, _>("optimal")?.unwrap_or(0) != 0,
            nodes_expanded: row
                .try_get::<Option<i64>, _>("nodes_expanded")?
                .unwrap_or(0) as u64,
            nodes_generated: row
                .try_get::<Option<i64>, _>("nodes_generated")?
                .unwrap_or(0) as u64,
            unique_states: row
                .try_get::<Option<i64>, _>("unique_states")?
                .map(|n| n as u64),
            threshold: row
                .try_get::<Option<i64>, _>("threshold")?
                .map(|t| t as u32),
            elapsed_us: row.try_get::<Option<i64>, _>("elapsed_us")?.unwrap_or(0) as u64,
            note: row.try_get("note")?,
            generation: match (
                row.try_get::<Option<String>, _>("generation")?,
                row.try_get::<Option<String>, _>("levels")?,
            ) {
                (Some(counts), levels) => Some(
                    generation::parse_generation(&counts, levels.as_deref().unwrap_or(""))
                        .ok_or_else(|| corrupt("levels"))?,
                ),
                (None, _) => None,
            },
            game: match row.try_get::<Option<String>, _>("game_result")? {
                Some(text) => {
                    Some(game::parse_outcome(&text).ok_or_else(|| corrupt("game_result"))?)
                }
                None => None,
            },
        }),
        _ => None,
    };
    Ok(JobRecord {
        stage,
        priority: row.try_get("priority")?,
        spec,
        created_at: row.try_get("created_at")?,
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
        attempts: row.try_get("attempts")?,
        lease_token: row.try_get("lease_token")?,
        progress,
        result,
        error,
        owner: Owner::from_column(row.try_get("owner")?),
        id,
    })
}
