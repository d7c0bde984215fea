//! Reproduction of N. Osipova, A. Blanc, K. Avrachenkov, "Improving TCP
//! Fairness with MarkMax Policy" (slides): the tables
//! "NS2 simulations – results scheme1" (two New Reno flows, δ2/δ1 ∈ {3, 7,
//! 10, 20}) and "results scheme2" (three flows, δ3 = δ2, δ2/δ1 ∈ {7, 10, 20,
//! 50}) — Jain's index J of the goodputs, bottleneck utilisation ρ and mean
//! queueing delay T̄ under DropTail (240 packets) and MarkMax (θ = 240,
//! θ_l = 200, θ_h = 280) — and the cwnd figures for δ2/δ1 = 7 and 10.
//!
//! Scenarios: `scenarios/papers/markmax/scheme1.toml` and `scheme2.toml`
//! (every parameter the paper leaves open is chosen and explained there).
//! Each configuration runs with seeds `1..=N` (the seed moves the flows'
//! start times), all runs in parallel (rayon) with a progress bar.
//!
//! Measurement window: J, ρ and T̄ are measured over [50 s, 300 s], after
//! the slow-start transient. Runs are deterministic, so a run stopped at
//! 50 s is the exact prefix of the full run; every quantity over the window
//! is the full run's counter minus the prefix run's (goodput from bytes
//! acknowledged, ρ from the transmitter's busy time, T̄ from the sum of
//! per-packet sojourn times). Whole-run values are reported too.
//!
//! Besides the paper's configurations, two readings of what the paper leaves
//! open are rerun for the report's sensitivity table: δ_i taken as the flow's
//! round-trip propagation delay instead of the access link's one-way delay,
//! and 500-byte segments instead of 1000-byte ones (scheme 1).
//!
//! `--duration` changes every run's length (warm-up one sixth of it), for
//! quick checks and tests or for longer looks at convergence; the report
//! then says so.

use super::common::{check_conservation, md_rows, text_table};
use super::paper::Paper;
use super::stats::Summary;
use super::table::{write_csv, TableRow};
use super::verdict::{self, Tol};
use super::Opts;
use crate::plot::{self, BarPanel, GroupedBars, PanelLines};
use crate::progress::par_map;
use crate::{CliError, CliResult};
use aqmlab::fluid::markmax as fluid;
use aqmlab::metrics::jain;
use aqmlab::{RunResult, Scenario, Simulation};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Instant;

const SCHEME1_TOML: &str = include_str!("../../../../scenarios/papers/markmax/scheme1.toml");
const SCHEME2_TOML: &str = include_str!("../../../../scenarios/papers/markmax/scheme2.toml");
const SCHEME_FILES: [&str; 2] = [
    "scenarios/papers/markmax/scheme1.toml",
    "scenarios/papers/markmax/scheme2.toml",
];

/// δ1 (paper: "δ1 = 12 ms").
const DELTA1_MS: f64 = 12.0;
/// Duration and warm-up of the paper runs (our choice; the paper gives none).
const DURATION_S: f64 = 300.0;
const WARMUP_S: f64 = 50.0;
/// The monitored bottleneck port.
const BOTTLENECK: &str = "r->d";
/// Bottleneck rate (paper: μ = 70 Mbit/s).
const MU_BPS: f64 = 70e6;
/// MarkMax θ, packets (paper: 240 MSS), and TCP's window reduction factor.
const THETA: f64 = 240.0;
const BETA: f64 = 0.5;

// ---- the paper's numbers: scenarios/papers/markmax/paper.toml ------------

const PAPER_TOML: &str = include_str!("../../../../scenarios/papers/markmax/paper.toml");

/// The δ2/δ1 values of the paper's tables, per scheme (the experiment
/// matrix: every one is run).
const RATIOS: [[f64; 4]; 2] = [[3.0, 7.0, 10.0, 20.0], [7.0, 10.0, 20.0, 50.0]];

/// One row of the paper's tables: δ2/δ1; J, ρ, T̄ (ms) under DropTail; the
/// same under MarkMax.
struct PaperRow {
    ratio: f64,
    dt: [f64; 3],
    mm: [f64; 3],
}

static PAPER: OnceLock<[[PaperRow; 4]; 2]> = OnceLock::new();

/// Read `paper.toml` (once; [`run`] does it first, so a broken file is an
/// error there).
fn load_paper() -> CliResult<&'static [[PaperRow; 4]; 2]> {
    if let Some(p) = PAPER.get() {
        return Ok(p);
    }
    let p = Paper::parse(PAPER_TOML, "scenarios/papers/markmax/paper.toml")?;
    let three = |table: &str, q: &str, r: f64| -> CliResult<[f64; 3]> {
        let row = format!("{q}, delta_ratio={r}");
        let v = |c: &str| p.get(table, &row, c).map(|x| x.value);
        Ok([v("J")?, v("rho")?, v("T_ms")?])
    };
    let mut rows: Vec<PaperRow> = Vec::new();
    for (si, ratios) in RATIOS.iter().enumerate() {
        let table = format!("scheme {}", si + 1);
        for &ratio in ratios {
            rows.push(PaperRow {
                ratio,
                dt: three(&table, "DropTail", ratio)?,
                mm: three(&table, "MarkMax", ratio)?,
            });
        }
    }
    let mut it = rows.into_iter();
    let mut four = || -> [PaperRow; 4] { std::array::from_fn(|_| it.next().expect("4 rows")) };
    let both = [four(), four()];
    Ok(PAPER.get_or_init(|| both))
}

/// The paper's rows of a scheme (1 or 2).
fn paper_rows(scheme: usize) -> &'static [PaperRow; 4] {
    let p = load_paper().expect("paper.toml is read and checked at the start of run");
    &p[if scheme == 1 { 0 } else { 1 }]
}

// ---- configurations ------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Queue {
    DropTail,
    MarkMax,
}

impl Queue {
    fn name(self) -> &'static str {
        match self {
            Queue::DropTail => "DropTail",
            Queue::MarkMax => "MarkMax",
        }
    }
    fn overrides(self) -> [&'static str; 2] {
        match self {
            Queue::DropTail => [
                "links.bottleneck.queue_ab={ kind = \"droptail\", limit = 240 }",
                "tcp.ecn=false",
            ],
            Queue::MarkMax => [
                "links.bottleneck.queue_ab={ kind = \"markmax\", limit = 1000, theta = 240, \
                 theta_low = 200, theta_high = 280 }",
                "tcp.ecn=true",
            ],
        }
    }
}

/// The paper's configuration or one of the sensitivity readings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    /// δ_i = one-way delay of access link i; 1000-byte segments.
    Main,
    /// δ_i = the flow's round-trip propagation delay (access link δ_i/2).
    DeltaIsRtt,
    /// 500-byte segments (540 bytes on the wire).
    Segments500,
    /// A 12 ms propagation delay on the bottleneck (base RTT of flow 1:
    /// 48 ms instead of 24 ms).
    BottleneckDelay,
    /// Runs 10/3 times longer (1000 s), same warm-up: do the long-RTT
    /// flows reach their share given more time?
    Long,
}

impl Variant {
    fn label(self) -> &'static str {
        match self {
            Variant::Main => "main",
            Variant::DeltaIsRtt => "delta-is-rtt",
            Variant::Segments500 => "500-byte-segments",
            Variant::BottleneckDelay => "bottleneck-delay-12ms",
            Variant::Long => "1000s",
        }
    }
    fn describe(self) -> &'static str {
        match self {
            Variant::Main => "δ_i one-way access delay, 1000-B segments (our reading)",
            Variant::DeltaIsRtt => "δ_i = round-trip propagation delay",
            Variant::Segments500 => "500-B segments (540 B on the wire)",
            Variant::BottleneckDelay => "12 ms bottleneck propagation delay",
            Variant::Long => "runs of 1000 s",
        }
    }

    /// The sensitivity readings and the (scheme, δ2/δ1) they are run for.
    fn runs_for(self, scheme: usize, ratio: f64) -> bool {
        match self {
            Variant::Main | Variant::DeltaIsRtt | Variant::BottleneckDelay => true,
            Variant::Segments500 => scheme == 1,
            Variant::Long => ratio >= 20.0,
        }
    }

    const ALL: [Variant; 5] = [
        Variant::Main,
        Variant::DeltaIsRtt,
        Variant::BottleneckDelay,
        Variant::Segments500,
        Variant::Long,
    ];
}

struct Config {
    scheme: usize,
    ratio: f64,
    queue: Queue,
    variant: Variant,
    sc: Scenario,
    /// Packets per second the bottleneck serves (full-size segments).
    pps: f64,
    /// One-way access delays, ms.
    access_ms: Vec<f64>,
}

/// Run length and warm-up, seconds, and whether `--duration` changed them.
fn timing(o: &Opts) -> CliResult<(f64, f64, bool)> {
    let (d, changed) = o.duration_or(DURATION_S, 1.0, "one second at least")?;
    Ok(if changed {
        (d, d / 6.0, true)
    } else {
        (DURATION_S, WARMUP_S, false)
    })
}

fn build_config(
    scheme: usize,
    ratio: f64,
    queue: Queue,
    variant: Variant,
    dur: f64,
) -> CliResult<Config> {
    let n_flows = if scheme == 1 { 2 } else { 3 };
    let d2 = DELTA1_MS * ratio;
    let mut delays: Vec<f64> = vec![DELTA1_MS, d2, d2];
    delays.truncate(n_flows);
    if variant == Variant::DeltaIsRtt {
        for d in delays.iter_mut() {
            *d /= 2.0;
        }
    }
    let mut ov: Vec<String> = queue.overrides().iter().map(|s| s.to_string()).collect();
    for (i, d) in delays.iter().enumerate() {
        ov.push(format!("links.access{}.delay=\"{d}ms\"", i + 1));
    }
    let dur = if variant == Variant::Long {
        dur * 10.0 / 3.0
    } else {
        dur
    };
    ov.push(format!("duration=\"{dur}s\""));
    if variant == Variant::BottleneckDelay {
        ov.push("links.bottleneck.delay=\"12ms\"".into());
    }
    let mut mss = 1000.0;
    if variant == Variant::Segments500 {
        ov.push("tcp.mss=500".into());
        mss = 500.0;
    }
    let (text, file) = if scheme == 1 {
        (SCHEME1_TOML, SCHEME_FILES[0])
    } else {
        (SCHEME2_TOML, SCHEME_FILES[1])
    };
    let sc = Scenario::from_toml_with(text, file, &ov)
        .map_err(|e| CliError::Internal(format!("built-in scenario: {e}")))?;
    Ok(Config {
        scheme,
        ratio,
        queue,
        variant,
        sc,
        pps: MU_BPS / ((mss + 40.0) * 8.0),
        access_ms: delays,
    })
}

// ---- one run -------------------------------------------------------------

/// What one run contributes (window = [warm-up, end]).
#[derive(Clone, Debug, Default)]
struct RunSummary {
    /// Goodput of each flow over the window, bit/s.
    goodput: Vec<f64>,
    j: f64,
    rho: f64,
    t_ms: f64,
    /// The same over the whole run.
    j_all: f64,
    rho_all: f64,
    t_all_ms: f64,
    /// Time-averaged queue over the window, packets.
    mean_q: f64,
    /// Over the window: bottleneck marks and drops; per flow: ECN window
    /// reductions, timeouts, fast retransmits.
    marks: u64,
    drops: u64,
    ecn_red: Vec<u64>,
    timeouts: Vec<u64>,
    fast_rtx: Vec<u64>,
    /// Largest queue over the whole run, packets (max sojourn · rate).
    max_q: f64,
    /// Drops anywhere but the bottleneck (host and ACK queues, link loss).
    other_drops: u64,
    /// Overflow drops at a MarkMax bottleneck (DropTail on overflow).
    overflow: u64,
    /// The prefix run's counters are all ≤ the full run's.
    prefix_ok: bool,
    events: u64,
    /// cwnd traces (time s, cwnd segments) per flow, for the plots.
    cwnd: Option<Vec<Vec<(f64, f64)>>>,
}

fn summarize(
    c: &Config,
    a: &RunResult,
    b: &RunResult,
    warm: f64,
    keep_cwnd: bool,
) -> CliResult<RunSummary> {
    check_conservation(b)?;
    let miss = || CliError::Internal(format!("{}: no queue `{BOTTLENECK}`", b.scenario));
    let (qa, qb) = (
        a.queue(BOTTLENECK).ok_or_else(miss)?,
        b.queue(BOTTLENECK).ok_or_else(miss)?,
    );
    let (la, lb) = (
        a.link(BOTTLENECK).ok_or_else(miss)?,
        b.link(BOTTLENECK).ok_or_else(miss)?,
    );
    let (ta, tb) = (a.sim_seconds, b.sim_seconds);
    let span = tb - ta;
    let goodput: Vec<f64> = a
        .flows
        .iter()
        .zip(&b.flows)
        .map(|(fa, fb)| (fb.bytes_acked - fa.bytes_acked) as f64 * 8.0 / span)
        .collect();
    let all: Vec<f64> = b.flows.iter().map(|f| f.goodput_bps).collect();
    let soj = |q: &aqmlab::metrics::QueueResult| q.mean_delay_s * q.dequeued as f64;
    let deq = (qb.dequeued - qa.dequeued).max(1) as f64;
    let prefix_ok = qa.enqueued <= qb.enqueued
        && qa.marked <= qb.marked
        && qa.dropped <= qb.dropped
        && a.flows
            .iter()
            .zip(&b.flows)
            .all(|(x, y)| x.bytes_acked <= y.bytes_acked && x.ecn_reductions <= y.ecn_reductions)
        && (ta - warm).abs() < 1e-9;
    let diff = |f: &dyn Fn(&aqmlab::metrics::FlowResult) -> u64| -> Vec<u64> {
        a.flows
            .iter()
            .zip(&b.flows)
            .map(|(x, y)| f(y) - f(x))
            .collect()
    };
    let other_drops = b
        .queues
        .iter()
        .filter(|q| q.link != BOTTLENECK)
        .map(|q| q.dropped)
        .sum::<u64>()
        + b.links.iter().map(|l| l.lost).sum::<u64>();
    let cwnd = keep_cwnd.then(|| {
        b.cwnd
            .iter()
            .map(|t| t.samples.iter().map(|s| (s.time_s, s.cwnd)).collect())
            .collect()
    });
    Ok(RunSummary {
        j: jain(&goodput),
        goodput,
        // Busy time is booked when a transmission starts, so each end of the
        // window may carry up to one packet time (119 µs) too much: clamp.
        rho: ((lb.utilization * tb - la.utilization * ta) / span).min(1.0),
        t_ms: (soj(qb) - soj(qa)) / deq * 1e3,
        j_all: jain(&all),
        rho_all: lb.utilization,
        t_all_ms: qb.mean_delay_s * 1e3,
        mean_q: (qb.mean_len_pkts * tb - qa.mean_len_pkts * ta) / span,
        marks: qb.marked - qa.marked,
        drops: qb.dropped - qa.dropped,
        ecn_red: diff(&|f| f.ecn_reductions),
        timeouts: diff(&|f| f.timeouts),
        fast_rtx: diff(&|f| f.fast_retransmits),
        max_q: qb.max_delay_s * c.pps,
        other_drops,
        overflow: if c.queue == Queue::MarkMax {
            qb.dropped_overflow
        } else {
            0
        },
        prefix_ok,
        events: a.events + b.events,
        cwnd,
    })
}

// ---- aggregation ---------------------------------------------------------

struct Agg<'a> {
    runs: Vec<&'a RunSummary>,
}

impl Agg<'_> {
    fn ms(&self, f: impl Fn(&RunSummary) -> f64) -> (f64, f64) {
        let s = Summary::of(self.runs.iter().map(|r| f(r)));
        (if s.n == 0 { 0.0 } else { s.mean }, s.sd)
    }
    fn m(&self, f: impl Fn(&RunSummary) -> f64) -> f64 {
        self.ms(f).0
    }
    fn n(&self) -> usize {
        self.runs.len()
    }
}

/// Our J, ρ, T̄ (mean over seeds) of a configuration.
fn ours(a: &Agg) -> [f64; 3] {
    [a.m(|r| r.j), a.m(|r| r.rho), a.m(|r| r.t_ms)]
}

// ---- the command ---------------------------------------------------------

pub fn run(o: &Opts, out: &Path) -> CliResult<Vec<TableRow>> {
    load_paper()?;
    let wall = Instant::now();
    let seeds = o.seeds;
    let (dur, warm, shortened) = timing(o)?;
    let mut configs = Vec::new();
    for variant in Variant::ALL {
        for scheme in [1, 2] {
            for row in paper_rows(scheme) {
                if !variant.runs_for(scheme, row.ratio) {
                    continue;
                }
                for queue in [Queue::DropTail, Queue::MarkMax] {
                    configs.push(build_config(scheme, row.ratio, queue, variant, dur)?);
                }
            }
        }
    }
    std::fs::create_dir_all(out).map_err(|e| {
        CliError::Input(format!(
            "cannot create output directory {}: {e}",
            out.display()
        ))
    })?;
    let plot_cfg = |c: &Config| {
        c.scheme == 1 && c.variant == Variant::Main && (c.ratio == 7.0 || c.ratio == 10.0)
    };
    let jobs: Vec<(usize, u64)> = (0..configs.len())
        .flat_map(|c| (1..=seeds).map(move |s| (c, s)))
        .collect();
    let warm_ns = (warm * 1e9).round() as u64;
    let results: Vec<CliResult<RunSummary>> = par_map(
        &format!("markmax: {} runs", jobs.len()),
        &jobs,
        |&(ci, seed)| {
            let c = &configs[ci];
            let mut prefix = Simulation::new(&c.sc, seed);
            prefix.set_duration(warm_ns);
            let a = prefix.run();
            let b = Simulation::new(&c.sc, seed).run();
            summarize(c, &a, &b, warm, plot_cfg(c) && seed == 1)
        },
    );
    let results: Vec<RunSummary> = results.into_iter().collect::<CliResult<_>>()?;
    let aggs: Vec<Agg> = (0..configs.len())
        .map(|ci| Agg {
            runs: jobs
                .iter()
                .zip(&results)
                .filter(|((c, _), _)| *c == ci)
                .map(|(_, r)| r)
                .collect(),
        })
        .collect();
    let find = |scheme: usize, ratio: f64, queue: Queue, variant: Variant| -> usize {
        configs
            .iter()
            .position(|c| {
                c.scheme == scheme && c.ratio == ratio && c.queue == queue && c.variant == variant
            })
            .expect("configuration built")
    };
    let ctx = Ctx {
        configs: &configs,
        aggs: &aggs,
        find: &find,
        seeds,
        dur,
        warm,
        shortened,
    };

    let tables = print_tables(&ctx);
    print!("{tables}");

    plot_cwnd(&ctx, out)?;
    plot_bars(&ctx, out)?;
    let rows = table_rows(&ctx);
    write_csv(&rows, &out.join("tables.csv"))?;
    let rep = report(&ctx, &tables);
    aqmlab::output::write_atomic(&out.join("report.md"), rep.as_bytes())?;

    let events: u64 = results.iter().map(|r| r.events).sum();
    println!(
        "{} runs ({} seeds × {} configurations, {:.0} s each + {:.0} s prefix, {:.1} M events) \
         in {:.1} s wall on {} threads; report, tables.csv and plots in {}",
        jobs.len(),
        seeds,
        configs.len(),
        dur,
        warm,
        events as f64 / 1e6,
        wall.elapsed().as_secs_f64(),
        rayon::current_num_threads(),
        out.display()
    );
    Ok(rows)
}

/// The cwnd figures (scheme 1, δ2/δ1 = 7 and 10, seed 1).
fn plot_cwnd(cx: &Ctx, out: &Path) -> CliResult {
    for ratio in [7.0, 10.0] {
        let panels: Vec<(String, Vec<plot::Series>)> = [Queue::DropTail, Queue::MarkMax]
            .iter()
            .map(|&q| {
                let a = &cx.aggs[(cx.find)(1, ratio, q, Variant::Main)];
                let traces = a
                    .runs
                    .first()
                    .and_then(|r| r.cwnd.clone())
                    .unwrap_or_default();
                let ser = traces
                    .into_iter()
                    .enumerate()
                    .map(|(i, p)| {
                        let d = if i == 0 { DELTA1_MS } else { DELTA1_MS * ratio };
                        (format!("flow {} (δ{} = {d:.0} ms)", i + 1, i + 1), p)
                    })
                    .collect();
                let caption = match q {
                    Queue::DropTail => "DropTail (buffer 240 packets)",
                    Queue::MarkMax => "MarkMax (θ_l = 200, θ = 240, θ_h = 280 packets)",
                };
                (caption.to_string(), ser)
            })
            .collect();
        // Slow start and its recovery inflate cwnd far above its later
        // range; the y axis shows the range after the warm-up.
        let after = |f: &dyn Fn(f64) -> bool| {
            panels
                .iter()
                .flat_map(|(_, s)| s.iter())
                .flat_map(|(_, p)| p.iter())
                .filter(|(t, _)| f(*t))
                .map(|&(_, y)| y)
                .fold(0.0f64, f64::max)
        };
        let (late, early) = (after(&|t| t >= cx.warm), after(&|t| t < cx.warm));
        let y_max = (early > 1.15 * late && late > 0.0).then_some(1.15 * late);
        plot::panel_lines(
            &PanelLines {
                title: format!("Congestion window, scheme 1, δ2/δ1 = {ratio:.0}"),
                subtitle: format!(
                    "two New Reno flows, 70 Mbit/s bottleneck, seed 1, cwnd every 100 ms{}{}",
                    match y_max {
                        Some(_) =>
                            format!("; slow-start peaks (up to {early:.0} segments) clipped"),
                        None => String::new(),
                    },
                    if cx.shortened {
                        " (run length set by --duration)"
                    } else {
                        ""
                    }
                ),
                x_desc: "time (s)".into(),
                y_desc: "cwnd (segments)".into(),
                panels,
                y_max,
            },
            &out.join(format!("cwnd_ratio{ratio:.0}")),
        )?;
    }
    Ok(())
}

/// Everything the tables and the report read.
struct Ctx<'a> {
    configs: &'a [Config],
    aggs: &'a [Agg<'a>],
    find: &'a dyn Fn(usize, f64, Queue, Variant) -> usize,
    seeds: u64,
    dur: f64,
    warm: f64,
    shortened: bool,
}

impl Ctx<'_> {
    fn agg(&self, scheme: usize, ratio: f64, q: Queue, v: Variant) -> &Agg<'_> {
        &self.aggs[(self.find)(scheme, ratio, q, v)]
    }
    fn config(&self, scheme: usize, ratio: f64, q: Queue, v: Variant) -> &Config {
        &self.configs[(self.find)(scheme, ratio, q, v)]
    }
}

// ---- tables --------------------------------------------------------------

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Decimals per metric (J, ρ, T̄): as the paper prints them.
const DEC: [usize; 3] = [4, 4, 1];
const METRIC: [&str; 3] = ["J", "rho", "T_ms"];

fn print_tables(cx: &Ctx) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Osipova, Blanc, Avrachenkov: MarkMax vs DropTail, New Reno flows with different \
         RTTs (μ = 70 Mbit/s).\nEvery cell: paper / aqmlab (mean of {} seed{}; J, ρ and T̄ over \
         [{:.0} s, {:.0} s]{}).",
        cx.seeds,
        if cx.seeds == 1 { "" } else { "s" },
        cx.warm,
        cx.dur,
        if cx.shortened {
            "; RUN LENGTH SET BY --duration, not the default"
        } else {
            ""
        }
    );
    for scheme in [1, 2] {
        let _ = writeln!(
            s,
            "\nScheme {scheme}: {} (δ1 = 12 ms{})",
            if scheme == 1 {
                "two flows"
            } else {
                "three flows"
            },
            if scheme == 2 { ", δ3 = δ2" } else { "" }
        );
        let head = strings(&[
            "δ2/δ1",
            "DT J",
            "DT ρ",
            "DT T̄ ms",
            "MM J",
            "MM ρ",
            "MM T̄ ms",
        ]);
        let rows: Vec<Vec<String>> = paper_rows(scheme)
            .iter()
            .map(|row| {
                let mut r = vec![format!("{:.0}", row.ratio)];
                for (q, paper) in [(Queue::DropTail, &row.dt), (Queue::MarkMax, &row.mm)] {
                    let o = ours(cx.agg(scheme, row.ratio, q, Variant::Main));
                    for k in 0..3 {
                        r.push(format!("{:.d$} / {:.d$}", paper[k], o[k], d = DEC[k]));
                    }
                }
                r
            })
            .collect();
        s.push_str(&text_table(&head, &rows));
    }
    s
}

/// Units of [`METRIC`].
const METRIC_UNIT: [&str; 3] = ["Jain's index", "fraction of capacity", "ms"];

/// Every configuration's numbers in the long format: table `scheme N` (the
/// paper's reading) or `scheme N, <reading>`, row `<queue>, delta_ratio=<r>`.
fn table_rows(cx: &Ctx) -> Vec<TableRow> {
    let mut rows = Vec::new();
    for (c, a) in cx.configs.iter().zip(cx.aggs) {
        let table = match c.variant {
            Variant::Main => format!("scheme {}", c.scheme),
            v => format!("scheme {}, {}", c.scheme, v.label()),
        };
        let row = format!("{}, delta_ratio={}", c.queue.name(), c.ratio);
        let paper = paper_rows(c.scheme)
            .iter()
            .find(|r| r.ratio == c.ratio)
            .filter(|_| c.variant == Variant::Main)
            .map(|r| {
                if c.queue == Queue::DropTail {
                    r.dt
                } else {
                    r.mm
                }
            });
        let n = a.n() as u64;
        let mut push = |column: String, unit: &str, p: Option<f64>, (m, sd): (f64, f64)| {
            rows.push(TableRow::new(&table, &row, column, unit, p, m, sd, n));
        };
        let vals: [(f64, f64); 3] = [a.ms(|r| r.j), a.ms(|r| r.rho), a.ms(|r| r.t_ms)];
        for k in 0..3 {
            push(
                METRIC[k].into(),
                METRIC_UNIT[k],
                paper.map(|p| p[k]),
                vals[k],
            );
        }
        let nf = a.runs.first().map(|r| r.goodput.len()).unwrap_or(0);
        for i in 0..nf {
            let v = a.ms(|r| r.goodput[i] / 1e6);
            push(format!("goodput_f{}", i + 1), "Mbit/s", None, v);
        }
        type Per = fn(&RunSummary) -> f64;
        let whole: [(&str, &str, Per); 5] = [
            ("J_whole_run", METRIC_UNIT[0], |r| r.j_all),
            ("rho_whole_run", METRIC_UNIT[1], |r| r.rho_all),
            ("T_whole_run", METRIC_UNIT[2], |r| r.t_all_ms),
            ("mean_queue", "packets", |r| r.mean_q),
            ("max_queue", "packets", |r| r.max_q),
        ];
        for (column, unit, f) in whole {
            push(column.into(), unit, None, a.ms(f));
        }
    }
    rows
}

fn plot_bars(cx: &Ctx, out: &Path) -> CliResult {
    let series = strings(&[
        "paper DropTail",
        "aqmlab DropTail",
        "paper MarkMax",
        "aqmlab MarkMax",
    ]);
    for (k, stem, title, ylab) in [
        (0usize, "fairness", "Jain's index of the goodputs", "J"),
        (
            2,
            "delay",
            "Mean queueing delay at the bottleneck",
            "delay (ms)",
        ),
    ] {
        let panels = [1, 2]
            .iter()
            .map(|&scheme| {
                let rows = paper_rows(scheme);
                let mut values = vec![Vec::new(); 4];
                for row in rows {
                    let dt = ours(cx.agg(scheme, row.ratio, Queue::DropTail, Variant::Main));
                    let mm = ours(cx.agg(scheme, row.ratio, Queue::MarkMax, Variant::Main));
                    values[0].push(row.dt[k]);
                    values[1].push(dt[k]);
                    values[2].push(row.mm[k]);
                    values[3].push(mm[k]);
                }
                BarPanel {
                    title: format!("scheme {scheme} ({} flows)", scheme + 1),
                    categories: rows.iter().map(|r| format!("{:.0}", r.ratio)).collect(),
                    values,
                }
            })
            .collect();
        plot::grouped_bars(
            &GroupedBars {
                title: format!("{title}: paper vs aqmlab"),
                subtitle: format!(
                    "mean of {} seed(s), measured over [{:.0} s, {:.0} s]{}",
                    cx.seeds,
                    cx.warm,
                    cx.dur,
                    if cx.shortened {
                        " (run length set by --duration)"
                    } else {
                        ""
                    }
                ),
                x_label: "δ2/δ1".into(),
                y_label: ylab.into(),
                series: series.clone(),
                panels,
                decimals: if k == 0 { 2 } else { 1 },
            },
            &out.join(stem),
        )?;
    }
    Ok(())
}

// ---- the fluid model beside the packet runs --------------------------------

/// The fluid model of the slides for one configuration (β = 0.5, θ = 240,
/// RTT_i = propagation + the MarkMax runs' mean queueing delay, each flow
/// entering at μ/N), over the same window. Returns (single-cut bound,
/// positive-backlog condition, J, cuts/s, utilisation).
fn fluid_check(c: &Config, t_ms: f64, dur: f64, warm: f64) -> Option<(f64, bool, f64, f64, f64)> {
    let n = c.access_ms.len();
    let flows: Vec<fluid::FluidFlow> = c
        .access_ms
        .iter()
        .map(|d| fluid::FluidFlow {
            rtt_s: 2.0 * d / 1e3 + t_ms / 1e3,
            rate0: c.pps / n as f64,
        })
        .collect();
    let cfg = fluid::FluidConfig::new(c.pps, BETA, THETA, flows);
    let alpha = cfg.alpha();
    let a = fluid::simulate(&cfg, warm, None).ok()?;
    let b = fluid::simulate(&cfg, dur, None).ok()?;
    let rates: Vec<f64> = a
        .mean_rates
        .iter()
        .zip(&b.mean_rates)
        .map(|(ra, rb)| (rb * b.t_end - ra * a.t_end) / (b.t_end - a.t_end))
        .collect();
    let cuts = b.cuts.iter().filter(|x| x.t > warm).count() as f64 / (dur - warm);
    let util = 1.0 - (b.unused_s - a.unused_s) / (b.t_end - a.t_end);
    Some((
        fluid::single_cut_bound(c.pps, alpha, BETA, n),
        fluid::positive_backlog_condition(THETA, c.pps, alpha, BETA),
        jain(&rates),
        cuts,
        util,
    ))
}

// ---- the report ----------------------------------------------------------

fn f(v: f64, d: usize) -> String {
    format!("{v:.d$}")
}

fn signed(v: f64, d: usize) -> String {
    format!("{v:+.d$}")
}

fn report(cx: &Ctx, stdout_tables: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# MarkMax (Osipova, Blanc, Avrachenkov) — reproduction with aqmlab\n\n\
         Paper: N. Osipova, A. Blanc, K. Avrachenkov, \"Improving TCP Fairness with MarkMax \
         Policy\" (slides), tables \"NS2 simulations – results scheme1\" \
         and \"results scheme2\" and the congestion-window figures for δ2/δ1 = 7 and 10. \
         Command: `aqmlab reproduce markmax --seeds {}`.\n",
        cx.seeds
    );
    if cx.shortened {
        let _ = writeln!(
            s,
            "**Run length set by `--duration`** ({:.0} s, warm-up {:.1} s, instead of the \
             default {DURATION_S:.0} s / {WARMUP_S:.0} s); shortened runs are for checking the \
             command only, their numbers are not the reproduction.\n",
            cx.dur, cx.warm
        );
    }
    // --- setup
    let _ = writeln!(
        s,
        "## Setup\n\n\
         - Topology: sources s1, s2 (scheme 2: also s3) → router r over 300 Mbit/s access \
         links; r → d is the 70 Mbit/s bottleneck; ACKs return the same way.\n\
         - δ1 = 12 ms; δ2 = δ1·(δ2/δ1); scheme 2: δ3 = δ2.\n\
         - DropTail: 240 packets. MarkMax: θ_l = 200, θ = 240, θ_h = 280 packets (the paper's \
         \"MSS\"), buffer 1000 packets (not given by the paper; never filled, see Checks), \
         backlog counted in bytes (all data packets have the same size, so bytes and packets \
         select the same flow), ECN marks.\n\
         - TCP New Reno (RFC 6582), ECN-capable (RFC 3168) under MarkMax, not under DropTail.\n\
         - Runs of {:.0} s, {} seed(s) per configuration (the seed draws each flow's start in \
         [0, 1) s). J (Jain's index of the flows' goodputs), ρ (bottleneck busy fraction) and \
         T̄ (mean time from enqueue to dequeue at the bottleneck, per packet) are measured \
         over [{:.0} s, {:.0} s]: each run is repeated up to {:.0} s with the same seed — an \
         exact prefix, the simulator being deterministic — and the window's values are the \
         differences of the two runs' counters.\n",
        cx.dur, cx.seeds, cx.warm, cx.dur, cx.warm
    );
    let _ = writeln!(
        s,
        "### Choices where the paper is silent (pinned in `scenarios/papers/markmax/*.toml`)\n\n\
         - **What δ_i is.** The slides give each access link a pair (μ_i, δ_i) and define \
         \"δ_i – propagation and queue delays\". We take δ_i as the one-way propagation delay \
         of access link i (what an ns-2 script sets with `duplex-link`) and give the \
         bottleneck no propagation delay, so δ2/δ1 is exactly the ratio of the flows' \
         round-trip propagation delays (2δ_i; 24 ms for flow 1). The other reading (δ_i = the \
         round-trip propagation delay) is in the sensitivity table below.\n\
         - **Packets:** ns-2's Agent/TCP packetSize_ of 1000 bytes + 40 bytes of TCP/IP \
         header (1040 B on the wire), 40-byte ACKs; thresholds and buffers counted in packets. \
         500-byte segments are in the sensitivity table.\n\
         - **ACKs:** one per segment (ns-2's Agent/TCPSink; no delayed ACKs).\n\
         - **Sender:** ns-2.35 defaults windowInit_ 2, minrto_ 0.2 s, tcpTick_ 10 ms, initial \
         RTO 3 s; the receive window (ns-2's window_, default 20) is raised to 10000 segments so \
         that it never limits (20 segments per 24 ms cannot fill 70 Mbit/s).\n\
         - **Other queues:** host and reverse-path DropTail queues of 10000 packets (never \
         drop).\n\
         - **Duration and warm-up:** not given; 300 s with the first 50 s (slow start and its \
         aftermath) left out of J, ρ and T̄. Whole-run values are in `tables.csv`.\n"
    );
    // --- tables
    let _ = writeln!(s, "## Results\n\n```text\n{stdout_tables}```\n");
    for scheme in [1, 2] {
        let _ = writeln!(
            s,
            "### Scheme {scheme}: paper | aqmlab | difference (aqmlab − paper)\n\n\
             aqmlab: mean ± sample standard deviation over {} seed(s).\n",
            cx.seeds
        );
        let head = strings(&[
            "δ2/δ1",
            "queue",
            "J paper",
            "J aqmlab",
            "ΔJ",
            "ρ paper",
            "ρ aqmlab",
            "Δρ",
            "T̄ paper (ms)",
            "T̄ aqmlab (ms)",
            "ΔT̄ (ms)",
        ]);
        let mut rows = Vec::new();
        for row in paper_rows(scheme) {
            for (q, p) in [(Queue::DropTail, row.dt), (Queue::MarkMax, row.mm)] {
                let a = cx.agg(scheme, row.ratio, q, Variant::Main);
                let v = [a.ms(|r| r.j), a.ms(|r| r.rho), a.ms(|r| r.t_ms)];
                let mut r = vec![format!("{:.0}", row.ratio), q.name().to_string()];
                for k in 0..3 {
                    r.push(f(p[k], DEC[k]));
                    r.push(format!("{} ± {}", f(v[k].0, DEC[k]), f(v[k].1, DEC[k])));
                    r.push(signed(v[k].0 - p[k], DEC[k]));
                }
                rows.push(r);
            }
        }
        s.push_str(&md_rows(&head, &rows));
        s.push('\n');
    }
    // --- per-flow detail
    let _ = writeln!(
        s,
        "### Per-flow detail (our reading, means over seeds, over the window)\n\n\
         Goodput per flow (Mbit/s); signals at the bottleneck per second (MarkMax: CE marks; \
         DropTail: drops); each flow's window reductions per second (ECN echoes under \
         MarkMax, fast retransmits under DropTail) and timeouts in the window; time-averaged \
         queue and the largest queue of the whole run (packets).\n"
    );
    let head = strings(&[
        "scheme",
        "δ2/δ1",
        "queue",
        "goodput (Mbit/s)",
        "signals/s",
        "reductions/s per flow",
        "timeouts",
        "mean queue",
        "max queue",
    ]);
    let mut rows = Vec::new();
    let span = cx.dur - cx.warm;
    for scheme in [1, 2] {
        for row in paper_rows(scheme) {
            for q in [Queue::DropTail, Queue::MarkMax] {
                let a = cx.agg(scheme, row.ratio, q, Variant::Main);
                let nf = a.runs.first().map(|r| r.goodput.len()).unwrap_or(0);
                let gp: Vec<String> = (0..nf).map(|i| f(a.m(|r| r.goodput[i] / 1e6), 1)).collect();
                let red: Vec<String> = (0..nf)
                    .map(|i| {
                        f(
                            a.m(|r| {
                                if q == Queue::MarkMax {
                                    r.ecn_red[i] as f64
                                } else {
                                    r.fast_rtx[i] as f64
                                }
                            }) / span,
                            3,
                        )
                    })
                    .collect();
                let to: Vec<String> = (0..nf)
                    .map(|i| f(a.m(|r| r.timeouts[i] as f64), 1))
                    .collect();
                let sig = a.m(|r| {
                    if q == Queue::MarkMax {
                        r.marks as f64
                    } else {
                        r.drops as f64
                    }
                }) / span;
                rows.push(vec![
                    scheme.to_string(),
                    format!("{:.0}", row.ratio),
                    q.name().into(),
                    gp.join(" / "),
                    f(sig, 2),
                    red.join(" / "),
                    to.join(" / "),
                    f(a.m(|r| r.mean_q), 1),
                    f(a.runs.iter().map(|r| r.max_q).fold(0.0, f64::max), 0),
                ]);
            }
        }
    }
    s.push_str(&md_rows(&head, &rows));
    s.push('\n');

    // --- sensitivity
    let _ = writeln!(
        s,
        "### Sensitivity to the readings the paper leaves open\n\n\
         J, ρ and T̄ (ms) under DropTail / MarkMax for each reading: ours (δ_i the one-way \
         delay of access link i, no bottleneck delay, 1000-byte segments, 300 s); δ_i as the \
         round-trip propagation delay (access links of δ_i/2); a 12 ms propagation delay on \
         the bottleneck; 500-byte segments (scheme 1 only; thresholds and buffers still in \
         packets); runs of 1000 s (δ2/δ1 ≥ 20 only; same 50 s warm-up). First, the mean \
         absolute difference from the paper over the cells each reading was run for:\n"
    );
    let head = strings(&[
        "reading",
        "cells",
        "mean abs. ΔJ",
        "mean abs. Δρ",
        "mean abs. ΔT̄ (ms)",
    ]);
    let mut rows = Vec::new();
    for v in Variant::ALL {
        let mut d = [0.0f64; 3];
        let mut n = 0;
        for scheme in [1, 2] {
            for row in paper_rows(scheme) {
                if !v.runs_for(scheme, row.ratio) {
                    continue;
                }
                for (q, p) in [(Queue::DropTail, row.dt), (Queue::MarkMax, row.mm)] {
                    let o = ours(cx.agg(scheme, row.ratio, q, v));
                    for k in 0..3 {
                        d[k] += (o[k] - p[k]).abs();
                    }
                    n += 1;
                }
            }
        }
        let n_f = (n as f64).max(1.0);
        rows.push(vec![
            v.describe().into(),
            n.to_string(),
            f(d[0] / n_f, 3),
            f(d[1] / n_f, 4),
            f(d[2] / n_f, 1),
        ]);
    }
    s.push_str(&md_rows(&head, &rows));
    s.push('\n');
    let head = strings(&[
        "scheme",
        "δ2/δ1",
        "reading",
        "J DT / MM",
        "ρ DT / MM",
        "T̄ DT / MM (ms)",
    ]);
    let mut rows = Vec::new();
    for scheme in [1, 2] {
        for row in paper_rows(scheme) {
            rows.push(vec![
                scheme.to_string(),
                format!("{:.0}", row.ratio),
                "paper".into(),
                format!("{:.4} / {:.4}", row.dt[0], row.mm[0]),
                format!("{:.4} / {:.4}", row.dt[1], row.mm[1]),
                format!("{:.1} / {:.1}", row.dt[2], row.mm[2]),
            ]);
            for v in Variant::ALL {
                if !v.runs_for(scheme, row.ratio) {
                    continue;
                }
                let dt = ours(cx.agg(scheme, row.ratio, Queue::DropTail, v));
                let mm = ours(cx.agg(scheme, row.ratio, Queue::MarkMax, v));
                rows.push(vec![
                    scheme.to_string(),
                    format!("{:.0}", row.ratio),
                    v.describe().into(),
                    format!("{:.4} / {:.4}", dt[0], mm[0]),
                    format!("{:.4} / {:.4}", dt[1], mm[1]),
                    format!("{:.1} / {:.1}", dt[2], mm[2]),
                ]);
            }
        }
    }
    s.push_str(&md_rows(&head, &rows));
    s.push('\n');

    // --- fluid model
    let _ = writeln!(
        s,
        "### The fluid model beside the packet runs\n\n\
         The slides' fluid model (`aqmlab::fluid::markmax`) for each MarkMax configuration: \
         μ = {:.0} packets/s, θ = 240, β = 0.5, RTT_i = 2δ_i + the MarkMax runs' mean \
         queueing delay, α = Σ 1/RTT_i², every flow entering at μ/N, the largest rate cut, \
         measured over the same window. The single-cut bound is the slides' \
         μ²(1−β)²/(2α(N−1+β)²); \"positive backlog\" is the slides' second condition. Packet \
         cuts/s = ECN window reductions per second.\n",
        MU_BPS / (1040.0 * 8.0)
    );
    let head = strings(&[
        "scheme",
        "δ2/δ1",
        "single-cut bound (pkts)",
        "θ = 240 below it",
        "positive backlog",
        "J fluid",
        "J packet",
        "cuts/s fluid",
        "cuts/s packet",
        "ρ fluid",
    ]);
    let mut rows = Vec::new();
    let mut fluid_j = Vec::new();
    for scheme in [1, 2] {
        for row in paper_rows(scheme) {
            let c = cx.config(scheme, row.ratio, Queue::MarkMax, Variant::Main);
            let a = cx.agg(scheme, row.ratio, Queue::MarkMax, Variant::Main);
            let t = a.m(|r| r.t_ms);
            let cuts_p = a.m(|r| r.ecn_red.iter().sum::<u64>() as f64) / span;
            if let Some((bound, pos, j, cuts, util)) = fluid_check(c, t, cx.dur, cx.warm) {
                fluid_j.push((scheme, row.ratio, j, a.m(|r| r.j)));
                rows.push(vec![
                    scheme.to_string(),
                    format!("{:.0}", row.ratio),
                    f(bound, 0),
                    if THETA < bound { "yes" } else { "no" }.into(),
                    if pos { "yes" } else { "no" }.into(),
                    f(j, 4),
                    f(a.m(|r| r.j), 4),
                    f(cuts, 3),
                    f(cuts_p, 3),
                    f(util, 4),
                ]);
            }
        }
    }
    s.push_str(&md_rows(&head, &rows));
    s.push_str(
        "\nThe fluid model's ρ is below 1 because its open-loop rates (λ_i = λ_0,i + t/RTT_i²) \
         empty the buffer after each cut, as its positive-backlog condition (not met here) \
         predicts; ACK-clocked TCP cannot send much faster than μ, and the packet runs stay \
         at ρ ≈ 1. The fluid model also cuts more often, and cuts the long-RTT flows it \
         started at an equal share. A like-for-like comparison (flows started in congestion \
         avoidance at equal windows, the packet run's mean RTT in the fluid model) is the \
         validation test `packet_model_agrees_with_fluid_model` in \
         `crates/aqmlab/tests/validation_markmax.rs`: one cut per congestion epoch in both, \
         cut frequency within 25 %, J within 0.03.\n\n",
    );

    s.push_str(&discussion(cx, &fluid_j));
    s.push_str(&checks(cx));
    let _ = writeln!(
        s,
        "## Files\n\n\
         - `tables.csv`: every configuration (scheme, δ2/δ1, queue, reading) with J, ρ, T̄ \
         (paper, aqmlab mean and sd, difference, runs), per-flow goodput, whole-run J/ρ/T̄, \
         mean and largest queue.\n\
         - `cwnd_ratio7.png`/`.svg`, `cwnd_ratio10.png`/`.svg`: each flow's congestion window \
         over time under DropTail (top) and MarkMax (bottom), scheme 1, seed 1 (the paper's \
         figures).\n\
         - `fairness.png`/`.svg`, `delay.png`/`.svg`: J and T̄ by δ2/δ1, paper vs aqmlab, both \
         schemes.\n"
    );
    s
}

/// The tolerances under which a cell agrees with the paper: J and ρ within
/// ±0.05 and ±0.02 (absolute), T̄ within ±20 % of the paper's value.
const TOLS: [Tol; 3] = [Tol::Abs(0.05), Tol::Abs(0.02), Tol::Rel(0.2)];
/// The three metrics' names, as in the tables.
const METRICS: [&str; 3] = ["J", "ρ", "T̄"];

/// The summary paragraph, from the counts: `better` of `n` configurations
/// where MarkMax's J is above DropTail's; `close` (aqmlab, paper) MarkMax J
/// with two flows and δ2/δ1 ≤ 10; `differ` the cells outside [`TOLS`].
fn summary(
    better: usize,
    n: usize,
    gains: &[String],
    close: &[(f64, f64)],
    differ: &[String],
) -> String {
    let ok = close.iter().filter(|(a, p)| TOLS[0].within(*a, *p)).count();
    let pairs: Vec<String> = close
        .iter()
        .map(|(a, p)| format!("{a:.4} vs {p:.4}"))
        .collect();
    format!(
        "**Summary.** The paper's finding — MarkMax gives a much higher J than DropTail \
         when the round-trip times differ, at full utilisation — {} in aqmlab: MarkMax's J \
         is above DropTail's in {} configurations (scheme:δ2/δ1 DropTail → MarkMax: {}). \
         With two flows and δ2/δ1 ≤ 10 our MarkMax J agrees with the paper's in {} cells \
         (tolerance {}; aqmlab vs paper, {}). Tolerances per cell: J {}, ρ {}, T̄ {}; \
         the cells outside them ({} of {}): {}. The paragraphs below give the measured \
         reasons as far as we can find them.\n\n",
        verdict::finding(better, n),
        verdict::count(better, n),
        gains.join(", "),
        verdict::count(ok, close.len()),
        TOLS[0].describe(""),
        pairs.join("; "),
        TOLS[0].describe(""),
        TOLS[1].describe(""),
        TOLS[2].describe(""),
        differ.len(),
        n * 2 * 3,
        if differ.is_empty() {
            "none".to_string()
        } else {
            differ.join(", ")
        }
    )
}

/// The discussion, with the measured numbers filled in.
fn discussion(cx: &Ctx, fluid_j: &[(usize, f64, f64, f64)]) -> String {
    let mut s = String::from("## Where aqmlab differs from the paper, and why\n\n");
    let get = |sch: usize, r: f64, q: Queue, v: Variant| ours(cx.agg(sch, r, q, v));
    let main = |sch: usize, r: f64, q: Queue| get(sch, r, q, Variant::Main);
    let cells = |sch: usize| paper_rows(sch).iter();
    let range = |v: &[f64]| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    };
    // --- summary
    let mut better = 0;
    let mut gains = Vec::new();
    for scheme in [1, 2] {
        for row in cells(scheme) {
            let (dt, mm) = (
                main(scheme, row.ratio, Queue::DropTail),
                main(scheme, row.ratio, Queue::MarkMax),
            );
            if mm[0] > dt[0] {
                better += 1;
            }
            gains.push(format!(
                "{scheme}:{:.0} {:.3} → {:.3}",
                row.ratio, dt[0], mm[0]
            ));
        }
    }
    let close: Vec<(f64, f64)> = cells(1)
        .filter(|r| r.ratio <= 10.0)
        .map(|r| (main(1, r.ratio, Queue::MarkMax)[0], r.mm[0]))
        .collect();
    let mut differ = Vec::new();
    for scheme in [1usize, 2] {
        for row in cells(scheme) {
            for (q, paper) in [(Queue::DropTail, &row.dt), (Queue::MarkMax, &row.mm)] {
                let m = main(scheme, row.ratio, q);
                for (k, tol) in TOLS.iter().enumerate() {
                    if !tol.within(m[k], paper[k]) {
                        differ.push(format!(
                            "{} {} at {scheme}:{:.0}",
                            q.name(),
                            METRICS[k],
                            row.ratio
                        ));
                    }
                }
            }
        }
    }
    s.push_str(&summary(better, gains.len(), &gains, &close, &differ));
    // --- MarkMax J at large ratios
    let long: Vec<String> = [(1, 20.0), (2, 20.0), (2, 50.0)]
        .iter()
        .map(|&(sc, r)| {
            let row = cells(sc).find(|x| x.ratio == r).expect("row");
            format!(
                "{sc}:{r:.0} {:.3} (300 s) → {:.3} (1000 s), paper {:.3}",
                main(sc, r, Queue::MarkMax)[0],
                get(sc, r, Queue::MarkMax, Variant::Long)[0],
                row.mm[0]
            )
        })
        .collect();
    // how slowly a cut long-RTT flow regains its share (scheme 1)
    let t20 = cx.agg(1, 20.0, Queue::MarkMax, Variant::Main).m(|r| r.t_ms);
    let rtt20 = 2.0 * DELTA1_MS * 20.0 / 1e3 + t20 / 1e3;
    let alpha20 = 1.0 / (rtt20 * rtt20);
    let share = MU_BPS / (1040.0 * 8.0) / 2.0;
    let t10 = cx.agg(1, 10.0, Queue::MarkMax, Variant::Main).m(|r| r.t_ms);
    let rtt10 = 2.0 * DELTA1_MS * 10.0 / 1e3 + t10 / 1e3;
    let fl: Vec<String> = fluid_j
        .iter()
        .map(|(sc, r, jf, jp)| format!("{sc}:{r:.0} {jf:.3} vs {jp:.3}"))
        .collect();
    let _ = writeln!(
        s,
        "**MarkMax at large δ2/δ1 and with three flows.** A long-RTT flow that has been cut \
         regains rate at 1/RTT² per second: at δ2/δ1 = 20 (RTT {rtt20:.3} s with the mean \
         queueing delay) {alpha20:.1} packets/s², so {:.0} s from half to its fair share \
         of {share:.0} packets/s; at δ2/δ1 = 10 its window grows by {:.1} segments per \
         second (the slow ramps of flow 2 in the MarkMax cwnd figures). J at large δ2/δ1 is \
         therefore set by where slow start leaves the long-RTT flows and by the run length, \
         not by the marking: with 1000-s runs J rises (scheme:δ2/δ1 {}). The fluid model, \
         started with every flow at an equal share, stays fair (fluid vs packet J, {}); the \
         paper's near-fair values at δ2/δ1 = 20 and 50 suggest longer runs or long-RTT \
         flows that left slow start with a larger window. The paper gives neither the \
         duration nor the start times.\n",
        share / 2.0 / alpha20,
        1.0 / rtt10,
        long.join("; "),
        fl.join(", ")
    );
    // --- DropTail
    let dt7 = cx.agg(1, 7.0, Queue::DropTail, Variant::Main);
    let span = cx.dur - cx.warm;
    let to7 = dt7.m(|r| r.timeouts.get(1).copied().unwrap_or(0) as f64);
    let gp7 = dt7.m(|r| r.goodput.get(1).copied().unwrap_or(0.0) / 1e6);
    let bd: Vec<String> = cells(1)
        .map(|r| {
            let o = get(1, r.ratio, Queue::DropTail, Variant::BottleneckDelay);
            format!(
                "{:.0}: J {:.3}, ρ {:.4}, T̄ {:.1} ms (paper {:.3}, {:.4}, {:.1})",
                r.ratio, o[0], o[1], o[2], r.dt[0], r.dt[1], r.dt[2]
            )
        })
        .collect();
    let rho_dt1: Vec<f64> = cells(1)
        .map(|r| main(1, r.ratio, Queue::DropTail)[1])
        .collect();
    let (rl, rh) = range(&rho_dt1);
    let both: Vec<&str> = [
        Variant::Main,
        Variant::DeltaIsRtt,
        Variant::Segments500,
        Variant::BottleneckDelay,
    ]
    .into_iter()
    .filter(|&v| {
        cells(1)
            .filter(|r| r.ratio == 3.0 || r.ratio == 7.0)
            .all(|r| TOLS[0].within(get(1, r.ratio, Queue::DropTail, v)[0], r.dt[0]))
    })
    .map(Variant::describe)
    .collect();
    let rtt_j: Vec<String> = cells(1)
        .map(|r| {
            format!(
                "{:.0}: {:.3}",
                r.ratio,
                get(1, r.ratio, Queue::DropTail, Variant::DeltaIsRtt)[0]
            )
        })
        .collect();
    let _ = writeln!(
        s,
        "**DropTail.** Our DropTail gives the short-RTT flow almost everything beyond \
         δ2/δ1 = 3: at δ2/δ1 = 7 flow 2 gets {gp7:.1} Mbit/s and suffers {to7:.0} \
         timeouts in the {span:.0}-s window (the paper's J = 0.754 implies roughly a 1:3.5 \
         split). Flow 2's window stays small (mostly below 100 segments; see the DropTail \
         cwnd figures), so a drop in the overflow bursts caused by flow 1 often leaves it \
         without three duplicate ACKs. In scheme 1 our \
         DropTail ρ is {rl:.4}–{rh:.4} against the paper's 0.956–0.999: with our reading \
         flow 1's bandwidth-delay product (24 ms × 8413 packets/s ≈ 202 packets) is below \
         the 240-packet buffer, so a halved window still covers the pipe and the link \
         never idles. The paper's lower ρ and its T̄ of 7.8–8.9 ms (a mean queue of \
         ~70 packets) fit a longer base RTT: with a 12 ms bottleneck delay (BDP ≈ 404 \
         packets) our DropTail gives, by δ2/δ1, {}. Reading δ_i as the round-trip delay \
         instead changes DropTail's J to {} (paper 0.989, 0.754, 0.536, 0.548). Readings that give DropTail's J at \
         δ2/δ1 = 3 and 7 together (each within {} of the paper's): {}. DropTail's split is \
         a matter of loss synchronisation and timeouts, sensitive to details (start times, \
         ACK policy, packet size, exact buffer accounting) the paper does not give.\n",
        bd.join("; "),
        rtt_j.join(", "),
        TOLS[0].describe(""),
        if both.is_empty() {
            "none".to_string()
        } else {
            both.join("; ")
        },
    );
    // --- utilisation
    let rho_mm2: Vec<f64> = cells(2)
        .map(|r| main(2, r.ratio, Queue::MarkMax)[1])
        .collect();
    let rho_dt2: Vec<f64> = cells(2)
        .map(|r| main(2, r.ratio, Queue::DropTail)[1])
        .collect();
    let rho_bd2: Vec<f64> = cells(2)
        .flat_map(|r| {
            [Queue::DropTail, Queue::MarkMax]
                .map(|q| get(2, r.ratio, q, Variant::BottleneckDelay)[1])
        })
        .collect();
    let (a, b) = range(&rho_mm2);
    let (c, d) = range(&rho_dt2);
    let (e, g) = range(&rho_bd2);
    let _ = writeln!(
        s,
        "**Utilisation in scheme 2.** The paper's three-flow ρ (DropTail 0.915–0.950, \
         MarkMax 0.951–0.994) is lower than its two-flow ρ; ours is {c:.4}–{d:.4} and \
         {a:.4}–{b:.4}, and {e:.4}–{g:.4} with a 12 ms bottleneck delay. In our model \
         window-unlimited New Reno flows keep a 240-packet buffer busy whichever flow is \
         cut; something that limits the flows (a receive window, an application limit) or \
         a different measurement of ρ would be needed, and the paper does not describe \
         one.\n"
    );
    // --- delay
    let ratio_t: Vec<f64> = [1, 2]
        .iter()
        .flat_map(|&sc| {
            cells(sc).flat_map(move |row| {
                [(Queue::DropTail, row.dt[2]), (Queue::MarkMax, row.mm[2])]
                    .into_iter()
                    .map(move |(q, p)| (sc, row.ratio, q, p))
            })
        })
        .map(|(sc, r, q, p)| main(sc, r, q)[2] / p)
        .collect();
    let (a, b) = range(&ratio_t);
    let pkt500: Vec<f64> = cells(1)
        .flat_map(|row| {
            [(Queue::DropTail, row.dt[2]), (Queue::MarkMax, row.mm[2])]
                .into_iter()
                .map(move |(q, p)| get(1, row.ratio, q, Variant::Segments500)[2] / p)
        })
        .collect();
    let (c, d) = range(&pkt500);
    let mq: Vec<f64> = cells(1)
        .map(|row| {
            cx.agg(1, row.ratio, Queue::MarkMax, Variant::Main)
                .m(|r| r.mean_q)
        })
        .collect();
    let (e, g) = range(&mq);
    let pkt_ms = 1040.0 * 8.0 / MU_BPS * 1e3;
    let _ = writeln!(
        s,
        "**Queueing delay.** aqmlab's T̄ is {a:.2}–{b:.2} times the paper's. MarkMax keeps \
         the queue between roughly θ minus half the cut window and θ = 240 packets: in \
         scheme 1 our mean queue under MarkMax is {e:.0}–{g:.0} packets, {:.1}–{:.1} ms of \
         1040-byte packets at 70 Mbit/s, while the paper's 8.4–9.9 ms would be a mean \
         queue of {:.0}–{:.0} such packets, far below θ_l = 200 — possible only if a cut \
         drains the queue much further than ours do (a longer base RTT, see DropTail \
         above) or if the packets are smaller: with 500-byte segments (thresholds in \
         packets, so half the bytes) the ratio becomes {c:.2}–{d:.2}. Scheme 2's T̄ of \
         3.2–5.7 ms (27–48 packets of 1040 bytes on average for a θ of 240) is not \
         reached by any reading we ran for scheme 2. The slides do not define how T̄ was averaged.\n",
        e * pkt_ms,
        g * pkt_ms,
        8.4 / pkt_ms,
        9.9 / pkt_ms,
    );
    s
}

fn checks(cx: &Ctx) -> String {
    let all = || cx.aggs.iter().flat_map(|a| a.runs.iter());
    let nruns = all().count();
    let other: u64 = all().map(|r| r.other_drops).sum();
    let overflow: u64 = all().map(|r| r.overflow).sum();
    let prefix_bad = all().filter(|r| !r.prefix_ok).count();
    let mm_max = cx
        .configs
        .iter()
        .zip(cx.aggs)
        .filter(|(c, _)| c.queue == Queue::MarkMax)
        .flat_map(|(_, a)| a.runs.iter().map(|r| r.max_q))
        .fold(0.0, f64::max);
    format!(
        "## Checks\n\n\
         - Packet conservation (sent = delivered + dropped + in flight) holds in all {nruns} \
         runs (the command fails otherwise).\n\
         - Drops outside the bottleneck (host queues, ACK path): {other} in all runs.\n\
         - MarkMax's 1000-packet buffer overflowed {overflow} times in all runs (largest \
         MarkMax queue {mm_max:.0} packets, slow start included), so MarkMax never fell back \
         to DropTail{}.\n\
         - Prefix runs: in {} of {nruns} runs the warm-up run's counters were all at most the \
         full run's and it ended at the warm-up time{}.\n\n",
        if overflow == 0 {
            ""
        } else {
            " only in those overflows"
        },
        nruns - prefix_bad,
        if prefix_bad == 0 {
            " (every run)"
        } else {
            " — NOT every run; the window values of the others are suspect"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_numbers_load_from_the_toml() {
        let r = &load_paper().unwrap()[0][1];
        assert_eq!(
            (r.ratio, r.dt, r.mm),
            (7.0, [0.754, 0.972, 8.5], [0.9625, 0.9999, 9.3])
        );
        let r = &paper_rows(2)[3];
        assert_eq!((r.ratio, r.dt[0], r.mm[2]), (50.0, 0.5244, 5.7));
    }

    #[test]
    fn summary_verdict_follows_the_count() {
        let g = vec!["1:3 0.6 → 0.9".to_string()];
        let s = summary(8, 8, &g, &[(0.98, 0.9853)], &[]);
        assert!(
            s.contains("— holds in aqmlab") && s.contains("in all 8"),
            "{s}"
        );
        assert!(s.contains("agrees with the paper's in all 1 cells"), "{s}");
        assert!(s.contains("(0 of 48): none"), "{s}");
        let s = summary(0, 8, &g, &[(0.90, 0.9853)], &["DropTail J at 1:3".into()]);
        assert!(s.contains("— does not hold in aqmlab"), "{s}");
        assert!(s.contains("in none of the 8 configurations"), "{s}");
        assert!(s.contains("in none of the 1 cells"), "{s}");
        assert!(s.contains("(1 of 48): DropTail J at 1:3"), "{s}");
        let s = summary(5, 8, &g, &[], &[]);
        assert!(
            s.contains("holds in part") && s.contains("in 5 of 8"),
            "{s}"
        );
    }
}
