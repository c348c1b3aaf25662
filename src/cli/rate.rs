//! `puzzled rate`: the difficulty of every level of a collection, as text or one JSON
//! line a level.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use puzzled::http::wire::{FeaturesView, RatingView, RequestError};
use puzzled::puzzles::sokoban::generate::rating;
use puzzled::puzzles::sokoban::{self, Level};
use puzzled::search::{CancelFlag, Limits};

use super::{CliError, read_text};

#[derive(Args, Debug)]
pub struct RateArgs {
    /// A Sokoban collection (XSB, run-length XSB, .sok)
    #[arg(long)]
    pub suite: PathBuf,
    /// Time a level may take (its searches are bounded in nodes too)
    #[arg(long)]
    pub timeout_ms: Option<u64>,
    /// One JSON line a level
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: RateArgs) -> Result<i32, CliError> {
    let levels = sokoban::read_collection(&read_text(&args.suite)?);
    let limits = Limits {
        timeout: args.timeout_ms.map(Duration::from_millis),
        ..Limits::default()
    };
    let mut unrated = 0;
    for entry in levels {
        let id = entry
            .title
            .clone()
            .unwrap_or_else(|| entry.index.to_string());
        let rated = Level::parse(&entry.text)
            .map_err(|e| RequestError::RateLevel(e).to_string())
            .and_then(|level| {
                rating::rate(&level, None, limits, &CancelFlag::new())
                    .map_err(|e| RequestError::NotRated(e).to_string())
            });
        match rated {
            Ok(rated) if args.json => {
                let mut line = serde_json::to_value(RatingView::from(&rated))?;
                line["id"] = id.into();
                println!("{line}");
            }
            Ok(rated) => {
                let f = FeaturesView::from(&rated.rating.features);
                println!(
                    "{id}: score {:.2} {} (murase {}), {} pushes{}, {} box lines, {} box changes, {} boxes, floor {}, dead {:.2}, effort {}",
                    rated.rating.score,
                    rated.rating.label,
                    rated.rating.seed_class,
                    f.pushes,
                    if rated.optimal { " (optimal)" } else { "" },
                    f.box_lines,
                    f.box_changes,
                    f.boxes,
                    f.floor,
                    f.dead_share,
                    f.effort
                );
            }
            Err(why) => {
                unrated += 1;
                if args.json {
                    println!("{}", serde_json::json!({ "id": id, "error": why }));
                } else {
                    println!("{id}: {why}");
                }
            }
        }
    }
    Ok(if unrated == 0 { 0 } else { 1 })
}
