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
//! values of the time, for the report's discussion.
//!
//! The experiment matrix is data, `scenarios/papers/red-gateway/matrix.toml`
//! (cases, the MaxP sweep, the sensitivity variants, run length, the paper's
//! run counts); the paper's numbers are `paper.toml` beside it; the report's
//! prose is `templates/red-gateway*.md`.
//!
//! Scaling: the paper's B-case numbers are sums over 10 runs of 30 s; with
//! `N ≠ 10` seeds our sums are scaled by `10/N`. The paper's Table IV Usage row
//! equals Goodput·1000 / (150 s · 11298.1 packets/s) in every column, i.e. its
//! sums cover 150 s of simulated time (e.g. 5 runs of 30 s); our Table IV sums
//! are scaled by `5/N` to match. Usage itself is never scaled. Per-run means
//! and standard deviations are written to `report.md` and `tables.csv`.

use crate::common::{check_conservation, md_rows, text_table};
use crate::matrix::{self, Scenarios};
use crate::paper::Paper;
use crate::plot::{self, BarPanel, GroupedBars};
use crate::progress::par_map;
use crate::stats::Summary;
use crate::table::{write_csv, TableRow};
use crate::template::{pick, render, render_part};
use crate::verdict::{self, Tol};
use crate::{Error, Opts, Result};
use aqmlab::{RunResult, Scenario, Simulation};
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

/// The report's prose and its discussion, `{{name}}` filled from the run.
const REPORT: &str = include_str!("templates/red-gateway.md");
const DISCUSSION: &str = include_str!("templates/red-gateway-discussion.md");
/// The sentences the report picks from the measurement.
const PARTS: &str = include_str!("templates/red-gateway-parts.md");

/// The scenario files the matrix names, compiled in.
const SCENARIOS: Scenarios = Scenarios {
    dir: "scenarios/papers/red-gateway",
    files: &[
        (
            "b1.toml",
            include_str!("../../../../scenarios/papers/red-gateway/b1.toml"),
        ),
        (
            "b2.toml",
            include_str!("../../../../scenarios/papers/red-gateway/b2.toml"),
        ),
        (
            "b3.toml",
            include_str!("../../../../scenarios/papers/red-gateway/b3.toml"),
        ),
        (
            "table4.toml",
            include_str!("../../../../scenarios/papers/red-gateway/table4.toml"),
        ),
    ],
};

const MATRIX_FILE: &str = "scenarios/papers/red-gateway/matrix.toml";
const MATRIX_TOML: &str = include_str!("../../../../scenarios/papers/red-gateway/matrix.toml");

/// `matrix.toml` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MatrixFile {
    run: String,
    bottleneck: String,
    capacity_bps: f64,
    packet_bytes: f64,
    paper_runs: f64,
    paper_table4: String,
    case: Vec<CaseSpec>,
    table4: Table4Spec,
    sensitivity: SensitivitySpec,
    plot: PlotSpec,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseSpec {
    name: String,
    scenario: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table4Spec {
    scenario: String,
    set: String,
    max_p: Vec<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SensitivitySpec {
    base: String,
    variant: Vec<VariantSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VariantSpec {
    label: String,
    set: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlotSpec {
    set: Vec<String>,
    zoom: [f64; 2],
}

/// The experiment matrix (`matrix.toml`), checked against the paper's
/// tables: one case per row of Tables I–III, one MaxP per row of Table IV,
/// in the paper's order.
struct Matrix {
    f: MatrixFile,
    /// Simulated seconds per run.
    run_s: f64,
    /// Bottleneck capacity in packets per second.
    capacity_pps: f64,
    /// Simulated seconds the paper's Table IV sums cover.
    paper_t4_s: f64,
    /// The sensitivity check's base case (index into `f.case`).
    base: usize,
    /// RED's min_th in the first case's scenario (packets).
    min_th: f64,
}

impl Matrix {
    fn load() -> Result<Matrix> {
        Matrix::parse(MATRIX_TOML)
    }

    fn parse(text: &str) -> Result<Matrix> {
        let f: MatrixFile = matrix::parse(text, MATRIX_FILE)?;
        let bad = |key: &str, m: String| matrix::bad(MATRIX_FILE, key, m);
        let p = Paper::parse(PAPER_TOML, PAPER_FILE)?;
        let rows = |t: &str| -> Vec<String> {
            let mut r: Vec<String> = Vec::new();
            for v in p.values.iter().filter(|v| v.table == t) {
                if !r.contains(&v.row) {
                    r.push(v.row.clone());
                }
            }
            r
        };
        let cases: Vec<String> = f.case.iter().map(|c| c.name.clone()).collect();
        if cases != rows("Table I") || cases.len() != 3 {
            return Err(bad(
                "case",
                format!(
                    "the cases must be the paper's rows {:?}, got {cases:?}",
                    rows("Table I")
                ),
            ));
        }
        let maxp: Vec<String> = f.table4.max_p.iter().map(|m| format!("MaxP={m}")).collect();
        if maxp != rows("Table IV") || maxp.len() != 5 {
            return Err(bad(
                "table4.max_p",
                format!(
                    "must be the paper's rows {:?}, got {maxp:?}",
                    rows("Table IV")
                ),
            ));
        }
        let base = cases
            .iter()
            .position(|c| *c == f.sensitivity.base)
            .ok_or_else(|| {
                bad(
                    "sensitivity.base",
                    format!(
                        "`{}` is not a case; one of {}",
                        f.sensitivity.base,
                        cases.join(", ")
                    ),
                )
            })?;
        for (i, c) in f.case.iter().enumerate() {
            SCENARIOS.get(&c.scenario, &format!("case[{i}].scenario"))?;
        }
        SCENARIOS.get(&f.table4.scenario, "table4.scenario")?;
        let (file, text) = SCENARIOS.get(&f.case[0].scenario, "case[0].scenario")?;
        let min_th = bottleneck_min_th(text).ok_or_else(|| {
            Error::Internal(format!(
                "{file}: the link `bottleneck` needs a RED queue_ab with min_th"
            ))
        })?;
        if !(f.capacity_bps > 0.0 && f.packet_bytes > 0.0 && f.paper_runs > 0.0) {
            return Err(bad(
                "capacity_bps",
                "capacity_bps, packet_bytes and paper_runs must be positive".into(),
            ));
        }
        Ok(Matrix {
            run_s: matrix::seconds(MATRIX_FILE, "run", &f.run)?,
            capacity_pps: f.capacity_bps / 8.0 / f.packet_bytes,
            paper_t4_s: matrix::seconds(MATRIX_FILE, "paper_table4", &f.paper_table4)?,
            base,
            min_th,
            f,
        })
    }

    /// The case names (the paper's rows of Tables I–III).
    fn cases(&self) -> impl Iterator<Item = &str> {
        self.f.case.iter().map(|c| c.name.as_str())
    }

    /// The MaxP values of Table IV.
    fn max_p(&self) -> &[f64] {
        &self.f.table4.max_p
    }

    /// Index of the first sensitivity configuration.
    fn sens0(&self) -> usize {
        self.f.case.len() + self.f.table4.max_p.len()
    }

    /// Every configuration: the cases, Table IV's MaxP values, then the
    /// sensitivity variants of the base case; each checked to run as long
    /// as the paper's runs.
    fn configs(&self, seeds: u64) -> Result<Vec<Config>> {
        let n = seeds as f64;
        let mut configs = Vec::new();
        let mut add = |key: String, scenario: &str, what: String, ov: Vec<String>, scale| {
            let (file, _) = SCENARIOS.get(scenario, &what)?;
            let sc = SCENARIOS.load(scenario, &what, &ov)?;
            if (sc.duration.0 as f64 / 1e9 - self.run_s).abs() > 1e-9 {
                return Err(Error::Internal(format!(
                    "{file}: duration must be {} s as in the paper ({MATRIX_FILE}: `run`)",
                    self.run_s
                )));
            }
            configs.push(Config {
                key,
                overrides: ov,
                sc,
                scale,
            });
            Ok(())
        };
        for (i, c) in self.f.case.iter().enumerate() {
            let what = format!("case[{i}].scenario");
            add(
                c.name.clone(),
                &c.scenario,
                what,
                vec![],
                self.f.paper_runs / n,
            )?;
        }
        let t4 = &self.f.table4;
        for mp in &t4.max_p {
            let ov = vec![format!("{}={mp}", t4.set)];
            let scale = self.paper_t4_s / self.run_s / n;
            add(
                format!("MaxP={mp}"),
                &t4.scenario,
                "table4.scenario".into(),
                ov,
                scale,
            )?;
        }
        let base = &self.f.case[self.base];
        for v in &self.f.sensitivity.variant {
            add(
                format!("{}, {}", base.name, v.label),
                &base.scenario,
                "sensitivity.base".into(),
                v.set.clone(),
                self.f.paper_runs / n,
            )?;
        }
        Ok(configs)
    }

    /// Usage of a run that delivered `segs` segments.
    fn usage(&self, segs: f64) -> f64 {
        segs / (self.run_s * self.capacity_pps)
    }
}

/// RED's `min_th` of the `bottleneck` link's a→b queue in scenario `text`.
fn bottleneck_min_th(text: &str) -> Option<f64> {
    let v: toml::Value = toml::from_str(text).ok()?;
    let link = v
        .get("links")?
        .as_array()?
        .iter()
        .find(|l| l.get("name").and_then(|n| n.as_str()) == Some("bottleneck"))?;
    let x = link.get("queue_ab")?.get("min_th")?;
    x.as_float().or(x.as_integer().map(|i| i as f64))
}

/// The matrix parses and agrees with the paper's tables (for the test over
/// every matrix).
fn check_matrix(text: &str) -> Result {
    Matrix::parse(text).map(|_| ())
}

// ---- the paper's numbers: scenarios/papers/red-gateway/paper.toml --------

const PAPER_FILE: &str = "scenarios/papers/red-gateway/paper.toml";
const PAPER_TOML: &str = include_str!("../../../../scenarios/papers/red-gateway/paper.toml");

/// The paper's tables as printed (rows B1..B3 or MaxP as in the matrix).
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
    fn load(m: &Matrix) -> Result<Numbers> {
        let p = Paper::parse(PAPER_TOML, PAPER_FILE)?;
        let v = |t: &str, r: &str, c: &str| p.get(t, r, c).map(|x| x.value);
        let cases: Vec<&str> = m.cases().collect();
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
        for (k, mp) in m.max_p().iter().enumerate() {
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

fn summarize(r: &RunResult, bottleneck: &str) -> Result<RunSummary> {
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
        .queue(bottleneck)
        .ok_or_else(|| Error::Internal(format!("{}: no queue `{bottleneck}`", r.scenario)))?;
    s.early = q.dropped_early as f64;
    s.forced = q.dropped_forced as f64;
    s.overflow = q.dropped_overflow as f64;
    s.mean_q = q.mean_len_pkts;
    s.mean_delay_s = q.mean_delay_s;
    s.util = r.link(bottleneck).map(|l| l.utilization).unwrap_or(0.0);
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

fn usage_cell(m: &Matrix, table: &'static str, case: &str, paper: f64, agg: &Agg) -> Cell {
    let per_run = |r: &RunSummary| m.usage(r.segs.iter().sum::<f64>());
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

/// This paper in the registry ([`crate::PAPERS`]).
pub const DRIVER: crate::Driver = crate::Driver {
    name: "red-gateway",
    about: "Fang, Youn, Choo, Yu: New Reno through a RED gateway (PDCS 2001)",
    default_seeds: 10, // the paper's ten runs per case
    run,
    matrix_file: MATRIX_FILE,
    matrix_toml: MATRIX_TOML,
    check_matrix,
    fixed_duration: Some("red-gateway's tables count drops and timeouts over the paper's 30 s runs (already about 10 s in all), so its run length is fixed"),
    load: None,
};

pub fn run(o: &Opts, out: &Path) -> Result<Vec<TableRow>> {
    let seeds = o.seeds;
    let m = Matrix::load()?;
    let nums = Numbers::load(&m)?;
    let wall = Instant::now();
    let configs = m.configs(seeds)?;
    std::fs::create_dir_all(out).map_err(|e| {
        Error::Input(format!(
            "cannot create output directory {}: {e}",
            out.display()
        ))
    })?;

    // All runs, in parallel; results come back in job order.
    let jobs: Vec<(usize, u64)> = (0..configs.len())
        .flat_map(|c| (1..=seeds).map(move |s| (c, s)))
        .collect();
    let results: Vec<Result<RunSummary>> = par_map(
        &format!("red-gateway: {} runs", jobs.len()),
        &jobs,
        |&(c, seed)| {
            summarize(
                &Simulation::new(&configs[c].sc, seed).run(),
                &m.f.bottleneck,
            )
        },
    );
    let results: Vec<RunSummary> = results.into_iter().collect::<Result<_>>()?;
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

    let cells = build_cells(&m, &configs, &by_config, &nums);
    let stdout_tables = print_tables(&m, &cells, seeds);
    print!("{stdout_tables}");
    print!(
        "{}",
        print_sensitivity(&m, &configs, &by_config, seeds, &nums)
    );

    // One B1 run (seed 1) again with 1 ms queue sampling for the plots.
    // Sampling only reads the queues, so the run is the same as the table's.
    let sc = SCENARIOS.load(&m.f.case[0].scenario, "plot.set", &m.f.plot.set)?;
    let r1 = Simulation::new(&sc, 1).run();
    let same_as_table = by_config[0]
        .runs
        .first()
        .map(|t| {
            let s = summarize(&r1, &m.f.bottleneck).ok();
            s.is_some_and(|s| s.segs == t.segs && s.drops == t.drops && s.rto == t.rto)
        })
        .unwrap_or(false);
    plot::queue_series(&r1, &out.join("queue_b1_seed1"))?;
    let [z0, z1] = m.f.plot.zoom;
    plot::queue_series_window(&r1, &out.join("queue_b1_seed1_zoom"), z0, z1)?;
    plot_bars(&m, &cells, seeds, out)?;

    let rows = table_rows(&cells, seeds);
    write_csv(&rows, &out.join("tables.csv"))?;
    let report = report(
        &m,
        &configs,
        &by_config,
        &cells,
        &nums,
        seeds,
        &r1,
        same_as_table,
    )?;
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
        super::shown(out)
    );
    Ok(rows)
}

fn build_cells(m: &Matrix, configs: &[Config], aggs: &[Agg], nums: &Numbers) -> Vec<Cell> {
    let mut cells = Vec::new();
    // Tables I–III: per sender C1..C5, then a Total (I, II) or Usage (III).
    type PerSender = fn(&RunSummary) -> &[f64];
    let tables: [(&'static str, &'static str, PerSender, f64, usize); 3] = [
        ("I", "rto", |r| &r.rto, 1.0, 0),
        ("II", "drops", |r| &r.drops, 1.0, 0),
        ("III", "segments_k", |r| &r.segs, 1000.0, 1),
    ];
    for (table, metric, values, unit, decimals) in tables {
        for (ci, case) in m.cases().enumerate() {
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
                cells.push(usage_cell(m, table, case, nums.t3_usage[ci], agg));
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
    for (k, mp) in m.max_p().iter().enumerate() {
        let ci = m.f.case.len() + k;
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
        cells.push(usage_cell(m, "IV", &case, nums.t4_usage[k], agg));
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

fn print_tables(m: &Matrix, cells: &[Cell], seeds: u64) -> String {
    let mut s = String::new();
    let sums = if seeds == 10 {
        "sums over 10 runs".to_string()
    } else {
        format!("sums over {seeds} runs scaled by 10/{seeds} to the paper's 10 runs")
    };
    let senders: Vec<String> = (1..=5).map(|i| format!("C{i}")).collect();
    let cases: Vec<&str> = m.cases().collect();
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
    head.extend(m.max_p().iter().map(|m| m.to_string()));
    let rows: Vec<Vec<String>> = [
        ("Goodput (k)", "goodput_k"),
        ("Usage", "usage"),
        ("Drops", "drops"),
        ("RTO", "rto"),
    ]
    .iter()
    .map(|(name, metric)| {
        let mut r = vec![name.to_string()];
        for mp in m.max_p() {
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
    m: &Matrix,
    configs: &[Config],
    aggs: &[Agg],
    nums: &Numbers,
) -> (Vec<String>, Vec<Vec<String>>) {
    let b = m.base;
    let head: Vec<String> = [
        &format!("{} variant", m.f.case[b].name),
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
        format!("{:.2}", nums.t3_usage[b]),
        format!("{:.0}", nums.t1[b][5]),
        format!("{:.0}", nums.t2[b][5]),
        format!(
            "{:.0}–{:.0}",
            nums.t3[b][..4]
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min),
            nums.t3[b][..4].iter().copied().fold(0.0, f64::max)
        ),
        format!("{:.0}", nums.t3[b][4]),
        "—".to_string(),
    ]];
    let idx = std::iter::once(m.base).chain(m.sens0()..configs.len());
    for i in idx {
        let (c, a) = (&configs[i], &aggs[i]);
        let usage = a.sum(|r| r.segs.iter().sum::<f64>()) / (a.n() * m.run_s * m.capacity_pps);
        let per_sender: Vec<f64> = (0..4)
            .map(|k| a.sum(|r| r.segs[k]) * c.scale / 1000.0)
            .collect();
        let lo = per_sender.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = per_sender.iter().copied().fold(0.0, f64::max);
        let drops = a.sum(|r| r.drops.iter().sum());
        let over = a.sum(|r| r.overflow);
        rows.push(vec![
            if i == m.base {
                format!("aqmlab, as pinned in {}", m.f.case[m.base].scenario)
            } else {
                format!(
                    "aqmlab, {}",
                    c.key
                        .trim_start_matches(&m.f.case[m.base].name)
                        .trim_start_matches(", ")
                )
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

fn print_sensitivity(
    m: &Matrix,
    configs: &[Config],
    aggs: &[Agg],
    seeds: u64,
    nums: &Numbers,
) -> String {
    let (head, rows) = sensitivity_rows(m, configs, aggs, nums);
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

fn plot_bars(m: &Matrix, cells: &[Cell], seeds: u64, out: &Path) -> Result {
    let senders: Vec<String> = (1..=5).map(|i| format!("C{i}")).collect();
    let ours_label = if seeds == 10 {
        "aqmlab (10 runs)".to_string()
    } else {
        format!("aqmlab ({seeds} runs × 10/{seeds})")
    };
    let panels = |table: &str, metric: &str| -> Vec<BarPanel> {
        m.cases()
            .map(|case| {
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
    let t4: Vec<&Cell> = m
        .max_p()
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
                categories: m.max_p().iter().map(|m| m.to_string()).collect(),
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
    m: &Matrix,
    configs: &[Config],
    aggs: &[Agg],
    cells: &[Cell],
    nums: &Numbers,
    seeds: u64,
    r1: &RunResult,
    same_as_table: bool,
) -> Result<String> {
    let sel = |t: &str| -> Vec<&Cell> { cells.iter().filter(|c| c.table == t).collect() };
    let get = |t: &str, case: &str, snd: &str, m: &str| find(cells, t, case, snd, m).clone();
    let scale_note = scale_note(m, seeds)?;
    let (head, rows) = sensitivity_rows(m, configs, aggs, nums);
    let sens_overrides = configs[m.sens0()..]
        .iter()
        .map(|c| format!("`{}`", c.overrides.join(" ")))
        .collect::<Vec<_>>()
        .join(", ");
    let q = r1.queue(&m.f.bottleneck);
    let mut vars: Vars = vec![
        ("seeds", seeds.to_string()),
        ("scale_note", scale_note),
        ("table_i", md_table(&sel("I"))),
        ("table_ii", md_table(&sel("II"))),
        ("table_iii", md_table(&sel("III"))),
        ("table_iv", md_table(&sel("IV"))),
        ("further_rows", further_rows(m, configs, aggs)),
        ("sens_overrides", sens_overrides),
        ("sens_table", md_rows(&head, &rows)),
        (
            "discussion",
            discussion(m, configs, aggs, cells, nums, &get)?,
        ),
        (
            "plot_run_same",
            pick(PARTS, same_as_table, "plot-same", "plot-differs")?,
        ),
        (
            "plot_q",
            format!("{:.2}", q.map(|q| q.mean_len_pkts).unwrap_or(0.0)),
        ),
        (
            "plot_delay",
            format!("{:.2}", q.map(|q| q.mean_delay_s * 1e3).unwrap_or(0.0)),
        ),
    ];
    vars.extend(check_vars(aggs)?);
    render(REPORT, &vars)
}

type Vars = Vec<(&'static str, String)>;

/// How our sums relate to the paper's runs, in words.
fn scale_note(m: &Matrix, seeds: u64) -> Result<String> {
    let s = ("seeds", seeds.to_string());
    if seeds as f64 == m.f.paper_runs {
        render_part(PARTS, "scale-none", &[s])
    } else {
        let runs = ("paper_runs", m.f.paper_runs.to_string());
        render_part(PARTS, "scale", &[s, runs])
    }
}

/// The "Further measurements" table's rows: per-run means of the B cases
/// and Table IV.
fn further_rows(mx: &Matrix, configs: &[Config], aggs: &[Agg]) -> String {
    let mut s = String::new();
    for (c, a) in configs.iter().zip(aggs).take(mx.sens0()) {
        let m = |f: &dyn Fn(&RunSummary) -> f64| a.mean_sd(f).0;
        let fair = m(&|r: &RunSummary| crate::stats::jain(&r.segs));
        let _ = writeln!(
            s,
            "| {} | {:.3} | {:.3} | {:.0} | {:.0} | {:.0} | {:.0} | {:.1} | {:.2} | {:.2} | {:.3} |",
            c.key,
            m(&|r| r.util),
            m(&|r| mx.usage(r.segs.iter().sum::<f64>())),
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
    s
}

/// The checks: runs, drops outside the gateway, senders' drops against the
/// gateway's counters.
fn check_vars(aggs: &[Agg]) -> Result<Vars> {
    let runs = || aggs.iter().flat_map(|a| a.runs.iter());
    let other: u64 = runs().map(|r| r.other_drops).sum();
    let mismatch: i64 = runs().map(|r| r.drop_mismatch.abs()).sum();
    let nruns: usize = aggs.iter().map(|a| a.runs.len()).sum();
    Ok(vec![
        ("nruns", nruns.to_string()),
        ("other", other.to_string()),
        (
            "other_note",
            pick(PARTS, other == 0, "other-none", "other-some")?,
        ),
        (
            "mismatch_note",
            if mismatch == 0 {
                render_part(PARTS, "mismatch-none", &[])?
            } else {
                render_part(PARTS, "mismatch", &[("mismatch", mismatch.to_string())])?
            },
        ),
    ])
}

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
fn summary(agree: &[String], n: usize, cells: &[Cell]) -> Result<String> {
    let findings = if agree.is_empty() {
        render_part(PARTS, "findings-none", &[("n", n.to_string())])?
    } else {
        render_part(
            PARTS,
            "findings-some",
            &[
                ("k", agree.len().to_string()),
                ("n", n.to_string()),
                ("list", agree.join("; ")),
            ],
        )?
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
    render_part(
        PARTS,
        "summary",
        &[
            ("findings", findings),
            ("tol_usage", Tol::Abs(0.05).describe("")),
            ("tol_counts", Tol::Rel(0.2).describe("")),
            ("per_table", per_table.join("; ")),
        ],
    )
}

/// The smallest of `v` (+∞ for none).
fn min_of(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

/// The largest of `v` (0 for none).
fn max_of(v: &[f64]) -> f64 {
    v.iter().copied().fold(0.0, f64::max)
}

/// aqmlab's side of the paper-vs-aqmlab cells, by what the discussion quotes.
struct Ours<'a>(&'a dyn Fn(&str, &str, &str, &str) -> Cell);

impl Ours<'_> {
    fn usage(&self, case: &str) -> f64 {
        (self.0)("III", case, "all", "usage").ours
    }
    fn segs(&self, case: &str, snd: &str) -> f64 {
        (self.0)("III", case, snd, "segments_k").ours
    }
    fn rto(&self, case: &str) -> f64 {
        (self.0)("I", case, "Total", "rto").ours
    }
    fn drops(&self, case: &str, snd: &str) -> f64 {
        (self.0)("II", case, snd, "drops").ours
    }
    fn t4(&self, max_p: f64, metric: &str) -> f64 {
        (self.0)("IV", &format!("MaxP={max_p}"), "all", metric).ours
    }
}

/// The discussion of differences (`templates/red-gateway-discussion.md`),
/// with the measured numbers filled in.
fn discussion(
    m: &Matrix,
    configs: &[Config],
    aggs: &[Agg],
    cells: &[Cell],
    nums: &Numbers,
    get: &dyn Fn(&str, &str, &str, &str) -> Cell,
) -> Result<String> {
    let ours = Ours(get);
    let b1 = &aggs[0];
    let q1 = b1.mean_sd(|r| r.mean_q).0;
    let delay1 = b1.mean_sd(|r| r.mean_delay_s * 1e3).0;
    let agree = findings(m, nums, &ours, (q1, delay1))?;
    let mut vars: Vars = vec![("summary", summary(&agree, 4, cells)?)];
    vars.extend(usage_vars(m, configs, aggs, nums, &ours));
    vars.extend(timeout_vars(m, configs, aggs, &ours));
    vars.extend(drop_vars(m, b1, &ours));
    vars.extend(table4_vars(m, nums, &ours)?);
    render(DISCUSSION, &vars)
}

/// The paper's qualitative findings that hold in aqmlab, in words with the
/// numbers behind them (four are checked); `q1` and `delay1` are B1's mean
/// queue (packets) and queueing delay (ms).
fn findings(
    m: &Matrix,
    nums: &Numbers,
    ours: &Ours,
    (q1, delay1): (f64, f64),
) -> Result<Vec<String>> {
    let (u1, u2, u3) = (ours.usage("B1"), ours.usage("B2"), ours.usage("B3"));
    let c5 = |case: &str| ours.segs(case, "C5");
    let d5 = |case: &str| ours.drops(case, "C5");
    let u_flat = max_of(&[u1, u2, u3]) / min_of(&[u1, u2, u3]).max(1e-9) < 1.05;
    let c5_falls = c5("B1") > c5("B2") && c5("B2") > c5("B3");
    let d5_rises = d5("B1") < d5("B2") && d5("B2") < d5("B3");
    let last_p = *m.max_p().last().unwrap_or(&0.0);
    let u4 = ours.t4(last_p, "usage");
    let f3 = |x: f64| format!("{x:.3}");
    // the paper's row of a per-case table, as printed
    let p = |t: &[f64; 3], dec: usize| t.map(|x| format!("{x:.dec$}"));
    let [pu1, pu2, pu3] = p(&nums.t3_usage, 2);
    let mut agree = Vec::new();
    if u_flat {
        agree.push(render_part(
            PARTS,
            "finding-usage-flat",
            &[
                ("p1", pu1.clone()),
                ("p2", pu2),
                ("p3", pu3),
                ("u1", f3(u1)),
                ("u2", f3(u2)),
                ("u3", f3(u3)),
            ],
        )?);
    }
    if c5_falls {
        let drops = if d5_rises {
            let [p1, p2, p3] = p(&[nums.t2[0][4], nums.t2[1][4], nums.t2[2][4]], 0);
            render_part(
                PARTS,
                "finding-c5-drops-rise",
                &[
                    ("p1", p1),
                    ("p2", p2),
                    ("p3", p3),
                    ("d1", fmt(d5("B1"), 0)),
                    ("d2", fmt(d5("B2"), 0)),
                    ("d3", fmt(d5("B3"), 0)),
                ],
            )?
        } else {
            String::new()
        };
        let [p1, p2, p3] = p(&[nums.t3[0][4], nums.t3[1][4], nums.t3[2][4]], 0);
        agree.push(render_part(
            PARTS,
            "finding-c5-falls",
            &[
                ("p1", p1),
                ("p2", p2),
                ("p3", p3),
                ("c1", format!("{:.1}", c5("B1"))),
                ("c2", format!("{:.1}", c5("B2"))),
                ("c3", format!("{:.1}", c5("B3"))),
                ("drops", drops),
            ],
        )?);
    }
    if u4 > u1 {
        agree.push(render_part(
            PARTS,
            "finding-ten-senders",
            &[
                ("max_p", last_p.to_string()),
                ("p1", pu1),
                ("p4", format!("{:.2}", nums.t4_usage[4])),
                ("u1", f3(u1)),
                ("u4", f3(u4)),
            ],
        )?);
    }
    if q1 < m.min_th {
        agree.push(render_part(
            PARTS,
            "finding-short-queue",
            &[
                ("q1", format!("{q1:.2}")),
                ("min_th", m.min_th.to_string()),
                ("delay1", format!("{delay1:.2}")),
            ],
        )?);
    }
    Ok(agree)
}

/// Usage (Table III) and the split between the senders.
fn usage_vars(m: &Matrix, configs: &[Config], aggs: &[Agg], nums: &Numbers, ours: &Ours) -> Vars {
    let usage = |r: &RunSummary| m.usage(r.segs.iter().sum::<f64>());
    let b1 = &aggs[0];
    let run_usage: Vec<f64> = b1.runs.iter().copied().map(usage).collect();
    let dtot1 = b1.sum(|r| r.drops.iter().sum());
    let sens_u: Vec<f64> = (m.sens0()..configs.len())
        .chain(std::iter::once(0))
        .map(|i| aggs[i].mean_sd(usage).0)
        .collect();
    let c14: Vec<f64> = (1..=4).map(|i| ours.segs("B1", &format!("C{i}"))).collect();
    let c14_mean = c14.iter().sum::<f64>() / 4.0;
    let u1 = ours.usage("B1");
    let c5 = ours.segs("B1", "C5");
    vec![
        (
            "usage_verdict",
            verdict::compare(u1, nums.t3_usage[0], Tol::Abs(0.05), "", 3),
        ),
        ("u1", format!("{u1:.3}")),
        ("u2", format!("{:.3}", ours.usage("B2"))),
        ("u3", format!("{:.3}", ours.usage("B3"))),
        ("umin", format!("{:.3}", min_of(&run_usage))),
        ("umax", format!("{:.3}", max_of(&run_usage))),
        (
            "util1_pct",
            format!("{:.0}", 100.0 * b1.mean_sd(|r| r.util).0),
        ),
        (
            "over1_pct",
            format!("{:.0}", 100.0 * b1.sum(|r| r.overflow) / dtot1.max(1.0)),
        ),
        ("sens_u_min", format!("{:.3}", min_of(&sens_u))),
        ("sens_u_max", format!("{:.3}", max_of(&sens_u))),
        ("c14_min", format!("{:.1}", min_of(&c14))),
        ("c14_max", format!("{:.1}", max_of(&c14))),
        ("c5_b1", format!("{c5:.1}")),
        ("c5_ratio", format!("{:.1}", c14_mean / c5.max(1e-9))),
    ]
}

/// Timeouts (Table I).
fn timeout_vars(m: &Matrix, configs: &[Config], aggs: &[Agg], ours: &Ours) -> Vars {
    let sens_rto: Vec<f64> = (m.sens0()..configs.len())
        .chain(std::iter::once(0))
        .map(|i| aggs[i].sum(|r| r.rto.iter().sum()) * configs[i].scale)
        .collect();
    let b1 = &aggs[0];
    vec![
        ("rto_b1", fmt(ours.rto("B1"), 0)),
        ("rto_b2", fmt(ours.rto("B2"), 0)),
        ("rto_b3", fmt(ours.rto("B3"), 0)),
        (
            "rto1_run",
            format!("{:.1}", b1.mean_sd(|r| r.rto.iter().sum()).0),
        ),
        (
            "fr1",
            format!("{:.0}", b1.mean_sd(|r| r.fast_rtx.iter().sum()).0),
        ),
        ("sens_rto_min", fmt(min_of(&sens_rto), 0)),
        ("sens_rto_max", fmt(max_of(&sens_rto), 0)),
    ]
}

/// Drops (Table II), against the paper's two readings of its numbers.
fn drop_vars(m: &Matrix, b1: &Agg, ours: &Ours) -> Vars {
    let dtot1 = b1.sum(|r| r.drops.iter().sum());
    let segs1 = b1.sum(|r| r.segs.iter().sum());
    // Data packets arriving at the gateway per second (delivered or dropped).
    let arrivals1 = (segs1 + dtot1) / (b1.n() * m.run_s);
    let p_raw: f64 = 447.0 / (447.0 + 1_856_000.0);
    let p_k: f64 = 447_000.0 / (447_000.0 + 1_856_000.0);
    let drops = ours.drops("B1", "Total");
    vec![
        ("drops_b1", fmt(drops, 0)),
        (
            "loss1_pct",
            format!("{:.2}", 100.0 * dtot1 / (dtot1 + segs1).max(1.0)),
        ),
        (
            "early1_pct",
            format!("{:.0}", 100.0 * b1.sum(|r| r.early) / dtot1.max(1.0)),
        ),
        ("forced1", fmt(b1.sum(|r| r.forced), 0)),
        ("arrivals1", format!("{arrivals1:.0}")),
        (
            "avg_ms",
            format!("{:.0}", 1e3 / (0.002 * arrivals1.max(1.0))),
        ),
        ("pk_pct", format!("{:.0}", 100.0 * p_k)),
        ("window_k", format!("{:.0}", 1.22 / p_k.sqrt())),
        ("praw_pct", format!("{:.3}", 100.0 * p_raw)),
        ("window_raw", format!("{:.0}", 1.22 / p_raw.sqrt())),
        ("drops_vs_printed", format!("{:.0}", drops / 447.0)),
        (
            "drops_vs_thousands",
            format!("{:.0}", 447_000.0 / drops.max(1.0)),
        ),
    ]
}

/// MaxP with ten senders (Table IV).
fn table4_vars(mx: &Matrix, nums: &Numbers, ours: &Ours) -> Result<Vars> {
    let t4u: Vec<f64> = mx.max_p().iter().map(|&m| ours.t4(m, "usage")).collect();
    let t4_monotone = t4u.windows(2).all(|w| w[0] <= w[1]);
    let rto_ratio: Vec<f64> = mx
        .max_p()
        .iter()
        .zip(nums.t4_rto)
        .map(|(&m, p)| ours.t4(m, "rto") / p)
        .collect();
    Ok(vec![
        (
            "t4_trend",
            pick(PARTS, t4_monotone, "t4-monotone", "t4-changes")?,
        ),
        (
            "t4_usage",
            t4u.iter()
                .map(|x| format!("{x:.3}"))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        ("t4_drops_01", fmt(ours.t4(0.1, "drops"), 0)),
        ("t4_drops_002", fmt(ours.t4(0.02, "drops"), 0)),
        ("t4_rto_01", fmt(ours.t4(0.1, "rto"), 0)),
        ("t4_rto_002", fmt(ours.t4(0.02, "rto"), 0)),
        ("t4_rto_ratio_min", format!("{:.0}", min_of(&rto_ratio))),
        ("t4_rto_ratio_max", format!("{:.0}", max_of(&rto_ratio))),
    ])
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
        let n = Numbers::load(&Matrix::load().unwrap()).unwrap();
        assert_eq!(n.t1[2][3], 31.0);
        assert_eq!(n.t2[1][5], 827.0);
        assert_eq!(n.t3[0][0], 651.0);
        assert_eq!(n.t3_usage, [0.55, 0.46, 0.50]);
        assert_eq!(n.t4_rto, [18.0, 21.0, 44.0, 17.0, 9.0]);
    }

    #[test]
    fn scale_note_at_and_off_the_papers_runs() {
        let m = Matrix::load().unwrap();
        let n = scale_note(&m, 10).unwrap();
        assert!(n.contains("seeds 1–10, as many runs as the paper"), "{n}");
        let n = scale_note(&m, 2).unwrap();
        assert!(n.contains("multiplied by 10/2"), "{n}");
    }

    #[test]
    fn summary_counts_follow_the_measurement() {
        let inside = [c("I", "rto", 100.0, 119.0), c("III", "usage", 0.55, 0.59)];
        let s = summary(&["x".into()], 4, &inside).unwrap();
        assert!(s.contains("1 of the 4 qualitative findings"), "{s}");
        assert!(s.contains("Table I: all 1 cells agree"), "{s}");
        assert!(s.contains("Table III: all 1 cells agree"), "{s}");
        let outside = [c("I", "rto", 100.0, 121.0), c("III", "usage", 0.55, 0.61)];
        let s = summary(&[], 4, &outside).unwrap();
        assert!(s.contains("none of the 4 qualitative findings"), "{s}");
        assert!(s.contains("Table I: none of the 1 cells agree"), "{s}");
        assert!(s.contains("Table III: none of the 1 cells agree"), "{s}");
    }
}
