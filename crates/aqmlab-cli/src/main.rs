//! The `aqmlab` command: a thin layer over the `aqmlab` library.
//!
//! Exit codes: 0 success, 2 bad input (with a message naming the file, key
//! and what is allowed), 1 internal error. Bad input writes no result files.

// print macros that ignore a closed stream (see `aqmlab_reproduce::quiet_write`);
// before the modules, so that they shadow the standard ones there too. A
// write to stdout that fails otherwise (a full disk: `aqmlab list > f`) is
// kept and turns success into exit 1 ([`stdout_failed`]).
#[allow(unused_macros)]
macro_rules! print { ($($t:tt)*) => { $crate::stdout_result({ use std::io::Write as _; write!(std::io::stdout().lock(), $($t)*) }) } }
macro_rules! println { ($($t:tt)*) => { $crate::stdout_result({ use std::io::Write as _; writeln!(std::io::stdout().lock(), $($t)*) }) } }
macro_rules! eprintln { ($($t:tt)*) => { aqmlab_reproduce::quiet_write!(stderr, writeln, $($t)*) } }

mod bench;
mod bench_parallel;
mod interrupt;
mod report;
mod reproduce;
mod run;
mod sweep;

// Plots, progress reporting and the error type are shared with the
// reproductions, in the `aqmlab-reproduce` crate.
pub use aqmlab_reproduce::{plot, progress, Error as CliError, Result as CliResult};

use clap::{Parser, Subcommand};

/// Large blocks on transparent huge pages (see [`aqmlab_reproduce::alloc`]).
#[global_allocator]
static ALLOC: aqmlab_reproduce::alloc::HugePages = aqmlab_reproduce::alloc::HugePages;
use std::process::ExitCode;

/// Largest scenario file `run` and `sweep` read: 4 MiB, or 1 GiB with
/// `--allow-large` (a generated scenario may list 10⁵ hosts and links).
pub fn max_file_bytes(allow_large: bool) -> u64 {
    if allow_large {
        aqmlab::scenario::MAX_LARGE_FILE_BYTES
    } else {
        aqmlab::scenario::MAX_FILE_BYTES
    }
}

/// Refuse a scenario above the default resource limits (`--allow-large`
/// skips this).
pub fn check_limits(sc: &aqmlab::Scenario, file: &str) -> CliResult {
    sc.check_limits(&aqmlab::scenario::limits::Limits::DEFAULT)
        .map_err(|(k, m)| CliError::Input(format!("{file}: `{k}`: {m}")))
}

/// Under `--allow-large`: refuse a scenario whose estimated memory
/// ([`aqmlab::scenario::limits::Estimate::bytes`]) exceeds what the
/// machine has available (`MemAvailable` of /proc/meminfo; not checked
/// where that cannot be read), rather than be killed part way.
pub fn check_memory(sc: &aqmlab::Scenario, file: &str) -> CliResult {
    let Some(avail) = available_memory() else {
        return Ok(());
    };
    let (need, key, what) = sc.estimate().bytes(sc);
    if need <= avail {
        return Ok(());
    }
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    Err(CliError::Input(format!(
        "{file}: `{key}`: the run would need about {:.1} GiB of memory, most of it for {what}, \
         more than the {:.1} GiB this machine has available (--allow-large lifts the default \
         limits, not the machine's)",
        gib(need),
        gib(avail)
    )))
}

/// Bytes of memory available to a new process (Linux `MemAvailable`).
fn available_memory() -> Option<u64> {
    let m = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = m.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
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
    /// List queue kinds, congestion controls, workloads and TCP keys, or one
    /// kind's parameters (type, default, unit, allowed range, source).
    List(ListArgs),
}

#[derive(clap::Args)]
struct ListArgs {
    /// A queue kind, congestion control or workload (e.g. `red`), or `tcp`.
    name: Option<String>,
    /// Print the whole catalogue as the documentation's Markdown page
    /// (docs/src/reference/catalogue.md).
    #[arg(long, conflicts_with = "name")]
    markdown: bool,
}

/// `aqmlab list [name]`, from the same registry the scenario parser uses.
fn list(a: ListArgs) -> CliResult {
    if a.markdown {
        print!("{}", aqmlab::catalogue::list_markdown());
        return Ok(());
    }
    match a.name {
        None => print!("{}", aqmlab::catalogue::list_all()),
        Some(n) => match aqmlab::catalogue::describe(&n) {
            Some(text) => print!("{text}"),
            None => {
                return Err(CliError::Input(aqmlab::registry::cut(&format!(
                "`aqmlab list {n}`: no kind, congestion control or workload named `{n}`; names: {}",
                aqmlab::catalogue::names().join(", ")
            ))))
            }
        },
    }
    Ok(())
}

/// The first failed write to stdout that was not a closed reader.
static STDOUT_ERROR: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Keep a stdout write's error unless the reader is gone (EPIPE: `| head`).
pub fn stdout_result(r: std::io::Result<()>) {
    if let Err(e) = r {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            if let Ok(mut g) = STDOUT_ERROR.lock() {
                g.get_or_insert_with(|| e.to_string());
            }
        }
    }
}

/// The error of a lost write to stdout, after a final flush.
fn stdout_failed() -> Option<String> {
    use std::io::Write as _;
    stdout_result(std::io::stdout().flush());
    STDOUT_ERROR.lock().ok().and_then(|g| g.clone())
}

fn main() -> ExitCode {
    if std::env::args_os().len() <= 1 {
        eprintln!("error: no command; usage: aqmlab <run|sweep|reproduce|bench|list> [ARGS] (aqmlab --help for more)");
        return ExitCode::from(2);
    }
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
        Cmd::List(a) => list(a),
    };
    let r = match (r, stdout_failed()) {
        (Ok(()), Some(e)) => Err(CliError::Internal(format!("writing to stdout: {e}"))),
        (r, _) => r,
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
