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

use super::common::{check_conservation, md_rows, run_all, text_table};
use super::paper::Paper;
use super::stats::{mean_by as mean, sd_by as sd};
use super::table::{write_csv, TableRow};
use super::verdict::{self, Tol};
use super::Opts;
use crate::plot::{self, Lines};
use crate::{CliError, CliResult};
use aqmlab::{RunResult, Scenario};
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
const PAPER_TOML: &str = include_str!("../../../../scenarios/papers/maxnet-mice/paper.toml");

/// §4.2's fractions of responses within 135 ms with 200 connections:
/// (MaxNet, Reno/RED), from `paper.toml`.
fn paper_fractions() -> CliResult<(f64, f64)> {
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
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Testbed {
    Slow,
    Fast,
}

impl Testbed {
    fn rate_bps(self) -> f64 {
        match self {
            Testbed::Slow => 10e6,
            Testbed::Fast => 100e6,
        }
    }
}

/// The main setup, or one of the two alternatives the report measures.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Variant {
    Main,
    /// Web server beside the FTP source: responses cross the bottleneck.
    Swapped,
    /// Poisson arrivals at 10 connections/s instead of all at once.
    Poisson,
}

struct Config {
    system: System,
    testbed: Testbed,
    conns: u32,
    variant: Variant,
    sc: Scenario,
}

fn build(
    system: System,
    testbed: Testbed,
    conns: u32,
    variant: Variant,
    dur: f64,
) -> CliResult<Config> {
    let (text, file) = match system {
        System::MaxNet => (MAXNET_TOML, MAXNET_FILE),
        System::RenoRed => (RENO_TOML, RENO_FILE),
    };
    let mut o = vec![
        format!("workloads.http.connections={conns}"),
        format!("duration=\"{dur}s\""),
    ];
    if testbed == Testbed::Fast {
        // Both router links at 100 Mbit/s; the hosts' links at 1 Gbit/s so
        // that the routers, not the senders' cards, hold the backlog.
        o.push("links.router1.rate=\"100Mbps\"".into());
        o.push("links.ftp_src-r1.rate=\"1Gbps\"".into());
        o.push("links.http_client-r1.rate=\"1Gbps\"".into());
        o.push("output.sample_interval=\"5ms\"".into());
    }
    match variant {
        Variant::Main => {}
        Variant::Swapped => {
            o.push("workloads.http.client=\"http_server\"".into());
            o.push("workloads.http.server=\"http_client\"".into());
        }
        Variant::Poisson => o.push("workloads.http.rate=10.0".into()),
    }
    Ok(Config {
        system,
        testbed,
        conns,
        variant,
        sc: Scenario::from_toml_with(text, file, &o)?,
    })
}

fn timing(o: &Opts) -> CliResult<(f64, bool)> {
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

fn measure(c: &Config, r: &RunResult, end: f64) -> CliResult<M> {
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
        .ok_or_else(|| CliError::Internal("no elephant throughput series".into()))?;
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
        .ok_or_else(|| CliError::Internal("no elephant".into()))?;
    m.ele_drops = f.drops;
    m.ele_timeouts = f.timeouts;
    let q = r
        .series
        .iter()
        .find(|s| s.link == LINK)
        .ok_or_else(|| CliError::Internal(format!("no queue series for {LINK}")))?;
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

pub fn run(o: &Opts, out: &Path) -> CliResult<Vec<TableRow>> {
    let (paper_mx, paper_rr) = paper_fractions()?;
    let wall = Instant::now();
    let seeds = o.seeds;
    let (dur, shortened) = timing(o)?;
    let mut configs = Vec::new();
    for (testbed, n, variant) in [
        (Testbed::Slow, 200, Variant::Main),
        (Testbed::Slow, 50, Variant::Main),
        (Testbed::Fast, 200, Variant::Main),
        (Testbed::Slow, 200, Variant::Swapped),
        (Testbed::Slow, 200, Variant::Poisson),
    ] {
        for system in [System::MaxNet, System::RenoRed] {
            configs.push(build(system, testbed, n, variant, dur)?);
        }
    }
    std::fs::create_dir_all(out).map_err(|e| {
        CliError::Input(format!(
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
    let per: Vec<&[RunResult]> = results.chunks(seeds as usize).collect();
    let ms: Vec<Vec<M>> = configs
        .iter()
        .zip(&per)
        .map(|(c, rs)| rs.iter().map(|r| measure(c, r, dur)).collect())
        .collect::<CliResult<_>>()?;
    let find_v = |s: System, t: Testbed, n: u32, v: Variant| {
        configs
            .iter()
            .position(|c| c.system == s && c.testbed == t && c.conns == n && c.variant == v)
            .expect("config")
    };
    let find = |s: System, t: Testbed, n: u32| find_v(s, t, n, Variant::Main);

    // ---- tables ---------------------------------------------------------
    let runs = seeds;
    let mut table: Vec<TableRow> = Vec::new();
    let mut txt = String::new();
    let mut md = String::new();
    let _ = writeln!(
        txt,
        "MaxNet vs TCP Reno/RED on mice traffic. Mean over {seeds} seed{} (sd in brackets).{}\n",
        if seeds == 1 { "" } else { "s" },
        if shortened {
            format!(" Runs of {dur} s (--duration), not the default {DURATION_S} s.")
        } else {
            String::new()
        }
    );
    // Fig. 5
    let head: Vec<String> = [
        "system",
        "connections",
        "paper: ≤ 135 ms",
        "aqmlab: ≤ 135 ms",
        "median (ms)",
        "responses",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut rows = Vec::new();
    for n in [200u32, 50] {
        for s in [System::MaxNet, System::RenoRed] {
            let v = &ms[find(s, Testbed::Slow, n)];
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
            for (k, p, f) in [
                (
                    "fraction_le_135ms",
                    paper,
                    (|m: &M| m.frac) as fn(&M) -> f64,
                ),
                ("median_response_ms", None, |m: &M| m.median_ms),
            ] {
                let (mu, sd) = (mean(v, f), sd(v, f));
                table.push(TableRow::new(
                    "Fig. 5",
                    &row,
                    k,
                    unit_of(k),
                    p,
                    mu,
                    sd,
                    runs,
                ));
            }
        }
    }
    let _ = writeln!(
        txt,
        "Fig. 5 — HTTP response time (request's first byte → response's first byte), 10 Mbit/s testbed:\n{}",
        text_table(&head, &rows)
    );
    let _ = writeln!(
        md,
        "### Fig. 5 — response times\n\n{}",
        md_rows(&head, &rows)
    );

    // Figs. 6–7
    let head: Vec<String> = [
        "system",
        "connections",
        "paper",
        "before (Mbit/s)",
        "20–25 s (Mbit/s)",
        "min 0.5-s bin",
        "elephant drops",
        "timeouts",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut rows = Vec::new();
    for n in [50u32, 200] {
        for s in [System::MaxNet, System::RenoRed] {
            let v = &ms[find(s, Testbed::Slow, n)];
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
            for (k, f) in [
                (
                    "elephant_mbps_10_20s",
                    (|m: &M| m.ele_before) as fn(&M) -> f64,
                ),
                ("elephant_mbps_20_25s", |m: &M| m.ele_after),
                ("elephant_min_bin_mbps_20_25s", |m: &M| m.ele_min),
                ("elephant_drops", |m: &M| m.ele_drops as f64),
            ] {
                table.push(TableRow::new(
                    if n == 50 { "Fig. 6" } else { "Fig. 7" },
                    format!("{}, {n} connections, 10 Mbit/s", s.key()),
                    k,
                    unit_of(k),
                    None,
                    mean(v, f),
                    sd(v, f),
                    runs,
                ));
            }
        }
    }
    let _ = writeln!(
        txt,
        "Figs. 6–7 — the elephant's goodput before and after the HTTP connections join at 20 s:\n{}",
        text_table(&head, &rows)
    );
    let _ = writeln!(
        md,
        "### Figs. 6–7 — elephant throughput\n\n{}",
        md_rows(&head, &rows)
    );

    // Figs. 8–9
    let head: Vec<String> = [
        "router",
        "paper",
        "mean backlog 10–20 s",
        "mean backlog after 25 s",
        "> 5 pkts after 25 s",
        "peak 20–22 s",
        "time > 5 pkts in 20–25 s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut rows = Vec::new();
    for s in [System::RenoRed, System::MaxNet] {
        let v = &ms[find(s, Testbed::Fast, 200)];
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
        for (k, f) in [
            (
                "backlog_mean_10_20s_pkts",
                (|m: &M| m.q_before) as fn(&M) -> f64,
            ),
            ("backlog_mean_after_25s_pkts", |m: &M| m.q_after),
            ("backlog_above_5pkts_after_25s", |m: &M| m.q_backlogged),
            ("backlog_peak_20_22s_pkts", |m: &M| m.q_peak),
            ("time_above_5pkts_20_25s_s", |m: &M| m.q_busy_s),
        ] {
            table.push(TableRow::new(
                if s == System::RenoRed {
                    "Fig. 8"
                } else {
                    "Fig. 9"
                },
                format!("{}, 200 connections, 100 Mbit/s", s.key()),
                k,
                unit_of(k),
                None,
                mean(v, f),
                sd(v, f),
                runs,
            ));
        }
    }
    let _ = writeln!(
        txt,
        "Figs. 8–9 — backlog at Router1 (packets), both router links at 100 Mbit/s, 200 connections at 20 s:\n{}",
        text_table(&head, &rows)
    );
    let _ = writeln!(
        md,
        "### Figs. 8–9 — Router1 backlog\n\n{}",
        md_rows(&head, &rows)
    );
    // Alternatives to two of our choices (Fig. 5's metric)
    let head: Vec<String> = [
        "setup (200 connections, 10 Mbit/s)",
        "MaxNet ≤ 135 ms",
        "Reno/RED ≤ 135 ms",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
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
        let f = |s: System| mean(&ms[find_v(s, Testbed::Slow, 200, v)], |m| m.frac);
        rows.push(vec![
            label.into(),
            pct(f(System::MaxNet)),
            pct(f(System::RenoRed)),
        ]);
        if v != Variant::Main {
            for s in [System::MaxNet, System::RenoRed] {
                let x = &ms[find_v(s, Testbed::Slow, 200, v)];
                table.push(TableRow::new(
                    if v == Variant::Swapped {
                        "Fig. 5, swapped"
                    } else {
                        "Fig. 5, poisson"
                    },
                    format!("{}, 200 connections, 10 Mbit/s", s.key()),
                    "fraction_le_135ms",
                    unit_of("fraction_le_135ms"),
                    None,
                    mean(x, |m| m.frac),
                    sd(x, |m| m.frac),
                    runs,
                ));
            }
        }
    }
    let _ = writeln!(
        txt,
        "Fig. 5's fraction under two alternatives to our choices (not in the paper):\n{}",
        text_table(&head, &rows)
    );
    let _ = writeln!(
        md,
        "### Fig. 5 under alternatives to our choices (not in the paper)\n\n{}",
        md_rows(&head, &rows)
    );
    write_csv(&table, &out.join("tables.csv"))?;
    print!("{txt}");

    // ---- plots ----------------------------------------------------------
    let mut plots = Vec::new();
    // Fig. 5: CDF pooled over seeds
    let cdf = |s: System| -> (Vec<(f64, f64)>, f64) {
        let mut v: Vec<f64> = ms[find(s, Testbed::Slow, 200)]
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
                "200 connections at 20 s, 10 Mbit/s; {} responses per system ({seeds} seed{}); x cut at 300 ms (beyond: MaxNet {}, Reno/RED {}); ticks: paper at 135 ms",
                200 * seeds,
                if seeds == 1 { "" } else { "s" },
                pct(beyond_mx),
                pct(beyond_rr)
            ),
            x_desc: "response time (ms)".into(),
            y_desc: "fraction of responses".into(),
            series: vec![
                ("MaxNet".into(), c_mx),
                ("Reno/RED".into(), c_rr),
                ("135 ms".into(), vec![(135.0, 0.0), (135.0, 1.0)]),
                (
                    "paper, MaxNet".into(),
                    vec![(120.0, paper_mx), (150.0, paper_mx)],
                ),
                (
                    "paper, Reno/RED".into(),
                    vec![(120.0, paper_rr), (150.0, paper_rr)],
                ),
            ],
            panels: false,
        },
        &out.join("fig5_response_time_cdf"),
    )?;
    plots.push("fig5_response_time_cdf");
    // Figs. 6–7: seed 1's elephant
    for (fig, n) in [(6, 50u32), (7, 200)] {
        let series = |s: System| -> Vec<(f64, f64)> {
            per[find(s, Testbed::Slow, n)][0]
                .throughput
                .iter()
                .find(|t| t.group == "ftp")
                .map(|t| {
                    t.bps()
                        .filter(|(x, _)| *x + t.bin_s <= dur + 1e-9)
                        .map(|(x, b)| (x + t.bin_s / 2.0, b / 1e6))
                        .collect()
                })
                .unwrap_or_default()
        };
        let stem = format!("fig{fig}_elephant_{n}_http");
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
                    (
                        "HTTP connections open".into(),
                        vec![(JOIN_S, 0.0), (JOIN_S, 10.0)],
                    ),
                ],
                panels: false,
            },
            &out.join(&stem),
        )?;
        plots.push(if fig == 6 {
            "fig6_elephant_50_http"
        } else {
            "fig7_elephant_200_http"
        });
    }
    // Figs. 8–9: seed 1's Router1 backlog at 100 Mbit/s
    let backlog = |s: System, t0: f64, t1: f64, avg: bool| -> Vec<(f64, f64)> {
        per[find(s, Testbed::Fast, 200)][0]
            .series
            .iter()
            .find(|x| x.link == LINK)
            .map(|x| {
                x.samples
                    .iter()
                    .filter(|q| q.time_s >= t0 && q.time_s <= t1)
                    .map(|q| {
                        (
                            q.time_s,
                            if avg {
                                q.avg_pkts.unwrap_or(0.0)
                            } else {
                                q.len_pkts as f64
                            },
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    plot::lines(
        &Lines {
            title: "Fig. 8 — backlog at the RED router (Router1), 100 Mbit/s links".into(),
            subtitle: "one Reno elephant, 200 HTTP connections at 20 s; RED w_q = 0.002, min_th = 30, max_th = 90, max_p = 0.1; seed 1; near 1 s: slow start".into(),
            x_desc: "time (s)".into(),
            y_desc: "backlog (packets)".into(),
            series: vec![
                ("instantaneous".into(), backlog(System::RenoRed, 0.0, dur, false)),
                ("RED average".into(), backlog(System::RenoRed, 0.0, dur, true)),
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
                backlog(System::MaxNet, 0.0, dur, false),
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
                    backlog(System::RenoRed, 19.5, 21.5, false),
                ),
                ("MaxNet".into(), backlog(System::MaxNet, 19.5, 21.5, false)),
            ],
            panels: true,
        },
        &out.join("fig8_9_backlog_zoom"),
    )?;
    plots.push("fig8_9_backlog_zoom");

    // ---- report ---------------------------------------------------------
    let total_wall = wall.elapsed().as_secs_f64();
    let g = |s: System, t: Testbed, n: u32| &ms[find(s, t, n)];
    let fr_mx = mean(g(System::MaxNet, Testbed::Slow, 200), |m| m.frac);
    let fr_rr = mean(g(System::RenoRed, Testbed::Slow, 200), |m| m.frac);
    let q_rr = mean(g(System::RenoRed, Testbed::Slow, 200), |m| m.q_before);
    let q_mx = mean(g(System::MaxNet, Testbed::Slow, 200), |m| m.q_before);
    let med_rr = mean(g(System::RenoRed, Testbed::Slow, 200), |m| m.median_ms);
    let med_mx = mean(g(System::MaxNet, Testbed::Slow, 200), |m| m.median_ms);
    let util_mx = mean(g(System::MaxNet, Testbed::Slow, 200), |m| m.util_before);
    let gv = |s: System, v: Variant| &ms[find_v(s, Testbed::Slow, 200, v)];
    let sw = (
        mean(gv(System::MaxNet, Variant::Swapped), |m| m.frac),
        mean(gv(System::RenoRed, Variant::Swapped), |m| m.frac),
    );
    let po = (
        mean(gv(System::MaxNet, Variant::Poisson), |m| m.frac),
        mean(gv(System::RenoRed, Variant::Poisson), |m| m.frac),
    );
    let rr = g(System::RenoRed, Testbed::Slow, 200);
    let (q5, q95) = (mean(rr, |m| m.q_p5), mean(rr, |m| m.q_p95));
    let late: u32 = rr.iter().map(|m| m.late).sum();
    let late_retx: u32 = rr.iter().map(|m| m.late_req_retx).sum();
    let late_med = mean(rr, |m| m.late_median_ms);
    let late_share = if 2 * late_retx > late {
        "mostly"
    } else {
        "partly"
    };
    let mx = g(System::MaxNet, Testbed::Slow, 200);
    let mx_late: u32 = mx.iter().map(|m| m.late).sum();
    let mx_late_retx: u32 = mx.iter().map(|m| m.late_req_retx).sum();
    let ele = |s: System, n: u32, f: fn(&M) -> f64| mean(g(s, Testbed::Slow, n), f);
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
    let fast = |s: System| {
        let v = g(s, Testbed::Fast, 200);
        (mean(v, |m| m.q_after), mean(v, |m| m.q_backlogged))
    };
    let (mx_queue, rr_queue) = fig89_verdicts(fast(System::MaxNet), fast(System::RenoRed));
    let mut rep = String::new();
    let _ = writeln!(
        rep,
        "# MaxNet and TCP Reno/RED on mice traffic — aqmlab reproduction\n\n\
         Paper: T. K. Phan, T. T. Tran, D. D. Nguyen, N. Thoai, \"MaxNet and TCP Reno/RED on Mice Traffic\" \
         (MSOCP 2009). Runs: {} configurations × {seeds} seed{} = {} runs, {events} events, \
         {sim_wall:.1} s of wall time for the simulations, {total_wall:.1} s in all.{}\n",
        configs.len(),
        if seeds == 1 { "" } else { "s" },
        jobs.len(),
        if shortened {
            format!("\n\n**Run length set by `--duration`**: every run lasts {dur} s; the paper's runs last about 60 s.")
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        rep,
        "## Setup\n\n\
         Scenarios: `{MAXNET_FILE}` (MaxNet routers and hosts) and `{RENO_FILE}` (RED routers, TCP Reno hosts). \
         From the paper: Router1's output 10 Mbit/s; 20 ms RTT (Dummynet); μ = 0.95 at both MaxNet routers; \
         RED w_q = 0.002, min_th = 30, max_th = 90, max_p = 0.1; 100 Mbit/s network cards; one FTP elephant for \
         about 60 s; HTTP connections 20 s in, 62-byte requests, 4 KB responses, 50 or 200 connections; response time \
         from the request's first byte sent to the response's first byte received. For Figs. 8–9 both router links run \
         at 100 Mbit/s, everything else unchanged.\n\n\
         The driver runs each testbed with 200 and 50 connections (10 Mbit/s) and with 200 connections at \
         100 Mbit/s; seeds 1..={seeds} move the elephant's start within [0, 1) s and RED's random drops.\n"
    );
    let _ = writeln!(
        rep,
        "## Choices (the paper does not give them)\n\n\
         - **Where the hosts are.** Fig. 4 is an image we could not read. The HTTP client (the \"HTTP source\", where \
           httperf generates connections) sits beside the FTP source, the web server beside the FTP sink: requests \
           share Router1's 10 Mbit/s output with the elephant, responses come back on the 100 Mbit/s reverse path. \
           With the roles swapped, 200 simultaneous 4 KB responses — 600 packets — hit the 10 Mbit/s link at once \
           and neither system keeps responses within 135 ms: {} (MaxNet) and {} (Reno/RED) are.\n\
         - **Links.** Only r1→r2 is limited (10 Mbit/s); r2→r1 and the host links run at 100 Mbit/s; the 20 ms RTT is \
           10 ms of propagation each way on r1–r2. In the 100 Mbit/s experiment the host links run at 1 Gbit/s so that \
           Router1, not the sender's card, holds the backlog the paper plots.\n\
         - **Arrivals.** All connections open at once at 20 s (httperf's rate is not given). With Poisson arrivals \
           at 10 connections/s instead, {} (MaxNet) and {} (Reno/RED) of the responses are within 135 ms: the \
           difference the paper reports needs the connections to arrive together.\n\
         - **Buffers.** Every router port holds 400 000 bytes (266 full packets), the `limit` of the tc-red(8) \
           example whose thresholds (30 000/90 000 bytes, avpkt 1000) and 10 Mbit/s match the paper's RED settings; \
           the MaxNet routers get the same buffer. RED counts packets (thresholds 30/90 packets as the paper writes \
           them), not gentle, drops (no ECN).\n\
         - **MaxNet.** Link: eq. (3), `p ← max(0, p + Δt(y − μC)/C)` every Δt = 10 ms, over DropTail \
           (`crates/aqmlab/src/aqm/maxnet.rs`). Source: demand law `x = X_max·e^(−κq)` with κ = 10 1/s and \
           X_max = 100 Mbit/s (the testbed's cards), window `x·RTT₀`, MaxStart from the path's spare capacity to the \
           advertised rate over two RTTs (`crates/aqmlab/src/tcp/cc/maxnet.rs`; the MaxNet papers' full texts were \
           not available, so the exact law and gain are our choice, justified in that file).\n\
         - **TCP** (a Linux 2.6 host of the time): 1460-byte segments + 40 bytes of headers, initial window 3 \
           (RFC 3390), minimum RTO 200 ms, initial RTO 3 s, delayed ACKs (40 ms timeout). HTTP connections open \
           with a handshake; in aqmlab the response is a second flow of the connection without a handshake of its \
           own, so a MaxNet response sends its initial window (3 segments, the whole 4 KB) before it has a price — \
           a real MaxNet server would already know the price from the handshake.\n",
        pct(sw.0),
        pct(sw.1),
        pct(po.0),
        pct(po.1),
    );
    let _ = writeln!(
        rep,
        "## Paper vs aqmlab\n\n{md}\nCDF plot: `fig5_response_time_cdf.png`; elephant: `fig6_elephant_50_http.png`, \
         `fig7_elephant_200_http.png`; backlog: `fig8_backlog_red.png`, `fig9_backlog_maxnet.png`, \
         `fig8_9_backlog_zoom.png` (each also as SVG). Every number is in `tables.csv`.\n"
    );
    let _ = writeln!(
        rep,
        "## Where aqmlab differs from the paper, and why\n\n\
         - **MaxNet: {} within 135 ms (paper 100 %); {}.** Router1's queue under MaxNet: mean {q_mx:.2} packets \
           over 10–20 s, Router1 at {:.3} of C with the elephant alone, i.e. μ = 0.95 on the wire), so a request \
           waits only behind the burst itself — 200 SYNs, then 200 requests, interleaved at Router1 with the \
           elephant's packets; {mx_late_retx} of its {mx_late} late responses (all seeds) had their request \
           retransmitted; the median response takes {med_mx:.1} ms: the 20 ms RTT plus \
           that wait.\n\
         - **Reno/RED: {} within 135 ms (paper about 30 %); {}.** Reno/RED is slower \
           than MaxNet in aqmlab too (median {med_rr:.1} ms vs {med_mx:.1} ms), but not by as much: with one Reno \
           elephant, RED's early drops hold Router1's queue at {q_rr:.1} packets on average (10–20 s; 5th–95th \
           percentile {q5:.0}–{q95:.0} packets, i.e. {:.0}–{:.0} ms of queueing at 10 Mbit/s). Only 30 % of responses within 135 ms needs more \
           than 115 ms of queueing (≥ 96 full-size packets, above max_th) for most requests, or many lost requests \
           (each lost request costs at least the 200 ms minimum RTO). The responses beyond 135 ms in aqmlab are \
           {late_share} those: {late_retx} of the {late} late responses (all seeds) had their request retransmitted, and \
           their median is {late_med:.0} ms (the 200 ms RTO plus an RTT). A RED configured as the paper \
           states cannot hold a 96-packet average with one elephant in our model, so the testbed must have queued \
           somewhere RED does not see — a Dummynet pipe queue, the NIC/driver ring (txqueuelen 1000), TSO bursts — \
           or applied its thresholds in other units; the paper does not say.\n\
         - **Figs. 6–7.** The paper's Reno/RED elephant loses throughput when the connections join, more \
           with 200 than with 50; in aqmlab this {}: its goodput falls from {:.2} Mbit/s (10–20 s) to {:.2} (50 connections) and {:.2} \
           (200 connections) over 20–25 s, with a smallest 0.5-s bin of {:.2} and {:.2} Mbit/s: RED drops elephant \
           packets in the burst and some of those losses end in timeouts. The paper's MaxNet elephant keeps its rate; in aqmlab \
           this {} ({:.2} \
           → {:.2} and {:.2} Mbit/s) apart from the bin at 20 s, where the mice's packets take their share \
           (smallest bin {:.2} Mbit/s with 200). Outside the join, Reno's own sawtooth through RED also shows dips \
           (fig7: RED's losses sometimes end in a timeout), which the paper's figures do not show.\n\
         - **Figs. 8–9.** The paper's MaxNet router shows a short transient when the connections open and \
           otherwise an empty queue; aqmlab {}: peak {:.0} packets \
           in 20–22 s, {:.0} ms above 5 packets in 20–25 s, after 25 s a mean of {:.2} packets, \
           above 5 packets in {} of the samples. Its largest queue is the elephant's own start (the spike \
           near 1 s in `fig9_backlog_maxnet.png`): MaxStart's first window is the spare capacity (95 Mbit/s) times \
           the RTT, about 160 packets, which the window-based sender emits at the 1 Gbit/s host rate; a paced \
           sender would not build it. The paper's RED router always \
           keeps a backlog; aqmlab {} (mean {:.2} packets, above 5 packets in {} of the samples \
           after 25 s). At 100 Mbit/s the Reno elephant's window (the pipe's 167 packets plus the queue) halves at \
           RED's first drop, falls below the pipe, and the queue stays empty until additive increase refills it, \
           which takes seconds (the sawtooth in `fig8_backlog_red.png`). A backlog at all times needs a window that \
           never falls below the pipe — more buffering or more flows than the paper describes.\n",
        pct(fr_mx),
        verdict::compare(fr_mx, paper_mx, FRAC_TOL, "", 3),
        util_mx,
        pct(fr_rr),
        verdict::compare(fr_rr, paper_rr, FRAC_TOL, "", 3),
        q5 * 1.2,
        q95 * 1.2,
        finding_word(rr_dips),
        mean(g(System::RenoRed, Testbed::Slow, 200), |m| m.ele_before),
        mean(g(System::RenoRed, Testbed::Slow, 50), |m| m.ele_after),
        mean(g(System::RenoRed, Testbed::Slow, 200), |m| m.ele_after),
        mean(g(System::RenoRed, Testbed::Slow, 50), |m| m.ele_min),
        mean(g(System::RenoRed, Testbed::Slow, 200), |m| m.ele_min),
        finding_word(mx_keeps),
        mean(g(System::MaxNet, Testbed::Slow, 200), |m| m.ele_before),
        mean(g(System::MaxNet, Testbed::Slow, 50), |m| m.ele_after),
        mean(g(System::MaxNet, Testbed::Slow, 200), |m| m.ele_after),
        mean(g(System::MaxNet, Testbed::Slow, 200), |m| m.ele_min),
        mx_queue,
        mean(g(System::MaxNet, Testbed::Fast, 200), |m| m.q_peak),
        1e3 * mean(g(System::MaxNet, Testbed::Fast, 200), |m| m.q_busy_s),
        mean(g(System::MaxNet, Testbed::Fast, 200), |m| m.q_after),
        pct(mean(g(System::MaxNet, Testbed::Fast, 200), |m| m.q_backlogged)),
        rr_queue,
        mean(g(System::RenoRed, Testbed::Fast, 200), |m| m.q_after),
        pct(mean(g(System::RenoRed, Testbed::Fast, 200), |m| m.q_backlogged)),
    );
    let _ = writeln!(
        rep,
        "## Checks\n\n\
         - Packet conservation holds in every run (sent = delivered + dropped + in flight).\n\
         - Each MaxNet source crosses a MaxNet link (checked when the scenario is loaded: a MaxNet source on a \
           path without one is a scenario error).\n\
         - Router1's drops over the run, mean per run: MaxNet {:.1}, Reno/RED {:.1} (10 Mbit/s, 200 connections).\n",
        mean(g(System::MaxNet, Testbed::Slow, 200), |m| m.link_drops as f64),
        mean(g(System::RenoRed, Testbed::Slow, 200), |m| m.link_drops as f64),
    );
    aqmlab::output::write_atomic(&out.join("report.md"), rep.as_bytes())?;
    println!(
        "\nWrote {}/report.md, tables.csv and {} plots (PNG + SVG): {}. {} runs in {total_wall:.1} s.",
        out.display(),
        plots.len(),
        plots.join(", "),
        jobs.len()
    );
    Ok(table)
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
fn fig89_verdicts(mx: (f64, f64), rr: (f64, f64)) -> (String, String) {
    let mx_ok = mx.0 <= EMPTY_MAX_PKTS && mx.1 <= EMPTY_MAX_BUSY;
    let rr_ok = rr.1 >= BACKLOG_MIN_BUSY;
    (
        format!(
            "{} (agreement: a mean of at most {EMPTY_MAX_PKTS} packets and more than 5 packets in at most \
             {:.0} % of the samples after 25 s)",
            verdict::word(mx_ok),
            100.0 * EMPTY_MAX_BUSY
        ),
        format!(
            "{} (agreement: more than 5 packets in at least {:.0} % of the samples after 25 s)",
            verdict::word(rr_ok),
            100.0 * BACKLOG_MIN_BUSY
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fig89_verdicts_flip_outside_the_tolerance() {
        let (m, r) = fig89_verdicts((1.0, 0.01), (30.0, 0.99));
        assert!(
            m.starts_with("agrees") && r.starts_with("agrees"),
            "{m} / {r}"
        );
        let (m, r) = fig89_verdicts((2.5, 0.01), (30.0, 0.5));
        assert!(
            m.starts_with("differs") && r.starts_with("differs"),
            "{m} / {r}"
        );
        let (m, _) = fig89_verdicts((1.0, 0.06), (30.0, 0.99));
        assert!(m.starts_with("differs"), "{m}");
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
