//! Imported topologies: `[topology] kind = "edges"` (an edge-list CSV) and
//! `kind = "graphml"` (GraphML as the Internet Topology Zoo ships it) read
//! the file named by `topology.file` when the scenario is loaded and expand
//! into the same `nodes` and `[[links]]` a hand-written file would list,
//! as the generators of [`super::generate`] do. The file is read through
//! the bounded reader of [`super::files`] (a regular file of at most 4 MiB;
//! a relative path is taken from the scenario file's folder) and recorded
//! with its SHA-256 in the run's `provenance.json`.
//!
//! **Edge list** (`kind = "edges"`): a CSV file with a header row; one row
//! per bidirectional link. Required columns `a`, `b`, `rate`, `delay`
//! (aqmlab's unit strings: `"100Mbps"`, `"5ms"`); optional `name`,
//! `rate_ba`, `loss_ab`, `loss_ba`, `monitor` (an empty cell leaves the
//! key unset). Lines starting with `#` are comments. Node names are taken
//! as written, in order of first appearance; those matching
//! `topology.hosts` (names or `prefix*` patterns) are hosts, every other
//! node a router.
//!
//! **GraphML** (`kind = "graphml"`): every `<node>` becomes a router named
//! after its `label` (see [`sanitize`]); every `<edge>` a link. The rate
//! is the edge's `LinkSpeedRaw` (bit/s), else `LinkSpeed` × the unit of
//! `LinkSpeedUnits`, else `topology.default_rate`. The delay is the
//! great-circle distance between the two nodes' `Latitude`/`Longitude`
//! (haversine formula, R. W. Sinnott, "Virtues of the Haversine", Sky and
//! Telescope 68(2):159, 1984; mean Earth radius 6 371 km, IUGG) over the
//! speed of light in fibre, 2×10⁸ m/s (c / 1.5, the refractive index of
//! silica fibre), when both have coordinates, else `topology.default_delay`.
//! Parallel edges (the same two nodes, either direction) merge into one
//! link whose rate is the sum of theirs (a bundle of circuits); self-loops
//! carry nothing between nodes and are skipped. `edgedefault` is ignored:
//! every edge is a bidirectional link.
//!
//! Both kinds can attach `hosts_per_node` hosts to every router, named
//! `{router}-h{i}` (i = 0..hosts_per_node), each by an unmonitored access
//! link of `access_rate`/`access_delay`/`access_queue`.

use super::files::Reader;
use super::generate::{link, MAX_GENERATED_HOSTS};
use super::units::{parse_duration, parse_rate, Dur, Rate};
use super::{cut, LinkSpec, MAX_NAME_CHARS};
use crate::aqm::QueueSpec;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Most links an imported file may declare (rows of an edge list, edges of
/// a GraphML graph), checked before any link is built; the same bound as
/// a generator's hosts.
pub const MAX_IMPORTED_LINKS: usize = MAX_GENERATED_HOSTS as usize;

/// Longest router name made from a GraphML label (names may have
/// [`MAX_NAME_CHARS`]; this leaves room for a `_N` suffix and `-hI` hosts).
pub const MAX_LABEL_CHARS: usize = 100;

/// Speed of light in silica fibre, m/s (refractive index about 1.5).
pub const FIBRE_M_PER_S: f64 = 2.0e8;

/// Mean Earth radius, m (IUGG).
pub const EARTH_RADIUS_M: f64 = 6_371_000.0;

/// `[topology] kind = "edges"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EdgesSpec {
    /// The CSV file (relative: to the scenario file's folder).
    pub file: String,
    /// Nodes of the file that are hosts: names or `prefix*` patterns.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// Queue of every link of the file, both directions.
    #[serde(default)]
    pub queue: Option<QueueSpec>,
    /// Hosts attached to every router (default: 0).
    #[serde(default)]
    pub hosts_per_node: Option<u32>,
    /// Rate, delay and queue of each attached host's link.
    #[serde(default)]
    pub access_rate: Option<Rate>,
    #[serde(default)]
    pub access_delay: Option<Dur>,
    #[serde(default)]
    pub access_queue: Option<QueueSpec>,
}

/// `[topology] kind = "graphml"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GraphmlSpec {
    /// The GraphML file (relative: to the scenario file's folder).
    pub file: String,
    /// Rate of an edge with no `LinkSpeedRaw`/`LinkSpeed`.
    pub default_rate: Rate,
    /// Delay of an edge whose two nodes do not both have coordinates.
    pub default_delay: Dur,
    /// Queue of every link between routers, both directions.
    #[serde(default)]
    pub queue: Option<QueueSpec>,
    /// Hosts attached to every router (default: 1).
    #[serde(default)]
    pub hosts_per_node: Option<u32>,
    /// Rate, delay and queue of each attached host's link.
    #[serde(default)]
    pub access_rate: Option<Rate>,
    #[serde(default)]
    pub access_delay: Option<Dur>,
    #[serde(default)]
    pub access_queue: Option<QueueSpec>,
}

/// Hosts attached to every router of an imported topology (the keys of
/// either kind).
struct AccessSpec<'a> {
    hosts_per_node: Option<u32>,
    access_rate: Option<Rate>,
    access_delay: Option<Dur>,
    access_queue: &'a Option<QueueSpec>,
}

macro_rules! access {
    ($s:expr) => {
        AccessSpec {
            hosts_per_node: $s.hosts_per_node,
            access_rate: $s.access_rate,
            access_delay: $s.access_delay,
            access_queue: &$s.access_queue,
        }
    };
}

/// What an import adds: hosts, routers, links.
pub struct Imported {
    pub hosts: Vec<String>,
    pub routers: Vec<String>,
    pub links: Vec<LinkSpec>,
}

/// (key inside `topology`, message).
type Err = (String, String);

/// A GraphML node: its router's index, its (latitude, longitude).
type Node = (usize, Option<(f64, f64)>);

fn file_err(m: impl Into<String>) -> Err {
    ("file".to_string(), m.into())
}

impl AccessSpec<'_> {
    /// Check the access keys; `dflt` is the kind's default `hosts_per_node`.
    fn validate(&self, dflt: u32) -> Result<u32, Err> {
        let n = self.hosts_per_node.unwrap_or(dflt);
        if n > 0 {
            if self.access_rate.is_none() {
                return Err((
                    "access_rate".into(),
                    format!("required when hosts_per_node is {n} (the rate of each host's link, e.g. \"1Gbps\")"),
                ));
            }
            if self.access_delay.is_none() {
                return Err((
                    "access_delay".into(),
                    format!("required when hosts_per_node is {n} (the delay of each host's link, e.g. \"1ms\")"),
                ));
            }
        }
        if let Some(q) = &self.access_queue {
            q.validate()
                .map_err(|(k, m)| (format!("access_queue.{k}"), m))?;
        }
        Ok(n)
    }

    /// `n` hosts `{r}-h{i}` on every router `r`, checked against the
    /// names already taken and the host bound before anything is built.
    fn attach(&self, n: u32, x: &mut Imported) -> Result<(), Err> {
        if n == 0 {
            return Ok(());
        }
        let total = (x.routers.len() as u64).saturating_mul(n as u64);
        if total > MAX_GENERATED_HOSTS as u64 {
            return Err((
                "hosts_per_node".into(),
                format!(
                    "{n} hosts on each of {} routers is {total} hosts; an imported topology may have at most {MAX_GENERATED_HOSTS}",
                    x.routers.len()
                ),
            ));
        }
        let (rate, delay) = (
            self.access_rate.expect("validated"),
            self.access_delay.expect("validated"),
        );
        let mut taken: std::collections::HashSet<String> =
            x.hosts.iter().chain(&x.routers).cloned().collect();
        x.hosts.reserve_exact(total as usize);
        x.links.reserve_exact(total as usize);
        for r in &x.routers {
            for i in 0..n {
                let h = format!("{r}-h{i}");
                if !taken.insert(h.clone()) {
                    return Err((
                        "hosts_per_node".into(),
                        format!("the generated host name `{h}` is already a node of the file"),
                    ));
                }
                let mut l = link(&h, r, rate, delay, self.access_queue.clone());
                l.monitor = Some(false);
                x.links.push(l);
                x.hosts.push(h);
            }
        }
        Ok(())
    }
}

/// Read `file` through `rd` (recorded as named by `topology.file`).
fn read(rd: &mut Reader, file: &str, what: &str) -> Result<std::sync::Arc<str>, Err> {
    rd.get("topology.file", file, what)
        .map(|f| f.text.clone())
        .map_err(|m| {
            // the bounded reader names what the file should be when it is
            // not a regular file; otherwise it is said here
            file_err(if m.contains(what) {
                m
            } else {
                format!("{m}; give {what}")
            })
        })
}

const EDGE_COLUMNS: &[&str] = &[
    "a", "b", "rate", "delay", "name", "rate_ba", "loss_ab", "loss_ba", "monitor",
];

impl EdgesSpec {
    /// Check the keys of `[topology]` (before the file is read).
    pub fn validate(&self) -> Result<(), Err> {
        if self.file.is_empty() {
            return Err(file_err("required: the path of an edge-list CSV file"));
        }
        if let Some(q) = &self.queue {
            q.validate().map_err(|(k, m)| (format!("queue.{k}"), m))?;
        }
        access!(self).validate(0).map(|_| ())
    }

    /// Read and expand the edge list.
    pub(crate) fn import(&self, rd: &mut Reader) -> Result<Imported, Err> {
        let what = "an edge-list CSV file (header a,b,rate,delay)";
        let text = read(rd, &self.file, what)?;
        let f = &self.file;
        // bounded before any row is parsed: every line but the header
        // and comments is a link
        let rows = (text.lines())
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .count()
            .saturating_sub(1);
        if rows > MAX_IMPORTED_LINKS {
            return Err(file_err(format!(
                "`{f}` has {rows} rows; an edge list may have at most {MAX_IMPORTED_LINKS} links"
            )));
        }
        let mut rdr = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .comment(Some(b'#'))
            .from_reader(text.as_bytes());
        let header: Vec<String> = rdr
            .headers()
            .map_err(|e| file_err(format!("`{f}`: {e}")))?
            .iter()
            .map(String::from)
            .collect();
        let mut col: HashMap<&str, usize> = HashMap::new();
        for (i, h) in header.iter().enumerate() {
            let Some(&known) = EDGE_COLUMNS.iter().find(|c| **c == h) else {
                return Err(file_err(format!(
                    "`{f}`, header: {}",
                    crate::registry::unknown("column", h, EDGE_COLUMNS, "allowed")
                )));
            };
            if col.insert(known, i).is_some() {
                return Err(file_err(format!(
                    "`{f}`, header: column `{}` appears twice",
                    cut(h)
                )));
            }
        }
        for c in &EDGE_COLUMNS[..4] {
            if !col.contains_key(c) {
                return Err(file_err(format!(
                    "`{f}`, header: no column `{c}`; an edge list needs a,b,rate,delay"
                )));
            }
        }
        let mut order: Vec<String> = Vec::new();
        let mut seen: std::collections::HashSet<String> = Default::default();
        let mut links = Vec::new();
        let mut names: HashMap<String, u64> = HashMap::new();
        for rec in rdr.records() {
            let rec = rec.map_err(|e| {
                let line = e.position().map_or(0, |p| p.line());
                file_err(match e.kind() {
                    csv::ErrorKind::UnequalLengths { len, .. } => format!(
                        "`{f}` line {line}: {len} column{} where the header has {} ({}); every row needs a value in each column",
                        if *len == 1 { "" } else { "s" },
                        header.len(),
                        header.join(",")
                    ),
                    _ => format!("`{f}` line {line}: {e}"),
                })
            })?;
            let line = rec.position().map_or(0, |p| p.line());
            let at = |c: &str| format!("`{f}` line {line}, column `{c}`");
            let cell = |c: &str| -> Option<&str> {
                col.get(c)
                    .and_then(|&i| rec.get(i))
                    .filter(|v| !v.is_empty())
            };
            let need = |c: &str| -> Result<&str, Err> {
                cell(c)
                    .ok_or_else(|| file_err(format!("{}: empty; every row needs a value", at(c))))
            };
            let (a, b) = (need("a")?, need("b")?);
            for (c, n) in [("a", a), ("b", b)] {
                let len = n.chars().count();
                if len > MAX_NAME_CHARS {
                    return Err(file_err(format!(
                        "{}: a name of {len} characters; names may have at most {MAX_NAME_CHARS}",
                        at(c)
                    )));
                }
            }
            if a == b {
                return Err(file_err(format!(
                    "{}: `{}` again; a link must join two different nodes",
                    at("b"),
                    cut(a)
                )));
            }
            let rate = |c: &str, v: &str| {
                parse_rate(v)
                    .map(Rate)
                    .map_err(|m| file_err(format!("{}: invalid rate `{}`: {m}", at(c), cut(v))))
            };
            let mut l = link(
                a,
                b,
                rate("rate", need("rate")?)?,
                parse_duration(need("delay")?).map(Dur).map_err(|m| {
                    file_err(format!(
                        "{}: invalid duration `{}`: {m}",
                        at("delay"),
                        cut(cell("delay").unwrap_or_default())
                    ))
                })?,
                self.queue.clone(),
            );
            if let Some(v) = cell("rate_ba") {
                l.rate_ba = Some(rate("rate_ba", v)?);
            }
            for (c, to) in [("loss_ab", &mut l.loss_ab), ("loss_ba", &mut l.loss_ba)] {
                if let Some(v) = cell(c) {
                    *to = v
                        .parse::<f64>()
                        .ok()
                        .filter(|p| (0.0..1.0).contains(p))
                        .ok_or_else(|| {
                            file_err(format!(
                                "{}: `{}` is not a probability in [0, 1)",
                                at(c),
                                cut(v)
                            ))
                        })?;
                }
            }
            if let Some(v) = cell("monitor") {
                l.monitor = Some(match v {
                    "true" => true,
                    "false" => false,
                    _ => {
                        return Err(file_err(format!(
                            "{}: `{}`; allowed: true, false (or empty)",
                            at("monitor"),
                            cut(v)
                        )))
                    }
                });
            }
            l.name = cell("name").map(String::from);
            let shown = l.display_name();
            if let Some(first) = names.insert(shown.clone(), line) {
                return Err(file_err(format!(
                    "`{f}` line {line}: a second link named `{}` (the first is on line {first}); give parallel links distinct names in a `name` column", cut(&shown)
                )));
            }
            for n in [a, b] {
                if seen.insert(n.to_string()) {
                    order.push(n.to_string());
                }
            }
            links.push(l);
        }
        if links.is_empty() {
            return Err(file_err(format!("`{f}` has a header but no link rows")));
        }
        let is_host = |n: &str| {
            self.hosts.iter().any(|p| match p.strip_suffix('*') {
                Some(prefix) => n.starts_with(prefix),
                None => n == p,
            })
        };
        for (i, p) in self.hosts.iter().enumerate() {
            let matched = match p.strip_suffix('*') {
                Some(prefix) => order.iter().any(|n| n.starts_with(prefix)),
                None => seen.contains(p.as_str()),
            };
            if !matched {
                return Err((
                    format!("hosts[{i}]"),
                    format!("`{}` matches no node of `{f}`", cut(p)),
                ));
            }
        }
        let (hosts, routers): (Vec<String>, Vec<String>) =
            order.into_iter().partition(|n| is_host(n));
        let mut x = Imported {
            hosts,
            routers,
            links,
        };
        let n = self.hosts_per_node.unwrap_or(0);
        access!(self).attach(n, &mut x)?;
        Ok(x)
    }
}

/// An aqmlab node name from a GraphML label: every run of characters
/// other than ASCII letters, digits and `_` becomes one `_`, with none at
/// either end (`"St. Louis"` → `St_Louis`, `"Frankfurt-am-Main"` →
/// `Frankfurt_am_Main`); the importer keeps the first [`MAX_LABEL_CHARS`]. The name then has no `-`, so a host pattern
/// `{router}-h*` matches the hosts of that router only. Empty when the
/// label has no ASCII letter or digit.
pub fn sanitize(label: &str) -> String {
    let mut s = String::with_capacity(label.len());
    for c in label.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c);
        } else if !s.is_empty() && !s.ends_with('_') {
            s.push('_');
        }
    }
    while s.ends_with('_') {
        s.pop();
    }
    s
}

/// Great-circle distance in metres between two (latitude, longitude)
/// points in degrees: the haversine formula (Sinnott 1984) on a sphere of
/// radius [`EARTH_RADIUS_M`].
pub fn great_circle_m(p: (f64, f64), q: (f64, f64)) -> f64 {
    let (f1, f2) = (p.0.to_radians(), q.0.to_radians());
    let (df, dl) = ((q.0 - p.0).to_radians(), (q.1 - p.1).to_radians());
    let h = (df / 2.0).sin().powi(2) + f1.cos() * f2.cos() * (dl / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_M * h.sqrt().min(1.0).asin()
}

/// Propagation delay in ns over `metres` of fibre, rounded to the ns.
pub fn fibre_delay_ns(metres: f64) -> u64 {
    (metres / FIBRE_M_PER_S * 1e9).round() as u64
}

/// The `<data>` child of `n` whose key names the attribute `attr`, and its
/// trimmed text.
fn data<'a, 'i>(
    n: roxmltree::Node<'a, 'i>,
    keys: &HashMap<&str, &str>,
    attr: &str,
) -> Option<(roxmltree::Node<'a, 'i>, String)> {
    n.children()
        .filter(|c| c.has_tag_name("data"))
        .find(|c| c.attribute("key").and_then(|k| keys.get(k)) == Some(&attr))
        .map(|c| (c, c.text().unwrap_or("").trim().to_string()))
}

/// The unit of `LinkSpeedUnits` in bit/s.
fn speed_unit(u: &str) -> Option<f64> {
    match u.trim() {
        "" | "b" | "bps" => Some(1.0),
        "K" | "k" | "Kbps" | "kbps" => Some(1e3),
        "M" | "Mbps" => Some(1e6),
        "G" | "Gbps" => Some(1e9),
        "T" | "Tbps" => Some(1e12),
        _ => None,
    }
}

impl GraphmlSpec {
    /// Check the keys of `[topology]` (before the file is read).
    pub fn validate(&self) -> Result<(), Err> {
        if self.file.is_empty() {
            return Err(file_err("required: the path of a GraphML file"));
        }
        if let Some(q) = &self.queue {
            q.validate().map_err(|(k, m)| (format!("queue.{k}"), m))?;
        }
        access!(self).validate(1).map(|_| ())
    }

    /// Read and expand the GraphML graph.
    pub(crate) fn import(&self, rd: &mut Reader) -> Result<Imported, Err> {
        let what = "a GraphML file (as the Internet Topology Zoo ships it)";
        let text = read(rd, &self.file, what)?;
        let f = &self.file;
        let opts = roxmltree::ParsingOptions {
            allow_dtd: false,
            ..Default::default()
        };
        let doc = roxmltree::Document::parse_with_options(&text, opts).map_err(|e| {
            file_err(match e {
                // refused on purpose: a DTD can define entities that
                // expand without bound
                roxmltree::Error::DtdDetected => format!(
                    "`{f}` has a DTD (`<!DOCTYPE …>`); GraphML files with a DTD are not accepted: remove the `<!DOCTYPE …>` declaration"
                ),
                e => format!("`{f}`: not well-formed XML: {e}"),
            })
        })?;
        let pos = |n: roxmltree::Node| {
            let p = doc.text_pos_at(n.range().start);
            format!("`{f}` line {}, column {}", p.row, p.col)
        };
        let root = doc.root_element();
        if root.tag_name().name() != "graphml" {
            return Err(file_err(format!(
                "{}: the root element is <{}>, not <graphml>",
                pos(root),
                cut(root.tag_name().name())
            )));
        }
        // key id → attribute name, for nodes and for edges
        let mut node_keys: HashMap<&str, &str> = HashMap::new();
        let mut edge_keys: HashMap<&str, &str> = HashMap::new();
        for k in root.children().filter(|c| c.has_tag_name("key")) {
            let (Some(id), Some(name)) = (k.attribute("id"), k.attribute("attr.name")) else {
                continue;
            };
            match k.attribute("for") {
                Some("node") => node_keys.insert(id, name),
                Some("edge") => edge_keys.insert(id, name),
                Some("all") => {
                    node_keys.insert(id, name);
                    edge_keys.insert(id, name)
                }
                _ => None,
            };
        }
        let Some(graph) = root.children().find(|c| c.has_tag_name("graph")) else {
            return Err(file_err(format!("{}: no <graph> element", pos(root))));
        };
        let nodes: Vec<roxmltree::Node> = graph
            .children()
            .filter(|c| c.has_tag_name("node"))
            .collect();
        let edges: Vec<roxmltree::Node> = graph
            .children()
            .filter(|c| c.has_tag_name("edge"))
            .collect();
        if nodes.len() > MAX_IMPORTED_LINKS || edges.len() > MAX_IMPORTED_LINKS {
            return Err(file_err(format!(
                "`{f}` has {} nodes and {} edges; an imported graph may have at most {MAX_IMPORTED_LINKS} of each",
                nodes.len(),
                edges.len()
            )));
        }
        if nodes.is_empty() {
            return Err(file_err(format!("{}: the graph has no <node>", pos(graph))));
        }
        // GraphML node id → (router index, coordinates)
        let mut ids: HashMap<&str, Node> = HashMap::new();
        let mut routers: Vec<String> = Vec::with_capacity(nodes.len());
        let mut taken: std::collections::HashSet<String> = Default::default();
        for n in &nodes {
            let Some(id) = n.attribute("id") else {
                return Err(file_err(format!("{}: a <node> without an `id`", pos(*n))));
            };
            let label = match data(*n, &node_keys, "label") {
                Some((_, l)) if !l.is_empty() => l,
                _ => {
                    return Err(file_err(format!(
                        "{}: node `{}` has no `label`; every node needs one (it names the router)",
                        pos(*n),
                        cut(id)
                    )))
                }
            };
            let mut base = sanitize(&label);
            if base.is_empty() {
                base = format!("n{}", sanitize(id));
            }
            // ASCII: cut at a byte; leaves room for `_N` and `-hI`
            base.truncate(MAX_LABEL_CHARS);
            let mut name = base.clone();
            let mut k = 2;
            while taken.contains(&name) {
                name = format!("{base}_{k}");
                k += 1;
            }
            taken.insert(name.clone());
            let coord = |attr: &str, max: f64| -> Result<Option<f64>, Err> {
                match data(*n, &node_keys, attr) {
                    None => Ok(None),
                    Some((d, v)) => match v.parse::<f64>() {
                        Ok(x) if x.is_finite() && x.abs() <= max => Ok(Some(x)),
                        _ => Err(file_err(format!(
                            "{}: node `{}` has {attr} `{}`; allowed: a number of degrees from -{max} to {max}",
                            pos(d),
                            cut(id),
                            cut(&v)
                        ))),
                    },
                }
            };
            let lat = coord("Latitude", 90.0)?;
            let lon = coord("Longitude", 180.0)?;
            let at = lat.zip(lon);
            if ids.insert(id, (routers.len(), at)).is_some() {
                return Err(file_err(format!(
                    "{}: a second node with id `{}`",
                    cut(id),
                    pos(*n)
                )));
            }
            routers.push(name);
        }
        // unordered node pair → index into `links`
        let mut pairs: HashMap<(usize, usize), usize> = HashMap::new();
        let mut links: Vec<LinkSpec> = Vec::new();
        for e in &edges {
            let end = |k: &str| -> Result<&Node, Err> {
                let v = e.attribute(k).unwrap_or("");
                ids.get(v).ok_or_else(|| {
                    file_err(format!(
                        "{}: edge {k} `{}` is not the id of a <node>",
                        pos(*e),
                        cut(v)
                    ))
                })
            };
            let (&(a, pa), &(b, pb)) = (end("source")?, end("target")?);
            let raw = match data(*e, &edge_keys, "LinkSpeedRaw") {
                Some((d, v)) => Some((d, v.parse::<f64>().ok(), v)),
                None => data(*e, &edge_keys, "LinkSpeed").map(|(d, v)| {
                    let unit = data(*e, &edge_keys, "LinkSpeedUnits")
                        .map(|(_, u)| u)
                        .unwrap_or_default();
                    let bps = v
                        .parse::<f64>()
                        .ok()
                        .zip(speed_unit(&unit))
                        .map(|(x, u)| x * u);
                    (d, bps, format!("{v} {unit}"))
                }),
            };
            let rate = match raw {
                None => self.default_rate,
                Some((d, bps, v)) => match bps.filter(|x| x.is_finite()).map(|x| x.round()) {
                    Some(x) if x >= 1.0 && x <= crate::units::MAX_RATE as f64 => Rate(x as u64),
                    _ => {
                        return Err(file_err(format!(
                            "{}: edge `{}`–`{}` has link speed `{}`; allowed: a number of bit/s from 1 to 10^13",
                            pos(d),
                            routers[a],
                            routers[b],
                            cut(&v)
                        )))
                    }
                },
            };
            if a == b {
                continue;
            }
            let key = (a.min(b), a.max(b));
            if let Some(&i) = pairs.get(&key) {
                let l: &mut LinkSpec = &mut links[i];
                l.rate = Rate(l.rate.0.saturating_add(rate.0).min(crate::units::MAX_RATE));
                continue;
            }
            let delay = match pa.zip(pb) {
                Some((p, q)) => Dur(fibre_delay_ns(great_circle_m(p, q))),
                None => self.default_delay,
            };
            pairs.insert(key, links.len());
            links.push(link(
                &routers[a],
                &routers[b],
                rate,
                delay,
                self.queue.clone(),
            ));
        }
        let mut x = Imported {
            hosts: Vec::new(),
            routers,
            links,
        };
        let n = self.hosts_per_node.unwrap_or(1);
        access!(self).attach(n, &mut x)?;
        Ok(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_makes_names_without_dashes() {
        assert_eq!(sanitize("St. Louis"), "St_Louis");
        assert_eq!(sanitize("Frankfurt-am-Main"), "Frankfurt_am_Main");
        assert_eq!(sanitize("  New  York "), "New_York");
        assert_eq!(sanitize("Zürich"), "Z_rich");
        assert_eq!(sanitize("東京"), "");
    }

    /// Hand-computed: New York (40.7128, -74.0060) to Los Angeles
    /// (34.0522, -118.2437) is 3 935.7 km by the haversine formula on a
    /// 6 371 km sphere (published great-circle figures: 3 936 km); over
    /// fibre at 2e8 m/s that is 19.68 ms.
    #[test]
    fn great_circle_delay_matches_a_hand_computed_figure() {
        let d = great_circle_m((40.7128, -74.0060), (34.0522, -118.2437));
        assert!((d - 3_935_746.0).abs() < 1_000.0, "{d}");
        let ns = fibre_delay_ns(d);
        assert!((ns as f64 - 19_678_730.0).abs() < 10_000.0, "{ns}");
        // a quarter of the equator: π/2 · R
        let q = great_circle_m((0.0, 0.0), (0.0, 90.0));
        assert!((q - std::f64::consts::FRAC_PI_2 * EARTH_RADIUS_M).abs() < 1e-6);
        assert_eq!(great_circle_m((10.0, 20.0), (10.0, 20.0)), 0.0);
    }
}
