//! `aqmlab bench --parallel`: one multi-site run (four sites of 2 500 flows
//! joined by 5-20 ms links, `scenarios/bench/multi-site-10k.toml`) with 1
//! thread and with more (`--threads`, default 1,2): median wall time of
//! `--runs` repetitions, speed-up over one thread, the partition (processes,
//! lookahead, cut links, expected work and events per process) and the
//! synchronisation overhead (windows, windows per simulated second, share
//! of the processes' time spent waiting at barriers). The load average
//! before and after is printed: the figures are only as quiet as the
//! machine. Each run checks that its results equal the one-thread run's.

use crate::{CliError, CliResult};
use aqmlab::metrics::RunResult;
use aqmlab::{Scenario, Simulation};

const FILE: &str = "scenarios/bench/multi-site-10k.toml";
const TEXT: &str = include_str!("../../../scenarios/bench/multi-site-10k.toml");

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// The run's results without its wall-clock figures.
fn fingerprint(r: &RunResult) -> String {
    let mut r = r.clone();
    r.wall_seconds = 0.0;
    r.timings = Default::default();
    r.parallel = None;
    format!("{r:?}")
}

pub fn main(threads: &[usize], runs: u32, duration: &str) -> CliResult {
    if let Some(t) = threads.iter().find(|&&t| t == 0 || t > 256) {
        return Err(CliError::Input(format!(
            "--threads `{t}`: each thread count must be in 1..=256"
        )));
    }
    let set = [format!("duration=\"{duration}\"")];
    let sc = Scenario::from_toml_with(TEXT, FILE, &set)?;
    println!("{FILE}, {duration} simulated, median of {runs} run(s)");
    println!("load average before: {}", loadavg());
    println!(
        "{:>7} {:>5} {:>9} {:>8} {:>11} {:>9} {:>8} {:>10} {:>6}",
        "threads",
        "LPs",
        "wall s",
        "speedup",
        "events",
        "lookahead",
        "windows",
        "windows/s",
        "wait"
    );
    let mut base: Option<(f64, String)> = None;
    let mut seq_cpu = None;
    for &t in threads {
        let mut walls = Vec::new();
        let mut last = None;
        let mut cpu = 0.0;
        for _ in 0..runs {
            let mut sim = Simulation::with_threads(&sc, sc.seed, t);
            let c0 = aqmlab::sim::thread_cpu_seconds();
            let r = sim.run();
            cpu = aqmlab::sim::thread_cpu_seconds() - c0;
            walls.push(r.wall_seconds);
            last = Some(r);
        }
        let r = last.expect("one run at least");
        walls.sort_by(|a, b| a.total_cmp(b));
        let wall = walls[walls.len() / 2];
        let fp = fingerprint(&r);
        let b = base.get_or_insert_with(|| (wall, fp.clone()));
        if b.1 != fp {
            return Err(CliError::Internal(format!(
                "{t} threads gave results that differ from the first run's"
            )));
        }
        let p = r.parallel.as_ref();
        println!(
            "{:>7} {:>5} {:>9.2} {:>8.2} {:>11} {:>8.1}ms {:>8} {:>10.0} {:>5.0}%",
            t,
            p.map_or(1, |p| p.processes),
            wall,
            b.0 / wall,
            r.events,
            p.map_or(0.0, |p| p.lookahead_s * 1e3),
            p.map_or(0, |p| p.windows),
            p.map_or(0.0, |p| p.windows_per_sim_s),
            p.map_or(0.0, |p| p.wait_fraction * 100.0),
        );
        let seq_cpu = *seq_cpu.get_or_insert(cpu);
        match p {
            None => println!("        CPU {cpu:.2} s (the calling thread)"),
            Some(p) => {
                if let Some(n) = &p.note {
                    println!("        sequential: {n}");
                }
                for (i, x) in p.parts.iter().enumerate() {
                    println!(
                        "        LP {i}: {} nodes, expected work {:.0}, {} events, CPU {:.2} s, busy {:.2} s, waiting {:.2} s, {} packets in / {} out over cut links",
                        x.nodes, x.expected_work, x.events, x.cpu_s, x.busy_s, x.wait_s, x.cut_in, x.cut_out
                    );
                }
                let crit = p.parts.iter().map(|x| x.cpu_s).fold(0.0, f64::max);
                if crit > 0.0 {
                    println!(
                        "        one-thread CPU / busiest process's CPU: {:.2} (the speed-up with a free core per process)",
                        seq_cpu / crit
                    );
                }
            }
        }
    }
    println!("load average after: {}", loadavg());
    Ok(())
}
