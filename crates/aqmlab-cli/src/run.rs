//! `aqmlab run FILE [--out DIR] [--seed N] [--duration T] [--set key=value]...`
//!
//! Without `--out` the run goes to `out/<file stem>/` (said on stderr).
//! A `[sweep]` table is not run here, but each of its points is validated,
//! so a typo inside it is caught by `aqmlab run` as by `aqmlab sweep`.
//!
//! The run's files are staged under temporary names and renamed into place
//! when all are written, `summary.json` last (see `aqmlab::output`). Files
//! that an earlier run wrote into the same folder and this run does not
//! write are removed (and listed on stderr).

use crate::progress::Progress;
use crate::{CliError, CliResult};
use aqmlab::output::{self, Provenance, Staging};
use aqmlab::scenario::units::parse_duration;
use aqmlab::{Scenario, Simulation};
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct RunArgs {
    /// Scenario file (TOML).
    pub file: PathBuf,
    /// Output directory (created if missing); default `out/<file stem>/`.
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Seed (overrides the scenario's `seed`): 0 to 2^63 − 1, the range of
    /// the `seed` key (a TOML integer).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=i64::MAX as u64))]
    pub seed: Option<u64>,
    /// Simulated duration, e.g. "10s" (overrides the scenario's `duration`).
    #[arg(long)]
    pub duration: Option<String>,
    /// Override a scenario value: key.path=value (repeatable), e.g.
    /// --set links.bottleneck.queue_ab.max_p=0.05
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Also draw the queue time series (queues.png/.svg), the drop and
    /// mark rates over time (signal.png/.svg), and, when traced, cwnd
    /// (cwnd.png/.svg) and throughput (throughput.png/.svg).
    #[arg(long)]
    pub plot: bool,
    /// Also write the run as a flent data file (`run.flent.gz`: per-flow
    /// throughput, queue delay and length, cwnd and RTT of traced flows),
    /// which `flent -i run.flent.gz -p upload` plots. Needs
    /// `output.throughput_bin`.
    #[arg(long)]
    pub flent: bool,
    /// Also write `report.html`: one self-contained page (no network
    /// needed) with interactive plots of the queues, cwnd, throughput and
    /// delay CDFs, and every number of `summary.json` in tables.
    #[arg(long)]
    pub report: bool,
    /// File format of the result tables and the event log: `csv` or
    /// `parquet` (sets `output.format`; default: the scenario's, CSV unless
    /// it says otherwise).
    #[arg(long, value_parser = ["csv", "parquet"])]
    pub format: Option<String>,
    /// Run scenarios above the default resource limits (samples, bins,
    /// flows, nodes: see the README's "Errors and limits").
    #[arg(long)]
    pub allow_large: bool,
    /// Worker threads for this one run (parallel simulation of logical
    /// processes; the results are byte-identical to one thread). Falls
    /// back to one thread, with a note, when the network does not split.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: u16,
    /// Refuse to run (exit 2, nothing written) a scenario that has
    /// warnings: a valid configuration that does not do what its names say
    /// (e.g. `cc = "prague"` without AccECN). Without it, each warning is
    /// one line on stderr and a record in `summary.json`'s `warnings`.
    #[arg(long)]
    pub strict: bool,
}

/// Print each warning on stderr; under `--strict` they are an input error
/// naming how many there are (the lines above it say which).
pub fn report_warnings(w: &[aqmlab::scenario::warnings::Warning], strict: bool) -> CliResult {
    for x in w {
        eprintln!("{x}");
    }
    report_warnings_strict(w, strict)
}

/// Under `--strict`, warnings (printed already) are an input error.
pub fn report_warnings_strict(
    w: &[aqmlab::scenario::warnings::Warning],
    strict: bool,
) -> CliResult {
    if strict && !w.is_empty() {
        return Err(CliError::Input(format!(
            "--strict: the scenario has {} warning{} (above); fix {} or run without --strict",
            w.len(),
            if w.len() == 1 { "" } else { "s" },
            if w.len() == 1 { "it" } else { "them" },
        )));
    }
    Ok(())
}

/// Check that `--out` can be an output folder: not an existing file, and
/// writable (or creatable). Bad input (exit 2) naming the path otherwise.
/// Creates nothing.
pub fn check_out(out: &Path) -> CliResult {
    let bad = |m: String| CliError::Input(format!("--out `{}`: {m}", out.display()));
    let mut probe_dir = out.to_path_buf();
    if out.exists() {
        if !out.is_dir() {
            return Err(bad("exists and is not a directory".into()));
        }
    } else {
        // The nearest existing ancestor must be a writable directory.
        loop {
            probe_dir = match probe_dir.parent() {
                Some(p) if p.as_os_str().is_empty() => PathBuf::from("."),
                Some(p) => p.to_path_buf(),
                None => return Err(bad("no existing parent directory".into())),
            };
            if probe_dir.exists() {
                if !probe_dir.is_dir() {
                    return Err(bad(format!("`{}` is not a directory", probe_dir.display())));
                }
                break;
            }
        }
    }
    let probe = probe_dir.join(format!(".tmp-aqmlab-probe-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(bad(format!(
            "cannot write in `{}`: {e}",
            probe_dir.display()
        ))),
    }
}

/// An output error: exit 1, naming the path (the error's message does).
pub fn out_err(e: std::io::Error) -> CliError {
    CliError::Internal(format!("cannot write output: {e}"))
}

/// The scenario document of `text` with `overrides` applied and its file
/// paths absolute (`aqmlab::scenario::document`; the text parsed already,
/// so errors here are not expected).
pub fn scenario_doc(text: &str, file: &str, overrides: &[String]) -> CliResult<toml::Value> {
    Ok(aqmlab::scenario::document(text, file, overrides)?)
}

/// The provenance record of a run of the scenario document `doc` with
/// `seed`; returns it with the effective scenario's TOML.
pub fn provenance(
    doc: &toml::Value,
    seed: u64,
    file: Option<&Path>,
    overrides: &[String],
    files: &[aqmlab::scenario::files::InputFile],
) -> CliResult<(String, Provenance)> {
    let toml = output::effective_scenario_toml(doc, seed)
        .map_err(|e| CliError::Input(format!("the effective scenario: {e}")))?;
    let prov = Provenance {
        aqmlab_version: env!("CARGO_PKG_VERSION").to_string(),
        git_commit: aqmlab_reproduce::GIT_COMMIT.to_string(),
        scenario_file: file.map(|f| f.display().to_string()),
        overrides: overrides.to_vec(),
        seed,
        scenario_sha256: output::sha256_hex(&toml),
        command_line: std::env::args_os()
            .map(|a| a.to_string_lossy().to_string())
            .collect(),
        call: None,
        files: files.to_vec(),
    };
    Ok((toml, prov))
}

pub fn main(a: RunArgs) -> CliResult {
    // the set-up phase starts here: reading, expanding and validating the
    // scenario cost more than building the simulation at 10⁵ hosts
    let setup = aqmlab::metrics::PhaseClock::start();
    let mut overrides = a.set.clone();
    if let Some(d) = &a.duration {
        parse_duration(d).map_err(|m| CliError::Input(format!("--duration `{d}`: {m}")))?;
        overrides.push(format!("duration=\"{d}\""));
    }
    if let Some(f) = &a.format {
        overrides.push(format!("output.format=\"{f}\""));
    }
    let max_file = crate::max_file_bytes(a.allow_large);
    let sc = Scenario::from_file_limit(&a.file, &overrides, max_file)?;
    if !a.allow_large {
        crate::check_limits(&sc, &a.file.display().to_string())?;
    } else {
        crate::check_memory(&sc, &a.file.display().to_string())?;
    }
    if a.flent && sc.output.throughput_bin.is_none() {
        return Err(CliError::Input(format!(
            "--flent: {}",
            output::flent::NEEDS_THROUGHPUT
        )));
    }
    let seed = a.seed.unwrap_or(sc.seed);
    let file = a.file.display().to_string();
    let text = aqmlab::scenario::read_file_limit(&a.file, max_file)?;
    if sc.sweep.is_some() {
        // Not run here, but a bad axis key or value is the same error as
        // under `aqmlab sweep`.
        let plan = Scenario::sweep_plan_limit(&text, &file, &a.set, max_file)?;
        for k in 0..plan.len() {
            plan.point(k)?;
        }
    }
    let out = match &a.out {
        Some(o) => o.clone(),
        None => {
            let o = default_out(&a.file);
            eprintln!("no --out given: writing to {}", o.display());
            o
        }
    };
    check_out(&out)?;
    let doc = scenario_doc(&text, &file, &overrides)?;
    let (toml, prov) = provenance(&doc, seed, Some(&a.file), &overrides, &sc.inputs)?;
    let mut sim = Simulation::with_threads(&sc, seed, a.threads as usize);
    report_warnings(sim.warnings(), a.strict)?;
    crate::interrupt::install(1, &out);
    let mut st = Staging::new(&out).map_err(out_err)?;
    sim.setup_since(setup);
    if let Some(note) = sim.parallel_note() {
        eprintln!("--threads {}: running sequentially: {note}", a.threads);
    }
    let cap = output::pcap::attach(&mut sim, &sc, &mut st).map_err(out_err)?;
    let mut bar = Progress::new(format!("{} (seed {seed})", sc.name), 1000);
    // the simulation holds what it needs: the scenario's memory (10⁵
    // generated links and flows) goes back before the run and the writing
    let name = sc.name.clone();
    drop(sc);
    let mut r = sim.run_with_progress(|f| bar.set((f * 1000.0) as u64));
    bar.finish();
    free_simulation(sim, &mut r);
    if !r.conservation.holds() {
        return Err(CliError::Internal(format!(
            "packet conservation violated: {:?}",
            r.conservation
        )));
    }
    let traces = cap.finish().map_err(out_err)?;
    output::stage_provenance(&mut st, &toml, &prov).map_err(out_err)?;
    output::stage_run(&r, &mut st).map_err(out_err)?;
    if a.flent {
        // Checked above: a run with a throughput bin has series (possibly
        // all-zero ones), unless it has no `[[flows]]`.
        match output::flent::encode(&r) {
            Some(bytes) => st
                .write("run.flent.gz", &bytes.map_err(out_err)?)
                .map_err(out_err)?,
            None => eprintln!("--flent: no run.flent.gz: the run has no per-flow throughput series (no [[flows]])"),
        }
    }
    if a.report {
        let page = output::report::run_page(&r).render();
        st.write("report.html", page.as_bytes()).map_err(out_err)?;
    }
    if a.plot {
        let e = |e: std::io::Error| out_err(e);
        crate::plot::queue_series(&r, &st.plot_stem("queues")).map_err(e)?;
        crate::plot::signal_rates(&r, &st.plot_stem("signal")).map_err(e)?;
        crate::plot::cwnd(&r, &st.plot_stem("cwnd")).map_err(e)?;
        crate::plot::throughput(&r, &st.plot_stem("throughput")).map_err(e)?;
    }
    let removed = st.commit().map_err(out_err)?;
    crate::interrupt::run_done();
    if !removed.is_empty() {
        eprintln!(
            "{}: removed {} file(s) of an earlier run that this run does not write: {}",
            out.display(),
            removed.len(),
            removed.join(", ")
        );
    }
    for (path, n) in &traces {
        eprintln!("pcap: {n} packets in {path}");
    }
    eprintln!(
        "{}: {:.1} simulated s in {:.3} s wall ({} events, {:.2} M events/s); results in {}",
        name,
        r.sim_seconds,
        r.wall_seconds,
        r.events,
        r.events as f64 / r.wall_seconds.max(1e-9) / 1e6,
        out.display()
    );
    // Every file is written and renamed into place: the process ends
    // next, and the operating system takes back the results at once,
    // without a free per row.
    std::mem::forget(r);
    Ok(())
}

/// Free the simulation once its results are collected, counting the time
/// in `timings.collect`. Its flow and link records (2.6 KB a host, 262 MB
/// of a 10⁵-host star) then hold no memory while the results are written:
/// the process peaks at the loop's size, not the loop's plus the
/// writing's (578 → 452 MiB on that star). Freeing costs 0.08 CPU-s
/// there, less than the process saves in pages it neither faults in nor
/// unmaps at exit: its whole CPU time is lower than with `mem::forget`.
pub(crate) fn free_simulation(sim: Simulation, r: &mut aqmlab::RunResult) {
    let clock = aqmlab::metrics::PhaseClock::start();
    drop(sim);
    let t = clock.stop();
    r.timings.collect.wall_s += t.wall_s;
    r.timings.collect.cpu_s += t.cpu_s;
}

/// `out/<file stem>` (`out/run` for a name without a usable stem).
pub fn default_out(file: &Path) -> PathBuf {
    let stem = file
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty() && !s.starts_with('.'))
        .unwrap_or("run");
    Path::new("out").join(stem)
}
