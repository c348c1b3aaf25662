//! Level generation and rating on the wire: a job's `generate` field, the levels it
//! answers with, `POST /v1/rate`; also what `puzzled generate --json` and
//! `puzzled rate --json` print.

use serde::{Deserialize, Serialize};

use super::RequestError;
use crate::jobs::PuzzleKind;
use crate::jobs::generate::{Generation, levels_per_second};
use crate::puzzles::sokoban::generate::rating::{Features, Label, Rated};
use crate::puzzles::sokoban::generate::{GenerateParams, Generated, MAX_SEED, Method};

/// `{"generate":{…}}`: every field but `type` has a default.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GenerateRequest {
    /// `sokoban`, the one kind of level made.
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default = "default_side")]
    pub width: usize,
    #[serde(default = "default_side")]
    pub height: usize,
    #[serde(default = "default_boxes")]
    pub boxes: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Keep only levels of this label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<String>,
    #[serde(default = "default_count")]
    pub count: usize,
    /// Absent: a random seed, reported back so the run can be repeated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// What a request that leaves them out gets.
pub const DEFAULT_SIDE: usize = 8;
pub const DEFAULT_BOXES: usize = 3;
pub const DEFAULT_COUNT: usize = 1;

fn default_side() -> usize {
    DEFAULT_SIDE
}
fn default_boxes() -> usize {
    DEFAULT_BOXES
}
fn default_count() -> usize {
    DEFAULT_COUNT
}

/// A random seed within [`MAX_SEED`].
pub fn random_seed() -> u64 {
    uuid::Uuid::new_v4().as_u64_pair().0 & MAX_SEED
}

impl GenerateRequest {
    /// Validates the parameters; every wrong one named.
    pub fn into_params(self) -> Result<GenerateParams, RequestError> {
        if PuzzleKind::parse(&self.kind) != Some(PuzzleKind::Sokoban) {
            return Err(RequestError::UnknownName {
                field: "generate type",
                value: self.kind,
                expected: PuzzleKind::Sokoban.name().to_string(),
            });
        }
        let method = match self.method.as_deref() {
            None => Method::Reverse,
            Some(name) => Method::parse(name).ok_or_else(|| RequestError::UnknownName {
                field: "method",
                value: name.to_string(),
                expected: Method::NAMES.join(", "),
            })?,
        };
        let difficulty = match self.difficulty.as_deref() {
            None => None,
            Some(name) => Some(Label::parse(name).ok_or_else(|| RequestError::UnknownName {
                field: "difficulty",
                value: name.to_string(),
                expected: Label::NAMES.join(", "),
            })?),
        };
        let params = GenerateParams {
            width: self.width,
            height: self.height,
            boxes: self.boxes,
            method,
            difficulty,
            count: self.count,
            seed: self.seed.unwrap_or_else(random_seed),
        };
        params.check().map_err(RequestError::Generate)?;
        Ok(params)
    }

    /// The parameters as the job runs them, for echoing back.
    pub fn from_params(params: &GenerateParams) -> GenerateRequest {
        GenerateRequest {
            kind: PuzzleKind::Sokoban.name().to_string(),
            width: params.width,
            height: params.height,
            boxes: params.boxes,
            method: Some(params.method.name().to_string()),
            difficulty: params.difficulty.map(|d| d.name().to_string()),
            count: params.count,
            seed: Some(params.seed),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FeaturesView {
    /// Pushes of the plan rated (optimal when `optimal`).
    pub pushes: u32,
    pub moves: u32,
    /// Maximal runs of pushes of one box in one direction.
    pub box_lines: u32,
    /// Times the next push moves another box.
    pub box_changes: u32,
    pub boxes: u32,
    /// Squares the player can reach, walking through boxes.
    pub floor: u32,
    /// Share of the floor off goals from which no box reaches a goal.
    pub dead_share: f64,
    /// Nodes our push-optimal search expands on the level, at most 20,000.
    pub effort: u64,
    /// Directions the plan pushes in.
    pub directions: u32,
}

impl From<&Features> for FeaturesView {
    fn from(f: &Features) -> FeaturesView {
        FeaturesView {
            pushes: f.pushes,
            moves: f.moves,
            box_lines: f.box_lines,
            box_changes: f.box_changes,
            boxes: f.boxes,
            floor: f.floor,
            dead_share: f.dead_share,
            effort: f.effort,
            directions: f.directions,
        }
    }
}

/// A level made: what a game needs to show it, prove it and rate it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelView {
    /// 1 for the first level made.
    pub id: usize,
    /// With the same parameters and `count` 1, makes this level.
    pub seed: u64,
    /// XSB text.
    pub level: String,
    /// LURD, replayed by the validator.
    pub plan: String,
    pub pushes: u32,
    pub moves: u32,
    /// The push count is proved optimal.
    pub optimal: bool,
    pub score: f64,
    pub label: String,
    /// Murase's rule: `easy` or `good`.
    pub seed_class: String,
    pub features: FeaturesView,
}

impl From<&Generated> for LevelView {
    fn from(l: &Generated) -> LevelView {
        LevelView {
            id: l.index,
            seed: l.seed,
            level: l.level.to_xsb(),
            plan: l.plan.clone(),
            pushes: l.pushes,
            moves: l.moves,
            optimal: l.optimal,
            score: round(l.rating.score),
            label: l.rating.label.name().to_string(),
            seed_class: l.rating.seed_class.name().to_string(),
            features: FeaturesView::from(&l.rating.features),
        }
    }
}

/// Scores to two decimals: more reads as precision the model does not have.
fn round(score: f64) -> f64 {
    (score * 100.0).round() / 100.0
}

/// A generation's counts: `puzzled generate --json`'s summary line and a job's
/// `generation`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenerationView {
    pub made: usize,
    /// Candidates tried, kept or not.
    pub tried: usize,
    pub elapsed_ms: f64,
    pub levels_per_second: f64,
    /// `murase` only: candidates dropped while placing boxes, unsolvable (or not solved
    /// within the rating's search), and classed easy or good by the seed's rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsolvable: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub easy: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub good: Option<usize>,
}

impl GenerationView {
    pub fn new(generation: &Generation, elapsed: std::time::Duration) -> GenerationView {
        let murase = generation.murase;
        GenerationView {
            made: generation.levels.len(),
            tried: generation.tried,
            elapsed_ms: super::millis(elapsed),
            levels_per_second: round(levels_per_second(generation.levels.len(), elapsed)),
            dropped: murase.map(|m| m.dropped),
            unsolvable: murase.map(|m| m.unsolvable),
            easy: murase.map(|m| m.easy),
            good: murase.map(|m| m.good),
        }
    }
}

/// `POST /v1/rate` body: a level, and optionally a plan known to solve it (used when
/// our search does not find one within its budget).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RateRequest {
    /// XSB or run-length XSB text.
    pub level: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
}

/// A level's difficulty, and the plan it was computed on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatingView {
    pub score: f64,
    pub label: String,
    pub seed_class: String,
    pub plan: String,
    pub pushes: u32,
    pub moves: u32,
    pub optimal: bool,
    pub features: FeaturesView,
}

impl From<&Rated> for RatingView {
    fn from(r: &Rated) -> RatingView {
        RatingView {
            score: round(r.rating.score),
            label: r.rating.label.name().to_string(),
            seed_class: r.rating.seed_class.name().to_string(),
            plan: r.plan.clone(),
            pushes: r.pushes,
            moves: r.moves,
            optimal: r.optimal,
            features: FeaturesView::from(&r.rating.features),
        }
    }
}
