//! `aqmlab run FILE --out DIR [--seed N] [--duration T] [--set key=value]...`

use crate::progress::Progress;
use crate::{CliError, CliResult};
use aqmlab::scenario::units::parse_duration;
use aqmlab::{Scenario, Simulation};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct RunArgs {
    /// Scenario file (TOML).
    pub file: PathBuf,
    /// Output directory (created if missing).
    #[arg(long, short)]
    pub out: PathBuf,
    /// Seed (overrides the scenario's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Simulated duration, e.g. "10s" (overrides the scenario's `duration`).
    #[arg(long)]
    pub duration: Option<String>,
    /// Override a scenario value: key.path=value (repeatable), e.g.
    /// --set links.bottleneck.queue_ab.max_p=0.05
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Also draw the queue time series (queues.png/.svg) and the drop and
    /// mark rates over time (signal.png/.svg).
    #[arg(long)]
    pub plot: bool,
    /// Run scenarios above the default resource limits (samples, bins,
    /// flows, nodes: see the README's "Errors and limits").
    #[arg(long)]
    pub allow_large: bool,
}

pub fn main(a: RunArgs) -> CliResult {
    let mut overrides = a.set.clone();
    if let Some(d) = &a.duration {
        parse_duration(d).map_err(|m| CliError::Input(format!("--duration `{d}`: {m}")))?;
        overrides.push(format!("duration=\"{d}\""));
    }
    let sc = Scenario::from_file_with(&a.file, &overrides)?;
    if !a.allow_large {
        crate::check_limits(&sc, &a.file.display().to_string())?;
    }
    let seed = a.seed.unwrap_or(sc.seed);
    let mut sim = Simulation::new(&sc, seed);
    let mut bar = Progress::new(format!("{} (seed {seed})", sc.name), 1000);
    let r = sim.run_with_progress(|f| bar.set((f * 1000.0) as u64));
    bar.finish();
    if !r.conservation.holds() {
        return Err(CliError::Internal(format!(
            "packet conservation violated: {:?}",
            r.conservation
        )));
    }
    aqmlab::output::write_run(&r, &a.out)?;
    if a.plot {
        crate::plot::queue_series(&r, &a.out.join("queues"))?;
        crate::plot::signal_rates(&r, &a.out.join("signal"))?;
    }
    eprintln!(
        "{}: {:.1} simulated s in {:.3} s wall ({} events, {:.2} M events/s); results in {}",
        sc.name,
        r.sim_seconds,
        r.wall_seconds,
        r.events,
        r.events as f64 / r.wall_seconds.max(1e-9) / 1e6,
        a.out.display()
    );
    Ok(())
}
