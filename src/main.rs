//! The `puzzled` binary: wiring only. `puzzled --help` lists the commands; e.g.
//! `cargo run --release -- solve --tiles "8 6 7 2 5 4 3 0 1"`.

use clap::Parser;
use tracing_subscriber::EnvFilter;

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_env("PUZZLED_LOG").unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = puzzled::cli::Cli::parse();
    let code = match puzzled::cli::run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error}");
            error.exit_code()
        }
    };
    std::process::exit(code);
}
