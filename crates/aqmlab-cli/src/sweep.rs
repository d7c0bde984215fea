//! `aqmlab sweep FILE --out DIR [--seeds N] [--jobs J] [--set key=value]...`:
//! run every combination of the scenario's `[sweep]` axes with several seeds,
//! in parallel, and write per-run results, a table and plots.
//!
//! Output: `DIR/<label>/seed-<n>/` (the files of `aqmlab run`), `DIR/sweep.csv`
//! (one row per run), `DIR/summary.md` (means over seeds, also printed), and
//! `DIR/queue_delay.{png,svg}`, `DIR/queue_length.{png,svg}`: the sweep
//! link's queueing delay and length over time, one line per combination
//! (first seed).

use crate::progress::par_map;
use crate::{CliError, CliResult};
use aqmlab::metrics::jain;
use aqmlab::scenario::limits::{check_runs, Limits};
use aqmlab::{RunResult, Scenario, Simulation};
use clap::Args;
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Args)]
pub struct SweepArgs {
    /// Scenario file with a [sweep] table.
    pub file: PathBuf,
    /// Output directory.
    #[arg(long, short)]
    pub out: PathBuf,
    /// Seeds per combination (overrides sweep.seeds).
    #[arg(long)]
    pub seeds: Option<u64>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Override a scenario value in every combination (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Run above the default resource limits (runs, threads, samples, flows:
    /// see the README's "Errors and limits").
    #[arg(long)]
    pub allow_large: bool,
}

/// The per-run row of `sweep.csv`.
struct Row {
    label: String,
    seed: u64,
    link: String,
    kind: String,
    enqueued: u64,
    dropped: u64,
    marked: u64,
    mean_len_pkts: f64,
    mean_delay_s: f64,
    p99_delay_s: f64,
    utilization: f64,
    goodput_bps: f64,
    /// Jain's index over the TCP flows' goodputs.
    jain: f64,
    /// Mean one-way delay of the CBR flows' packets, if any.
    cbr_owd_s: Option<f64>,
    events: u64,
    wall_s: f64,
}

fn busiest_link(r: &RunResult) -> Option<String> {
    r.series
        .iter()
        .filter_map(|s| r.queue(&s.link))
        .max_by_key(|q| q.enqueued)
        .map(|q| q.link.clone())
}

fn row(label: &str, seed: u64, link: &str, r: &RunResult) -> Result<Row, CliError> {
    let q = r.queue(link).ok_or_else(|| {
        CliError::Input(format!(
            "sweep.link: no link `{link}`; links are named `a->b`"
        ))
    })?;
    let l = r.link(link).expect("queue and link share names");
    let gp: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps).collect();
    let tcp: Vec<f64> = r
        .flows
        .iter()
        .filter(|f| f.cc != "cbr")
        .map(|f| f.goodput_bps)
        .collect();
    let cbr: Vec<f64> = r
        .flows
        .iter()
        .filter(|f| f.cc == "cbr")
        .filter_map(|f| f.mean_owd_s)
        .collect();
    Ok(Row {
        label: label.to_string(),
        seed,
        link: link.to_string(),
        kind: q.kind.clone(),
        enqueued: q.enqueued,
        dropped: q.dropped,
        marked: q.marked,
        mean_len_pkts: q.mean_len_pkts,
        mean_delay_s: q.mean_delay_s,
        p99_delay_s: q.p99_delay_s,
        utilization: l.utilization,
        goodput_bps: gp.iter().sum(),
        jain: jain(&tcp),
        cbr_owd_s: (!cbr.is_empty()).then(|| cbr.iter().sum::<f64>() / cbr.len() as f64),
        events: r.events,
        wall_s: r.wall_seconds,
    })
}

pub fn main(a: SweepArgs) -> CliResult {
    let text = aqmlab::scenario::read_file(&a.file)?;
    let file = a.file.display().to_string();
    let points = Scenario::sweep_from_toml(&text, &file, &a.set)?;
    let spec = points[0].scenario.sweep.clone().expect("sweep present");
    let seeds = a.seeds.unwrap_or(spec.seeds);
    if seeds == 0 {
        return Err(CliError::Input("--seeds must be at least 1".into()));
    }
    let lim = if a.allow_large {
        Limits::NONE
    } else {
        Limits::DEFAULT
    };
    let seeds_key = if a.seeds.is_some() {
        "--seeds"
    } else {
        "sweep.seeds"
    };
    check_runs(
        points.len() as u64,
        seeds,
        seeds_key,
        a.jobs.map(|j| j as u64),
        &lim,
    )
    .map_err(|(k, m)| CliError::Input(format!("{file}: `{k}`: {m}")))?;
    if !a.allow_large {
        for p in &points {
            crate::check_limits(&p.scenario, &format!("{file} [sweep point {}]", p.label))?;
        }
    }
    if let Some(l) = &spec.link {
        let names: Vec<String> = points[0]
            .scenario
            .links
            .iter()
            .flat_map(|k| [format!("{}->{}", k.a, k.b), format!("{}->{}", k.b, k.a)])
            .collect();
        if !names.contains(l) {
            return Err(CliError::Input(format!(
                "{file}: `sweep.link`: no link direction `{l}`; allowed: {}",
                names.join(", ")
            )));
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.jobs.unwrap_or(0))
        .build()
        .map_err(|e| CliError::Internal(e.to_string()))?;
    let jobs: Vec<(usize, u64)> = (0..points.len())
        .flat_map(|i| (1..=seeds).map(move |s| (i, s)))
        .collect();
    let wall = std::time::Instant::now();
    let results: Vec<RunResult> = pool.install(|| {
        par_map(
            &format!("sweep {} runs", jobs.len()),
            &jobs,
            |&(i, seed)| Simulation::new(&points[i].scenario, seed).run(),
        )
    });
    let total_wall = wall.elapsed().as_secs_f64();
    for r in &results {
        if !r.conservation.holds() {
            return Err(CliError::Internal(format!(
                "packet conservation violated: {:?}",
                r.conservation
            )));
        }
    }
    let link = match &spec.link {
        Some(l) => l.clone(),
        None => busiest_link(&results[0]).ok_or_else(|| {
            CliError::Input("sweep: no monitored queue to report; set sweep.link = \"a->b\"".into())
        })?,
    };
    let rows: Vec<Row> = jobs
        .iter()
        .zip(&results)
        .map(|(&(i, seed), r)| row(&points[i].label, seed, &link, r))
        .collect::<Result<_, _>>()?;
    // outputs
    for ((i, seed), r) in jobs.iter().zip(&results) {
        aqmlab::output::write_run(
            r,
            &a.out.join(&points[*i].label).join(format!("seed-{seed}")),
        )?;
    }
    let mut csv = String::from(
        "label,seed,link,kind,enqueued,dropped,marked,drop_rate,mark_rate,mean_len_pkts,mean_delay_s,p99_delay_s,utilization,goodput_bps,jain_tcp,cbr_owd_s,events,wall_s,events_per_s\n",
    );
    for r in &rows {
        let enq = r.enqueued.max(1) as f64;
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.label,
            r.seed,
            r.link,
            r.kind,
            r.enqueued,
            r.dropped,
            r.marked,
            r.dropped as f64 / (r.enqueued + r.dropped).max(1) as f64,
            r.marked as f64 / enq,
            r.mean_len_pkts,
            r.mean_delay_s,
            r.p99_delay_s,
            r.utilization,
            r.goodput_bps,
            r.jain,
            r.cbr_owd_s.map(|x| x.to_string()).unwrap_or_default(),
            r.events,
            r.wall_s,
            r.events as f64 / r.wall_s.max(1e-9)
        );
    }
    std::fs::write(a.out.join("sweep.csv"), csv)?;
    // summary: mean over seeds per label
    let mut md = format!(
        "# Sweep: {}\n\n{} combinations × {} seeds = {} runs in {:.1} s wall. Queue reported: `{}` (means over seeds).\n\n",
        points[0].scenario.name,
        points.len(),
        seeds,
        rows.len(),
        total_wall,
        link
    );
    md.push_str("| combination | kind | mean delay (ms) | p99 delay (ms) | mean queue (pkts) | drop rate | mark rate | utilization | goodput (Mbit/s) | Jain (TCP) | CBR one-way delay (ms) | M events/s |\n");
    md.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for p in &points {
        let rs: Vec<&Row> = rows.iter().filter(|r| r.label == p.label).collect();
        let n = rs.len() as f64;
        let m = |f: &dyn Fn(&Row) -> f64| rs.iter().map(|r| f(r)).sum::<f64>() / n;
        let _ = writeln!(
            md,
            "| {} | {} | {:.2} | {:.2} | {:.1} | {:.4} | {:.4} | {:.3} | {:.2} | {:.3} | {} | {:.2} |",
            p.label,
            rs[0].kind,
            m(&|r| r.mean_delay_s * 1e3),
            m(&|r| r.p99_delay_s * 1e3),
            m(&|r| r.mean_len_pkts),
            m(&|r| r.dropped as f64 / (r.enqueued + r.dropped).max(1) as f64),
            m(&|r| r.marked as f64 / r.enqueued.max(1) as f64),
            m(&|r| r.utilization),
            m(&|r| r.goodput_bps / 1e6),
            m(&|r| r.jain),
            if rs.iter().all(|r| r.cbr_owd_s.is_some()) {
                format!("{:.2}", m(&|r| r.cbr_owd_s.unwrap_or(0.0) * 1e3))
            } else {
                "—".into()
            },
            m(&|r| r.events as f64 / r.wall_s.max(1e-9) / 1e6),
        );
    }
    print!("{md}");
    std::io::Write::flush(&mut std::io::stdout())?;
    std::fs::write(a.out.join("summary.md"), &md)?;
    // plots: first seed of each combination
    let first: Vec<(&str, &RunResult)> = jobs
        .iter()
        .zip(&results)
        .filter(|((_, s), _)| *s == 1)
        .map(|((i, _), r)| (points[*i].label.as_str(), r))
        .collect();
    let series =
        |f: &dyn Fn(&aqmlab::metrics::QueueSample) -> f64| -> Vec<(String, Vec<(f64, f64)>)> {
            first
                .iter()
                .map(|(label, r)| {
                    let pts = r
                        .series
                        .iter()
                        .find(|s| s.link == link)
                        .map(|s| s.samples.iter().map(|x| (x.time_s, f(x))).collect())
                        .unwrap_or_default();
                    (label.to_string(), pts)
                })
                .collect()
        };
    let name = &points[0].scenario.name;
    crate::plot::lines(
        &crate::plot::Lines {
            title: format!("Queueing delay at {link} — {name}"),
            subtitle: "sojourn time of the last packet dequeued at each sample (0 when empty); seed 1 of each combination".into(),
            x_desc: "time (s)".into(),
            y_desc: "queueing delay (ms)".into(),
            series: series(&|x| x.delay_s * 1e3),
            panels: true,
        },
        &a.out.join("queue_delay"),
    )?;
    crate::plot::lines(
        &crate::plot::Lines {
            title: format!("Queue length at {link} — {name}"),
            subtitle: "instantaneous queue length at each sample; seed 1 of each combination"
                .into(),
            x_desc: "time (s)".into(),
            y_desc: "queue length (packets)".into(),
            series: series(&|x| x.len_pkts as f64),
            panels: true,
        },
        &a.out.join("queue_length"),
    )?;
    eprintln!(
        "sweep: results, sweep.csv, summary.md and plots in {}",
        a.out.display()
    );
    Ok(())
}
