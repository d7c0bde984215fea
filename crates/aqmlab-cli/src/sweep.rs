//! `aqmlab sweep FILE --out DIR [--seeds N] [--jobs J] [--set key=value]...
//! [--shard I/N] [--force]`: run every combination of the scenario's
//! `[sweep]` axes with several seeds, in parallel, and write per-run
//! results, a table and plots.
//!
//! Output: `DIR/<label>/seed-<n>/` (the files of `aqmlab run`, with the
//! run's `scenario.toml` and `provenance.json`), each run renamed into place
//! as soon as it finishes; then `DIR/sweep.csv` (one row per run: one column
//! per axis, the seed, the reported queue's counters, per-group goodput),
//! `DIR/summary.md` (mean, sd and 95 % interval over seeds, also printed)
//! and plots: `queue_delay`, `queue_length` (mean over seeds with the band
//! from the lowest to the highest seed, one panel per combination, the
//! first [`MAX_BAND_PANELS`]) and `metrics` (means with 95 % intervals, the
//! first [`MAX_METRIC_CATEGORIES`] combinations).
//!
//! Memory: linear in the runs, a few hundred bytes each. A combination's
//! scenario is made when it is checked and again when it runs
//! ([`aqmlab::scenario::SweepPlan`]), never held for all; the runs' rows
//! go to a temporary file as they are read, and only each combination's
//! statistics stay (`tables`).
//!
//! Resume: a run whose folder holds a `summary.json` and a `provenance.json`
//! with the same scenario hash and seed is complete and is not run again;
//! the tables are always computed from the files on disk, so a resumed
//! sweep ends with the same files as an uninterrupted one. `--shard i/n`
//! runs the jobs `k` (in sweep order) with `k mod n = i − 1` and writes no
//! table; the same command without `--shard` runs what is missing and
//! assembles the tables. Run folders under `DIR` that are not part of this
//! sweep are refused (exit 2) unless `--force` deletes them.

use crate::progress::par_map;
use crate::run::{check_out, out_err, provenance};
use crate::{CliError, CliResult};
use aqmlab::output::{self, Provenance, Staging};
use aqmlab::scenario::limits::{check_runs, Limits};
use aqmlab::Scenario;
use aqmlab_reproduce::stats::{jain, Summary};
use clap::Args;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

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
    /// Format of the sweep's dataset (sets `output.format`): `parquet`
    /// writes each result table of all runs as one Parquet dataset,
    /// `<out>/parquet/<table>/`; `csv` (the scenario's default) none. The
    /// runs' own tables are CSV.
    #[arg(long, value_parser = ["csv", "parquet"])]
    pub format: Option<String>,
    /// Run only slice I of N (1 ≤ I ≤ N) of the runs, e.g. one Slurm array
    /// task; the same command without --shard assembles sweep.csv.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Delete run folders under --out that are not part of this sweep
    /// (without it, the sweep refuses to mix them in).
    #[arg(long)]
    pub force: bool,
    /// Run above the default resource limits (runs, threads, samples, flows:
    /// see the README's "Errors and limits").
    #[arg(long)]
    pub allow_large: bool,
    /// Also write `report.html`: one self-contained page with each metric
    /// against the sweep's first axis (means with 95 % intervals).
    #[arg(long)]
    pub report: bool,
    /// Refuse (exit 2, before any run) a sweep with a combination that has
    /// warnings (see `aqmlab run --strict`). Without it each distinct
    /// warning is printed once, with the combinations it concerns, and
    /// listed in each run's `summary.json`.
    #[arg(long)]
    pub strict: bool,
}

/// One run of the sweep. Its scenario and provenance are made when needed
/// ([`effective`]), so a sweep holds a few bytes per run, not a scenario.
struct Job {
    point: usize,
    seed: u64,
    /// `<label>/seed-<n>`, relative to `--out`.
    rel: String,
}

fn parse_shard(s: &str) -> CliResult<(u64, u64)> {
    let bad = || {
        CliError::Input(format!(
            "--shard `{s}`: expected I/N with 1 ≤ I ≤ N, e.g. --shard 2/8"
        ))
    };
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let i: u64 = i.trim().parse().map_err(|_| bad())?;
    let n: u64 = n.trim().parse().map_err(|_| bad())?;
    if i == 0 || n == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

/// Files the sweep writes at the top of `--out`.
const TABLES: &[&str] = &[
    "sweep.csv",
    "summary.md",
    "queue_delay.png",
    "queue_delay.svg",
    "queue_length.png",
    "queue_length.svg",
    "metrics.png",
    "metrics.svg",
    "report.html",
];

/// Most combinations the queue delay and length plots show (a panel of
/// 190 pixels each: 24 are a 16 MB bitmap; one per combination of 6 000
/// was 4 GB). Beyond it they show the first ones and say how many there
/// are.
pub const MAX_BAND_PANELS: usize = 24;

/// Most combinations the metrics plot shows (a labelled error bar each in
/// at most 1600 pixels; the SVG of 10⁴ was tens of MB in memory). Beyond
/// it, the first ones, saying how many there are.
pub const MAX_METRIC_CATEGORIES: usize = 200;

pub fn main(mut a: SweepArgs) -> CliResult {
    if let Some(f) = &a.format {
        a.set.push(format!("output.format=\"{f}\""));
    }
    let file = a.file.display().to_string();
    let max_file = crate::max_file_bytes(a.allow_large);
    let text = aqmlab::scenario::read_file_limit(&a.file, max_file)?;
    let plan = Scenario::sweep_plan_limit(&text, &file, &a.set, max_file)?;
    let seeds = a.seeds.unwrap_or(plan.spec.seeds);
    if seeds == 0 {
        return Err(CliError::Input("--seeds must be at least 1".into()));
    }
    // the sweep's size before any combination is made
    check_size(&a, &plan, seeds, &file)?;
    let shard = a.shard.as_deref().map(parse_shard).transpose()?;
    let jobs = make_jobs(&plan, seeds);
    let checked = check_points(&a, &plan, &jobs, seeds, &file)?;
    report_warnings(&checked.warnings, plan.len(), a.strict)?;
    check_out(&a.out)?;
    remove_stale(&a, &jobs)?;
    let (todo, n_done) = pending(&a, &jobs, &checked.done, shard)?;
    drop(checked.done);
    crate::interrupt::install(jobs.len(), &a.out);
    for _ in 0..n_done {
        crate::interrupt::run_done();
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.jobs.unwrap_or(0))
        .build()
        .map_err(|e| CliError::Internal(e.to_string()))?;
    let wall = std::time::Instant::now();
    let results: Vec<CliResult> = pool.install(|| {
        par_map(&format!("sweep {} runs", todo.len()), &todo, |&k| {
            run_one(&a, &plan, &jobs[k])
        })
    });
    results.into_iter().collect::<CliResult<Vec<()>>>()?;
    let run_wall = wall.elapsed().as_secs_f64();
    if let Some((i, n)) = shard {
        let missing = jobs.len() - n_done - todo.len();
        eprintln!(
            "sweep: shard {i}/{n}: {} runs computed, {n_done} were complete, {missing} belong to other shards \
             (or are not complete); run the same command without --shard to run what is missing \
             and assemble sweep.csv",
            todo.len()
        );
        return Ok(());
    }
    tables(&a, &plan, &jobs, seeds, run_wall, todo.len())?;
    write_dataset(&a.out, checked.format, &jobs)
}

/// Print each distinct warning of the combinations once, saying how many
/// of the `n` combinations have it; under `--strict` they are an input
/// error (nothing has run).
fn report_warnings(
    w: &[(aqmlab::scenario::warnings::Warning, usize, String)],
    n: usize,
    strict: bool,
) -> CliResult {
    for (x, k, label) in w {
        if n == 1 {
            eprintln!("{x}");
        } else {
            eprintln!(
                "{x} (in {k} of {n} combinations, the first `{}`)",
                cut(label, 60)
            );
        }
    }
    let distinct: Vec<_> = w.iter().map(|(x, _, _)| x.clone()).collect();
    crate::run::report_warnings_strict(&distinct, strict)
}

/// The runs' result tables as one Parquet dataset per table
/// ([`output::columnar::write_dataset`]) when a point's `output.format` is
/// `parquet`.
fn write_dataset(out: &Path, format: aqmlab::scenario::FileFormat, jobs: &[Job]) -> CliResult {
    let rels: Vec<&str> = jobs.iter().map(|j| j.rel.as_str()).collect();
    let wrote = output::columnar::write_dataset(out, &rels, format).map_err(out_err)?;
    if !wrote.is_empty() {
        eprintln!(
            "sweep: Parquet datasets ({}) in {}",
            wrote.join(", "),
            out.join("parquet").display()
        );
    }
    Ok(())
}

/// `s` cut to `n` characters, with `…` when cut.
fn cut(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The sweep's runs (combinations × seeds) and `--jobs` against the
/// resource limits (unless `--allow-large`), from the axes' lengths alone:
/// a long axis is refused before any combination is made. The key named
/// is the seeds' when they alone pass the limit, else the longest axis'.
fn check_size(
    a: &SweepArgs,
    plan: &aqmlab::scenario::SweepPlan,
    seeds: u64,
    file: &str,
) -> CliResult {
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
    let (i, longest) = (plan.spec.vary.iter().enumerate())
        .max_by_key(|(i, ax)| (ax.values.len(), std::cmp::Reverse(*i)))
        .expect("a sweep has an axis");
    let (key, axis) = if seeds > lim.sweep_runs || plan.len() == 1 {
        (seeds_key.to_string(), String::new())
    } else {
        (
            format!("sweep.vary[{i}].values"),
            format!(
                " (axis `{}`, {} values)",
                cut(&longest.key, 60),
                longest.values.len()
            ),
        )
    };
    check_runs(
        plan.len() as u64,
        seeds,
        &key,
        a.jobs.map(|j| j as u64),
        &lim,
    )
    .map_err(|(k, m)| {
        let axis = if k == key { axis.as_str() } else { "" };
        CliError::Input(format!("{file}: `{k}`{axis}: {m}"))
    })
}

/// What checking every combination found.
struct Checked {
    /// Per job: whether `--out` holds it complete already.
    done: Vec<bool>,
    /// The format of the sweep's dataset: Parquet when any point asks.
    format: aqmlab::scenario::FileFormat,
    /// Each distinct warning of the combinations, with how many have it and
    /// the label of the first.
    warnings: Vec<(aqmlab::scenario::warnings::Warning, usize, String)>,
}

/// Make and check every combination, one at a time: its scenario against
/// the resource limits (or, with `--allow-large`, the machine's memory),
/// `sweep.link` against the first one's link directions, and whether each
/// of its runs is complete in `--out` already.
fn check_points(
    a: &SweepArgs,
    plan: &aqmlab::scenario::SweepPlan,
    jobs: &[Job],
    seeds: u64,
    file: &str,
) -> CliResult<Checked> {
    use aqmlab::scenario::FileFormat;
    let mut done = Vec::with_capacity(jobs.len());
    let mut format = FileFormat::Csv;
    let mut warnings: Vec<(aqmlab::scenario::warnings::Warning, usize, String)> = Vec::new();
    let mut k_jobs = jobs.iter();
    for k in 0..plan.len() {
        let p = plan.point(k)?;
        for w in p.scenario.warnings() {
            match warnings.iter_mut().find(|(x, _, _)| *x == w) {
                Some((_, n, _)) => *n += 1,
                None => warnings.push((w, 1, p.label.clone())),
            }
        }
        let at = format!("{file} [sweep point {}]", p.label);
        if a.allow_large {
            crate::check_memory(&p.scenario, &at)?;
        } else {
            crate::check_limits(&p.scenario, &at)?;
        }
        if p.format == FileFormat::Parquet {
            format = FileFormat::Parquet;
        }
        if k == 0 {
            check_link(plan, &p.scenario, file)?;
        }
        for j in k_jobs.by_ref().take(seeds as usize) {
            debug_assert_eq!(j.point, k);
            let dir = a.out.join(&j.rel);
            // a folder without `summary.json` is not complete: no need to
            // make its effective scenario to compare hashes
            let complete = dir.join("summary.json").is_file() && {
                let (_, prov) = effective(a, plan, k, &p, j.seed)?;
                output::run_complete(&dir, &prov.scenario_sha256, j.seed, &prov.files)
            };
            done.push(complete);
        }
    }
    Ok(Checked {
        done,
        format,
        warnings,
    })
}

/// `sweep.link` against the scenario's link directions.
fn check_link(plan: &aqmlab::scenario::SweepPlan, sc: &Scenario, file: &str) -> CliResult {
    let Some(l) = &plan.spec.link else {
        return Ok(());
    };
    let names: Vec<String> = (sc.links.iter())
        .flat_map(|k| [format!("{}->{}", k.a, k.b), format!("{}->{}", k.b, k.a)])
        .collect();
    if names.contains(l) {
        return Ok(());
    }
    let shown: Vec<&str> = names.iter().take(10).map(String::as_str).collect();
    let more = match names.len().saturating_sub(10) {
        0 => String::new(),
        m => format!(" and {m} more"),
    };
    Err(CliError::Input(format!(
        "{file}: `sweep.link`: no link direction `{}`; allowed: {}{more}",
        cut(l, 60),
        shown.join(", ")
    )))
}

/// The effective scenario of run `seed` of combination `k` (made: `p`):
/// its `scenario.toml`, with `output.format = "csv"` (a sweep's runs write
/// CSV tables), and its provenance.
fn effective(
    a: &SweepArgs,
    plan: &aqmlab::scenario::SweepPlan,
    k: usize,
    p: &aqmlab::scenario::SweepPoint,
    seed: u64,
) -> CliResult<(String, Provenance)> {
    let mut doc = plan.doc(k)?;
    aqmlab::scenario::set_path(&mut doc, "output.format", "csv".into())
        .map_err(|m| CliError::Input(format!("{}: `output.format`: {m}", a.file.display())))?;
    provenance(&doc, seed, Some(&a.file), &a.set, &p.scenario.inputs)
}

/// One job per combination and seed (the seeds of a combination together,
/// in sweep order).
fn make_jobs(plan: &aqmlab::scenario::SweepPlan, seeds: u64) -> Vec<Job> {
    let mut jobs = Vec::with_capacity(plan.len().saturating_mul(seeds as usize));
    for k in 0..plan.len() {
        let label = plan.label(k);
        for seed in 1..=seeds {
            jobs.push(Job {
                point: k,
                seed,
                rel: format!("{label}/seed-{seed}"),
            });
        }
    }
    jobs
}

/// Run folders under `--out` that are not this sweep's: an error, or
/// deleted with `--force`.
fn remove_stale(a: &SweepArgs, jobs: &[Job]) -> CliResult {
    // Runs of another sweep are never mixed in.
    let keep: BTreeSet<String> = jobs.iter().map(|j| j.rel.clone()).collect();
    let stale = output::stale_runs(&a.out, &keep);
    drop(keep);
    if !stale.is_empty() {
        let list = stale.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
        let more = if stale.len() > 5 { ", …" } else { "" };
        if !a.force {
            return Err(CliError::Input(format!(
                "--out `{}` holds {} run folder(s) that are not part of this sweep ({list}{more}); \
                 they would be mixed with its results: use another --out, remove them, \
                 or pass --force to delete them",
                a.out.display(),
                stale.len()
            )));
        }
        output::remove_stale_runs(&a.out, &stale).map_err(out_err)?;
        eprintln!(
            "sweep: --force: deleted {} run folder(s) not part of this sweep: {list}{more}",
            stale.len()
        );
    }
    Ok(())
}

/// The jobs to run now (not complete, in this shard) and how many are
/// complete; removes the sweep's tables before any run changes.
fn pending(
    a: &SweepArgs,
    jobs: &[Job],
    done: &[bool],
    shard: Option<(u64, u64)>,
) -> CliResult<(Vec<usize>, usize)> {
    let todo: Vec<usize> = (0..jobs.len())
        .filter(|&k| !done[k])
        .filter(|&k| match shard {
            Some((i, n)) => k as u64 % n == i - 1,
            None => true,
        })
        .collect();
    let n_done = done.iter().filter(|d| **d).count();
    if !todo.is_empty() {
        // The tables describe a complete set of runs: remove the earlier
        // ones before any run changes (they are written again at the end).
        for t in TABLES {
            let p = a.out.join(t);
            if p.is_file() {
                std::fs::remove_file(&p).map_err(|e| out_err(output::path_err(&p, e)))?;
            }
        }
    }
    if n_done > 0 {
        eprintln!(
            "sweep: {n_done} of {} runs already complete in {} (same scenario and seed); running {}",
            jobs.len(),
            a.out.display(),
            todo.len()
        );
    }
    Ok((todo, n_done))
}

/// Make the job's combination, run it and rename its files into place
/// (the CSVs' `label` column: the combination's label).
fn run_one(a: &SweepArgs, plan: &aqmlab::scenario::SweepPlan, j: &Job) -> CliResult {
    let p = plan.point(j.point)?;
    let (toml, prov) = effective(a, plan, j.point, &p, j.seed)?;
    let dir = a.out.join(&j.rel);
    output::run_into(&p.scenario, j.seed, &dir, &p.label, &toml, &prov, 1).map_err(out_err)?;
    crate::interrupt::run_done();
    Ok(())
}

/// What the tables use of one run, read back from its files.
struct RunData {
    summary: Value,
    /// `links.csv`'s rows (a link direction and its queue's counters).
    links: Vec<Value>,
    /// `flows.csv`'s rows.
    flows: Vec<Value>,
    /// (time_s, delay_s, len_pkts) of the reported queue.
    series: Vec<(f64, f64, f64)>,
}

/// Run `dir`'s data; `series`: the reported queue's time series of
/// `link` (else left empty).
fn read_run(
    dir: &Path,
    link: Option<&str>,
    want_series: bool,
) -> CliResult<(RunData, Vec<String>)> {
    let p = dir.join("summary.json");
    let text = std::fs::read_to_string(&p)
        .map_err(|e| CliError::Internal(format!("{}: {e}", p.display())))?;
    let summary: Value = serde_json::from_str(&text)
        .map_err(|e| CliError::Internal(format!("{}: {e}", p.display())))?;
    let q = dir.join("queues.csv");
    let mut rd = csv::Reader::from_path(&q)
        .map_err(|e| CliError::Internal(format!("{}: {e}", q.display())))?;
    let bad = |e: csv::Error| CliError::Internal(format!("{}: {e}", q.display()));
    let head = rd.headers().map_err(bad)?.clone();
    let col = |name: &str| {
        head.iter()
            .position(|h| h == name)
            .ok_or_else(|| CliError::Internal(format!("{}: no column `{name}`", q.display())))
    };
    let (c_link, c_time, c_delay, c_len) = (
        col("link")?,
        col("time_s")?,
        col("delay_s")?,
        col("len_pkts")?,
    );
    let mut series = Vec::new();
    let mut monitored = Vec::new();
    for rec in rd.records() {
        let rec = rec.map_err(bad)?;
        let l = rec.get(c_link).unwrap_or_default();
        if !monitored.iter().any(|m| m == l) {
            monitored.push(l.to_string());
        }
        if want_series && Some(l) == link {
            let f = |i: usize| {
                rec.get(i)
                    .and_then(|x| x.parse::<f64>().ok())
                    .unwrap_or(0.0)
            };
            series.push((f(c_time), f(c_delay), f(c_len)));
        }
    }
    let links = table_rows(
        &dir.join("links.csv"),
        &["label", "link", "from", "to", "kind"],
    )?;
    let flows = table_rows(
        &dir.join("flows.csv"),
        &["label", "group", "src", "dst", "cc"],
    )?;
    Ok((
        RunData {
            summary,
            links,
            flows,
            series,
        },
        monitored,
    ))
}

/// The rows of a run's table as JSON objects: the columns in `text` as
/// strings, the others as integers or numbers (empty: null).
fn table_rows(p: &Path, text: &[&str]) -> CliResult<Vec<Value>> {
    let bad = |e: csv::Error| CliError::Internal(format!("{}: {e}", p.display()));
    let mut rd = csv::Reader::from_path(p).map_err(bad)?;
    let head = rd.headers().map_err(bad)?.clone();
    let mut rows = Vec::new();
    for rec in rd.records() {
        let rec = rec.map_err(bad)?;
        let mut o = serde_json::Map::new();
        for (h, x) in head.iter().zip(rec.iter()) {
            let v = if text.contains(&h) {
                Value::from(x)
            } else if x.is_empty() {
                Value::Null
            } else if let Ok(u) = x.parse::<u64>() {
                Value::from(u)
            } else {
                x.parse::<f64>()
                    .map(Value::from)
                    .unwrap_or_else(|_| Value::from(x))
            };
            o.insert(h.to_string(), v);
        }
        rows.push(Value::Object(o));
    }
    Ok(rows)
}

fn num(v: &Value, k: &str) -> f64 {
    v.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN)
}

/// Mean, sample sd and half-width of the 95 % t interval of `xs` (sd and
/// interval NaN for one value), from the statistics every report shares.
fn spread(xs: &[f64]) -> (f64, f64, f64) {
    let s = Summary::of(xs.iter().copied());
    if s.n < 2 {
        return (s.mean, f64::NAN, f64::NAN);
    }
    (s.mean, s.sd, s.ci95())
}

/// The metric columns of `sweep.csv`, after the axes, `seed`, `run_dir`,
/// `link` and `kind`, before the per-group goodput columns.
const VALUES: [&str; 15] = [
    "arrivals",
    "enqueued",
    "dropped",
    "marked",
    "drop_rate",
    "mark_rate",
    "mean_len_pkts",
    "mean_delay_s",
    "p99_delay_s",
    "max_delay_s",
    "utilization",
    "goodput_bps",
    "jain_tcp",
    "cbr_owd_s",
    "events",
];

/// One row of `sweep.csv`: the metrics of [`VALUES`], the queue's kind and
/// each group's goodput.
struct Row {
    values: [Option<f64>; VALUES.len()],
    kind: String,
    goodput: BTreeMap<String, f64>,
}

impl Row {
    fn get(&self, k: &str) -> f64 {
        (VALUES.iter().position(|v| *v == k))
            .and_then(|i| self.values[i])
            .unwrap_or(f64::NAN)
    }
}

fn row(d: &RunData, link: &str) -> CliResult<Row> {
    // links.csv holds the link's and its queue's counters in one row.
    let q = d.links.iter().find(|q| q["link"] == link).ok_or_else(|| {
        CliError::Input(format!(
            "sweep.link: no link `{link}`; links are named `a->b`"
        ))
    })?;
    let flows = &d.flows;
    // A group's and all flows' goodput: the bytes they delivered over the
    // one measured interval (a sum of per-flow rates, each over the flow's
    // own life, is not a rate the link carried).
    let interval = num(&d.summary, "sim_seconds") - d.summary["warmup_s"].as_f64().unwrap_or(0.0);
    let per_s = |bytes: f64| {
        if interval > 0.0 {
            bytes * 8.0 / interval
        } else {
            0.0
        }
    };
    let mut goodput = BTreeMap::new();
    let (mut tcp, mut cbr) = (Vec::new(), Vec::new());
    for f in flows {
        let g = f["group"].as_str().unwrap_or_default().to_string();
        *goodput.entry(g).or_insert(0.0) += per_s(num(f, "bytes_acked"));
        if f["cc"] == "cbr" {
            if let Some(o) = f["mean_owd_s"].as_f64() {
                cbr.push(o);
            }
        } else {
            tcp.push(num(f, "goodput_bps"));
        }
    }
    let arrivals = q["arrivals"].as_u64().unwrap_or(0);
    let rate = |k: &str| output::per_arrival(q[k].as_u64().unwrap_or(0), arrivals);
    let values = [
        Some(arrivals as f64),
        Some(num(q, "enqueued")),
        Some(num(q, "dropped")),
        Some(num(q, "marked")),
        rate("dropped"),
        rate("marked"),
        Some(num(q, "mean_len_pkts")),
        Some(num(q, "mean_delay_s")),
        Some(num(q, "p99_delay_s")),
        Some(num(q, "max_delay_s")),
        Some(num(q, "utilization")),
        Some(goodput.values().sum()),
        Some(jain(&tcp)),
        (!cbr.is_empty()).then(|| cbr.iter().sum::<f64>() / cbr.len() as f64),
        Some(num(&d.summary, "events")),
    ];
    Ok(Row {
        values,
        kind: q["kind"].as_str().unwrap_or_default().to_string(),
        goodput,
    })
}

fn fmt_opt(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite())
        .map(|v| v.to_string())
        .unwrap_or_default()
}

/// Summary without what may differ between seeds that changed nothing.
fn fingerprint(s: &Value) -> Value {
    let mut s = s.clone();
    if let Some(o) = s.as_object_mut() {
        o.remove("wall_seconds");
        o.remove("timings");
        o.remove("seed");
    }
    s
}

/// The metrics of `summary.md` and the metrics plot: (key in a run's row,
/// title, scale).
const METRICS: [(&str, &str, f64); 8] = [
    ("mean_delay_s", "mean delay (ms)", 1e3),
    ("p99_delay_s", "p99 delay (ms)", 1e3),
    ("mean_len_pkts", "mean queue (pkts)", 1.0),
    ("drop_rate", "drop rate", 1.0),
    ("mark_rate", "mark rate", 1.0),
    ("utilization", "utilization", 1.0),
    ("goodput_bps", "goodput (Mbit/s)", 1e-6),
    ("jain_tcp", "Jain (TCP)", 1.0),
];

/// What the sweep keeps of one combination once its runs are read: a few
/// hundred bytes, whatever its runs hold.
struct PointSummary {
    label: String,
    /// Its value on every axis (kept for `report.html` only).
    cells: Vec<String>,
    /// Per metric of [`METRICS`]: mean, sd, half-width of the 95 % interval.
    stats: Vec<(f64, f64, f64)>,
    /// All its seeds gave the same results (and there are several).
    identical: bool,
}

/// The queue series of one combination's runs, summed as they are read:
/// per sample, (time of the first run, sum, lowest, highest) of delay (in
/// ms) and length, over the samples every run has.
#[derive(Default)]
struct BandAcc {
    runs: usize,
    /// (time_s, [sum, low, high] of delay, [sum, low, high] of length)
    at: Vec<(f64, [f64; 3], [f64; 3])>,
}

impl BandAcc {
    fn add(&mut self, series: &[(f64, f64, f64)]) {
        if self.runs == 0 {
            self.at = (series.iter())
                .map(|&(t, d, l)| (t, [d * 1e3; 3], [l; 3]))
                .collect();
        } else {
            self.at.truncate(series.len());
            for (a, &(_, d, l)) in self.at.iter_mut().zip(series) {
                let d = d * 1e3;
                for (acc, x) in [(&mut a.1, d), (&mut a.2, l)] {
                    acc[0] += x;
                    acc[1] = acc[1].min(x);
                    acc[2] = acc[2].max(x);
                }
            }
        }
        self.runs += 1;
    }

    /// The band of delay (`len` false) or length: (x, mean, low, high).
    fn band(&self, len: bool) -> Vec<(f64, f64, f64, f64)> {
        let n = self.runs.max(1) as f64;
        (self.at.iter())
            .map(|(t, d, l)| {
                let a = if len { l } else { d };
                (*t, a[0] / n, a[1], a[2])
            })
            .collect()
    }
}

fn tables(
    a: &SweepArgs,
    plan: &aqmlab::scenario::SweepPlan,
    jobs: &[Job],
    seeds: u64,
    run_wall: f64,
    ran: usize,
) -> CliResult {
    let link = match &plan.spec.link {
        Some(l) => l.clone(),
        None => busiest_monitored(&a.out.join(&jobs[0].rel))?,
    };
    let axes: Vec<String> = plan.spec.vary.iter().map(|x| x.key.clone()).collect();
    let name = plan.point(0)?.scenario.name;
    let mut st = Staging::new(&a.out).map_err(out_err)?;
    // The runs' rows go to disk as they are read (the goodput columns, one
    // per flow group, are known at the end): memory stays per combination.
    let rows_tmp = output::TempFile::beside(&a.out.join("sweep.rows.csv")).map_err(out_err)?;
    let e_rows = |e: csv::Error| out_err(output::path_err(rows_tmp.path(), e));
    let mut rows_w = csv::WriterBuilder::new()
        .flexible(true)
        .has_headers(false)
        .from_path(rows_tmp.path())
        .map_err(e_rows)?;
    let mut groups: BTreeSet<String> = BTreeSet::new();
    let mut points: Vec<PointSummary> = Vec::with_capacity(plan.len());
    let mut bands: Vec<(String, BandAcc)> = Vec::new();
    let per_point = seeds as usize;
    for (k, runs) in jobs.chunks(per_point).enumerate() {
        let label = plan.label(k);
        let cells = plan.axis_cells(k);
        let mut metric: Vec<Vec<f64>> = vec![Vec::with_capacity(per_point); METRICS.len()];
        let mut first: Option<Value> = None;
        let mut identical = per_point > 1;
        let mut band = (k < MAX_BAND_PANELS).then(BandAcc::default);
        for j in runs {
            let (d, _) = read_run(&a.out.join(&j.rel), Some(&link), band.is_some())?;
            let r = row(&d, &link)?;
            let mut rec = cells.clone();
            rec.extend([
                j.seed.to_string(),
                j.rel.clone(),
                link.clone(),
                r.kind.clone(),
            ]);
            rec.extend(r.values.iter().map(|v| fmt_opt(*v)));
            for (g, v) in &r.goodput {
                if !groups.contains(g) {
                    groups.insert(g.clone());
                }
                rec.push(g.clone());
                rec.push(fmt_opt(Some(*v)));
            }
            rows_w.write_record(&rec).map_err(e_rows)?;
            for (m, (key, _, scale)) in metric.iter_mut().zip(&METRICS) {
                m.push(r.get(key) * scale);
            }
            let fp = fingerprint(&d.summary);
            match &first {
                None => first = Some(fp),
                Some(f) => identical &= *f == fp,
            }
            if let Some(b) = &mut band {
                b.add(&d.series);
            }
        }
        if let Some(b) = band {
            bands.push((label.clone(), b));
        }
        points.push(PointSummary {
            label,
            cells: if a.report { cells } else { Vec::new() },
            stats: metric.iter().map(|xs| spread(xs)).collect(),
            identical,
        });
    }
    rows_w
        .flush()
        .map_err(|e| out_err(output::path_err(rows_tmp.path(), e)))?;
    drop(rows_w);
    write_sweep_csv(&mut st, &a.out, rows_tmp.path(), &axes, &groups)?;
    drop(rows_tmp);
    eprintln!("sweep: {ran} runs computed now in {run_wall:.1} s wall");
    let fin = Finished {
        name: &name,
        link: &link,
        seeds,
        runs: jobs.len(),
        points: &points,
    };
    {
        let mut f = st.create("summary.md").map_err(out_err)?;
        let stdout = std::io::stdout();
        let mut both = Tee(&mut f, stdout.lock());
        summary_md(&mut both, &fin)
            .and_then(|_| std::io::Write::flush(&mut both))
            .map_err(|e| out_err(output::path_err(&a.out.join("summary.md"), e)))?;
    }
    sweep_plots(&mut st, &fin, &bands, plan.len())?;
    drop(bands);
    if a.report {
        let labels: Vec<String> = points.iter().map(|p| p.label.clone()).collect();
        let axis_values: Vec<Vec<String>> = points.iter().map(|p| p.cells.clone()).collect();
        let stats: Vec<Vec<(f64, f64, f64)>> = points.iter().map(|p| p.stats.clone()).collect();
        let page = crate::report::sweep_page(&crate::report::SweepInput {
            name: &name,
            link: &link,
            seeds,
            runs: jobs.len(),
            axes: &axes,
            axis_values: &axis_values,
            labels: &labels,
            metrics: &METRICS,
            stats: &stats,
        });
        st.write("report.html", page.render().as_bytes())
            .map_err(out_err)?;
    }
    st.commit().map_err(out_err)?;
    eprintln!(
        "sweep: results, sweep.csv, summary.md and plots in {}",
        a.out.display()
    );
    Ok(())
}

/// Writes to a file and to standard output at once.
struct Tee<'a, W: std::io::Write, O: std::io::Write>(&'a mut W, O);

impl<W: std::io::Write, O: std::io::Write> std::io::Write for Tee<'_, W, O> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write_all(buf)?;
        // a closed standard output (`| head`) does not lose the file
        let _ = self.1.write_all(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = self.1.flush();
        self.0.flush()
    }
}

/// A finished sweep, as its tables and plots describe it.
struct Finished<'a> {
    /// The scenario's name.
    name: &'a str,
    /// The queue reported.
    link: &'a str,
    seeds: u64,
    runs: usize,
    points: &'a [PointSummary],
}

/// The reported queue when `sweep.link` is not set: the busiest monitored
/// queue of the run in `dir` (the first run).
fn busiest_monitored(dir: &Path) -> CliResult<String> {
    let (d, monitored) = read_run(dir, None, false)?;
    d.links
        .iter()
        .filter(|q| monitored.iter().any(|m| q["link"] == m.as_str()))
        .max_by_key(|q| q["enqueued"].as_u64().unwrap_or(0))
        .and_then(|q| q["link"].as_str().map(str::to_string))
        .ok_or_else(|| {
            CliError::Input("sweep: no monitored queue to report; set sweep.link = \"a->b\"".into())
        })
}

/// `sweep.csv` (staged in `st`) from the rows written to `rows` as the runs
/// were read: one line per run, the axes' values, the run's metrics and
/// its groups' goodput (a column per group of any run; empty where a run
/// has no such group).
fn write_sweep_csv(
    st: &mut Staging,
    out: &Path,
    rows: &Path,
    axes: &[String],
    groups: &BTreeSet<String>,
) -> CliResult {
    let e = |e: csv::Error| out_err(output::path_err(&out.join("sweep.csv"), e));
    let mut w = csv::Writer::from_writer(st.create("sweep.csv").map_err(out_err)?);
    let mut head: Vec<String> = axes.to_vec();
    head.extend(["seed", "run_dir", "link", "kind"].map(String::from));
    head.extend(VALUES.iter().map(|k| k.to_string()));
    head.extend(groups.iter().map(|g| format!("goodput_bps_{g}")));
    w.write_record(&head).map_err(e)?;
    let fixed = axes.len() + 4 + VALUES.len();
    let mut rd = csv::ReaderBuilder::new()
        .flexible(true)
        .has_headers(false)
        .from_path(rows)
        .map_err(e)?;
    let mut rec = csv::StringRecord::new();
    while rd.read_record(&mut rec).map_err(e)? {
        let mut cells: Vec<&str> = Vec::with_capacity(head.len());
        cells.extend(rec.iter().take(fixed));
        let extra: Vec<&str> = rec.iter().skip(fixed).collect();
        for g in groups {
            let v = extra
                .chunks(2)
                .find(|p| p[0] == g.as_str())
                .and_then(|p| p.get(1).copied());
            cells.push(v.unwrap_or(""));
        }
        w.write_record(&cells).map_err(e)?;
    }
    w.flush()
        .map_err(|x| out_err(output::path_err(&out.join("sweep.csv"), x)))
}

/// `summary.md` into `w`: the metrics' means with intervals, their
/// standard deviations, and a warning for combinations whose seeds change
/// nothing (also on stderr).
fn summary_md(w: &mut dyn std::io::Write, fin: &Finished) -> std::io::Result<()> {
    let (seeds, link) = (fin.seeds, fin.link);
    write!(
        w,
        "# Sweep: {}\n\n{} combinations × {seeds} seeds = {} runs. \
         Queue reported: `{link}`. Drop and mark rates are per packet arrival at that queue.\n\n",
        fin.name,
        fin.points.len(),
        fin.runs,
    )?;
    let mut head = String::from("| combination |");
    let mut rule = String::from("|---|");
    for (_, title, _) in &METRICS {
        let _ = write!(head, " {title} |");
        rule.push_str("---:|");
    }
    writeln!(
        w,
        "Mean over seeds ± half-width of the 95 % interval (Student's t, n − 1 degrees of freedom):\n\n{head}\n{rule}"
    )?;
    let f = |x: f64| {
        if !x.is_finite() {
            "—".to_string()
        } else if x.abs() >= 100.0 {
            format!("{x:.1}")
        } else if x.abs() >= 1.0 {
            format!("{x:.3}")
        } else {
            format!("{x:.4}")
        }
    };
    for p in fin.points {
        let cells: Vec<String> = (p.stats.iter())
            .map(|(m, _, h)| {
                if h.is_finite() {
                    format!("{} ± {}", f(*m), f(*h))
                } else {
                    f(*m)
                }
            })
            .collect();
        writeln!(w, "| {} | {} |", p.label, cells.join(" | "))?;
    }
    writeln!(w, "\nStandard deviation over seeds:\n\n{head}\n{rule}")?;
    for p in fin.points {
        let cells: Vec<String> = p.stats.iter().map(|(_, sd, _)| f(*sd)).collect();
        writeln!(w, "| {} | {} |", p.label, cells.join(" | "))?;
    }
    // Seeds that change nothing are not replication.
    let mut first = true;
    for p in fin.points.iter().filter(|p| p.identical) {
        if first {
            writeln!(w)?;
            first = false;
        }
        let warn = format!(
            "warning: `{}`: the {seeds} seeds gave identical results (nothing in the scenario is random); \
             its spread is zero and its seeds are not replications",
            p.label
        );
        writeln!(w, "**{warn}**\n")?;
        eprintln!("{warn}");
    }
    Ok(())
}

/// Plots: queue delay and length over time (every seed: mean and band) of
/// the first [`MAX_BAND_PANELS`] combinations, and the metrics with their
/// intervals.
fn sweep_plots(
    st: &mut Staging,
    fin: &Finished,
    bands: &[(String, BandAcc)],
    n_points: usize,
) -> CliResult {
    let (seeds, link, name) = (fin.seeds, fin.link, fin.name);
    let band = |len: bool| -> Vec<crate::plot::Band> {
        (bands.iter())
            .map(|(label, b)| crate::plot::Band {
                name: label.clone(),
                points: b.band(len),
            })
            .collect()
    };
    let shown = if n_points > bands.len() {
        format!("the first {} of {n_points} combinations; ", bands.len())
    } else {
        String::new()
    };
    let sub = format!(
        "{shown}line: mean over {seeds} seed(s); band: lowest to highest seed; y scale per panel, to \
         its 99th percentile"
    );
    crate::plot::band_lines(
        &crate::plot::BandLines {
            title: format!("Queueing delay at {link} — {name}"),
            subtitle: format!("sojourn of the last packet dequeued (0 when empty); {sub}"),
            x_desc: "time (s)".into(),
            y_desc: "queueing delay (ms)".into(),
            series: band(false),
        },
        &st.plot_stem("queue_delay"),
    )
    .map_err(out_err)?;
    crate::plot::band_lines(
        &crate::plot::BandLines {
            title: format!("Queue length at {link} — {name}"),
            subtitle: format!("instantaneous queue length at each sample; {sub}"),
            x_desc: "time (s)".into(),
            y_desc: "queue length (packets)".into(),
            series: band(true),
        },
        &st.plot_stem("queue_length"),
    )
    .map_err(out_err)?;
    let shown = &fin.points[..fin.points.len().min(MAX_METRIC_CATEGORIES)];
    let first = if shown.len() < n_points {
        format!("the first {} of {n_points} combinations; ", shown.len())
    } else {
        String::new()
    };
    let panels = [0usize, 3, 5, 6, 7]
        .iter()
        .map(|&m| crate::plot::ErrorPanel {
            title: METRICS[m].1.to_string(),
            values: (shown.iter())
                .map(|p| {
                    let s = p.stats[m];
                    (s.0, if s.2.is_finite() { s.2 } else { 0.0 })
                })
                .collect(),
        })
        .collect();
    crate::plot::error_bars(
        &crate::plot::ErrorBars {
            title: format!("Sweep metrics at {link} — {name}"),
            subtitle: format!(
                "{first}mean over {seeds} seed(s), bars: 95 % interval (Student's t)"
            ),
            categories: shown.iter().map(|p| p.label.clone()).collect(),
            panels,
        },
        &st.plot_stem("metrics"),
    )
    .map_err(out_err)
}
