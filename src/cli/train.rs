//! `puzzled train 2048`: learns the n-tuple network by self-play and writes it, with a
//! progress line every thousand games.

use std::path::PathBuf;

use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use puzzled::games::twenty48::ntuple::Network;
use puzzled::games::twenty48::train::{Learning, TrainProgress, Training, train};
use puzzled::search::Interrupt;

use super::CliError;

#[derive(Args, Debug)]
pub struct TrainArgs {
    /// The game whose evaluation is learned
    #[arg(value_parser = ["2048"])]
    pub game: String,
    /// Games of self-play
    #[arg(long, default_value_t = 100_000)]
    pub games: usize,
    /// Same seed, same network
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Start from this network instead of zeros
    #[arg(long)]
    pub from: Option<PathBuf>,
    /// How each step is shared among the weights
    #[arg(long, value_parser = learning(), default_value_t = Learning::Tc)]
    pub learning: Learning,
    #[arg(long, help = rate_help())]
    pub rate: Option<f64>,
    /// Where the network is written
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(args: TrainArgs) -> Result<i32, CliError> {
    let mut network = match &args.from {
        None => Network::zero(),
        Some(path) => Network::from_bytes(&read(path)?).map_err(|e| CliError::Network {
            path: path.display().to_string(),
            why: e.to_string(),
        })?,
    };
    let mut report = |p: &TrainProgress| {
        eprintln!(
            "{} games, {:.0} s: last {} games mean score {:.0}, reached 2048 in {:.1} %",
            p.games,
            p.elapsed.as_secs_f64(),
            (p.games - 1) % 1000 + 1,
            p.mean_score,
            100.0 * p.reached_2048
        );
    };
    // Only a signal stops a training run: it has no deadline of its own.
    let never = Interrupt::never();
    let training = Training {
        games: args.games,
        seed: args.seed,
        learning: args.learning,
        rate: args.rate.unwrap_or(args.learning.default_rate()),
    };
    let stopped = train(&mut network, &training, &never, &mut report);
    std::fs::write(&args.out, network.to_bytes()).map_err(|error| CliError::Read {
        path: args.out.display().to_string(),
        error,
    })?;
    Ok(if stopped.is_ok() { 0 } else { 1 })
}

/// `--rate`'s help, with each rule's default.
fn rate_help() -> String {
    format!(
        "Learning rate: the step toward each target (default {} for tc, the base of each \
         weight's own rate; {} for td; lower to fine-tune)",
        Learning::Tc.default_rate(),
        Learning::Td.default_rate()
    )
}

/// `--learning`'s names, each with what it does.
fn learning() -> impl TypedValueParser<Value = Learning> {
    let rules = Learning::ALL
        .iter()
        .map(|rule| PossibleValue::new(rule.name()).help(rule.summary()));
    PossibleValuesParser::new(rules).map(|name| Learning::parse(&name).expect("a learning rule"))
}

fn read(path: &PathBuf) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(|error| CliError::Read {
        path: path.display().to_string(),
        error,
    })
}
