//! `aqmlab._native`: the PyO3 extension module under the Python package
//! `aqmlab` (the typed API lives in `python/aqmlab/*.py`).
//!
//! It exposes two classes over the library's public API:
//!
//! - `Scenario`: a scenario as its TOML document plus the validated
//!   [`aqmlab::Scenario`]. Every change (`set`, `set_many`) goes through
//!   [`aqmlab::scenario::set_path`] on the document and is validated again by
//!   [`aqmlab::Scenario::from_toml`], so a Python scenario accepts and rejects
//!   exactly what the CLI's `--set` does, with the same messages.
//! - `RunOutput`: one finished run ([`aqmlab::RunResult`]). Its tables are the
//!   bytes [`aqmlab::output::write_run`] writes, so the DataFrames built from
//!   them hold what the CLI's CSV files hold.
//!
//! A bad scenario raises `aqmlab.ScenarioError(message, path, file, reason)`,
//! where `message` is the text the CLI prints after `error: `.

use aqmlab::output::{self, Provenance};
use aqmlab::scenario::set_path;
use aqmlab::{RunResult, Scenario, ScenarioError, Simulation};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyCapsule, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use std::collections::BTreeMap;

mod arrow;

/// Large blocks on transparent huge pages (see [`aqmlab_reproduce::alloc`]).
#[global_allocator]
static ALLOC: aqmlab_reproduce::alloc::HugePages = aqmlab_reproduce::alloc::HugePages;

/// Raise `aqmlab.ScenarioError` for a library error.
fn scenario_error(py: Python<'_>, e: &ScenarioError) -> PyErr {
    let (file, path, reason) = match e {
        ScenarioError::Invalid { file, path, msg } => {
            (Some(file.clone()), Some(path.clone()), msg.clone())
        }
        ScenarioError::Syntax { file, msg } | ScenarioError::Io { file, msg } => {
            (Some(file.clone()), None, msg.clone())
        }
    };
    raise_scenario_error(py, e.to_string(), path, file, reason)
}

fn raise_scenario_error(
    py: Python<'_>,
    message: String,
    path: Option<String>,
    file: Option<String>,
    reason: String,
) -> PyErr {
    let made = py
        .import("aqmlab._errors")
        .and_then(|m| m.getattr("ScenarioError"))
        .and_then(|cls| cls.call1((message.clone(), path, file, reason)));
    match made {
        Ok(exc) => PyErr::from_value(exc),
        // The package is broken (aqmlab._errors missing): still say what
        // was wrong with the scenario.
        Err(_) => PyRuntimeError::new_err(message),
    }
}

/// `aqmlab.ScenarioError` for a Python value that has no TOML form.
fn conversion_error(py: Python<'_>, file: &str, (path, msg): (String, String)) -> PyErr {
    scenario_error(py, &ScenarioError::invalid(file, path, msg))
}

/// Deepest nesting of dicts and lists converted (a scenario needs about 6;
/// the recursion below must stay far from the thread's stack).
const MAX_DEPTH: usize = 64;

/// A Python value as a TOML value. On failure: (key path, what is wrong).
/// A dict or list that contains itself, or nesting deeper than
/// [`MAX_DEPTH`], is an error (it was a segmentation fault: the recursion
/// overflowed the stack), found before anything deeper is visited.
fn to_toml(v: &Bound<'_, PyAny>, at: &str) -> Result<toml::Value, (String, String)> {
    to_toml_in(v, at, &mut Vec::new())
}

/// [`to_toml`] with the containers (by identity) from the root to `v`.
fn to_toml_in(
    v: &Bound<'_, PyAny>,
    at: &str,
    open: &mut Vec<usize>,
) -> Result<toml::Value, (String, String)> {
    let fail = |m: String| (at.to_string(), m);
    let container = v.is_instance_of::<PyDict>()
        || v.is_instance_of::<PyList>()
        || v.is_instance_of::<PyTuple>();
    if container {
        let id = v.as_ptr() as usize;
        if open.contains(&id) {
            return Err(fail(
                "this dict or list contains itself (a cycle); a scenario is a tree".into(),
            ));
        }
        if open.len() >= MAX_DEPTH {
            return Err(fail(format!(
                "nested deeper than {MAX_DEPTH} levels of dicts and lists; a scenario needs far fewer"
            )));
        }
        open.push(id);
        let r = container_to_toml(v, at, open);
        open.pop();
        return r;
    }
    if v.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(
            v.is_truthy().map_err(|e| fail(e.to_string()))?,
        ));
    }
    if v.is_instance_of::<PyInt>() {
        let i: i64 = v
            .extract()
            .map_err(|_| fail(format!("integer {v} does not fit in 64 bits")))?;
        return Ok(toml::Value::Integer(i));
    }
    if v.is_instance_of::<PyFloat>() {
        let f: f64 = v.extract().map_err(|e: PyErr| fail(e.to_string()))?;
        return Ok(toml::Value::Float(f));
    }
    if v.is_instance_of::<PyString>() {
        let s: String = v.extract().map_err(|e: PyErr| fail(e.to_string()))?;
        return Ok(toml::Value::String(s));
    }
    if v.is_none() {
        return Err(fail(
            "None has no TOML equivalent; leave the key out to get its default".into(),
        ));
    }
    // numpy and other numeric scalars: an exact integer, else a float.
    if let Ok(i) = v.call_method0("__index__").and_then(|x| x.extract::<i64>()) {
        return Ok(toml::Value::Integer(i));
    }
    if let Ok(f) = v.call_method0("__float__").and_then(|x| x.extract::<f64>()) {
        return Ok(toml::Value::Float(f));
    }
    let ty = v
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    Err(fail(format!(
        "a {ty} has no TOML equivalent (allowed: bool, int, float, str, list, tuple, dict)"
    )))
}

/// A dict (→ table), list or tuple (→ array) as TOML; `open` holds it.
fn container_to_toml(
    v: &Bound<'_, PyAny>,
    at: &str,
    open: &mut Vec<usize>,
) -> Result<toml::Value, (String, String)> {
    let fail = |m: String| (at.to_string(), m);
    if let Ok(d) = v.cast::<PyDict>() {
        let mut t = toml::Table::new();
        for (k, x) in d.iter() {
            let key: String = k
                .extract()
                .map_err(|_| fail(format!("table keys must be strings, got {k}")))?;
            let sub = if at.is_empty() {
                key.clone()
            } else {
                format!("{at}.{key}")
            };
            t.insert(key, to_toml_in(&x, &sub, open)?);
        }
        return Ok(toml::Value::Table(t));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let mut a = Vec::new();
        let it = v.try_iter().map_err(|e| fail(e.to_string()))?;
        for (i, x) in it.enumerate() {
            let x = x.map_err(|e| fail(e.to_string()))?;
            a.push(to_toml_in(&x, &format!("{at}[{i}]"), open)?);
        }
        return Ok(toml::Value::Array(a));
    }
    Err(fail("not a dict, list or tuple".into()))
}

/// A TOML value as a Python value (through JSON: tables → dict, arrays →
/// list, datetimes → str).
fn toml_to_py<'py>(py: Python<'py>, v: &toml::Value) -> PyResult<Bound<'py, PyAny>> {
    let json = serde_json::to_string(v).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (json,))
}

fn doc_to_text(doc: &toml::Value) -> Result<String, String> {
    toml::to_string(doc).map_err(|e| format!("cannot write the scenario as TOML: {e}"))
}

/// A scenario: the TOML document and its validated form.
#[pyclass(module = "aqmlab._native", frozen)]
struct NativeScenario {
    doc: toml::Value,
    file: String,
    sc: Scenario,
    /// Loaded from the file `file` (not from text or a dict).
    from_path: bool,
    /// The changes made since it was loaded, as `--set` would write them
    /// (`path=value`, the value as inline TOML), in order.
    overrides: Vec<String>,
}

impl NativeScenario {
    fn from_doc(py: Python<'_>, mut doc: toml::Value, file: String) -> PyResult<Self> {
        // file paths absolute, as `Scenario::from_toml` takes them (from the
        // file's folder, or the working directory)
        let folder = std::path::Path::new(&file).parent().filter(|d| d.is_dir());
        if let Some(b) = aqmlab::scenario::files::base_folder(folder) {
            aqmlab::scenario::files::pin_paths(&mut doc, &b);
        }
        let text = doc_to_text(&doc).map_err(|m| {
            raise_scenario_error(py, format!("{file}: {m}"), None, Some(file.clone()), m)
        })?;
        let sc = Scenario::from_toml(&text, &file).map_err(|e| scenario_error(py, &e))?;
        Ok(NativeScenario {
            doc,
            file,
            sc,
            from_path: false,
            overrides: Vec::new(),
        })
    }

    fn parse(
        py: Python<'_>,
        text: &str,
        file: String,
        supplied: Option<&aqmlab::scenario::files::Supplied>,
    ) -> PyResult<Self> {
        // Validate first so that syntax errors read as the CLI's.
        let sc = Scenario::from_toml_supplied(text, &file, &[], supplied)
            .map_err(|e| scenario_error(py, &e))?;
        // the document with its file paths absolute (`scenario::document`)
        let doc =
            aqmlab::scenario::document(text, &file, &[]).map_err(|e| scenario_error(py, &e))?;
        Ok(NativeScenario {
            doc,
            file,
            sc,
            from_path: false,
            overrides: Vec::new(),
        })
    }

    /// A key path past the bound (`scenario::key_path_parts`) is refused
    /// before its value is converted, whatever the value.
    fn check_path(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        aqmlab::scenario::key_path_parts(path)
            .map(|_| ())
            .map_err(|m| {
                let e = ScenarioError::invalid(&self.file, path.to_string(), m);
                scenario_error(py, &e)
            })
    }

    /// The document with `(path, value)` pairs set, validated once at the end.
    fn with_values(&self, py: Python<'_>, pairs: Vec<(String, toml::Value)>) -> PyResult<Self> {
        let mut doc = self.doc.clone();
        let mut overrides = self.overrides.clone();
        for (path, value) in pairs {
            overrides.push(format!("{path}={value}"));
            set_path(&mut doc, &path, value).map_err(|m| {
                let e = ScenarioError::invalid(&self.file, path.clone(), m);
                scenario_error(py, &e)
            })?;
        }
        // a file path set here is relative to the working directory, as a
        // `--set` one is (the document's own paths are absolute already)
        if let Some(b) = aqmlab::scenario::files::base_folder(None) {
            aqmlab::scenario::files::pin_paths(&mut doc, &b);
        }
        let mut me = Self::from_doc(py, doc, self.file.clone())?;
        me.from_path = self.from_path;
        me.overrides = overrides;
        Ok(me)
    }

    /// The effective scenario's TOML for `seed` and its provenance record.
    fn provenance_for(
        &self,
        seed: u64,
        command_line: Vec<String>,
        call: Option<String>,
    ) -> PyResult<(String, Provenance)> {
        let toml = output::effective_scenario_toml(&self.doc, seed)
            .map_err(|e| PyRuntimeError::new_err(format!("the effective scenario: {e}")))?;
        let prov = Provenance {
            aqmlab_version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: aqmlab_reproduce::GIT_COMMIT.to_string(),
            scenario_file: self.from_path.then(|| self.file.clone()),
            overrides: self.overrides.clone(),
            seed,
            scenario_sha256: output::sha256_hex(&toml),
            command_line,
            call,
            files: self.sc.inputs.clone(),
        };
        Ok((toml, prov))
    }
}

#[pymethods]
impl NativeScenario {
    /// Load and validate a scenario file.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let file = path.display().to_string();
        // the CLI's reader: a regular file of at most 4 MiB (a FIFO or
        // /dev/zero is refused at once, not read without end)
        let text = aqmlab::scenario::read_file(&path).map_err(|e| scenario_error(py, &e))?;
        let mut me = Self::parse(py, &text, file, None)?;
        me.from_path = true;
        Ok(me)
    }

    /// Parse and validate scenario text; `name` stands for the file in
    /// errors. `files` (path → (SHA-256, text)): the files the scenario
    /// names, sent with it (a sweep's runs on other machines), used instead
    /// of the disk's after their SHA-256 is checked.
    #[staticmethod]
    #[pyo3(signature = (text, name, files=None))]
    fn from_toml(
        py: Python<'_>,
        text: &str,
        name: String,
        files: Option<aqmlab::scenario::files::Supplied>,
    ) -> PyResult<Self> {
        Self::parse(py, text, name, files.as_ref())
    }

    /// The files the scenario read: `[(key, path, sha256, text)]`.
    fn input_files(&self) -> Vec<(String, String, String, String)> {
        self.sc
            .inputs
            .iter()
            .map(|f| {
                (
                    f.key.clone(),
                    f.path.clone(),
                    f.sha256.clone(),
                    f.text.to_string(),
                )
            })
            .collect()
    }

    /// Build from nested dicts and lists, as the TOML file would read.
    #[staticmethod]
    fn from_dict(py: Python<'_>, d: &Bound<'_, PyAny>, name: String) -> PyResult<Self> {
        if !d.is_instance_of::<PyDict>() {
            return Err(PyTypeError::new_err(format!(
                "Scenario.from_dict needs a dict, got {}",
                d.get_type().name()?
            )));
        }
        let doc = to_toml(d, "").map_err(|e| conversion_error(py, &name, e))?;
        Self::from_doc(py, doc, name)
    }

    /// A copy with `value` at `path` (the `--set` path syntax), validated.
    fn set(&self, py: Python<'_>, path: String, value: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.check_path(py, &path)?;
        let v = to_toml(value, &path).map_err(|e| conversion_error(py, &self.file, e))?;
        self.with_values(py, vec![(path, v)])
    }

    /// A copy with every `(path, value)` pair set, validated once at the end
    /// (for values that must change together, like `min_th` and `max_th`).
    fn set_many(&self, py: Python<'_>, pairs: Vec<(String, Bound<'_, PyAny>)>) -> PyResult<Self> {
        let mut v = Vec::with_capacity(pairs.len());
        for (p, x) in &pairs {
            self.check_path(py, p)?;
            let x = to_toml(x, p).map_err(|e| conversion_error(py, &self.file, e))?;
            v.push((p.clone(), x));
        }
        self.with_values(py, v)
    }

    /// The document as TOML text (comments and key order of a file are not kept).
    fn to_toml(&self, py: Python<'_>) -> PyResult<String> {
        doc_to_text(&self.doc)
            .map_err(|m| raise_scenario_error(py, m.clone(), None, Some(self.file.clone()), m))
    }

    /// The document as nested dicts and lists.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        toml_to_py(py, &self.doc)
    }

    /// The value at a dotted path of the document (`None` when absent).
    fn get<'py>(&self, py: Python<'py>, path: &str) -> PyResult<Bound<'py, PyAny>> {
        aqmlab::scenario::key_path_bound(path.trim())
            .map_err(|m| scenario_error(py, &ScenarioError::invalid(&self.file, path, m)))?;
        let mut cur = &self.doc;
        for seg in path.split('.') {
            let next = match cur {
                toml::Value::Table(t) => t.get(seg),
                toml::Value::Array(a) => match seg.parse::<usize>() {
                    Ok(i) => a.get(i),
                    Err(_) => a.iter().find(|e| {
                        let f = |k: &str| e.get(k).and_then(|v| v.as_str());
                        f("name") == Some(seg)
                            || f("group") == Some(seg)
                            || (f("name").is_none()
                                && f("a")
                                    .zip(f("b"))
                                    .map(|(a, b)| format!("{a}-{b}"))
                                    .as_deref()
                                    == Some(seg))
                    }),
                },
                _ => None,
            };
            match next {
                Some(n) => cur = n,
                None => return Ok(py.None().into_bound(py)),
            }
        }
        toml_to_py(py, cur)
    }

    #[getter]
    fn name(&self) -> String {
        self.sc.name.clone()
    }

    /// Loaded from a file (`Scenario.from_file`)?
    #[getter]
    fn loaded_from_file(&self) -> bool {
        self.from_path
    }

    /// The changes since loading, as `path=value` (the `--set` syntax).
    #[getter]
    fn overrides(&self) -> Vec<String> {
        self.overrides.clone()
    }

    /// `(scenario.toml, provenance.json)` of a run with `seed`: the
    /// effective scenario and its provenance record (the interpreter's
    /// `command_line`, the Python `call`).
    #[pyo3(signature = (seed, command_line, call=None))]
    fn provenance(
        &self,
        seed: u64,
        command_line: Vec<String>,
        call: Option<String>,
    ) -> PyResult<(String, String)> {
        let (toml, prov) = self.provenance_for(seed, command_line, call)?;
        Ok((toml, prov_json(&prov)?))
    }

    #[getter]
    fn file(&self) -> String {
        self.file.clone()
    }

    #[getter]
    fn seed(&self) -> u64 {
        self.sc.seed
    }

    #[getter]
    fn duration_s(&self) -> f64 {
        self.sc.duration.secs()
    }

    /// The `[sweep]` table: `(seeds, link, [(key, [label], [value])])`, or
    /// None when the scenario has none.
    #[allow(clippy::type_complexity)]
    fn sweep_spec<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<
        Option<(
            u64,
            Option<String>,
            Vec<(String, Vec<String>, Bound<'py, PyAny>)>,
        )>,
    > {
        let Some(sw) = &self.sc.sweep else {
            return Ok(None);
        };
        let mut axes = Vec::new();
        for ax in &sw.vary {
            let labels = match &ax.labels {
                Some(l) => l.clone(),
                None => ax.values.iter().map(aqmlab::scenario::axis_value).collect(),
            };
            let values = toml_to_py(py, &toml::Value::Array(ax.values.clone()))?;
            axes.push((ax.key.clone(), labels, values));
        }
        Ok(Some((sw.seeds, sw.link.clone(), axes)))
    }

    /// The scenario's warnings (`aqmlab::scenario::warnings`) as (cause,
    /// key, message): a valid configuration that does not do what its
    /// names say.
    fn warnings(&self, py: Python<'_>) -> Vec<(String, String, String)> {
        let sc = &self.sc;
        py.detach(|| sc.warnings())
            .into_iter()
            .map(|w| (w.cause, w.key, w.message))
            .collect()
    }

    /// Run with `seed` (default: the scenario's), releasing the GIL. The
    /// provenance its files get records `command_line` and `call`. With
    /// `threads` > 1 the run is a parallel simulation (byte-identical).
    #[pyo3(signature = (seed=None, command_line=Vec::new(), call=None, threads=1))]
    fn run(
        &self,
        py: Python<'_>,
        seed: Option<u64>,
        command_line: Vec<String>,
        call: Option<String>,
        threads: usize,
    ) -> PyResult<RunOutput> {
        let seed = seed.unwrap_or(self.sc.seed);
        let (toml, prov) = self.provenance_for(seed, command_line, call)?;
        let sc = &self.sc;
        let r = py.detach(|| Simulation::with_threads(sc, seed, threads.max(1)).run());
        if !r.conservation.holds() {
            return Err(PyRuntimeError::new_err(format!(
                "internal error: packet conservation violated: {:?}",
                r.conservation
            )));
        }
        Ok(RunOutput {
            r,
            seed,
            toml,
            prov,
        })
    }

    /// Run with `seed` (default: the scenario's) and write every file
    /// `aqmlab run --out dir` writes into `dir` (pcap traces included, which
    /// are recorded while the run goes), renamed into place together; GIL
    /// released.
    #[pyo3(signature = (dir, seed=None, command_line=Vec::new(), call=None, threads=1))]
    fn run_into(
        &self,
        py: Python<'_>,
        dir: std::path::PathBuf,
        seed: Option<u64>,
        command_line: Vec<String>,
        call: Option<String>,
        threads: usize,
    ) -> PyResult<RunOutput> {
        let seed = seed.unwrap_or(self.sc.seed);
        let (toml, prov) = self.provenance_for(seed, command_line, call)?;
        let sc = &self.sc;
        let (r, _) = py
            .detach(|| output::run_into(sc, seed, &dir, &sc.name, &toml, &prov, threads.max(1)))
            .map_err(|e| PyRuntimeError::new_err(format!("{}: {e}", dir.display())))?;
        Ok(RunOutput {
            r,
            seed,
            toml,
            prov,
        })
    }

    /// Pickle as (TOML text, file name).
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (String, String))> {
        let me = slf.get();
        let ctor = py.get_type::<NativeScenario>().getattr("from_toml")?;
        Ok((ctor, (me.to_toml(py)?, me.file.clone())))
    }
}

fn prov_json(p: &Provenance) -> PyResult<String> {
    let mut j =
        serde_json::to_string_pretty(p).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    j.push('\n');
    Ok(j)
}

/// A finished run.
#[pyclass(module = "aqmlab._native", frozen)]
struct RunOutput {
    r: RunResult,
    seed: u64,
    /// The effective scenario (`scenario.toml`) and its provenance.
    toml: String,
    prov: Provenance,
}

impl RunOutput {
    /// Write every file `aqmlab run` writes (without pcap traces, which
    /// are recorded while a run goes: see `run_job`) into `dir`.
    fn write_all(&self, dir: &std::path::Path) -> std::io::Result<()> {
        let mut st = output::Staging::new(dir)?;
        output::stage_provenance(&mut st, &self.toml, &self.prov)?;
        output::stage_run(&self.r, &mut st)?;
        st.commit()?;
        Ok(())
    }
}

#[pymethods]
impl RunOutput {
    #[getter]
    fn seed(&self) -> u64 {
        self.seed
    }

    #[getter]
    fn events(&self) -> u64 {
        self.r.events
    }

    /// The run's warnings as (cause, key, message), as `summary.json`
    /// lists them.
    fn warnings(&self) -> Vec<(String, String, String)> {
        (self.r.warnings.iter())
            .map(|w| (w.cause.clone(), w.key.clone(), w.message.clone()))
            .collect()
    }

    /// Links whose queue time series was recorded (`links.monitor`).
    fn monitored_links(&self) -> Vec<String> {
        self.r.series.iter().map(|s| s.link.clone()).collect()
    }

    /// `summary.json` as text.
    fn summary_json(&self) -> PyResult<String> {
        serde_json::to_string(&output::summary::Summary::of(&self.r))
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }

    /// Every file `aqmlab run` writes, as {file name: bytes}, written by
    /// `aqmlab::output::write_run` into a temporary folder (GIL released).
    fn files<'py>(&self, py: Python<'py>) -> PyResult<BTreeMap<String, Bound<'py, PyBytes>>> {
        let files = py
            .detach(|| -> std::io::Result<Vec<(String, Vec<u8>)>> {
                let dir = tempfile::tempdir()?;
                self.write_all(dir.path())?;
                let mut out = Vec::new();
                for e in std::fs::read_dir(dir.path())? {
                    let e = e?;
                    if e.file_type()?.is_file() {
                        let name = e.file_name().to_string_lossy().into_owned();
                        out.push((name, std::fs::read(e.path())?));
                    }
                }
                Ok(out)
            })
            .map_err(|e| PyRuntimeError::new_err(format!("writing the run's files: {e}")))?;
        Ok(files
            .into_iter()
            .map(|(n, b)| (n, PyBytes::new(py, &b)))
            .collect())
    }

    /// The run's result tables (`flows`, `queues`, `links`, ...; those the
    /// run has).
    fn tables(&self) -> Vec<&'static str> {
        output::table_names(&self.r)
    }

    /// Table `name` as an Arrow C stream (a PyCapsule named
    /// `arrow_array_stream` holding one record batch of typed columns, the
    /// columns and types `output.format = "parquet"` writes), or None when
    /// the run has no such table. GIL released while it is built.
    fn table_arrow<'py>(
        &self,
        py: Python<'py>,
        name: &str,
    ) -> PyResult<Option<Bound<'py, PyCapsule>>> {
        let err = |e: &dyn std::fmt::Display| PyRuntimeError::new_err(format!("table {name}: {e}"));
        let Some(stream) = py
            .detach(|| -> Result<_, String> {
                let Some((cols, rows)) =
                    output::table_columns(&self.r, name).map_err(|e| e.to_string())?
                else {
                    return Ok(None);
                };
                arrow::stream(cols, rows)
                    .map(Some)
                    .map_err(|e| e.to_string())
            })
            .map_err(|e| err(&e))?
        else {
            return Ok(None);
        };
        // The consumer moves the stream out (leaving its `release` null);
        // an unconsumed one is released when the capsule is freed.
        PyCapsule::new(py, stream, Some(c"arrow_array_stream".to_owned())).map(Some)
    }

    /// Table `name` (`flows`, `queues`, ..., or `events`: the event log) as
    /// the CSV text `output.format = "csv"` writes, whatever the run's
    /// format, or None when the run has no such table: what the package
    /// reads without pyarrow. GIL released while it is written.
    fn table_csv<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let bytes = py
            .detach(|| {
                if name == "events" {
                    output::event_log::csv_bytes(&self.r)
                } else {
                    output::table_csv(&self.r, name)
                }
            })
            .map_err(|e| PyRuntimeError::new_err(format!("table {name}: {e}")))?;
        Ok(bytes.map(|b| PyBytes::new(py, &b)))
    }

    /// Write the run's files into `dir`, as `aqmlab run --out dir` does
    /// (with `scenario.toml` and `provenance.json`).
    fn write(&self, py: Python<'_>, dir: std::path::PathBuf) -> PyResult<()> {
        py.detach(|| self.write_all(&dir))
            .map_err(|e| PyRuntimeError::new_err(format!("{}: {e}", dir.display())))
    }

    /// The run as a flent data file (gzipped JSON, `aqmlab run --flent`'s
    /// `run.flent.gz`); `ValueError` when the run has no per-flow
    /// throughput series.
    fn flent<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        match output::flent::encode(&self.r) {
            Some(b) => Ok(PyBytes::new(
                py,
                &b.map_err(|e| PyRuntimeError::new_err(e.to_string()))?,
            )),
            None => Err(PyValueError::new_err(output::flent::NEEDS_THROUGHPUT)),
        }
    }
}

/// One run of a sweep into its folder `dir`, skipped when `dir` already
/// holds a complete run of the same effective scenario and seed
/// ([`output::run_complete`]); otherwise run and written by
/// [`output::run_into`] (pcap traces, provenance, results, renamed into
/// place together), GIL released. Returns (`summary.json` as on disk, the
/// monitored links in `queues.csv`, whether it ran now): what the caller
/// tabulates comes from the files, so a resumed sweep gives what an
/// uninterrupted one gives.
// (the arguments are a sweep task's fields, as Python sends them)
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (scenario_toml, name, seed, dir, label, provenance, files=None))]
fn run_job(
    py: Python<'_>,
    scenario_toml: &str,
    name: String,
    seed: u64,
    dir: std::path::PathBuf,
    label: &str,
    provenance: &str,
    files: Option<aqmlab::scenario::files::Supplied>,
) -> PyResult<(String, Vec<String>, bool)> {
    let prov: Provenance = serde_json::from_str(provenance)
        .map_err(|e| PyRuntimeError::new_err(format!("provenance record: {e}")))?;
    let sc = Scenario::from_toml_supplied(scenario_toml, &name, &[], files.as_ref())
        .map_err(|e| scenario_error(py, &e))?;
    let err = |e: std::io::Error| PyRuntimeError::new_err(format!("{}: {e}", dir.display()));
    py.detach(|| -> std::io::Result<(String, Vec<String>, bool)> {
        let ran = !output::run_complete(&dir, &prov.scenario_sha256, seed, &prov.files);
        if ran {
            let toml = output::effective_scenario_toml(
                &toml::from_str(scenario_toml).map_err(std::io::Error::other)?,
                seed,
            )?;
            if output::sha256_hex(&toml) != prov.scenario_sha256 {
                return Err(std::io::Error::other(
                    "the provenance record is not of this scenario and seed",
                ));
            }
            output::run_into(&sc, seed, &dir, label, &toml, &prov, 1)?;
        }
        let p = dir.join("summary.json");
        let summary = std::fs::read_to_string(&p).map_err(|e| output::path_err(&p, e))?;
        let mut monitored: Vec<String> = Vec::new();
        let q = dir.join("queues.csv");
        let mut rd = csv::Reader::from_path(&q).map_err(|e| output::path_err(&q, e))?;
        let c = rd
            .headers()
            .map_err(|e| output::path_err(&q, e))?
            .iter()
            .position(|h| h == "link")
            .ok_or_else(|| output::path_err(&q, "no column `link`"))?;
        for rec in rd.records() {
            let rec = rec.map_err(|e| output::path_err(&q, e))?;
            let l = rec.get(c).unwrap_or_default();
            if !monitored.iter().any(|m| m == l) {
                monitored.push(l.to_string());
            }
        }
        Ok((summary, monitored, ran))
    })
    .map_err(err)
}

/// Run folders (`label/seed-n`) under `out` that are not in `keep`.
#[pyfunction]
fn stale_runs(out: std::path::PathBuf, keep: Vec<String>) -> Vec<String> {
    output::stale_runs(&out, &keep.into_iter().collect())
}

/// Delete the run folders `stale` (from `stale_runs`) under `out`.
#[pyfunction]
fn remove_stale_runs(out: std::path::PathBuf, stale: Vec<String>) -> PyResult<()> {
    output::remove_stale_runs(&out, &stale).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The sweep's result tables under `out` (its run folders `rels`) as one
/// Parquet dataset per table (`aqmlab::output::columnar::write_dataset`),
/// as `aqmlab sweep` writes them: under `format` "parquet" (none under
/// "csv"). Returns the tables written. GIL released.
#[pyfunction]
fn write_dataset(
    py: Python<'_>,
    out: std::path::PathBuf,
    rels: Vec<String>,
    format: &str,
) -> PyResult<Vec<String>> {
    // the names `output.format` takes, through its own deserializer
    let format: aqmlab::scenario::FileFormat =
        serde_json::from_value(serde_json::Value::String(format.into()))
            .map_err(|e| PyValueError::new_err(format!("format: {e}")))?;
    let rels: Vec<&str> = rels.iter().map(String::as_str).collect();
    py.detach(|| output::columnar::write_dataset(&out, &rels, format))
        .map(|t| t.into_iter().map(String::from).collect())
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// A reproduction's table row: (table, row, column, unit, paper, aqmlab_mean,
/// aqmlab_sd, n).
type ReproRow = (
    String,
    String,
    String,
    String,
    Option<f64>,
    f64,
    Option<f64>,
    u64,
);

/// `aqmlab reproduce PAPER` through the reproductions' crate
/// (`aqmlab_reproduce::reproduce`), GIL released; returns the
/// long-format rows of `tables.csv`. Bad options raise ValueError with the
/// command's message.
#[pyfunction]
#[pyo3(signature = (paper, seeds=None, duration=None, load=None, out=None))]
fn reproduce(
    py: Python<'_>,
    paper: &str,
    seeds: Option<u64>,
    duration: Option<&str>,
    load: Option<f64>,
    out: Option<std::path::PathBuf>,
) -> PyResult<Vec<ReproRow>> {
    use aqmlab_reproduce::{self as rp, Error, Opts};
    let err = |e: Error| match e {
        Error::Input(m) => pyo3::exceptions::PyValueError::new_err(m),
        Error::Internal(m) => PyRuntimeError::new_err(format!("internal error: {m}")),
    };
    let p = rp::papers::find(paper).map_err(err)?;
    let opts = Opts {
        seeds: seeds.unwrap_or(p.default_seeds),
        duration_s: duration.map(rp::parse_duration).transpose().map_err(err)?,
        load,
    };
    let rows = py
        .detach(|| rp::reproduce(paper, &opts, out.as_deref()))
        .map_err(err)?;
    Ok(rows
        .into_iter()
        .map(|r| {
            (
                r.table,
                r.row,
                r.column,
                r.unit,
                r.paper,
                r.aqmlab_mean,
                r.aqmlab_sd,
                r.n,
            )
        })
        .collect())
}

/// Jain's fairness index of `xs`, the one every report uses
/// (`aqmlab_reproduce::stats::jain`): 1 for an empty set or all zeros.
#[pyfunction]
fn jain(xs: Vec<f64>) -> f64 {
    aqmlab_reproduce::stats::jain(&xs)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeScenario>()?;
    m.add_class::<RunOutput>()?;
    m.add_function(wrap_pyfunction!(reproduce, m)?)?;
    m.add_function(wrap_pyfunction!(jain, m)?)?;
    m.add_function(wrap_pyfunction!(run_job, m)?)?;
    m.add_function(wrap_pyfunction!(stale_runs, m)?)?;
    m.add_function(wrap_pyfunction!(remove_stale_runs, m)?)?;
    m.add_function(wrap_pyfunction!(write_dataset, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
