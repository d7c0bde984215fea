//! Reproduction of Kushwaha & Ratneshwer, "Interaction Studies of Some Recent
//! AQMs with High Speed TCPs through Experimental Evaluation"
//! (`codel-highspeed-tcp.txt`): RED, CoDel and sfqCoDel against CUBIC, H-TCP
//! and Compound TCP on a 622 Mbit/s, 48 ms bottleneck with an 8 × BDP buffer.
//!
//! Experiment (a), Tables 1–4 and Figs. 2–4: three flows of the same
//! variant for each CC × AQM. Experiment (b), Table 5: one flow each of
//! H-TCP, Compound and CUBIC for each AQM.
//!
//! The scenario is `scenarios/papers/codel-highspeed-tcp/dumbbell.toml`; the
//! driver overrides the bottleneck queue and each flow's `cc`. The paper ran
//! ns-2.35's tcp-linux ports of Linux 2.6.22 and Pollere's CoDel/sfqCoDel
//! patches, so the variants pinned here are CUBIC `linux-2.6.22`, Compound
//! `ns2`, H-TCP (same constants in 2.6.22 and today), CoDel `ns2` and sfqCoDel
//! `pollere-256`. RED's parameters are not given: we use ns-2.35's defaults
//! (see [`RED`]).

use super::common::{md_rows, run_all, text_table};
use super::Opts;
use crate::{CliError, CliResult};
use aqmlab::metrics::jain;
use aqmlab::{RunResult, Scenario};
use std::fmt::Write as _;
use std::path::Path;

const FILE: &str = "scenarios/papers/codel-highspeed-tcp/dumbbell.toml";
const TOML: &str = include_str!("../../../../scenarios/papers/codel-highspeed-tcp/dumbbell.toml");

/// The bottleneck port.
const LINK: &str = "r1->r2";
/// Base round-trip time of every flow (48 ms bottleneck + 2 × 1 ms access).
const BASE_RTT_S: f64 = 0.050;

/// RED as ns-2.35 configures it by default (`ns-default.tcl`: `thresh_ 0`,
/// `maxthresh_ 0`, `q_weight_ -1`, `linterm_ 10`, `gentle_ true`, `wait_ true`,
/// `bytes_ true`, `queue_in_bytes_ true`, `mean_pktsize_ 500`), which
/// `REDQueue::initialize_params` resolves for this 622 Mbit/s, 24 ms link to
/// min_th = 5 ms · ptc / 2 = 388.75 mean packets (194 375 bytes), max_th =
/// 3 · min_th, w_q = 1 − exp(−1 / (10 · 0.1 · 155 500)) = 6.43e-6 (aqmlab's
/// `auto = true` does the same). In byte mode ns-2 reads the queue limit of
/// 29 904 packets as 29 904 · 500 bytes, i.e. about 14 377 of our 1040-byte
/// packets: that is the buffer an ns-2 RED queue really had.
const RED: &str = "{ kind = \"red\", limit = 29904, auto = true, bytes = true, gentle = true, wait = true, max_p = 0.1, mean_pktsize = 500 }";
const CODEL: &str = "{ kind = \"codel\", limit = 29904, target = \"5ms\", interval = \"100ms\", variant = \"ns2\" }";
const SFQ: &str = "{ kind = \"sfq_codel\", limit = 29904, target = \"5ms\", interval = \"100ms\", variant = \"pollere-256\" }";

const AQMS: [(&str, &str); 3] = [("RED", RED), ("CoDel", CODEL), ("sfqCoDel", SFQ)];
const CCS: [(&str, &str); 3] = [
    ("CUBIC", "{ kind = \"cubic\", variant = \"linux-2.6.22\" }"),
    ("HTCP", "{ kind = \"htcp\" }"),
    ("COMPOUND", "{ kind = \"compound\", variant = \"ns2\" }"),
];

// The paper's tables (rows RED, CoDel, sfqCoDel; columns CUBIC, HTCP, COMPOUND).
/// Table 1: total throughput, Mbit/s.
const PAPER_T1: [[f64; 3]; 3] = [
    [222.941, 267.52, 560.511],
    [545.43, 450.827, 560.511],
    [472.625, 458.605, 441.94],
];
/// Table 2: fairness (Jain's index) among the three flows.
const PAPER_T2: [[f64; 3]; 3] = [
    [0.9998, 0.9993, 0.9999],
    [0.9977, 0.9787, 0.9999],
    [0.9999, 1.0, 0.99955],
];
/// Table 3: packet loss, percent.
const PAPER_T3: [[f64; 3]; 3] = [
    [8.45, 4.697, 0.0],
    [0.00052, 0.0016, 0.0],
    [0.00135, 0.0034, 0.0034],
];
/// Table 4: "average queuing delay", seconds (≈ the 50 ms base RTT, so we
/// compare it with base RTT + mean queueing delay).
const PAPER_T4: [[f64; 3]; 3] = [
    [0.0602, 0.05487, 0.05218],
    [0.0507, 0.05145, 0.05218],
    [0.0504, 0.05087, 0.05205],
];
/// Table 5: inter-protocol fairness and total throughput (Mbit/s) with one
/// H-TCP, one Compound and one CUBIC flow.
const PAPER_T5: [(f64, f64); 3] = [(0.666, 276.62), (0.853, 526.99), (0.997, 554.44)];

/// What we measure in one run.
#[derive(Clone, Copy, Default)]
struct M {
    thr_mbps: f64,
    jain: f64,
    loss_pct: f64,
    queue_delay_s: f64,
}

fn measure(r: &RunResult) -> CliResult<M> {
    if !r.conservation.holds() {
        return Err(CliError::Internal(format!(
            "packet conservation violated: {:?}",
            r.conservation
        )));
    }
    let q = r
        .queue(LINK)
        .ok_or_else(|| CliError::Internal(format!("no queue {LINK}")))?;
    let gp: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps).collect();
    let offered =
        (q.enqueued + q.dropped_early + q.dropped_forced + q.dropped_overflow).max(1) as f64;
    Ok(M {
        thr_mbps: gp.iter().sum::<f64>() / 1e6,
        jain: jain(&gp),
        loss_pct: 100.0 * q.dropped as f64 / offered,
        queue_delay_s: q.mean_delay_s,
    })
}

fn mean(ms: &[M], f: impl Fn(&M) -> f64) -> f64 {
    ms.iter().map(f).sum::<f64>() / ms.len().max(1) as f64
}

/// The paper's run length.
const DURATION_S: f64 = 100.0;

fn scenario(aqm: usize, ccs: [usize; 3], dur: f64) -> CliResult<Scenario> {
    let mut o = vec![
        format!("links.bottleneck.queue_ab={}", AQMS[aqm].1),
        format!("duration=\"{dur}s\""),
    ];
    for (i, c) in ccs.iter().enumerate() {
        o.push(format!("flows.f{}.cc={}", i + 1, CCS[*c].1));
    }
    Ok(Scenario::from_toml_with(TOML, FILE, &o)?)
}

pub fn run(o: &Opts, out: &Path) -> CliResult {
    let seeds = o.seeds;
    let (dur, changed) =
        o.duration_or(DURATION_S, 2.0, "the flows start within the first second")?;
    let mut configs = Vec::new();
    for aqm in 0..3 {
        for cc in 0..3 {
            configs.push(scenario(aqm, [cc; 3], dur)?);
        }
    }
    for aqm in 0..3 {
        // Table 5: H-TCP, Compound, CUBIC
        configs.push(scenario(aqm, [1, 2, 0], dur)?);
    }
    let jobs: Vec<(&Scenario, u64)> = configs
        .iter()
        .flat_map(|c| (1..=seeds).map(move |s| (c, s)))
        .collect();
    let wall = std::time::Instant::now();
    let results = run_all(&format!("codel-highspeed-tcp: {} runs", jobs.len()), &jobs);
    let wall = wall.elapsed().as_secs_f64();
    let events: u64 = results.iter().map(|r| r.events).sum();
    let ms: Vec<M> = results.iter().map(measure).collect::<CliResult<_>>()?;
    let per_config: Vec<&[M]> = ms.chunks(seeds as usize).collect();
    let firsts: Vec<&RunResult> = results.chunks(seeds as usize).map(|c| &c[0]).collect();
    std::fs::create_dir_all(out)?;

    // ---- tables -----------------------------------------------------------
    let mut txt = String::new();
    let mut md = String::new();
    let mut csv = String::from("table,aqm,cc,metric,paper,aqmlab,aqmlab_sd,runs\n");
    let sd = |v: &[M], f: &dyn Fn(&M) -> f64| -> f64 {
        let m = mean(v, f);
        let n = v.len() as f64;
        if n < 2.0 {
            0.0
        } else {
            (v.iter().map(|x| (f(x) - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        }
    };
    type Metric = (
        &'static str,
        &'static str,
        [[f64; 3]; 3],
        usize,
        fn(&M) -> f64,
    );
    let metrics: [Metric; 4] = [
        ("Table 1", "total throughput (Mbit/s)", PAPER_T1, 1, |m| {
            m.thr_mbps
        }),
        ("Table 2", "fairness (Jain's index)", PAPER_T2, 4, |m| {
            m.jain
        }),
        ("Table 3", "packet loss (%)", PAPER_T3, 4, |m| m.loss_pct),
        (
            "Table 4",
            "average queuing delay (s; aqmlab: base RTT 0.050 s + mean queueing delay)",
            PAPER_T4,
            4,
            |m| BASE_RTT_S + m.queue_delay_s,
        ),
    ];
    let _ = writeln!(
        txt,
        "Kushwaha & Ratneshwer: RED, CoDel, sfqCoDel × CUBIC, H-TCP, Compound at 622 Mbit/s. Every cell: paper / aqmlab (mean of {seeds} seed{}).{}\n",
        if seeds == 1 { "" } else { "s" },
        if changed {
            format!(" RUNS OF {dur} s (--duration), not the paper's {DURATION_S} s.")
        } else {
            String::new()
        }
    );
    for (t, title, paper, dec, f) in metrics.iter() {
        let head: Vec<String> = std::iter::once("AQM".to_string())
            .chain(CCS.iter().map(|c| c.0.to_string()))
            .collect();
        let mut rows = Vec::new();
        let mut mdrows = Vec::new();
        for (ai, (aname, _)) in AQMS.iter().enumerate() {
            let mut row = vec![aname.to_string()];
            let mut mdrow = vec![aname.to_string()];
            for ci in 0..3 {
                let v = per_config[ai * 3 + ci];
                let ours = mean(v, f);
                let p = paper[ai][ci];
                row.push(format!("{p} / {ours:.dec$}", dec = *dec));
                mdrow.push(format!(
                    "{p} / {ours:.dec$} (±{:.dec$})",
                    sd(v, f),
                    dec = *dec
                ));
                let _ = writeln!(
                    csv,
                    "{t},{aname},{},{title:?},{p},{ours},{},{seeds}",
                    CCS[ci].0,
                    sd(v, f)
                );
            }
            rows.push(row);
            mdrows.push(mdrow);
        }
        let _ = writeln!(txt, "{t}. {title}\n{}", text_table(&head, &rows));
        let _ = writeln!(
            md,
            "### {t} — {title}\n\npaper / aqmlab (± sd over seeds)\n\n{}",
            md_rows(&head, &mdrows)
        );
    }
    let head: Vec<String> = [
        "AQM",
        "inter-protocol fairness",
        "total throughput (Mbit/s)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut rows = Vec::new();
    for (ai, (aname, _)) in AQMS.iter().enumerate() {
        let v = per_config[9 + ai];
        let (pj, pt) = PAPER_T5[ai];
        let (j, t) = (mean(v, |m| m.jain), mean(v, |m| m.thr_mbps));
        rows.push(vec![
            aname.to_string(),
            format!("{pj} / {j:.3}"),
            format!("{pt} / {t:.1}"),
        ]);
        let _ = writeln!(
            csv,
            "Table 5,{aname},mixed,fairness,{pj},{j},{},{seeds}",
            sd(v, &|m| m.jain)
        );
        let _ = writeln!(
            csv,
            "Table 5,{aname},mixed,throughput_mbps,{pt},{t},{},{seeds}",
            sd(v, &|m| m.thr_mbps)
        );
    }
    let _ = writeln!(
        txt,
        "Table 5. One flow each of H-TCP, Compound and CUBIC\n{}",
        text_table(&head, &rows)
    );
    let _ = writeln!(
        md,
        "### Table 5 — one flow each of H-TCP, Compound and CUBIC\n\npaper / aqmlab\n\n{}",
        md_rows(&head, &rows)
    );
    // per-flow throughput of the mixed runs (who wins)
    let mut mixed = String::new();
    for (ai, (aname, _)) in AQMS.iter().enumerate() {
        let r = firsts[9 + ai];
        let per: Vec<String> = r
            .flows
            .iter()
            .map(|f| format!("{} {:.1}", f.cc, f.goodput_bps / 1e6))
            .collect();
        let _ = writeln!(mixed, "- {aname}: {} Mbit/s (seed 1)", per.join(", "));
    }
    let _ = writeln!(
        txt,
        "{} runs ({:.1} M events) in {:.1} s wall; report, tables.csv and plots in {}",
        results.len(),
        events as f64 / 1e6,
        wall,
        out.display()
    );
    print!("{txt}");
    std::fs::write(out.join("tables.csv"), csv)?;

    // ---- plots: queue length over time, one figure per CC (Figs. 2–4) -----
    let mut figs = Vec::new();
    for (ci, (cname, _)) in CCS.iter().enumerate() {
        let series = AQMS
            .iter()
            .enumerate()
            .map(|(ai, (aname, _))| {
                let r = firsts[ai * 3 + ci];
                let pts = r
                    .series
                    .iter()
                    .find(|s| s.link == LINK)
                    .map(|s| {
                        s.samples
                            .iter()
                            .map(|x| (x.time_s, x.len_pkts as f64))
                            .collect()
                    })
                    .unwrap_or_default();
                (aname.to_string(), pts)
            })
            .collect();
        let stem = format!("queue_{}", cname.to_lowercase());
        crate::plot::lines(
            &crate::plot::Lines {
                title: format!("Queue length at the bottleneck, three {cname} flows (Figs. 2–4)"),
                subtitle: "instantaneous queue (packets), sampled every 100 ms, seed 1; buffer 29 904 packets".into(),
                x_desc: "time (s)".into(),
                y_desc: "queue length (packets)".into(),
                series,
                panels: true,
            },
            &out.join(&stem),
        )?;
        figs.push(stem);
    }

    // ---- report -------------------------------------------------------------
    let mut rep = format!(
        "# Reproduction: Kushwaha & Ratneshwer, RED, CoDel and sfqCoDel with CUBIC, H-TCP and Compound TCP\n\n\
         Produced by `aqmlab reproduce codel-highspeed-tcp --seeds {seeds}{}` ({} runs, {:.1} s wall).{}\n\n\
         ## Setup\n\n\
         Scenario `{FILE}` (compiled into the binary): a 622 Mbit/s bottleneck with a 48 ms round trip, \
         1 Gbit/s access links with a 1 ms round trip (base RTT 50 ms), a buffer of 8 × BDP = 29 904 \
         packets of 1040 bytes, three flows, {dur} s. Each flow starts at a random time in the first second. \
         The paper used ns-2.35 with the tcp-linux ports of Linux 2.6.22 and Pollere's CoDel and sfqCoDel; \
         we pin the same variants: CUBIC `linux-2.6.22` (β = 819/1024, no HyStart), H-TCP (Linux constants), \
         Compound `ns2` (loss response halves the total window), CoDel `ns2` (Pollere re-entry rule), \
         sfqCoDel `pollere-256`. TCP: ns-2 defaults (1000-byte segments, minimum RTO 200 ms, 10 ms tick, \
         initial RTO 3 s, delayed ACKs with a 100 ms timeout, initial window 2, no receive-window limit).\n\n\
         **RED** (parameters not given by the paper): ns-2.35's defaults, which the paper most likely ran — \
         byte mode with a 500-byte mean packet, automatic thresholds (`initialize_params`: min_th = 194 375 bytes \
         ≈ 187 full packets, max_th = 3 · min_th), w_q = 6.43·10⁻⁶, max_p = 0.1, gentle, `wait`; in byte mode \
         ns-2 reads the 29 904-packet limit as 29 904 × 500 bytes ≈ 14 377 full packets. With such a small w_q \
         the average follows the queue over seconds, not RTTs.\n\n\
         ## Results\n\n{md}\n\
         Per-flow throughput in the mixed runs:\n\n{mixed}\n\
         Plots: {}.\n\n",
        if changed {
            format!(" --duration {dur}s")
        } else {
            String::new()
        },
        results.len(),
        wall,
        if changed {
            format!(
                "\n\n**Run length set by `--duration`**: {dur} s instead of the paper's {DURATION_S} s."
            )
        } else {
            String::new()
        },
        figs.iter().map(|f| format!("`{f}.png`")).collect::<Vec<_>>().join(", ")
    );
    rep.push_str(&discussion(&per_config));
    std::fs::write(out.join("report.md"), rep)?;
    Ok(())
}

/// The comparison in words, from the measured numbers.
fn discussion(pc: &[&[M]]) -> String {
    let thr = |a: usize, c: usize| mean(pc[a * 3 + c], |m| m.thr_mbps);
    let loss = |a: usize, c: usize| mean(pc[a * 3 + c], |m| m.loss_pct);
    let q = |a: usize, c: usize| mean(pc[a * 3 + c], |m| m.queue_delay_s * 1e3);
    let mut s = String::from("## Where aqmlab differs from the paper, and why\n\n");
    let _ = writeln!(
        s,
        "- **RED.** The paper's RED loses 8.45 % (CUBIC) and 4.7 % (H-TCP) of packets and carries only 223–268 Mbit/s; \
         aqmlab's RED loses {:.3} % / {:.3} % / {:.3} % (CUBIC / H-TCP / Compound) at {:.0} / {:.0} / {:.0} Mbit/s with a mean \
         queueing delay of {:.1} / {:.1} / {:.1} ms. The paper does not give its RED parameters; with ns-2's defaults the \
         average reacts over seconds, so what RED does depends on how far the flows overshoot before it catches up.",
        loss(0, 0), loss(0, 1), loss(0, 2), thr(0, 0), thr(0, 1), thr(0, 2), q(0, 0), q(0, 1), q(0, 2)
    );
    let _ = writeln!(
        s,
        "- **CoDel and sfqCoDel**: a mean queueing delay of {:.1}–{:.1} ms in aqmlab (their target: 5 ms), losses \
         of {:.4}–{:.4} % (paper's Table 3: 0–0.0034 %); {}. Throughput: CoDel {:.0} / {:.0} / {:.0} Mbit/s, \
         sfqCoDel {:.0} / {:.0} / {:.0} Mbit/s (paper: 545 / 451 / 561 and 473 / 459 / 442).",
        (0..3).flat_map(|c| [q(1, c), q(2, c)]).fold(f64::MAX, f64::min),
        (0..3).flat_map(|c| [q(1, c), q(2, c)]).fold(0.0, f64::max),
        (0..3).flat_map(|c| [loss(1, c), loss(2, c)]).fold(f64::MAX, f64::min),
        (0..3).flat_map(|c| [loss(1, c), loss(2, c)]).fold(0.0, f64::max),
        loss_verdict(&[1, 2].map(|a| [0, 1, 2].map(|c| loss(a, c)))),
        thr(1, 0), thr(1, 1), thr(1, 2), thr(2, 0), thr(2, 1), thr(2, 2)
    );
    s.push_str(
        "- **Table 4** is, by its magnitude, a round-trip delay (≈ the 50 ms base RTT), so we compare it with base RTT + \
         our mean queueing delay at the bottleneck.\n\
         - **One run.** The paper reports one run per cell; aqmlab reports the mean (and sd) over seeds that change only \
         the flows' start times within the first second. The sd shows how much of any difference is run-to-run noise.\n",
    );
    s
}

/// Table 3's loss under CoDel and sfqCoDel against the paper's, cell by cell,
/// within [`LOSS_TOL`] percentage points: `ours[a][c]` for AQM a (CoDel,
/// sfqCoDel) and CC c (CUBIC, H-TCP, Compound).
fn loss_verdict(ours: &[[f64; 3]; 2]) -> String {
    let mut ok = 0;
    for (a, row) in ours.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            ok += usize::from(LOSS_TOL.within(*v, PAPER_T3[a + 1][c]));
        }
    }
    format!(
        "{} cells agree with the paper's within {}",
        super::verdict::count(ok, 6),
        LOSS_TOL.describe("percentage points")
    )
}

/// How far a loss percentage may lie from the paper's and still agree.
const LOSS_TOL: super::verdict::Tol = super::verdict::Tol::Abs(0.001);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_verdict_flips_outside_the_tolerance() {
        let paper = [0, 1].map(|a| PAPER_T3[a + 1]);
        assert!(loss_verdict(&paper).starts_with("all 6 cells agree"));
        let mut moved = paper;
        moved[0][0] += 0.0011;
        assert!(loss_verdict(&moved).starts_with("5 of 6 cells agree"));
        let far = [[0.5; 3]; 2];
        assert!(loss_verdict(&far).starts_with("none of the 6 cells agree"));
    }
}
