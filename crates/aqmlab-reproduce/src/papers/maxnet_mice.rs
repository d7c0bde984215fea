//! Reproduction of Phan, Tran, Nguyen, Thoai, "MaxNet and TCP Reno/RED on
//! Mice Traffic" (MSOCP 2009): one FTP elephant and HTTP mice
//! (50 or 200 connections opened 20 s in) through the two-router testbed of
//! Fig. 4, once with MaxNet routers and MaxNet hosts, once with RED routers
//! and TCP Reno hosts.
//!
//! - Fig. 5: CDF of the HTTP response time with 200 connections, and the
//!   fraction of responses within 135 ms (paper: 100 % MaxNet, about 30 %
//!   Reno/RED).
//! - Figs. 6–7: the elephant's throughput over time when 50 and 200 HTTP
//!   connections join (paper: Reno/RED's drops, worse with 200; MaxNet
//!   unaffected).
//! - Figs. 8–9: the backlog at Router1 with both router links at 100 Mbit/s
//!   (paper: RED always keeps a backlog; MaxNet has a short transient queue
//!   when the connections join).
//!
//! The scenarios are `scenarios/papers/maxnet-mice/{maxnet,reno-red}.toml`
//! (every choice the paper leaves open is written there and in the report);
//! the driver overrides the number of connections and, for Figs. 8–9, the
//! link rates. `--duration` (at least 25 s) changes every run's length for
//! quick checks and tests; the report then says so.

use crate::common::{check_conservation, md_rows, run_all, text_table};
use crate::paper::Paper;
use crate::plot::{self, Lines};
use crate::stats::{mean_by as mean, sd_by as sd};
use crate::table::{write_csv, TableRow};
use crate::template::{pick, render, render_part};
use crate::verdict::{self, Tol};
use crate::Opts;
use crate::{Error, Result};
use aqmlab::{RunResult, Scenario};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

const MAXNET_FILE: &str = "scenarios/papers/maxnet-mice/maxnet.toml";
const RENO_FILE: &str = "scenarios/papers/maxnet-mice/reno-red.toml";
const MAXNET_TOML: &str = include_str!("../../../../scenarios/papers/maxnet-mice/maxnet.toml");
const RENO_TOML: &str = include_str!("../../../../scenarios/papers/maxnet-mice/reno-red.toml");

/// Shortens every run (seconds) when set.
/// "one long live FTP connection ... in approximately of 60 s".
const DURATION_S: f64 = 60.0;
/// "Then 20 s after, HTTP connections are generated".
const JOIN_S: f64 = 20.0;
/// Fig. 5's threshold.
const THRESHOLD_S: f64 = 0.135;
/// Router1's output port (the bottleneck).
const LINK: &str = "r1->r2";
/// Wire bytes per data packet / payload bytes (1500 / 1460).
const WIRE: f64 = 1500.0 / 1460.0;

/// The paper's numbers (§4.2's two fractions of responses within 135 ms).
/// The report's prose, `{{name}}` filled from the run.
const REPORT: &str = include_str!("templates/maxnet-mice.md");
/// The sentences the report picks from the run.
const PARTS: &str = include_str!("templates/maxnet-mice-parts.md");

const PAPER_TOML: &str = include_str!("../../../../scenarios/papers/maxnet-mice/paper.toml");

/// §4.2's fractions of responses within 135 ms with 200 connections:
/// (MaxNet, Reno/RED), from `paper.toml`.
fn paper_fractions() -> Result<(f64, f64)> {
    let p = Paper::parse(PAPER_TOML, "scenarios/papers/maxnet-mice/paper.toml")?;
    let f = |sys: &str| {
        p.get(
            "Fig. 5",
            &format!("{sys}, 200 connections, 10 Mbit/s"),
            "fraction_le_135ms",
        )
        .map(|v| v.value)
    };
    Ok((f("maxnet")?, f("reno-red")?))
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum System {
    MaxNet,
    RenoRed,
}

impl System {
    fn name(self) -> &'static str {
        match self {
            System::MaxNet => "MaxNet",
            System::RenoRed => "Reno/RED",
        }
    }
    fn key(self) -> &'static str {
        match self {
            System::MaxNet => "maxnet",
            System::RenoRed => "reno-red",
        }
    }
}

/// The 10 Mbit/s testbed (Figs. 5–7) or both router links at 100 Mbit/s
/// (Figs. 8–9).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Testbed {
    Slow,
    Fast,
}

impl Testbed {
    /// Its name in `matrix.toml`.
    fn key(self) -> &'static str {
        match self {
            Testbed::Slow => "slow",
            Testbed::Fast => "fast",
        }
    }
    fn rate_bps(self) -> f64 {
        match self {
            Testbed::Slow => 10e6,
            Testbed::Fast => 100e6,
        }
    }
}

/// The main setup, or one of the two alternatives the report measures.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Variant {
    Main,
    /// Web server beside the FTP source: responses cross the bottleneck.
    Swapped,
    /// Poisson arrivals at 10 connections/s instead of all at once.
    Poisson,
}

impl Variant {
    /// Its name in `matrix.toml`.
    fn key(self) -> &'static str {
        match self {
            Variant::Main => "main",
            Variant::Swapped => "swapped",
            Variant::Poisson => "poisson",
        }
    }
}

struct Config {
    system: System,
    testbed: Testbed,
    conns: u32,
    variant: Variant,
    sc: Scenario,
}

const MATRIX_FILE: &str = "scenarios/papers/maxnet-mice/matrix.toml";
const MATRIX_TOML: &str = include_str!("../../../../scenarios/papers/maxnet-mice/matrix.toml");

/// The matrix parses and every testbed and variant it uses has its
/// overrides (for the test over every matrix).
fn check_matrix(text: &str) -> Result {
    let m: Matrix = crate::matrix::parse(text, MATRIX_FILE)?;
    for e in &m.config {
        m.set(e.testbed.key())?;
        m.set(e.variant.key())?;
    }
    Ok(())
}

/// The experiment matrix (`matrix.toml`): the (testbed, connections,
/// variant) entries, each run with both systems, and the `--set` overrides
/// of every testbed and variant.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Matrix {
    config: Vec<MatrixEntry>,
    set: BTreeMap<String, Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MatrixEntry {
    testbed: Testbed,
    connections: u32,
    variant: Variant,
}

impl Matrix {
    fn load() -> Result<Matrix> {
        crate::matrix::parse(MATRIX_TOML, MATRIX_FILE)
    }

    /// The overrides of testbed or variant `key`.
    fn set(&self, key: &str) -> Result<&[String]> {
        self.set
            .get(key)
            .map(|v| v.as_slice())
            .ok_or_else(|| crate::matrix::bad(MATRIX_FILE, "set", format!("no entry {key}")))
    }

    /// Every entry × both systems, in the matrix's order.
    fn build(&self, dur: f64) -> Result<Vec<Config>> {
        let mut configs = Vec::new();
        for e in &self.config {
            for system in [System::MaxNet, System::RenoRed] {
                let (text, file) = match system {
                    System::MaxNet => (MAXNET_TOML, MAXNET_FILE),
                    System::RenoRed => (RENO_TOML, RENO_FILE),
                };
                let mut o = vec![
                    format!("workloads.http.connections={}", e.connections),
                    format!("duration=\"{dur}s\""),
                ];
                o.extend(self.set(e.testbed.key())?.iter().cloned());
                o.extend(self.set(e.variant.key())?.iter().cloned());
                configs.push(Config {
                    system,
                    testbed: e.testbed,
                    conns: e.connections,
                    variant: e.variant,
                    sc: Scenario::from_toml_with(text, file, &o)?,
                });
            }
        }
        Ok(configs)
    }
}

fn timing(o: &Opts) -> Result<(f64, bool)> {
    o.duration_or(DURATION_S, 25.0, "the HTTP connections open at 20 s")
}

/// What one run gives.
#[derive(Clone, Debug, Default)]
struct M {
    /// Response times (s); connections without a response are +∞.
    rts: Vec<f64>,
    frac: f64,
    median_ms: f64,
    completed: u32,
    /// Elephant goodput (Mbit/s) over [10, 20) and [20, 25).
    ele_before: f64,
    ele_after: f64,
    /// Smallest 0.5-s bin of the elephant in [20, 25), Mbit/s.
    ele_min: f64,
    ele_drops: u64,
    ele_timeouts: u64,
    /// Router1 backlog, packets: mean over [10, 20) and [25, end).
    q_before: f64,
    q_after: f64,
    /// Peak backlog in [20, 22) (packets).
    q_peak: f64,
    /// Time in [20, 25) with more than 5 packets queued (s).
    q_busy_s: f64,
    /// Fraction of samples in [25, end) with more than 5 packets queued (a
    /// backlog, not the one- or two-packet bursts of delayed ACKs).
    q_backlogged: f64,
    /// Router1 drops over the run.
    link_drops: u64,
    /// Router1 utilisation over [10, 20) (elephant's wire rate / C).
    util_before: f64,
    /// Router1 backlog over [10, 20): 5th and 95th percentiles (packets).
    q_p5: f64,
    q_p95: f64,
    /// Responses later than 135 ms, and how many of their requests were
    /// retransmitted.
    late: u32,
    late_req_retx: u32,
    /// Median of the late responses (ms).
    late_median_ms: f64,
}

fn measure(c: &Config, r: &RunResult, end: f64) -> Result<M> {
    check_conservation(r)?;
    let mut m = M {
        rts: r
            .requests
            .iter()
            .map(|q| q.response_time_s.unwrap_or(f64::INFINITY))
            .collect(),
        ..M::default()
    };
    let n = m.rts.len().max(1) as f64;
    m.frac = m.rts.iter().filter(|t| **t <= THRESHOLD_S).count() as f64 / n;
    let mut s = m.rts.clone();
    s.sort_by(|a, b| a.total_cmp(b));
    m.median_ms = s.get(s.len() / 2).copied().unwrap_or(f64::NAN) * 1e3;
    m.completed = r.workloads.first().map_or(0, |w| w.completed);
    let ele = r
        .throughput
        .iter()
        .find(|t| t.group == "ftp")
        .ok_or_else(|| Error::Internal("no elephant throughput series".into()))?;
    let bins: Vec<(f64, f64)> = ele.bps().map(|(t, b)| (t, b / 1e6)).collect();
    let avg = |t0: f64, t1: f64| {
        let v: Vec<f64> = bins
            .iter()
            .filter(|(t, _)| *t >= t0 && *t < t1)
            .map(|(_, b)| *b)
            .collect();
        v.iter().sum::<f64>() / v.len().max(1) as f64
    };
    m.ele_before = avg(10.0, JOIN_S);
    m.ele_after = avg(JOIN_S, JOIN_S + 5.0);
    m.ele_min = bins
        .iter()
        .filter(|(t, _)| *t >= JOIN_S && *t < JOIN_S + 5.0)
        .map(|(_, b)| *b)
        .fold(f64::INFINITY, f64::min);
    let f = r
        .group("ftp")
        .next()
        .ok_or_else(|| Error::Internal("no elephant".into()))?;
    m.ele_drops = f.drops;
    m.ele_timeouts = f.timeouts;
    let q = r
        .series
        .iter()
        .find(|s| s.link == LINK)
        .ok_or_else(|| Error::Internal(format!("no queue series for {LINK}")))?;
    let sel = |t0: f64, t1: f64| -> Vec<(f64, f64)> {
        q.samples
            .iter()
            .filter(|s| s.time_s >= t0 && s.time_s < t1)
            .map(|s| (s.time_s, s.len_pkts as f64))
            .collect()
    };
    let mean = |v: &[(f64, f64)]| v.iter().map(|x| x.1).sum::<f64>() / v.len().max(1) as f64;
    let before = sel(10.0, JOIN_S);
    m.q_before = mean(&before);
    let mut b: Vec<f64> = before.iter().map(|x| x.1).collect();
    b.sort_by(|x, y| x.total_cmp(y));
    if !b.is_empty() {
        m.q_p5 = b[b.len() / 20];
        m.q_p95 = b[(b.len() * 19 / 20).min(b.len() - 1)];
    }
    // request flows in the order they were opened = request ids
    let req_retx: Vec<bool> = r.group("http:request").map(|f| f.retransmits > 0).collect();
    let mut late: Vec<f64> = Vec::new();
    for (i, t) in m.rts.iter().enumerate() {
        if *t > THRESHOLD_S {
            m.late += 1;
            late.push(*t);
            if req_retx.get(i).copied().unwrap_or(false) {
                m.late_req_retx += 1;
            }
        }
    }
    late.sort_by(|x, y| x.total_cmp(y));
    m.late_median_ms = late.get(late.len() / 2).copied().unwrap_or(f64::NAN) * 1e3;
    let after = sel(JOIN_S + 5.0, end);
    m.q_after = mean(&after);
    m.q_backlogged = after.iter().filter(|x| x.1 > 5.0).count() as f64 / after.len().max(1) as f64;
    m.q_peak = sel(JOIN_S, JOIN_S + 2.0)
        .iter()
        .map(|x| x.1)
        .fold(0.0, f64::max);
    let dt = if q.samples.len() > 1 {
        q.samples[1].time_s - q.samples[0].time_s
    } else {
        0.01
    };
    m.q_busy_s = sel(JOIN_S, JOIN_S + 5.0)
        .iter()
        .filter(|x| x.1 > 5.0)
        .count() as f64
        * dt;
    m.link_drops = r.queue(LINK).map_or(0, |x| x.dropped);
    m.util_before = m.ele_before * WIRE / (c.testbed.rate_bps() / 1e6);
    Ok(m)
}

/// The unit of a metric of `tables.csv`.
fn unit_of(metric: &str) -> &'static str {
    match metric {
        "fraction_le_135ms" => "fraction of responses",
        "backlog_above_5pkts_after_25s" => "fraction of samples",
        "elephant_drops" => "packets",
        m if m.ends_with("_ms") => "ms",
        m if m.ends_with("_pkts") => "packets",
        m if m.ends_with("_s") => "s",
        m if m.contains("mbps") => "Mbit/s",
        _ => "",
    }
}

fn pct(x: f64) -> String {
    format!("{:.1} %", 100.0 * x)
}

/// Every configuration's runs and their measurements.
struct Runs {
    configs: Vec<Config>,
    /// Per configuration, one result per seed.
    results: Vec<Vec<RunResult>>,
    ms: Vec<Vec<M>>,
    seeds: u64,
    dur: f64,
    shortened: bool,
    events: u64,
    sim_wall: f64,
}

impl Runs {
    fn index(&self, s: System, t: Testbed, n: u32, v: Variant) -> usize {
        self.configs
            .iter()
            .position(|c| c.system == s && c.testbed == t && c.conns == n && c.variant == v)
            .expect(
                "every (system, testbed, connections, variant) the report reads is in matrix.toml",
            )
    }
    /// The measurements of the main setup.
    fn m(&self, s: System, t: Testbed, n: u32) -> &[M] {
        self.mv(s, t, n, Variant::Main)
    }
    fn mv(&self, s: System, t: Testbed, n: u32, v: Variant) -> &[M] {
        &self.ms[self.index(s, t, n, v)]
    }
    /// Seed 1's run of the main setup.
    fn first(&self, s: System, t: Testbed, n: u32) -> &RunResult {
        &self.results[self.index(s, t, n, Variant::Main)][0]
    }
    /// Mean of `f` over the main setup's seeds.
    fn mean(&self, s: System, t: Testbed, n: u32, f: impl Fn(&M) -> f64) -> f64 {
        mean(self.m(s, t, n), f)
    }
    fn runs(&self) -> usize {
        self.configs.len() * self.seeds as usize
    }
    fn seeds_s(&self) -> &'static str {
        if self.seeds == 1 {
            ""
        } else {
            "s"
        }
    }
}

/// Run the matrix with every seed and measure every run.
fn run_matrix(o: &Opts, out: &Path, wall: Instant) -> Result<Runs> {
    let seeds = o.seeds;
    let (dur, shortened) = timing(o)?;
    let configs = Matrix::load()?.build(dur)?;
    std::fs::create_dir_all(out).map_err(|e| {
        Error::Input(format!(
            "cannot create output directory {}: {e}",
            out.display()
        ))
    })?;
    let jobs: Vec<(&Scenario, u64)> = configs
        .iter()
        .flat_map(|c| (1..=seeds).map(move |s| (&c.sc, s)))
        .collect();
    let results = run_all(&format!("maxnet-mice: {} runs", jobs.len()), &jobs);
    let sim_wall = wall.elapsed().as_secs_f64();
    let events: u64 = results.iter().map(|r| r.events).sum();
    let mut it = results.into_iter();
    let results: Vec<Vec<RunResult>> = (0..configs.len())
        .map(|_| it.by_ref().take(seeds as usize).collect())
        .collect();
    let ms: Vec<Vec<M>> = configs
        .iter()
        .zip(&results)
        .map(|(c, rs)| rs.iter().map(|r| measure(c, r, dur)).collect())
        .collect::<Result<_>>()?;
    Ok(Runs {
        configs,
        results,
        ms,
        seeds,
        dur,
        shortened,
        events,
        sim_wall,
    })
}

/// This paper in the registry ([`crate::PAPERS`]).
pub const DRIVER: crate::Driver = crate::Driver {
    name: "maxnet-mice",
    about: "Phan, Tran, Nguyen, Thoai: MaxNet vs TCP Reno/RED on HTTP mice with an FTP elephant (MSOCP 2009)",
    default_seeds: 10, // testbed runs; seeds move the elephant's phase
    run,
    matrix_file: MATRIX_FILE,
    matrix_toml: MATRIX_TOML,
    check_matrix,
    fixed_duration: None,
    load: None,
};

pub fn run(o: &Opts, out: &Path) -> Result<Vec<TableRow>> {
    let paper = paper_fractions()?;
    let wall = Instant::now();
    let r = run_matrix(o, out, wall)?;
    let mut t = Tables::new(&r);
    fig5_table(&r, paper, &mut t);
    fig67_table(&r, &mut t);
    fig89_table(&r, &mut t);
    alternatives_table(&r, &mut t);
    write_csv(&t.rows, &out.join("tables.csv"))?;
    print!("{}", t.txt);
    let mut plots = vec![fig5_plot(&r, paper, out)?];
    plots.extend(fig67_plots(&r, out)?);
    plots.extend(fig89_plots(&r, out)?);
    let total_wall = wall.elapsed().as_secs_f64();
    let rep = report(&r, paper, &t.md, total_wall)?;
    aqmlab::output::write_atomic(&out.join("report.md"), rep.as_bytes())?;
    println!(
        "\nreport.md, tables.csv and {} plots (PNG + SVG: {}) in {}. {} runs in {total_wall:.1} s.",
        plots.len(),
        plots.join(", "),
        super::shown(out),
        r.runs()
    );
    Ok(t.rows)
}

/// The rows of `tables.csv` and the text and Markdown tables printed beside them.
struct Tables {
    rows: Vec<TableRow>,
    txt: String,
    md: String,
    n: u64,
}

impl Tables {
    fn new(r: &Runs) -> Tables {
        let txt = format!(
            "MaxNet vs TCP Reno/RED on mice traffic. Mean over {} seed{} (sd in brackets).{}\n\n",
            r.seeds,
            r.seeds_s(),
            if r.shortened {
                format!(
                    " Runs of {} s (--duration), not the default {DURATION_S} s.",
                    r.dur
                )
            } else {
                String::new()
            }
        );
        Tables {
            rows: Vec::new(),
            txt,
            md: String::new(),
            n: r.seeds,
        }
    }

    /// One row of `tables.csv`: mean and sd of `f` over `v`.
    fn push(
        &mut self,
        table: &str,
        row: &str,
        k: &str,
        paper: Option<f64>,
        v: &[M],
        f: fn(&M) -> f64,
    ) {
        self.rows.push(TableRow::new(
            table,
            row,
            k,
            unit_of(k),
            paper,
            mean(v, f),
            sd(v, f),
            self.n,
        ));
    }

    /// A table printed (`txt_title`) and in the report (`md_title`).
    fn section(&mut self, txt_title: &str, md_title: &str, head: &[&str], rows: &[Vec<String>]) {
        let head: Vec<String> = head.iter().map(|s| s.to_string()).collect();
        let _ = writeln!(self.txt, "{txt_title}:\n{}", text_table(&head, rows));
        let _ = writeln!(self.md, "### {md_title}\n\n{}", md_rows(&head, rows));
    }
}

/// Fig. 5: responses within 135 ms and the median, 10 Mbit/s.
fn fig5_table(r: &Runs, (paper_mx, paper_rr): (f64, f64), t: &mut Tables) {
    let mut rows = Vec::new();
    for n in [200u32, 50] {
        for s in [System::MaxNet, System::RenoRed] {
            let v = r.m(s, Testbed::Slow, n);
            let paper = match (s, n) {
                (System::MaxNet, 200) => Some(paper_mx),
                (System::RenoRed, 200) => Some(paper_rr),
                _ => None,
            };
            let f = mean(v, |m| m.frac);
            rows.push(vec![
                s.name().to_string(),
                n.to_string(),
                paper.map_or("–".into(), |p| {
                    if s == System::RenoRed {
                        format!("≈{}", pct(p))
                    } else {
                        pct(p)
                    }
                }),
                format!("{} ({:.1})", pct(f), 100.0 * sd(v, |m| m.frac)),
                format!("{:.1}", mean(v, |m| m.median_ms)),
                format!("{:.1}/{n}", mean(v, |m| m.completed as f64)),
            ]);
            let row = format!("{}, {n} connections, 10 Mbit/s", s.key());
            t.push("Fig. 5", &row, "fraction_le_135ms", paper, v, |m| m.frac);
            t.push("Fig. 5", &row, "median_response_ms", None, v, |m| {
                m.median_ms
            });
        }
    }
    t.section(
        "Fig. 5 — HTTP response time (request's first byte → response's first byte), 10 Mbit/s testbed",
        "Fig. 5 — response times",
        &["system", "connections", "paper: ≤ 135 ms", "aqmlab: ≤ 135 ms", "median (ms)", "responses"],
        &rows,
    );
}

/// Figs. 6–7: the elephant's goodput before and after the join.
fn fig67_table(r: &Runs, t: &mut Tables) {
    let mut rows = Vec::new();
    for n in [50u32, 200] {
        for s in [System::MaxNet, System::RenoRed] {
            let v = r.m(s, Testbed::Slow, n);
            let paper = match s {
                System::MaxNet => "not impacted",
                System::RenoRed => "drops; worse with 200",
            };
            rows.push(vec![
                s.name().into(),
                n.to_string(),
                paper.into(),
                format!("{:.2}", mean(v, |m| m.ele_before)),
                format!(
                    "{:.2} ({:.2})",
                    mean(v, |m| m.ele_after),
                    sd(v, |m| m.ele_after)
                ),
                format!("{:.2}", mean(v, |m| m.ele_min)),
                format!("{:.1}", mean(v, |m| m.ele_drops as f64)),
                format!("{:.1}", mean(v, |m| m.ele_timeouts as f64)),
            ]);
            let fig = if n == 50 { "Fig. 6" } else { "Fig. 7" };
            let row = format!("{}, {n} connections, 10 Mbit/s", s.key());
            t.push(fig, &row, "elephant_mbps_10_20s", None, v, |m| m.ele_before);
            t.push(fig, &row, "elephant_mbps_20_25s", None, v, |m| m.ele_after);
            t.push(fig, &row, "elephant_min_bin_mbps_20_25s", None, v, |m| {
                m.ele_min
            });
            t.push(fig, &row, "elephant_drops", None, v, |m| m.ele_drops as f64);
        }
    }
    t.section(
        "Figs. 6–7 — the elephant's goodput before and after the HTTP connections join at 20 s",
        "Figs. 6–7 — elephant throughput",
        &[
            "system",
            "connections",
            "paper",
            "before (Mbit/s)",
            "20–25 s (Mbit/s)",
            "min 0.5-s bin",
            "elephant drops",
            "timeouts",
        ],
        &rows,
    );
}

/// Figs. 8–9: Router1's backlog with 100 Mbit/s router links.
fn fig89_table(r: &Runs, t: &mut Tables) {
    let mut rows = Vec::new();
    for s in [System::RenoRed, System::MaxNet] {
        let v = r.m(s, Testbed::Fast, 200);
        let paper = match s {
            System::RenoRed => "Fig. 8: always a backlog",
            System::MaxNet => "Fig. 9: short transient at the join",
        };
        rows.push(vec![
            s.name().into(),
            paper.into(),
            format!("{:.2} pkts", mean(v, |m| m.q_before)),
            format!("{:.2} pkts", mean(v, |m| m.q_after)),
            pct(mean(v, |m| m.q_backlogged)),
            format!("{:.0} pkts", mean(v, |m| m.q_peak)),
            format!("{:.0} ms", 1e3 * mean(v, |m| m.q_busy_s)),
        ]);
        let fig = if s == System::RenoRed {
            "Fig. 8"
        } else {
            "Fig. 9"
        };
        let row = format!("{}, 200 connections, 100 Mbit/s", s.key());
        t.push(fig, &row, "backlog_mean_10_20s_pkts", None, v, |m| {
            m.q_before
        });
        t.push(fig, &row, "backlog_mean_after_25s_pkts", None, v, |m| {
            m.q_after
        });
        t.push(fig, &row, "backlog_above_5pkts_after_25s", None, v, |m| {
            m.q_backlogged
        });
        t.push(fig, &row, "backlog_peak_20_22s_pkts", None, v, |m| m.q_peak);
        t.push(fig, &row, "time_above_5pkts_20_25s_s", None, v, |m| {
            m.q_busy_s
        });
    }
    t.section(
        "Figs. 8–9 — backlog at Router1 (packets), both router links at 100 Mbit/s, 200 connections at 20 s",
        "Figs. 8–9 — Router1 backlog",
        &[
            "router",
            "paper",
            "mean backlog 10–20 s",
            "mean backlog after 25 s",
            "> 5 pkts after 25 s",
            "peak 20–22 s",
            "time > 5 pkts in 20–25 s",
        ],
        &rows,
    );
}

/// Fig. 5's fraction under the two alternatives to our choices.
fn alternatives_table(r: &Runs, t: &mut Tables) {
    let mut rows = Vec::new();
    for (v, label) in [
        (
            Variant::Main,
            "main: client beside the FTP source, all at 20 s",
        ),
        (
            Variant::Swapped,
            "web server beside the FTP source (responses cross Router1)",
        ),
        (
            Variant::Poisson,
            "Poisson arrivals, 10 connections/s from 20 s",
        ),
    ] {
        let f = |s: System| mean(r.mv(s, Testbed::Slow, 200, v), |m| m.frac);
        rows.push(vec![
            label.into(),
            pct(f(System::MaxNet)),
            pct(f(System::RenoRed)),
        ]);
        if v != Variant::Main {
            let table = if v == Variant::Swapped {
                "Fig. 5, swapped"
            } else {
                "Fig. 5, poisson"
            };
            for s in [System::MaxNet, System::RenoRed] {
                let row = format!("{}, 200 connections, 10 Mbit/s", s.key());
                let x = r.mv(s, Testbed::Slow, 200, v);
                t.push(table, &row, "fraction_le_135ms", None, x, |m| m.frac);
            }
        }
    }
    t.section(
        "Fig. 5's fraction under two alternatives to our choices (not in the paper)",
        "Fig. 5 under alternatives to our choices (not in the paper)",
        &[
            "setup (200 connections, 10 Mbit/s)",
            "MaxNet ≤ 135 ms",
            "Reno/RED ≤ 135 ms",
        ],
        &rows,
    );
}

/// Fig. 5: the CDF of the response times, pooled over seeds.
fn fig5_plot(r: &Runs, (paper_mx, paper_rr): (f64, f64), out: &Path) -> Result<&'static str> {
    let cdf = |s: System| -> (Vec<(f64, f64)>, f64) {
        let mut v: Vec<f64> = r
            .m(s, Testbed::Slow, 200)
            .iter()
            .flat_map(|m| m.rts.iter().copied())
            .collect();
        v.sort_by(|a, b| a.total_cmp(b));
        let n = v.len().max(1) as f64;
        let cut = 0.3;
        let mut pts = vec![(0.0, 0.0)];
        for (i, t) in v.iter().enumerate() {
            if *t > cut {
                break;
            }
            pts.push((t * 1e3, i as f64 / n));
            pts.push((t * 1e3, (i + 1) as f64 / n));
        }
        let within = v.iter().filter(|t| **t <= cut).count() as f64 / n;
        pts.push((cut * 1e3, within));
        (pts, 1.0 - within)
    };
    let (c_mx, beyond_mx) = cdf(System::MaxNet);
    let (c_rr, beyond_rr) = cdf(System::RenoRed);
    plot::lines(
        &Lines {
            title: "Fig. 5 — HTTP response time (CDF)".into(),
            subtitle: format!(
                "200 connections at 20 s, 10 Mbit/s; {} responses per system ({} seed{}); x cut at 300 ms (beyond: MaxNet {}, Reno/RED {}); ticks: paper at 135 ms",
                200 * r.seeds,
                r.seeds,
                r.seeds_s(),
                pct(beyond_mx),
                pct(beyond_rr)
            ),
            x_desc: "response time (ms)".into(),
            y_desc: "fraction of responses".into(),
            series: vec![
                ("MaxNet".into(), c_mx),
                ("Reno/RED".into(), c_rr),
                ("135 ms".into(), vec![(135.0, 0.0), (135.0, 1.0)]),
                ("paper, MaxNet".into(), vec![(120.0, paper_mx), (150.0, paper_mx)]),
                ("paper, Reno/RED".into(), vec![(120.0, paper_rr), (150.0, paper_rr)]),
            ],
            panels: false,
        },
        &out.join("fig5_response_time_cdf"),
    )?;
    Ok("fig5_response_time_cdf")
}

/// Figs. 6–7: seed 1's elephant goodput over time.
fn fig67_plots(r: &Runs, out: &Path) -> Result<Vec<&'static str>> {
    let mut plots = Vec::new();
    for (fig, n, stem) in [
        (6, 50u32, "fig6_elephant_50_http"),
        (7, 200, "fig7_elephant_200_http"),
    ] {
        let series = |s: System| -> Vec<(f64, f64)> {
            r.first(s, Testbed::Slow, n)
                .throughput
                .iter()
                .find(|t| t.group == "ftp")
                .map(|t| {
                    t.bps()
                        .filter(|(x, _)| *x + t.bin_s <= r.dur + 1e-9)
                        .map(|(x, b)| (x + t.bin_s / 2.0, b / 1e6))
                        .collect()
                })
                .unwrap_or_default()
        };
        plot::lines(
            &Lines {
                title: format!(
                    "Fig. {fig} — elephant throughput when {n} HTTP connections join at 20 s"
                ),
                subtitle: format!(
                    "10 Mbit/s bottleneck, 20 ms RTT; goodput in 0.5-s bins, seed 1; MaxNet targets μC = 9.5 Mbit/s on the wire ({:.2} Mbit/s of payload)",
                    9.5 / WIRE
                ),
                x_desc: "time (s)".into(),
                y_desc: "elephant goodput (Mbit/s)".into(),
                series: vec![
                    ("MaxNet".into(), series(System::MaxNet)),
                    ("Reno/RED".into(), series(System::RenoRed)),
                    ("HTTP connections open".into(), vec![(JOIN_S, 0.0), (JOIN_S, 10.0)]),
                ],
                panels: false,
            },
            &out.join(stem),
        )?;
        plots.push(stem);
    }
    Ok(plots)
}

/// Seed 1's Router1 backlog (or RED's average) at 100 Mbit/s over [t0, t1].
fn backlog(r: &Runs, s: System, t0: f64, t1: f64, avg: bool) -> Vec<(f64, f64)> {
    r.first(s, Testbed::Fast, 200)
        .series
        .iter()
        .find(|x| x.link == LINK)
        .map(|x| {
            x.samples
                .iter()
                .filter(|q| q.time_s >= t0 && q.time_s <= t1)
                .map(|q| {
                    let v = if avg {
                        q.avg_pkts.unwrap_or(0.0)
                    } else {
                        q.len_pkts as f64
                    };
                    (q.time_s, v)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Figs. 8–9: seed 1's Router1 backlog at 100 Mbit/s, and both around the join.
fn fig89_plots(r: &Runs, out: &Path) -> Result<Vec<&'static str>> {
    let mut plots = Vec::new();
    plot::lines(
        &Lines {
            title: "Fig. 8 — backlog at the RED router (Router1), 100 Mbit/s links".into(),
            subtitle: "one Reno elephant, 200 HTTP connections at 20 s; RED w_q = 0.002, min_th = 30, max_th = 90, max_p = 0.1; seed 1; near 1 s: slow start".into(),
            x_desc: "time (s)".into(),
            y_desc: "backlog (packets)".into(),
            series: vec![
                ("instantaneous".into(), backlog(r, System::RenoRed, 0.0, r.dur, false)),
                ("RED average".into(), backlog(r, System::RenoRed, 0.0, r.dur, true)),
            ],
            panels: false,
        },
        &out.join("fig8_backlog_red"),
    )?;
    plots.push("fig8_backlog_red");
    plot::lines(
        &Lines {
            title: "Fig. 9 — backlog at the MaxNet router (Router1), 100 Mbit/s links".into(),
            subtitle: "one MaxNet elephant, 200 HTTP connections at 20 s; μ = 0.95; seed 1; near 1 s: the elephant's first MaxStart window, sent unpaced".into(),
            x_desc: "time (s)".into(),
            y_desc: "backlog (packets)".into(),
            series: vec![(
                "instantaneous".into(),
                backlog(r, System::MaxNet, 0.0, r.dur, false),
            )],
            panels: false,
        },
        &out.join("fig9_backlog_maxnet"),
    )?;
    plots.push("fig9_backlog_maxnet");
    plot::lines(
        &Lines {
            title: "Figs. 8–9 zoomed: Router1 backlog around the join (100 Mbit/s links)".into(),
            subtitle: "19.5–21.5 s, seed 1; the 200 connections open at 20 s".into(),
            x_desc: "time (s)".into(),
            y_desc: "backlog (packets)".into(),
            series: vec![
                (
                    "Reno/RED".into(),
                    backlog(r, System::RenoRed, 19.5, 21.5, false),
                ),
                (
                    "MaxNet".into(),
                    backlog(r, System::MaxNet, 19.5, 21.5, false),
                ),
            ],
            panels: true,
        },
        &out.join("fig8_9_backlog_zoom"),
    )?;
    plots.push("fig8_9_backlog_zoom");
    Ok(plots)
}

/// The report: `templates/maxnet-mice.md` filled from the run.
fn report(r: &Runs, paper: (f64, f64), tables: &str, total_wall: f64) -> Result<String> {
    let mut vars = setup_vars(r, total_wall)?;
    vars.extend(response_vars(r, paper)?);
    vars.extend(elephant_vars(r));
    vars.extend(backlog_vars(r)?);
    vars.push(("tables", tables.to_string()));
    render(REPORT, &vars)
}

type Vars = Vec<(&'static str, String)>;

/// The run's size and time, the scenario files and the alternatives' fractions.
fn setup_vars(r: &Runs, total_wall: f64) -> Result<Vars> {
    let frac = |s: System, v: Variant| pct(mean(r.mv(s, Testbed::Slow, 200, v), |m| m.frac));
    Ok(vec![
        ("configs", r.configs.len().to_string()),
        ("seeds", r.seeds.to_string()),
        ("seeds_s", r.seeds_s().to_string()),
        ("runs", r.runs().to_string()),
        ("events", r.events.to_string()),
        ("sim_wall", format!("{:.1}", r.sim_wall)),
        ("total_wall", format!("{total_wall:.1}")),
        (
            "duration_note",
            if r.shortened {
                render_part(
                    PARTS,
                    "duration-note",
                    &[
                        ("dur", r.dur.to_string()),
                        ("paper_dur", DURATION_S.to_string()),
                    ],
                )?
            } else {
                String::new()
            },
        ),
        ("maxnet_file", MAXNET_FILE.to_string()),
        ("reno_file", RENO_FILE.to_string()),
        ("swapped_mx", frac(System::MaxNet, Variant::Swapped)),
        ("swapped_rr", frac(System::RenoRed, Variant::Swapped)),
        ("poisson_mx", frac(System::MaxNet, Variant::Poisson)),
        ("poisson_rr", frac(System::RenoRed, Variant::Poisson)),
        (
            "drops_mx",
            format!(
                "{:.1}",
                r.mean(System::MaxNet, Testbed::Slow, 200, |m| m.link_drops as f64)
            ),
        ),
        (
            "drops_rr",
            format!(
                "{:.1}",
                r.mean(System::RenoRed, Testbed::Slow, 200, |m| m.link_drops as f64)
            ),
        ),
    ])
}

/// Fig. 5: the fractions against the paper's, queues and late responses.
fn response_vars(r: &Runs, (paper_mx, paper_rr): (f64, f64)) -> Result<Vars> {
    let slow = |s: System, f: fn(&M) -> f64| r.mean(s, Testbed::Slow, 200, f);
    let (fr_mx, fr_rr) = (
        slow(System::MaxNet, |m| m.frac),
        slow(System::RenoRed, |m| m.frac),
    );
    let rr = r.m(System::RenoRed, Testbed::Slow, 200);
    let (q5, q95) = (mean(rr, |m| m.q_p5), mean(rr, |m| m.q_p95));
    let late: u32 = rr.iter().map(|m| m.late).sum();
    let late_retx: u32 = rr.iter().map(|m| m.late_req_retx).sum();
    let late_share = pick(PARTS, 2 * late_retx > late, "late-mostly", "late-partly")?;
    let mx = r.m(System::MaxNet, Testbed::Slow, 200);
    Ok(vec![
        ("frac_mx", pct(fr_mx)),
        (
            "frac_mx_verdict",
            verdict::compare(fr_mx, paper_mx, FRAC_TOL, "", 3),
        ),
        (
            "q_mx",
            format!("{:.2}", slow(System::MaxNet, |m| m.q_before)),
        ),
        (
            "util_mx",
            format!("{:.3}", slow(System::MaxNet, |m| m.util_before)),
        ),
        (
            "mx_late_retx",
            mx.iter().map(|m| m.late_req_retx).sum::<u32>().to_string(),
        ),
        (
            "mx_late",
            mx.iter().map(|m| m.late).sum::<u32>().to_string(),
        ),
        (
            "med_mx",
            format!("{:.1}", slow(System::MaxNet, |m| m.median_ms)),
        ),
        ("frac_rr", pct(fr_rr)),
        (
            "frac_rr_verdict",
            verdict::compare(fr_rr, paper_rr, FRAC_TOL, "", 3),
        ),
        (
            "med_rr",
            format!("{:.1}", slow(System::RenoRed, |m| m.median_ms)),
        ),
        (
            "q_rr",
            format!("{:.1}", slow(System::RenoRed, |m| m.q_before)),
        ),
        ("q5", format!("{q5:.0}")),
        ("q95", format!("{q95:.0}")),
        ("q5_ms", format!("{:.0}", q5 * 1.2)),
        ("q95_ms", format!("{:.0}", q95 * 1.2)),
        ("late_share", late_share),
        ("late_retx", late_retx.to_string()),
        ("late", late.to_string()),
        ("late_med", format!("{:.0}", mean(rr, |m| m.late_median_ms))),
    ])
}

/// Figs. 6–7: the elephant's goodput and the findings on it.
fn elephant_vars(r: &Runs) -> Vars {
    let ele = |s: System, n: u32, f: fn(&M) -> f64| r.mean(s, Testbed::Slow, n, f);
    let rr_dips = {
        let (b, a50, a200) = (
            ele(System::RenoRed, 200, |m| m.ele_before),
            ele(System::RenoRed, 50, |m| m.ele_after),
            ele(System::RenoRed, 200, |m| m.ele_after),
        );
        a200 < a50 && a50 < b
    };
    let mx_keeps = [50, 200].iter().all(|&n| {
        ele(System::MaxNet, n, |m| m.ele_after)
            >= (1.0 - KEEP_TOL) * ele(System::MaxNet, 200, |m| m.ele_before)
    });
    let f2 = |s: System, n: u32, f: fn(&M) -> f64| format!("{:.2}", ele(s, n, f));
    vec![
        ("rr_dips", finding_word(rr_dips).to_string()),
        ("rr_before", f2(System::RenoRed, 200, |m| m.ele_before)),
        ("rr_after_50", f2(System::RenoRed, 50, |m| m.ele_after)),
        ("rr_after_200", f2(System::RenoRed, 200, |m| m.ele_after)),
        ("rr_min_50", f2(System::RenoRed, 50, |m| m.ele_min)),
        ("rr_min_200", f2(System::RenoRed, 200, |m| m.ele_min)),
        ("mx_keeps", finding_word(mx_keeps).to_string()),
        ("mx_before", f2(System::MaxNet, 200, |m| m.ele_before)),
        ("mx_after_50", f2(System::MaxNet, 50, |m| m.ele_after)),
        ("mx_after_200", f2(System::MaxNet, 200, |m| m.ele_after)),
        ("mx_min_200", f2(System::MaxNet, 200, |m| m.ele_min)),
    ]
}

/// Figs. 8–9: Router1's backlog at 100 Mbit/s and its verdicts.
fn backlog_vars(r: &Runs) -> Result<Vars> {
    let fast = |s: System, f: fn(&M) -> f64| r.mean(s, Testbed::Fast, 200, f);
    let (mx_queue, rr_queue) = fig89_verdicts(
        (
            fast(System::MaxNet, |m| m.q_after),
            fast(System::MaxNet, |m| m.q_backlogged),
        ),
        (
            fast(System::RenoRed, |m| m.q_after),
            fast(System::RenoRed, |m| m.q_backlogged),
        ),
    )?;
    Ok(vec![
        ("mx_queue", mx_queue),
        (
            "mx_peak",
            format!("{:.0}", fast(System::MaxNet, |m| m.q_peak)),
        ),
        (
            "mx_busy_ms",
            format!("{:.0}", 1e3 * fast(System::MaxNet, |m| m.q_busy_s)),
        ),
        (
            "mx_after_q",
            format!("{:.2}", fast(System::MaxNet, |m| m.q_after)),
        ),
        (
            "mx_backlogged",
            pct(fast(System::MaxNet, |m| m.q_backlogged)),
        ),
        ("rr_queue", rr_queue),
        (
            "rr_after_q",
            format!("{:.2}", fast(System::RenoRed, |m| m.q_after)),
        ),
        (
            "rr_backlogged",
            pct(fast(System::RenoRed, |m| m.q_backlogged)),
        ),
    ])
}

/// How far the fraction of responses within 135 ms may lie from the paper's
/// and still agree (absolute).
const FRAC_TOL: Tol = Tol::Abs(0.1);
/// An elephant "keeps its rate" when its goodput after the join is at least
/// this fraction below its goodput before.
const KEEP_TOL: f64 = 0.1;
/// Figs. 8–9: the MaxNet queue agrees with the paper's empty queue when its
/// mean after 25 s is at most this many packets…
const EMPTY_MAX_PKTS: f64 = 2.0;
/// …and it holds more than 5 packets in at most this fraction of samples.
const EMPTY_MAX_BUSY: f64 = 0.05;
/// The RED queue agrees with the paper's constant backlog when it holds more
/// than 5 packets in at least this fraction of the samples after 25 s.
const BACKLOG_MIN_BUSY: f64 = 0.95;

fn finding_word(ok: bool) -> &'static str {
    if ok {
        "holds"
    } else {
        "does not hold"
    }
}

/// The verdicts on Figs. 8–9 from (mean queue after 25 s in packets,
/// fraction of samples above 5 packets) under MaxNet and Reno/RED.
fn fig89_verdicts(mx: (f64, f64), rr: (f64, f64)) -> Result<(String, String)> {
    let mx_ok = mx.0 <= EMPTY_MAX_PKTS && mx.1 <= EMPTY_MAX_BUSY;
    let rr_ok = rr.1 >= BACKLOG_MIN_BUSY;
    Ok((
        render_part(
            PARTS,
            "fig9-queue",
            &[
                ("verdict", verdict::word(mx_ok).to_string()),
                ("max_pkts", EMPTY_MAX_PKTS.to_string()),
                ("max_busy_pct", format!("{:.0}", 100.0 * EMPTY_MAX_BUSY)),
            ],
        )?,
        render_part(
            PARTS,
            "fig8-queue",
            &[
                ("verdict", verdict::word(rr_ok).to_string()),
                ("min_busy_pct", format!("{:.0}", 100.0 * BACKLOG_MIN_BUSY)),
            ],
        )?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fig89_verdicts_flip_outside_the_tolerance() {
        let (m, r) = fig89_verdicts((1.0, 0.01), (30.0, 0.99)).unwrap();
        assert!(
            m.starts_with("agrees") && r.starts_with("agrees"),
            "{m} / {r}"
        );
        let (m, r) = fig89_verdicts((2.5, 0.01), (30.0, 0.5)).unwrap();
        assert!(
            m.starts_with("differs") && r.starts_with("differs"),
            "{m} / {r}"
        );
        let (m, _) = fig89_verdicts((1.0, 0.06), (30.0, 0.99)).unwrap();
        assert!(m.starts_with("differs"), "{m}");
    }

    #[test]
    fn matrix_has_every_configuration_the_report_reads() {
        let configs = Matrix::load().unwrap().build(25.0).unwrap();
        assert_eq!(configs.len(), 10);
        let has = |s, t, n, v| {
            configs
                .iter()
                .any(|c| c.system == s && c.testbed == t && c.conns == n && c.variant == v)
        };
        for s in [System::MaxNet, System::RenoRed] {
            for (t, n, v) in [
                (Testbed::Slow, 200, Variant::Main),
                (Testbed::Slow, 50, Variant::Main),
                (Testbed::Fast, 200, Variant::Main),
                (Testbed::Slow, 200, Variant::Swapped),
                (Testbed::Slow, 200, Variant::Poisson),
            ] {
                assert!(has(s, t, n, v), "{s:?} {t:?} {n} {v:?}");
            }
        }
    }

    #[test]
    fn paper_fractions_load_from_the_toml() {
        assert_eq!(paper_fractions().unwrap(), (1.0, 0.3));
    }

    #[test]
    fn response_fraction_verdict_flips() {
        assert!(verdict::compare(0.95, 1.0, FRAC_TOL, "", 3).starts_with("agrees"));
        assert!(verdict::compare(0.85, 1.0, FRAC_TOL, "", 3).starts_with("differs"));
    }
}
