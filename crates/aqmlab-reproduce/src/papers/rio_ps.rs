//! Reproduction of Guo & Matta, "The War Between Mice and Elephants"
//! (ICNP 2001 slides): RIO-PS (edge classifier
//! + RED In/Out core queue) against DropTail and RED.
//!
//! (a) The "Network Goodput" table: 10 long (10 000-packet) and 10 short
//! (100-packet) New Reno flows over 1.25 and 1.5 Mbit/s
//! (`scenarios/papers/rio-ps/goodput.toml`).
//!
//! (b) The web-traffic experiment (`scenarios/papers/rio-ps/web.toml`):
//! Exp1 (BDP 200 packets) with ITO 3 s and 1 s, Exp2 (BDP 120) with ITO 3 s;
//! average response time relative to RED by object size, the fairness index
//! of the foreground short and long connections, drop/mark rate and goodput.
//! The paper runs 4000 s with a 2000 s warm-up; so do we by default.
//! `--duration` changes the web runs' length (warm-up = half of it) for
//! tests and quick looks; `--load` sets the offered load (a fraction of the
//! bottleneck; default: `web.load` in `matrix.toml`). The drop/mark rate is reported over the measured period,
//! per packet class (short = In, long = Out) and over time.
//!
//! The experiment matrix (schemes, link rates, web experiments, run length,
//! warm-up share, default load) is `scenarios/papers/rio-ps/matrix.toml`,
//! the slides' numbers `paper.toml` beside it, the report's prose
//! `templates/rio-ps*.md`.

use crate::common::{check_conservation, md_rows, text_table};
use crate::matrix::{self, Scenarios};
use crate::paper::Paper;
use crate::progress::par_map;
use crate::stats::{mean, Summary};
use crate::table::{write_csv, TableRow};
use crate::template::{part, render, render_part};
use crate::Opts;
use crate::{Error, Result};
use aqmlab::{RunResult, Scenario, Simulation};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

const SCENARIOS: Scenarios = Scenarios {
    dir: "scenarios/papers/rio-ps",
    files: &[
        (
            "goodput.toml",
            include_str!("../../../../scenarios/papers/rio-ps/goodput.toml"),
        ),
        (
            "web.toml",
            include_str!("../../../../scenarios/papers/rio-ps/web.toml"),
        ),
    ],
};

const MATRIX_FILE: &str = "scenarios/papers/rio-ps/matrix.toml";
const MATRIX_TOML: &str = include_str!("../../../../scenarios/papers/rio-ps/matrix.toml");
const PAPER_FILE: &str = "scenarios/papers/rio-ps/paper.toml";
const PAPER_TOML: &str = include_str!("../../../../scenarios/papers/rio-ps/paper.toml");

/// The report, `{{name}}` filled from the run, and its parts: the section
/// repeated per web experiment, the note on a changed run length, the
/// slides' claim per experiment.
const REPORT: &str = include_str!("templates/rio-ps.md");
const PARTS: &str = include_str!("templates/rio-ps-parts.md");

/// `matrix.toml` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MatrixFile {
    link: String,
    scheme: Vec<SchemeSpec>,
    goodput: GoodputSpec,
    web: WebSpec,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SchemeSpec {
    name: String,
    queue: String,
    buffer_bdp: f64,
    min_th: Option<f64>,
    max_th: Option<f64>,
}

impl SchemeSpec {
    /// The bottleneck queue for a BDP of `bdp` packets, as an override value.
    fn queue(&self, bdp: f64) -> String {
        let limit = (self.buffer_bdp * bdp).round() as u32;
        let mut q = format!("{{ {}, limit = {limit}", self.queue);
        for (k, v) in [("min_th", self.min_th), ("max_th", self.max_th)] {
            if let Some(f) = v {
                let _ = write!(q, ", {k} = {}", f * limit as f64);
            }
        }
        q.push_str(" }");
        q
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GoodputSpec {
    scenario: String,
    rates_bps: Vec<f64>,
    rtt: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WebSpec {
    scenario: String,
    duration: String,
    min_duration: String,
    warmup_fraction: f64,
    load: f64,
    paper_measured: String,
    windows: u32,
    short_buckets: [u32; 2],
    medium_buckets: [u32; 2],
    min_objects: u64,
    experiment: Vec<WebExp>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WebExp {
    name: String,
    delay: String,
    initial_rto: String,
    bdp_packets: f64,
}

/// The experiment matrix, checked against the paper's tables and the
/// scenario files, with the numbers [`run`] derives from them.
struct Matrix {
    f: MatrixFile,
    /// The goodput experiment's RTT (s), packet size on the wire (bytes)
    /// and measured time (s, its scenario's duration).
    gp_rtt_s: f64,
    gp_pkt: f64,
    gp_secs: f64,
    /// The web runs' length, shortest length and the slides' measured
    /// period (s).
    web_secs: f64,
    web_min_s: f64,
    paper_measured_s: f64,
    /// The web scenario's bottleneck rate (bit/s), MSS and header bytes.
    web_rate: f64,
    mss: u32,
    header: u32,
}

impl Matrix {
    fn load() -> Result<Matrix> {
        Matrix::parse(MATRIX_TOML)
    }

    fn parse(text: &str) -> Result<Matrix> {
        let f: MatrixFile = matrix::parse(text, MATRIX_FILE)?;
        let bad = |key: &str, m: String| matrix::bad(MATRIX_FILE, key, m);
        let p = Paper::parse(PAPER_TOML, PAPER_FILE)?;
        let cols: Vec<String> = p
            .values
            .iter()
            .filter(|v| v.table == "goodput")
            .map(|v| v.column.clone())
            .take(3)
            .collect();
        let names: Vec<String> = f.scheme.iter().map(|s| s.name.clone()).collect();
        if names != cols {
            return Err(bad(
                "scheme",
                format!("the schemes must be the paper's columns {cols:?} in order, got {names:?}"),
            ));
        }
        if f.web.experiment.is_empty() {
            return Err(bad("web.experiment", "at least one experiment".into()));
        }
        let w = &f.web;
        if !(w.warmup_fraction > 0.0 && w.warmup_fraction < 1.0) {
            return Err(bad(
                "web.warmup_fraction",
                format!("in (0, 1), got {}", w.warmup_fraction),
            ));
        }
        if !(w.load > 0.0 && w.load <= 2.0) {
            return Err(bad("web.load", format!("in (0, 2], got {}", w.load)));
        }
        if w.windows == 0 {
            return Err(bad("web.windows", "at least 1".into()));
        }
        let gp = SCENARIOS.load(&f.goodput.scenario, "goodput.scenario", &[])?;
        let gp_pkt = (gp.tcp.mss.unwrap_or(0) + gp.tcp.header_bytes.unwrap_or(0)) as f64;
        let web = SCENARIOS.load(&f.web.scenario, "web.scenario", &[])?;
        let web_rate = web
            .links
            .iter()
            .find(|l| l.name.as_deref() == Some("bottleneck"))
            .map(|l| l.rate.0 as f64)
            .ok_or_else(|| {
                bad(
                    "web.scenario",
                    "the scenario has no link `bottleneck`".into(),
                )
            })?;
        let (mss, header) = match (web.tcp.mss, web.tcp.header_bytes) {
            (Some(m), Some(h)) => (m, h),
            _ => {
                return Err(bad(
                    "web.scenario",
                    "the scenario must set tcp.mss and tcp.header_bytes".into(),
                ))
            }
        };
        if gp_pkt <= 0.0 {
            return Err(bad(
                "goodput.scenario",
                "the scenario must set tcp.mss and tcp.header_bytes".into(),
            ));
        }
        let secs = |k: &str, t: &str| matrix::seconds(MATRIX_FILE, k, t);
        Ok(Matrix {
            gp_rtt_s: secs("goodput.rtt", &f.goodput.rtt)?,
            gp_pkt,
            gp_secs: gp.duration.0 as f64 / 1e9,
            web_secs: secs("web.duration", &f.web.duration)?,
            web_min_s: secs("web.min_duration", &f.web.min_duration)?,
            paper_measured_s: secs("web.paper_measured", &f.web.paper_measured)?,
            web_rate,
            mss,
            header,
            f,
        })
    }

    fn link(&self) -> &str {
        &self.f.link
    }

    fn schemes(&self) -> impl Iterator<Item = &str> {
        self.f.scheme.iter().map(|s| s.name.as_str())
    }

    fn scheme(&self, s: usize) -> &str {
        &self.f.scheme[s].name
    }

    fn exps(&self) -> &[WebExp] {
        &self.f.web.experiment
    }

    /// A log2 size bucket range from the matrix.
    fn buckets(b: [u32; 2]) -> std::ops::RangeInclusive<u32> {
        b[0]..=b[1]
    }
}

/// The matrix parses and agrees with the paper and the scenario files (for
/// the test over every matrix).
fn check_matrix(text: &str) -> Result {
    let m = Matrix::parse(text)?;
    Numbers::load(&m).map(|_| ())
}

/// The slides' tables as [`run`] reads them.
struct Numbers {
    /// Per link rate (bit/s): goodput (bytes/s), rows All/Short/Long,
    /// columns as the schemes.
    goodput: Vec<(f64, [[f64; 3]; 3])>,
    /// Per web experiment: goodput (packets) per scheme.
    web_goodput: Vec<[f64; 3]>,
    /// Per web experiment: reduction of the mean response time relative to
    /// RED, % (low, high), for short and for medium-sized objects; `None`
    /// where the slides give nothing.
    web_reduction: Vec<Option<[(f64, f64); 2]>>,
}

impl Numbers {
    /// Read `paper.toml`'s rows for the matrix's rates and experiments.
    fn load(m: &Matrix) -> Result<Numbers> {
        let p = Paper::parse(PAPER_TOML, PAPER_FILE)?;
        let v = |t: &str, r: &str, c: &str| p.get(t, r, c).map(|x| x.value);
        let mut n = Numbers {
            goodput: m
                .f
                .goodput
                .rates_bps
                .iter()
                .map(|&r| (r, [[0.0; 3]; 3]))
                .collect(),
            web_goodput: vec![[0.0; 3]; m.exps().len()],
            web_reduction: vec![None; m.exps().len()],
        };
        for (rate, t) in n.goodput.iter_mut() {
            for (k, cls) in ["All", "Short", "Long"].iter().enumerate() {
                for (s, scheme) in m.schemes().enumerate() {
                    t[k][s] = v("goodput", &format!("{} Mbit/s {cls}", *rate / 1e6), scheme)?;
                }
            }
        }
        for (ei, e) in m.exps().iter().enumerate() {
            let label = e.name.as_str();
            for (s, scheme) in m.schemes().enumerate() {
                n.web_goodput[ei][s] = v("web goodput", label, scheme)?;
            }
            let t = "response time reduction";
            if p.values.iter().any(|x| x.table == t && x.row == *label) {
                n.web_reduction[ei] = Some([
                    (v(t, label, "short_low")?, v(t, label, "short_high")?),
                    (v(t, label, "medium_low")?, v(t, label, "medium_high")?),
                ]);
            }
        }
        Ok(n)
    }
}

/// Per-run summary of the goodput experiment: (all, short, long) B/s.
#[derive(Clone, Copy, Default)]
struct Gp {
    v: [f64; 3],
    signal_rate: f64,
}

/// Per-run summary of the web experiment.
#[derive(Clone, Default)]
struct Web {
    /// bucket (log2 of packets) → (sum of response times, count)
    buckets: BTreeMap<u32, (f64, u64)>,
    incomplete: u64,
    fair_short: Vec<f64>,
    fair_long: Vec<f64>,
    rt_short: Vec<f64>,
    rt_long: Vec<f64>,
    /// Drop+mark rate at the bottleneck over the measured period.
    signal_rate: f64,
    /// Counts at the bottleneck over the measured period, per class
    /// (0 = short/In, 1 = long/Out): arrivals, drops, marks.
    class: [[u64; 3]; 2],
    /// Drop and mark rate over time (window end s, drop %, mark %), whole run.
    over_time: Vec<(f64, f64, f64)>,
    goodput_pkts: f64,
    utilization: f64,
    lt_mean: f64,
    ratio_geo: f64,
    conservation_ok: bool,
    events: u64,
}

fn signal_rate(r: &RunResult, link: &str) -> f64 {
    r.queue(link).map_or(0.0, |q| {
        (q.dropped + q.marked) as f64 / q.arrivals.max(1) as f64
    })
}

fn measure_gp(m: &Matrix, r: &RunResult) -> Result<Gp> {
    check_conservation(r)?;
    let mut v = [0.0; 3];
    for f in &r.flows {
        let b = f.segments_delivered as f64 * m.gp_pkt / m.gp_secs;
        v[0] += b;
        v[if f.group == "short" { 1 } else { 2 }] += b;
    }
    Ok(Gp {
        v,
        signal_rate: signal_rate(r, m.link()),
    })
}

/// Bottleneck counts per class: [[arrivals, drops, marks]; (In, Out)].
fn class_counts(r: &RunResult, link: &str) -> [[u64; 3]; 2] {
    let mut c = [[0; 3]; 2];
    if let Some(q) = r.queue(link) {
        for k in &q.classes {
            let i = match k.class.as_str() {
                "in" => 0,
                "out" => 1,
                _ => continue,
            };
            c[i] = [k.arrivals, k.dropped, k.marked];
        }
    }
    c
}

/// Summarise a web run: `win` over the measured period (after the
/// warm-up), `r` over the whole run.
fn measure_web(
    m: &Matrix,
    sim: &Simulation,
    (win, r): (&RunResult, &RunResult),
    warm: f64,
    window: f64,
) -> Web {
    let link = m.link();
    let class = class_counts(win, link);
    let signal_rate = signal_rate(win, link);
    let over_time = r
        .series
        .iter()
        .find(|s| s.link == link)
        .map(|s| {
            s.signal_rates(window)
                .iter()
                .map(|x| (x.t1_s, 100.0 * x.drop_rate(), 100.0 * x.mark_rate()))
                .collect()
        })
        .unwrap_or_default();
    let mut w = Web {
        conservation_ok: r.conservation.holds(),
        signal_rate,
        class,
        over_time,
        events: r.events,
        ..Default::default()
    };
    let mut batches: BTreeMap<(bool, i64), Vec<Option<f64>>> = BTreeMap::new();
    for q in &win.requests {
        if q.open_s < warm {
            continue;
        }
        let pkts = q.bytes.div_ceil(m.mss as u64).max(1);
        if q.workload == "probes" {
            let long = pkts > 100;
            batches
                .entry((long, (q.open_s * 1000.0).round() as i64))
                .or_default()
                .push(q.total_s);
            continue;
        }
        match q.total_s {
            Some(t) => {
                let b = 63 - pkts.leading_zeros();
                let e = w.buckets.entry(b).or_default();
                e.0 += t;
                e.1 += 1;
            }
            None => w.incomplete += 1,
        }
    }
    for ((long, _), v) in batches {
        if v.iter().all(|x| x.is_some()) {
            let x: Vec<f64> = v.into_iter().flatten().collect();
            let f = crate::stats::jain(&x);
            if long {
                w.fair_long.push(f);
                w.rt_long.extend(x);
            } else {
                w.fair_short.push(f);
                w.rt_short.extend(x);
            }
        }
    }
    w.goodput_pkts = win.flows.iter().map(|f| f.segments_delivered).sum::<u64>() as f64;
    w.utilization = r.link(link).map_or(0.0, |l| l.utilization);
    if let Some(c) = sim.classifier(link) {
        let h: Vec<_> = c
            .history
            .iter()
            .filter(|a| a.time as f64 / 1e9 >= warm)
            .collect();
        if !h.is_empty() {
            w.lt_mean = h.iter().map(|a| a.threshold_before).sum::<f64>() / h.len() as f64;
            let lr: f64 = h
                .iter()
                .map(|a| ((a.n_short as f64 + 0.5) / (a.n_long as f64 + 0.5)).ln())
                .sum::<f64>()
                / h.len() as f64;
            w.ratio_geo = lr.exp();
        }
    }
    w
}

/// Run every job on rayon's pool with one progress bar; `f` turns a
/// finished simulation into its (small) summary so that runs' results do
/// not pile up in memory.
fn par_runs<T: Send>(
    label: &str,
    jobs: &[(&Scenario, u64)],
    f: impl Fn(&mut Simulation) -> T + Sync,
) -> Vec<T> {
    par_map(label, jobs, |(sc, seed)| f(&mut Simulation::new(sc, *seed)))
}

/// What the report collects while it runs: `tables.csv` rows, the text
/// printed and the report template's values.
struct Out<'a> {
    table: Vec<TableRow>,
    txt: String,
    vars: Vec<(&'static str, String)>,
    seeds: u64,
    m: &'a Matrix,
    n: &'a Numbers,
}

impl Out<'_> {
    /// A `tables.csv` row of a value pooled over the seeds (no sd).
    fn pooled(&mut self, table: String, row: impl Into<String>, column: &str, unit: &str, v: f64) {
        let r = TableRow::new(table, row, column, unit, None, v, 0.0, self.seeds);
        self.table.push(r.pooled());
    }
}

/// The web experiment's settings, from the options.
struct WebSetup {
    secs: f64,
    warm: f64,
    load: f64,
    /// Drop/mark-rate window (s).
    window: f64,
    sessions: u32,
    /// The note on a changed run length (empty at the paper's).
    shortened: String,
}

/// This paper in the registry ([`crate::PAPERS`]).
pub const DRIVER: crate::Driver = crate::Driver {
    name: "rio-ps",
    about: "Guo & Matta: RIO-PS vs DropTail and RED, goodput table and web traffic (ICNP 2001)",
    default_seeds: 2, // 4000 s web runs; the paper reports one run
    run,
    matrix_file: MATRIX_FILE,
    matrix_toml: MATRIX_TOML,
    check_matrix,
    fixed_duration: None,
    load: Some("its web workload"),
};

pub fn run(o: &Opts, out: &Path) -> Result<Vec<TableRow>> {
    let m = Matrix::load()?;
    let n = Numbers::load(&m)?;
    let wall = std::time::Instant::now();
    // Validate the flags before the goodput runs spend any time.
    let (secs, changed) = o.duration_or(
        m.web_secs,
        m.web_min_s,
        "the web runs measure after a warm-up of half the run",
    )?;
    let load = o.load.unwrap_or(m.f.web.load);
    std::fs::create_dir_all(out)?;
    let mut w = Out {
        table: Vec::new(),
        txt: String::new(),
        vars: vec![("seeds", o.seeds.to_string()), ("secs", secs.to_string())],
        seeds: o.seeds,
        m: &m,
        n: &n,
    };
    let gp_runs = goodput(&mut w)?;
    let ws = web_setup(&m, secs, changed, load)?;
    let (webs, web_runs) = web_runs(&m, &ws, o.seeds)?;
    let per: Vec<&[Web]> = webs.chunks(o.seeds as usize).collect();
    let events: u64 = webs.iter().map(|w| w.events).sum();
    web_header(&ws, &mut w);
    let (series, series_dt) = web_tables(&per, &mut w)?;
    class_table(&per, &mut w);
    signal_over_time(&m, &per, &ws, out)?;
    let gp_scale = m.paper_measured_s / (secs - ws.warm);
    let (diff_txt, diff_vars) = differences(&m, &n, &series, &per, (ws.window, gp_scale));
    w.txt.push_str(&diff_txt);
    w.vars.extend(diff_vars);
    let wall = wall.elapsed().as_secs_f64();
    w.vars.extend([
        (
            "web_file",
            SCENARIOS.get(&m.f.web.scenario, "web.scenario")?.0,
        ),
        ("wall", format!("{wall:.1}")),
        ("runs", ((gp_runs + web_runs) as u64 * o.seeds).to_string()),
        ("events", events.to_string()),
    ]);
    let report = render(REPORT, &w.vars)?;
    let _ = writeln!(w.txt, "wall time {wall:.1} s");
    print!("{}", w.txt);
    aqmlab::output::write_atomic(&out.join("report.md"), report.as_bytes())?;
    write_csv(&w.table, &out.join("tables.csv"))?;
    rt_plots(series, series_dt, secs, o.seeds, out)?;
    Ok(w.table)
}

/// (a) Network goodput: run both link rates × three schemes and write the
/// table; the number of scenarios.
fn goodput(w: &mut Out) -> Result<usize> {
    let seeds = w.seeds;
    let mut gp_sc = Vec::new();
    let (m, gspec) = (w.m, &w.m.f.goodput);
    for rate in &gspec.rates_bps {
        let bdp = rate * m.gp_rtt_s / 8.0 / m.gp_pkt;
        for sch in &m.f.scheme {
            let o = vec![
                format!("links.bottleneck.rate=\"{}bps\"", rate),
                format!("links.bottleneck.queue_ab={}", sch.queue(bdp)),
            ];
            gp_sc.push(SCENARIOS.load(&gspec.scenario, "goodput.scenario", &o)?);
        }
    }
    let jobs: Vec<(&Scenario, u64)> = gp_sc
        .iter()
        .flat_map(|c| (1..=seeds).map(move |s| (c, s)))
        .collect();
    let gps = par_runs("rio-ps goodput", &jobs, |sim| measure_gp(m, &sim.run()));
    let gps: Vec<Gp> = gps.into_iter().collect::<Result<_>>()?;
    let per: Vec<&[Gp]> = gps.chunks(seeds as usize).collect();
    let head: Vec<String> = ["link", "flows"]
        .iter()
        .map(|s| s.to_string())
        .chain(m.schemes().map(|s| format!("{s} paper / aqmlab")))
        .collect();
    let mut rows = Vec::new();
    for (ri, (rate, paper)) in w.n.goodput.iter().enumerate() {
        for (k, cls) in ["All", "Short", "Long"].iter().enumerate() {
            let mut row = vec![format!("{} Mbit/s", rate / 1e6), cls.to_string()];
            for s in 0..3 {
                let st = Summary::of(per[ri * 3 + s].iter().map(|g| g.v[k]));
                let m = st.mean;
                row.push(format!("{:.0} / {:.0}", paper[k][s], m));
                w.table.push(TableRow::new(
                    "goodput",
                    format!("{} Mbit/s {cls}", rate / 1e6),
                    w.m.scheme(s),
                    "bytes/s",
                    Some(paper[k][s]),
                    m,
                    st.sd,
                    seeds,
                ));
            }
            rows.push(row);
        }
        let mut row = vec![format!("{} Mbit/s", rate / 1e6), "drop+mark rate".into()];
        for s in 0..3 {
            let m = mean(per[ri * 3 + s].iter().map(|g| g.signal_rate));
            row.push(format!("– / {:.4}", m));
        }
        rows.push(row);
    }
    let _ = writeln!(
        w.txt,
        "(a) Network goodput, bytes/s over the first {} s (paper / aqmlab, mean of {seeds} seed(s)); 10 long (10000 pkts) + 10 short (100 pkts) New Reno flows, {}-B packets, RTT {} s\n",
        m.gp_secs, m.gp_pkt, m.gp_rtt_s
    );
    w.txt.push_str(&text_table(&head, &rows));
    let bdp: Vec<String> = gspec
        .rates_bps
        .iter()
        .map(|r| format!("{:.1}", r * m.gp_rtt_s / 8.0 / m.gp_pkt))
        .collect();
    w.vars.extend([
        ("gp_secs", m.gp_secs.to_string()),
        (
            "gp_file",
            SCENARIOS.get(&gspec.scenario, "goodput.scenario")?.0,
        ),
        ("gp_rtt", m.gp_rtt_s.to_string()),
        ("gp_pkt", m.gp_pkt.to_string()),
        ("gp_bdp", bdp.join(" / ")),
        ("gp_table", md_rows(&head, &rows)),
    ]);
    Ok(gp_sc.len())
}

/// (b) The web experiment's sessions, windows and run-length note.
fn web_setup(m: &Matrix, secs: f64, changed: bool, load: f64) -> Result<WebSetup> {
    let warm = secs * m.f.web.warmup_fraction;
    let base = SCENARIOS.load(&m.f.web.scenario, "web.scenario", &[])?;
    let web_spec = match &base.workloads[0] {
        aqmlab::traffic::WorkloadSpec::Web(w) => w.clone(),
        _ => {
            return Err(Error::Internal(
                "web.toml: first workload is not web".into(),
            ))
        }
    };
    // drop/mark-rate windows: a share of the run, at least one sample interval
    let window = (secs / m.f.web.windows as f64).max(base.output.sample_interval.0 as f64 / 1e9);
    let sessions = web_spec.sessions_for_load(m.web_rate, load, m.mss, m.header);
    let vars = [
        ("secs", secs.to_string()),
        ("warm", warm.to_string()),
        ("paper_secs", m.web_secs.to_string()),
        (
            "paper_warm",
            (m.web_secs * m.f.web.warmup_fraction).to_string(),
        ),
    ];
    let shortened = if changed && secs < m.web_secs {
        render_part(PARTS, "shortened", &vars)?
    } else if changed {
        render_part(PARTS, "lengthened", &vars)?
    } else {
        String::new()
    };
    Ok(WebSetup {
        secs,
        warm,
        load,
        window,
        sessions,
        shortened,
    })
}

/// Run every web experiment × scheme × seed: (summaries, number of scenarios).
fn web_runs(m: &Matrix, ws: &WebSetup, seeds: u64) -> Result<(Vec<Web>, usize)> {
    let (secs, warm, window) = (ws.secs, ws.warm, ws.window);
    let mut web_sc = Vec::new();
    for e in m.exps() {
        for sch in &m.f.scheme {
            let o = vec![
                format!("links.bottleneck.delay=\"{}\"", e.delay),
                format!("links.bottleneck.queue_ab={}", sch.queue(e.bdp_packets)),
                format!("tcp.initial_rto=\"{}\"", e.initial_rto),
                format!("workloads.web.sessions={}", ws.sessions),
                format!("duration=\"{secs}s\""),
            ];
            web_sc.push(SCENARIOS.load(&m.f.web.scenario, "web.scenario", &o)?);
        }
    }
    let jobs: Vec<(&Scenario, u64)> = web_sc
        .iter()
        .flat_map(|c| (1..=seeds).map(move |s| (c, s)))
        .collect();
    let webs = par_runs(
        &format!("rio-ps web ({secs} s simulated per run)"),
        &jobs,
        |sim| {
            // a snapshot at the end of the warm-up, then on to the end
            let snap = sim.run_until(aqmlab::engine::secs(warm));
            let mut r = sim.run();
            // `measure_web` reads the whole run's series, link and counts;
            // the window's result carries the same whole-run request list
            // (`requests.csv` is never windowed). Free the whole run's
            // per-flow and per-request results (hundreds of thousands of
            // each) before the window's are built beside them.
            r.flows = Vec::new();
            r.requests = Vec::new();
            let win = sim.measured_since(&snap);
            drop(snap);
            measure_web(m, sim, (&win, &r), warm, window)
        },
    );
    if let Some(w) = webs.iter().find(|w| !w.conservation_ok) {
        return Err(Error::Internal(format!(
            "packet conservation violated in a web run ({} events)",
            w.events
        )));
    }
    Ok((webs, web_sc.len()))
}

/// The web section's heading and settings, printed and in the report.
fn web_header(ws: &WebSetup, w: &mut Out) {
    let (sessions, load, secs, warm, seeds) = (ws.sessions, ws.load, ws.secs, ws.warm, w.seeds);
    let _ = writeln!(
        w.txt,
        "\n(b) Web traffic: {sessions} sessions (load {load} of {} Mbit/s), {secs} s with {warm} s warm-up, {seeds} seed(s)\n",
        w.m.web_rate / 1e6
    );
    w.vars.extend([
        ("sessions", sessions.to_string()),
        ("load", load.to_string()),
        ("web_mbps", (w.m.web_rate / 1e6).to_string()),
        ("mss", w.m.mss.to_string()),
        ("warm", warm.to_string()),
        ("shortened", ws.shortened.clone()),
    ]);
    w.txt.push_str(&ws.shortened);
}

/// A line's points.
type Points = Vec<(f64, f64)>;
/// A plot's series: one (label, points) per experiment.
type Series = Vec<(String, Points)>;

/// Per experiment: response times relative to RED by size, and the
/// per-scheme summary. Returns the RIO-PS and DropTail ratio series.
fn web_tables(per: &[&[Web]], w: &mut Out) -> Result<(Series, Series)> {
    let mut series = Vec::new();
    let mut series_dt = Vec::new();
    let mut md = String::new();
    for (ei, e) in w.m.exps().iter().enumerate() {
        let label = e.name.as_str();
        let (dt_pts, rio_pts, rt_table) = relative_rt_table(ei, label, per, w);
        series_dt.push((label.to_string(), dt_pts));
        series.push((label.to_string(), rio_pts));
        let summary_table = web_summary_table(ei, label, per, w);
        md.push_str(&render_part(
            PARTS,
            "experiment",
            &[
                ("label", label.to_string()),
                ("claim", part(PARTS, &format!("claim {label}"))?.to_string()),
                ("rt_table", rt_table),
                ("summary_table", summary_table),
            ],
        )?);
    }
    w.vars.push(("experiments", md));
    Ok((series, series_dt))
}

/// Experiment `ei`'s mean response time relative to RED by object size;
/// returns the (DropTail, RIO-PS) points of buckets with ≥ 20 RED objects.
/// Also returns the Markdown table.
fn relative_rt_table(
    ei: usize,
    label: &str,
    per: &[&[Web]],
    w: &mut Out,
) -> (Points, Points, String) {
    let pool = |s: usize| {
        let mut m: BTreeMap<u32, (f64, u64)> = BTreeMap::new();
        for w in per[ei * 3 + s] {
            for (b, (t, n)) in &w.buckets {
                let e = m.entry(*b).or_default();
                e.0 += t;
                e.1 += n;
            }
        }
        m
    };
    let p: Vec<BTreeMap<u32, (f64, u64)>> = (0..3).map(pool).collect();
    let head: Vec<String> = [
        "size (packets)",
        "objects (RED)",
        "RED mean (s)",
        "DropTail / RED",
        "RIO-PS / RED",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut rows = Vec::new();
    let mut dt_pts = Vec::new();
    let mut rio_pts = Vec::new();
    for (b, (t, n)) in &p[1] {
        let red = t / *n as f64;
        let rel = |s: usize| {
            p[s].get(b)
                .filter(|x| x.1 > 0)
                .map(|(t, n)| t / *n as f64 / red)
        };
        let (dt, rio) = (rel(0), rel(2));
        let f = |x: Option<f64>| x.map_or("–".into(), |v| format!("{v:.3}"));
        rows.push(vec![
            format!("{}–{}", 1u64 << b, (1u64 << (b + 1)) - 1),
            n.to_string(),
            format!("{red:.3}"),
            f(dt),
            f(rio),
        ]);
        if *n >= w.m.f.web.min_objects {
            if let Some(v) = dt {
                dt_pts.push((*b as f64, v));
            }
            if let Some(v) = rio {
                rio_pts.push((*b as f64, v));
            }
        }
        for (s, v) in [(0, dt), (2, rio)] {
            if let Some(v) = v {
                w.pooled(
                    format!("web {label}: response time relative to RED"),
                    format!("size {}+ packets", 1u64 << b),
                    w.m.scheme(s),
                    "ratio",
                    v,
                );
            }
        }
    }
    let _ = writeln!(
        w.txt,
        "{label}: mean response time relative to RED by object size"
    );
    w.txt.push_str(&text_table(&head, &rows));
    (dt_pts, rio_pts, md_rows(&head, &rows))
}

/// Experiment `ei`'s per-scheme summary: goodput, utilisation, signals,
/// fairness, probes' response times, classifier.
/// Returns the Markdown table.
fn web_summary_table(ei: usize, label: &str, per: &[&[Web]], w: &mut Out) -> String {
    let head: Vec<String> = [
        "scheme",
        "goodput paper",
        "goodput aqmlab (pkts)",
        "utilisation",
        "drop+mark rate",
        "fairness short",
        "fairness long",
        "mean RT short probes (s)",
        "mean RT long probes (s)",
        "incomplete objects",
        "mean L_t",
        "short/long ratio (geo)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut rows = Vec::new();
    for s in 0..3 {
        rows.push(web_summary_row(ei, s, label, per[ei * 3 + s], w));
    }
    let _ = writeln!(w.txt, "\n{label}: summary");
    w.txt.push_str(&text_table(&head, &rows));
    w.txt.push('\n');
    md_rows(&head, &rows)
}

/// Scheme `s` of experiment `ei`: its summary row and `tables.csv` rows.
fn web_summary_row(ei: usize, s: usize, label: &str, ws: &[Web], w: &mut Out) -> Vec<String> {
    let m = |f: &dyn Fn(&Web) -> f64| mean(ws.iter().map(f));
    let gp = m(&|w| w.goodput_pkts);
    let fs = mean(ws.iter().flat_map(|w| w.fair_short.iter().copied()));
    let fl = mean(ws.iter().flat_map(|w| w.fair_long.iter().copied()));
    let rs = mean(ws.iter().flat_map(|w| w.rt_short.iter().copied()));
    let rl = mean(ws.iter().flat_map(|w| w.rt_long.iter().copied()));
    let sr = m(&|w| w.signal_rate);
    let ut = m(&|w| w.utilization);
    let inc: u64 = ws.iter().map(|w| w.incomplete).sum();
    let (lt, ratio) = if s == 2 {
        (
            format!("{:.1}", m(&|w| w.lt_mean)),
            format!("{:.2}", m(&|w| w.ratio_geo)),
        )
    } else {
        ("–".into(), "–".into())
    };
    let sd = |f: &dyn Fn(&Web) -> f64| Some(Summary::of(ws.iter().map(f)).sd);
    for (k, unit, v, pp, sd) in [
        (
            "goodput",
            "packets",
            gp,
            Some(w.n.web_goodput[ei][s]),
            sd(&|w| w.goodput_pkts),
        ),
        (
            "drop_mark_rate",
            "fraction of arrivals",
            sr,
            None,
            sd(&|w| w.signal_rate),
        ),
        ("fairness_short", "Jain's index", fs, None, None),
        ("fairness_long", "Jain's index", fl, None, None),
        ("rt_short_probes", "s", rs, None, None),
        ("rt_long_probes", "s", rl, None, None),
        (
            "utilization",
            "fraction of capacity",
            ut,
            None,
            sd(&|w| w.utilization),
        ),
    ] {
        let r = TableRow::new(
            format!("web {label}"),
            w.m.scheme(s),
            k,
            unit,
            pp,
            v,
            sd.unwrap_or(0.0),
            w.seeds,
        );
        w.table.push(if sd.is_some() { r } else { r.pooled() });
    }
    vec![
        w.m.scheme(s).to_string(),
        format!("{:.0}", w.n.web_goodput[ei][s]),
        format!("{gp:.0}"),
        format!("{ut:.3}"),
        format!("{sr:.4}"),
        format!("{fs:.3}"),
        format!("{fl:.3}"),
        format!("{rs:.3}"),
        format!("{rl:.2}"),
        inc.to_string(),
        lt,
        ratio,
    ]
}

/// Drop and mark rates by packet class over the measured period.
fn class_table(per: &[&[Web]], w: &mut Out) {
    let head: Vec<String> = [
        "experiment",
        "scheme",
        "short share of arrivals",
        "short drop %",
        "short mark %",
        "long drop %",
        "long mark %",
        "short drops",
        "long drops",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut rows = Vec::new();
    let pct = |a: u64, b: u64| {
        if b == 0 {
            0.0
        } else {
            100.0 * a as f64 / b as f64
        }
    };
    let m = w.m;
    for (ei, e) in m.exps().iter().enumerate() {
        let label = e.name.as_str();
        for (s, scheme) in m.schemes().enumerate() {
            let c = pooled_class(per[ei * 3 + s]);
            let v = [
                pct(c[0][0], c[0][0] + c[1][0]),
                pct(c[0][1], c[0][0]),
                pct(c[0][2], c[0][0]),
                pct(c[1][1], c[1][0]),
                pct(c[1][2], c[1][0]),
            ];
            rows.push(vec![
                label.to_string(),
                scheme.to_string(),
                format!("{:.1}", v[0]),
                format!("{:.3}", v[1]),
                format!("{:.3}", v[2]),
                format!("{:.3}", v[3]),
                format!("{:.3}", v[4]),
                c[0][1].to_string(),
                c[1][1].to_string(),
            ]);
            for (k, x) in [
                "short_share",
                "short_drop",
                "short_mark",
                "long_drop",
                "long_mark",
            ]
            .iter()
            .zip(v)
            {
                w.pooled(format!("web {label}: per class"), scheme, k, "%", x);
            }
        }
    }
    let _ = writeln!(
        w.txt,
        "Drop and mark rates at the bottleneck by packet class over the measured period (short = tagged In by the edge classifier, long = Out; the classifier tags packets under every scheme, only RIO-PS acts on the tags)"
    );
    w.txt.push_str(&text_table(&head, &rows));
    w.vars.push(("class_table", md_rows(&head, &rows)));
}

/// Seed 1's drop and mark rates over time: `signal_over_time.csv` and its plot.
fn signal_over_time(m: &Matrix, per: &[&[Web]], ws: &WebSetup, out: &Path) -> Result {
    // Through the csv crate, as every CSV aqmlab writes (quoting if needed).
    let csv_err = |e: csv::Error| Error::Internal(format!("signal_over_time.csv: {e}"));
    let mut ot_csv = csv::Writer::from_writer(Vec::new());
    ot_csv
        .write_record([
            "experiment",
            "scheme",
            "seed",
            "t_end_s",
            "drop_pct",
            "mark_pct",
        ])
        .map_err(csv_err)?;
    let mut panels = Vec::new();
    for (ei, e) in m.exps().iter().enumerate() {
        let label = e.name.as_str();
        let mut ser = Vec::new();
        for (s, scheme) in m.schemes().enumerate() {
            let w = &per[ei * 3 + s][0];
            for (t, d, m) in &w.over_time {
                ot_csv
                    .write_record([
                        label.to_string(),
                        scheme.to_string(),
                        "1".to_string(),
                        t.to_string(),
                        format!("{d:.5}"),
                        format!("{m:.5}"),
                    ])
                    .map_err(csv_err)?;
            }
            ser.push((
                scheme.to_string(),
                w.over_time.iter().map(|(t, d, m)| (*t, d + m)).collect(),
            ));
        }
        panels.push((label.to_string(), ser));
    }
    let bytes = ot_csv
        .into_inner()
        .map_err(|e| Error::Internal(format!("signal_over_time.csv: {e}")))?;
    aqmlab::output::write_atomic(&out.join("signal_over_time.csv"), &bytes)?;
    crate::plot::panel_lines(
        &crate::plot::PanelLines {
            title: "Drop + mark rate at the bottleneck over time".into(),
            subtitle: format!(
                "seed 1; % of the packets offered per {} s window (whole run; measurement starts at {} s); load {}",
                ws.window, ws.warm, ws.load
            ),
            x_desc: "time (s)".into(),
            y_desc: "drops + marks, % of arrivals".into(),
            panels,
            y_max: None,
        },
        &out.join("signal_over_time"),
    )?;
    Ok(())
}

/// The response-time ratio plots (RIO-PS and DropTail against RED).
fn rt_plots(series: Series, series_dt: Series, secs: f64, seeds: u64, out: &Path) -> Result {
    for (stem, scheme, ser) in [
        ("rt_relative_to_red", "RIO-PS", series),
        ("rt_relative_to_red_droptail", "DropTail", series_dt),
    ] {
        crate::plot::lines(
            &crate::plot::Lines {
                title: format!("{scheme}: mean response time relative to RED"),
                subtitle: format!(
                    "x = log2(object size, packets); {secs} s runs, {seeds} seed(s); buckets with ≥ 20 RED objects"
                ),
                x_desc: "log2(object size, packets)".into(),
                y_desc: format!("{scheme} mean response time / RED's"),
                series: ser,
                panels: false,
            },
            &out.join(stem),
        )?;
    }
    Ok(())
}

/// Per-class bottleneck counts summed over runs.
fn pooled_class(ws: &[Web]) -> [[u64; 3]; 2] {
    let mut c = [[0u64; 3]; 2];
    for w in ws {
        for (ci, wi) in c.iter_mut().zip(&w.class) {
            for (x, y) in ci.iter_mut().zip(wi) {
                *x += y;
            }
        }
    }
    c
}

/// The comparison with the slides in numbers, for the report's
/// "Where aqmlab differs" section: (stdout lines, template values).
fn differences(
    mx: &Matrix,
    n: &Numbers,
    rio_rel: &[(String, Vec<(f64, f64)>)],
    per: &[&[Web]],
    (window, gp_scale): (f64, f64),
) -> (String, Vec<(&'static str, String)>) {
    let mut txt = String::from("\nRIO-PS vs RED, mean response time reduction (paper / aqmlab):\n");
    let range = |pts: &[(f64, f64)], b: &std::ops::RangeInclusive<u32>| -> Option<(f64, f64)> {
        let v: Vec<f64> = pts
            .iter()
            .filter(|(x, _)| b.contains(&(*x as u32)))
            .map(|(_, r)| 100.0 * (1.0 - r))
            .collect();
        (!v.is_empty()).then(|| {
            (
                v.iter().copied().fold(f64::INFINITY, f64::min),
                v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        })
    };
    let f =
        |r: Option<(f64, f64)>| r.map_or("–".to_string(), |(a, b)| format!("{a:.0}–{b:.0} %"));
    // a bucket range's object sizes in packets, e.g. "4–31"
    let sizes = |b: [u32; 2]| format!("{}–{}", 1u64 << b[0], (1u64 << (b[1] + 1)) - 1);
    let (short_sizes, medium_sizes) = (
        sizes(mx.f.web.short_buckets),
        sizes(mx.f.web.medium_buckets),
    );
    let mut lines = Vec::new();
    for (ei, (label, pts)) in rio_rel.iter().enumerate() {
        let (s, m) = (
            range(pts, &Matrix::buckets(mx.f.web.short_buckets)),
            range(pts, &Matrix::buckets(mx.f.web.medium_buckets)),
        );
        let paper = |k: usize| {
            n.web_reduction[ei].map_or("not given".to_string(), |p| {
                format!("{:.0}–{:.0} %", p[k].0, p[k].1)
            })
        };
        let _ = writeln!(
            txt,
            "  {label}: short ({short_sizes} pkts) {} / {}; medium ({medium_sizes} pkts) {} / {}",
            paper(0),
            f(s),
            paper(1),
            f(m)
        );
        lines.push(format!(
            "{label}: short {} (paper {}), medium {} (paper {})",
            f(s),
            paper(0),
            f(m),
            paper(1)
        ));
    }
    let gp: Vec<String> = (0..rio_rel.len())
        .map(|ei| {
            // scaled to the slides' measured period
            let ours = gp_scale * mean(per[ei * 3 + 1].iter().map(|w| w.goodput_pkts));
            format!("{} {:.2}", rio_rel[ei].0, ours / n.web_goodput[ei][1])
        })
        .collect();
    let peaks: Vec<String> = (0..rio_rel.len())
        .map(|ei| {
            let w = &per[ei * 3 + 1][0];
            let peak = w
                .over_time
                .iter()
                .map(|(_, d, m)| d + m)
                .fold(0.0, f64::max);
            format!("{} {peak:.0} %", rio_rel[ei].0)
        })
        .collect();
    let class_rates: Vec<String> = mx
        .schemes()
        .enumerate()
        .map(|(si, name)| {
            let c = pooled_class(per[si]);
            let r = |k: [u64; 3]| 100.0 * (k[1] + k[2]) as f64 / k[0].max(1) as f64;
            format!("{name} {:.2} / {:.2}", r(c[0]), r(c[1]))
        })
        .collect();
    let vars = vec![
        ("min_objects", mx.f.web.min_objects.to_string()),
        ("short_sizes", short_sizes),
        ("medium_sizes", medium_sizes),
        ("rt_lines", lines.join("; ")),
        ("paper_measured", mx.paper_measured_s.to_string()),
        ("gp_ratios", gp.join(", ")),
        ("window", window.to_string()),
        ("peaks", peaks.join(", ")),
        ("class_rates", class_rates.join("; ")),
    ];
    (txt, vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_length_notes_follow_the_duration() {
        let m = Matrix::load().unwrap();
        assert_eq!(web_setup(&m, 4000.0, false, 0.9).unwrap().shortened, "");
        let s = web_setup(&m, 100.0, true, 0.9).unwrap().shortened;
        assert!(
            s.starts_with("SHORTENED: 100 s runs with 50 s warm-up"),
            "{s}"
        );
        assert!(
            s.contains("not the paper's 4000 s / 2000 s") && s.ends_with(".\n"),
            "{s}"
        );
        let s = web_setup(&m, 5000.0, true, 0.9).unwrap().shortened;
        assert_eq!(
            s,
            "Run length set by --duration: 5000 s with 2500 s warm-up (the paper: 4000 s / 2000 s).\n"
        );
    }

    #[test]
    fn slide_numbers_load_from_the_toml() {
        let n = Numbers::load(&Matrix::load().unwrap()).unwrap();
        assert_eq!(n.goodput[1].0, 1.5e6);
        assert_eq!(n.goodput[0].1[1], [40973.0, 49897.0, 49945.0]);
        assert_eq!(n.web_goodput[2][0], 4718311.0);
        assert_eq!(n.web_reduction[1], Some([(10.0, 15.0), (15.0, 25.0)]));
        assert_eq!(n.web_reduction[2], None);
    }
}
