//! Reproduction of Fang, Youn, Choo, Yu, "Evaluation of Proactive Congestion
//! Control on RED Gateway" (PDCS 2001), Tables I–IV.
//!
//! Runs cases B1, B2, B3 (five New Reno senders through a RED gateway, input
//! links at 1×, 2×, 4× bandwidth) and the ten-sender MaxP sweep of Table IV,
//! each with seeds `1..=N`, all runs in parallel (rayon). Aggregates as the
//! paper does ("Each of the three cases are run ten times and the numbers are
//! added"), prints each table with the paper's number beside aqmlab's, and
//! writes `report.md`, `tables.csv` and the plots to the output directory.
//! B1 is also rerun with parameters the paper does not give set to other
//! values of the time (`SENSITIVITY`), for the report's discussion.
//!
//! Scaling: the paper's B-case numbers are sums over 10 runs of 30 s; with
//! `N ≠ 10` seeds our sums are scaled by `10/N`. The paper's Table IV Usage row
//! equals Goodput·1000 / (150 s · 11298.1 packets/s) in every column, i.e. its
//! sums cover 150 s of simulated time (e.g. 5 runs of 30 s); our Table IV sums
//! are scaled by `5/N` to match. Usage itself is never scaled. Per-run means
//! and standard deviations are written to `report.md` and `tables.csv`.

use super::common::{check_conservation, md_rows, text_table};
use super::paper::Paper;
use super::stats::Summary;
use super::table::{write_csv, TableRow};
use super::verdict::{self, Tol};
use crate::plot::{self, BarPanel, GroupedBars};
use crate::progress::par_map;
use crate::{CliError, CliResult};
use aqmlab::{RunResult, Scenario, Simulation};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

const B1_TOML: &str = include_str!("../../../../scenarios/papers/red-gateway/b1.toml");
const B2_TOML: &str = include_str!("../../../../scenarios/papers/red-gateway/b2.toml");
const B3_TOML: &str = include_str!("../../../../scenarios/papers/red-gateway/b3.toml");
const T4_TOML: &str = include_str!("../../../../scenarios/papers/red-gateway/table4.toml");

/// The five-sender cases: (name, scenario file, text).
const CASES: [(&str, &str, &str); 3] = [
    ("B1", "scenarios/papers/red-gateway/b1.toml", B1_TOML),
    ("B2", "scenarios/papers/red-gateway/b2.toml", B2_TOML),
    ("B3", "scenarios/papers/red-gateway/b3.toml", B3_TOML),
];
const T4_FILE: &str = "scenarios/papers/red-gateway/table4.toml";
/// Table IV's MaxP values, in the paper's column order.
const MAX_P: [f64; 5] = [0.1, 0.08, 0.06, 0.04, 0.02];
const MAX_P_OVERRIDE: &str = "links.bottleneck.queue_ab.max_p";
/// Variants of B1 for the sensitivity check: parameters the paper does not
/// give, set to other values of the time. (label, overrides)
const SENSITIVITY: [(&str, &[&str]); 7] = [
    (
        "delayed-ACK timeout 200 ms",
        &["tcp.delack_timeout=\"200ms\""],
    ),
    ("no delayed ACKs", &["tcp.delayed_ack=false"]),
    ("minimum RTO 1 s (RFC 2988)", &["tcp.min_rto=\"1s\""]),
    ("initial window 2 segments", &["tcp.init_cwnd=2"]),
    (
        "RED `wait` on (ns-2 default)",
        &["links.bottleneck.queue_ab.wait=true"],
    ),
    (
        "RED mean_pktsize 572 B",
        &["links.bottleneck.queue_ab.mean_pktsize=572"],
    ),
    (
        "all senders start at t = 0",
        &[
            "flows.c1.start_spread=\"0s\"",
            "flows.c2.start_spread=\"0s\"",
            "flows.c3.start_spread=\"0s\"",
            "flows.c4.start_spread=\"0s\"",
            "flows.c5.start_spread=\"0s\"",
        ],
    ),
];
/// Index of the first sensitivity configuration.
const SENS0: usize = CASES.len() + MAX_P.len();
/// The monitored gateway queue (gateway → sink).
const BOTTLENECK: &str = "gw->sink";

/// Simulated seconds per run (paper §4.2).
const RUN_S: f64 = 30.0;
/// Bottleneck capacity in 572-byte packets per second (paper §4.2:
/// 51.7 Mbit/s = 6.4625 MB/s, 6.4625e6 / 572 = 11298.1).
const CAPACITY_PPS: f64 = 51.7e6 / 8.0 / 572.0;
/// Runs summed in the paper's Tables I–III.
const PAPER_RUNS: f64 = 10.0;
/// Simulated seconds summed in the paper's Table IV, implied by its Usage row.
const PAPER_T4_SECONDS: f64 = 150.0;

// ---- the paper's numbers: scenarios/papers/red-gateway/paper.toml --------

const PAPER_TOML: &str = include_str!("../../../../scenarios/papers/red-gateway/paper.toml");

/// The paper's tables as printed (rows B1..B3 or MaxP as in [`MAX_P`]).
struct Numbers {
    /// Table I, retransmission timeouts: C1..C5, Total.
    t1: [[f64; 6]; 3],
    /// Table II, packets dropped: C1..C5, Total.
    t2: [[f64; 6]; 3],
    /// Table III, segments received (thousands): C1..C5.
    t3: [[f64; 5]; 3],
    /// Table III, usage.
    t3_usage: [f64; 3],
    /// Table IV, per MaxP: goodput (thousands), usage, drops, timeouts.
    t4_goodput: [f64; 5],
    t4_usage: [f64; 5],
    t4_drops: [f64; 5],
    t4_rto: [f64; 5],
}

impl Numbers {
    fn load() -> CliResult<Numbers> {
        let p = Paper::parse(PAPER_TOML, "scenarios/papers/red-gateway/paper.toml")?;
        let v = |t: &str, r: &str, c: &str| p.get(t, r, c).map(|x| x.value);
        let cases = ["B1", "B2", "B3"];
        let senders = ["C1", "C2", "C3", "C4", "C5", "Total"];
        let mut n = Numbers {
            t1: [[0.0; 6]; 3],
            t2: [[0.0; 6]; 3],
            t3: [[0.0; 5]; 3],
            t3_usage: [0.0; 3],
            t4_goodput: [0.0; 5],
            t4_usage: [0.0; 5],
            t4_drops: [0.0; 5],
            t4_rto: [0.0; 5],
        };
        for (ci, case) in cases.iter().enumerate() {
            for (si, snd) in senders.iter().enumerate() {
                n.t1[ci][si] = v("Table I", case, snd)?;
                n.t2[ci][si] = v("Table II", case, snd)?;
                if si < 5 {
                    n.t3[ci][si] = v("Table III", case, snd)?;
                }
            }
            n.t3_usage[ci] = v("Table III", case, "usage")?;
        }
        for (k, mp) in MAX_P.iter().enumerate() {
            let row = format!("MaxP={mp}");
            n.t4_goodput[k] = v("Table IV", &row, "goodput_k")?;
            n.t4_usage[k] = v("Table IV", &row, "usage")?;
            n.t4_drops[k] = v("Table IV", &row, "drops")?;
            n.t4_rto[k] = v("Table IV", &row, "rto")?;
        }
        Ok(n)
    }
}

// ---- runs ---------------------------------------------------------------

/// One configuration: a scenario with its overrides.
struct Config {
    /// "B1", "B2", "B3" or "MaxP=0.1" ...
    key: String,
    file: &'static str,
    overrides: Vec<String>,
    sc: Scenario,
    /// Factor that scales a sum over our runs to the paper's amount of time.
    scale: f64,
}

/// What one run contributes to the tables.
#[derive(Clone, Debug)]
struct RunSummary {
    /// Flow groups (senders), in scenario order.
    senders: Vec<String>,
    rto: Vec<f64>,
    /// Packets of each sender dropped (all at the gateway; see `other_drops`).
    drops: Vec<f64>,
    segs: Vec<f64>,
    fast_rtx: Vec<f64>,
    early: f64,
    forced: f64,
    overflow: f64,
    /// Drops anywhere but the gateway's ports (expected 0).
    other_drops: u64,
    /// Sum of the senders' drops minus the drops at the gateway's ports.
    drop_mismatch: i64,
    util: f64,
    mean_q: f64,
    mean_delay_s: f64,
    events: u64,
}

fn summarize(r: &RunResult) -> CliResult<RunSummary> {
    check_conservation(r)?;
    let mut s = RunSummary {
        senders: Vec::new(),
        rto: Vec::new(),
        drops: Vec::new(),
        segs: Vec::new(),
        fast_rtx: Vec::new(),
        early: 0.0,
        forced: 0.0,
        overflow: 0.0,
        other_drops: 0,
        drop_mismatch: 0,
        util: 0.0,
        mean_q: 0.0,
        mean_delay_s: 0.0,
        events: r.events,
    };
    for f in &r.flows {
        let i = match s.senders.iter().position(|g| *g == f.group) {
            Some(i) => i,
            None => {
                s.senders.push(f.group.clone());
                for v in [&mut s.rto, &mut s.drops, &mut s.segs, &mut s.fast_rtx] {
                    v.push(0.0);
                }
                s.senders.len() - 1
            }
        };
        s.rto[i] += f.timeouts as f64;
        s.drops[i] += f.drops as f64;
        s.segs[i] += f.segments_delivered as f64;
        s.fast_rtx[i] += f.fast_retransmits as f64;
    }
    let mut gw_drops = 0u64;
    for q in &r.queues {
        if q.link.starts_with("gw->") {
            gw_drops += q.dropped;
        } else {
            s.other_drops += q.dropped;
        }
    }
    s.other_drops += r.links.iter().map(|l| l.lost).sum::<u64>();
    let flow_drops: u64 = r.flows.iter().map(|f| f.drops).sum();
    s.drop_mismatch = flow_drops as i64 - gw_drops as i64 - s.other_drops as i64;
    let q = r
        .queue(BOTTLENECK)
        .ok_or_else(|| CliError::Internal(format!("{}: no queue `{BOTTLENECK}`", r.scenario)))?;
    s.early = q.dropped_early as f64;
    s.forced = q.dropped_forced as f64;
    s.overflow = q.dropped_overflow as f64;
    s.mean_q = q.mean_len_pkts;
    s.mean_delay_s = q.mean_delay_s;
    s.util = r.link(BOTTLENECK).map(|l| l.utilization).unwrap_or(0.0);
    Ok(s)
}

/// The runs of one configuration.
struct Agg<'a> {
    runs: Vec<&'a RunSummary>,
}

impl Agg<'_> {
    fn n(&self) -> f64 {
        self.runs.len() as f64
    }
    fn values(&self, f: &impl Fn(&RunSummary) -> f64) -> Vec<f64> {
        self.runs.iter().map(|r| f(r)).collect()
    }
    fn sum(&self, f: impl Fn(&RunSummary) -> f64) -> f64 {
        self.values(&f).iter().sum()
    }
    /// Per-run mean and sample standard deviation.
    fn mean_sd(&self, f: impl Fn(&RunSummary) -> f64) -> (f64, f64) {
        let s = Summary::of(self.values(&f));
        (if s.n == 0 { 0.0 } else { s.mean }, s.sd)
    }
}

/// One cell of a table: the paper's number beside ours.
#[derive(Clone, Debug)]
struct Cell {
    table: &'static str,
    case: String,
    sender: String,
    metric: &'static str,
    paper: f64,
    /// Our number in the paper's units (sums scaled to the paper's time).
    ours: f64,
    per_run_mean: f64,
    per_run_sd: f64,
    /// How many of our runs `ours` adds up (1 for a mean).
    runs_summed: f64,
    /// Decimals to print `ours` with.
    decimals: usize,
}

/// What a cell shows: where it sits, the paper's number, and our units.
struct Spec<'a> {
    table: &'static str,
    case: &'a str,
    sender: &'a str,
    metric: &'static str,
    paper: f64,
    /// Divide our sums by this (1000 for "thousands").
    unit: f64,
    decimals: usize,
}

/// A cell from a per-run value `f`: the sum over runs times `scale`.
fn cell(sp: Spec, agg: &Agg, scale: f64, f: impl Fn(&RunSummary) -> f64) -> Cell {
    let (m, sd) = agg.mean_sd(&f);
    Cell {
        table: sp.table,
        case: sp.case.to_string(),
        sender: sp.sender.to_string(),
        metric: sp.metric,
        paper: sp.paper,
        ours: agg.sum(&f) * scale / sp.unit,
        per_run_mean: m / sp.unit,
        per_run_sd: sd / sp.unit,
        runs_summed: agg.n() * scale,
        decimals: sp.decimals,
    }
}

fn usage_cell(table: &'static str, case: &str, paper: f64, agg: &Agg) -> Cell {
    let per_run = |r: &RunSummary| r.segs.iter().sum::<f64>() / (RUN_S * CAPACITY_PPS);
    let (m, sd) = agg.mean_sd(per_run);
    Cell {
        table,
        case: case.to_string(),
        sender: "all".into(),
        metric: "usage",
        paper,
        ours: agg.sum(per_run) / agg.n(),
        per_run_mean: m,
        per_run_sd: sd,
        runs_summed: 1.0,
        decimals: 3,
    }
}

fn fmt(v: f64, decimals: usize) -> String {
    if decimals == 0 && (v - v.round()).abs() > 1e-9 {
        format!("{v:.1}")
    } else {
        format!("{v:.decimals$}")
    }
}

fn fmt_paper(c: &Cell) -> String {
    match c.metric {
        "usage" => format!("{:.2}", c.paper),
        _ => format!("{:.0}", c.paper),
    }
}

// ---- the command ----------------------------------------------------------

pub fn run(seeds: u64, out: &Path) -> CliResult<Vec<TableRow>> {
    let nums = Numbers::load()?;
    let wall = Instant::now();
    let n = seeds as f64;
    let mut configs = Vec::new();
    for (key, file, text) in CASES {
        configs.push(Config {
            key: key.to_string(),
            file,
            overrides: vec![],
            sc: parse(text, file, &[])?,
            scale: PAPER_RUNS / n,
        });
    }
    for mp in MAX_P {
        let ov = vec![format!("{MAX_P_OVERRIDE}={mp}")];
        configs.push(Config {
            key: format!("MaxP={mp}"),
            file: T4_FILE,
            sc: parse(T4_TOML, T4_FILE, &ov)?,
            overrides: ov,
            scale: PAPER_T4_SECONDS / RUN_S / n,
        });
    }
    for (label, ov) in SENSITIVITY {
        let ov: Vec<String> = ov.iter().map(|o| o.to_string()).collect();
        configs.push(Config {
            key: format!("B1, {label}"),
            file: CASES[0].1,
            sc: parse(B1_TOML, CASES[0].1, &ov)?,
            overrides: ov,
            scale: PAPER_RUNS / n,
        });
    }
    for c in &configs {
        if (c.sc.duration.0 as f64 / 1e9 - RUN_S).abs() > 1e-9 {
            return Err(CliError::Internal(format!(
                "{}: duration must be {RUN_S} s as in the paper",
                c.file
            )));
        }
    }
    std::fs::create_dir_all(out).map_err(|e| {
        CliError::Input(format!(
            "cannot create output directory {}: {e}",
            out.display()
        ))
    })?;

    // All runs, in parallel; results come back in job order.
    let jobs: Vec<(usize, u64)> = (0..configs.len())
        .flat_map(|c| (1..=seeds).map(move |s| (c, s)))
        .collect();
    let results: Vec<CliResult<RunSummary>> = par_map(
        &format!("red-gateway: {} runs", jobs.len()),
        &jobs,
        |&(c, seed)| summarize(&Simulation::new(&configs[c].sc, seed).run()),
    );
    let results: Vec<RunSummary> = results.into_iter().collect::<CliResult<_>>()?;
    let events: u64 = results.iter().map(|r| r.events).sum();
    let by_config: Vec<Agg> = (0..configs.len())
        .map(|c| Agg {
            runs: jobs
                .iter()
                .zip(&results)
                .filter(|((ci, _), _)| *ci == c)
                .map(|(_, r)| r)
                .collect(),
        })
        .collect();

    let cells = build_cells(&configs, &by_config, &nums);
    let stdout_tables = print_tables(&cells, seeds);
    print!("{stdout_tables}");
    print!("{}", print_sensitivity(&configs, &by_config, seeds, &nums));

    // One B1 run (seed 1) again with 1 ms queue sampling for the plots.
    // Sampling only reads the queues, so the run is the same as the table's.
    let b1 = &configs[0];
    let sc = parse(B1_TOML, b1.file, &["output.sample_interval=\"1ms\"".into()])?;
    let r1 = Simulation::new(&sc, 1).run();
    let same_as_table = by_config[0]
        .runs
        .first()
        .map(|t| {
            let s = summarize(&r1).ok();
            s.is_some_and(|s| s.segs == t.segs && s.drops == t.drops && s.rto == t.rto)
        })
        .unwrap_or(false);
    plot::queue_series(&r1, &out.join("queue_b1_seed1"))?;
    plot::queue_series_window(&r1, &out.join("queue_b1_seed1_zoom"), 10.0, 12.0)?;
    plot_bars(&cells, seeds, out)?;

    let rows = table_rows(&cells, seeds);
    write_csv(&rows, &out.join("tables.csv"))?;
    let report = report(
        &configs,
        &by_config,
        &cells,
        &nums,
        seeds,
        &r1,
        same_as_table,
    );
    aqmlab::output::write_atomic(&out.join("report.md"), report.as_bytes())?;

    let wall = wall.elapsed().as_secs_f64();
    println!(
        "{} runs ({} seeds × {} configurations, {:.1} M events) in {wall:.1} s wall on {} threads; \
         report, tables.csv and plots in {}",
        jobs.len(),
        seeds,
        configs.len(),
        events as f64 / 1e6,
        rayon::current_num_threads(),
        out.display()
    );
    Ok(rows)
}

fn parse(text: &str, file: &str, overrides: &[String]) -> CliResult<Scenario> {
    // The files are compiled into the binary: an error in them is ours.
    Scenario::from_toml_with(text, file, overrides)
        .map_err(|e| CliError::Internal(format!("built-in scenario: {e}")))
}

fn build_cells(configs: &[Config], aggs: &[Agg], nums: &Numbers) -> Vec<Cell> {
    let mut cells = Vec::new();
    // Tables I–III: per sender C1..C5, then a Total (I, II) or Usage (III).
    type PerSender = fn(&RunSummary) -> &[f64];
    let tables: [(&'static str, &'static str, PerSender, f64, usize); 3] = [
        ("I", "rto", |r| &r.rto, 1.0, 0),
        ("II", "drops", |r| &r.drops, 1.0, 0),
        ("III", "segments_k", |r| &r.segs, 1000.0, 1),
    ];
    for (table, metric, values, unit, decimals) in tables {
        for (ci, (case, _, _)) in CASES.iter().enumerate() {
            let (agg, scale) = (&aggs[ci], configs[ci].scale);
            let paper: &[f64] = match table {
                "I" => &nums.t1[ci],
                "II" => &nums.t2[ci],
                _ => &nums.t3[ci],
            };
            for (i, &p) in paper.iter().enumerate().take(5) {
                let sender = format!("C{}", i + 1);
                let sp = Spec {
                    table,
                    case,
                    sender: &sender,
                    metric,
                    paper: p,
                    unit,
                    decimals,
                };
                cells.push(cell(sp, agg, scale, |r| values(r)[i]));
            }
            if table == "III" {
                cells.push(usage_cell(table, case, nums.t3_usage[ci], agg));
            } else {
                let sp = Spec {
                    table,
                    case,
                    sender: "Total",
                    metric,
                    paper: paper[5],
                    unit,
                    decimals,
                };
                cells.push(cell(sp, agg, scale, |r| values(r).iter().sum()));
            }
        }
    }
    // Table IV: totals over the ten senders, per MaxP.
    for (k, mp) in MAX_P.iter().enumerate() {
        let ci = CASES.len() + k;
        let (agg, scale) = (&aggs[ci], configs[ci].scale);
        let case = format!("MaxP={mp}");
        let spec = |metric, paper, unit, decimals| Spec {
            table: "IV",
            case: &case,
            sender: "all",
            metric,
            paper,
            unit,
            decimals,
        };
        cells.push(cell(
            spec("goodput_k", nums.t4_goodput[k], 1000.0, 1),
            agg,
            scale,
            |r| r.segs.iter().sum(),
        ));
        cells.push(usage_cell("IV", &case, nums.t4_usage[k], agg));
        cells.push(cell(
            spec("drops", nums.t4_drops[k], 1.0, 0),
            agg,
            scale,
            |r| r.drops.iter().sum(),
        ));
        cells.push(cell(spec("rto", nums.t4_rto[k], 1.0, 0), agg, scale, |r| {
            r.rto.iter().sum()
        }));
    }
    cells
}

fn find<'a>(cells: &'a [Cell], table: &str, case: &str, sender: &str, metric: &str) -> &'a Cell {
    cells
        .iter()
        .find(|c| c.table == table && c.case == case && c.sender == sender && c.metric == metric)
        .expect("cell built")
}

/// A plain-text table: a header row and rows of cells, right-aligned.
fn pair(c: &Cell) -> String {
    format!("{} / {}", fmt_paper(c), fmt(c.ours, c.decimals))
}

fn print_tables(cells: &[Cell], seeds: u64) -> String {
    let mut s = String::new();
    let sums = if seeds == 10 {
        "sums over 10 runs".to_string()
    } else {
        format!("sums over {seeds} runs scaled by 10/{seeds} to the paper's 10 runs")
    };
    let senders: Vec<String> = (1..=5).map(|i| format!("C{i}")).collect();
    let cases: Vec<&str> = CASES.iter().map(|c| c.0).collect();
    let _ = writeln!(
        s,
        "Fang, Youn, Choo, Yu (PDCS 2001): RED gateway with New Reno senders. \
         Every cell: paper / aqmlab."
    );
    let mut wide = |title: String, metric: &str, table: &str, last: (&str, &str)| {
        let mut head = vec!["Case".to_string()];
        head.extend(senders.iter().cloned());
        head.push(last.0.to_string());
        let rows: Vec<Vec<String>> = cases
            .iter()
            .map(|case| {
                let mut r = vec![case.to_string()];
                for snd in &senders {
                    r.push(pair(find(cells, table, case, snd, metric)));
                }
                let (lsnd, lmetric) = if last.1 == "usage" {
                    ("all", "usage")
                } else {
                    ("Total", metric)
                };
                r.push(pair(find(cells, table, case, lsnd, lmetric)));
                r
            })
            .collect();
        let _ = writeln!(s, "\n{title}");
        s.push_str(&text_table(&head, &rows));
    };
    wide(
        format!("Table I. Total number of retransmission timeouts ({sums})"),
        "rto",
        "I",
        ("Total", "rto"),
    );
    wide(
        format!(
            "Table II. Total number of packets dropped at the gateway ({sums}; \
             aqmlab in packets, paper as printed — its text says \"in thousands\")"
        ),
        "drops",
        "II",
        ("Total", "drops"),
    );
    wide(
        format!(
            "Table III. Total number of segments received, thousands ({sums}); \
             Usage = segments / (runs × 30 s × 11298.1 pkt/s)"
        ),
        "segments_k",
        "III",
        ("Usage", "usage"),
    );
    let t4 = if seeds == 5 {
        "sums over 5 runs = 150 s".to_string()
    } else {
        format!(
            "sums over {seeds} runs scaled by 5/{seeds} to 150 s, the time implied by \
             the paper's Usage row"
        )
    };
    let _ = writeln!(
        s,
        "\nTable IV. Ten senders (8 × 103.3 Mbit/s 1 ms, 2 × 31.0 Mbit/s 16 ms), \
         by MaxP ({t4})"
    );
    let mut head = vec!["MaxP".to_string()];
    head.extend(MAX_P.iter().map(|m| m.to_string()));
    let rows: Vec<Vec<String>> = [
        ("Goodput (k)", "goodput_k"),
        ("Usage", "usage"),
        ("Drops", "drops"),
        ("RTO", "rto"),
    ]
    .iter()
    .map(|(name, metric)| {
        let mut r = vec![name.to_string()];
        for mp in MAX_P {
            r.push(pair(find(
                cells,
                "IV",
                &format!("MaxP={mp}"),
                "all",
                metric,
            )));
        }
        r
    })
    .collect();
    s.push_str(&text_table(&head, &rows));
    s
}

/// The B1 sensitivity check: the baseline and each variant, with the paper's
/// B1 row for reference. Returns (header, rows).
fn sensitivity_rows(
    configs: &[Config],
    aggs: &[Agg],
    nums: &Numbers,
) -> (Vec<String>, Vec<Vec<String>>) {
    let head: Vec<String> = [
        "B1 variant",
        "Usage",
        "RTO",
        "Drops",
        "C1–C4 segments (k)",
        "C5 segments (k)",
        "Overflow share of drops",
    ]
    .iter()
    .map(|x| x.to_string())
    .collect();
    let mut rows = vec![vec![
        "paper".to_string(),
        format!("{:.2}", nums.t3_usage[0]),
        format!("{:.0}", nums.t1[0][5]),
        format!("{:.0}", nums.t2[0][5]),
        format!(
            "{:.0}–{:.0}",
            nums.t3[0][..4]
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min),
            nums.t3[0][..4].iter().copied().fold(0.0, f64::max)
        ),
        format!("{:.0}", nums.t3[0][4]),
        "—".to_string(),
    ]];
    let idx = std::iter::once(0).chain(SENS0..configs.len());
    for i in idx {
        let (c, a) = (&configs[i], &aggs[i]);
        let usage = a.sum(|r| r.segs.iter().sum::<f64>()) / (a.n() * RUN_S * CAPACITY_PPS);
        let per_sender: Vec<f64> = (0..4)
            .map(|k| a.sum(|r| r.segs[k]) * c.scale / 1000.0)
            .collect();
        let lo = per_sender.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = per_sender.iter().copied().fold(0.0, f64::max);
        let drops = a.sum(|r| r.drops.iter().sum());
        let over = a.sum(|r| r.overflow);
        rows.push(vec![
            if i == 0 {
                "aqmlab, as pinned in b1.toml".to_string()
            } else {
                format!("aqmlab, {}", c.key.trim_start_matches("B1, "))
            },
            format!("{usage:.3}"),
            fmt(a.sum(|r| r.rto.iter().sum()) * c.scale, 0),
            fmt(drops * c.scale, 0),
            format!("{lo:.0}–{hi:.0}"),
            format!("{:.1}", a.sum(|r| r.segs[4]) * c.scale / 1000.0),
            format!("{:.0}%", 100.0 * over / drops.max(1.0)),
        ]);
    }
    (head, rows)
}

fn print_sensitivity(configs: &[Config], aggs: &[Agg], seeds: u64, nums: &Numbers) -> String {
    let (head, rows) = sensitivity_rows(configs, aggs, nums);
    let mut s = format!(
        "\nSensitivity of B1 to parameters the paper does not give ({}; \
         RTO, Drops and segments are sums as in Tables I–III)\n",
        if seeds == 10 {
            "10 runs each".to_string()
        } else {
            format!("{seeds} runs each, sums scaled by 10/{seeds}")
        }
    );
    s.push_str(&text_table(&head, &rows));
    s
}

/// The cells in the long format, laid out as the paper's tables: Tables
/// I–III rows are cases and columns senders (plus Total or usage), Table IV
/// rows are MaxP values and columns the metrics. A sum over k of our runs
/// (k = 10 for the paper's ten runs, 5 for Table IV's 150 s) has the
/// per-run sd times √k.
fn table_rows(cells: &[Cell], seeds: u64) -> Vec<TableRow> {
    cells
        .iter()
        .map(|c| {
            let unit = match (c.table, c.metric) {
                (_, "usage") => "fraction of capacity, mean per run",
                ("IV", "goodput_k") => "thousand segments, over 150 s",
                ("IV", "drops") => "drops, over 150 s",
                ("IV", _) => "timeouts, over 150 s",
                (_, "rto") => "timeouts, sum of 10 runs",
                (_, "drops") => "drops, sum of 10 runs",
                _ => "thousand segments, sum of 10 runs",
            };
            let column = match (c.table, c.metric) {
                ("IV", m) => m.to_string(),
                (_, "usage") => "usage".into(),
                _ => c.sender.clone(),
            };
            TableRow::new(
                format!("Table {}", c.table),
                &c.case,
                column,
                unit,
                Some(c.paper),
                c.ours,
                c.per_run_sd * c.runs_summed.sqrt(),
                seeds,
            )
        })
        .collect()
}

fn plot_bars(cells: &[Cell], seeds: u64, out: &Path) -> CliResult {
    let senders: Vec<String> = (1..=5).map(|i| format!("C{i}")).collect();
    let ours_label = if seeds == 10 {
        "aqmlab (10 runs)".to_string()
    } else {
        format!("aqmlab ({seeds} runs × 10/{seeds})")
    };
    let panels = |table: &str, metric: &str| -> Vec<BarPanel> {
        CASES
            .iter()
            .map(|(case, _, _)| {
                let cs: Vec<&Cell> = senders
                    .iter()
                    .map(|snd| find(cells, table, case, snd, metric))
                    .collect();
                BarPanel {
                    title: format!("case {case}"),
                    categories: senders.clone(),
                    values: vec![
                        cs.iter().map(|c| c.paper).collect(),
                        cs.iter().map(|c| c.ours).collect(),
                    ],
                }
            })
            .collect()
    };
    plot::grouped_bars(
        &GroupedBars {
            title: "Segments received per sender (Table III)".into(),
            subtitle: "sum over 10 runs of 30 s, thousands of 512-byte segments; \
                       B1, B2, B3: input links at 1×, 2×, 4× bandwidth, bottleneck 51.7 Mbit/s"
                .into(),
            x_label: "sender".into(),
            y_label: "segments received (thousands)".into(),
            series: vec!["paper".into(), ours_label.clone()],
            panels: panels("III", "segments_k"),
            decimals: 0,
        },
        &out.join("goodput_b"),
    )?;
    plot::grouped_bars(
        &GroupedBars {
            title: "Retransmission timeouts per sender (Table I)".into(),
            subtitle: "sum over 10 runs of 30 s; min RTO 200 ms, initial RTO 3 s (our choices)"
                .into(),
            x_label: "sender".into(),
            y_label: "retransmission timeouts".into(),
            series: vec!["paper".into(), ours_label],
            panels: panels("I", "rto"),
            decimals: 0,
        },
        &out.join("timeouts_b"),
    )?;
    let t4: Vec<&Cell> = MAX_P
        .iter()
        .map(|mp| find(cells, "IV", &format!("MaxP={mp}"), "all", "usage"))
        .collect();
    plot::grouped_bars(
        &GroupedBars {
            title: "Bottleneck usage by MaxP, ten senders (Table IV)".into(),
            subtitle: "usage = segments received / (time × 11298.1 packets/s at 51.7 Mbit/s)"
                .into(),
            x_label: "MaxP (RED maximum drop probability)".into(),
            y_label: "usage".into(),
            series: vec!["paper".into(), format!("aqmlab (mean of {seeds} runs)")],
            panels: vec![BarPanel {
                title: "ten senders".into(),
                categories: MAX_P.iter().map(|m| m.to_string()).collect(),
                values: vec![
                    t4.iter().map(|c| c.paper).collect(),
                    t4.iter().map(|c| c.ours).collect(),
                ],
            }],
            decimals: 2,
        },
        &out.join("table4_usage"),
    )?;
    Ok(())
}

// ---- report ---------------------------------------------------------------

fn md_table(cells: &[&Cell]) -> String {
    let mut s = String::from(
        "| Case | Sender | Paper | aqmlab | Difference | Ratio | aqmlab per run (mean ± sd) |\n\
         |---|---|---:|---:|---:|---:|---:|\n",
    );
    for c in cells {
        let d = c.ours - c.paper;
        let ratio = if c.paper != 0.0 {
            format!("{:.2}", c.ours / c.paper)
        } else {
            "—".into()
        };
        let dec = c.decimals.max(1);
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {}{} | {} | {} ± {} |",
            c.case,
            c.sender,
            fmt_paper(c),
            fmt(c.ours, c.decimals),
            if d >= 0.0 { "+" } else { "" },
            fmt(d, c.decimals),
            ratio,
            fmt(c.per_run_mean, dec),
            fmt(c.per_run_sd, dec),
        );
    }
    s
}

#[allow(clippy::too_many_arguments)]
fn report(
    configs: &[Config],
    aggs: &[Agg],
    cells: &[Cell],
    nums: &Numbers,
    seeds: u64,
    r1: &RunResult,
    same_as_table: bool,
) -> String {
    let mut s = String::new();
    let sel = |t: &str| -> Vec<&Cell> { cells.iter().filter(|c| c.table == t).collect() };
    let get = |t: &str, case: &str, snd: &str, m: &str| find(cells, t, case, snd, m).clone();
    let scale_note = if seeds == 10 {
        "We ran each configuration with seeds 1–10, as many runs as the paper, so \
         sums need no scaling."
            .to_string()
    } else {
        format!(
            "We ran each configuration with seeds 1–{seeds}. The paper's B-case numbers \
             are sums over 10 runs, so our sums are multiplied by 10/{seeds}; the \
             per-run mean ± sample standard deviation is given beside each number."
        )
    };
    let _ = writeln!(
        s,
        "# Reproduction: Fang, Youn, Choo, Yu, \"Evaluation of Proactive Congestion \
         Control on RED Gateway\" (PDCS 2001)\n\n\
         Produced by `aqmlab reproduce red-gateway --seeds {seeds}`. Every number \
         here is a pure function of the scenario files and the seeds.\n"
    );

    // --- setup
    s.push_str(
        "## Setup\n\n\
         Five TCP New Reno senders C1–C5, one RED gateway, one sink (paper §4.1, Fig. 4). \
         C1–C4 reach the gateway over 103.3 Mbit/s, 1 ms links, C5 over a 31.0 Mbit/s, \
         16 ms link; the gateway → sink link is 51.7 Mbit/s, 2 ms. In B2 and B3 the \
         input links' bandwidths are doubled and quadrupled; the gateway → sink link \
         stays at 51.7 Mbit/s (see below). RED at the gateway → sink port: buffer \
         16 packets, min_th 4, max_th 8, w_q 0.002, MaxP 0.02 (Table IV: 0.1, 0.08, \
         0.06, 0.04, 0.02 with ten senders, eight on 103.3 Mbit/s/1 ms and two on \
         31.0 Mbit/s/16 ms links). Senders always have data; windows are capped at \
         128 segments; 512-byte segments with 20 B TCP and 40 B IP headers make \
         572-byte packets; the receiver sends one ACK per two segments. Each run \
         lasts 30 s.\n\n\
         Scenario files (compiled into the binary): \
         `scenarios/papers/red-gateway/b1.toml`, `b2.toml`, `b3.toml`, `table4.toml`; \
         Table IV's MaxP is applied with the override \
         `links.bottleneck.queue_ab.max_p=<MaxP>`.\n\n\
         **Which links B2 and B3 scale.** The paper says \"The bandwidths of all the \
         links are doubled and quadrupled in the B2 and B3 case\", at the end of the \
         bullet that describes the input links; the 51.7 Mbit/s outgoing link is \
         described in a separate bullet (\"Speed mismatch\"). The abstract and the \
         conclusion speak of \"increasing the bandwidth of the gateway input links\" \
         and \"Doubling the bandwidths of the input links\", and Table III's Usage for \
         B2 and B3 is computed against 51.7 Mbit/s (1547k / (300 × 11298) = 0.46; \
         1682k / (300 × 11298) = 0.50). We therefore scale the five input links \
         (both directions) and keep the gateway → sink link at 51.7 Mbit/s, 2 ms. \
         Propagation delays are unchanged.\n\n",
    );

    // --- choices
    s.push_str(
        "## Parameters the paper does not give (our choices)\n\n\
         | Parameter | Value | Why |\n|---|---|---|\n\
         | Initial RTO | 3 s | RFC 2988 (2000) and ns-2.35's `rtxcur_init_`; hardly matters here: each sender times its first segment, sent into an empty network |\n\
         | Minimum RTO, clock granularity | 200 ms, 10 ms | ns-2.35's defaults (`minrto_ 0.2`, `tcpTick_ 0.01`); ns-2 of 2001 used 1 s and 100 ms, RFC 2988 asks for 1 s (see the sensitivity table); the paper gives no RTO settings |\n\
         | Delayed-ACK timeout | 100 ms | ns-2's `DelAckSink` default (`interval_ 100ms`); the paper says only that the receiver \"acknowledges every two segments with a timeout approach\" |\n\
         | Initial window | 1 segment | RFC 2581 (1999) and ns-2's `windowInit_ = 1` |\n\
         | Initial ssthresh | unlimited | the window cap (128) bounds slow start |\n\
         | Start times | uniform in [0, 100 ms) per sender, from the run's seed | the paper gives none; spreading avoids artificial synchronisation, and makes the ten runs differ (the paper does not say what varied between its runs) |\n\
         | ACK size | 60 bytes | the paper's TCP + IP header sizes (20 + 40 B) |\n\
         | Host (end-system) queues | DropTail, 1000 packets | the paper's end-system queue entities have no stated limit; with windows ≤ 128 they never drop |\n\
         | RED gentle mode | off | Floyd & Jacobson 1993 (the paper cites it; gentle came in 2000): forced drop when avg ≥ max_th |\n\
         | RED count spacing (`wait`) | off | FJ93 §7's p_a = p_b / (1 − count·p_b) (ns-2's default is on; see the sensitivity table) |\n\
         | RED idle decay | m = idle time × C / (8 · 500 B) | ns-2's `estimator` with its default `mean_pktsize` 500 B |\n\
         | RED queue measured in | packets | the paper gives the buffer and thresholds in packets |\n\
         | Dup-ACK threshold | 3 | the paper's state machine (FR on the third duplicate ACK) |\n\
         | New Reno details | aqmlab's `newreno` (RFC 6582): window inflation by one segment per duplicate ACK; partial ACKs retransmit the next hole and deflate the window; a full ACK sets cwnd = ssthresh; `ssthresh = max(FlightSize/2, 2)`; go-back-N with cwnd = 1 after a timeout | the paper's states FR and PR |\n\n",
    );

    // --- aggregation
    let _ = writeln!(
        s,
        "## How the numbers are counted\n\n\
         The paper: \"Each of the three cases are run ten times and the numbers are \
         added.\" {scale_note}\n\n\
         - Table I counts retransmission timeouts of each sender \
         (`FlowResult.timeouts`).\n\
         - Table II counts each sender's packets dropped (`FlowResult.drops`, which \
         counts a flow's packets dropped anywhere; we check in every run that all \
         drops happen at the gateway — see Checks). The paper prints integers in the \
         table and calls them \"the total number of packets (in thousands) dropped\" \
         in the text; we print our counts in packets.\n\
         - Table III counts segments delivered in order to each receiver \
         (`FlowResult.segments_delivered`), in thousands as the paper prints them. \
         Usage = total segments received / (runs × 30 s × 11298.1 packets/s), \
         11298.1 = 51.7e6 / 8 / 572 (the paper's formula).\n\
         - Table IV: the paper's Usage row equals Goodput × 1000 / (150 s × 11298.1) \
         in every column (1267k / (150 × 11298.1) = 0.748 → 0.75; 1089k → 0.643 → \
         0.64), i.e. its sums cover 150 s of simulated time — five runs of 30 s, not \
         the ten of Tables I–III, or ten runs of 15 s; the paper does not say. We \
         scale our Table IV sums (goodput, drops, RTO) to 150 s, i.e. by 5/{seeds}; \
         usage is a ratio and is not scaled.\n"
    );

    // --- tables
    let _ = writeln!(
        s,
        "## Results: paper vs aqmlab\n\n\
         Difference = aqmlab − paper; Ratio = aqmlab / paper. The last column is \
         the per-run mean ± sample standard deviation over our {seeds} runs (for \
         usage, the per-run usage).\n"
    );
    let _ = writeln!(
        s,
        "### Table I — total retransmission timeouts\n\n\
         The paper's B2 row sums to 9 but its Total column prints 8; we copy the \
         table as printed.\n\n{}",
        md_table(&sel("I"))
    );
    let _ = writeln!(
        s,
        "### Table II — total packets dropped at the gateway\n\n\
         aqmlab in packets; paper as printed (its text says \"in thousands\").\n\n{}",
        md_table(&sel("II"))
    );
    let _ = writeln!(
        s,
        "### Table III — total segments received (thousands) and usage\n\n{}",
        md_table(&sel("III"))
    );
    let _ = writeln!(
        s,
        "### Table IV — ten senders, by MaxP (sums scaled to 150 s)\n\n\
         Metrics: goodput_k = segments received (thousands), usage, drops = packets \
         dropped at the gateway, rto = retransmission timeouts. The aqmlab column is \
         per 150 s (the paper's Table IV time), the last column per 30-s run.\n\n{}",
        md_table(&sel("IV"))
    );

    // --- more measurements
    s.push_str(
        "## Further measurements (per-run means)\n\n\
         Utilisation = fraction of time the gateway → sink transmitter is busy \
         (data and all); usage counts only distinct segments delivered. Drops at the \
         gateway by RED cause: early (probabilistic, min_th ≤ avg < max_th), forced \
         (avg ≥ max_th), overflow (16-packet buffer full). Fairness = Jain's index of \
         the senders' segments received.\n\n\
         | Config | Utilisation | Usage | Early drops | Forced drops | Overflow drops | Fast retransmits | Timeouts | Mean queue (pkts) | Mean queueing delay (ms) | Fairness |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for (c, a) in configs.iter().zip(aggs).take(SENS0) {
        let m = |f: &dyn Fn(&RunSummary) -> f64| a.mean_sd(f).0;
        let fair = m(&|r: &RunSummary| aqmlab::metrics::jain(&r.segs));
        let _ = writeln!(
            s,
            "| {} | {:.3} | {:.3} | {:.0} | {:.0} | {:.0} | {:.0} | {:.1} | {:.2} | {:.2} | {:.3} |",
            c.key,
            m(&|r| r.util),
            m(&|r| r.segs.iter().sum::<f64>() / (RUN_S * CAPACITY_PPS)),
            m(&|r| r.early),
            m(&|r| r.forced),
            m(&|r| r.overflow),
            m(&|r| r.fast_rtx.iter().sum()),
            m(&|r| r.rto.iter().sum()),
            m(&|r| r.mean_q),
            m(&|r| r.mean_delay_s * 1e3),
            fair,
        );
    }
    s.push('\n');

    // --- sensitivity
    let (head, rows) = sensitivity_rows(configs, aggs, nums);
    let _ = writeln!(
        s,
        "## Sensitivity to the parameters the paper does not give\n\n\
         Case B1 again with one open parameter changed at a time (seeds 1–{seeds}; \
         RTO, drops and segments are sums scaled to 10 runs as in Tables I–III; \
         the C1–C4 column gives the smallest and largest of the four). Overrides: \
         {}.\n\n{}",
        configs[SENS0..]
            .iter()
            .map(|c| format!("`{}`", c.overrides.join(" ")))
            .collect::<Vec<_>>()
            .join(", "),
        md_rows(&head, &rows)
    );

    // --- discussion
    s.push_str(&discussion(configs, aggs, cells, nums, &get));

    // --- checks
    let other: u64 = aggs
        .iter()
        .flat_map(|a| a.runs.iter())
        .map(|r| r.other_drops)
        .sum();
    let mismatch: i64 = aggs
        .iter()
        .flat_map(|a| a.runs.iter())
        .map(|r| r.drop_mismatch.abs())
        .sum();
    let nruns: usize = aggs.iter().map(|a| a.runs.len()).sum();
    let _ = writeln!(
        s,
        "## Checks\n\n\
         - Packet conservation (sent = delivered + dropped + in flight) holds in all \
         {nruns} runs (the command fails otherwise).\n\
         - Drops outside the gateway (host queues, ACK path, link loss): {other} in \
         all runs{}. The senders' drop counts add up to the gateway's drop counters \
         {}.\n\
         - The B1 seed-1 run drawn in the queue plots was run again with 1 ms queue \
         sampling; its per-sender timeouts, drops and segments are {} the table's \
         seed-1 run.\n",
        if other == 0 {
            ", so `FlowResult.drops` is exactly the sender's drops at the gateway"
        } else {
            " (so Table II includes some drops outside the gateway)"
        },
        if mismatch == 0 {
            "in every run".to_string()
        } else {
            format!("except for a total discrepancy of {mismatch} packets")
        },
        if same_as_table {
            "identical to"
        } else {
            "NOT identical to"
        }
    );

    // --- files
    let q = r1.queue(BOTTLENECK);
    let _ = writeln!(
        s,
        "## Files\n\n\
         - `tables.csv`: every cell above (table, case, sender, metric, paper, aqmlab, \
         per-run mean and sd, runs, what the aqmlab number is).\n\
         - `goodput_b.png`/`.svg`: segments received per sender, B1/B2/B3, paper vs \
         aqmlab (Table III).\n\
         - `timeouts_b.png`/`.svg`: retransmission timeouts per sender (Table I).\n\
         - `table4_usage.png`/`.svg`: usage by MaxP with ten senders (Table IV).\n\
         - `queue_b1_seed1.png`/`.svg`: instantaneous queue and RED avg at the \
         gateway → sink port over the 30 s of B1, seed 1 (1 ms samples); \
         `queue_b1_seed1_zoom.png`/`.svg`: the same from 10 to 12 s. In this run the \
         time-averaged queue is {:.2} packets and the mean queueing delay {:.2} ms.\n",
        q.map(|q| q.mean_len_pkts).unwrap_or(0.0),
        q.map(|q| q.mean_delay_s * 1e3).unwrap_or(0.0),
    );
    s
}

/// RED's min_th in case B1 (packets), as in `b1.toml`.
const MIN_TH: f64 = 4.0;

/// The tolerance under which a cell agrees with the paper: usage within
/// ±0.05, every count (timeouts, drops, segments, goodput) within ±20 % of
/// the paper's value.
fn cell_tol(c: &Cell) -> Tol {
    if c.metric == "usage" {
        Tol::Abs(0.05)
    } else {
        Tol::Rel(0.2)
    }
}

/// The summary paragraph: the qualitative findings that hold (`agree`, of
/// `n` checked) and, per table, how many cells agree under [`cell_tol`].
fn summary(agree: &[String], n: usize, cells: &[Cell]) -> String {
    let findings = if agree.is_empty() {
        format!("none of the {n} qualitative findings checked here holds in aqmlab")
    } else {
        format!(
            "{} of the {n} qualitative findings checked here hold in aqmlab: {}",
            agree.len(),
            agree.join("; ")
        )
    };
    let per_table: Vec<String> = ["I", "II", "III", "IV"]
        .iter()
        .map(|t| {
            let of: Vec<&Cell> = cells.iter().filter(|c| c.table == *t).collect();
            let ok = of
                .iter()
                .filter(|c| cell_tol(c).within(c.ours, c.paper))
                .count();
            format!("Table {t}: {} cells agree", verdict::count(ok, of.len()))
        })
        .collect();
    format!(
        "**Summary.** {findings}. Cell by cell (agreement means within {} for usage and \
         {} for timeouts, drops, segments and goodput): {}. The paragraphs below give the \
         amounts and the reasons we found.\n\n",
        Tol::Abs(0.05).describe(""),
        Tol::Rel(0.2).describe(""),
        per_table.join("; ")
    )
}

/// The discussion of differences, with the measured numbers filled in.
fn discussion(
    configs: &[Config],
    aggs: &[Agg],
    cells: &[Cell],
    nums: &Numbers,
    get: &dyn Fn(&str, &str, &str, &str) -> Cell,
) -> String {
    let mut s = String::from("## Where aqmlab differs from the paper, and why\n\n");
    let u = |case: &str| get("III", case, "all", "usage").ours;
    let seg = |case: &str, snd: &str| get("III", case, snd, "segments_k").ours;
    let rto = |case: &str| get("I", case, "Total", "rto").ours;
    let drops = |case: &str, snd: &str| get("II", case, snd, "drops").ours;
    let t4 = |mp: f64, m: &str| get("IV", &format!("MaxP={mp}"), "all", m).ours;
    let mean = |i: usize, f: &dyn Fn(&RunSummary) -> f64| aggs[i].mean_sd(f).0;
    let (u1, u2, u3) = (u("B1"), u("B2"), u("B3"));
    let c5 = |case: &str| seg(case, "C5");
    let d5 = |case: &str| drops(case, "C5");
    let b1 = &aggs[0];
    let run_usage: Vec<f64> = b1
        .runs
        .iter()
        .map(|r| r.segs.iter().sum::<f64>() / (RUN_S * CAPACITY_PPS))
        .collect();
    let umin = run_usage.iter().copied().fold(f64::INFINITY, f64::min);
    let umax = run_usage.iter().copied().fold(0.0, f64::max);
    let util1 = mean(0, &|r| r.util);
    let dtot1 = b1.sum(|r| r.drops.iter().sum());
    let over1 = b1.sum(|r| r.overflow) / dtot1.max(1.0);
    let early1 = b1.sum(|r| r.early) / dtot1.max(1.0);
    let forced1 = b1.sum(|r| r.forced);
    let segs1 = b1.sum(|r| r.segs.iter().sum());
    let loss1 = dtot1 / (dtot1 + segs1).max(1.0);
    // Data packets arriving at the gateway per second (delivered or dropped).
    let arrivals1 = (segs1 + dtot1) / (b1.n() * RUN_S);
    let fr1 = mean(0, &|r| r.fast_rtx.iter().sum());
    let rto1_run = mean(0, &|r| r.rto.iter().sum());
    let q1 = mean(0, &|r| r.mean_q);
    let delay1 = mean(0, &|r| r.mean_delay_s * 1e3);
    let sens_u: Vec<f64> = (SENS0..configs.len())
        .chain(std::iter::once(0))
        .map(|i| mean(i, &|r| r.segs.iter().sum::<f64>() / (RUN_S * CAPACITY_PPS)))
        .collect();
    let sens_rto: Vec<f64> = (SENS0..configs.len())
        .chain(std::iter::once(0))
        .map(|i| aggs[i].sum(|r| r.rto.iter().sum()) * configs[i].scale)
        .collect();
    let mn = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let mx = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let c14: Vec<f64> = (1..=4).map(|i| seg("B1", &format!("C{i}"))).collect();
    let c14_mean = c14.iter().sum::<f64>() / 4.0;
    let u_flat = mx(&[u1, u2, u3]) / mn(&[u1, u2, u3]).max(1e-9) < 1.05;
    let c5_falls = c5("B1") > c5("B2") && c5("B2") > c5("B3");
    let d5_rises = d5("B1") < d5("B2") && d5("B2") < d5("B3");
    let u4 = t4(0.02, "usage");
    let t4u: Vec<f64> = MAX_P.iter().map(|&m| t4(m, "usage")).collect();
    let t4_monotone = t4u.windows(2).all(|w| w[0] <= w[1]);

    // summary
    let mut agree = Vec::new();
    if u_flat {
        agree.push(format!(
            "raising the input-link bandwidths does not raise usage (paper 0.55 → 0.46 → \
             0.50 for B1 → B2 → B3; aqmlab {u1:.3} → {u2:.3} → {u3:.3})"
        ));
    }
    if c5_falls {
        agree.push(format!(
            "the long-RTT sender C5 receives less as the input links get faster (paper \
             478k → 153k → 124k; aqmlab {:.1}k → {:.1}k → {:.1}k){}",
            c5("B1"),
            c5("B2"),
            c5("B3"),
            if d5_rises {
                format!(
                    " and loses more packets (paper 9 → 132 → 155; aqmlab {} → {} → {})",
                    fmt(d5("B1"), 0),
                    fmt(d5("B2"), 0),
                    fmt(d5("B3"), 0)
                )
            } else {
                String::new()
            }
        ));
    }
    if u4 > u1 {
        agree.push(format!(
            "ten senders use the bottleneck better than five at the same MaxP 0.02 \
             (paper 0.55 → 0.72; aqmlab {u1:.3} → {u4:.3})"
        ));
    }
    if q1 < MIN_TH {
        agree.push(format!(
            "RED keeps the queue short (B1: mean {q1:.2} packets, below min_th = {MIN_TH}; \
             {delay1:.2} ms of queueing delay)"
        ));
    }
    s.push_str(&summary(&agree, 4, cells));

    // usage
    let _ = writeln!(
        s,
        "**Usage (Table III).** B1 {}. The paper reports 0.55, 0.46 and \
         0.50; aqmlab's New Reno senders reach {u1:.3}, {u2:.3} and {u3:.3} (per-run usage \
         in B1 from {umin:.3} to {umax:.3}); the 51.7 Mbit/s transmitter is busy \
         {:.0}% of the time in B1. The link idles after losses: the 16-packet buffer is \
         a quarter of the bandwidth-delay product of C1–C4 (11298 packets/s × 6 ms ≈ 68 \
         packets), and {:.0}% of the drops are buffer overflows, which hit several \
         senders in the same burst so that their windows fall together. A usage of \
         0.46–0.55 with windows of up to 128 segments and 6 ms round trips would need \
         the senders to be idle or window-limited most of the time; none of the \
         parameters the paper leaves open does that in aqmlab: across the sensitivity \
         variants above, B1's usage stays between {:.3} and {:.3}. The paper itself \
         mentions test runs with usage up to 0.93. We cannot tell from the paper what \
         held its senders back; candidates are its PARSEC model's request–reply \
         exchange between each link entity and its queue entity (a link asks its queue \
         for the next segment only when idle), its unspecified delayed-ACK timeout and \
         RTO settings, and what it counted as a segment received.\n",
        verdict::compare(u1, nums.t3_usage[0], Tol::Abs(0.05), "", 3),
        100.0 * util1,
        100.0 * over1,
        mn(&sens_u),
        mx(&sens_u),
    );

    // split between senders
    let _ = writeln!(
        s,
        "**Split between the senders (Table III).** In the paper the four identical \
         senders C1–C4 differ by up to 2.8× in B1 (C1 651k, C2 230k), and C5, whose \
         round trip is six times longer, receives more than each of C2–C4 (478k). In \
         aqmlab C1–C4 receive {:.1}k–{:.1}k each in B1, and C5 {:.1}k, {:.1}× less than \
         their mean — close to the ratio of the propagation round trips (36 ms vs 6 ms), \
         the 1/RTT bias of TCP throughput (Mathis et al. 1997). Starting all senders at \
         the same instant does not favour C1 in aqmlab (sensitivity table). The \
         paper's asymmetry between identical senders (also C4's 31 of B3's 39 timeouts) \
         points to an ordering effect in its model that we cannot identify from the \
         text.\n",
        mn(&c14),
        mx(&c14),
        c5("B1"),
        c14_mean / c5("B1").max(1e-9),
    );

    // timeouts
    let _ = writeln!(
        s,
        "**Timeouts (Table I).** aqmlab counts {}, {} and {} timeouts in B1, B2, B3 \
         (sums over 10 runs) against the paper's 0, 8 and 39; in B1 that is {rto1_run:.1} \
         timeouts per run against {fr1:.0} fast retransmits per run. With a 16-packet \
         buffer, drops come in bursts when the buffer overflows; a fast retransmission \
         sent while the queue is still full can be dropped again, and New Reno can \
         repair a lost retransmission only by a timeout (minimum RTO 200 ms, about 33 \
         round trips). A window just cut to a few segments cannot produce three \
         duplicate ACKs either. Larger minimum RTOs or other delayed-ACK settings do not \
         bring the count near zero: the sensitivity variants give {}–{} timeouts in B1. \
         Zero timeouts in ten 30-s runs of B1 is consistent with the paper's low drop \
         counts if Table II is read as packets (see next), not with aqmlab's.\n",
        fmt(rto("B1"), 0),
        fmt(rto("B2"), 0),
        fmt(rto("B3"), 0),
        fmt(mn(&sens_rto), 0),
        fmt(mx(&sens_rto), 0),
    );

    // drops
    let p_raw: f64 = 447.0 / (447.0 + 1_856_000.0);
    let p_k: f64 = 447_000.0 / (447_000.0 + 1_856_000.0);
    let _ = writeln!(
        s,
        "**Drops (Table II).** aqmlab drops {} packets at the gateway in B1's 10 runs (a \
         loss rate of {:.2}% of data packets): {:.0}% early (RED's random drops), {:.0}% \
         on buffer overflow and {} forced (avg ≥ max_th). RED's average moves slowly — \
         w_q = 0.002 at ~{:.0} arrivals/s averages over ~{:.0} ms — so bursts fill the \
         16-packet buffer before avg reaches max_th = 8 (see the queue plots). The \
         paper's table prints 447 for B1 and its text says \"(in \
         thousands)\". Read as thousands, 447k drops against 1856k segments received is \
         a loss rate of {:.0}%, at which New Reno's window would be about 1.22/√p ≈ {:.0} \
         segments (Mathis et al.) with frequent timeouts — but the paper reports none. \
         Read as packets, the loss rate is {:.3}%, for which the same formula gives \
         windows of ~{:.0} segments; five such windows (~400 packets) would overflow a \
         pipe of ~84 packets (68 in flight + 16 queued) far more often than 45 times a \
         run unless the senders' effective round trips were several times the \
         propagation delays. aqmlab's count lies between the two readings: {:.0}× the \
         printed number and 1/{:.0} of the thousands reading. Our per-sender counts are \
         also even across C1–C4, where the paper's C1 has half the drops of C2–C4 in \
         B1.\n",
        fmt(drops("B1", "Total"), 0),
        100.0 * loss1,
        100.0 * early1,
        100.0 * over1,
        fmt(forced1, 0),
        arrivals1,
        1e3 / (0.002 * arrivals1.max(1.0)),
        100.0 * p_k,
        1.22 / p_k.sqrt(),
        100.0 * p_raw,
        1.22 / p_raw.sqrt(),
        drops("B1", "Total") / 447.0,
        447_000.0 / drops("B1", "Total").max(1.0),
    );

    // table IV
    let _ = writeln!(
        s,
        "**MaxP with ten senders (Table IV).** aqmlab's usage {} as MaxP falls from 0.1 \
         to 0.02 ({}), while drops go {} → {} and timeouts {} → {} per 150 s: a larger \
         MaxP drops more packets early, and with ten senders sharing ~84 packets of \
         pipe and buffer (about 8 each) more of those losses end in timeouts. The paper \
         finds no monotonic trend (usage 0.75, 0.73, 0.64, 0.71, 0.72; drops 316–365; \
         timeouts 9–44) and \"no straightforward relationship\" between MaxP and \
         drops. aqmlab's ten-sender timeouts are {:.0}–{:.0}× the paper's, for the \
         reasons given for Table I. This comparison takes the paper's Table IV sums to \
         cover 150 s, as its Usage row implies; if they covered ten 30-s runs, the \
         paper's goodput would mean a usage of only 0.32–0.37.\n",
        if t4_monotone {
            "rises monotonically"
        } else {
            "changes"
        },
        t4u.iter()
            .map(|x| format!("{x:.3}"))
            .collect::<Vec<_>>()
            .join(", "),
        fmt(t4(0.1, "drops"), 0),
        fmt(t4(0.02, "drops"), 0),
        fmt(t4(0.1, "rto"), 0),
        fmt(t4(0.02, "rto"), 0),
        mn(&MAX_P
            .iter()
            .zip(nums.t4_rto)
            .map(|(&m, p)| t4(m, "rto") / p)
            .collect::<Vec<_>>()),
        mx(&MAX_P
            .iter()
            .zip(nums.t4_rto)
            .map(|(&m, p)| t4(m, "rto") / p)
            .collect::<Vec<_>>()),
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(table: &'static str, metric: &'static str, paper: f64, ours: f64) -> Cell {
        Cell {
            table,
            case: "B1".into(),
            sender: "C1".into(),
            metric,
            paper,
            ours,
            per_run_mean: ours / 10.0,
            per_run_sd: 0.0,
            runs_summed: 10.0,
            decimals: 0,
        }
    }

    #[test]
    fn paper_numbers_load_from_the_toml() {
        let n = Numbers::load().unwrap();
        assert_eq!(n.t1[2][3], 31.0);
        assert_eq!(n.t2[1][5], 827.0);
        assert_eq!(n.t3[0][0], 651.0);
        assert_eq!(n.t3_usage, [0.55, 0.46, 0.50]);
        assert_eq!(n.t4_rto, [18.0, 21.0, 44.0, 17.0, 9.0]);
    }

    #[test]
    fn summary_counts_follow_the_measurement() {
        let inside = [c("I", "rto", 100.0, 119.0), c("III", "usage", 0.55, 0.59)];
        let s = summary(&["x".into()], 4, &inside);
        assert!(s.contains("1 of the 4 qualitative findings"), "{s}");
        assert!(s.contains("Table I: all 1 cells agree"), "{s}");
        assert!(s.contains("Table III: all 1 cells agree"), "{s}");
        let outside = [c("I", "rto", 100.0, 121.0), c("III", "usage", 0.55, 0.61)];
        let s = summary(&[], 4, &outside);
        assert!(s.contains("none of the 4 qualitative findings"), "{s}");
        assert!(s.contains("Table I: none of the 1 cells agree"), "{s}");
        assert!(s.contains("Table III: none of the 1 cells agree"), "{s}");
    }
}
