//! `aqmlab bench`: run fixed scenarios and print events/s, simulated seconds
//! per wall second and peak memory.
//!
//! Each scenario runs in a child process (`aqmlab bench --only NAME`) so that
//! its peak resident memory (VmHWM from /proc/self/status) is its own. Wall
//! time is the median of `--runs` repetitions.

use crate::{CliError, CliResult};
use aqmlab::{Scenario, Simulation};
use clap::Args;
use std::process::Command;

/// The fixed benchmark scenarios: (name, file text, file name).
const SCENARIOS: &[(&str, &str, &str)] = &[
    (
        "red-gateway-b1",
        include_str!("../../../scenarios/papers/red-gateway/b1.toml"),
        "scenarios/papers/red-gateway/b1.toml",
    ),
    (
        "dumbbell-100",
        include_str!("../../../scenarios/bench/dumbbell-100.toml"),
        "scenarios/bench/dumbbell-100.toml",
    ),
];

#[derive(Args)]
pub struct BenchArgs {
    /// Repetitions per scenario; the median wall time is reported.
    #[arg(long, default_value_t = 3)]
    pub runs: u32,
    /// Run only this scenario, in this process, and print one JSON line
    /// (used internally for per-scenario peak memory).
    #[arg(long, hide = true)]
    pub only: Option<String>,
}

struct Measure {
    sim_s: f64,
    wall_s: f64,
    events: u64,
    peak_kib: u64,
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn run_one(name: &str, runs: u32) -> CliResult<Measure> {
    let (_, text, file) = SCENARIOS
        .iter()
        .find(|(n, _, _)| *n == name)
        .ok_or_else(|| CliError::Input(format!("unknown bench scenario `{name}`")))?;
    let sc = Scenario::from_toml(text, file)?;
    let mut walls = Vec::new();
    let mut last = None;
    for _ in 0..runs.max(1) {
        let r = Simulation::new(&sc, sc.seed).run();
        walls.push(r.wall_seconds);
        last = Some(r);
    }
    walls.sort_by(|a, b| a.total_cmp(b));
    let r = last.expect("at least one run");
    Ok(Measure {
        sim_s: r.sim_seconds,
        wall_s: walls[walls.len() / 2],
        events: r.events,
        peak_kib: peak_rss_kib(),
    })
}

pub fn main(a: BenchArgs) -> CliResult {
    if a.runs == 0 {
        return Err(CliError::Input("--runs must be at least 1".into()));
    }
    if let Some(name) = &a.only {
        let m = run_one(name, a.runs)?;
        println!(
            "{{\"sim_s\":{},\"wall_s\":{},\"events\":{},\"peak_kib\":{}}}",
            m.sim_s, m.wall_s, m.events, m.peak_kib
        );
        return Ok(());
    }
    let exe = std::env::current_exe()?;
    println!(
        "{:<18} {:>8} {:>9} {:>11} {:>10} {:>12} {:>9}",
        "scenario", "sim s", "wall s", "events", "M ev/s", "sim s/wall s", "peak MiB"
    );
    for (name, _, _) in SCENARIOS {
        let out = Command::new(&exe)
            .args(["bench", "--only", name, "--runs", &a.runs.to_string()])
            .output()?;
        if !out.status.success() {
            return Err(CliError::Internal(format!(
                "bench child for {name} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| CliError::Internal(format!("bench child output: {e}")))?;
        let f = |k: &str| v[k].as_f64().unwrap_or(0.0);
        let (sim, wall, ev, kib) = (f("sim_s"), f("wall_s"), f("events"), f("peak_kib"));
        println!(
            "{:<18} {:>8.1} {:>9.3} {:>11.0} {:>10.2} {:>12.1} {:>9.1}",
            name,
            sim,
            wall,
            ev,
            ev / wall / 1e6,
            sim / wall,
            kib / 1024.0
        );
    }
    Ok(())
}
