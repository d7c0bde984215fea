//! The `aqmlab` command: a thin layer over the `aqmlab` library.
//!
//! Exit codes: 0 success, 2 bad input (with a message naming the file, key
//! and what is allowed), 1 internal error. Bad input writes no result files.

mod bench;
mod interrupt;
mod plot;
mod progress;
mod reproduce;
mod run;
mod sweep;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// An error, classified for the exit code.
#[derive(Debug)]
pub enum CliError {
    /// The user's input is wrong: exit 2.
    Input(String),
    /// Something failed that is not the user's fault: exit 1.
    Internal(String),
}

impl From<aqmlab::ScenarioError> for CliError {
    fn from(e: aqmlab::ScenarioError) -> Self {
        CliError::Input(e.to_string())
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::Internal(e.to_string())
    }
}

pub type CliResult<T = ()> = Result<T, CliError>;

/// Refuse a scenario above the default resource limits (`--allow-large`
/// skips this).
pub fn check_limits(sc: &aqmlab::Scenario, file: &str) -> CliResult {
    sc.check_limits(&aqmlab::scenario::limits::Limits::DEFAULT)
        .map_err(|(k, m)| CliError::Input(format!("{file}: `{k}`: {m}")))
}

#[derive(Parser)]
#[command(
    name = "aqmlab",
    version,
    about = "Fast, faithful packet-level simulator for TCP congestion control and AQM"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run one scenario file and write summary.json, flows.csv, queues.csv, links.csv.
    Run(run::RunArgs),
    /// Run every combination of a scenario's [sweep] axes over several seeds.
    Sweep(sweep::SweepArgs),
    /// Reproduce a paper's experiment and print its numbers beside ours.
    Reproduce(reproduce::ReproduceArgs),
    /// Run the fixed benchmark scenarios and print events/s, speed and peak memory.
    Bench(bench::BenchArgs),
}

/// Where the repository's scenario files are (for commands that read them).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => ExitCode::from(2),
            };
        }
    };
    let r = match cli.cmd {
        Cmd::Run(a) => run::main(a),
        Cmd::Sweep(a) => sweep::main(a),
        Cmd::Reproduce(a) => reproduce::main(a),
        Cmd::Bench(a) => bench::main(a),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Input(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(2)
        }
        Err(CliError::Internal(m)) => {
            eprintln!("internal error: {m}");
            ExitCode::from(1)
        }
    }
}
