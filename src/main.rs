//! The `puzzled` binary: wiring only. `puzzled --help` lists the commands; with none,
//! it runs the service: `cargo run --release`.

mod cli;

use std::io::IsTerminal;

use clap::Parser;
use tracing_subscriber::EnvFilter;

use crate::cli::{Cli, Command};

fn main() {
    let command = Cli::parse().command();
    let json_logs = matches!(&command, Command::Serve(args) if args.log_json);
    let filter = EnvFilter::try_from_env("PUZZLED_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json_logs {
        logs.json().init();
    } else {
        logs.with_ansi(std::io::stderr().is_terminal()).init();
    }
    let code = match cli::run(command) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error}");
            error.exit_code()
        }
    };
    std::process::exit(code);
}
