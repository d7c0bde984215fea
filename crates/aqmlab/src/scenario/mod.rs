//! The scenario: what to simulate, as a TOML file or built in code.
//!
//! Loading goes: parse TOML → deserialize with key paths (`serde_path_to_error`)
//! → [`Scenario::validate`] (cross-references and ranges). Every error names
//! the file, the key path and what is allowed.

pub mod files;
pub mod generate;
pub mod import;
pub mod limits;
pub mod paths;
pub mod warnings;
pub use crate::units;

use crate::aqm::QueueSpec;
use crate::tcp::cc::CcConfig;
use crate::tcp::{TcpOptions, TcpParams};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use units::{Dur, Rate, Size};

/// A bad scenario: where, and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{file}: cannot read: {msg}")]
    Io { file: String, msg: String },
    #[error("{file}: invalid TOML: {msg}")]
    Syntax { file: String, msg: String },
    #[error("{file}: `{path}`: {msg}")]
    Invalid {
        file: String,
        path: String,
        msg: String,
    },
}

impl ScenarioError {
    /// A bad value at `path`; the path and the message are bounded
    /// ([`crate::echo::bound`]): no echo of input past 200 characters.
    pub fn invalid(file: &str, path: impl Into<String>, msg: impl Into<String>) -> Self {
        ScenarioError::Invalid {
            file: crate::echo::echo(file),
            path: crate::echo::echo(&path.into()),
            msg: crate::echo::bound(&msg.into()),
        }
    }

    /// A file that cannot be read (bounded as [`ScenarioError::invalid`]).
    pub fn io(file: &str, msg: impl Into<String>) -> Self {
        ScenarioError::Io {
            file: crate::echo::echo(file),
            msg: crate::echo::bound(&msg.into()),
        }
    }

    /// Text that is not TOML: the parser's message, whose excerpt of the
    /// offending line is replaced by one of at most 200 characters around
    /// the error when the line is longer.
    pub fn syntax(file: &str, text: &str, e: &toml::de::Error) -> Self {
        let full = e.to_string().trim_end().to_string();
        let msg = match e.span() {
            Some(sp)
                if full
                    .lines()
                    .any(|l| l.chars().count() > crate::echo::MAX_ECHO) =>
            {
                let start = sp.start.min(text.len());
                let before = &text[..floor_char(text, start)];
                let line = before.matches('\n').count() + 1;
                let line_start = before.rfind('\n').map_or(0, |i| i + 1);
                let column = text[line_start..floor_char(text, start)].chars().count() + 1;
                let line_end = text[line_start..]
                    .find('\n')
                    .map_or(text.len(), |i| line_start + i);
                let src = &text[line_start..line_end];
                // up to 95 characters either side of the error (the
                // quoted excerpt stays within 200)
                let skip = (column - 1).saturating_sub(95);
                let near: String = src.chars().skip(skip).take(190).collect();
                let more = src.chars().count().saturating_sub(skip + 190);
                format!(
                    "line {line}, column {column}: {}; the line there: `{}{}`{}",
                    e.message().trim_end(),
                    if skip > 0 { "…" } else { "" },
                    crate::echo::echo(&near),
                    if more > 0 {
                        format!(" ({skip} characters before, {more} after)")
                    } else {
                        String::new()
                    }
                )
            }
            _ => full,
        };
        ScenarioError::Syntax {
            file: crate::echo::echo(file),
            msg: crate::echo::bound(&msg),
        }
    }
}

/// toml's message for a string-only enum key given another type.
const UNIT_VARIANT: &str = "unit variant, expected string only";

/// The message for the string-only enum key at `path` (`links[1].queue.variant`)
/// of the scenario `text` given a value of another type: the allowed
/// names, read by deserializing the document again with a string no name
/// equals at that key (serde then lists the enum's names), and the value
/// given. None when the path cannot be followed.
fn enum_names(text: &str, file: &str, overrides: &[String], path: &str) -> Option<String> {
    let mut doc = document(text, file, overrides).ok()?;
    let mut cur = &mut doc;
    // `a[0].b` → a, 0, b
    for part in path.replace('[', ".").replace(']', "").split('.') {
        cur = match cur {
            toml::Value::Table(t) => t.get_mut(part)?,
            toml::Value::Array(a) => a.get_mut(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    let given = format!("{} {}", cur.type_str(), crate::echo::echo(&cur.to_string()));
    *cur = toml::Value::String("\u{1}".into());
    let e = serde_path_to_error::deserialize::<_, Scenario>(doc).err()?;
    let (_, msg) = crate::registry::split_nested(&e.into_inner().to_string());
    // toml appends "\nin `key`": the names are on the first line
    let msg = msg.lines().next().unwrap_or_default();
    // serde's "unknown variant `\u{1}`, expected one of `a`, `b`", or a
    // registry's reworded "unknown value `\\u{1}`; allowed: `a`, `b`"
    let at = msg.find("`\u{1}`").or_else(|| msg.find("`\\u{1}`"))?;
    let names: Vec<&str> = msg[at..].split('`').skip(3).step_by(2).collect();
    (!names.is_empty()).then(|| {
        format!(
            "expected one of {} (a string), got {given}",
            crate::echo::list(&names)
        )
    })
}

/// The largest char boundary of `s` at or below `i`.
fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A whole scenario file.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name, used in outputs.
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Simulated time.
    pub duration: Dur,
    /// Run seed (the CLI's `--seed` overrides it).
    #[serde(default = "default_seed")]
    pub seed: u64,
    #[serde(default)]
    pub nodes: NodesSpec,
    #[serde(default)]
    pub links: Vec<LinkSpec>,
    /// A generated topology (`scenario/generate.rs`), expanded into `nodes`
    /// and `links` when the scenario is loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<generate::TopologySpec>,
    /// Routing options.
    #[serde(default)]
    pub routing: RoutingSpec,
    /// TCP defaults for every flow.
    #[serde(default)]
    pub tcp: TcpOptions,
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    /// Workloads that open connections while the simulation runs.
    #[serde(default)]
    pub workloads: Vec<crate::traffic::WorkloadSpec>,
    #[serde(default)]
    pub output: OutputSpec,
    /// Changes during the run (`[[events]]`): a link's rate, delay or loss
    /// from a time on (`net/link_model.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventSpec>,
    /// Logical process of nodes in a parallel run (`"name-or-prefix*" =
    /// "process"`): nodes given one name share a process.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub lp: std::collections::BTreeMap<String, String>,
    /// Parameter sweep run by `aqmlab sweep` (ignored by `aqmlab run`).
    #[serde(default)]
    pub sweep: Option<SweepSpec>,
    /// The key that sizes the `[topology]` generator the nodes came from
    /// (`topology.hops`), for messages about what grows with it.
    #[serde(skip)]
    pub generated_by: Option<&'static str>,
    /// The files the scenario read (traces, CDFs), in the order first
    /// named, with their SHA-256: [`Scenario::load_files`].
    #[serde(skip)]
    pub inputs: Vec<files::InputFile>,
}

/// A parameter sweep: the cartesian product of the `vary` axes, each
/// combination run with seeds `1..=seeds`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// Seeds per combination (seeds 1..=N).
    #[serde(default = "one_u64")]
    pub seeds: u64,
    /// The link direction (`a->b`) whose queue the sweep tables and plots
    /// report; default: the monitored queue with the most packets enqueued.
    #[serde(default)]
    pub link: Option<String>,
    pub vary: Vec<VaryAxis>,
}

/// One sweep axis: a key path (as in `--set`) and the values it takes.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct VaryAxis {
    pub key: String,
    pub values: Vec<toml::Value>,
    /// Names of the values (default: a table's `kind`, or the value itself).
    #[serde(default)]
    pub labels: Option<Vec<String>>,
}

fn one_u64() -> u64 {
    1
}

/// One combination of a sweep.
#[derive(Clone, Debug)]
pub struct SweepPoint {
    /// `label1_label2…`, one label per axis; safe as a directory name.
    pub label: String,
    /// Its scenario, with `output.format = "csv"`: a sweep's runs write CSV.
    pub scenario: Scenario,
    /// The `output.format` the point asked for: the format of the sweep's
    /// dataset (`aqmlab sweep`: `parquet/<table>/` beside the runs).
    pub format: FileFormat,
}

/// A sweep value as its axis column shows it: a string itself, a table its
/// `kind`, anything else its TOML text (the CLI's `sweep.csv` and the Python
/// sweep's DataFrame).
pub fn axis_value(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Table(t) => match t.get("kind").and_then(|k| k.as_str()) {
            Some(k) => k.to_string(),
            None => v.to_string(),
        },
        other => other.to_string(),
    }
}

/// [`axis_value`] made safe as a directory name (run folders' labels).
fn value_label(v: &toml::Value) -> String {
    axis_value(v)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A sweep before its combinations are made: the scenario document and the
/// axes. Combination `k` is made on demand ([`SweepPlan::point`]), so a
/// sweep holds one scenario per worker, never one per combination.
#[derive(Clone, Debug)]
pub struct SweepPlan {
    /// The `[sweep]` table.
    pub spec: SweepSpec,
    /// The scenario document (overrides applied, file paths absolute)
    /// without its `[sweep]` table: a run's scenario does not carry the
    /// sweep's values (held once per combination, that was quadratic).
    doc: toml::Value,
    /// Per axis, its values' labels, safe as directory names.
    labels: Vec<Vec<String>>,
    file: String,
    n: usize,
    /// The largest file a combination's scenario reads (`--allow-large`).
    max_file_bytes: u64,
}

impl SweepPlan {
    /// The number of combinations (the axes' cartesian product).
    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Combination `k`'s index on every axis (the first axis fastest).
    fn indices(&self, mut k: usize) -> Vec<usize> {
        (self.spec.vary.iter())
            .map(|ax| {
                let j = k % ax.values.len();
                k /= ax.values.len();
                j
            })
            .collect()
    }

    /// Combination `k`'s label: `label1_label2…`, one label per axis.
    pub fn label(&self, k: usize) -> String {
        let ix = self.indices(k);
        (ix.iter().enumerate())
            .map(|(i, &j)| self.labels[i][j].as_str())
            .collect::<Vec<_>>()
            .join("_")
    }

    /// Combination `k`'s value on every axis as its column shows it: the
    /// axis' label where it gives them, else [`axis_value`].
    pub fn axis_cells(&self, k: usize) -> Vec<String> {
        let ix = self.indices(k);
        (self.spec.vary.iter().zip(ix))
            .map(|(ax, j)| match &ax.labels {
                Some(l) => l[j].clone(),
                None => axis_value(&ax.values[j]),
            })
            .collect()
    }

    /// Combination `k`'s scenario document: the sweep's with the axes'
    /// values set (and no `[sweep]` table).
    pub fn doc(&self, k: usize) -> Result<toml::Value, ScenarioError> {
        let mut d = self.doc.clone();
        for (i, (ax, j)) in self.spec.vary.iter().zip(self.indices(k)).enumerate() {
            set_path(&mut d, &ax.key, ax.values[j].clone()).map_err(|m| {
                ScenarioError::invalid(&self.file, format!("sweep.vary[{i}].key"), m)
            })?;
        }
        if let Some(t) = d.as_table_mut() {
            // an axis into `sweep.*` changes nothing a run reads
            t.remove("sweep");
        }
        Ok(d)
    }

    /// Combination `k`, validated, with `output.format = "csv"` (a sweep's
    /// runs write CSV tables; the format asked for is its dataset's).
    pub fn point(&self, k: usize) -> Result<SweepPoint, ScenarioError> {
        let label = self.label(k);
        let d = self.doc(k)?;
        let text = toml::to_string(&d)
            .map_err(|e| ScenarioError::invalid(&self.file, "sweep", e.to_string()))?;
        let mut sc = Scenario::from_toml_limit(
            &text,
            &format!("{} [sweep point {label}]", self.file),
            &[],
            None,
            self.max_file_bytes,
        )?;
        let format = std::mem::replace(&mut sc.output.format, FileFormat::Csv);
        Ok(SweepPoint {
            label,
            scenario: sc,
            format,
        })
    }
}

impl Scenario {
    /// Read the `[sweep]` of a scenario text and check its axes, without
    /// making any combination: `overrides` (`--set`) apply to every
    /// combination first. At most [`MAX_SWEEP_POINTS`] combinations.
    pub fn sweep_plan(
        text: &str,
        file: &str,
        overrides: &[String],
    ) -> Result<SweepPlan, ScenarioError> {
        Self::sweep_plan_limit(text, file, overrides, MAX_FILE_BYTES)
    }

    /// [`Scenario::sweep_plan`] reading the files the scenario names up to
    /// `max_file_bytes` each (see [`Scenario::from_toml_limit`]), for the
    /// combinations too.
    pub fn sweep_plan_limit(
        text: &str,
        file: &str,
        overrides: &[String],
        max_file_bytes: u64,
    ) -> Result<SweepPlan, ScenarioError> {
        let base = Scenario::from_toml_limit(text, file, overrides, None, max_file_bytes)?;
        let Some(sw) = base.sweep else {
            return Err(ScenarioError::invalid(
                file,
                "sweep",
                "the file has no [sweep] table; add one with at least one [[sweep.vary]] axis",
            ));
        };
        if sw.vary.is_empty() {
            return Err(ScenarioError::invalid(
                file,
                "sweep.vary",
                "add at least one axis: [[sweep.vary]] key = \"...\", values = [...]",
            ));
        }
        if sw.seeds == 0 {
            return Err(ScenarioError::invalid(
                file,
                "sweep.seeds",
                "must be at least 1",
            ));
        }
        // bound the combinations before anything is made per value
        let n: usize = sw
            .vary
            .iter()
            .try_fold(1usize, |n, a| n.checked_mul(a.values.len().max(1)))
            .filter(|&n| n <= MAX_SWEEP_POINTS)
            .ok_or_else(|| {
                ScenarioError::invalid(
                    file,
                    "sweep.vary",
                    format!(
                        "the axes have more than {MAX_SWEEP_POINTS} combinations ({}); use fewer values",
                        sw.vary
                            .iter()
                            .map(|a| a.values.len().to_string())
                            .collect::<Vec<_>>()
                            .join(" × ")
                    ),
                )
            })?;
        let mut labels: Vec<Vec<String>> = Vec::new();
        for (i, ax) in sw.vary.iter().enumerate() {
            // every axis's key is checked before any point is made
            key_path_parts(&ax.key)
                .map_err(|m| ScenarioError::invalid(file, format!("sweep.vary[{i}].key"), m))?;
            if ax.values.is_empty() {
                return Err(ScenarioError::invalid(
                    file,
                    format!("sweep.vary[{i}].values"),
                    "give at least one value",
                ));
            }
            let l: Vec<String> = match &ax.labels {
                Some(l) if l.len() != ax.values.len() => {
                    return Err(ScenarioError::invalid(
                        file,
                        format!("sweep.vary[{i}].labels"),
                        format!("has {} labels for {} values", l.len(), ax.values.len()),
                    ))
                }
                Some(l) => l
                    .iter()
                    .map(|x| value_label(&toml::Value::String(x.clone())))
                    .collect(),
                None => ax.values.iter().map(value_label).collect(),
            };
            let mut seen = std::collections::HashSet::new();
            if let Some(d) = l.iter().find(|x| !seen.insert(x.as_str())) {
                return Err(ScenarioError::invalid(
                    file,
                    format!("sweep.vary[{i}].labels"),
                    format!("two values are both labelled `{d}`; give `labels = [...]`"),
                ));
            }
            labels.push(l);
        }
        let mut doc = document(text, file, overrides)?;
        if let Some(t) = doc.as_table_mut() {
            t.remove("sweep");
        }
        Ok(SweepPlan {
            spec: sw,
            doc,
            labels,
            file: file.to_string(),
            n,
            max_file_bytes,
        })
    }

    /// Expand the `[sweep]` of a scenario text into all its combinations,
    /// each validated and held at once ([`Scenario::sweep_plan`] makes them
    /// one at a time). `overrides` (`--set`) apply to every combination
    /// first.
    pub fn sweep_from_toml(
        text: &str,
        file: &str,
        overrides: &[String],
    ) -> Result<Vec<SweepPoint>, ScenarioError> {
        let plan = Scenario::sweep_plan(text, file, overrides)?;
        let n = plan.len();
        let mut points: Vec<SweepPoint> = Vec::new();
        for k in 0..n {
            let p = plan.point(k)?;
            // every point is held at once: bound the nodes and links of all
            // of them from the first (a generated topology at its bound
            // times many values was tens of GB before any limit was read)
            if points.is_empty() && n > 1 {
                let sc = &p.scenario;
                let each = sc.nodes.hosts.len() + sc.nodes.routers.len() + sc.links.len();
                let all = each.saturating_mul(n);
                if all > MAX_SWEEP_ELEMENTS {
                    return Err(ScenarioError::invalid(
                        file,
                        "sweep.vary",
                        format!(
                            "{n} combinations of a scenario with {each} nodes and links would hold {all} in memory at once, above {MAX_SWEEP_ELEMENTS}; use fewer values or a smaller topology"
                        ),
                    ));
                }
            }
            points.push(p);
        }
        Ok(points)
    }
}

/// `[routing]`: how next hops are chosen (hop-count shortest paths).
#[derive(Clone, Debug, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RoutingSpec {
    /// Spread flows over equal-cost next hops by a per-flow hash
    /// (`net/routing.rs`); false: the first shortest path in link order.
    #[serde(default)]
    pub ecmp: bool,
}
/// File names under `scenarios/` that hold a reproduction's data (the
/// paper's numbers, its experiment matrix) rather than a scenario.
pub const REPRODUCTION_DATA_FILES: &[&str] = &["paper.toml", "matrix.toml"];

/// Most combinations a `[sweep]` may expand to.
pub const MAX_SWEEP_POINTS: usize = 100_000;
/// Most nodes and links all the points of one sweep may hold together
/// (about 0.7 KB each: under 1 GiB).
pub const MAX_SWEEP_ELEMENTS: usize = 1_000_000;

/// The key path an error about the `--set` override `o` names: the
/// override, or `--set` and the text when it has no `=` or nothing before it.
fn set_key(o: &str) -> String {
    match o.split_once('=') {
        Some((p, _)) if !p.trim().is_empty() => o.to_string(),
        // no `=`: the option as written (the text is no key path)
        _ => format!("--set {o}"),
    }
}

fn default_seed() -> u64 {
    1
}

#[derive(Clone, Debug, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct NodesSpec {
    /// End systems: run TCP, do not forward.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// Forwarding nodes.
    #[serde(default)]
    pub routers: Vec<String>,
}

/// A duplex link between nodes `a` and `b`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Name; default `"a-b"`. The two directions are reported as `a->b`
    /// and `b->a`.
    #[serde(default)]
    pub name: Option<String>,
    pub a: String,
    pub b: String,
    /// Rate of both directions (`rate_ba` overrides b→a). Required unless
    /// a trace drives the link (then its mean rate, `Trace::mean_rate_bps`,
    /// is what rate-reading disciplines are built with); unset is `Rate(0)`.
    #[serde(default = "unset_rate", skip_serializing_if = "is_unset_rate")]
    pub rate: Rate,
    #[serde(default)]
    pub rate_ba: Option<Rate>,
    /// One-way propagation delay.
    pub delay: Dur,
    /// Queue discipline of both egress ports (default DropTail, 1000 packets).
    #[serde(default)]
    pub queue: Option<QueueSpec>,
    /// Queue discipline of the a→b port (overrides `queue`).
    #[serde(default)]
    pub queue_ab: Option<QueueSpec>,
    /// Queue discipline of the b→a port (overrides `queue`).
    #[serde(default)]
    pub queue_ba: Option<QueueSpec>,
    /// Independent random loss probability on a→b.
    #[serde(default)]
    pub loss_ab: f64,
    /// Independent random loss probability on b→a.
    #[serde(default)]
    pub loss_ba: f64,
    /// Record queue time series for this link's ports (default: ports on
    /// routers are recorded, ports on hosts are not).
    #[serde(default)]
    pub monitor: Option<bool>,
    /// Edge classifier tagging packets short/long (RIO-PS) before the a→b
    /// queue sees them (`net::classifier`).
    #[serde(default)]
    pub classifier_ab: Option<crate::net::classifier::ClassifierSpec>,
    /// Edge classifier on the b→a port.
    #[serde(default)]
    pub classifier_ba: Option<crate::net::classifier::ClassifierSpec>,
    /// A Mahimahi packet-delivery trace driving both directions
    /// (`trace_ba` overrides b→a): a file path, relative to the scenario
    /// file's folder (see [`files`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// The trace of the b→a direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_ba: Option<String>,
    /// Play the traces once (Mahimahi `mm-link --once`): after its last
    /// line a direction delivers nothing more; false (the default): each
    /// trace repeats, shifted by its last timestamp.
    #[serde(default, skip_serializing_if = "is_false")]
    pub trace_once: bool,
    /// The traces as loaded when the scenario was (a→b, b→a):
    /// [`Scenario::load_files`].
    #[serde(skip)]
    pub traces: [Option<std::sync::Arc<crate::net::link_model::Trace>>; 2],
}

fn unset_rate() -> Rate {
    Rate(0)
}

fn is_unset_rate(r: &Rate) -> bool {
    r.0 == 0
}

/// One change during the run, at `at`, of one target:
/// - a link (`link`): from `at` on, the attributes given replace the ones
///   in force (keys as on `[[links]]`: `rate` for both directions,
///   `rate_ba` for b→a; `delay`; `loss_ab`, `loss_ba`), or the link goes
///   down (`down = true`) or comes back up (`up = true`);
/// - a flow group (`flow`): its flows stop sending new data and close
///   (`stop = true`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EventSpec {
    pub at: Dur,
    /// The link's name (`[[links]]` `name`, default `"a-b"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// A `[[flows]]` group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<String>,
    /// The link goes down: both directions lose what they hold, and the
    /// routes are recomputed without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down: Option<bool>,
    /// The link comes back up: the routes are recomputed with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up: Option<bool>,
    /// The group's flows stop sending new data and close with a FIN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<bool>,
    /// Queue parameters changed on both directions of the link, e.g.
    /// `{ target = "10ms" }` ([`crate::aqm::QueueDisc::set_param`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<toml::value::Table>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_ba: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_ab: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_ba: Option<f64>,
}

impl EventSpec {
    /// Whether the event changes a link's service (rate, delay or loss):
    /// such events make the link's schedule (`net/link_model.rs`).
    pub fn changes_service(&self) -> bool {
        self.rate.is_some()
            || self.rate_ba.is_some()
            || self.delay.is_some()
            || self.loss_ab.is_some()
            || self.loss_ba.is_some()
    }
}

impl LinkSpec {
    pub fn display_name(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| format!("{}-{}", self.a, self.b))
    }
}

/// A group of identical flows.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Group name (fairness is reported per group).
    pub group: String,
    pub src: String,
    pub dst: String,
    /// Number of identical flows in the group.
    #[serde(default = "one")]
    pub count: u32,
    /// Congestion control: a name (`"newreno"`) or a table with `kind`
    /// and parameters.
    #[serde(default)]
    pub cc: CcConfig,
    /// Start time of the group's flows.
    #[serde(default)]
    pub start: Dur,
    /// Each flow starts at `start + U[0, start_spread)` (from the group's
    /// random stream), to avoid artificial synchronisation.
    #[serde(default)]
    pub start_spread: Dur,
    /// Bytes to transfer; absent = bulk (always has data, like FTP/iperf).
    #[serde(default)]
    pub size: Option<Size>,
    /// Make the flows unresponsive constant-bit-rate sources (UDP-like)
    /// instead of TCP: `{ rate = "1Mbps", packet_size = 1000, ecn = false }`.
    #[serde(default, deserialize_with = "de_cbr")]
    pub cbr: Option<crate::traffic::CbrSpec>,
    /// TCP parameters overriding the scenario's `[tcp]` table.
    #[serde(default)]
    pub tcp: TcpOptions,
    /// Record each flow's congestion window over time (`cwnd.csv`).
    #[serde(default)]
    pub trace_cwnd: bool,
    /// The DSCP (RFC 2474, 0..=63) on the packets the group's senders send
    /// (not on ACKs); 0, the default, is CS0 (best effort).
    #[serde(default, skip_serializing_if = "is_zero_u8")]
    pub dscp: u8,
}

fn is_false(v: &bool) -> bool {
    !*v
}

fn is_zero_u8(v: &u8) -> bool {
    *v == 0
}

fn one() -> u32 {
    1
}

/// `cbr`, validated where it is parsed (its errors name `flows[i].cbr.<key>`).
fn de_cbr<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<crate::traffic::CbrSpec>, D::Error> {
    let v = toml::Value::deserialize(d)?;
    let table = match v {
        toml::Value::Table(t) => t,
        other => {
            return Err(serde::de::Error::custom(format!(
                "expected a table {{ rate = \"1Mbps\", packet_size = 1000, ecn = false }}, got {}",
                other.type_str()
            )))
        }
    };
    let nest = |(p, m): (String, String)| serde::de::Error::custom(crate::registry::nested(&p, &m));
    let c: crate::traffic::CbrSpec = crate::registry::parse_config(table).map_err(nest)?;
    c.validate().map_err(nest)?;
    Ok(Some(c))
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Sampling period of the queue time series.
    #[serde(default = "default_sample")]
    pub sample_interval: Dur,
    /// Sampling period of cwnd traces (default: `sample_interval`).
    #[serde(default)]
    pub cwnd_interval: Option<Dur>,
    /// Bin width of per-flow throughput time series (`throughput.csv`) for
    /// the flows of `[[flows]]`; absent = no series.
    #[serde(default)]
    pub throughput_bin: Option<Dur>,
    /// Links (duplex name, or one direction `a->b`) whose packets are
    /// written to libpcap files (`output::pcap`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pcap: Vec<String>,
    /// Bytes of each packet kept in the pcap files (headers: 128).
    #[serde(default = "default_snaplen")]
    pub pcap_snaplen: u32,
    /// Start of the measurement window: the results (`flows.csv`,
    /// `links.csv`, `queues.csv`, `summary.json`) count from this instant
    /// to the end of the run (see `Simulation::run_until`); absent = the
    /// whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<Dur>,
    /// Link directions (as `pcap`) whose ports log every packet event
    /// (`net/event_log.rs`): `events.csv` or `events.parquet`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<String>,
    /// Flow groups of `[[flows]]` the log keeps; empty = every flow.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log_flows: Vec<String>,
    /// Most events each logged port keeps (the rest are counted).
    #[serde(
        default = "default_log_max",
        skip_serializing_if = "is_default_log_max"
    )]
    pub log_max_events: u64,
    /// File format of the event log (default: `format`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_format: Option<FileFormat>,
    /// File format of the result tables (`flows`, `links`, `queues`, ...).
    #[serde(default, skip_serializing_if = "is_default_format")]
    pub format: FileFormat,
}

pub use crate::net::event_log::FileFormat;

fn is_default_format(f: &FileFormat) -> bool {
    *f == FileFormat::default()
}

/// Default and largest `output.log_max_events` (64 bytes each in memory).
pub const LOG_MAX_EVENTS: (u64, u64) = (5_000_000, 50_000_000);

fn default_log_max() -> u64 {
    LOG_MAX_EVENTS.0
}

fn is_default_log_max(n: &u64) -> bool {
    *n == LOG_MAX_EVENTS.0
}

/// The smallest and largest `output.pcap_snaplen`.
pub const SNAPLEN_RANGE: (u32, u32) = (54, 65535);

fn default_snaplen() -> u32 {
    128
}

fn default_sample() -> Dur {
    Dur(10_000_000)
}

impl Default for OutputSpec {
    fn default() -> Self {
        OutputSpec {
            sample_interval: default_sample(),
            cwnd_interval: None,
            throughput_bin: None,
            pcap: Vec::new(),
            pcap_snaplen: default_snaplen(),
            warmup: None,
            log: Vec::new(),
            log_flows: Vec::new(),
            log_max_events: default_log_max(),
            log_format: None,
            format: FileFormat::default(),
        }
    }
}

/// Longest name (scenario, node, link, flow group, workload), characters.
pub const MAX_NAME_CHARS: usize = 200;

/// Largest file a scenario reads by default, bytes (the repository's
/// largest is under 10 KB).
pub const MAX_FILE_BYTES: u64 = 4 << 20;

/// Largest file read under `--allow-large` (`aqmlab run/sweep`), bytes: a
/// generated scenario listing 10⁵ hosts, links and flows is about 21 MB;
/// parsing takes about 20 bytes of memory per byte of TOML.
pub const MAX_LARGE_FILE_BYTES: u64 = 1 << 30;

/// Read a scenario file: a regular file (not a FIFO, device or directory,
/// which could block or never end) of at most [`MAX_FILE_BYTES`], in UTF-8.
pub fn read_file(path: &Path) -> Result<String, ScenarioError> {
    read_file_limit(path, MAX_FILE_BYTES)
}

/// [`read_file`] with a size bound of `max_bytes`.
pub fn read_file_limit(path: &Path, max_bytes: u64) -> Result<String, ScenarioError> {
    read_text_limit(path, "a scenario file (TOML)", max_bytes)
        .map_err(|msg| ScenarioError::io(&path.display().to_string(), msg))
}

/// Read any file a scenario names (a scenario, a CDF of sizes) as a
/// scenario file is read: a regular file (a FIFO would block, a device
/// such as `/dev/zero` never end) of at most [`MAX_FILE_BYTES`], in UTF-8.
/// The error is the cause, without the path; `what` names what the file
/// should have been ("a scenario file (TOML)").
pub fn read_text(path: &Path, what: &str) -> Result<String, String> {
    read_text_limit(path, what, MAX_FILE_BYTES)
}

/// [`read_text`] with a size bound of `max_bytes`.
pub fn read_text_limit(path: &Path, what: &str, max_bytes: u64) -> Result<String, String> {
    use std::io::Read;
    // metadata first: opening a FIFO for reading blocks until a writer comes
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(format!(
            "not a regular file ({}); give {what}",
            if meta.is_dir() {
                "a directory"
            } else {
                "a FIFO, socket or device"
            }
        ));
    }
    let too_big = |n: String| {
        let lift = if max_bytes < MAX_LARGE_FILE_BYTES {
            format!(" (`--allow-large`: {MAX_LARGE_FILE_BYTES})")
        } else {
            String::new()
        };
        format!("the file has {n} bytes; a file a scenario reads may have at most {max_bytes} bytes{lift}")
    };
    if meta.len() > max_bytes {
        return Err(too_big(meta.len().to_string()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)
        .and_then(|f| f.take(max_bytes + 1).read_to_end(&mut bytes))
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_big(format!("more than {max_bytes}")));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

impl Scenario {
    /// Load and validate a scenario file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Scenario, ScenarioError> {
        Self::from_file_with(path, &[])
    }

    /// Load a scenario file, apply `key=value` overrides (see
    /// [`apply_override`]), then validate.
    pub fn from_file_with(
        path: impl AsRef<Path>,
        overrides: &[String],
    ) -> Result<Scenario, ScenarioError> {
        Self::from_file_limit(path, overrides, MAX_FILE_BYTES)
    }

    /// [`Scenario::from_file_with`] reading a file of at most `max_bytes`
    /// ([`MAX_LARGE_FILE_BYTES`] under `--allow-large`).
    pub fn from_file_limit(
        path: impl AsRef<Path>,
        overrides: &[String],
        max_bytes: u64,
    ) -> Result<Scenario, ScenarioError> {
        let file = path.as_ref().display().to_string();
        let text = read_file_limit(path.as_ref(), max_bytes)?;
        Self::from_toml_limit(&text, &file, overrides, None, max_bytes)
    }

    /// Parse and validate scenario text; `file` names it in errors.
    pub fn from_toml(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
        Self::from_toml_with(text, file, &[])
    }

    pub fn from_toml_with(
        text: &str,
        file: &str,
        overrides: &[String],
    ) -> Result<Scenario, ScenarioError> {
        Self::from_toml_supplied(text, file, overrides, None)
    }

    /// [`Scenario::from_toml_with`] taking the files in `supplied` (by
    /// path as the scenario names them, after [`files::pin_paths`]) instead
    /// of reading them: what a sweep worker on another machine does.
    pub fn from_toml_supplied(
        text: &str,
        file: &str,
        overrides: &[String],
        supplied: Option<&files::Supplied>,
    ) -> Result<Scenario, ScenarioError> {
        Self::from_toml_limit(text, file, overrides, supplied, MAX_FILE_BYTES)
    }

    /// [`Scenario::from_toml_supplied`] reading the files the scenario
    /// names (traces, CDFs, an imported topology) up to `max_file_bytes`
    /// each ([`MAX_LARGE_FILE_BYTES`] under `--allow-large`).
    pub fn from_toml_limit(
        text: &str,
        file: &str,
        overrides: &[String],
        supplied: Option<&files::Supplied>,
        max_file_bytes: u64,
    ) -> Result<Scenario, ScenarioError> {
        let value = document(text, file, overrides)?;
        let mut sc: Scenario = serde_path_to_error::deserialize(value).map_err(|e| {
            // A registry (queue, cc, workload) reports the key inside its
            // table in the message; join it to the outer path.
            let outer = e.path().to_string();
            let (inner, msg) = crate::registry::split_nested(&e.into_inner().to_string());
            let path = crate::registry::join(&outer, inner.as_deref().unwrap_or(""));
            let names =
                if msg.contains(UNIT_VARIANT) || msg.contains(crate::registry::ENUM_NOT_STRING) {
                    enum_names(text, file, overrides, &path)
                } else {
                    None
                };
            let (path, msg) = crate::registry::tidy(&path, &msg);
            let msg = names.unwrap_or(msg);
            ScenarioError::invalid(
                file,
                if path.is_empty() || path == "." {
                    "(top level)".into()
                } else {
                    path
                },
                msg,
            )
        })?;
        sc.check_unique_groups()
            .map_err(|(p, m)| ScenarioError::invalid(file, p, m))?;
        generate::expand(&mut sc, supplied, max_file_bytes)
            .map_err(|(p, m)| ScenarioError::invalid(file, p, m))?;
        sc.load_files(supplied, max_file_bytes)
            .map_err(|(p, m)| ScenarioError::invalid(file, p, m))?;
        sc.validate()
            .map_err(|(p, m)| ScenarioError::invalid(file, p, m))?;
        Ok(sc)
    }

    /// Each `[[flows]]` entry as written names its own group (the group
    /// names its random stream and its results). Checked before `prefix*`
    /// host patterns expand one entry into several of the same group.
    pub fn check_unique_groups(&self) -> Result<(), (String, String)> {
        // A map, not a scan of the earlier entries: generated scenarios
        // list 10⁵ groups.
        let mut first: std::collections::HashMap<&str, usize> = Default::default();
        for (i, f) in self.flows.iter().enumerate() {
            if let Some(&j) = first.get(f.group.as_str()) {
                return Err((
                    format!("flows[{i}].group"),
                    format!(
                        "group name `{}` is already used by flows[{j}]; each [[flows]] group needs its own name (it names the group's random stream and its results)",
                        cut(&f.group)
                    ),
                ));
            }
            first.insert(&f.group, i);
        }
        Ok(())
    }

    /// Resolved TCP parameters of flow group `i`.
    pub fn tcp_params(&self, i: usize) -> TcpParams {
        let mut p = TcpParams::default();
        p.apply(&self.tcp);
        p.apply(&self.flows[i].tcp);
        p.dscp = self.flows[i].dscp;
        p
    }

    /// Check cross-references and ranges. Returns (key path, message).
    pub fn validate(&self) -> Result<(), (String, String)> {
        self.validate_names()?;
        let names = self.validate_nodes()?;
        self.validate_output()?;
        self.validate_links(&names)?;
        self.validate_events()?;
        self.validate_queue_events()?;
        let mut global = TcpParams::default();
        global.apply(&self.tcp);
        global
            .validate()
            .map_err(|(k, m)| (format!("tcp.{k}"), m))?;
        if self.flows.is_empty() && self.workloads.is_empty() {
            return Err((
                "flows".into(),
                "declare at least one flow or workload".into(),
            ));
        }
        self.validate_workloads(&names)?;
        self.validate_flows(&names)?;
        self.validate_pcap()?;
        paths::check(self)?;
        self.validate_lp()?;
        Ok(())
    }

    /// Read the files the scenario names (the links' `trace`/`trace_ba`,
    /// a cdf workload's `sizes` file) through the bounded reader, or take
    /// them from `supplied`; a file named twice is read once. Parses each
    /// into the link's trace or the workload's distribution and records it
    /// in [`Scenario::inputs`]. The error names the key. Relative paths are
    /// taken from the working directory ([`document`] pins a file's).
    /// A file read may have at most `max_bytes` ([`MAX_FILE_BYTES`], or
    /// [`MAX_LARGE_FILE_BYTES`] under `--allow-large`).
    pub fn load_files(
        &mut self,
        supplied: Option<&files::Supplied>,
        max_bytes: u64,
    ) -> Result<(), (String, String)> {
        use crate::net::link_model::Trace;
        let mut rd = files::Reader {
            supplied,
            read: Default::default(),
            max_bytes,
        };
        let mut order: Vec<String> = Vec::new();
        let mut traces: HashMap<String, std::sync::Arc<Trace>> = HashMap::new();
        for (i, l) in self.links.iter_mut().enumerate() {
            let ba = l.trace_ba.as_ref().or(l.trace.as_ref()).cloned();
            let (ka, kb) = (
                "trace",
                if l.trace_ba.is_some() {
                    "trace_ba"
                } else {
                    "trace"
                },
            );
            for (d, (k, path)) in [(ka, l.trace.clone()), (kb, ba)].into_iter().enumerate() {
                let Some(path) = path else {
                    l.traces[d] = None;
                    continue;
                };
                if let Some(t) = traces.get(&path) {
                    l.traces[d] = Some(t.clone());
                    continue;
                }
                let key = format!("links[{i}].{k}");
                let what = "a Mahimahi trace file (one ms timestamp per line)";
                let t = rd
                    .get(&key, &path, what)
                    .and_then(|f| Trace::parse(&f.text).map_err(|m| format!("`{path}`: {m}")))
                    .map_err(|m| (key, m))?;
                let t = std::sync::Arc::new(t);
                order.push(path.clone());
                traces.insert(path, t.clone());
                l.traces[d] = Some(t);
            }
        }
        for (i, w) in self.workloads.iter_mut().enumerate() {
            let crate::traffic::WorkloadSpec::Cdf(c) = w else {
                continue;
            };
            if !c.names_file() {
                continue;
            }
            let key = format!("workloads[{i}].sizes");
            let path = c.sizes.clone();
            let what = crate::traffic::cdf::SIZES_ALLOWED;
            let cdf = rd
                .get(&key, &path, what)
                .map_err(|m| format!("{m}; give {what}"))
                .and_then(|f| {
                    crate::traffic::cdf::SizeCdf::parse(&f.text)
                        .map_err(|m| format!("`{path}`: {m}"))
                })
                .map_err(|m| (key, m))?;
            if !order.contains(&path) {
                order.push(path);
            }
            c.file = Some(std::sync::Arc::new(cdf));
        }
        // an imported topology's file ([`generate::expand`]) comes first
        self.inputs.retain(|f| f.key == "topology.file");
        (self.inputs).extend(order.iter().map(|p| (*rd.read[p]).clone()));
        Ok(())
    }

    /// The schedule of link direction `ab` of `links[li]` (a→b when `ab`):
    /// its attributes at 0, then one point per event naming it, in time
    /// order (events at one time apply in file order). `None`: the link
    /// direction is constant and has no trace.
    pub fn link_schedule(&self, li: usize, ab: bool) -> Option<Vec<crate::net::link_model::Point>> {
        use crate::net::link_model::Point;
        let l = &self.links[li];
        if self.events.is_empty() && l.traces[usize::from(!ab)].is_none() {
            return None;
        }
        let name = l.display_name();
        let mut evs: Vec<&EventSpec> = (self.events.iter())
            .filter(|e| e.link.as_deref() == Some(name.as_str()) && e.changes_service())
            .collect();
        if evs.is_empty() && l.traces[usize::from(!ab)].is_none() {
            return None;
        }
        evs.sort_by_key(|e| e.at.0);
        let rate = |r: Rate, rb: Option<Rate>| if ab { r.0 } else { rb.unwrap_or(r).0 };
        let mut pts = vec![Point {
            at: 0,
            rate_bps: rate(l.rate, l.rate_ba),
            delay: l.delay.0,
            loss: if ab { l.loss_ab } else { l.loss_ba },
        }];
        for e in evs {
            let mut p = *pts.last().expect("one point");
            p.at = e.at.0;
            if let Some(r) = e.rate {
                p.rate_bps = r.0;
            }
            if let (false, Some(r)) = (ab, e.rate_ba) {
                p.rate_bps = r.0;
            }
            if let Some(d) = e.delay {
                p.delay = d.0;
            }
            if let Some(x) = if ab { e.loss_ab } else { e.loss_ba } {
                p.loss = x;
            }
            match pts.last_mut() {
                Some(last) if last.at == p.at => *last = p,
                _ => pts.push(p),
            }
        }
        Some(pts)
    }

    /// The highest rate link direction `ab` of `links[li]` ever offers
    /// (over any interval of at least 1 ms for a trace link), bit/s.
    pub fn peak_rate(&self, li: usize, ab: bool) -> u64 {
        let l = &self.links[li];
        if let Some(t) = &l.traces[usize::from(!ab)] {
            return t.peak_rate_bps();
        }
        match self.link_schedule(li, ab) {
            Some(pts) => pts.iter().map(|p| p.rate_bps).max().unwrap_or(1),
            None if ab => l.rate.0,
            None => l.rate_ba.unwrap_or(l.rate).0,
        }
    }

    /// Whether any link changes during the run or follows a trace (such
    /// runs stay sequential).
    pub fn has_varying_links(&self) -> bool {
        !self.events.is_empty()
            || self
                .links
                .iter()
                .any(|l| l.trace.is_some() || l.trace_ba.is_some())
    }

    /// Whether `[[links]]` entry `li` goes down during the run (its
    /// directions keep their own pipes, and the simulation keeps what
    /// rebuilding the routes needs).
    pub fn link_may_go_down(&self, li: usize) -> bool {
        if self.events.is_empty() {
            return false;
        }
        let name = self.links[li].display_name();
        (self.events.iter()).any(|e| e.down == Some(true) && e.link.as_deref() == Some(&name))
    }

    /// `[[events]]`: a time inside the run, one target that exists (a link
    /// or a flow group), what it does given and allowed for that target,
    /// values in range, no rate change on a trace-driven link.
    fn validate_events(&self) -> Result<(), (String, String)> {
        if self.events.is_empty() {
            return Ok(()); // no link-name table to build
        }
        let names: HashMap<String, usize> = (self.links.iter().enumerate())
            .map(|(i, l)| (l.display_name(), i))
            .collect();
        for (i, e) in self.events.iter().enumerate() {
            let p = format!("events[{i}]");
            if e.at.0 >= self.duration.0 {
                return Err((
                    format!("{p}.at"),
                    format!(
                        "{} s is not inside the run; give a time before duration = {} s",
                        crate::engine::to_secs(e.at.0),
                        crate::engine::to_secs(self.duration.0)
                    ),
                ));
            }
            for (k, v) in [("down", e.down), ("up", e.up), ("stop", e.stop)] {
                if v == Some(false) {
                    return Err((
                        format!("{p}.{k}"),
                        format!("`{k} = false` does nothing; give `{k} = true` or leave it out"),
                    ));
                }
            }
            let link = match (&e.link, &e.flow) {
                (None, None) => {
                    return Err((
                        p,
                        "an event needs a target: link = \"NAME\" or flow = \"GROUP\"".into(),
                    ))
                }
                (Some(_), Some(_)) => {
                    return Err((
                        format!("{p}.flow"),
                        "an event has one target: give link or flow, not both".into(),
                    ))
                }
                (None, Some(g)) => {
                    self.validate_flow_event(&p, e, g)?;
                    continue;
                }
                (Some(l), None) => l,
            };
            if e.stop.is_some() {
                return Err((
                    format!("{p}.stop"),
                    "`stop` applies to a flow group (flow = \"GROUP\"), not to a link".into(),
                ));
            }
            let Some(&li) = names.get(link) else {
                let mut known: Vec<&str> = names.keys().map(|s| s.as_str()).collect();
                known.sort_unstable();
                return Err((
                    format!("{p}.link"),
                    crate::registry::unknown("link", link, &known, "links"),
                ));
            };
            let switch = e.down.is_some() || e.up.is_some();
            if e.down.is_some() && e.up.is_some() {
                return Err((
                    format!("{p}.up"),
                    "an event takes a link down or brings it up, not both".into(),
                ));
            }
            if switch && (e.changes_service() || e.queue.is_some()) {
                let k = if e.down.is_some() { "down" } else { "up" };
                return Err((
                    format!("{p}.{k}"),
                    "a down or up event changes nothing else; give rate, delay or loss in an event of its own".into(),
                ));
            }
            if !switch && !e.changes_service() && e.queue.is_none() {
                return Err((
                    p,
                    "an event changes something: give rate, rate_ba, delay, loss_ab, loss_ba, queue, down = true or up = true"
                        .into(),
                ));
            }
            let l = &self.links[li];
            for (k, v, tr) in [
                ("rate", e.rate, l.trace.is_some() || l.trace_ba.is_some()),
                (
                    "rate_ba",
                    e.rate_ba,
                    l.trace_ba.is_some() || l.trace.is_some(),
                ),
            ] {
                if v.is_some() && tr {
                    return Err((
                        format!("{p}.{k}"),
                        format!("link `{link}` is driven by a trace, which sets its rate; change its delay or loss instead"),
                    ));
                }
            }
            for (k, v) in [("loss_ab", e.loss_ab), ("loss_ba", e.loss_ba)] {
                if let Some(v) = v {
                    if !(0.0..1.0).contains(&v) {
                        return Err((
                            format!("{p}.{k}"),
                            format!("must be a probability in [0, 1), got {v}"),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// `[[events]]` `queue` tables: each link direction's discipline is
    /// built fresh and given the link's queue changes in the order they
    /// run, so a key it cannot change, or a value out of its range given
    /// the changes before it, is an error naming `events[i].queue.KEY`.
    fn validate_queue_events(&self) -> Result<(), (String, String)> {
        let mut order: Vec<(usize, &EventSpec)> = (self.events.iter().enumerate())
            .filter(|(_, e)| e.queue.is_some())
            .collect();
        if order.is_empty() {
            return Ok(());
        }
        order.sort_by_key(|(_, e)| e.at.0);
        for l in &self.links {
            let name = l.display_name();
            for spec in [
                l.queue_ab.as_ref().or(l.queue.as_ref()),
                l.queue_ba.as_ref().or(l.queue.as_ref()),
            ] {
                let spec = spec.cloned().unwrap_or_default();
                let mut rng = crate::engine::RngStream::new(0, 0);
                let mut d = spec.build(l.rate.0.max(1_000_000), l.delay.0, &mut rng);
                for (i, e) in order
                    .iter()
                    .filter(|(_, e)| e.link.as_deref() == Some(&name))
                {
                    for (k, v) in e.queue.iter().flatten() {
                        d.set_param(k, v)
                            .map_err(|m| (format!("events[{i}].queue.{k}"), m))?;
                    }
                }
            }
        }
        Ok(())
    }

    /// A flow-group event (`flow = "GROUP"`): the group exists among
    /// `[[flows]]`, the event stops it, and gives no link attribute.
    fn validate_flow_event(&self, p: &str, e: &EventSpec, g: &str) -> Result<(), (String, String)> {
        if !self.flows.iter().any(|f| f.group == g) {
            let mut known: Vec<&str> = self.flows.iter().map(|f| f.group.as_str()).collect();
            known.sort_unstable();
            known.dedup();
            return Err((
                format!("{p}.flow"),
                crate::registry::unknown("[[flows]] group", g, &known, "groups"),
            ));
        }
        let link_keys = [
            ("rate", e.rate.is_some()),
            ("rate_ba", e.rate_ba.is_some()),
            ("delay", e.delay.is_some()),
            ("loss_ab", e.loss_ab.is_some()),
            ("loss_ba", e.loss_ba.is_some()),
            ("down", e.down.is_some()),
            ("up", e.up.is_some()),
            ("queue", e.queue.is_some()),
        ];
        if let Some((k, _)) = link_keys.iter().find(|(_, set)| *set) {
            return Err((
                format!("{p}.{k}"),
                "a flow event takes `stop = true` only; link attributes go in an event with link = \"NAME\"".into(),
            ));
        }
        if e.stop.is_none() {
            return Err((
                p.to_string(),
                "a flow event stops its group: give stop = true".into(),
            ));
        }
        Ok(())
    }

    /// The link directions a name in `output.pcap` selects, as (the link's
    /// name, from, to): both directions of the link with that name, or the
    /// one direction `a->b`.
    pub fn link_directions(&self, name: &str) -> Vec<(String, &str, &str)> {
        let mut v = Vec::new();
        for l in &self.links {
            let n = l.display_name();
            for (a, b) in [(&l.a, &l.b), (&l.b, &l.a)] {
                if name == n || name == format!("{a}->{b}") {
                    v.push((n.clone(), a.as_str(), b.as_str()));
                }
            }
        }
        v
    }

    /// Check `output.pcap`, `output.pcap_snaplen` and the event log's keys.
    fn validate_pcap(&self) -> Result<(), (String, String)> {
        let named = (self.output.pcap.iter().enumerate()).map(|(i, n)| ("pcap", i, n));
        let logged = (self.output.log.iter().enumerate()).map(|(i, n)| ("log", i, n));
        for (key, i, name) in named.chain(logged) {
            if self.link_directions(name).is_empty() {
                let mut names: Vec<String> = self.links.iter().map(|l| l.display_name()).collect();
                names.sort();
                return Err((
                    format!("output.{key}[{i}]"),
                    format!(
                        "{}; or one direction `a->b`",
                        crate::registry::unknown("link", name, &names, "links")
                    ),
                ));
            }
        }
        let (lo, hi) = SNAPLEN_RANGE;
        let s = self.output.pcap_snaplen;
        if !(lo..=hi).contains(&s) {
            return Err((
                "output.pcap_snaplen".into(),
                format!("must be between {lo} and {hi} bytes, got {s}"),
            ));
        }
        for (i, g) in self.output.log_flows.iter().enumerate() {
            if !self.flows.iter().any(|f| &f.group == g) {
                let mut groups: Vec<&str> = self.flows.iter().map(|f| f.group.as_str()).collect();
                groups.sort();
                groups.dedup();
                return Err((
                    format!("output.log_flows[{i}]"),
                    crate::registry::unknown("[[flows]] group", g, &groups, "groups"),
                ));
            }
        }
        if !self.output.log_flows.is_empty() && self.output.log.is_empty() {
            return Err((
                "output.log_flows".into(),
                "selects flows for the event log, but `output.log` names no link to log".into(),
            ));
        }
        let n = self.output.log_max_events;
        if !(1..=LOG_MAX_EVENTS.1).contains(&n) {
            return Err((
                "output.log_max_events".into(),
                format!(
                    "must be between 1 and {} events per port, got {n}",
                    LOG_MAX_EVENTS.1
                ),
            ));
        }
        Ok(())
    }

    /// Every `[lp]` key must name a node (or be a pattern matching one).
    fn validate_lp(&self) -> Result<(), (String, String)> {
        let nodes = || self.nodes.hosts.iter().chain(&self.nodes.routers);
        for (k, v) in &self.lp {
            let hit = match k.strip_suffix('*') {
                Some(prefix) => nodes().any(|n| n.starts_with(prefix)),
                None => nodes().any(|n| n == k),
            };
            if !hit {
                return Err((
                    format!("lp.{k}"),
                    format!("`{k}` names no node (a node name or a prefix ending in `*`)"),
                ));
            }
            if v.is_empty() {
                return Err((format!("lp.{k}"), "a process name must not be empty".into()));
            }
        }
        Ok(())
    }

    /// Names written into the outputs (on every CSV row, in file names)
    /// are at most [`MAX_NAME_CHARS`] characters: a 100 kB scenario name
    /// turned a 2-second run into 40 MB of CSV.
    fn validate_names(&self) -> Result<(), (String, String)> {
        // the key path is formatted only for a name that is too long
        let check = |key: &dyn Fn() -> String, n: &str| {
            let c = n.chars().count();
            if c > MAX_NAME_CHARS {
                return Err((
                    key(),
                    format!("a name of {c} characters; names may have at most {MAX_NAME_CHARS}"),
                ));
            }
            Ok(())
        };
        check(&|| "name".into(), &self.name)?;
        for (k, v) in [
            ("hosts", &self.nodes.hosts),
            ("routers", &self.nodes.routers),
        ] {
            for (i, n) in v.iter().enumerate() {
                check(&|| format!("nodes.{k}[{i}]"), n)?;
            }
        }
        for (i, l) in self.links.iter().enumerate() {
            if let Some(n) = &l.name {
                check(&|| format!("links[{i}].name"), n)?;
            }
        }
        for (i, f) in self.flows.iter().enumerate() {
            check(&|| format!("flows[{i}].group"), &f.group)?;
        }
        for (i, w) in self.workloads.iter().enumerate() {
            check(&|| format!("workloads[{i}].name"), w.name())?;
        }
        Ok(())
    }

    /// Every node declared once, and at least one: node name → is a router.
    fn validate_nodes(&self) -> Result<Nodes<'_>, (String, String)> {
        let mut names: Nodes = Nodes::default(); // name -> is_router
        names.reserve(self.nodes.hosts.len() + self.nodes.routers.len());
        for (i, h) in self.nodes.hosts.iter().enumerate() {
            if names.insert(h.as_str(), false).is_some() {
                return Err((
                    format!("nodes.hosts[{i}]"),
                    format!("node `{h}` is declared twice"),
                ));
            }
        }
        for (i, r) in self.nodes.routers.iter().enumerate() {
            if names.insert(r.as_str(), true).is_some() {
                return Err((
                    format!("nodes.routers[{i}]"),
                    format!("node `{r}` is declared twice"),
                ));
            }
        }
        if names.is_empty() {
            return Err((
                "nodes".into(),
                "declare at least two nodes in `hosts`/`routers`".into(),
            ));
        }
        Ok(names)
    }

    /// The run length and the output intervals are positive.
    fn validate_output(&self) -> Result<(), (String, String)> {
        if self.duration.0 == 0 {
            return Err(("duration".into(), "must be positive".into()));
        }
        if self.output.sample_interval.0 == 0 {
            return Err(("output.sample_interval".into(), "must be positive".into()));
        }
        if self.output.cwnd_interval.is_some_and(|d| d.0 == 0) {
            return Err(("output.cwnd_interval".into(), "must be positive".into()));
        }
        if self.output.throughput_bin.is_some_and(|d| d.0 == 0) {
            return Err(("output.throughput_bin".into(), "must be positive".into()));
        }
        if let Some(w) = self.output.warmup {
            if w.0 >= self.duration.0 {
                return Err((
                    "output.warmup".into(),
                    format!(
                        "{} s is not shorter than `duration` ({} s): the measurement window would be empty; allowed: 0 s ≤ warmup < duration",
                        w.secs(),
                        self.duration.secs()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Links join two declared nodes, have distinct names and valid queues,
    /// classifiers and loss probabilities.
    fn validate_links(&self, names: &Nodes) -> Result<(), (String, String)> {
        let mut link_names = rustc_hash::FxHashMap::default();
        for (i, l) in self.links.iter().enumerate() {
            let p = format!("links[{i}]");
            if !names.contains_key(l.a.as_str()) {
                return Err((format!("{p}.a"), unknown_node(names, &l.a)));
            }
            if !names.contains_key(l.b.as_str()) {
                return Err((format!("{p}.b"), unknown_node(names, &l.b)));
            }
            if l.a == l.b {
                return Err((
                    format!("{p}.b"),
                    "a link must join two different nodes".into(),
                ));
            }
            if link_names.insert(l.display_name(), i).is_some() {
                return Err((
                    format!("{p}.name"),
                    format!("link name `{}` is used twice", l.display_name()),
                ));
            }
            for (k, q) in [
                ("queue", &l.queue),
                ("queue_ab", &l.queue_ab),
                ("queue_ba", &l.queue_ba),
            ] {
                if let Some(q) = q {
                    q.validate()
                        .map_err(|(key, m)| (format!("{p}.{k}.{key}"), m))?;
                }
            }
            for (k, c) in [
                ("classifier_ab", &l.classifier_ab),
                ("classifier_ba", &l.classifier_ba),
            ] {
                if let Some(c) = c {
                    c.validate()
                        .map_err(|(key, m)| (format!("{p}.{k}.{key}"), m))?;
                }
            }
            if l.rate.0 == 0 && l.trace.is_none() {
                return Err((
                    format!("{p}.rate"),
                    "required (a rate such as \"10Mbps\", or a `trace` file)".into(),
                ));
            }
            if l.trace_once && l.trace.is_none() && l.trace_ba.is_none() {
                return Err((
                    format!("{p}.trace_once"),
                    "true needs a `trace` (or `trace_ba`) file on this link: it plays the trace once".into(),
                ));
            }
            for (k, path, d) in [("trace", &l.trace, 0), ("trace_ba", &l.trace_ba, 1)] {
                if path.is_some() && l.traces[d].is_none() {
                    return Err((
                        format!("{p}.{k}"),
                        "the trace file was not loaded (call Scenario::load_files)".into(),
                    ));
                }
            }
            for (k, v) in [("loss_ab", l.loss_ab), ("loss_ba", l.loss_ba)] {
                if !(0.0..1.0).contains(&v) {
                    return Err((
                        format!("{p}.{k}"),
                        format!("must be a probability in [0, 1), got {v}"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Workloads: distinct names, hosts that exist, their own parameters and
    /// TCP options.
    fn validate_workloads(&self, names: &Nodes) -> Result<(), (String, String)> {
        let mut wl_names = std::collections::HashSet::new();
        for (i, w) in self.workloads.iter().enumerate() {
            let p = format!("workloads[{i}]");
            if !wl_names.insert(w.name()) {
                return Err((
                    format!("{p}.name"),
                    format!("workload name `{}` is used twice", w.name()),
                ));
            }
            for (k, n) in w.hosts() {
                check_host(names, || format!("{p}.{k}"), n, "workloads")?;
            }
            w.validate().map_err(|(k, m)| (format!("{p}.{k}"), m))?;
            if let crate::traffic::WorkloadSpec::Cdf(c) = w {
                if c.names_file() && c.file.is_none() {
                    return Err((
                        format!("{p}.sizes"),
                        "the CDF file was not loaded (call Scenario::load_files)".into(),
                    ));
                }
            }
            if let Some(o) = w.tcp_options() {
                let mut t = TcpParams::default();
                t.apply(&self.tcp);
                t.apply(o);
                t.validate().map_err(|(k, m)| (format!("{p}.tcp.{k}"), m))?;
                for (k, bytes) in w.largest_transfers(t.mss) {
                    check_segments(bytes, t.mss).map_err(|m| (format!("{p}.{k}"), m))?;
                }
            }
        }
        Ok(())
    }

    /// Flow groups: hosts that exist and differ, a count, TCP options, and a
    /// CBR source or a transfer size the segment counters can hold.
    fn validate_flows(&self, names: &Nodes) -> Result<(), (String, String)> {
        // fastest link leaving each node, for the bulk-flow segment bound
        // (one pass over the links, not one per flow: 10⁵ star flows)
        let mut out_rate: rustc_hash::FxHashMap<&str, u64> = Default::default();
        for (i, l) in self.links.iter().enumerate() {
            for (n, ab) in [(&l.a, true), (&l.b, false)] {
                let r = self.peak_rate(i, ab);
                let e = out_rate.entry(n.as_str()).or_insert(0);
                *e = (*e).max(r);
            }
        }
        for (i, f) in self.flows.iter().enumerate() {
            let p = format!("flows[{i}]");
            for (k, n) in [("src", &f.src), ("dst", &f.dst)] {
                check_host(names, || format!("{p}.{k}"), n, "flows")?;
            }
            if f.src == f.dst {
                return Err((format!("{p}.dst"), "src and dst must differ".into()));
            }
            if f.count == 0 {
                return Err((format!("{p}.count"), "must be at least 1".into()));
            }
            if f.dscp > 63 {
                return Err((
                    format!("{p}.dscp"),
                    format!("must be 0..=63 (a 6-bit DSCP, RFC 2474), got {}", f.dscp),
                ));
            }
            let tcp = self.tcp_params(i);
            tcp.validate()
                .map_err(|(k, m)| (format!("{p}.tcp.{k}"), m))?;
            // the controller as the profile completes it (CUBIC's variant)
            crate::tcp::profile::resolve_cc(&f.cc, tcp.profile)
                .validate()
                .map_err(|(k, m)| (format!("{p}.cc.{k}"), m))?;
            match &f.cbr {
                Some(c) => c.validate().map_err(|(k, m)| (format!("{p}.cbr.{k}"), m))?,
                None => match f.size {
                    Some(sz) => {
                        check_segments(sz.0, tcp.mss).map_err(|m| (format!("{p}.size"), m))?
                    }
                    None => self
                        .check_bulk_segments(&f.src, &tcp, &out_rate)
                        .map_err(|m| (format!("{p}.src"), m))?,
                },
            }
        }
        Ok(())
    }
}

/// Declared nodes: name → whether it is a router.
type Nodes<'a> = rustc_hash::FxHashMap<&'a str, bool>;

/// The message for a node name that is not declared.
fn unknown_node(names: &Nodes, n: &str) -> String {
    let mut v: Vec<&str> = names.keys().copied().collect();
    v.sort();
    crate::registry::unknown("node", n, &v, "declared nodes")
}

/// `n` (at `key`) must be a declared host: `what` runs between hosts.
fn check_host(
    names: &Nodes,
    key: impl FnOnce() -> String,
    n: &str,
    what: &str,
) -> Result<(), (String, String)> {
    match names.get(n) {
        None => Err((key(), unknown_node(names, n))),
        Some(true) => Err((
            key(),
            format!("`{n}` is a router; {what} run between hosts"),
        )),
        Some(false) => Ok(()),
    }
}

/// A name or value as echoed in a message: at most 100 characters.
pub(crate) fn cut(s: &str) -> String {
    match s.char_indices().nth(100) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Largest number of segments of a sized transfer: sequence numbers are
/// `u32` and `u32::MAX` marks a bulk sender.
pub const MAX_SEGMENTS: u64 = u32::MAX as u64 - 1;

/// A sized transfer of `bytes` must fit the `u32` segment counter.
fn check_segments(bytes: u64, mss: u32) -> Result<(), String> {
    let n = bytes.div_ceil(mss as u64);
    if n > MAX_SEGMENTS {
        return Err(format!(
            "{bytes} B is {n} segments of {mss} B; at most {MAX_SEGMENTS} segments per transfer (u32 sequence numbers): use a smaller size or a larger mss"
        ));
    }
    Ok(())
}

impl Scenario {
    /// A bulk flow from `src` must not be able to send more segments than
    /// its `u32` sequence numbers count within the run: at most `duration`
    /// × the fastest link leaving `src` / (mss + header) segments.
    fn check_bulk_segments(
        &self,
        src: &str,
        tcp: &TcpParams,
        out_rate: &rustc_hash::FxHashMap<&str, u64>,
    ) -> Result<(), String> {
        let rate = out_rate.get(src).copied().unwrap_or(0);
        let bits = (tcp.mss as u128 + tcp.header_bytes as u128) * 8;
        let most = self.duration.0 as u128 * rate as u128 / (bits * 1_000_000_000);
        if most > MAX_SEGMENTS as u128 {
            return Err(format!(
                "a bulk flow from `{}` at {rate} bps for {} s could send {most} segments of {} B, more than the {MAX_SEGMENTS} its 32-bit sequence numbers count; shorten `duration`, use a larger mss or give the flow a `size`",
                cut(src),
                self.duration.secs(),
                tcp.mss
            ));
        }
        Ok(())
    }
}

/// Apply one `key.path=value` override to a parsed TOML document.
///
/// Path segments are separated by `.`; a numeric segment indexes an array; a
/// non-numeric segment applied to an array of tables selects the element
/// whose `name` (links; an unnamed link is `a-b`) or `group` (flows) equals it. The value is parsed as
/// a TOML value (`0.05`, `true`, `"10Mbps"`); a bare word that does not parse
/// is taken as a string. Example: `links.bottleneck.queue.max_p=0.05`.
pub fn apply_override(doc: &mut toml::Value, spec: &str) -> Result<(), String> {
    let (path, raw) = spec
        .split_once('=')
        .ok_or_else(|| "an override is written key.path=value".to_string())?;
    if path.trim().is_empty() {
        return Err(
            "the key path before `=` is empty; an override is written key.path=value".into(),
        );
    }
    let value: toml::Value = match toml::from_str::<toml::Table>(&format!("v = {raw}")) {
        Ok(mut t) => t.remove("v").expect("v"),
        Err(_) => toml::Value::String(raw.trim().to_string()),
    };
    set_path(doc, path, value)
}

/// The scenario document of `text` (from `file`) with `overrides`
/// applied and its file paths pinned ([`files::pin_paths`]): a relative
/// path written in the file is taken from the file's folder (when `file`
/// names a file's path; else the working directory), one given by an
/// override from the working directory.
pub fn document(
    text: &str,
    file: &str,
    overrides: &[String],
) -> Result<toml::Value, ScenarioError> {
    let mut doc: toml::Value =
        toml::from_str(text).map_err(|e| ScenarioError::syntax(file, text, &e))?;
    // `file` names the scenario's file (a sweep point appends its label to
    // the name, which leaves the folder as it is)
    let folder = Path::new(file).parent().filter(|d| d.is_dir());
    if let Some(base) = files::base_folder(folder) {
        files::pin_paths(&mut doc, &base);
    }
    for o in overrides {
        apply_override(&mut doc, o).map_err(|m| ScenarioError::invalid(file, set_key(o), m))?;
    }
    if !overrides.is_empty() {
        // the paths still relative came from an override
        if let Some(base) = files::base_folder(None) {
            files::pin_paths(&mut doc, &base);
        }
    }
    Ok(doc)
}

/// Most parts of a key path (`--set`, `Scenario.set`, a sweep axis): the
/// deepest key of a scenario has 6 (`workloads.web.cc.params.x`).
pub const MAX_KEY_PATH_PARTS: usize = 32;
/// Most characters of a key path: two names at their limit and the keys
/// around them.
pub const MAX_KEY_PATH_CHARS: usize = 2 * MAX_NAME_CHARS + 100;

/// A key path within [`MAX_KEY_PATH_PARTS`] and [`MAX_KEY_PATH_CHARS`]
/// (the message says both limits).
pub fn key_path_bound(path: &str) -> Result<(), String> {
    let chars = path.chars().count();
    let parts = path.split('.').count();
    if parts > MAX_KEY_PATH_PARTS || chars > MAX_KEY_PATH_CHARS {
        return Err(format!(
            "the key path `{}` has {parts} parts and {chars} characters; a key path may have at most {MAX_KEY_PATH_PARTS} parts and {MAX_KEY_PATH_CHARS} characters",
            crate::echo::echo(path)
        ));
    }
    Ok(())
}

/// The parts of a key path (`links.bottleneck.rate`), checked: none empty,
/// at most [`MAX_KEY_PATH_PARTS`] of them and [`MAX_KEY_PATH_CHARS`]
/// characters in all. Every path a user gives goes through here before
/// anything is built from it (a path of 7 000 parts built 7 000 nested
/// tables, whose recursive drop overflowed a Python thread's stack).
pub fn key_path_parts(path: &str) -> Result<Vec<&str>, String> {
    let path = path.trim();
    key_path_bound(path)?;
    let segs: Vec<&str> = path.split('.').collect();
    if segs.iter().any(|s| s.is_empty()) {
        // `.99`, `a..b` or `` would set a key named "" (found by aqmlab-fuzz)
        return Err(format!(
            "the key path `{}` has an empty part; write key.path, e.g. links.bottleneck.rate",
            crate::echo::echo(path)
        ));
    }
    Ok(segs)
}

/// The arrays of tables a scenario has at its top level (`[[links]]`, …)
/// or in `[sweep]` (`[[sweep.vary]]`).
const TABLE_ARRAYS: &[&str] = &["links", "flows", "workloads", "events", "sweep.vary"];

/// The message for a key path whose prefix `at` names an array of tables
/// the document does not have (None: `at` is no such array). A generated
/// topology's links are made when the scenario loads, so no path reaches
/// them; an absent `[[events]]` has no entry to set.
fn absent_array(at: &[&str], generated: bool) -> Option<String> {
    let name = at.join(".");
    if !TABLE_ARRAYS.contains(&name.as_str()) {
        return None;
    }
    Some(if name == "links" && generated {
        "the links of a `[topology]` are generated when the scenario loads, so a key path cannot name one; set the generator's keys instead (`topology.bottleneck_rate`, `topology.rate`, `topology.queue`, …; see the topology reference)".into()
    } else {
        format!(
            "the scenario has no `[[{name}]]` entries, so a key path cannot name one; add a `[[{name}]]` entry to the file first"
        )
    })
}

/// Set the value at `path` (the path syntax of [`apply_override`]).
pub fn set_path(doc: &mut toml::Value, path: &str, value: toml::Value) -> Result<(), String> {
    let segs = key_path_parts(path)?;
    let generated = doc.get("topology").is_some();
    let mut cur = doc;
    for (i, seg) in segs.iter().enumerate() {
        let last = i + 1 == segs.len();
        cur = match cur {
            toml::Value::Table(t) => {
                if last {
                    t.insert(seg.to_string(), value);
                    return Ok(());
                }
                if !t.contains_key(*seg) {
                    // a path into an array of tables the file does not have
                    // would make a table where an array belongs
                    if let Some(m) = absent_array(&segs[..=i], generated) {
                        return Err(m);
                    }
                }
                t.entry(seg.to_string())
                    .or_insert_with(|| toml::Value::Table(Default::default()))
            }
            toml::Value::Array(a) => {
                let idx = match seg.parse::<usize>() {
                    Ok(n) if n < a.len() => n,
                    Ok(n) => {
                        return Err(format!(
                            "index {n} is out of range (array has {} elements)",
                            a.len()
                        ))
                    }
                    Err(_) => a
                        .iter()
                        .position(|e| {
                            let field = |k: &str| e.get(k).and_then(|v| v.as_str());
                            field("name") == Some(seg)
                                || field("group") == Some(seg)
                                || (field("name").is_none()
                                    && field("a")
                                        .zip(field("b"))
                                        .map(|(a, b)| format!("{a}-{b}"))
                                        .as_deref()
                                        == Some(seg))
                        })
                        .ok_or_else(|| {
                            let names: Vec<String> = a
                                .iter()
                                .filter_map(|e| {
                                    let field = |k: &str| e.get(k).and_then(|v| v.as_str());
                                    field("name")
                                        .or(field("group"))
                                        .map(str::to_string)
                                        .or_else(|| {
                                            field("a")
                                                .zip(field("b"))
                                                .map(|(a, b)| format!("{a}-{b}"))
                                        })
                                })
                                .collect();
                            format!(
                                "{}; or an index from 0 to {}",
                                crate::registry::unknown("element", seg, &names, "names"),
                                a.len().saturating_sub(1)
                            )
                        })?,
                };
                if last {
                    a[idx] = value;
                    return Ok(());
                }
                &mut a[idx]
            }
            _ => {
                return Err(format!(
                    "`{seg}` is inside a value that is not a table or array"
                ))
            }
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINI: &str = r#"
name = "mini"
duration = "1s"
[nodes]
hosts = ["h1", "h2"]
routers = ["r"]
[[links]]
a = "h1"
b = "r"
rate = "10Mbps"
delay = "1ms"
[[links]]
name = "bottleneck"
a = "r"
b = "h2"
rate = "1Mbps"
delay = "5ms"
queue_ab = { kind = "red", limit = 20, min_th = 5, max_th = 15 }
[[flows]]
group = "bulk"
src = "h1"
dst = "h2"
"#;

    fn err(text: &str) -> String {
        Scenario::from_toml(text, "t.toml").unwrap_err().to_string()
    }

    /// A flow group's `dscp`: 0..=63; a MaxNet source or a path through a
    /// classifier cannot carry one (one extension slot per packet).
    #[test]
    fn dscp_is_six_bits_and_needs_the_extension_slot() {
        let sc = Scenario::from_toml(&format!("{MINI}dscp = 46\n"), "t.toml").unwrap();
        assert_eq!((sc.flows[0].dscp, sc.tcp_params(0).dscp), (46, 46));
        let e = err(&format!("{MINI}dscp = 64\n"));
        assert!(e.contains("flows[0].dscp") && e.contains("0..=63"), "{e}");
        let e = err(&format!("{MINI}dscp = 300\n"));
        assert!(e.contains("flows[0].dscp"), "{e}");
        let e = err(&format!("{MINI}dscp = 8\ncc = \"maxnet\"\n"));
        assert!(e.contains("flows[0].dscp") && e.contains("MaxNet"), "{e}");
        let e = err(&(MINI.replace(
            "queue_ab = { kind = \"red\"",
            "classifier_ab = { threshold = 5 }\nqueue_ab = { kind = \"red\"",
        ) + "dscp = 8\n"));
        assert!(
            e.contains("flows[0].dscp") && e.contains("classifier"),
            "{e}"
        );
    }

    #[test]
    fn mini_loads_with_defaults() {
        let sc = Scenario::from_toml(MINI, "t.toml").unwrap();
        assert_eq!(sc.flows[0].count, 1);
        assert_eq!(sc.flows[0].cc, CcConfig::NewReno(Default::default()));
        assert_eq!(sc.links[1].rate.0, 1_000_000);
        assert_eq!(sc.tcp_params(0).mss, 1000);
    }

    #[test]
    fn overrides_select_by_name_and_index() {
        let sc = Scenario::from_toml_with(
            MINI,
            "t.toml",
            &[
                "links.bottleneck.queue_ab.max_p=0.05".into(),
                "links.h1-r.rate=\"2Mbps\"".into(),
                "flows.0.count=3".into(),
            ],
        )
        .unwrap();
        match sc.links[1].queue_ab.as_ref().unwrap() {
            QueueSpec::Red(c) => assert_eq!(c.max_p, 0.05),
            _ => panic!(),
        }
        assert_eq!(sc.links[0].rate.0, 2_000_000);
        assert_eq!(sc.flows[0].count, 3);
        let e =
            Scenario::from_toml_with(MINI, "t.toml", &["links.nope.rate=1".into()]).unwrap_err();
        assert!(e.to_string().contains("unknown element `nope`"), "{e}");
    }

    #[test]
    fn sweep_expands_the_cartesian_product_with_labels() {
        let text = format!(
            "{MINI}\n[sweep]\nseeds = 2\n[[sweep.vary]]\nkey = \"links.bottleneck.queue_ab\"\nvalues = [{{kind = \"droptail\", limit = 20}}, {{kind = \"codel\"}}]\n[[sweep.vary]]\nkey = \"flows.bulk.count\"\nvalues = [1, 4]\n"
        );
        let pts = Scenario::sweep_from_toml(&text, "s.toml", &[]).unwrap();
        let labels: Vec<&str> = pts.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["droptail_1", "codel_1", "droptail_4", "codel_4"]);
        assert_eq!(pts[3].scenario.flows[0].count, 4);
        assert_eq!(
            pts[3].scenario.links[1].queue_ab.as_ref().unwrap().kind(),
            "codel"
        );
        // a combination's scenario does not carry the sweep's values
        assert!(pts.iter().all(|p| p.scenario.sweep.is_none()));
        let plan = Scenario::sweep_plan(&text, "s.toml", &[]).unwrap();
        assert_eq!((plan.len(), plan.spec.seeds), (4, 2));
        assert_eq!(plan.label(2), "droptail_4");
        assert_eq!(plan.axis_cells(1), ["codel", "1"]);
        // a bad value names the sweep point
        let bad = text.replace(
            "{kind = \"codel\"}",
            "{kind = \"codel\", target = \"5 parsecs\"}",
        );
        let e = Scenario::sweep_from_toml(&bad, "s.toml", &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("sweep point codel_1") && e.contains("unknown time unit"),
            "{e}"
        );
        let e = Scenario::sweep_from_toml(MINI, "s.toml", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("no [sweep] table"), "{e}");
    }

    #[test]
    fn values_out_of_range_are_rejected_with_key_and_bound() {
        // issue 13: each of these ran with a wrong figure or hung
        let e = err(&MINI.replace("delay = \"5ms\"", "delay = \"1e30s\""));
        assert!(e.contains("links[1].delay") && e.contains("at most"), "{e}");
        let e = err(&MINI.replace(
            "dst = \"h2\"",
            "dst = \"h2\"\nstart = \"18446744073709551615ns\"",
        ));
        assert!(e.contains("flows[0].start") && e.contains("at most"), "{e}");
        let e = err(&MINI.replace("dst = \"h2\"", "dst = \"h2\"\nsize = \"4294967296000B\""));
        assert!(
            e.contains("flows[0].size") && e.contains("4294967294 segments"),
            "{e}"
        );
        // the same size with a larger MSS fits
        Scenario::from_toml(
            &MINI.replace(
                "dst = \"h2\"",
                "dst = \"h2\"\nsize = \"4294967296000B\"\ntcp = { mss = 1460 }",
            ),
            "t.toml",
        )
        .unwrap();
        // a bulk flow that could outrun its 32-bit sequence numbers: h1's
        // 10 Mbit/s link for 10^6 s is 1.2e9 segments of 1040 B, fine; at
        // 100 Gbit/s for 1000 s, 1.2e10: refused
        Scenario::from_toml(
            &MINI.replace("duration = \"1s\"", "duration = \"1000000s\""),
            "t.toml",
        )
        .unwrap();
        let e = err(&MINI
            .replace("duration = \"1s\"", "duration = \"1000s\"")
            .replace("rate = \"10Mbps\"", "rate = \"100Gbps\""));
        assert!(
            e.contains("flows[0].src") && e.contains("32-bit sequence numbers"),
            "{e}"
        );
        let e = err(&format!("{MINI}[tcp]\nmss = 4294967295\n"));
        assert!(e.contains("tcp.mss") && e.contains("1..=65495"), "{e}");
        let e = err(&format!("{MINI}[tcp]\nheader_bytes = 4294967295\n"));
        assert!(
            e.contains("tcp.header_bytes") && e.contains("20..=120"),
            "{e}"
        );
        let e = err(&MINI.replace(
            "dst = \"h2\"",
            "dst = \"h2\"\ncbr = { rate = \"1Mbps\", packet_size = 0 }",
        ));
        assert!(e.contains("flows[0].cbr.packet_size"), "{e}");
        let e = err(&MINI.replace(
            "dst = \"h2\"",
            "dst = \"h2\"\ncbr = { rate = \"10Tbps\", packet_size = 1 }",
        ));
        assert!(
            e.contains("flows[0].cbr.rate") && e.contains("less than 1 ns apart"),
            "{e}"
        );
        let e = err(&format!(
            "{MINI}[[flows]]\ngroup = \"bulk\"\nsrc = \"h2\"\ndst = \"h1\"\n"
        ));
        assert!(
            e.contains("flows[1].group") && e.contains("already used by flows[0]"),
            "{e}"
        );
    }

    #[test]
    fn an_override_without_a_key_names_the_set_option() {
        // found by aqmlab-fuzz (issue 35): `--set ""` and `--set =x` named
        // an empty key or `(top level)`
        for o in ["", "=1", " =\"1e-30parsecs\""] {
            let e = Scenario::from_toml_with(MINI, "t.toml", &[o.to_string()]).unwrap_err();
            let m = e.to_string();
            assert!(m.contains(&format!("`--set {o}`:")), "{o:?}: {m}");
            assert!(m.contains("key.path=value"), "{m}");
            let e = Scenario::sweep_from_toml(MINI, "t.toml", &[o.to_string()]).unwrap_err();
            assert!(e.to_string().contains("`--set"), "{e}");
        }
    }

    #[test]
    fn a_sweep_is_bounded_by_the_nodes_and_links_of_all_its_points() {
        // found by aqmlab-fuzz (issue 35): every point of a sweep is a whole
        // scenario held at once; a generated topology at its bound times
        // many values took GBs before the resource limits were read
        let star = |hosts: u32, values: usize| {
            let vals: Vec<String> = (1..=values).map(|i| format!("\"{i}Mbps\"")).collect();
            format!(
                "name = \"s\"\nduration = \"1s\"\n[topology]\nkind = \"star\"\nhosts = {hosts}\naccess_rate = \"1Gbps\"\naccess_delay = \"1us\"\nbottleneck_rate = \"1Gbps\"\nbottleneck_delay = \"1us\"\n[[flows]]\ngroup = \"g\"\nsrc = \"h0\"\ndst = \"sink\"\n[sweep]\n[[sweep.vary]]\nkey = \"topology.bottleneck_rate\"\nvalues = [{}]\n",
                vals.join(", ")
            )
        };
        // 20 001 nodes + 20 001 links per point: 24 points pass, 25 do not
        let ok = Scenario::sweep_from_toml(&star(20_000, 24), "t.toml", &[]).unwrap();
        assert_eq!(ok.len(), 24);
        let e = Scenario::sweep_from_toml(&star(20_000, 25), "t.toml", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("`sweep.vary`:"), "{e}");
        assert!(e.contains("25 combinations"), "{e}");
        assert!(e.contains("above 1000000"), "{e}");
    }

    #[test]
    fn scenario_files_must_be_small_regular_files() {
        let e = Scenario::from_file("/dev/zero").unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let e = Scenario::from_file(std::env::temp_dir())
            .unwrap_err()
            .to_string();
        assert!(e.contains("a directory"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; MAX_FILE_BYTES as usize + 1]).unwrap();
        let e = Scenario::from_file(&big).unwrap_err().to_string();
        assert!(e.contains("at most 4194304 bytes"), "{e}");
        let ok = dir.path().join("ok.toml");
        std::fs::write(&ok, MINI).unwrap();
        Scenario::from_file(&ok).unwrap();
    }

    #[test]
    fn errors_name_file_key_and_allowed_values() {
        let e = err(&MINI.replace("kind = \"red\"", "kind = \"blue\""));
        assert!(
            e.contains("t.toml") && e.contains("links[1].queue_ab") && e.contains("droptail"),
            "{e}"
        );
        let e = err(&MINI.replace("min_th = 5", "min_th = 20"));
        assert!(
            e.contains("links[1].queue_ab.max_th") && e.contains("greater than min_th"),
            "{e}"
        );
        let e = err(&MINI.replace("\"1Mbps\"", "\"-1Mbps\""));
        assert!(e.contains("links[1].rate") && e.contains("positive"), "{e}");
        let e = err(&MINI.replace("dst = \"h2\"", "dst = \"h9\""));
        assert!(
            e.contains("flows[0].dst") && e.contains("unknown node `h9`"),
            "{e}"
        );
        let e = err(&MINI.replace("dst = \"h2\"", "dst = \"r\""));
        assert!(e.contains("is a router"), "{e}");
        let e = err(&MINI.replace("delay = \"5ms\"", "delay = \"5 parsecs\""));
        assert!(
            e.contains("links[1].delay") && e.contains("unknown time unit"),
            "{e}"
        );
        let e = err(&MINI.replace("group = \"bulk\"", "group = \"bulk\"\ncc = \"vegas9\""));
        assert!(e.contains("flows[0].cc") && e.contains("newreno"), "{e}");
        let e = err(&MINI.replace("min_th = 5", "min_thresh = 5"));
        assert!(e.contains("min_thresh"), "{e}");
        let e = err("name = [");
        assert!(e.contains("invalid TOML"), "{e}");
    }

    /// A key path (`--set`, `Scenario.set`, a sweep axis) is bounded in
    /// parts and characters before anything is built from it, the limit in
    /// a short message; 7 000 parts built 7 000 nested tables before.
    #[test]
    fn key_paths_are_bounded_with_the_limit_in_the_message() {
        let mut doc: toml::Value = toml::from_str(MINI).unwrap();
        for n in [MAX_KEY_PATH_PARTS + 1, 5_000, 7_000, 100_000] {
            let path = vec!["a"; n].join(".");
            let e = set_path(&mut doc, &path, toml::Value::Integer(1)).unwrap_err();
            assert!(
                e.contains(&format!("{n} parts"))
                    && e.contains("at most 32 parts and 500 characters")
                    && e.chars().count() < 400,
                "{e}"
            );
        }
        let long = format!("output.{}", "x".repeat(MAX_KEY_PATH_CHARS));
        let e = set_path(&mut doc, &long, toml::Value::Integer(1)).unwrap_err();
        assert!(
            e.contains("507 characters") && e.chars().count() < 400,
            "{e}"
        );
        // the document is unchanged by a refused path
        assert_eq!(doc, toml::from_str::<toml::Value>(MINI).unwrap());
        // at the bound the path itself is accepted (the key is then unknown)
        let at = format!("output.{}", vec!["a"; MAX_KEY_PATH_PARTS - 1].join("."));
        set_path(&mut doc, &at, toml::Value::Integer(1)).unwrap();
        // through --set and a sweep axis, with the key that carried it
        let deep = vec!["a"; 7_000].join(".");
        let e = Scenario::from_toml_with(MINI, "t.toml", &[format!("{deep}=1")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most 32 parts") && e.len() < 800, "{e}");
        let sweep = format!("{MINI}[sweep]\n[[sweep.vary]]\nkey = \"{deep}\"\nvalues = [1, 2]\n");
        let e = Scenario::sweep_from_toml(&sweep, "t.toml", &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`sweep.vary[0].key`") && e.contains("at most 32 parts") && e.len() < 800,
            "{e}"
        );
    }

    /// A path into an array of tables the file does not have is refused
    /// naming it: a generated topology's links, absent `[[events]]`.
    #[test]
    fn paths_into_absent_arrays_say_why() {
        let gen = r#"
name = "g"
duration = "1s"
[topology]
kind = "dumbbell"
hosts = 2
access_rate = "100Mbps"
access_delay = "1ms"
bottleneck_rate = "10Mbps"
bottleneck_delay = "10ms"
[[flows]]
group = "f"
src = "src0"
dst = "dst0"
"#;
        let e =
            Scenario::from_toml_with(gen, "t.toml", &["links.bottleneck.rate=\"5Mbps\"".into()])
                .unwrap_err()
                .to_string();
        assert!(
            e.contains("`links.bottleneck.rate=")
                && e.contains("generated")
                && e.contains("topology.bottleneck_rate")
                && !e.contains("invalid type"),
            "{e}"
        );
        let e = Scenario::from_toml_with(MINI, "t.toml", &["events.0.rate=\"5Mbps\"".into()])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no `[[events]]` entries") && !e.contains("map"),
            "{e}"
        );
        // an element named by a name none has: the names and the closest
        let e =
            Scenario::from_toml_with(MINI, "t.toml", &["links.botleneck.rate=\"5Mbps\"".into()])
                .unwrap_err()
                .to_string();
        assert!(
            e.contains("did you mean `bottleneck`?") && e.contains("h1-r"),
            "{e}"
        );
    }

    /// A string-only enum key given a number names the allowed names and
    /// the value, in words (toml's "unit variant, expected string only").
    #[test]
    fn enum_keys_given_a_number_list_their_names() {
        for (key, text, name) in [
            (
                "tcp.ecn_feedback",
                format!("{MINI}[tcp]\necn_feedback = 3\n"),
                "accecn",
            ),
            (
                "output.format",
                format!("{MINI}[output]\nformat = 3\n"),
                "parquet",
            ),
            (
                "links[1].queue_ab.variant",
                MINI.replace("max_th = 15", "max_th = 15, variant = 3"),
                "ns3",
            ),
        ] {
            let e = err(&text);
            assert!(
                e.contains(&format!("`{key}`"))
                    && e.contains("expected one of")
                    && e.contains(&format!("`{name}`"))
                    && e.contains("got integer 3")
                    && !e.contains("variant,")
                    && !e.contains("invalid type"),
                "{e}"
            );
        }
    }

    /// A TOML syntax error on a long line echoes at most 200 characters
    /// around the error, not the line.
    #[test]
    fn a_syntax_error_on_a_long_line_echoes_a_window() {
        let text = format!("name = [{}\n", "[".repeat(100_000));
        let e = err(&text);
        assert!(e.contains("invalid TOML") && e.contains("line 1"), "{e}");
        assert!(e.chars().count() < 700, "{} chars: {e}", e.chars().count());
        let text = format!("name = \"{}\n", "7".repeat(1_000_000));
        let e = err(&text);
        assert!(e.chars().count() < 700, "{} chars", e.chars().count());
    }
}
