//! `aqmlab bench`: run fixed scenarios and print events/s, simulated seconds
//! per wall second and peak memory.
//!
//! Each scenario runs in a child process (`aqmlab bench --only NAME`) so that
//! its peak resident memory (VmHWM from /proc/self/status) is its own. Wall
//! time is the median of `--runs` repetitions.
//!
//! `aqmlab bench --scale` measures how cost grows with the number of flows:
//! for N = 10 … 10⁵ (`--max-flows`) on a star (one sender host per flow,
//! 1 Gbit/s access links, a 100 Mbit/s RED bottleneck to one sink) and a
//! dumbbell (one host pair, N flows, 10 Gbit/s access, a 1 Gbit/s RED
//! bottleneck), 10 simulated seconds of New Reno bulk transfers, each in its
//! own child process: set-up time (scenario expansion, validation and
//! `Simulation::new`), events, events per CPU-second of the event loop and
//! of the whole run (`+results`: result collection, which costs per flow
//! and per link rather than per event, included), the CPU time of result
//! collection, peak RSS and peak RSS per flow (above the process's RSS
//! before set-up). CPU times are the thread's (`CLOCK_THREAD_CPUTIME_ID`).
//! Then the phases as `summary.json`'s `timings` records them (process CPU
//! seconds): `loop s`, `collect s` (with freeing the simulation, as
//! `aqmlab run` does before writing), `write s` (every file `aqmlab run`
//! writes, into a scratch folder) and `write wall`, the size of
//! `summary.json` and of all output files, and the peak RSS after writing
//! (`+write MiB`).

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
    /// Scale benchmark: star and dumbbell at N = 10, 100, … up to
    /// `--max-flows` flows.
    #[arg(long)]
    pub scale: bool,
    /// Largest N of `--scale` (a power of ten).
    #[arg(long, default_value_t = 100_000)]
    pub max_flows: u64,
    /// Topologies of `--scale`: `star`, `dumbbell` (default both).
    #[arg(long, value_delimiter = ',')]
    pub topology: Vec<String>,
    /// Simulated duration of each `--scale` run.
    #[arg(long, default_value = "10s")]
    pub duration: String,
    /// Run one scale point in this process (`star:N`), one JSON line.
    #[arg(long, hide = true)]
    pub scale_one: Option<String>,
    /// Parallel benchmark: the four-site network with each of `--threads`
    /// (see `bench_parallel.rs`); `--duration` defaults to 0.5s here.
    #[arg(long)]
    pub parallel: bool,
    /// Thread counts of `--parallel`.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    pub threads: Vec<usize>,
}

/// The scale scenario `topology` with `n` flows, as scenario text.
pub fn scale_scenario(topology: &str, n: u64, duration: &str) -> Option<String> {
    let head = format!(
        "name = \"scale-{topology}-{n}\"\nduration = \"{duration}\"\nseed = 1\n[tcp]\nmss = 1000\nmax_window = 1000\n"
    );
    let body = match topology {
        "star" => format!(
            "[topology]\nkind = \"star\"\nhosts = {n}\naccess_rate = \"1Gbps\"\naccess_delay = \"1ms\"\n\
             bottleneck_rate = \"100Mbps\"\nbottleneck_delay = \"10ms\"\n\
             queue = {{ kind = \"red\", limit = 1000, min_th = 100, max_th = 300 }}\n\
             [[flows]]\ngroup = \"bulk\"\nsrc = \"h*\"\ndst = \"sink\"\nstart_spread = \"1s\"\n"
        ),
        "dumbbell" => format!(
            "[topology]\nkind = \"dumbbell\"\nhosts = 1\naccess_rate = \"10Gbps\"\naccess_delay = \"1ms\"\n\
             access_queue = {{ kind = \"droptail\", limit = 100000 }}\n\
             bottleneck_rate = \"1Gbps\"\nbottleneck_delay = \"10ms\"\n\
             queue = {{ kind = \"red\", limit = 5000, min_th = 500, max_th = 1500 }}\n\
             [[flows]]\ngroup = \"bulk\"\nsrc = \"src0\"\ndst = \"dst0\"\ncount = {n}\nstart_spread = \"1s\"\n"
        ),
        _ => return None,
    };
    Some(head + &body)
}

/// CPU time of the calling thread, seconds (`CLOCK_THREAD_CPUTIME_ID`:
/// exact to the nanosecond, unlike /proc's schedstat which advances at
/// scheduler ticks).
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// Minor page faults of this process so far (memory touched for the first
/// time).
fn minor_faults() -> u64 {
    // SAFETY: an all-zero rusage is a valid value, and getrusage writes
    // only into it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is valid and writable.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0;
    }
    ru.ru_minflt as u64
}

fn rss_kib(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// One scale point in this process: a JSON line.
fn scale_one(spec: &str, duration: &str) -> CliResult {
    let bad = || CliError::Input(format!("--scale-one: expected TOPOLOGY:N, got `{spec}`"));
    let (topo, n) = spec.split_once(':').ok_or_else(bad)?;
    let n: u64 = n.parse().map_err(|_| bad())?;
    let text = scale_scenario(topo, n, duration).ok_or_else(bad)?;
    let base_kib = rss_kib("VmRSS:");
    let (w0, c0) = (std::time::Instant::now(), thread_cpu_s());
    let setup = aqmlab::metrics::PhaseClock::start();
    let sc = Scenario::from_toml(&text, &format!("scale-{topo}-{n}"))?;
    let mut sim = Simulation::new(&sc, sc.seed);
    drop(sc);
    // `timings.setup` as `aqmlab run` records it: parsing included
    sim.setup_since(setup);
    let (setup_wall, setup_cpu) = (w0.elapsed().as_secs_f64(), thread_cpu_s() - c0);
    let (c1, f1) = (thread_cpu_s(), minor_faults());
    // the event loop ends where the progress callback sees 1.0; result
    // collection (per flow and per link, not per event) follows
    let (mut loop_end, mut loop_faults) = (c1, 0);
    let mut r = sim.run_with_progress(|f| {
        if f >= 1.0 {
            loop_end = thread_cpu_s();
            loop_faults = minor_faults() - f1;
        }
    });
    let c2 = thread_cpu_s();
    let (run_cpu, loop_cpu) = (c2 - c1, loop_end - c1);
    let (hist, dense) = sim.histogram_bytes();
    let peak_kib = rss_kib("VmHWM:");
    // as `aqmlab run` does: the simulation is freed before the writing
    crate::run::free_simulation(sim, &mut r);
    // The writing phase: every file `aqmlab run` writes, into a scratch
    // folder removed afterwards.
    let dir = std::env::temp_dir().join(format!("aqmlab-bench-scale-{}", std::process::id()));
    let write = aqmlab::metrics::PhaseClock::start();
    let mut st = aqmlab::output::Staging::new(&dir)?;
    aqmlab::output::stage_run(&r, &mut st)?;
    st.commit()?;
    let write = write.stop();
    let mut output_bytes = 0u64;
    for e in std::fs::read_dir(&dir)? {
        output_bytes += e?.metadata()?.len();
    }
    let summary_bytes = std::fs::metadata(dir.join("summary.json"))?.len();
    std::fs::remove_dir_all(&dir)?;
    let t = r.timings;
    println!(
        "{{\"flows\":{n},\"setup_wall_s\":{setup_wall},\"setup_cpu_s\":{setup_cpu},\"run_cpu_s\":{run_cpu},\"loop_cpu_s\":{loop_cpu},\"loop_faults\":{loop_faults},\"events\":{},\"peak_kib\":{peak_kib},\"base_kib\":{base_kib},\"hist_kib\":{},\"dense_ports\":{dense},\"loop_process_cpu_s\":{},\"collect_cpu_s\":{},\"write_wall_s\":{},\"write_cpu_s\":{},\"summary_bytes\":{summary_bytes},\"output_bytes\":{output_bytes},\"write_peak_kib\":{}}}",
        r.events,
        hist / 1024,
        t.event_loop.cpu_s,
        t.collect.cpu_s,
        write.wall_s,
        write.cpu_s,
        rss_kib("VmHWM:"),
    );
    Ok(())
}

fn scale(a: &BenchArgs) -> CliResult {
    let exe = std::env::current_exe()?;
    let topos: Vec<String> = if a.topology.is_empty() {
        vec!["star".into(), "dumbbell".into()]
    } else {
        a.topology.clone()
    };
    for t in &topos {
        if scale_scenario(t, 1, "1s").is_none() {
            return Err(CliError::Input(format!(
                "--topology: unknown `{t}`; allowed: star, dumbbell"
            )));
        }
    }
    println!(
        "{:<9} {:>8} {:>8} {:>12} {:>11} {:>9} {:>9} {:>10} {:>10} {:>8} {:>9} {:>8} {:>10} {:>11} {:>11} {:>10}",
        "topology",
        "flows",
        "setup s",
        "events",
        "M ev/CPU-s",
        "+results",
        "results s",
        "peak MiB",
        "KiB/flow",
        "loop s",
        "collect s",
        "write s",
        "write wall",
        "summary KiB",
        "outputs MiB",
        "+write MiB"
    );
    for t in &topos {
        let mut n = 10u64;
        while n <= a.max_flows {
            let out = Command::new(&exe)
                .args([
                    "bench",
                    "--scale-one",
                    &format!("{t}:{n}"),
                    "--duration",
                    &a.duration,
                ])
                .output()?;
            if !out.status.success() {
                println!(
                    "{t:<9} {n:>8} failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            } else {
                let v: serde_json::Value = serde_json::from_slice(&out.stdout)
                    .map_err(|e| CliError::Internal(format!("bench child output: {e}")))?;
                let f = |k: &str| v[k].as_f64().unwrap_or(0.0);
                println!(
                    "{:<9} {:>8} {:>8.3} {:>12.0} {:>11.2} {:>9.2} {:>9.3} {:>10.1} {:>10.2} {:>8.3} {:>9.3} {:>8.3} {:>10.3} {:>11.1} {:>11.1} {:>10.1}",
                    t,
                    n,
                    f("setup_cpu_s"),
                    f("events"),
                    f("events") / f("loop_cpu_s").max(1e-9) / 1e6,
                    f("events") / f("run_cpu_s").max(1e-9) / 1e6,
                    f("run_cpu_s") - f("loop_cpu_s"),
                    f("peak_kib") / 1024.0,
                    (f("peak_kib") - f("base_kib")) / n as f64,
                    f("loop_process_cpu_s"),
                    f("collect_cpu_s"),
                    f("write_cpu_s"),
                    f("write_wall_s"),
                    f("summary_bytes") / 1024.0,
                    f("output_bytes") / 1048576.0,
                    f("write_peak_kib") / 1024.0
                );
            }
            n *= 10;
        }
    }
    Ok(())
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
    if let Some(spec) = &a.scale_one {
        return scale_one(spec, &a.duration);
    }
    if a.scale {
        return scale(&a);
    }
    if a.parallel {
        let d = if a.duration == "10s" {
            "0.5s"
        } else {
            &a.duration
        };
        return crate::bench_parallel::main(&a.threads, a.runs, d);
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
