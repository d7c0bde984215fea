//! Mutations aimed at one scenario feature each: every key of every
//! registered kind (queues, congestion controls, workloads, `[tcp]`, read
//! from [`aqmlab::registry`], so a key registered tomorrow is fuzzed
//! tomorrow), generated topologies, workloads and their host sets,
//! warm-up, packet capture, `[lp]`, sweep axes and names at the length
//! limit. Each returns a description that starts with the key path it
//! changed (what [`crate::pointer`] compares an error's key with).

use super::{edge_int, get, get_mut, path_str, paths, random_value, Seg, UNITS};
use aqmlab::catalogue::{families, TCP_PARAMS};
use aqmlab::registry::{literal, Param};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_pcg::Pcg64Mcg;
use toml::{Table, Value};

/// Keys of each generated topology (`scenario/generate.rs`).
pub const TOPOLOGY_KEYS: &[(&str, &[&str])] = &[
    (
        "dumbbell",
        &[
            "hosts",
            "access_rate",
            "access_delay",
            "access_queue",
            "bottleneck_rate",
            "bottleneck_delay",
            "queue",
        ],
    ),
    (
        "star",
        &[
            "hosts",
            "access_rate",
            "access_delay",
            "access_queue",
            "bottleneck_rate",
            "bottleneck_delay",
            "queue",
        ],
    ),
    (
        "parking-lot",
        &[
            "hops",
            "rate",
            "delay",
            "queue",
            "access_rate",
            "access_delay",
            "access_queue",
        ],
    ),
    (
        "fat-tree",
        &[
            "k",
            "rate",
            "core_rate",
            "delay",
            "queue",
            "core_queue",
            "host_queue",
            "ecmp",
        ],
    ),
    (
        "edges",
        &[
            "file",
            "hosts",
            "queue",
            "hosts_per_node",
            "access_rate",
            "access_delay",
            "access_queue",
        ],
    ),
    (
        "graphml",
        &[
            "file",
            "default_rate",
            "default_delay",
            "queue",
            "hosts_per_node",
            "access_rate",
            "access_delay",
            "access_queue",
        ],
    ),
];

/// The files an imported topology (`topology.file`) may name: the shipped
/// examples (either kind may draw either format, so one kind reads the
/// other's file; each example is listed twice so that a readable file is
/// drawn as often as a broken path), a trace file, a missing file, a
/// directory, a device, the empty path.
pub const TOPOLOGY_FILES: &[&str] = &[
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/import/ring.csv"
    ),
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/import/us-backbone.graphml"
    ),
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/import/ring.csv"
    ),
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/import/us-backbone.graphml"
    ),
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/changing/cellular.trace"
    ),
    "/nonexistent.graphml",
    "/",
    "/dev/zero",
    "",
];

/// Keys of the tables that are not registered kinds.
pub const TABLE_KEYS: &[(&str, &[&str])] = &[
    (
        "output",
        &[
            "sample_interval",
            "cwnd_interval",
            "throughput_bin",
            "pcap",
            "pcap_snaplen",
            "warmup",
            "log",
            "log_flows",
            "log_max_events",
            "log_format",
            "format",
        ],
    ),
    ("routing", &["ecmp"]),
    ("sweep", &["seeds", "link", "vary"]),
    ("vary", &["key", "values", "labels"]),
    ("nodes", &["hosts", "routers"]),
    (
        "classifier",
        &[
            "threshold",
            "adapt",
            "slr",
            "t_u",
            "t_c",
            "gain",
            "min_threshold",
            "max_threshold",
        ],
    ),
    ("cbr", &["rate", "packet_size", "ecn"]),
    (
        "probes",
        &[
            "count",
            "short_pkts",
            "long_pkts",
            "short_every",
            "long_every",
        ],
    ),
    ("rio class", &["min_th", "max_th", "max_p", "w_q"]),
    (
        "links",
        &[
            "name",
            "a",
            "b",
            "rate",
            "rate_ba",
            "delay",
            "queue",
            "queue_ab",
            "queue_ba",
            "loss_ab",
            "loss_ba",
            "monitor",
            "classifier_ab",
            "classifier_ba",
            "trace",
            "trace_ba",
            "trace_once",
        ],
    ),
    (
        "events",
        &[
            "at", "link", "flow", "rate", "rate_ba", "delay", "loss_ab", "loss_ba", "down", "up",
            "stop", "queue",
        ],
    ),
    (
        "flows",
        &[
            "group",
            "src",
            "dst",
            "count",
            "cc",
            "trace_cwnd",
            "start",
            "start_spread",
            "size",
            "cbr",
            "tcp",
            "dscp",
        ],
    ),
    (
        "(top level)",
        &[
            "name",
            "description",
            "duration",
            "seed",
            "nodes",
            "links",
            "topology",
            "routing",
            "tcp",
            "flows",
            "workloads",
            "events",
            "output",
            "lp",
            "sweep",
        ],
    ),
];

fn table_keys(which: &str) -> &'static [&'static str] {
    TABLE_KEYS
        .iter()
        .find(|(k, _)| *k == which)
        .map_or(&[], |(_, v)| v)
}

/// Where the keys of a table come from.
#[derive(Clone, Copy)]
enum Keys {
    Registered(&'static [Param]),
    Plain(&'static [&'static str]),
}

const QUEUE_KEYS: &[&str] = &[
    "queue",
    "queue_ab",
    "queue_ba",
    "access_queue",
    "core_queue",
    "host_queue",
];

fn last_key(p: &[Seg]) -> Option<&str> {
    match p.last() {
        Some(Seg::Key(k)) => Some(k),
        _ => None,
    }
}

fn kind_of(v: &Value) -> Option<&str> {
    v.get("kind").and_then(|k| k.as_str())
}

/// The registered parameters of `kind` in the family at `family` (0 queues,
/// 1 congestion controls, 2 workloads).
fn registered(family: usize, kind: &str) -> Option<&'static [Param]> {
    families()
        .get(family)?
        .kinds
        .iter()
        .find(|k| k.kind == kind)
        .map(|k| k.params)
}

/// Every table of the document whose keys the fuzzer knows.
fn keyed_tables(doc: &Value) -> Vec<(Vec<Seg>, Keys)> {
    let mut out = Vec::new();
    for p in paths(doc) {
        let Some(v) = get(doc, &p) else { continue };
        let lk = last_key(&p);
        let parent_key = p.len().checked_sub(2).and_then(|i| match &p[i] {
            Seg::Key(k) => Some(k.as_str()),
            _ => None,
        });
        let keys = match (v, lk) {
            (Value::Table(_), Some(k)) if QUEUE_KEYS.contains(&k) => kind_of(v)
                .and_then(|kd| registered(0, kd))
                .map(Keys::Registered),
            // a cc written as a name becomes a table when a key is added
            (Value::Table(_) | Value::String(_), Some("cc")) => {
                let kd = v.as_str().or_else(|| kind_of(v)).unwrap_or("");
                registered(1, kd).map(Keys::Registered)
            }
            (Value::Table(_), Some("tcp")) => Some(Keys::Registered(TCP_PARAMS)),
            (Value::Table(_), Some("topology")) if p.len() == 1 => kind_of(v)
                .and_then(|kd| TOPOLOGY_KEYS.iter().find(|(k, _)| *k == kd))
                .map(|(_, ks)| Keys::Plain(ks)),
            (Value::Table(_), Some("classifier_ab" | "classifier_ba")) => {
                Some(Keys::Plain(table_keys("classifier")))
            }
            (Value::Table(_), Some("short" | "long")) => Some(Keys::Plain(table_keys("rio class"))),
            (
                Value::Table(_),
                Some(k @ ("output" | "routing" | "sweep" | "nodes" | "cbr" | "probes")),
            ) => Some(Keys::Plain(table_keys(k))),
            (Value::Table(_), None) if p.is_empty() => Some(Keys::Plain(table_keys("(top level)"))),
            (Value::Table(_), None) => match parent_key {
                Some("workloads") => kind_of(v)
                    .and_then(|kd| registered(2, kd))
                    .map(Keys::Registered),
                Some(k @ ("links" | "flows" | "vary" | "events")) => {
                    Some(Keys::Plain(table_keys(k)))
                }
                _ => None,
            },
            _ => None,
        };
        if let Some(k) = keys {
            out.push((p, k));
        }
    }
    out
}

/// A value in `unit`'s terms: mostly valid, sometimes at or past an edge.
fn unit_value(unit: &str, rng: &mut Pcg64Mcg) -> Value {
    let pick = |xs: &[&str], rng: &mut Pcg64Mcg| {
        Value::String(xs.choose(rng).expect("nonempty").to_string())
    };
    if unit == "time" || unit == "µs" {
        pick(
            &[
                "0s",
                "1ns",
                "10us",
                "1ms",
                "5ms",
                "100ms",
                "1s",
                "1e30s",
                "-1ms",
                "18446744073709551615ns",
                "5",
            ],
            rng,
        )
    } else if unit == "bit/s" {
        pick(
            &[
                "0bps", "1bps", "64kbps", "10Mbps", "1Gbps", "1e30Gbps", "-1Mbps",
            ],
            rng,
        )
    } else if unit == "bytes" || unit.starts_with("packets") {
        match rng.gen_range(0..3) {
            0 => pick(
                &["0B", "1B", "1500B", "64KB", "1GB", "1e30B", "16p", "0p"],
                rng,
            ),
            _ => Value::Integer(
                *[0i64, 1, 2, 10, 100, 1500, 65536, 1 << 32, -1]
                    .choose(rng)
                    .expect("nonempty"),
            ),
        }
    } else if unit == "probability" || unit == "fraction" || unit == "factor" || unit == "weight" {
        Value::Float(
            *[0.0, 1e-9, 0.002, 0.1, 0.5, 0.999, 1.0, 1.5, -0.1, f64::NAN]
                .choose(rng)
                .expect("nonempty"),
        )
    } else {
        random_value(rng)
    }
}

/// Set one known key of a known table: a registered kind's parameter (its
/// documented bad value, its example, a value in its unit, any value), a
/// topology, output, sweep, link or flow key; or delete it.
pub fn known_key(doc: &mut Value, rng: &mut Pcg64Mcg) -> String {
    let tables = keyed_tables(doc);
    let Some((p, keys)) = tables.choose(rng).cloned() else {
        return "no keyed table".into();
    };
    let (key, value) = match keys {
        Keys::Registered(params) => {
            let Some(pm) = params.choose(rng) else {
                return format!("{} has no keys", path_str(&p));
            };
            let v = match rng.gen_range(0..5) {
                0 if !pm.bad.is_empty() => literal(pm.bad),
                1 if !pm.example.is_empty() => literal(pm.example),
                0..=2 => unit_value(pm.unit, rng),
                3 => random_value(rng),
                _ => Value::Integer(edge_int(rng)),
            };
            (pm.name, v)
        }
        Keys::Plain(ks) => {
            let Some(k) = ks.choose(rng) else {
                return format!("{} has no keys", path_str(&p));
            };
            let unit = if k.contains("rate") {
                "bit/s"
            } else if k.contains("delay")
                || k.contains("interval")
                || k.starts_with("t_")
                || k.ends_with("every")
                || *k == "warmup"
                || *k == "duration"
            {
                "time"
            } else {
                ""
            };
            (
                *k,
                if *k == "file" && rng.gen_bool(0.7) {
                    Value::String(TOPOLOGY_FILES.choose(rng).expect("nonempty").to_string())
                } else if unit.is_empty() {
                    random_value(rng)
                } else {
                    unit_value(unit, rng)
                },
            )
        }
    };
    let target = get_mut(doc, &p).expect("path");
    if let Value::String(name) = target {
        // `cc = "cubic"` → `cc = { kind = "cubic", key = value }`
        let mut t = Table::new();
        t.insert("kind".into(), Value::String(name.clone()));
        *target = Value::Table(t);
    }
    let Some(t) = target.as_table_mut() else {
        return "not a table".into();
    };
    let at = if p.is_empty() {
        key.to_string()
    } else {
        format!("{}.{key}", path_str(&p))
    };
    if rng.gen_bool(0.15) {
        t.remove(key);
        format!("delete {at}")
    } else {
        let d = format!("{at} = {value}");
        t.insert(key.into(), value);
        d
    }
}

/// A `[topology]`: a new one of any kind, its kind changed, or its size
/// key (`hosts`, `hops`, `k`, `hosts_per_node`) at an edge; an imported
/// one's `file` (a shipped example of either format, a missing file, a
/// directory, a device) or its `hosts` patterns.
pub fn topology(doc: &mut Value, rng: &mut Pcg64Mcg) -> String {
    let root = doc.as_table_mut().expect("root table");
    // each size key at its edges: the generator's own bounds, the node
    // limit (150 000) and the routing estimate (a parking lot of 49 999
    // hops once asked for 10 GB); a dumbbell or star of 50 000 hosts a side
    // is under every limit and holds about 1.5 GiB, more than a case may
    let sizes = |key: &str| -> &'static [i64] {
        match key {
            "hops" => &[0, 1, 2, 3, 100, 1000, 20_000, 49_999, 150_000, 1 << 32, -1],
            "k" => &[0, 1, 2, 3, 4, 6, 7, 8, 32, 64, 65, 66, -1],
            // around the bound of 200 000 hosts over 6 or 8 routers
            "hosts_per_node" => &[0, 1, 2, 3, 1000, 25_000, 25_001, 33_334, 1 << 32, -1],
            _ => &[0, 1, 2, 3, 7, 64, 1000, 5000, 75_001, 1 << 20, 1 << 32, -1],
        }
    };
    match root.get_mut("topology").and_then(|t| t.as_table_mut()) {
        Some(t) if rng.gen_bool(0.7) => {
            if rng.gen_bool(0.3) {
                let k = TOPOLOGY_KEYS.choose(rng).expect("nonempty").0;
                t.insert("kind".into(), Value::String(k.into()));
                format!("topology.kind = {k:?}")
            } else {
                let imported = matches!(
                    t.get("kind").and_then(|k| k.as_str()),
                    Some("edges" | "graphml")
                );
                if imported && rng.gen_bool(0.5) {
                    if rng.gen_bool(0.6) {
                        let f = TOPOLOGY_FILES.choose(rng).expect("nonempty");
                        t.insert("file".into(), Value::String(f.to_string()));
                        return format!("topology.file = {f:?}");
                    }
                    let h = [
                        vec!["client*"],
                        vec!["client0", "server*"],
                        vec!["*"],
                        vec!["nowhere*"],
                        vec![],
                    ]
                    .choose(rng)
                    .expect("nonempty")
                    .clone();
                    let v: Vec<Value> = h.iter().map(|x| Value::String(x.to_string())).collect();
                    t.insert("hosts".into(), Value::Array(v));
                    return format!("topology.hosts = {h:?}");
                }
                let key = match t.get("kind").and_then(|k| k.as_str()) {
                    Some("parking-lot") => "hops",
                    Some("fat-tree") => "k",
                    Some("edges" | "graphml") => "hosts_per_node",
                    _ => "hosts",
                };
                let n = *sizes(key).choose(rng).expect("nonempty");
                t.insert(key.into(), Value::Integer(n));
                format!("topology.{key} = {n}")
            }
        }
        _ if rng.gen_bool(0.3) => {
            // an imported topology, from a shipped example (or a bad file)
            let graphml = rng.gen_bool(0.5);
            let mut t = Table::new();
            let file = if rng.gen_bool(0.8) {
                TOPOLOGY_FILES[usize::from(graphml)]
            } else {
                TOPOLOGY_FILES.choose(rng).expect("nonempty")
            };
            let kind = if graphml { "graphml" } else { "edges" };
            t.insert("kind".into(), Value::String(kind.into()));
            t.insert("file".into(), Value::String(file.into()));
            let s = |v: &str| Value::String(v.into());
            if graphml {
                t.insert("default_rate".into(), s("100Mbps"));
                t.insert("default_delay".into(), s("2ms"));
                t.insert("access_rate".into(), s("1Gbps"));
                t.insert("access_delay".into(), s("100us"));
            } else {
                t.insert(
                    "hosts".into(),
                    Value::Array(vec![s("client*"), s("server*")]),
                );
            }
            if rng.gen_bool(0.3) {
                let mut q = Table::new();
                q.insert("kind".into(), s(any_queue_kind(rng)));
                t.insert("queue".into(), Value::Table(q));
            }
            root.insert("topology".into(), Value::Table(t));
            format!("topology = {{ kind = {kind:?} }}; topology.file = {file:?}")
        }
        _ => {
            let (kind, size) = *[
                ("dumbbell", "hosts"),
                ("star", "hosts"),
                ("parking-lot", "hops"),
                ("fat-tree", "k"),
            ]
            .choose(rng)
            .expect("nonempty");
            let mut t = Table::new();
            t.insert("kind".into(), Value::String(kind.into()));
            let n = if rng.gen_bool(0.7) {
                [2i64, 2, 4][rng.gen_range(0..3)]
            } else {
                *sizes(size).choose(rng).expect("nonempty")
            };
            t.insert(size.into(), Value::Integer(n));
            let keys: &[(&str, &str)] = if kind == "fat-tree" || kind == "parking-lot" {
                &[
                    ("rate", "100Mbps"),
                    ("delay", "100us"),
                    ("access_rate", "1Gbps"),
                    ("access_delay", "10us"),
                ]
            } else {
                &[
                    ("access_rate", "100Mbps"),
                    ("access_delay", "100us"),
                    ("bottleneck_rate", "10Mbps"),
                    ("bottleneck_delay", "1ms"),
                ]
            };
            for (k, v) in keys {
                if kind == "fat-tree" && k.starts_with("access") {
                    continue;
                }
                t.insert(k.to_string(), Value::String(v.to_string()));
            }
            root.insert("topology".into(), Value::Table(t));
            format!("topology = {{ kind = {kind:?}, {size} = {n} }}")
        }
    }
}

/// A registered queue kind.
fn any_queue_kind(rng: &mut Pcg64Mcg) -> &'static str {
    families()[0].kinds.choose(rng).expect("queue kinds").kind
}

/// Host names of the document, with the prefixes a generator gives them.
fn host_names(doc: &Value) -> Vec<String> {
    let mut v: Vec<String> = doc
        .get("nodes")
        .and_then(|n| n.get("hosts"))
        .and_then(|a| a.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    match doc.get("topology").and_then(kind_of) {
        Some("dumbbell") => v.extend(["src0", "dst0", "src*", "dst*"].map(String::from)),
        Some("star") => v.extend(["h0", "h1", "sink", "h*"].map(String::from)),
        Some("parking-lot") => {
            v.extend(["long_src", "long_dst", "cross_src*", "cross_dst0"].map(String::from))
        }
        Some("fat-tree") => v.extend(["h0-0-0", "h1-0-1", "h0-*", "h*"].map(String::from)),
        Some("edges") => v.extend(["client0", "server1", "client*", "server*"].map(String::from)),
        Some("graphml") => {
            v.extend(["Seattle-h0", "New_York-h0", "Atlanta-h*", "*"].map(String::from))
        }
        _ => {}
    }
    v
}

/// A host list for a workload: real hosts, patterns, the empty list, a
/// name that is no host, or the same hosts as another list.
fn host_list(hosts: &[String], rng: &mut Pcg64Mcg) -> Value {
    let n = rng.gen_range(0..4);
    let mut a = Vec::new();
    for _ in 0..n {
        let h = if hosts.is_empty() || rng.gen_bool(0.1) {
            ["nowhere", "*", "", "h*x"]
                .choose(rng)
                .expect("nonempty")
                .to_string()
        } else {
            hosts.choose(rng).expect("nonempty").clone()
        };
        a.push(Value::String(h));
    }
    Value::Array(a)
}

/// CDF sources: the shipped ones and files that are no CDF (special
/// files must be refused before any read).
const CDF_SIZES: &[&str] = &[
    "web-search",
    "data-mining",
    "web-search",
    "/dev/zero",
    "/dev/null",
    "/dev/full",
    "/",
    "/proc/self/status",
    "no-such-file.cdf",
    "",
];

/// A workload: a new one of any registered kind (its required keys at
/// their examples, hosts from the document), or an existing one's host
/// sets rewired (senders that are their only receivers, empty sets,
/// patterns) or its size source changed.
pub fn workload(doc: &mut Value, rng: &mut Pcg64Mcg) -> String {
    let hosts = host_names(doc);
    let host_keys = ["client", "server", "servers", "senders", "receivers"];
    let root = doc.as_table_mut().expect("root table");
    let ws = root
        .entry("workloads")
        .or_insert_with(|| Value::Array(vec![]));
    let Some(ws) = ws.as_array_mut() else {
        return "workloads is not an array".into();
    };
    if ws.is_empty() || rng.gen_bool(0.4) {
        let fams = families();
        let Some(info) = fams[2].kinds.choose(rng) else {
            return "no workload kinds".into();
        };
        let mut t = info.required_example();
        t.insert("kind".into(), Value::String(info.kind.into()));
        t.insert("name".into(), Value::String(format!("w{}", ws.len())));
        for k in host_keys {
            if let Some(v) = t.get_mut(k) {
                *v = if v.is_array() {
                    host_list(&hosts, rng)
                } else {
                    Value::String(
                        hosts
                            .choose(rng)
                            .cloned()
                            .unwrap_or_else(|| "nowhere".into()),
                    )
                };
            }
        }
        if t.contains_key("sizes") {
            t.insert(
                "sizes".into(),
                Value::String(CDF_SIZES.choose(rng).expect("nonempty").to_string()),
            );
        }
        let d = format!("workloads[{}] = {}", ws.len(), Value::Table(t.clone()));
        ws.push(Value::Table(t));
        return d;
    }
    let i = rng.gen_range(0..ws.len());
    let Some(t) = ws[i].as_table_mut() else {
        return format!("workloads[{i}] is not a table");
    };
    let present: Vec<&str> = host_keys
        .iter()
        .copied()
        .filter(|k| t.contains_key(*k))
        .collect();
    match rng.gen_range(0..3) {
        0 if t.contains_key("senders") && t.contains_key("receivers") => {
            // every receiver among the senders, or one host both
            let h = hosts
                .choose(rng)
                .cloned()
                .unwrap_or_else(|| "nowhere".into());
            let senders = if rng.gen_bool(0.5) {
                Value::Array(vec![Value::String(h.clone())])
            } else {
                t["senders"].clone()
            };
            t.insert(
                "receivers".into(),
                Value::Array(vec![Value::String(h.clone())]),
            );
            t.insert("senders".into(), senders.clone());
            format!("workloads[{i}].receivers = [{h:?}] (senders = {senders})")
        }
        1 if t.contains_key("sizes") => {
            let s = CDF_SIZES.choose(rng).expect("nonempty");
            t.insert("sizes".into(), Value::String(s.to_string()));
            format!("workloads[{i}].sizes = {s:?}")
        }
        _ => {
            let Some(k) = present.choose(rng) else {
                return format!("workloads[{i}] has no hosts");
            };
            let v = if matches!(t.get(*k), Some(Value::Array(_))) {
                host_list(&hosts, rng)
            } else {
                Value::String(
                    hosts
                        .choose(rng)
                        .cloned()
                        .unwrap_or_else(|| "nowhere".into()),
                )
            };
            let d = format!("workloads[{i}].{k} = {v}");
            t.insert(k.to_string(), v);
            d
        }
    }
}

/// An array of 0 to 2 names drawn from `pool` (which is not empty).
fn some_of(rng: &mut Pcg64Mcg, pool: &[String]) -> Value {
    let n = rng.gen_range(0..3);
    Value::Array(
        (0..n)
            .map(|_| Value::String(pool.choose(rng).expect("nonempty").clone()))
            .collect(),
    )
}

/// `[output]`: the warm-up around the run's duration, packet capture and
/// the event log of links that exist or not, the pcap snap length and the
/// log's cap at their bounds, log flow groups that exist or not, formats.
pub fn output(doc: &mut Value, rng: &mut Pcg64Mcg) -> String {
    let dur = doc
        .get("duration")
        .and_then(|d| d.as_str())
        .unwrap_or("1s")
        .to_string();
    let mut links: Vec<String> = Vec::new();
    if let Some(a) = doc.get("links").and_then(|l| l.as_array()) {
        for l in a {
            let (x, y) = (
                l.get("a").and_then(|v| v.as_str()),
                l.get("b").and_then(|v| v.as_str()),
            );
            if let Some(n) = l.get("name").and_then(|v| v.as_str()) {
                links.push(n.into());
            }
            if let (Some(x), Some(y)) = (x, y) {
                links.push(format!("{x}->{y}"));
                links.push(format!("{y}->{x}"));
            }
        }
    }
    if doc.get("topology").is_some() {
        links.extend(["bottleneck", "left->right", "hop0", "hub->sink"].map(String::from));
    }
    links.extend(["nope", "", "a->", "->"].map(String::from));
    let mut groups: Vec<String> = (doc.get("flows").and_then(|f| f.as_array()))
        .map(|a| {
            a.iter()
                .filter_map(|f| f.get("group")?.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    groups.extend(["nope", ""].map(String::from));
    let root = doc.as_table_mut().expect("root table");
    let out = root
        .entry("output")
        .or_insert_with(|| Value::Table(Table::new()));
    let Some(t) = out.as_table_mut() else {
        return "output is not a table".into();
    };
    match rng.gen_range(0..5) {
        3 => {
            let v = some_of(rng, &links);
            let mut d = format!("output.log = {v}");
            t.insert("log".into(), v);
            if rng.gen_bool(0.5) {
                let g = some_of(rng, &groups);
                d += &format!(", output.log_flows = {g}");
                t.insert("log_flows".into(), g);
            }
            d
        }
        4 => {
            if rng.gen_bool(0.5) {
                let n = *[0i64, 1, 2, 1000, 50_000_000, 50_000_001, -1, 1 << 62]
                    .choose(rng)
                    .expect("nonempty");
                t.insert("log_max_events".into(), Value::Integer(n));
                format!("output.log_max_events = {n}")
            } else {
                // the event log's or the tables' format (`auto`: refused)
                let f = *["csv", "parquet", "auto", "CSV", "arrow", ""]
                    .choose(rng)
                    .expect("nonempty");
                let k = if rng.gen_bool(0.5) {
                    "log_format"
                } else {
                    "format"
                };
                t.insert(k.into(), Value::String(f.into()));
                format!("output.{k} = {f:?}")
            }
        }
        0 => {
            let w = match rng.gen_range(0..3) {
                0 => dur.clone(),
                1 => [
                    "0s",
                    "1ns",
                    "1ms",
                    "5ms",
                    "9999999ns",
                    "10ms",
                    "1e30s",
                    "-1ms",
                    "0.149s",
                ]
                .choose(rng)
                .expect("nonempty")
                .to_string(),
                _ => format!(
                    "{}{}",
                    super::edge_number_text(rng),
                    UNITS.choose(rng).expect("nonempty")
                ),
            };
            t.insert("warmup".into(), Value::String(w.clone()));
            format!("output.warmup = {w:?} (duration {dur:?})")
        }
        1 => {
            let v = some_of(rng, &links);
            let d = format!("output.pcap = {v}");
            t.insert("pcap".into(), v);
            d
        }
        _ => {
            let n = *[0i64, 53, 54, 128, 1500, 65535, 65536, -1, 1 << 40]
                .choose(rng)
                .expect("nonempty");
            t.insert("pcap_snaplen".into(), Value::Integer(n));
            format!("output.pcap_snaplen = {n}")
        }
    }
}

/// `[lp]`: logical processes named for nodes, prefixes, patterns that match
/// nothing, empty names, values that are no string.
pub fn lp(doc: &mut Value, rng: &mut Pcg64Mcg) -> String {
    let mut names = super::node_names(doc);
    names.extend(host_names(doc));
    names.extend(
        [
            "left", "right", "r0", "r1", "hub", "c0", "e0-0", "a1-*", "*", "nowhere", "",
        ]
        .map(String::from),
    );
    let root = doc.as_table_mut().expect("root table");
    let lp = root
        .entry("lp")
        .or_insert_with(|| Value::Table(Table::new()));
    let Some(t) = lp.as_table_mut() else {
        return "lp is not a table".into();
    };
    let n = rng.gen_range(1..4);
    let mut d = Vec::new();
    for _ in 0..n {
        let k = names.choose(rng).expect("nonempty").clone();
        let v = if rng.gen_bool(0.85) {
            Value::String(
                ["west", "east", "p0", "p1", "", "x"]
                    .choose(rng)
                    .expect("nonempty")
                    .to_string(),
            )
        } else {
            random_value(rng)
        };
        d.push(format!("lp.{k} = {v}"));
        t.insert(k, v);
    }
    d.join("; ")
}

/// The trace files a mutation may name: a valid one (the shipped
/// synthetic cellular trace), one that is missing, a directory, a device.
const TRACE_FILES: &[&str] = &[
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/changing/cellular.trace"
    ),
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/changing/cellular.trace"
    ),
    "/nonexistent.trace",
    "/",
    "/dev/zero",
    "",
];

/// Links that change: an `[[events]]` entry (a link by name or a name that
/// matches none, a time inside, at the edge of or outside the run, one or
/// more of its attributes in range or not; a link going down or up, both
/// or with other attributes; a flow group stopping, or a name that is no
/// group) or a `trace`/`trace_ba` on a link.
pub fn events(doc: &mut Value, rng: &mut Pcg64Mcg) -> String {
    let mut names: Vec<String> = (doc.get("links").and_then(|l| l.as_array()))
        .map(|ls| {
            ls.iter()
                .filter_map(|l| {
                    let n = l.get("name").and_then(|n| n.as_str());
                    let (a, b) = (l.get("a")?.as_str()?, l.get("b")?.as_str()?);
                    Some(n.map_or_else(|| format!("{a}-{b}"), String::from))
                })
                .collect()
        })
        .unwrap_or_default();
    if rng.gen_bool(0.3) {
        // a trace on a link of the document
        let Some(links) = doc.get_mut("links").and_then(|l| l.as_array_mut()) else {
            return "no links".into();
        };
        if links.is_empty() {
            return "no links".into();
        }
        let i = rng.gen_range(0..links.len());
        let k = ["trace", "trace_ba"][rng.gen_range(0..2)];
        let f = TRACE_FILES.choose(rng).expect("nonempty");
        if let Some(t) = links[i].as_table_mut() {
            if rng.gen_bool(0.5) {
                t.remove("rate");
            }
            t.insert(k.into(), Value::String(f.to_string()));
            if rng.gen_bool(0.3) {
                t.insert("trace_once".into(), Value::Boolean(rng.gen_bool(0.8)));
            }
        }
        return format!("links[{i}].{k} = {f:?}");
    }
    names.push("nope".into());
    let mut t = Table::new();
    let at = unit_value("time", rng);
    t.insert("at".into(), at.clone());
    let mut d = vec![format!("at = {at}")];
    if rng.gen_bool(0.2) {
        // a flow group stops (or a name that is no group)
        let mut groups: Vec<String> = (doc.get("flows").and_then(|f| f.as_array()))
            .map(|fs| {
                (fs.iter())
                    .filter_map(|f| Some(f.get("group")?.as_str()?.to_string()))
                    .collect()
            })
            .unwrap_or_default();
        groups.push("nope".into());
        let g = groups.choose(rng).expect("nonempty").clone();
        t.insert("flow".into(), Value::String(g.clone()));
        d.push(format!("flow = {g:?}"));
        let stop = rng.gen_bool(0.9);
        t.insert("stop".into(), Value::Boolean(stop));
        d.push(format!("stop = {stop}"));
    } else {
        let link = names.choose(rng).expect("nonempty").clone();
        t.insert("link".into(), Value::String(link.clone()));
        d.push(format!("link = {link:?}"));
    }
    // down / up: mostly alone and true, now and then both, false, or with
    // a rate
    for k in ["down", "up"] {
        if rng.gen_bool(0.25) {
            let v = rng.gen_bool(0.9);
            t.insert(k.into(), Value::Boolean(v));
            d.push(format!("{k} = {v}"));
        }
    }
    if rng.gen_bool(0.2) {
        // queue parameters: CoDel's two, or a key no discipline changes
        let mut q = Table::new();
        for k in ["target", "interval", "limit"] {
            if rng.gen_bool(0.5) {
                let v = unit_value("time", rng);
                d.push(format!("queue.{k} = {v}"));
                q.insert(k.into(), v);
            }
        }
        t.insert("queue".into(), Value::Table(q));
    }
    let switch = t.contains_key("down") || t.contains_key("up");
    for k in ["rate", "rate_ba", "delay", "loss_ab", "loss_ba"] {
        if rng.gen_bool(if switch { 0.05 } else { 0.4 }) {
            let v = match k {
                "rate" | "rate_ba" => unit_value("bit/s", rng),
                "delay" => unit_value("time", rng),
                _ => unit_value("probability", rng),
            };
            d.push(format!("{k} = {v}"));
            t.insert(k.into(), v);
        }
    }
    let root = doc.as_table_mut().expect("root table");
    let evs = root
        .entry("events")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Some(a) = evs.as_array_mut() else {
        return "events is not an array".into();
    };
    a.push(Value::Table(t));
    format!("events[{}]: {}", a.len() - 1, d.join(", "))
}

/// The dotted `--set` / sweep form of a path; arrays of named tables by
/// name (`links.bottleneck.rate`) or by index.
pub fn dotted(doc: &Value, p: &[Seg], by_name: bool) -> String {
    let mut out = Vec::new();
    for (i, s) in p.iter().enumerate() {
        match s {
            Seg::Key(k) => out.push(k.clone()),
            Seg::Idx(n) => {
                let el = get(doc, &p[..=i]);
                let name = el.and_then(|e| {
                    e.get("name")
                        .or_else(|| e.get("group"))
                        .and_then(|v| v.as_str())
                        .map(String::from)
                });
                match name {
                    Some(nm) if by_name && !nm.contains('.') => out.push(nm),
                    _ => out.push(n.to_string()),
                }
            }
        }
    }
    out.join(".")
}

/// `[sweep]`: an axis over any key of the document (by name or index, or
/// a key that is not there), values of its type or any, labels that
/// match or not; seeds at edges; a report link that exists or not.
pub fn sweep(doc: &mut Value, rng: &mut Pcg64Mcg) -> String {
    let leaves: Vec<Vec<Seg>> = paths(doc)
        .into_iter()
        .filter(|p| !p.is_empty() && !matches!(p.first(), Some(Seg::Key(k)) if k == "sweep"))
        .collect();
    let axis_path = leaves.choose(rng).cloned();
    let (key, old) = match &axis_path {
        Some(p) if rng.gen_bool(0.9) => (dotted(doc, p, rng.gen_bool(0.5)), get(doc, p).cloned()),
        _ => (
            ["nope.key", "", "links.99.rate", "tcp.nope"]
                .choose(rng)
                .expect("nonempty")
                .to_string(),
            None,
        ),
    };
    let root = doc.as_table_mut().expect("root table");
    let sw = root
        .entry("sweep")
        .or_insert_with(|| Value::Table(Table::new()));
    let Some(t) = sw.as_table_mut() else {
        return "sweep is not a table".into();
    };
    match rng.gen_range(0..8) {
        // an axis whose key is past (or at) the key path bound
        6 => {
            let (key, d) = long_key_path(rng);
            let mut ax = Table::new();
            ax.insert("key".into(), Value::String(key));
            ax.insert(
                "values".into(),
                Value::Array(vec![Value::Integer(1), Value::Integer(2)]),
            );
            let vary = t.entry("vary").or_insert_with(|| Value::Array(vec![]));
            let Some(vary) = vary.as_array_mut() else {
                return "sweep.vary is not an array".into();
            };
            let i = vary.len();
            vary.push(Value::Table(ax));
            format!("sweep.vary[{i}].key = {d}")
        }
        // long axes: more combinations than a sweep may have, refused
        // before any point is made
        7 => {
            let axes = rng.gen_range(1..=3);
            let per = match axes {
                1 => aqmlab::scenario::MAX_SWEEP_POINTS + rng.gen_range(1..1000),
                2 => rng.gen_range(317..2000),
                _ => rng.gen_range(47..200),
            };
            let vary = t.entry("vary").or_insert_with(|| Value::Array(vec![]));
            let Some(vary) = vary.as_array_mut() else {
                return "sweep.vary is not an array".into();
            };
            let first = vary.len();
            for _ in 0..axes {
                let mut ax = Table::new();
                ax.insert("key".into(), Value::String(key.clone()));
                ax.insert(
                    "values".into(),
                    Value::Array((0..per as i64).map(Value::Integer).collect()),
                );
                vary.push(Value::Table(ax));
            }
            format!(
                "sweep.vary[{first}..{}] = {axes} axes of {per} values on {key}",
                first + axes
            )
        }
        0 => {
            let n = *[0i64, 1, 2, 3, 100, 100_000, -1]
                .choose(rng)
                .expect("nonempty");
            t.insert("seeds".into(), Value::Integer(n));
            format!("sweep.seeds = {n}")
        }
        1 => {
            let l = ["left->right", "bottleneck", "r1->r2", "nope", ""]
                .choose(rng)
                .expect("nonempty");
            t.insert("link".into(), Value::String(l.to_string()));
            format!("sweep.link = {l:?}")
        }
        _ => {
            let nv = rng.gen_range(0..4);
            let mut values = Vec::new();
            if let Some(o) = old {
                values.push(o);
            }
            for _ in 0..nv {
                values.push(random_value(rng));
            }
            let mut ax = Table::new();
            ax.insert("key".into(), Value::String(key.clone()));
            let labels = rng.gen_bool(0.3).then(|| {
                let n = if rng.gen_bool(0.7) {
                    values.len()
                } else {
                    values.len() + 1
                };
                Value::Array((0..n).map(|i| Value::String(format!("v{i}"))).collect())
            });
            ax.insert("values".into(), Value::Array(values));
            if let Some(l) = labels {
                ax.insert("labels".into(), l);
            }
            let vary = t.entry("vary").or_insert_with(|| Value::Array(vec![]));
            let Some(vary) = vary.as_array_mut() else {
                return "sweep.vary is not an array".into();
            };
            let d = format!("sweep.vary[{}] = {}", vary.len(), Value::Table(ax.clone()));
            vary.push(Value::Table(ax));
            d
        }
    }
}

/// A key path at or past the bound (`MAX_KEY_PATH_PARTS` parts,
/// `MAX_KEY_PATH_CHARS` characters): deep (up to 20 000 parts), long (up
/// to 10⁵ characters) or both. Returns (path, description), the
/// description short (`<key path of N parts, M characters>`).
pub fn long_key_path(rng: &mut Pcg64Mcg) -> (String, String) {
    use aqmlab::scenario::{MAX_KEY_PATH_CHARS, MAX_KEY_PATH_PARTS};
    let head = *["tcp", "links.0", "output", "flows.0", "a"]
        .choose(rng)
        .expect("nonempty");
    let path = match rng.gen_range(0..3) {
        0 => {
            let n = *[
                MAX_KEY_PATH_PARTS - 1,
                MAX_KEY_PATH_PARTS,
                33,
                5_000,
                7_000,
                20_000,
            ]
            .choose(rng)
            .expect("nonempty");
            std::iter::once(head)
                .chain(std::iter::repeat_n("a", n - 1))
                .collect::<Vec<_>>()
                .join(".")
        }
        1 => {
            let n = *[MAX_KEY_PATH_CHARS, MAX_KEY_PATH_CHARS + 1, 10_000, 100_000]
                .choose(rng)
                .expect("nonempty");
            let c = *['x', 'é', '日'].choose(rng).expect("nonempty");
            format!(
                "{head}.{}",
                std::iter::repeat_n(c, n.saturating_sub(head.chars().count() + 1))
                    .collect::<String>()
            )
        }
        _ => {
            let n = rng.gen_range(40..3000);
            std::iter::once(head.to_string())
                .chain((0..n).map(|i| format!("k{i}")))
                .collect::<Vec<_>>()
                .join(".")
        }
    };
    let d = format!(
        "<key path of {} parts, {} characters>",
        path.split('.').count(),
        path.chars().count()
    );
    (path, d)
}

/// A name (scenario, node, link, group, workload) at, or just past, the
/// length limit, in one- and multi-byte characters; a node renamed
/// everywhere it is referred to.
pub fn long_name(doc: &mut Value, rng: &mut Pcg64Mcg) -> String {
    let limit = aqmlab::scenario::MAX_NAME_CHARS;
    let n = *[limit - 1, limit, limit, limit + 1, 1000, 100_000]
        .choose(rng)
        .expect("nonempty");
    let c = *['x', 'é', '日', '-'].choose(rng).expect("nonempty");
    let name: String = std::iter::repeat_n(c, n).collect();
    let cands: Vec<Vec<Seg>> = paths(doc)
        .into_iter()
        .filter(|p| {
            matches!(
                (p.first(), last_key(p)),
                (Some(Seg::Key(_)), Some("name" | "group"))
            ) || matches!(p.get(1), Some(Seg::Key(k)) if k == "hosts" || k == "routers")
                && p.len() == 3
        })
        .collect();
    let Some(p) = cands.choose(rng).cloned() else {
        return "no name".into();
    };
    let old = get(doc, &p).and_then(|v| v.as_str()).map(String::from);
    let is_node = p.len() == 3 && matches!(p.first(), Some(Seg::Key(k)) if k == "nodes");
    if let (true, Some(old)) = (is_node, &old) {
        // rename the node in every reference
        fn rename(v: &mut Value, old: &str, new: &str) {
            match v {
                Value::String(s) if s == old => *s = new.to_string(),
                Value::Array(a) => a.iter_mut().for_each(|x| rename(x, old, new)),
                Value::Table(t) => t.iter_mut().for_each(|(_, x)| rename(x, old, new)),
                _ => {}
            }
        }
        rename(doc, old, &name);
    } else if let Some(v) = get_mut(doc, &p) {
        *v = Value::String(name);
    }
    format!("{} = <{n} × {c:?}>", path_str(&p))
}
