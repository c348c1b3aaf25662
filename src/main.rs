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
    if !matches!(&command, Command::Serve(_)) {
        end_quietly_on_a_closed_pipe();
    }
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

/// A command whose reader goes away early (`puzzled bench ... | head`) ends quietly, as
/// Unix tools do, instead of panicking on its next write. The service keeps Rust's
/// default (the signal ignored), so a client that hangs up fails only its own socket.
#[cfg(unix)]
#[allow(unsafe_code)]
fn end_quietly_on_a_closed_pipe() {
    // SAFETY: SIG_DFL installs no handler, and no other thread has started yet.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn end_quietly_on_a_closed_pipe() {}
