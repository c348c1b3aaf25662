//! Level generation. Two methods:
//! - `reverse` (the default): a random-walk room, boxes on random goals, a
//!   breadth-first pull search from the solved position ([`pull`]); the deepest
//!   position reached becomes the start, so every level is solvable and its push
//!   optimum proved by construction.
//! - `murase`: Murase, Matsubara and Hiraga's generate–check–classify: random walls,
//!   their placement ([`murase`]), our search as the check, their easy/good rule.
//!
//! Every level is rated ([`rating`]) and its plan replayed. Candidate `k` is made
//! from seed `s_k` alone, `s_0` the request's seed and `s_{k+1}` a mix of `s_k`, so a
//! level's reported seed, asked with a count of 1, makes that level first. Seeds keep
//! to 53 bits, so a JavaScript number carries them exactly.

mod murase;
mod pull;
pub mod rating;
mod room;

use std::time::{Duration, Instant};

use self::rating::{KnownPlan, Label, RateError, Rating, SeedClass};
use self::room::{Floor, Room};
use crate::puzzles::sokoban::{self, Board, Level, Push};
use crate::search::rng::Rng;
use crate::search::{CancelFlag, Interrupt, Limits, Stop};

crate::named_enum! {
    /// How levels are made.
    pub enum Method {
        Reverse = "reverse",
        Murase = "murase",
    }
}

/// Smallest and largest room side, walls included.
pub const MIN_SIDE: usize = 5;
pub const MAX_SIDE: usize = 16;
/// Most boxes a generated level holds (the pull search packs them in a `u128`).
pub const MAX_BOXES: usize = 8;
/// Most levels one request asks for.
pub const MAX_COUNT: usize = 1000;
/// Positions one pull search stores (about 3 MB).
pub const MAX_STATES: usize = 150_000;
/// Largest seed: 2^53 − 1, the largest integer a JSON number carries exactly everywhere.
pub const MAX_SEED: u64 = (1 << 53) - 1;
/// Candidates tried per level asked for before the generator gives up.
pub const TRIES_PER_LEVEL: usize = 500;

/// Rooms tried per candidate, keeping the deepest: more for harder levels.
fn rooms_per_candidate(difficulty: Option<Label>) -> usize {
    match difficulty {
        None | Some(Label::Easy) => 1,
        Some(Label::Medium) => 4,
        Some(Label::Hard) => 24,
    }
}

/// Most boxes a `width` × `height` room holds: a quarter of its inner cells.
pub fn max_boxes(width: usize, height: usize) -> usize {
    (width.saturating_sub(2) * height.saturating_sub(2) / 4).min(MAX_BOXES)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenerateParams {
    pub width: usize,
    pub height: usize,
    pub boxes: usize,
    pub method: Method,
    /// Keep only levels of this label.
    pub difficulty: Option<Label>,
    pub count: usize,
    pub seed: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    #[error("a width of {0} is outside {MIN_SIDE} to {MAX_SIDE}")]
    Width(usize),
    #[error("a height of {0} is outside {MIN_SIDE} to {MAX_SIDE}")]
    Height(usize),
    #[error("{boxes} boxes do not fit a {width}x{height} room: 1 to {fits}")]
    Boxes {
        boxes: usize,
        fits: usize,
        width: usize,
        height: usize,
    },
    #[error("a count of {0} is outside 1 to {MAX_COUNT}")]
    Count(usize),
    #[error("a seed of {0} is over the largest, {MAX_SEED}")]
    Seed(u64),
}

impl ParamError {
    /// The parameter at fault, by its wire name.
    pub fn field(&self) -> &'static str {
        match self {
            ParamError::Width(_) => "width",
            ParamError::Height(_) => "height",
            ParamError::Boxes { .. } => "boxes",
            ParamError::Count(_) => "count",
            ParamError::Seed(_) => "seed",
        }
    }
}

impl GenerateParams {
    pub fn check(&self) -> Result<(), ParamError> {
        let side = MIN_SIDE..=MAX_SIDE;
        if !side.contains(&self.width) {
            return Err(ParamError::Width(self.width));
        }
        if !side.contains(&self.height) {
            return Err(ParamError::Height(self.height));
        }
        let fits = max_boxes(self.width, self.height);
        if !(1..=fits).contains(&self.boxes) {
            return Err(ParamError::Boxes {
                boxes: self.boxes,
                fits,
                width: self.width,
                height: self.height,
            });
        }
        if !(1..=MAX_COUNT).contains(&self.count) {
            return Err(ParamError::Count(self.count));
        }
        if self.seed > MAX_SEED {
            return Err(ParamError::Seed(self.seed));
        }
        Ok(())
    }
}

/// One level made.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    /// 1 for the first level made.
    pub index: usize,
    /// Reproduces this level first, with the same parameters.
    pub seed: u64,
    pub level: Level,
    /// LURD, replayed.
    pub plan: String,
    pub pushes: u32,
    pub moves: u32,
    /// The push count is proved optimal.
    pub optimal: bool,
    pub rating: Rating,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenProgress {
    pub made: usize,
    pub tried: usize,
    /// Pull-search positions and search nodes so far.
    pub nodes: u64,
    pub elapsed: Duration,
}

/// The seed's table: what became of each candidate of the `murase` method.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MuraseCounts {
    /// Some box had nowhere to go.
    pub dropped: usize,
    /// Proved unsolvable, or not solved within the rating's search.
    pub unsolvable: usize,
    pub easy: usize,
    pub good: usize,
}

/// Why a run ended before making every level asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shortfall {
    Stopped(Stop),
    /// [`TRIES_PER_LEVEL`] candidates per level asked for were tried.
    Tries,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GenReport {
    pub levels: Vec<Generated>,
    pub tried: usize,
    /// For the `murase` method.
    pub murase: Option<MuraseCounts>,
    pub shortfall: Option<Shortfall>,
    /// Pull-search positions and search nodes, together.
    pub nodes: u64,
    pub elapsed: Duration,
}

/// Makes up to `params.count` levels within `limits` (nodes count pull positions and
/// search nodes together) and `cancel`; `progress` hears of every candidate, with the
/// level when one was made.
pub fn generate(
    params: &GenerateParams,
    limits: Limits,
    cancel: &CancelFlag,
    progress: &mut dyn FnMut(Option<&Generated>, GenProgress),
) -> GenReport {
    let started = Instant::now();
    let deadline = limits.timeout.map(|t| started + t);
    let interrupt = Interrupt::new(cancel.clone(), deadline, limits.max_memory_bytes);
    let mut report = GenReport {
        levels: Vec::new(),
        tried: 0,
        murase: (params.method == Method::Murase).then(MuraseCounts::default),
        shortfall: None,
        nodes: 0,
        elapsed: Duration::ZERO,
    };
    let mut seed = params.seed;
    while report.levels.len() < params.count {
        if report.tried >= params.count.saturating_mul(TRIES_PER_LEVEL) {
            report.shortfall = Some(Shortfall::Tries);
            break;
        }
        let left = Limits {
            max_nodes: limits.max_nodes.map(|n| n.saturating_sub(report.nodes)),
            timeout: limits.timeout.map(|t| t.saturating_sub(started.elapsed())),
            max_memory_bytes: limits.max_memory_bytes,
        };
        if left.max_nodes == Some(0) {
            report.shortfall = Some(Shortfall::Stopped(Stop::NodeLimit));
            break;
        }
        let made = match candidate(params, seed, left, cancel, &interrupt, &mut report) {
            Ok(made) => made,
            Err(stop) => {
                report.shortfall = Some(Shortfall::Stopped(stop));
                break;
            }
        };
        report.tried += 1;
        let made = made.filter(|m| params.difficulty.is_none_or(|d| d == m.rated.rating.label));
        if let Some((level, rated)) = made.map(|m| (m.level, m.rated)) {
            report.levels.push(Generated {
                index: report.levels.len() + 1,
                seed,
                level,
                plan: rated.plan,
                pushes: rated.pushes,
                moves: rated.moves,
                optimal: rated.optimal,
                rating: rated.rating,
            });
        }
        progress(
            report.levels.last().filter(|l| l.seed == seed),
            GenProgress {
                made: report.levels.len(),
                tried: report.tried,
                nodes: report.nodes,
                elapsed: started.elapsed(),
            },
        );
        seed = Rng::new(seed).next_u64() & MAX_SEED;
    }
    report.elapsed = started.elapsed();
    report
}

/// A candidate that became a level, rated.
struct Made {
    level: Level,
    rated: rating::Rated,
}

/// Candidate `seed`: `Ok(None)` when it made no level (the `murase` counts say why).
fn candidate(
    params: &GenerateParams,
    seed: u64,
    limits: Limits,
    cancel: &CancelFlag,
    interrupt: &Interrupt,
    report: &mut GenReport,
) -> Result<Option<Made>, Stop> {
    let mut rng = Rng::new(seed);
    let (level, known) = match params.method {
        Method::Reverse => match reverse(params, &mut rng, limits, interrupt, &mut report.nodes)? {
            Some(made) => made,
            None => return Ok(None),
        },
        Method::Murase => {
            let room = Room::random_walls(
                params.width,
                params.height,
                murase::WALL_PROBABILITY,
                &mut rng,
            );
            let floor = Floor::new(&room);
            let counts = report.murase.get_or_insert_default();
            let Some((goals, boxes, player)) = murase::place(&floor, params.boxes, &mut rng) else {
                counts.dropped += 1;
                return Ok(None);
            };
            (to_level(&room, &floor, &goals, &boxes, player), None)
        }
    };
    let known = known.as_deref().map(|lurd| KnownPlan {
        lurd,
        optimal: true,
    });
    let rated = match rating::rate(&level, known, limits, cancel) {
        Ok(rated) => rated,
        Err(RateError::Stopped(stop)) => return Err(stop),
        Err(RateError::Unsolvable | RateError::NotSolved) => {
            if let Some(counts) = &mut report.murase {
                counts.unsolvable += 1;
            }
            return Ok(None);
        }
    };
    report.nodes += rated.rating.features.effort;
    if let Some(counts) = &mut report.murase {
        match rated.rating.seed_class {
            SeedClass::Easy => {
                counts.easy += 1;
                return Ok(None);
            }
            SeedClass::Good => counts.good += 1,
        }
    }
    Ok(Some(Made { level, rated }))
}

/// A room with its goals and the start the pull search chose, ranked by `key`:
/// optimal pushes, box changes, box lines.
struct Laid {
    key: (u16, u32, u32),
    room: Room,
    floor: Floor,
    goals: Vec<u8>,
    chosen: pull::Chosen,
}

/// The reverse method: the best of a few rooms, by optimal pushes, then box changes
/// and box lines; the level and its push-optimal plan.
fn reverse(
    params: &GenerateParams,
    rng: &mut Rng,
    limits: Limits,
    interrupt: &Interrupt,
    nodes: &mut u64,
) -> Result<Option<(Level, Option<String>)>, Stop> {
    let mut best: Option<Laid> = None;
    for _ in 0..rooms_per_candidate(params.difficulty) {
        let share = 0.55 + 0.15 * (rng.below(1000) as f64 / 1000.0);
        let room = Room::random_walk(params.width, params.height, share, rng);
        let floor = Floor::new(&room);
        if floor.len() < params.boxes + 2 {
            continue;
        }
        let mut squares: Vec<u8> = (0..floor.len() as u8).collect();
        rng.shuffle(&mut squares);
        let goals = squares[..params.boxes].to_vec();
        let max_states = limits.max_nodes.map_or(MAX_STATES, |n| {
            n.saturating_sub(*nodes).min(MAX_STATES as u64) as usize
        });
        let pulls = pull::search(&floor, &goals, max_states, interrupt)?;
        *nodes += pulls.states() as u64;
        let Some(chosen) = pulls.choose(&floor, params.boxes, 64) else {
            continue;
        };
        let key = (
            pulls.depth(),
            chosen.shape.box_changes,
            chosen.shape.box_lines,
        );
        if best.as_ref().is_none_or(|b| key > b.key) {
            best = Some(Laid {
                key,
                room,
                floor,
                goals,
                chosen,
            });
        }
    }
    let Some(Laid {
        room,
        floor,
        goals,
        chosen,
        ..
    }) = best
    else {
        return Ok(None);
    };
    let level = to_level(&room, &floor, &goals, &chosen.boxes, chosen.player);
    let board = Board::new(&level);
    let pushes: Vec<Push> = chosen
        .pushes
        .iter()
        .map(|p| Push {
            square: board.square(floor.cells[p.from as usize]),
            direction: p.direction,
        })
        .collect();
    Ok(Some((level, sokoban::plan::lurd(&board, &pushes))))
}

/// The level of a room with boxes, goals and the player on its floor.
fn to_level(room: &Room, floor: &Floor, goals: &[u8], boxes: &[u8], player: u8) -> Level {
    let mut text = String::with_capacity(room.wall.len() + room.height);
    let cell_of = |s: &u8| floor.cells[*s as usize];
    let goals: Vec<usize> = goals.iter().map(cell_of).collect();
    let boxes: Vec<usize> = boxes.iter().map(cell_of).collect();
    let player = floor.cells[player as usize];
    for cell in 0..room.wall.len() {
        if cell > 0 && cell % room.width == 0 {
            text.push('\n');
        }
        text.push(
            match (
                room.wall[cell],
                goals.contains(&cell),
                boxes.contains(&cell),
            ) {
                (true, ..) => '#',
                (_, true, true) => '*',
                (_, false, true) => '$',
                (_, true, false) if cell == player => '+',
                (_, false, false) if cell == player => '@',
                (_, true, false) => '.',
                (_, false, false) => ' ',
            },
        );
    }
    match Level::parse(&text) {
        Ok(level) => level,
        Err(error) => unreachable!("a generated room is a valid level: {error}\n{text}"),
    }
}

#[cfg(test)]
mod tests;
