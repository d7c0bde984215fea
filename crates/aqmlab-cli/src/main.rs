//! The `aqmlab` command: a thin layer over the `aqmlab` library.
//!
//! Exit codes: 0 success, 2 bad input (with a message naming the file, key
//! and what is allowed), 1 internal error. Bad input writes no result files.

mod bench;
mod run;
mod sweep;

// The reproductions, plots, progress and the error type live in the library
// half (src/lib.rs), so other crates can call them.
pub use aqmlab_cli::{plot, progress, repo_root, reproduce, CliError, CliResult};

use clap::{Parser, Subcommand};
use std::process::ExitCode;

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
