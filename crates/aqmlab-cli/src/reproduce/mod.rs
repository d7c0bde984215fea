//! `aqmlab reproduce PAPER`: run a paper's experiment and print its numbers
//! beside ours.
//!
//! One entry point, [`reproduce`], for the command line and for library
//! callers: it checks the options, runs the paper's experiment matrix, writes
//! the report, plots and `tables.csv` (one long-format schema for every
//! paper, [`table::TableRow`]) and returns the table rows.

pub mod codel_highspeed_tcp;
pub mod common;
pub mod markmax;
pub mod matrix;
pub mod maxnet_mice;
pub mod paper;
pub mod red_gateway;
pub mod rio_ps;
pub mod stats;
pub mod table;
pub mod template;
pub mod verdict;

use crate::{CliError, CliResult};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
pub use table::TableRow;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Paper {
    /// Fang, Youn, Choo, Yu: New Reno through a RED gateway (PDCS 2001).
    RedGateway,
    /// Kushwaha, Ratneshwer: RED, CoDel and sfqCoDel with CUBIC, H-TCP and
    /// Compound TCP at 622 Mbit/s.
    CodelHighspeedTcp,
    /// Osipova, Blanc, Avrachenkov: MarkMax vs DropTail, New Reno flows with
    /// different RTTs (schemes 1 and 2).
    Markmax,
    /// Guo & Matta: RIO-PS vs DropTail and RED, goodput table and web
    /// traffic (ICNP 2001).
    RioPs,
    /// Phan, Tran, Nguyen, Thoai: MaxNet vs TCP Reno/RED on HTTP mice with
    /// an FTP elephant (MSOCP 2009).
    MaxnetMice,
}

impl Paper {
    /// Seeds per configuration when `--seeds` is not given.
    pub fn default_seeds(self) -> u64 {
        match self {
            Paper::RedGateway => 10,       // the paper's ten runs per case
            Paper::CodelHighspeedTcp => 3, // the paper reports one run; 3 show the spread
            Paper::Markmax => 5,           // the paper reports one number per cell
            Paper::RioPs => 2,             // 4000 s web runs; the paper reports one run
            Paper::MaxnetMice => 10,       // testbed runs; seeds move the elephant's phase
        }
    }

    /// The paper from its command-line name (`red-gateway`, …), or an
    /// input error listing the names.
    pub fn from_name(name: &str) -> CliResult<Paper> {
        <Paper as ValueEnum>::from_str(name, false).map_err(|_| {
            let names: Vec<String> = Paper::value_variants()
                .iter()
                .filter_map(|p| p.to_possible_value().map(|v| v.get_name().to_string()))
                .collect();
            CliError::Input(format!(
                "paper `{name}`: unknown; one of {}",
                names.join(", ")
            ))
        })
    }

    fn default_out(self) -> PathBuf {
        PathBuf::from("results").join(match self {
            Paper::RedGateway => "red-gateway",
            Paper::CodelHighspeedTcp => "codel-highspeed-tcp",
            Paper::Markmax => "markmax",
            Paper::RioPs => "rio-ps",
            Paper::MaxnetMice => "maxnet-mice",
        })
    }
}

#[derive(Args)]
pub struct ReproduceArgs {
    /// Which paper.
    pub paper: Paper,
    /// Seeds per configuration (default: the paper's number of runs, see
    /// each paper's report).
    #[arg(long)]
    pub seeds: Option<u64>,
    /// Output directory for the report, tables and plots (default
    /// results/<paper>).
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Simulated length of each run instead of the paper's, e.g. "600s" or
    /// "10min" (units: ns, us, ms, s, min); warm-up windows scale with it.
    /// For quick looks: reports from changed run lengths say so. Applies to
    /// codel-highspeed-tcp, markmax, maxnet-mice and rio-ps's web runs, not
    /// to red-gateway, whose tables count events over the paper's 30 s runs.
    #[arg(long, value_name = "TIME")]
    pub duration: Option<String>,
    /// rio-ps only: offered web load as a fraction of the bottleneck, in
    /// (0, 2] (default: `web.load` in scenarios/papers/rio-ps/matrix.toml).
    #[arg(long, value_name = "FRACTION")]
    pub load: Option<f64>,
    /// Allow more than the default limits: 10000 seeds, 1024 worker
    /// threads, a --duration of 10000 s.
    #[arg(long)]
    pub allow_large: bool,
}

/// Longest `--duration` of a reproduction without `--allow-large`, s (2.5×
/// the longest paper run, rio-ps's 4000 s).
const MAX_DURATION_S: f64 = 10_000.0;

/// What every reproduction takes from its caller, checked by [`reproduce`].
#[derive(Clone, Debug)]
pub struct Opts {
    /// Seeds per configuration (1..=seeds).
    pub seeds: u64,
    /// `--duration`, seconds.
    pub duration_s: Option<f64>,
    /// `--load`, a fraction of the bottleneck.
    pub load: Option<f64>,
}

impl Opts {
    /// The paper's defaults: its number of seeds, its run length and load.
    pub fn defaults(paper: Paper) -> Opts {
        Opts {
            seeds: paper.default_seeds(),
            duration_s: None,
            load: None,
        }
    }

    /// The run length: `--duration` if given (at least `min_s` seconds,
    /// else an input error naming the paper's constraint), else `paper_s`.
    /// The flag says whether it differs from the paper's.
    pub fn duration_or(&self, paper_s: f64, min_s: f64, why: &str) -> CliResult<(f64, bool)> {
        match self.duration_s {
            None => Ok((paper_s, false)),
            Some(d) if d < min_s => Err(CliError::Input(format!(
                "--duration: must be at least {min_s} s ({why}), got {d} s"
            ))),
            Some(d) => Ok((d, (d - paper_s).abs() > 1e-9)),
        }
    }

    /// The options that apply to `paper`, with values in range.
    fn check(&self, paper: Paper) -> CliResult {
        if self.seeds == 0 {
            return Err(CliError::Input("--seeds must be at least 1".into()));
        }
        if let Some(d) = self.duration_s {
            if !(d.is_finite() && d > 0.0) {
                return Err(CliError::Input(format!(
                    "--duration: must be positive, got {d} s"
                )));
            }
            if matches!(paper, Paper::RedGateway) {
                return Err(CliError::Input(
                    "--duration: red-gateway's tables count drops and timeouts over the paper's \
                     30 s runs (already about 10 s in all), so its run length is fixed"
                        .into(),
                ));
            }
        }
        if let Some(l) = self.load {
            if !matches!(paper, Paper::RioPs) {
                return Err(CliError::Input(
                    "--load: only rio-ps has an offered-load knob (its web workload)".into(),
                ));
            }
            if !(l > 0.0 && l <= 2.0) {
                return Err(CliError::Input(format!(
                    "--load: a fraction of the bottleneck in (0, 2], got {l}"
                )));
            }
        }
        Ok(())
    }
}

/// `--duration`'s text ("600s", "10min") in seconds.
pub fn parse_duration(d: &str) -> CliResult<f64> {
    let t = aqmlab::scenario::units::parse_duration(d)
        .map_err(|m| CliError::Input(format!("--duration `{d}`: {m}")))?;
    if t == 0 {
        return Err(CliError::Input(format!(
            "--duration `{d}`: must be positive"
        )));
    }
    Ok(t as f64 / 1e9)
}

/// Reproduce `paper` (its command-line name, e.g. `"red-gateway"`) with
/// `opts`: run its experiment, write the report, plots and `tables.csv` to
/// `out` (a temporary directory, removed afterwards, when `None`) and return
/// the long-format table rows. Bad options are [`CliError::Input`] and write
/// nothing.
pub fn reproduce(paper: &str, opts: &Opts, out: Option<&Path>) -> CliResult<Vec<TableRow>> {
    let p = Paper::from_name(paper)?;
    opts.check(p)?;
    match out {
        Some(dir) => run_paper(p, opts, dir),
        None => {
            let tmp = tempfile::tempdir()?;
            TEMP_OUT.with(|t| t.set(true));
            let r = run_paper(p, opts, tmp.path());
            TEMP_OUT.with(|t| t.set(false));
            r
        }
    }
}

thread_local! {
    /// Set while [`reproduce`] writes to a temporary folder that it removes
    /// afterwards (Python's `reproduce()` without `out=`).
    static TEMP_OUT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The output folder as the closing line names it: its path, or, for a
/// temporary folder removed at the end, a note that nothing is kept (no
/// message names a folder that will not exist).
pub(crate) fn shown(out: &Path) -> String {
    if TEMP_OUT.with(|t| t.get()) {
        "a temporary folder that is removed (pass an output folder to keep them)".to_string()
    } else {
        out.display().to_string()
    }
}

/// The one runner: dispatch to the paper's driver.
fn run_paper(p: Paper, o: &Opts, out: &Path) -> CliResult<Vec<TableRow>> {
    match p {
        Paper::RedGateway => red_gateway::run(o.seeds, out),
        Paper::CodelHighspeedTcp => codel_highspeed_tcp::run(o, out),
        Paper::Markmax => markmax::run(o, out),
        Paper::RioPs => rio_ps::run(o, out),
        Paper::MaxnetMice => maxnet_mice::run(o, out),
    }
}

/// `aqmlab reproduce …` from the command line.
pub fn main(a: ReproduceArgs) -> CliResult {
    let seeds = a.seeds.unwrap_or(a.paper.default_seeds());
    let lim = if a.allow_large {
        aqmlab::scenario::limits::Limits::NONE
    } else {
        aqmlab::scenario::limits::Limits::DEFAULT
    };
    aqmlab::scenario::limits::check_runs(1, seeds, "--seeds", a.jobs.map(|j| j as u64), &lim)
        .map_err(|(k, m)| CliError::Input(format!("{k}: {m}")))?;
    if let Some(j) = a.jobs {
        rayon::ThreadPoolBuilder::new()
            .num_threads(j.max(1))
            .build_global()
            .map_err(|e| CliError::Internal(e.to_string()))?;
    }
    let duration_s = a.duration.as_deref().map(parse_duration).transpose()?;
    if let Some(secs) = duration_s.filter(|&s| s > MAX_DURATION_S && !a.allow_large) {
        return Err(CliError::Input(format!(
            "--duration: {secs} s is over the default limit of {MAX_DURATION_S} s (runs keep \
             time series that grow with their length); pass --allow-large to run longer"
        )));
    }
    let o = Opts {
        seeds,
        duration_s,
        load: a.load,
    };
    let name = a
        .paper
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default();
    let out = a.out.unwrap_or_else(|| a.paper.default_out());
    reproduce(&name, &o, Some(&out)).map(|_| ())
}
