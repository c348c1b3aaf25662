//! `puzzled generate`: new Sokoban levels, written as an XSB collection (a title and
//! `;` comment lines with the rating) or, with `--json`, one JSON line a level and a
//! summary line.

use std::io::Write;
use std::time::Duration;

use clap::Args;
use puzzled::http::wire::{
    DEFAULT_BOXES, DEFAULT_COUNT, GenerateRequest, GenerationView, LevelView,
};
use puzzled::jobs::generate::{Generation, levels_per_second};
use puzzled::jobs::{JobStatus, PuzzleKind};
use puzzled::puzzles::sokoban::generate::rating::Label;
use puzzled::puzzles::sokoban::generate::{self, Generated, Method, Shortfall};
use puzzled::search::{CancelFlag, Limits};

use super::{CliError, names_help};

#[derive(Args, Debug)]
pub struct GenerateArgs {
    #[arg(long, help = names_help("How levels are made (default reverse)", Method::NAMES))]
    pub method: Option<String>,
    /// Room size, walls included, WIDTHxHEIGHT
    #[arg(long, default_value = "8x8")]
    pub size: String,
    #[arg(long, default_value_t = DEFAULT_BOXES)]
    pub boxes: usize,
    #[arg(long, default_value_t = DEFAULT_COUNT)]
    pub count: usize,
    /// Same seed and settings, same levels (default: a random seed, reported)
    #[arg(long)]
    pub seed: Option<u64>,
    #[arg(long, help = names_help("Keep only levels of this difficulty", Label::NAMES))]
    pub difficulty: Option<String>,
    /// Stop after this many candidates, made into levels or not (the seed's table:
    /// `--method murase --count 500 --candidates 500`)
    #[arg(long)]
    pub candidates: Option<usize>,
    /// Stop after this long, keeping the levels made
    #[arg(long)]
    pub timeout_ms: Option<u64>,
    #[arg(long)]
    pub max_nodes: Option<u64>,
    /// One JSON line a level, then a summary line
    #[arg(long)]
    pub json: bool,
}

/// `WxH`, refused as the request's `width` would be.
fn size(text: &str) -> Result<(usize, usize), CliError> {
    let bad = || CliError::Size(text.to_string());
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    Ok((
        w.trim().parse().map_err(|_| bad())?,
        h.trim().parse().map_err(|_| bad())?,
    ))
}

pub fn run(args: GenerateArgs) -> Result<i32, CliError> {
    let (width, height) = size(&args.size)?;
    let request = GenerateRequest {
        kind: PuzzleKind::Sokoban.name().to_string(),
        width,
        height,
        boxes: args.boxes,
        method: args.method.clone(),
        difficulty: args.difficulty.clone(),
        count: args.count,
        seed: args.seed,
    };
    let params = request.into_params()?;
    let limits = Limits {
        max_nodes: args.max_nodes,
        timeout: args.timeout_ms.map(Duration::from_millis),
        max_memory_bytes: None,
    };
    let mut out = std::io::stdout().lock();
    if !args.json {
        writeln!(
            out,
            "; puzzled generate --method {} --size {width}x{height} --boxes {} --count {} --seed {}{}",
            params.method,
            params.boxes,
            params.count,
            params.seed,
            params
                .difficulty
                .map(|d| format!(" --difficulty {d}"))
                .unwrap_or_default()
        )
        .map_err(CliError::Write)?;
    }
    let mut written: Result<(), std::io::Error> = Ok(());
    // Enough candidates tried stops the run as a cancel would, between two candidates.
    let enough = CancelFlag::new();
    let report = generate::generate(&params, limits, &enough, &mut |made, progress| {
        if args.candidates.is_some_and(|n| progress.tried >= n) {
            enough.cancel();
        }
        if let (Some(level), Ok(())) = (made, &written) {
            written = if args.json {
                serde_json::to_string(&LevelView::from(level))
                    .map_err(std::io::Error::other)
                    .and_then(|line| writeln!(out, "{line}"))
            } else {
                write_xsb(&mut out, level)
            };
        }
    });
    written.map_err(CliError::Write)?;
    let generation = Generation {
        levels: report.levels,
        tried: report.tried,
        murase: report.murase,
    };
    let summary = GenerationView::new(&generation, report.elapsed);
    let all_tried = args.candidates.is_some_and(|n| report.tried >= n);
    let why = report.shortfall.filter(|_| !all_tried).map(|s| match s {
        Shortfall::Tries => format!(
            "gave up after {} candidates a level",
            generate::TRIES_PER_LEVEL
        ),
        Shortfall::Stopped(stop) => match JobStatus::from(stop).reason() {
            Some(reason) => format!("stopped: {reason}"),
            None => "cancelled".to_string(),
        },
    });
    if args.json {
        let mut line = serde_json::json!({ "summary": summary });
        if let Some(why) = &why {
            line["summary"]["stopped"] = why.clone().into();
        }
        writeln!(out, "{line}").map_err(CliError::Write)?;
    } else {
        eprintln!(
            "made {} of {} levels from {} candidates in {} ms ({:.1} levels/s){}",
            summary.made,
            params.count,
            summary.tried,
            summary.elapsed_ms,
            levels_per_second(summary.made, report.elapsed),
            why.map(|w| format!("; {w}")).unwrap_or_default()
        );
        if let Some(m) = generation.murase {
            eprintln!(
                "murase: dropped {}, unsolvable {}, easy {}, good {}",
                m.dropped, m.unsolvable, m.easy, m.good
            );
        }
    }
    Ok(if report.shortfall.is_none() || all_tried {
        0
    } else {
        1
    })
}

/// A level as a collection entry: its rating as comments, its title, the board.
fn write_xsb(out: &mut impl Write, level: &Generated) -> std::io::Result<()> {
    let f = &level.rating.features;
    writeln!(out)?;
    writeln!(
        out,
        "; seed {}, score {:.2}, label {}, murase {}",
        level.seed, level.rating.score, level.rating.label, level.rating.seed_class
    )?;
    writeln!(
        out,
        "; {} pushes{}, {} moves, {} box lines, {} box changes, effort {}",
        level.pushes,
        if level.optimal { " (optimal)" } else { "" },
        level.moves,
        f.box_lines,
        f.box_changes,
        f.effort
    )?;
    writeln!(out, "; solution {}", level.plan)?;
    // The title last: the collection reader names a level by the line just above it.
    writeln!(out, "Title: {}", level.index)?;
    write!(out, "{}", level.level.to_xsb())
}
