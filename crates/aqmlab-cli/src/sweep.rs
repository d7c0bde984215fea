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
//! from the lowest to the highest seed, one panel per combination) and
//! `metrics` (means with 95 % intervals).
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
use crate::run::{check_out, out_err, provenance, scenario_doc};
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
    /// `<out>/parquet/<table>/`; `auto` (the default) does so for a table
    /// above 1 MiB of CSV over all runs; `csv` never. The runs' own tables
    /// are CSV.
    #[arg(long, value_parser = ["auto", "csv", "parquet"])]
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
}

/// One run of the sweep.
struct Job {
    point: usize,
    seed: u64,
    /// `<label>/seed-<n>`, relative to `--out`.
    rel: String,
    toml: String,
    prov: Provenance,
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

/// Does `dir` hold a complete run of `job`?
fn complete(dir: &Path, job: &Job) -> bool {
    output::run_complete(dir, &job.prov.scenario_sha256, job.seed, &job.prov.files)
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

pub fn main(mut a: SweepArgs) -> CliResult {
    if let Some(f) = &a.format {
        a.set.push(format!("output.format=\"{f}\""));
    }
    let file = a.file.display().to_string();
    let max_file = crate::max_file_bytes(a.allow_large);
    let text = aqmlab::scenario::read_file_limit(&a.file, max_file)?;
    let points = Scenario::sweep_from_toml_limit(&text, &file, &a.set, max_file)?;
    let spec = points[0].scenario.sweep.clone().expect("sweep present");
    let seeds = a.seeds.unwrap_or(spec.seeds);
    if seeds == 0 {
        return Err(CliError::Input("--seeds must be at least 1".into()));
    }
    check_sweep(&a, &points, &spec, seeds, &file)?;
    let shard = a.shard.as_deref().map(parse_shard).transpose()?;
    check_out(&a.out)?;
    // Axes: one column each; the value of every point on every axis (the
    // points are the axes' cartesian product, first axis fastest).
    let axes: Vec<String> = spec.vary.iter().map(|x| x.key.clone()).collect();
    let base = scenario_doc(&text, &file, &a.set)?;
    let (axis_values, docs) = axis_docs(&spec, points.len(), &base, &file)?;
    let jobs = make_jobs(&a, &points, &docs, seeds)?;
    remove_stale(&a, &jobs)?;
    let (todo, n_done) = pending(&a, &jobs, shard)?;
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
            let j = &jobs[k];
            run_one(&points[j.point], j, &a.out.join(&j.rel))
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
    tables(
        &a,
        &points,
        &jobs,
        &axes,
        &axis_values,
        seeds,
        spec.link.clone(),
        run_wall,
        todo.len(),
    )?;
    write_dataset(&a.out, &points, &jobs)
}

/// The runs' result tables as one Parquet dataset per table
/// ([`output::columnar::write_dataset`]), when the points' `output.format`
/// asks for it: `parquet`, or `auto` when the runs' CSVs of the table hold
/// more than `AUTO_PARQUET_BYTES` together.
fn write_dataset(out: &Path, points: &[aqmlab::scenario::SweepPoint], jobs: &[Job]) -> CliResult {
    use aqmlab::scenario::FileFormat;
    let format = if points.iter().any(|p| p.format == FileFormat::Parquet) {
        FileFormat::Parquet
    } else if points.iter().any(|p| p.format == FileFormat::Auto) {
        FileFormat::Auto
    } else {
        FileFormat::Csv
    };
    let rels: Vec<&str> = jobs.iter().map(|j| j.rel.as_str()).collect();
    let wrote = output::columnar::write_dataset(out, &rels, format)
        .map_err(|e| CliError::Internal(e.to_string()))?;
    if !wrote.is_empty() {
        eprintln!(
            "sweep: Parquet datasets ({}) in {}",
            wrote.join(", "),
            out.join("parquet").display()
        );
    }
    Ok(())
}

/// The sweep's size against the resource limits (unless `--allow-large`),
/// and `sweep.link` against the scenario's link directions.
fn check_sweep(
    a: &SweepArgs,
    points: &[aqmlab::scenario::SweepPoint],
    spec: &aqmlab::scenario::SweepSpec,
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
    check_runs(
        points.len() as u64,
        seeds,
        seeds_key,
        a.jobs.map(|j| j as u64),
        &lim,
    )
    .map_err(|(k, m)| CliError::Input(format!("{file}: `{k}`: {m}")))?;
    for p in points {
        let at = format!("{file} [sweep point {}]", p.label);
        if a.allow_large {
            crate::check_memory(&p.scenario, &at)?;
        } else {
            crate::check_limits(&p.scenario, &at)?;
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
    Ok(())
}

/// Per sweep point, its value on every axis.
type AxisValues = Vec<Vec<String>>;

/// Per sweep point: its value on every axis (a label where the axis gives
/// them) and its scenario document (`base` with the axes' values set).
fn axis_docs(
    spec: &aqmlab::scenario::SweepSpec,
    n_points: usize,
    base: &toml::Value,
    file: &str,
) -> CliResult<(AxisValues, Vec<toml::Value>)> {
    let mut axis_values: Vec<Vec<String>> = Vec::new();
    let mut docs = Vec::new();
    for k0 in 0..n_points {
        let (mut k, mut vals, mut doc) = (k0, Vec::new(), base.clone());
        for ax in &spec.vary {
            let j = k % ax.values.len();
            k /= ax.values.len();
            aqmlab::scenario::set_path(&mut doc, &ax.key, ax.values[j].clone())
                .map_err(|m| CliError::Input(format!("{file}: `{}`: {m}", ax.key)))?;
            vals.push(match &ax.labels {
                Some(l) => l[j].clone(),
                None => aqmlab::scenario::axis_value(&ax.values[j]),
            });
        }
        // a sweep's runs write CSV tables (`SweepPoint::scenario`)
        aqmlab::scenario::set_path(&mut doc, "output.format", "csv".into())
            .map_err(|m| CliError::Input(format!("{file}: `output.format`: {m}")))?;
        axis_values.push(vals);
        docs.push(doc);
    }
    Ok((axis_values, docs))
}

/// One job per sweep point and seed, with its effective scenario and
/// provenance.
fn make_jobs(
    a: &SweepArgs,
    points: &[aqmlab::scenario::SweepPoint],
    docs: &[toml::Value],
    seeds: u64,
) -> CliResult<Vec<Job>> {
    let mut jobs = Vec::new();
    for (i, p) in points.iter().enumerate() {
        for seed in 1..=seeds {
            let (toml, prov) =
                provenance(&docs[i], seed, Some(&a.file), &a.set, &p.scenario.inputs)?;
            jobs.push(Job {
                point: i,
                seed,
                rel: format!("{}/seed-{seed}", p.label),
                toml,
                prov,
            });
        }
    }
    Ok(jobs)
}

/// Run folders under `--out` that are not this sweep's: an error, or
/// deleted with `--force`.
fn remove_stale(a: &SweepArgs, jobs: &[Job]) -> CliResult {
    // Runs of another sweep are never mixed in.
    let keep: BTreeSet<String> = jobs.iter().map(|j| j.rel.clone()).collect();
    let stale = output::stale_runs(&a.out, &keep);
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
    shard: Option<(u64, u64)>,
) -> CliResult<(Vec<usize>, usize)> {
    let done: Vec<bool> = jobs
        .iter()
        .map(|j| complete(&a.out.join(&j.rel), j))
        .collect();
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

/// Run one job and rename its files into place (the CSVs' `label`
/// column: the point's label).
fn run_one(p: &aqmlab::scenario::SweepPoint, j: &Job, dir: &Path) -> CliResult {
    output::run_into(&p.scenario, j.seed, dir, &p.label, &j.toml, &j.prov, 1).map_err(out_err)?;
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

fn read_run(dir: &Path, link: Option<&str>) -> CliResult<(RunData, Vec<String>)> {
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
        if Some(l) == link {
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

/// One row of `sweep.csv`, before the per-group goodput columns.
struct Row {
    values: Vec<(&'static str, Option<f64>)>,
    link: String,
    kind: String,
    goodput: BTreeMap<String, f64>,
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
    let values = vec![
        ("arrivals", Some(arrivals as f64)),
        ("enqueued", Some(num(q, "enqueued"))),
        ("dropped", Some(num(q, "dropped"))),
        ("marked", Some(num(q, "marked"))),
        ("drop_rate", rate("dropped")),
        ("mark_rate", rate("marked")),
        ("mean_len_pkts", Some(num(q, "mean_len_pkts"))),
        ("mean_delay_s", Some(num(q, "mean_delay_s"))),
        ("p99_delay_s", Some(num(q, "p99_delay_s"))),
        ("max_delay_s", Some(num(q, "max_delay_s"))),
        ("utilization", Some(num(q, "utilization"))),
        ("goodput_bps", Some(goodput.values().sum())),
        ("jain_tcp", Some(jain(&tcp))),
        (
            "cbr_owd_s",
            (!cbr.is_empty()).then(|| cbr.iter().sum::<f64>() / cbr.len() as f64),
        ),
        ("events", Some(num(&d.summary, "events"))),
    ];
    Ok(Row {
        values,
        link: link.to_string(),
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

/// A finished sweep's runs, read back from its folder.
struct Finished<'a> {
    points: &'a [aqmlab::scenario::SweepPoint],
    jobs: &'a [Job],
    rows: Vec<Row>,
    data: Vec<RunData>,
    seeds: u64,
    /// The queue reported.
    link: String,
    /// The scenario's name.
    name: &'a str,
}

impl Finished<'_> {
    /// The runs of combination `i`, with their rows.
    fn runs_of(&self, i: usize) -> impl Iterator<Item = (&Row, &RunData)> {
        self.jobs
            .iter()
            .zip(self.rows.iter().zip(&self.data))
            .filter(move |(j, _)| j.point == i)
            .map(|(_, rd)| rd)
    }
}

#[allow(clippy::too_many_arguments)]
fn tables(
    a: &SweepArgs,
    points: &[aqmlab::scenario::SweepPoint],
    jobs: &[Job],
    axes: &[String],
    axis_values: &[Vec<String>],
    seeds: u64,
    link: Option<String>,
    run_wall: f64,
    ran: usize,
) -> CliResult {
    let missing: Vec<&str> = jobs
        .iter()
        .filter(|j| !complete(&a.out.join(&j.rel), j))
        .map(|j| j.rel.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(CliError::Internal(format!(
            "{} runs are not complete after the sweep (e.g. {})",
            missing.len(),
            missing[0]
        )));
    }
    let link = match link {
        Some(l) => l,
        None => busiest_monitored(&a.out.join(&jobs[0].rel))?,
    };
    let mut data = Vec::new();
    let mut rows = Vec::new();
    for j in jobs {
        let (d, _) = read_run(&a.out.join(&j.rel), Some(&link))?;
        rows.push(row(&d, &link)?);
        data.push(d);
    }
    let fin = Finished {
        points,
        jobs,
        rows,
        data,
        seeds,
        link,
        name: &points[0].scenario.name,
    };
    let mut st = Staging::new(&a.out).map_err(out_err)?;
    write_sweep_csv(&st.path("sweep.csv"), &a.out, &fin, axes, axis_values)?;
    eprintln!("sweep: {ran} runs computed now in {run_wall:.1} s wall");
    let stats = metric_stats(&fin);
    let md = summary_md(&fin, &stats);
    print!("{md}");
    std::io::Write::flush(&mut std::io::stdout())?;
    st.write("summary.md", md.as_bytes()).map_err(out_err)?;
    sweep_plots(&mut st, &fin, &stats)?;
    if a.report {
        let labels: Vec<String> = points.iter().map(|p| p.label.clone()).collect();
        let page = crate::report::sweep_page(&crate::report::SweepInput {
            name: fin.name,
            link: &fin.link,
            seeds,
            runs: jobs.len(),
            axes,
            axis_values,
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

/// The reported queue when `sweep.link` is not set: the busiest monitored
/// queue of the run in `dir` (the first run).
fn busiest_monitored(dir: &Path) -> CliResult<String> {
    let (d, monitored) = read_run(dir, None)?;
    d.links
        .iter()
        .filter(|q| monitored.iter().any(|m| q["link"] == m.as_str()))
        .max_by_key(|q| q["enqueued"].as_u64().unwrap_or(0))
        .and_then(|q| q["link"].as_str().map(str::to_string))
        .ok_or_else(|| {
            CliError::Input("sweep: no monitored queue to report; set sweep.link = \"a->b\"".into())
        })
}

/// `sweep.csv` (at `path`, staged for `out`): one line per run, the axes'
/// values, the run's metrics and its groups' goodput.
fn write_sweep_csv(
    path: &Path,
    out: &Path,
    fin: &Finished,
    axes: &[String],
    axis_values: &[Vec<String>],
) -> CliResult {
    let groups: BTreeSet<String> = fin
        .rows
        .iter()
        .flat_map(|r| r.goodput.keys().cloned())
        .collect();
    let e = |e: csv::Error| out_err(output::path_err(&out.join("sweep.csv"), e));
    let mut w = csv::Writer::from_path(path).map_err(e)?;
    let mut head: Vec<String> = axes.to_vec();
    head.extend(["seed", "run_dir", "link", "kind"].map(String::from));
    head.extend(fin.rows[0].values.iter().map(|(k, _)| k.to_string()));
    head.extend(groups.iter().map(|g| format!("goodput_bps_{g}")));
    w.write_record(&head).map_err(e)?;
    for (j, r) in fin.jobs.iter().zip(&fin.rows) {
        let mut rec = axis_values[j.point].clone();
        rec.extend([
            j.seed.to_string(),
            j.rel.clone(),
            r.link.clone(),
            r.kind.clone(),
        ]);
        rec.extend(r.values.iter().map(|(_, v)| fmt_opt(*v)));
        rec.extend(groups.iter().map(|g| fmt_opt(r.goodput.get(g).copied())));
        w.write_record(&rec).map_err(e)?;
    }
    w.flush()
        .map_err(|x| out_err(output::path_err(&out.join("sweep.csv"), x)))
}

/// Per combination and metric of [`METRICS`]: (mean, sd, half-width of the
/// 95 % interval) over seeds.
fn metric_stats(fin: &Finished) -> Vec<Vec<(f64, f64, f64)>> {
    let val = |r: &Row, k: &str| {
        r.values
            .iter()
            .find(|(n, _)| *n == k)
            .and_then(|(_, v)| *v)
            .unwrap_or(f64::NAN)
    };
    (0..fin.points.len())
        .map(|i| {
            let rs: Vec<&Row> = fin.runs_of(i).map(|(r, _)| r).collect();
            METRICS
                .iter()
                .map(|(k, _, scale)| {
                    let xs: Vec<f64> = rs.iter().map(|r| val(r, k) * scale).collect();
                    spread(&xs)
                })
                .collect()
        })
        .collect()
}

/// `summary.md`: the metrics' means with intervals, their standard
/// deviations, and a warning for combinations whose seeds change nothing.
fn summary_md(fin: &Finished, stats: &[Vec<(f64, f64, f64)>]) -> String {
    let (points, seeds, link) = (fin.points, fin.seeds, &fin.link);
    let mut md = format!(
        "# Sweep: {}\n\n{} combinations × {seeds} seeds = {} runs. \
         Queue reported: `{link}`. Drop and mark rates are per packet arrival at that queue.\n\n",
        fin.name,
        points.len(),
        fin.jobs.len(),
    );
    let mut head = String::from("| combination |");
    let mut rule = String::from("|---|");
    for (_, title, _) in &METRICS {
        let _ = write!(head, " {title} |");
        rule.push_str("---:|");
    }
    let _ = writeln!(
        md,
        "Mean over seeds ± half-width of the 95 % interval (Student's t, n − 1 degrees of freedom):\n\n{head}\n{rule}"
    );
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
    for (p, s) in points.iter().zip(stats) {
        let cells: Vec<String> = s
            .iter()
            .map(|(m, _, h)| {
                if h.is_finite() {
                    format!("{} ± {}", f(*m), f(*h))
                } else {
                    f(*m)
                }
            })
            .collect();
        let _ = writeln!(md, "| {} | {} |", p.label, cells.join(" | "));
    }
    let _ = writeln!(md, "\nStandard deviation over seeds:\n\n{head}\n{rule}");
    for (p, s) in points.iter().zip(stats) {
        let cells: Vec<String> = s.iter().map(|(_, sd, _)| f(*sd)).collect();
        let _ = writeln!(md, "| {} | {} |", p.label, cells.join(" | "));
    }
    let warnings = identical_seeds(fin);
    if !warnings.is_empty() {
        md.push('\n');
        for w in &warnings {
            let _ = writeln!(md, "**{w}**\n");
            eprintln!("{w}");
        }
    }
    md
}

/// Seeds that change nothing are not replication: a warning per
/// combination whose seeds all gave the same results.
fn identical_seeds(fin: &Finished) -> Vec<String> {
    let seeds = fin.seeds;
    if seeds < 2 {
        return Vec::new();
    }
    let mut warnings = Vec::new();
    for (i, p) in fin.points.iter().enumerate() {
        let fps: Vec<Value> = fin
            .runs_of(i)
            .map(|(_, d)| fingerprint(&d.summary))
            .collect();
        if fps.windows(2).all(|w| w[0] == w[1]) {
            warnings.push(format!(
                "warning: `{}`: the {seeds} seeds gave identical results (nothing in the scenario is random); \
                 its spread is zero and its seeds are not replications",
                p.label
            ));
        }
    }
    warnings
}

/// Plots: queue delay and length over time (every seed: mean and band), and
/// the metrics with their intervals.
fn sweep_plots(st: &mut Staging, fin: &Finished, stats: &[Vec<(f64, f64, f64)>]) -> CliResult {
    let (seeds, link, name) = (fin.seeds, &fin.link, fin.name);
    let band = |f: &dyn Fn(&(f64, f64, f64)) -> f64| -> Vec<crate::plot::Band> {
        fin.points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let runs: Vec<&RunData> = fin.runs_of(i).map(|(_, d)| d).collect();
                let n = runs.iter().map(|d| d.series.len()).min().unwrap_or(0);
                let pts = (0..n)
                    .map(|k| {
                        let ys: Vec<f64> = runs.iter().map(|d| f(&d.series[k])).collect();
                        let m = ys.iter().sum::<f64>() / ys.len() as f64;
                        let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
                        let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                        (runs[0].series[k].0, m, lo, hi)
                    })
                    .collect();
                crate::plot::Band {
                    name: p.label.clone(),
                    points: pts,
                }
            })
            .collect()
    };
    let sub = format!(
        "line: mean over {seeds} seed(s); band: lowest to highest seed; y scale per panel, to \
         its 99th percentile"
    );
    crate::plot::band_lines(
        &crate::plot::BandLines {
            title: format!("Queueing delay at {link} — {name}"),
            subtitle: format!("sojourn of the last packet dequeued (0 when empty); {sub}"),
            x_desc: "time (s)".into(),
            y_desc: "queueing delay (ms)".into(),
            series: band(&|x| x.1 * 1e3),
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
            series: band(&|x| x.2),
        },
        &st.plot_stem("queue_length"),
    )
    .map_err(out_err)?;
    let panels = [0usize, 3, 5, 6, 7]
        .iter()
        .map(|&m| crate::plot::ErrorPanel {
            title: METRICS[m].1.to_string(),
            values: stats
                .iter()
                .map(|s| (s[m].0, if s[m].2.is_finite() { s[m].2 } else { 0.0 }))
                .collect(),
        })
        .collect();
    crate::plot::error_bars(
        &crate::plot::ErrorBars {
            title: format!("Sweep metrics at {link} — {name}"),
            subtitle: format!("mean over {seeds} seed(s), bars: 95 % interval (Student's t)"),
            categories: fin.points.iter().map(|p| p.label.clone()).collect(),
            panels,
        },
        &st.plot_stem("metrics"),
    )
    .map_err(out_err)
}
