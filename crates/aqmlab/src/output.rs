//! Writing a run's results: `summary.json`, `flows.csv`, `queues.csv` (time
//! series of the monitored queues), `links.csv`, the optional traces
//! (`cwnd.csv`, `throughput.csv`, `requests.csv`, pcap files) and the run's
//! provenance (`scenario.toml`, `provenance.json`). The schema is documented
//! in the README. Every file is a pure function of the scenario and the seed,
//! except `wall_seconds` and `timings` in `summary.json` and `command_line` in
//! `provenance.json`.
//!
//! **Complete or absent.** A run's files are written under temporary names
//! (`.tmp-<name>`) through a [`Staging`] and renamed into place by
//! [`Staging::commit`], `summary.json` last: a file that exists is complete,
//! and a folder with a `summary.json` holds a complete run. Commit first
//! removes the files an earlier run wrote there ([`RUN_FILES`], `*.pcap`)
//! that this run does not write, so no file of an earlier scenario is left
//! beside new ones. [`abort_cleanup`] (called on SIGINT/SIGTERM) waits for a
//! commit in progress, then deletes every temporary file still open.
//!
//! Drop rate, everywhere (`links.csv`, `queues.csv`, sweep tables): packets
//! dropped by the queue ÷ packets that arrived at it (`arrivals`).

pub mod columnar;
pub mod event_log;
pub mod flent;
pub mod pcap;
pub mod report;
pub mod summary;

use crate::metrics::RunResult;
use crate::net::event_log::FileFormat;
use serde::Serialize;
use std::collections::BTreeSet;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// File names a run may write into its folder (besides `<link>.pcap`).
/// Plots drawn by the CLI (`*.png`, `*.svg` of these stems) count too.
pub const RUN_FILES: &[&str] = &[
    "summary.json",
    "flows.csv",
    "queues.csv",
    "links.csv",
    "cwnd.csv",
    "throughput.csv",
    "requests.csv",
    "classes.csv",
    "cc_stats.csv",
    "flows.parquet",
    "queues.parquet",
    "links.parquet",
    "cwnd.parquet",
    "throughput.parquet",
    "requests.parquet",
    "classes.parquet",
    "cc_stats.parquet",
    "events.csv",
    "events.parquet",
    "scenario.toml",
    "provenance.json",
    "run.flent.gz",
    "report.html",
];

/// Plot stems the CLI draws into a run folder (`<stem>.png`, `<stem>.svg`).
pub const RUN_PLOTS: &[&str] = &["queues", "signal", "cwnd", "throughput"];

const TMP_PREFIX: &str = ".tmp-";

/// Temporary files being written, process-wide (for [`abort_cleanup`]).
static LIVE: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
/// Folders created by stagings not yet committed (for [`abort_cleanup`]).
static LIVE_DIRS: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
/// Held while a staging renames its files into place.
static COMMIT: Mutex<()> = Mutex::new(());

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// An I/O error that names the path it concerns.
pub fn path_err(path: &Path, e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(format!("{}: {e}", path.display()))
}

/// Write one file whole or not at all: the bytes go to `.tmp-<name>` beside
/// it, which is then renamed into place, so a file that exists is complete.
/// Errors name the path and the cause (a full disk: "No space left on
/// device"); the temporary file is removed on failure and by
/// [`abort_cleanup`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = TempFile::beside(path)?;
    fs::write(tmp.path(), bytes).map_err(|e| path_err(path, e))?;
    tmp.persist(path)
}

/// A temporary file `.tmp-<name>` beside the file it will become, outside
/// a [`Staging`]: registered for [`abort_cleanup`] (an interrupt), and
/// removed when dropped unless [`TempFile::persist`] renamed it into place
/// (an error on the way).
pub struct TempFile {
    path: PathBuf,
    kept: bool,
}

impl TempFile {
    /// The temporary name for `path`, registered.
    pub fn beside(path: &Path) -> std::io::Result<TempFile> {
        let name = path
            .file_name()
            .ok_or_else(|| path_err(path, "not a file name"))?;
        let tmp = path.with_file_name(format!("{TMP_PREFIX}{}", name.to_string_lossy()));
        lock(&LIVE).insert(tmp.clone());
        Ok(TempFile {
            path: tmp,
            kept: false,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Rename it to `to`; the error names `to` and the cause.
    pub fn persist(mut self, to: &Path) -> std::io::Result<()> {
        fs::rename(&self.path, to).map_err(|e| path_err(to, e))?;
        self.kept = true;
        lock(&LIVE).remove(&self.path);
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.kept {
            let _ = fs::remove_file(&self.path);
            lock(&LIVE).remove(&self.path);
        }
    }
}

/// Stop all output for good: wait for a commit in progress to end, keep any
/// later one from starting, and delete every temporary file still being
/// written (and the folders of stagings that created them, when empty).
/// Returns the number of temporary files removed. Meant for a signal
/// handler that exits the process right after.
pub fn abort_cleanup() -> usize {
    let g = lock(&COMMIT);
    std::mem::forget(g);
    let live = std::mem::take(&mut *lock(&LIVE));
    let mut n = 0;
    for p in &live {
        if fs::remove_file(p).is_ok() {
            n += 1;
        }
    }
    // Folders the interrupted stagings created, when empty, and their
    // parents when that empties them (a sweep's `<label>/`).
    let dirs = std::mem::take(&mut *lock(&LIVE_DIRS));
    for d in live
        .iter()
        .filter_map(|p| p.parent())
        .chain(dirs.iter().map(|d| d.as_path()))
    {
        if fs::remove_dir(d).is_ok() {
            if let Some(up) = d.parent() {
                let _ = fs::remove_dir(up);
            }
        }
    }
    n
}

/// The files of one output folder, written under temporary names and
/// renamed into place together by [`Staging::commit`].
pub struct Staging {
    dir: PathBuf,
    /// Final names, in staging order.
    names: Vec<String>,
    committed: bool,
}

impl Staging {
    /// Stage files for `dir`, creating it (and its parents) if missing.
    /// Leftover temporary files of an interrupted earlier run are removed.
    pub fn new(dir: &Path) -> std::io::Result<Staging> {
        {
            // Under the commit lock, which `abort_cleanup` takes for good:
            // once it has cleaned up, no staging creates another folder
            // (a worker thread would otherwise leave an empty run folder).
            let _g = lock(&COMMIT);
            if !dir.exists() {
                lock(&LIVE_DIRS).insert(dir.to_path_buf());
            }
            fs::create_dir_all(dir).map_err(|e| path_err(dir, e))?;
        }
        if let Ok(rd) = fs::read_dir(dir) {
            for e in rd.flatten() {
                if e.file_name().to_string_lossy().starts_with(TMP_PREFIX) {
                    let _ = fs::remove_file(e.path());
                }
            }
        }
        Ok(Staging {
            dir: dir.to_path_buf(),
            names: Vec::new(),
            committed: false,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The temporary path of file `name`, registered for the commit.
    pub fn path(&mut self, name: &str) -> PathBuf {
        let tmp = self.dir.join(format!("{TMP_PREFIX}{name}"));
        if !self.names.iter().any(|n| n == name) {
            self.names.push(name.to_string());
            lock(&LIVE).insert(tmp.clone());
        }
        tmp
    }

    /// A stem for a plot `<stem>.png` + `<stem>.svg` (both registered).
    pub fn plot_stem(&mut self, stem: &str) -> PathBuf {
        self.path(&format!("{stem}.png"));
        self.path(&format!("{stem}.svg"));
        self.dir.join(format!("{TMP_PREFIX}{stem}"))
    }

    /// Create file `name` (under its temporary name), buffered.
    pub fn create(&mut self, name: &str) -> std::io::Result<BufWriter<fs::File>> {
        // registered and created under the commit lock, as in `new`
        let _g = lock(&COMMIT);
        let p = self.path(name);
        Ok(BufWriter::new(
            fs::File::create(&p).map_err(|e| path_err(&self.dir.join(name), e))?,
        ))
    }

    /// Write `bytes` as file `name`.
    pub fn write(&mut self, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        let mut f = self.create(name)?;
        f.write_all(bytes)
            .and_then(|_| f.flush())
            .map_err(|e| path_err(&self.dir.join(name), e))
    }

    /// Rename the staged files into place, `summary.json` last, after
    /// removing files of an earlier run that this one does not write.
    /// A staged name whose temporary file was never written is skipped.
    /// Returns the names of the earlier files removed.
    pub fn commit(mut self) -> std::io::Result<Vec<String>> {
        let _g = lock(&COMMIT);
        let mut removed = Vec::new();
        let written: Vec<String> = self
            .names
            .iter()
            .filter(|n| self.dir.join(format!("{TMP_PREFIX}{n}")).exists())
            .cloned()
            .collect();
        // Unmark the folder as complete first.
        let summary = self.dir.join("summary.json");
        if summary.exists() && fs::remove_file(&summary).is_ok() {
            removed.push("summary.json".to_string());
        }
        for name in earlier_files(&self.dir) {
            if name != "summary.json" && !written.contains(&name) {
                fs::remove_file(self.dir.join(&name)).map_err(|e| path_err(&self.dir, e))?;
                removed.push(name);
            }
        }
        let mut order: Vec<&String> = self.names.iter().filter(|n| *n != "summary.json").collect();
        order.extend(self.names.iter().filter(|n| *n == "summary.json"));
        for name in order {
            let tmp = self.dir.join(format!("{TMP_PREFIX}{name}"));
            if !tmp.exists() {
                continue;
            }
            let dst = self.dir.join(name);
            fs::rename(&tmp, &dst).map_err(|e| path_err(&dst, e))?;
            lock(&LIVE).remove(&tmp);
        }
        self.committed = true;
        lock(&LIVE_DIRS).remove(&self.dir);
        removed.retain(|n| !written.contains(n));
        Ok(removed)
    }
}

impl Drop for Staging {
    /// A staging dropped without commit (an error) removes its files.
    fn drop(&mut self) {
        if !self.committed {
            let mut live = lock(&LIVE);
            for n in &self.names {
                let tmp = self.dir.join(format!("{TMP_PREFIX}{n}"));
                let _ = fs::remove_file(&tmp);
                live.remove(&tmp);
            }
        }
    }
}

/// The files in `dir` that a run of aqmlab writes (by name).
pub fn earlier_files(dir: &Path) -> Vec<String> {
    let mut v = Vec::new();
    let Ok(rd) = fs::read_dir(dir) else {
        return v;
    };
    for e in rd.flatten() {
        let n = e.file_name().to_string_lossy().to_string();
        if n.starts_with(TMP_PREFIX) {
            continue;
        }
        let plot = RUN_PLOTS
            .iter()
            .any(|s| n == format!("{s}.png") || n == format!("{s}.svg"));
        let ours = RUN_FILES.contains(&n.as_str()) || plot || n.ends_with(".pcap");
        if ours && e.file_type().is_ok_and(|t| t.is_file()) {
            v.push(n);
        }
    }
    v.sort();
    v
}

/// Where a run's results came from, written as `provenance.json`.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct Provenance {
    pub aqmlab_version: String,
    /// Git commit aqmlab was built from, or `"unknown"`.
    pub git_commit: String,
    /// The scenario file as given, if any.
    pub scenario_file: Option<String>,
    /// `--set` overrides (and `--duration`), in order.
    pub overrides: Vec<String>,
    pub seed: u64,
    /// SHA-256 of `scenario.toml` (the effective scenario, seed included).
    pub scenario_sha256: String,
    /// The command line, argument by argument (from Python: the
    /// interpreter's).
    pub command_line: Vec<String>,
    /// From Python: the call that made the run (`aqmlab.run(...)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// The files the scenario read (traces, CDF files): the key naming
    /// each, its absolute path, SHA-256 and size.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<crate::scenario::files::InputFile>,
}

/// The effective scenario as TOML: the scenario document `doc` (as
/// parsed, overrides applied) with `seed` set to the run's seed and no
/// `[sweep]` table, so that `aqmlab run` on it repeats the run.
pub fn effective_scenario_toml(doc: &toml::Value, seed: u64) -> std::io::Result<String> {
    let mut d = doc.clone();
    if let Some(t) = d.as_table_mut() {
        t.remove("sweep");
        let seed = i64::try_from(seed).map_err(|_| {
            std::io::Error::other(format!("seed {seed} does not fit a TOML integer"))
        })?;
        t.insert("seed".into(), toml::Value::Integer(seed));
    }
    toml::to_string(&d).map_err(std::io::Error::other)
}

/// SHA-256 of `text`, lower-case hex.
pub fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(text.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Write all output files of `r` into `dir` (created if missing), each
/// under a temporary name renamed into place, `summary.json` last. The
/// CSVs' `label` column holds the scenario's name.
pub fn write_run(r: &RunResult, dir: &Path) -> std::io::Result<()> {
    let mut st = Staging::new(dir)?;
    stage_run(r, &mut st)?;
    st.commit()?;
    Ok(())
}

/// Does `dir` hold a complete run of the effective scenario whose
/// `scenario.toml` hashes to `scenario_sha256`, with `seed`, reading the
/// files `files` (the same paths with the same SHA-256: a trace edited
/// since is a different run)? (A `summary.json`, and a `provenance.json`
/// with that hash, seed and files.) This is what a resumed sweep skips.
pub fn run_complete(
    dir: &Path,
    scenario_sha256: &str,
    seed: u64,
    files: &[crate::scenario::files::InputFile],
) -> bool {
    if !dir.join("summary.json").is_file() {
        return false;
    }
    let Ok(text) = fs::read_to_string(dir.join("provenance.json")) else {
        return false;
    };
    match serde_json::from_str::<Provenance>(&text) {
        Ok(p) => {
            let key = |f: &crate::scenario::files::InputFile| (f.path.clone(), f.sha256.clone());
            p.scenario_sha256 == scenario_sha256
                && p.seed == seed
                && p.files.iter().map(key).eq(files.iter().map(key))
        }
        Err(_) => false,
    }
}

/// Run folders of a sweep under `out` (`<label>/<seed-n>/` holding files
/// aqmlab writes) whose relative path (`label/seed-n`) is not in `keep`:
/// runs of another sweep, which must not be mixed with this one's.
pub fn stale_runs(out: &Path, keep: &BTreeSet<String>) -> Vec<String> {
    let mut v = Vec::new();
    let Ok(top) = fs::read_dir(out) else {
        return v;
    };
    for d in top.flatten().filter(|e| e.path().is_dir()) {
        let Ok(sub) = fs::read_dir(d.path()) else {
            continue;
        };
        for r in sub.flatten().filter(|e| e.path().is_dir()) {
            let rel = format!(
                "{}/{}",
                d.file_name().to_string_lossy(),
                r.file_name().to_string_lossy()
            );
            let ours = ["summary.json", "provenance.json"]
                .iter()
                .any(|f| r.path().join(f).exists())
                || !earlier_files(&r.path()).is_empty();
            if ours && !keep.contains(&rel) {
                v.push(rel);
            }
        }
    }
    v.sort();
    v
}

/// Delete the run folders `stale` (relative to `out`, from [`stale_runs`])
/// and their `<label>/` parents when that empties them.
pub fn remove_stale_runs(out: &Path, stale: &[String]) -> std::io::Result<()> {
    for s in stale {
        let d = out.join(s);
        fs::remove_dir_all(&d).map_err(|e| path_err(&d, e))?;
        if let Some(parent) = d.parent() {
            let _ = fs::remove_dir(parent); // when empty
        }
    }
    Ok(())
}

/// Run `sc` with `seed` and write everything `aqmlab run` writes into
/// `dir` (created if missing): the pcap traces the scenario asks for,
/// `scenario_toml` and `prov` (`scenario.toml`, `provenance.json`) and the
/// result files with `label` in their `label` column, renamed into place
/// together, `summary.json` last. Packet conservation is checked before
/// anything is renamed into place. Returns the result and the traces
/// written (path, packets).
pub fn run_into(
    sc: &crate::Scenario,
    seed: u64,
    dir: &Path,
    label: &str,
    scenario_toml: &str,
    prov: &Provenance,
    threads: usize,
) -> std::io::Result<(RunResult, Vec<(String, u64)>)> {
    let mut st = Staging::new(dir)?;
    let mut sim = crate::Simulation::with_threads(sc, seed, threads);
    let cap = pcap::attach(&mut sim, sc, &mut st)?;
    let r = sim.run();
    if !r.conservation.holds() {
        return Err(std::io::Error::other(format!(
            "{}: packet conservation violated: {:?}",
            dir.display(),
            r.conservation
        )));
    }
    let traces = cap.finish()?;
    stage_provenance(&mut st, scenario_toml, prov)?;
    stage_run_labelled(&r, &mut st, label)?;
    st.commit()?;
    Ok((r, traces))
}

/// Write `scenario.toml` and `provenance.json` into a staging.
pub fn stage_provenance(
    st: &mut Staging,
    scenario_toml: &str,
    prov: &Provenance,
) -> std::io::Result<()> {
    st.write("scenario.toml", scenario_toml.as_bytes())?;
    let mut j = serde_json::to_vec_pretty(prov).map_err(std::io::Error::other)?;
    j.push(b'\n');
    st.write("provenance.json", &j)
}

/// Write the result files of `r` into a staging (commit separately), with
/// the scenario's name in the CSVs' `label` column.
pub fn stage_run(r: &RunResult, st: &mut Staging) -> std::io::Result<()> {
    let label = r.scenario.clone();
    stage_run_labelled(r, st, &label)
}

/// Write the result files of `r` into a staging (commit separately). Every
/// CSV starts with the columns `label` (`label`: a sweep point's label, or
/// the scenario's name) and `seed`, so that the rows of several runs
/// concatenated stay apart.
pub fn stage_run_labelled(r: &RunResult, st: &mut Staging, label: &str) -> std::io::Result<()> {
    let id = RunId {
        label: label.to_string(),
        seed: r.seed,
    };
    let d = st.dir().to_path_buf();
    let named = |n: &str| {
        let p = d.join(n);
        move |e: std::io::Error| path_err(&p, e)
    };
    // the tables first, timed; `summary.json` (which holds the time) last
    let clock = crate::metrics::PhaseClock::start();
    for (name, rows) in tables(r) {
        stage_table(st, name, &rows, &id, r.table_format)?;
    }
    if let Some(log) = &r.event_log {
        let name = event_log::file_name(log);
        event_log::write(r, log, &id, &st.path(name)).map_err(named(name))?;
    }
    let mut s = summary::Summary::of(r);
    s.timings.write = clock.stop();
    {
        // Buffered: serde_json writes token by token, which unbuffered
        // costs a system call each (seconds for a run with 10⁵ flows).
        let mut f = st.create("summary.json")?;
        serde_json::to_writer_pretty(&mut f, &s)
            .map_err(std::io::Error::other)
            .and_then(|_| writeln!(f))
            .and_then(|_| f.flush())
            .map_err(named("summary.json"))?;
    }
    Ok(())
}

/// The result tables, each `<table>.csv` or (`[output] format =
/// "parquet"`) `<table>.parquet`.
pub const TABLES: &[&str] = &[
    "flows",
    "queues",
    "links",
    "classes",
    "cc_stats",
    "cwnd",
    "throughput",
    "requests",
];

/// Where the rows of a table written cell by cell go: CSV text
/// ([`IdWriter`]) or typed columns ([`columnar::RowColumns`]). A table's
/// rows are produced once, through this, so that both forms hold the same
/// columns and values (a figure the CSV rounds is rounded alike in both).
trait Sink {
    /// The columns after `label` and `seed`.
    fn head(&mut self, names: &[&str]) -> std::io::Result<()>;
    fn text(&mut self, v: &str) -> std::io::Result<()>;
    fn int(&mut self, v: u64) -> std::io::Result<()>;
    /// A number, as the shortest text that reads back as it (`{}`).
    fn float(&mut self, v: f64) -> std::io::Result<()>;
    /// A number rounded to `places` decimals (`{:.places$}`).
    fn fixed(&mut self, v: f64, places: usize) -> std::io::Result<()>;
    /// No value (an empty CSV cell, a Parquet null).
    fn null(&mut self) -> std::io::Result<()>;
    fn end_row(&mut self) -> std::io::Result<()>;

    fn opt_float(&mut self, v: Option<f64>) -> std::io::Result<()> {
        match v {
            Some(v) => self.float(v),
            None => self.null(),
        }
    }

    fn opt_fixed(&mut self, v: Option<f64>, places: usize) -> std::io::Result<()> {
        match v {
            Some(v) => self.fixed(v, places),
            None => self.null(),
        }
    }

    fn opt_int(&mut self, v: Option<u64>) -> std::io::Result<()> {
        match v {
            Some(v) => self.int(v),
            None => self.null(),
        }
    }
}

impl Sink for columnar::RowColumns {
    fn head(&mut self, names: &[&str]) -> std::io::Result<()> {
        columnar::RowColumns::head(self, names);
        Ok(())
    }
    fn text(&mut self, v: &str) -> std::io::Result<()> {
        columnar::RowColumns::text(self, v)
    }
    fn int(&mut self, v: u64) -> std::io::Result<()> {
        match i64::try_from(v) {
            Ok(i) => columnar::RowColumns::int(self, i),
            Err(_) => self.double(v as f64),
        }
    }
    fn float(&mut self, v: f64) -> std::io::Result<()> {
        self.double(v)
    }
    fn fixed(&mut self, v: f64, places: usize) -> std::io::Result<()> {
        // the value the CSV's rounded text reads back as
        let r = format!("{v:.places$}").parse().unwrap_or(v);
        self.double(r)
    }
    fn null(&mut self) -> std::io::Result<()> {
        columnar::RowColumns::null(self)
    }
    fn end_row(&mut self) -> std::io::Result<()> {
        columnar::RowColumns::end_row(self)
    }
}

/// How the rows of a table are produced: from a slice of `Serialize`
/// structs (the `csv` crate's columns for them), or cell by cell through a
/// [`Sink`].
enum Rows<'a> {
    Flows(&'a [crate::metrics::FlowResult]),
    Links(Vec<LinkRow<'a>>),
    Requests(&'a [crate::metrics::RequestResult]),
    Cells(&'a RunResult, CellRows),
}

/// A table written cell by cell.
type CellRows = fn(&RunResult, &mut dyn Sink) -> std::io::Result<()>;

impl Rows<'_> {
    /// The table's rows as CSV into `w`.
    fn csv<W: Write>(&self, w: &mut IdWriter<'_, W>) -> std::io::Result<()> {
        match self {
            Rows::Flows(x) => w.serialize_all(x, &["id"]),
            Rows::Links(x) => w.serialize_all(x, &["link"]),
            Rows::Requests(x) => w.serialize_all(x, &[]),
            Rows::Cells(r, f) => f(r, w),
        }
    }

    /// The table as typed columns (led by `label` and `seed`) and its
    /// number of rows.
    fn columns(&self, id: &RunId) -> std::io::Result<(Vec<columnar::TypedColumn>, usize)> {
        fn structs<T: Serialize>(
            x: &[T],
            head: &[&str],
            id: &RunId,
        ) -> std::io::Result<(Vec<columnar::TypedColumn>, usize)> {
            let mut t = columnar::RowColumns::new(&id.label, id.seed, x.len());
            x.iter().try_for_each(|x| t.push(x))?;
            Ok(t.into_columns(head))
        }
        match self {
            Rows::Flows(x) => structs(x, &["id"], id),
            Rows::Links(x) => structs(x, &["link"], id),
            Rows::Requests(x) => structs(x, &[], id),
            Rows::Cells(r, f) => {
                let mut t = columnar::RowColumns::new(&id.label, id.seed, 0);
                f(r, &mut t)?;
                Ok(t.into_columns(&[]))
            }
        }
    }

    /// The table as typed columns, written as Parquet into `sink`.
    fn parquet<W: Write + Send>(&self, id: &RunId, sink: W) -> std::io::Result<()> {
        let (cols, n) = self.columns(id)?;
        columnar::write_columns(cols, n, sink)
    }
}

/// The run's result tables, in writing order, each with how its rows are
/// produced; a table the run has nothing for (no per-class queue, no
/// congestion-control statistics, no traced flow, no workload) is absent.
fn tables(r: &RunResult) -> Vec<(&'static str, Rows<'_>)> {
    let mut t = vec![
        ("flows", Rows::Flows(&r.flows)),
        ("queues", Rows::Cells(r, queue_rows)),
        ("links", Rows::Links(link_rows(r))),
    ];
    if r.queues.iter().any(|q| !q.classes.is_empty()) {
        t.push(("classes", Rows::Cells(r, class_rows)));
    }
    if !r.cc_stats.is_empty() {
        t.push(("cc_stats", Rows::Cells(r, cc_stat_rows)));
    }
    if !r.cwnd.is_empty() {
        t.push(("cwnd", Rows::Cells(r, cwnd_rows)));
    }
    if !r.throughput.is_empty() {
        t.push(("throughput", Rows::Cells(r, throughput_rows)));
    }
    if !r.requests.is_empty() {
        t.push(("requests", Rows::Requests(&r.requests)));
    }
    t
}

/// The names of the result tables run `r` has (each `<name>.csv` or
/// `<name>.parquet` in its folder).
pub fn table_names(r: &RunResult) -> Vec<&'static str> {
    tables(r).into_iter().map(|(n, _)| n).collect()
}

/// Table `table` of run `r` (labelled with the scenario's name) as typed
/// columns (the columns, names and types `format = "parquet"` writes) and
/// its number of rows; `None` when the run has no such table. The Python
/// package hands these to pyarrow through the Arrow C data interface.
pub fn table_columns(
    r: &RunResult,
    table: &str,
) -> std::io::Result<Option<(Vec<columnar::TypedColumn>, usize)>> {
    let id = RunId {
        label: r.scenario.clone(),
        seed: r.seed,
    };
    let Some((_, rows)) = tables(r).into_iter().find(|(n, _)| *n == table) else {
        return Ok(None);
    };
    rows.columns(&id).map(Some)
}

/// Table `table` of run `r` (labelled with the scenario's name) as the CSV
/// text `format = "csv"` writes, whatever the run's format; `None` when the
/// run has no such table. The Python package reads it without pyarrow.
pub fn table_csv(r: &RunResult, table: &str) -> std::io::Result<Option<Vec<u8>>> {
    let id = RunId {
        label: r.scenario.clone(),
        seed: r.seed,
    };
    let Some((_, rows)) = tables(r).into_iter().find(|(n, _)| *n == table) else {
        return Ok(None);
    };
    let mut w = IdWriter::new(Vec::new(), &id);
    rows.csv(&mut w)?;
    w.flush()?;
    w.into_inner().map(Some)
}

/// Stage table `table`: `<table>.csv`, or `<table>.parquet` under `format
/// = "parquet"`.
fn stage_table(
    st: &mut Staging,
    table: &str,
    rows: &Rows,
    id: &RunId,
    format: FileFormat,
) -> std::io::Result<()> {
    let dir = st.dir().to_path_buf();
    let err = |name: &str, e: std::io::Error| path_err(&dir.join(name), e);
    match format {
        FileFormat::Csv => {
            let name = format!("{table}.csv");
            let mut w = IdWriter::new(st.create(&name)?, id);
            (rows.csv(&mut w).and_then(|_| w.flush())).map_err(|e| err(&name, e))
        }
        FileFormat::Parquet => {
            let name = format!("{table}.parquet");
            let f = st.create(&name)?;
            (rows.parquet(id, f)).map_err(|e| err(&name, e))
        }
    }
}

/// The run a CSV row belongs to: its first two columns, `label` and `seed`.
#[derive(Clone, Debug)]
pub struct RunId {
    pub label: String,
    pub seed: u64,
}

/// A CSV writer that starts every record with the run's `label` and `seed`.
struct IdWriter<'a, W: Write> {
    w: csv::Writer<W>,
    id: &'a RunId,
    seed: String,
    /// A row written cell by cell ([`Sink`]) is open.
    in_row: bool,
}

impl<'a, W: Write> IdWriter<'a, W> {
    fn new(w: W, id: &'a RunId) -> Self {
        IdWriter {
            w: csv::WriterBuilder::new().has_headers(false).from_writer(w),
            id,
            seed: id.seed.to_string(),
            in_row: false,
        }
    }

    /// The next cell of a row written cell by cell, after the row's id
    /// fields when it is the first.
    fn cell(&mut self, v: impl AsRef<[u8]>) -> std::io::Result<()> {
        if !self.in_row {
            self.w.write_field(&self.id.label).map_err(csv_err)?;
            self.w.write_field(&self.seed).map_err(csv_err)?;
            self.in_row = true;
        }
        self.w.write_field(v).map_err(csv_err)
    }

    fn head(&mut self, names: &[&str]) -> std::io::Result<()> {
        self.w
            .write_record(["label", "seed"].iter().chain(names))
            .map_err(csv_err)
    }

    /// One record per row, the header from the rows' field names
    /// (`empty_head` when there is no row).
    fn serialize_all<T: Serialize>(
        &mut self,
        rows: &[T],
        empty_head: &[&str],
    ) -> std::io::Result<()> {
        match rows.first() {
            Some(first) => {
                let names = field_names(first)?;
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                self.head(&names)?;
            }
            None => self.head(empty_head)?,
        }
        for x in rows {
            self.w.write_field(&self.id.label).map_err(csv_err)?;
            self.w.write_field(&self.seed).map_err(csv_err)?;
            // The struct's fields continue the record the id fields opened.
            self.w.serialize(x).map_err(csv_err)?;
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush()
    }

    fn into_inner(self) -> std::io::Result<W> {
        self.w
            .into_inner()
            .map_err(|e| std::io::Error::other(e.to_string()))
    }
}

impl<W: Write> Sink for IdWriter<'_, W> {
    fn head(&mut self, names: &[&str]) -> std::io::Result<()> {
        IdWriter::head(self, names)
    }
    fn text(&mut self, v: &str) -> std::io::Result<()> {
        self.cell(v)
    }
    fn int(&mut self, v: u64) -> std::io::Result<()> {
        self.cell(v.to_string())
    }
    fn float(&mut self, v: f64) -> std::io::Result<()> {
        self.cell(format!("{v}"))
    }
    fn fixed(&mut self, v: f64, places: usize) -> std::io::Result<()> {
        self.cell(format!("{v:.places$}"))
    }
    fn null(&mut self) -> std::io::Result<()> {
        self.cell("")
    }
    fn end_row(&mut self) -> std::io::Result<()> {
        self.in_row = false;
        self.w.write_record(None::<&[u8]>).map_err(csv_err)
    }
}

/// The CSV header the `csv` crate writes for a struct (its field names).
fn field_names<T: Serialize>(x: &T) -> std::io::Result<Vec<String>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.serialize(x).map_err(csv_err)?;
    let bytes = w
        .into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut rd = csv::Reader::from_reader(bytes.as_slice());
    Ok(rd
        .headers()
        .map_err(csv_err)?
        .iter()
        .map(str::to_string)
        .collect())
}

/// `throughput.csv`: `label,seed,time_s,flow,group,throughput_bps`.
fn throughput_rows(r: &RunResult, w: &mut dyn Sink) -> std::io::Result<()> {
    w.head(&["time_s", "flow", "group", "throughput_bps"])?;
    for t in &r.throughput {
        for (time, bps) in t.bps() {
            w.float(time)?;
            w.int(u64::from(t.flow))?;
            w.text(&t.group)?;
            w.float(bps)?;
            w.end_row()?;
        }
    }
    Ok(())
}

/// `cwnd.csv`: `label,seed,time_s,flow,group,cc,cwnd,ssthresh,in_flight,srtt_s`
/// for the traced flows.
fn cwnd_rows(r: &RunResult, w: &mut dyn Sink) -> std::io::Result<()> {
    w.head(&[
        "time_s",
        "flow",
        "group",
        "cc",
        "cwnd",
        "ssthresh",
        "in_flight",
        "srtt_s",
    ])?;
    for t in &r.cwnd {
        for x in &t.samples {
            w.float(x.time_s)?;
            w.int(u64::from(t.flow))?;
            w.text(&t.group)?;
            w.text(&t.cc)?;
            w.fixed(x.cwnd, 4)?;
            w.opt_fixed(x.ssthresh, 4)?;
            w.int(u64::from(x.in_flight))?;
            w.opt_float(x.srtt_s)?;
            w.end_row()?;
        }
    }
    Ok(())
}

fn csv_err(e: csv::Error) -> std::io::Error {
    std::io::Error::other(e)
}

/// `queues.csv`: `label,seed` and the time series of the monitored queues.
fn queue_rows(r: &RunResult, w: &mut dyn Sink) -> std::io::Result<()> {
    // the disciplines' own queues (DualPI2's `l`, `c`), in order of first
    // appearance: six columns each, after the common ones
    let mut classes: Vec<&str> = Vec::new();
    for c in r.series.iter().flat_map(|s| &s.classes) {
        if !classes.contains(&c.class.as_str()) {
            classes.push(&c.class);
        }
    }
    let mut head: Vec<String> = [
        "time_s",
        "link",
        "len_pkts",
        "len_bytes",
        "avg_pkts",
        "delay_s",
        "arrivals",
        "dropped",
        "marked",
        "drop_rate",
        "mark_rate",
    ]
    .map(String::from)
    .to_vec();
    for c in &classes {
        for k in CLASS_COLUMNS {
            head.push(format!("{c}_{k}"));
        }
    }
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    w.head(&head)?;
    for s in &r.series {
        let mut prev: Option<&crate::metrics::QueueSample> = None;
        for (j, x) in s.samples.iter().enumerate() {
            w.float(x.time_s)?;
            w.text(&s.link)?;
            w.int(x.len_pkts.into())?;
            w.int(x.len_bytes)?;
            w.opt_fixed(x.avg_pkts, 6)?;
            w.float(x.delay_s)?;
            w.int(x.arrivals)?;
            w.int(x.dropped)?;
            w.int(x.marked)?;
            // Rates over the interval since the previous sample (empty on
            // the first sample and when nothing arrived).
            match prev {
                Some(p) if x.arrivals > p.arrivals => {
                    let a = (x.arrivals - p.arrivals) as f64;
                    w.fixed((x.dropped - p.dropped) as f64 / a, 6)?;
                    w.fixed((x.marked - p.marked) as f64 / a, 6)?;
                }
                _ => {
                    w.null()?;
                    w.null()?;
                }
            }
            prev = Some(x);
            for c in &classes {
                match (s.classes.iter().find(|cs| cs.class == *c)).and_then(|cs| cs.samples.get(j))
                {
                    Some(y) => {
                        w.int(y.len_pkts)?;
                        w.int(y.len_bytes)?;
                        w.float(y.delay_s)?;
                        w.int(y.arrivals)?;
                        w.int(y.dropped)?;
                        w.int(y.marked)?;
                    }
                    None => (0..CLASS_COLUMNS.len()).try_for_each(|_| w.null())?,
                }
            }
            w.end_row()?;
        }
    }
    Ok(())
}

/// The per-class columns of `queues.csv`, each prefixed `<class>_`.
const CLASS_COLUMNS: [&str; 6] = [
    "len_pkts",
    "len_bytes",
    "delay_s",
    "arrivals",
    "dropped",
    "marked",
];

/// One row of `links.csv`: a link direction and every scalar counter of its
/// queue that `summary.json` has (the per-class counters stay in JSON).
#[derive(Serialize)]
struct LinkRow<'a> {
    link: &'a str,
    from: &'a str,
    to: &'a str,
    rate_bps: u64,
    delay_s: f64,
    tx_packets: u64,
    tx_bytes: u64,
    utilization: f64,
    lost: u64,
    kind: &'a str,
    arrivals: u64,
    enqueued: u64,
    dequeued: u64,
    dropped: u64,
    dropped_early: u64,
    dropped_forced: u64,
    dropped_overflow: u64,
    dropped_aqm: u64,
    dropped_link_down: u64,
    marked: u64,
    /// dropped / arrivals (empty when nothing arrived).
    drop_rate: Option<f64>,
    /// marked / arrivals (empty when nothing arrived).
    mark_rate: Option<f64>,
    mean_len_pkts: f64,
    mean_len_bytes: f64,
    mean_delay_s: f64,
    p50_delay_s: f64,
    p99_delay_s: f64,
    max_delay_s: f64,
}

/// Drop rate as used everywhere: drops per packet arrival (`None` when
/// nothing arrived).
pub fn per_arrival(count: u64, arrivals: u64) -> Option<f64> {
    (arrivals > 0).then(|| count as f64 / arrivals as f64)
}

/// `classes.csv`: `label,seed` and the per-class counters of the queues
/// that count per class.
fn class_rows(r: &RunResult, w: &mut dyn Sink) -> std::io::Result<()> {
    w.head(&[
        "link",
        "class",
        "arrivals",
        "dropped",
        "marked",
        "drop_rate",
        "mark_rate",
        "dequeued",
        "mean_delay_s",
    ])?;
    for q in &r.queues {
        for c in &q.classes {
            w.text(&q.link)?;
            w.text(&c.class)?;
            w.int(c.arrivals)?;
            w.int(c.dropped)?;
            w.int(c.marked)?;
            w.opt_float(per_arrival(c.dropped, c.arrivals))?;
            w.opt_float(per_arrival(c.marked, c.arrivals))?;
            w.opt_int(c.dequeued)?;
            w.opt_float(c.mean_delay_s)?;
            w.end_row()?;
        }
    }
    Ok(())
}

/// `cc_stats.csv`: `label,seed` and one row per (flow, statistic) of the
/// congestion controls that report statistics, in long form (the names
/// differ between controls).
fn cc_stat_rows(r: &RunResult, w: &mut dyn Sink) -> std::io::Result<()> {
    w.head(&["flow", "stat", "value"])?;
    for f in &r.cc_stats {
        for (k, v) in &f.stats {
            w.int(u64::from(f.flow))?;
            w.text(k)?;
            w.float(*v)?;
            w.end_row()?;
        }
    }
    Ok(())
}

/// The rows of `links.csv`: one per link direction.
fn link_rows(r: &RunResult) -> Vec<LinkRow<'_>> {
    r.links
        .iter()
        .zip(&r.queues)
        .map(|(l, q)| LinkRow {
            link: &l.link,
            from: &l.from,
            to: &l.to,
            rate_bps: l.rate_bps,
            delay_s: l.delay_s,
            tx_packets: l.tx_packets,
            tx_bytes: l.tx_bytes,
            utilization: l.utilization,
            lost: l.lost,
            kind: &q.kind,
            arrivals: q.arrivals,
            enqueued: q.enqueued,
            dequeued: q.dequeued,
            dropped: q.dropped,
            dropped_early: q.dropped_early,
            dropped_forced: q.dropped_forced,
            dropped_overflow: q.dropped_overflow,
            dropped_aqm: q.dropped_aqm,
            dropped_link_down: q.dropped_link_down,
            marked: q.marked,
            drop_rate: per_arrival(q.dropped, q.arrivals),
            mark_rate: per_arrival(q.marked, q.arrivals),
            mean_len_pkts: q.mean_len_pkts,
            mean_len_bytes: q.mean_len_bytes,
            mean_delay_s: q.mean_delay_s,
            p50_delay_s: q.p50_delay_s,
            p99_delay_s: q.p99_delay_s,
            max_delay_s: q.max_delay_s,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomic_leaves_the_whole_file_and_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("report.md");
        write_atomic(&p, b"first").unwrap();
        write_atomic(&p, b"second, longer").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "second, longer");
        let names: Vec<String> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["report.md".to_string()]);
        // a folder that does not exist: an error naming the path, no file
        let bad = d.path().join("missing").join("tables.csv");
        let e = write_atomic(&bad, b"x").unwrap_err().to_string();
        assert!(e.contains("missing"), "{e}");
        assert!(!bad.exists());
    }
}
