//! `aqmlab reproduce PAPER`: run a paper's experiment and print its numbers
//! beside ours. The reproductions are the `aqmlab-reproduce` crate; this is
//! its command line (the paper names and their help come from its registry).

use crate::{CliError, CliResult};
use aqmlab_reproduce::{reproduce, Opts, MAX_DURATION_S, PAPERS};
use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::Args;
use std::path::PathBuf;

/// The registry's papers as the command line's possible values.
fn paper_names() -> PossibleValuesParser {
    PossibleValuesParser::new(
        PAPERS
            .iter()
            .map(|d| PossibleValue::new(d.name).help(d.about)),
    )
}

#[derive(Args)]
pub struct ReproduceArgs {
    /// Which paper.
    #[arg(value_parser = paper_names())]
    pub paper: String,
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
    /// Also write `report.html`: one self-contained page with the paper's
    /// numbers beside aqmlab's as interactive plots and a table, and
    /// `report.md` (with the verdicts) rendered in it.
    #[arg(long)]
    pub report: bool,
}

/// `aqmlab reproduce …` from the command line.
pub fn main(a: ReproduceArgs) -> CliResult {
    let paper = aqmlab_reproduce::papers::find(&a.paper)?;
    let seeds = a.seeds.unwrap_or(paper.default_seeds);
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
    let duration_s = a
        .duration
        .as_deref()
        .map(aqmlab_reproduce::parse_duration)
        .transpose()?;
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
    let out = a
        .out
        .unwrap_or_else(|| PathBuf::from("results").join(paper.name));
    install_interrupt(&out);
    let rows = reproduce(paper.name, &o, Some(&out))?;
    if a.report {
        let md = std::fs::read_to_string(out.join("report.md")).ok();
        let page = crate::report::reproduce_page(paper.name, &rows, md.as_deref());
        aqmlab::output::write_atomic(&out.join("report.html"), page.render().as_bytes())
            .map_err(crate::run::out_err)?;
    }
    Ok(())
}

/// SIGINT/SIGTERM: say how many runs are complete and kept (they are kept
/// as they finish, see `aqmlab_reproduce::resume`) and that the same
/// command resumes, then exit 130, as `aqmlab sweep` does.
fn install_interrupt(out: &std::path::Path) {
    let out = out.display().to_string();
    // An error here (a handler set already) leaves the default behaviour,
    // which still leaves only complete kept runs behind.
    let _ = ctrlc::set_handler(move || {
        let (done, phase) = aqmlab_reproduce::resume::progress();
        // "7 of 45 runs complete (red-gateway: 45 runs)", and the total
        // where earlier steps of the paper completed runs too.
        let what = match phase {
            Some((label, k, n)) if k == done => format!("{k} of {n} runs complete ({label})"),
            Some((label, k, n)) => {
                format!("{k} of {n} runs complete ({label}), {done} in all")
            }
            None => format!("{done} runs complete"),
        };
        eprintln!(
            "\ninterrupted: {what}, kept in {out}/.resume; run the same command again to \
             resume (complete runs are read back, not run again)"
        );
        std::process::exit(130);
    });
}
