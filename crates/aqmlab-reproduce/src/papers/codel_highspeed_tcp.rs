//! Reproduction of Kushwaha & Ratneshwer, "Interaction Studies of Some Recent
//! AQMs with High Speed TCPs through Experimental Evaluation": RED, CoDel and
//! sfqCoDel against CUBIC, H-TCP and Compound TCP on a 622 Mbit/s, 48 ms
//! bottleneck with an 8 × BDP buffer.
//!
//! Experiment (a), Tables 1–4 and Figs. 2–4: three flows of the same
//! variant for each CC × AQM. Experiment (b), Table 5: one flow each of
//! H-TCP, Compound and CUBIC for each AQM.
//!
//! Everything but the measurement is data in `scenarios/papers/codel-highspeed-tcp/`:
//! the scenario (`dumbbell.toml`), the experiment matrix (`matrix.toml`: the
//! AQMs and CCs, each as the TOML value that replaces the bottleneck queue or
//! a flow's `cc`) and the paper's numbers (`paper.toml`). The report's prose
//! is `templates/codel-highspeed-tcp.md`. The paper ran ns-2.35's tcp-linux
//! ports of Linux 2.6.22 and Pollere's CoDel/sfqCoDel patches, so the
//! variants pinned in the matrix are CUBIC `linux-2.6.22`, Compound `ns2`,
//! H-TCP (same constants in 2.6.22 and today), CoDel `ns2` and sfqCoDel
//! `pollere-256`; RED's parameters are not given, so it gets ns-2.35's
//! defaults (explained in `matrix.toml`).

use crate::common::{check_conservation, md_rows, run_all, text_table};
use crate::matrix;
use crate::paper::Paper;
use crate::stats::jain;
use crate::stats::{mean_by, sd_by};
use crate::table::{write_csv, TableRow};
use crate::template::{render, render_part};
use crate::verdict::{self, Tol};
use crate::Opts;
use crate::{Error, Result};
use aqmlab::{RunResult, Scenario};
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::Path;

const DIR: &str = "scenarios/papers/codel-highspeed-tcp";
const FILE: &str = "scenarios/papers/codel-highspeed-tcp/dumbbell.toml";
const TOML: &str = include_str!("../../../../scenarios/papers/codel-highspeed-tcp/dumbbell.toml");
const MATRIX_FILE: &str = "scenarios/papers/codel-highspeed-tcp/matrix.toml";
const MATRIX_TOML: &str =
    include_str!("../../../../scenarios/papers/codel-highspeed-tcp/matrix.toml");
const PAPER: &str = include_str!("../../../../scenarios/papers/codel-highspeed-tcp/paper.toml");
const REPORT: &str = include_str!("templates/codel-highspeed-tcp.md");
/// The sentences the report adds where the run differs from the paper's.
const PARTS: &str = include_str!("templates/codel-highspeed-tcp-parts.md");

/// The bottleneck port.
const LINK: &str = "r1->r2";
/// Base round-trip time of every flow (48 ms bottleneck + 2 × 1 ms access).
const BASE_RTT_S: f64 = 0.050;
/// How far a loss percentage may lie from the paper's and still agree.
const LOSS_TOL: Tol = Tol::Abs(0.001);

/// `matrix.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Matrix {
    aqm: Vec<Aqm>,
    cc: Vec<Cc>,
    mixed: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Aqm {
    name: String,
    queue: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Cc {
    name: String,
    cc: String,
}

/// The matrix parses and has the paper's shape (for the test over every
/// matrix).
fn check_matrix(text: &str) -> Result {
    Matrix::parse(text).map(|_| ())
}

impl Matrix {
    fn load() -> Result<Matrix> {
        Matrix::parse(MATRIX_TOML)
    }

    fn parse(text: &str) -> Result<Matrix> {
        let m: Matrix = matrix::parse(text, MATRIX_FILE)?;
        if m.aqm.len() != 3 || m.cc.len() != 3 || m.mixed.len() != 3 {
            return Err(Error::Internal(format!(
                "{MATRIX_FILE}: the paper's tables need 3 AQMs, 3 CCs and 3 mixed flows"
            )));
        }
        for n in &m.mixed {
            m.cc_index(n)?;
        }
        Ok(m)
    }

    fn cc_index(&self, name: &str) -> Result<usize> {
        (self.cc.iter().position(|c| c.name == name))
            .ok_or_else(|| matrix::bad(MATRIX_FILE, "mixed", format!("no cc named {name}")))
    }
}

/// What we measure in one run.
#[derive(Clone, Copy, Default)]
struct M {
    thr_mbps: f64,
    jain: f64,
    loss_pct: f64,
    queue_delay_s: f64,
}

fn measure(r: &RunResult) -> Result<M> {
    check_conservation(r)?;
    let q = r
        .queue(LINK)
        .ok_or_else(|| Error::Internal(format!("no queue {LINK}")))?;
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

fn scenario(m: &Matrix, aqm: usize, ccs: [usize; 3], dur: f64) -> Result<Scenario> {
    let mut o = vec![
        format!("links.bottleneck.queue_ab={}", m.aqm[aqm].queue),
        format!("duration=\"{dur}s\""),
    ];
    for (i, c) in ccs.iter().enumerate() {
        o.push(format!("flows.f{}.cc={}", i + 1, m.cc[*c].cc));
    }
    Ok(Scenario::from_toml_with(TOML, FILE, &o)?)
}

/// A metric of Tables 1–4: table, title, decimals, measurement.
type Metric = (&'static str, &'static str, usize, fn(&M) -> f64);

const METRICS: [Metric; 4] = [
    ("Table 1", "total throughput (Mbit/s)", 1, |m| m.thr_mbps),
    ("Table 2", "fairness (Jain's index)", 4, |m| m.jain),
    ("Table 3", "packet loss (%)", 4, |m| m.loss_pct),
    (
        "Table 4",
        "average queuing delay (s; aqmlab: base RTT 0.050 s + mean queueing delay)",
        4,
        |m| BASE_RTT_S + m.queue_delay_s,
    ),
];

/// Everything the tables, plots and report are made from.
struct Outcome<'a> {
    matrix: &'a Matrix,
    paper: &'a Paper,
    /// The paper's run length (s).
    paper_s: f64,
    seeds: u64,
    /// Per configuration (AQM × CC, then AQM × mixed) the runs' measurements.
    per_config: Vec<&'a [M]>,
    /// Per configuration the first seed's run.
    firsts: Vec<&'a RunResult>,
}

/// This paper in the registry ([`crate::PAPERS`]).
pub const DRIVER: crate::Driver = crate::Driver {
    name: "codel-highspeed-tcp",
    about: "Kushwaha, Ratneshwer: RED, CoDel and sfqCoDel with CUBIC, H-TCP and Compound TCP at 622 Mbit/s",
    default_seeds: 3, // the paper reports one run; 3 show the spread
    run,
    matrix_file: MATRIX_FILE,
    matrix_toml: MATRIX_TOML,
    check_matrix,
    fixed_duration: None,
    load: None,
};

pub fn run(o: &Opts, out: &Path) -> Result<Vec<TableRow>> {
    let seeds = o.seeds;
    // the paper's run length is the scenario file's
    let paper_s = Scenario::from_toml(TOML, FILE)?.duration.0 as f64 / 1e9;
    let (dur, changed) = o.duration_or(paper_s, 2.0, "the flows start within the first second")?;
    let matrix = Matrix::load()?;
    let paper = Paper::parse(PAPER, &format!("{DIR}/paper.toml"))?;
    let mut configs = Vec::new();
    for aqm in 0..3 {
        for cc in 0..3 {
            configs.push(scenario(&matrix, aqm, [cc; 3], dur)?);
        }
    }
    let mixed: Vec<usize> = matrix
        .mixed
        .iter()
        .map(|n| matrix.cc_index(n))
        .collect::<Result<_>>()?;
    let mixed = [mixed[0], mixed[1], mixed[2]];
    for aqm in 0..3 {
        configs.push(scenario(&matrix, aqm, mixed, dur)?);
    }
    let jobs: Vec<(&Scenario, u64)> = configs
        .iter()
        .flat_map(|c| (1..=seeds).map(move |s| (c, s)))
        .collect();
    let wall = std::time::Instant::now();
    let results = run_all(&format!("codel-highspeed-tcp: {} runs", jobs.len()), &jobs);
    let wall = wall.elapsed().as_secs_f64();
    let events: u64 = results.iter().map(|r| r.events).sum();
    let ms: Vec<M> = results.iter().map(measure).collect::<Result<_>>()?;
    let oc = Outcome {
        matrix: &matrix,
        paper: &paper,
        paper_s,
        seeds,
        per_config: ms.chunks(seeds as usize).collect(),
        firsts: results.chunks(seeds as usize).map(|c| &c[0]).collect(),
    };
    std::fs::create_dir_all(out)?;
    let (rows, txt, md) = tables(&oc, if changed { Some(dur) } else { None })?;
    print!("{txt}");
    println!(
        "{} runs ({:.1} M events) in {:.1} s wall; report, tables.csv and plots in {}",
        results.len(),
        events as f64 / 1e6,
        wall,
        super::shown(out)
    );
    write_csv(&rows, &out.join("tables.csv"))?;
    let figs = plots(&oc, out)?;
    let rep = report(&oc, &md, &figs, dur, changed, results.len(), wall)?;
    aqmlab::output::write_atomic(&out.join("report.md"), rep.as_bytes())?;
    Ok(rows)
}

/// The long-format rows, the plain-text tables for stdout and the Markdown
/// tables for the report.
fn tables(oc: &Outcome, shortened: Option<f64>) -> Result<(Vec<TableRow>, String, String)> {
    let (seeds, m) = (oc.seeds, oc.matrix);
    let mut rows = Vec::new();
    let mut txt = format!(
        "Kushwaha & Ratneshwer: RED, CoDel, sfqCoDel × CUBIC, H-TCP, Compound at 622 Mbit/s. Every cell: paper / aqmlab (mean of {seeds} seed{}).{}\n\n",
        if seeds == 1 { "" } else { "s" },
        shortened.map_or(String::new(), |d| format!(
            " RUNS OF {d} s (--duration), not the paper's {} s.",
            oc.paper_s
        ))
    );
    let mut md = String::new();
    let head: Vec<String> = std::iter::once("AQM".to_string())
        .chain(m.cc.iter().map(|c| c.name.clone()))
        .collect();
    for (t, title, dec, f) in METRICS {
        let (mut trows, mut mdrows) = (Vec::new(), Vec::new());
        for (ai, a) in m.aqm.iter().enumerate() {
            let mut row = vec![a.name.clone()];
            let mut mdrow = vec![a.name.clone()];
            for (ci, c) in m.cc.iter().enumerate() {
                let v = oc.per_config[ai * 3 + ci];
                let (ours, sd) = (mean_by(v, f), sd_by(v, f));
                let p = oc.paper.get(t, &a.name, &c.name)?;
                row.push(format!("{} / {ours:.dec$}", p.value));
                mdrow.push(format!("{} / {ours:.dec$} (±{sd:.dec$})", p.value));
                rows.push(TableRow::new(
                    t,
                    &a.name,
                    &c.name,
                    &p.unit,
                    Some(p.value),
                    ours,
                    sd,
                    seeds,
                ));
            }
            trows.push(row);
            mdrows.push(mdrow);
        }
        let _ = writeln!(txt, "{t}. {title}\n{}", text_table(&head, &trows));
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
    .map(String::from)
    .to_vec();
    let mut trows = Vec::new();
    for (ai, a) in m.aqm.iter().enumerate() {
        let v = oc.per_config[9 + ai];
        let mut row = vec![a.name.clone()];
        for (col, dec, f) in [
            ("fairness", 3, (|m| m.jain) as fn(&M) -> f64),
            ("throughput_mbps", 1, |m| m.thr_mbps),
        ] {
            let p = oc.paper.get("Table 5", &a.name, col)?;
            let (ours, sd) = (mean_by(v, f), sd_by(v, f));
            row.push(format!("{} / {ours:.dec$}", p.value));
            rows.push(TableRow::new(
                "Table 5",
                &a.name,
                col,
                &p.unit,
                Some(p.value),
                ours,
                sd,
                seeds,
            ));
        }
        trows.push(row);
    }
    let _ = writeln!(
        txt,
        "Table 5. One flow each of H-TCP, Compound and CUBIC\n{}",
        text_table(&head, &trows)
    );
    let _ = writeln!(
        md,
        "### Table 5 — one flow each of H-TCP, Compound and CUBIC\n\npaper / aqmlab\n\n{}",
        md_rows(&head, &trows)
    );
    Ok((rows, txt, md))
}

/// Queue length over time, one figure per CC (Figs. 2–4); the plot stems.
fn plots(oc: &Outcome, out: &Path) -> Result<Vec<String>> {
    let mut figs = Vec::new();
    for (ci, c) in oc.matrix.cc.iter().enumerate() {
        let series = oc
            .matrix
            .aqm
            .iter()
            .enumerate()
            .map(|(ai, a)| {
                let r = oc.firsts[ai * 3 + ci];
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
                (a.name.clone(), pts)
            })
            .collect();
        let stem = format!("queue_{}", c.name.to_lowercase());
        crate::plot::lines(
            &crate::plot::Lines {
                title: format!(
                    "Queue length at the bottleneck, three {} flows (Figs. 2–4)",
                    c.name
                ),
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
    Ok(figs)
}

/// The report: `templates/codel-highspeed-tcp.md` filled from the run.
fn report(
    oc: &Outcome,
    md: &str,
    figs: &[String],
    dur: f64,
    changed: bool,
    runs: usize,
    wall: f64,
) -> Result<String> {
    let pc = &oc.per_config;
    let thr = |a: usize, c: usize| mean_by(pc[a * 3 + c], |m| m.thr_mbps);
    let loss = |a: usize, c: usize| mean_by(pc[a * 3 + c], |m| m.loss_pct);
    let q = |a: usize, c: usize| mean_by(pc[a * 3 + c], |m| m.queue_delay_s * 1e3);
    let three = |f: &dyn Fn(usize) -> f64, dec: usize| {
        (0..3)
            .map(|c| format!("{:.dec$}", f(c)))
            .collect::<Vec<_>>()
            .join(" / ")
    };
    let span = |f: &dyn Fn(usize, usize) -> f64, dec: usize| {
        let v: Vec<f64> = (0..3).flat_map(|c| [f(1, c), f(2, c)]).collect();
        let lo = v.iter().copied().fold(f64::MAX, f64::min);
        let hi = v.iter().copied().fold(0.0, f64::max);
        format!("{lo:.dec$}–{hi:.dec$}")
    };
    let mut mixed = String::new();
    for (ai, a) in oc.matrix.aqm.iter().enumerate() {
        let per: Vec<String> = oc.firsts[9 + ai]
            .flows
            .iter()
            .map(|f| format!("{} {:.1}", f.cc, f.goodput_bps / 1e6))
            .collect();
        let _ = writeln!(mixed, "- {}: {} Mbit/s (seed 1)", a.name, per.join(", "));
    }
    let paper_loss: Vec<[f64; 3]> = (1..3)
        .map(|a| {
            let row = &oc.matrix.aqm[a].name;
            let v: Vec<f64> = oc
                .matrix
                .cc
                .iter()
                .map(|c| oc.paper.get("Table 3", row, &c.name).map(|p| p.value))
                .collect::<Result<_>>()?;
            Ok([v[0], v[1], v[2]])
        })
        .collect::<Result<_>>()?;
    let ours_loss = [1, 2].map(|a| [0, 1, 2].map(|c| loss(a, c)));
    let vars = [
        ("seeds", oc.seeds.to_string()),
        (
            "duration_flag",
            if changed {
                format!(" --duration {dur}s")
            } else {
                String::new()
            },
        ),
        ("runs", runs.to_string()),
        ("wall", format!("{wall:.1}")),
        (
            "duration_note",
            if changed {
                render_part(
                    PARTS,
                    "duration-note",
                    &[
                        ("dur", dur.to_string()),
                        ("paper_dur", oc.paper_s.to_string()),
                    ],
                )?
            } else {
                String::new()
            },
        ),
        ("file", FILE.to_string()),
        ("matrix", MATRIX_FILE.to_string()),
        ("paper", format!("{DIR}/paper.toml")),
        ("dur", dur.to_string()),
        ("tables", md.to_string()),
        ("mixed", mixed),
        (
            "plots",
            figs.iter()
                .map(|f| format!("`{f}.png`"))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        ("red_loss", three(&|c| loss(0, c), 3)),
        ("red_thr", three(&|c| thr(0, c), 0)),
        ("red_delay", three(&|c| q(0, c), 1)),
        ("codel_delay", span(&q, 1)),
        ("codel_loss", span(&loss, 4)),
        (
            "loss_verdict",
            loss_verdict(&ours_loss, &[paper_loss[0], paper_loss[1]]),
        ),
        ("codel_thr", three(&|c| thr(1, c), 0)),
        ("sfq_thr", three(&|c| thr(2, c), 0)),
    ];
    render(REPORT, &vars)
}

/// Table 3's loss under CoDel and sfqCoDel against the paper's, cell by cell,
/// within [`LOSS_TOL`] percentage points: `ours[a][c]` and `paper[a][c]` for
/// AQM a (CoDel, sfqCoDel) and CC c (CUBIC, H-TCP, Compound).
fn loss_verdict(ours: &[[f64; 3]; 2], paper: &[[f64; 3]; 2]) -> String {
    let ok = (0..2)
        .flat_map(|a| (0..3).map(move |c| (a, c)))
        .filter(|&(a, c)| LOSS_TOL.within(ours[a][c], paper[a][c]))
        .count();
    format!(
        "{} cells agree with the paper's within {}",
        verdict::count(ok, 6),
        LOSS_TOL.describe("percentage points")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_verdict_flips_outside_the_tolerance() {
        let paper = [[0.00052, 0.0016, 0.0], [0.00135, 0.0034, 0.0034]];
        assert!(loss_verdict(&paper, &paper).starts_with("all 6 cells agree"));
        let mut moved = paper;
        moved[0][0] += 0.0011;
        assert!(loss_verdict(&moved, &paper).starts_with("5 of 6 cells agree"));
        let far = [[0.5; 3]; 2];
        assert!(loss_verdict(&far, &paper).starts_with("none of the 6 cells agree"));
    }

    #[test]
    fn matrix_paper_and_template_agree() {
        let m = Matrix::load().unwrap();
        let p = Paper::parse(PAPER, "paper.toml").unwrap();
        assert_eq!(p.values.len(), 4 * 9 + 2 * 3);
        for (t, ..) in METRICS {
            for a in &m.aqm {
                for c in &m.cc {
                    p.get(t, &a.name, &c.name).unwrap();
                }
            }
        }
        assert_eq!(p.get("Table 1", "RED", "CUBIC").unwrap().value, 222.941);
        for name in &m.mixed {
            m.cc_index(name).unwrap();
        }
    }
}
