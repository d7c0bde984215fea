//! A scenario fuzzer for aqmlab.
//!
//! Each case starts from a scenario of the corpus (the repository's
//! `scenarios/` plus a few built-in ones that cover what those do not: CBR
//! sources, HTTP workloads, every queue kind) and applies 1 to 4 mutations:
//!
//! - **structured** (on the parsed TOML tree): numbers replaced by edge values
//!   (0, -1, 2³², i64::MAX, NaN, ±inf, ×10^k); numbers and units inside unit
//!   strings (`"1e30s"`, `"18446744073709551615ns"`, `"5 parsecs"`); a
//!   value's type changed; keys deleted, renamed or added; references
//!   (`src`, `dst`, `a`, `b`, `client`, `server`, `kind`, `cc`) pointed at
//!   other names; topology (links, nodes, flows and workloads removed,
//!   duplicated, rewired); `[output]` intervals and `--set` overrides;
//! - **raw** (on the text): bytes flipped, inserted or deleted, lines
//!   duplicated or dropped, the text truncated.
//!
//! Then it drives the library in-process: parse → validate → resource
//! limits ([`Limits::DEFAULT`]) → build → run the first [`SIM_WINDOW_NS`] of
//! simulated time, and checks the physical invariants of the results
//! ([`aqmlab::metrics::invariants`]: goodput and throughput bins within
//! the links' capacity, utilisation in [0, 1], delays ≥ 0, no NaN or
//! infinity, conservation; an imported topology's file recorded with the
//! SHA-256 of the text it was expanded from; the warnings of listed causes,
//! one line each, the same as the scenario's own). A broken invariant or any panic is a failure;
//! a rejection is classified by how its message points at the fault
//! ([`pointer`]);
//! the binary adds an allocation and a wall-time budget per case. Cases are
//! a pure function of (seed, index): the same command finds the same cases.

use aqmlab::scenario::limits::Limits;
use aqmlab::{Scenario, Simulation};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::path::Path;
use toml::Value;

mod features;
pub use features::{TABLE_KEYS, TOPOLOGY_KEYS};

/// Simulated time each accepted case runs, ns (10 ms).
pub const SIM_WINDOW_NS: u64 = 10_000_000;

/// A scenario of the corpus: where it came from, and its text.
#[derive(Clone, Debug)]
pub struct Seed {
    pub name: String,
    pub text: String,
}

/// Scenarios that cover what `scenarios/` does not.
const BUILTIN: &[(&str, &str)] = &[
    (
        "builtin/cbr-fq_codel.toml",
        include_str!("../seeds/cbr-fq_codel.toml"),
    ),
    (
        "builtin/http-pie.toml",
        include_str!("../seeds/http-pie.toml"),
    ),
    (
        "builtin/mixed-queues.toml",
        include_str!("../seeds/mixed-queues.toml"),
    ),
    (
        "builtin/gen-dumbbell.toml",
        include_str!("../seeds/gen-dumbbell.toml"),
    ),
    (
        "builtin/gen-parking-lot.toml",
        include_str!("../seeds/gen-parking-lot.toml"),
    ),
    (
        "builtin/gen-fat-tree.toml",
        include_str!("../seeds/gen-fat-tree.toml"),
    ),
    (
        "builtin/star-stacks.toml",
        include_str!("../seeds/star-stacks.toml"),
    ),
    (
        "builtin/queues-edge.toml",
        include_str!("../seeds/queues-edge.toml"),
    ),
    (
        "builtin/names-limit.toml",
        include_str!("../seeds/names-limit.toml"),
    ),
];

/// The corpus: every `*.toml` under `dir` (sorted by path, so the order is
/// the same on every machine) plus the built-in seeds.
pub fn corpus(dir: &Path) -> Vec<Seed> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "toml")
                && !aqmlab::scenario::REPRODUCTION_DATA_FILES
                    .iter()
                    .any(|f| p.ends_with(f))
            {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut v: Vec<Seed> = files
        .iter()
        .filter_map(|p| {
            // a shipped scenario names its trace (or imported topology)
            // relative to its own folder; the fuzzer loads scenario text
            // without a file, so such a path is made absolute
            let folder = p.parent().unwrap_or(dir);
            let text = std::fs::read_to_string(p)
                .ok()?
                .replace("trace = \"", &format!("trace = \"{}/", folder.display()))
                .replace("\nfile = \"", &format!("\nfile = \"{}/", folder.display()));
            Some(Seed {
                name: p.strip_prefix(dir).unwrap_or(p).display().to_string(),
                text,
            })
        })
        .collect();
    v.extend(BUILTIN.iter().map(|(n, t)| Seed {
        name: n.to_string(),
        text: t.to_string(),
    }));
    v
}

/// One generated case.
#[derive(Clone, Debug)]
pub struct Case {
    pub index: u64,
    /// The seed scenario it started from.
    pub seed_name: String,
    /// The mutations applied, in order.
    pub mutations: Vec<String>,
    /// `--set` overrides applied on top of the text.
    pub overrides: Vec<String>,
    /// Expand the `[sweep]` instead of running one scenario.
    pub sweep: bool,
    /// Run an accepted case again on this many threads (its `[lp]` or the
    /// partitioner's processes) and require the same results; 1: once.
    pub threads: usize,
    pub text: String,
}

/// What happened to a case that did not panic.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Refused with this message (bad TOML, bad value, above a limit).
    Rejected(String),
    /// Built and ran, and its results hold every physical invariant
    /// ([`aqmlab::metrics::invariants`]).
    Ran,
    /// Built and ran, and its results break an invariant (a failure).
    Violated(String),
}

/// How an exit-2 message points at what is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pointer {
    /// It names the key path (`` `links[0].rate`: … ``) or a CLI option.
    Key,
    /// A TOML syntax error: it names the line and column (the text no
    /// longer parses, so there is no key to name).
    Line,
    /// It names no key, or only a top-level table while the mutation was
    /// deeper in it (`` `topology`: invalid rate ``): a defect to fix.
    None,
}

/// The key path a structured mutation description starts with
/// (`links[0].rate = …`, `delete flows[1]`, `rename a.b -> c`).
fn mutated_path(m: &str) -> Option<&str> {
    let m = m
        .strip_prefix("delete ")
        .or_else(|| m.strip_prefix("rename "))
        .unwrap_or(m);
    let end = m.find([' ', '=']).unwrap_or(m.len());
    let p = &m[..end];
    (!p.is_empty() && !p.starts_with("--")).then_some(p)
}

/// Classify the message `msg` of a case rejected after `mutations`.
pub fn pointer(msg: &str, mutations: &[String]) -> Pointer {
    if msg.contains(": invalid TOML:") {
        return Pointer::Line;
    }
    let Some(key) = msg
        .split_once('`')
        .and_then(|(_, rest)| rest.split_once("`:"))
        .map(|(k, _)| k)
    else {
        return Pointer::None;
    };
    if key.is_empty() || key == "(top level)" {
        return Pointer::None;
    }
    // a bare top-level table named for a mutation inside it
    let bare = !key.contains(['.', '[']);
    let deeper = mutations.iter().filter_map(|m| mutated_path(m)).any(|p| {
        p.strip_prefix(key)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
    });
    let shallow_only = mutations
        .iter()
        .filter_map(|m| mutated_path(m))
        .all(|p| p.starts_with(key) && p.len() > key.len());
    if bare && deeper && shallow_only {
        Pointer::None
    } else {
        Pointer::Key
    }
}

/// The features the mutations aim at, each with the text its mutations'
/// descriptions contain (a case counts towards every feature it touches;
/// one that touches none is `other`).
pub const FEATURES: &[(&str, &str)] = &[
    ("topology", "topology"),
    ("workloads", "workloads["),
    ("warm-up", "output.warmup"),
    ("pcap", "output.pcap"),
    ("event log", "output.log"),
    ("lp", "lp."),
    ("sweep", "sweep."),
    ("cc key", ".cc."),
    ("tcp key", "tcp."),
    ("long name", " × "),
    ("events", "events["),
    ("trace", ".trace"),
    ("import", "topology.file"),
    ("--set", "--set "),
    ("key path", "<key path of "),
];

/// The features of a case with these mutations ([`FEATURES`]), or
/// `["other"]`.
pub fn features_of(mutations: &[String]) -> Vec<&'static str> {
    let f: Vec<&'static str> = FEATURES
        .iter()
        .filter(|(_, needle)| mutations.iter().any(|m| m.contains(needle)))
        .map(|(f, _)| *f)
        .collect();
    if f.is_empty() {
        vec!["other"]
    } else {
        f
    }
}

/// Words of a deserializer, not of a person: a message holding one has
/// not been put in the scenario's terms.
pub const RAW_PHRASES: &[&str] = &[
    "invalid type",
    "invalid value:",
    "invalid length",
    "unit variant",
    "unknown variant",
    "expected string only",
    "CSV error",
    "expected struct",
    "expected enum",
    "expected f64",
    "expected u64",
    "expected u32",
    "expected i64",
    "expected usize",
];

/// Longest message line that is still read as one message, characters.
pub const MAX_MESSAGE_CHARS: usize = 1000;

/// Why a refusal's message does not help a person act on it, or None.
/// Mechanical: it names no key ([`pointer`]); it holds a deserializer's
/// words ([`RAW_PHRASES`]); it is more than one line (a TOML syntax error
/// may be: it draws the line and a caret) or longer than
/// [`MAX_MESSAGE_CHARS`]; it echoes more than 200 characters of one value
/// (a quoted span or a run without spaces, after the `… (N more
/// characters)` of a cut echo is taken out).
pub fn unclear(msg: &str, mutations: &[String]) -> Option<&'static str> {
    let p = pointer(msg, mutations);
    if p == Pointer::None {
        return Some("names no key");
    }
    if RAW_PHRASES.iter().any(|w| msg.contains(w)) {
        return Some("a deserializer's words");
    }
    if p != Pointer::Line && msg.trim_end().lines().count() > 1 {
        return Some("more than one line");
    }
    if msg.lines().any(|l| l.chars().count() > MAX_MESSAGE_CHARS) {
        return Some("longer than 1000 characters");
    }
    if longest_echo(msg) > aqmlab::echo::MAX_ECHO + 1 {
        return Some("an echo over 200 characters");
    }
    None
}

/// The longest quoted span (`` ` `` or `"`) or run without spaces (its
/// quotes and punctuation not counted) of `msg`, characters, once every cut echo's `… (N more characters)` is
/// taken out.
pub fn longest_echo(msg: &str) -> usize {
    let mut m = msg.to_string();
    while let Some(i) = m.find("… (") {
        match m[i..].find(" more characters)") {
            Some(j) => m.replace_range(i + '…'.len_utf8()..i + j + " more characters)".len(), ""),
            None => break,
        }
    }
    let mut most = 0;
    for line in m.lines() {
        let mut run = 0usize;
        let mut quote: Option<char> = None;
        let mut span = 0usize;
        for c in line.chars() {
            // quotes and the punctuation around an echo are not part of it
            run = match c {
                ' ' => 0,
                '`' | '"' | ':' | ';' | ',' | '(' | ')' => run,
                _ => run + 1,
            };
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => span += 1,
                None if c == '`' || c == '"' => {
                    quote = Some(c);
                    span = 0;
                }
                None => {}
            }
            most = most.max(run).max(span);
        }
    }
    most
}

/// Generate case `index` of the run with `seed`.
pub fn make_case(corpus: &[Seed], seed: u64, index: u64) -> Case {
    let mut rng = Pcg64Mcg::seed_from_u64(
        seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03),
    );
    let s = &corpus[rng.gen_range(0..corpus.len())];
    let mut muts = Vec::new();
    let mut overrides = Vec::new();
    let mut doc: Value = toml::from_str(&s.text).expect("corpus scenarios parse");
    // mostly one mutation, so that most cases get past parsing
    let n = *[1, 1, 1, 1, 1, 2, 2, 2, 3, 4]
        .choose(&mut rng)
        .expect("nonempty");
    let raw_last = rng.gen_bool(0.15);
    for _ in 0..n {
        muts.push(mutate(&mut doc, corpus, &mut rng));
    }
    if rng.gen_bool(0.1) {
        let o = random_override(&doc, &mut rng);
        muts.push(format!("--set {o}"));
        overrides.push(o);
    } else if rng.gen_bool(0.01) {
        // a key path past (or at) the bound: deep, long or both
        let (o, d) = features::long_key_path(&mut rng);
        muts.push(format!("--set {d}=1"));
        overrides.push(format!("{o}=1"));
    }
    let sweep = doc.get("sweep").is_some()
        && (rng.gen_bool(0.3) || muts.iter().any(|m| m.starts_with("sweep")));
    let threads = if rng.gen_bool(0.1) {
        rng.gen_range(2..=3)
    } else {
        1
    };
    let mut text = toml::to_string(&doc).unwrap_or_else(|_| s.text.clone());
    if raw_last {
        let k = rng.gen_range(1..=3);
        for _ in 0..k {
            muts.push(raw_mutation(&mut text, &mut rng));
        }
    }
    Case {
        index,
        seed_name: s.name.clone(),
        mutations: muts,
        overrides,
        sweep,
        threads,
        text,
    }
}

/// Run a case through the library. A panic propagates (the caller catches
/// it); everything else is an [`Outcome`].
pub fn run_case(c: &Case) -> Outcome {
    if c.sweep {
        return match Scenario::sweep_from_toml(&c.text, "fuzz.toml", &c.overrides) {
            Ok(points) => {
                // each point is a full scenario: check one point's limits
                // and run it, like `aqmlab sweep` does for every point
                match points.get(c.index as usize % points.len().max(1)) {
                    Some(p) => run_scenario(&p.scenario, c.threads),
                    None => Outcome::Rejected("no sweep points".into()),
                }
            }
            Err(e) => rejected(e.to_string()),
        };
    }
    match Scenario::from_toml_with(&c.text, "fuzz.toml", &c.overrides) {
        Ok(sc) => run_scenario(&sc, c.threads),
        Err(e) => rejected(e.to_string()),
    }
}

fn rejected(m: String) -> Outcome {
    assert!(!m.trim().is_empty(), "empty error message");
    Outcome::Rejected(m)
}

/// An imported topology (`topology.file`) is recorded for
/// `provenance.json`: one input under that key whose SHA-256 and size are
/// those of the text it was expanded from.
fn import_recorded(sc: &Scenario) -> Result<(), String> {
    if sc.generated_by != Some("topology.file") {
        return Ok(());
    }
    let recs: Vec<_> = (sc.inputs.iter())
        .filter(|f| f.key == "topology.file")
        .collect();
    let [f] = recs.as_slice() else {
        return Err(format!(
            "an imported topology has {} inputs under topology.file, not 1",
            recs.len()
        ));
    };
    let got = aqmlab::scenario::files::sha256_hex(f.text.as_bytes());
    if got != f.sha256 || f.bytes != f.text.len() as u64 {
        return Err(format!(
            "topology.file `{}`: recorded SHA-256 {} ({} bytes), its text has {got} ({} bytes)",
            f.path,
            f.sha256,
            f.bytes,
            f.text.len()
        ));
    }
    Ok(())
}

fn run_scenario(sc: &Scenario, threads: usize) -> Outcome {
    if let Err((k, m)) = sc.check_limits(&Limits::DEFAULT) {
        return rejected(format!("fuzz.toml: `{k}`: {m}"));
    }
    if let Err(m) = import_recorded(sc) {
        return Outcome::Violated(m);
    }
    let mut sim = Simulation::new(sc, sc.seed);
    sim.set_duration(sc.duration.0.min(SIM_WINDOW_NS));
    let r = sim.run();
    if let Err(m) = aqmlab::metrics::invariants::check(sc, sc.seed, &r) {
        return Outcome::Violated(m);
    }
    if let Err(m) = warnings_hold(sc, &r) {
        return Outcome::Violated(m);
    }
    if threads > 1 {
        // determinism: the same results whatever the thread count
        let mut par = Simulation::with_threads(sc, sc.seed, threads);
        par.set_duration(sc.duration.0.min(SIM_WINDOW_NS));
        let p = par.run();
        let (a, b) = (comparable(&r), comparable(&p));
        if a != b {
            let at = a
                .bytes()
                .zip(b.bytes())
                .position(|(x, y)| x != y)
                .unwrap_or(a.len().min(b.len()));
            let from = at.saturating_sub(60);
            return Outcome::Violated(format!(
                "threads {threads}: results differ from one thread's at byte {at}: {:?} vs {:?}",
                a.get(from..(at + 60).min(a.len())).unwrap_or(""),
                b.get(from..(at + 60).min(b.len())).unwrap_or("")
            ));
        }
    }
    Outcome::Ran
}

/// The run's warnings: each of a listed cause, naming a key, on one line of
/// at most 1 000 characters, and the same as the scenario's own
/// (`Scenario::warnings`, computed apart from any run).
fn warnings_hold(sc: &Scenario, r: &aqmlab::RunResult) -> Result<(), String> {
    use aqmlab::scenario::warnings::CAUSES;
    for w in &r.warnings {
        if !CAUSES.iter().any(|(c, _)| *c == w.cause) {
            return Err(format!("warning of an unlisted cause `{}`", w.cause));
        }
        if w.key.is_empty() || w.message.contains('\n') || w.message.chars().count() > 1000 {
            return Err(format!(
                "warning [{}] not one line naming a key: {:?}",
                w.cause, w.key
            ));
        }
    }
    if sc.warnings() != r.warnings {
        return Err("the run's warnings differ from the scenario's".into());
    }
    Ok(())
}

/// Everything a run computes, without what may differ between equal runs
/// (wall time, the parallel run's own report).
fn comparable(r: &aqmlab::RunResult) -> String {
    let mut r = r.clone();
    r.wall_seconds = 0.0;
    r.timings = Default::default();
    r.parallel = None;
    format!("{r:?}")
}

// ---- structured mutations ------------------------------------------------

#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Idx(usize),
}

fn path_str(p: &[Seg]) -> String {
    let mut s = String::new();
    for (i, seg) in p.iter().enumerate() {
        match seg {
            Seg::Key(k) => {
                if i > 0 {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Idx(n) => s.push_str(&format!("[{n}]")),
        }
    }
    s
}

/// Every path in the tree (tables, arrays and leaves).
fn paths(v: &Value) -> Vec<Vec<Seg>> {
    fn walk(v: &Value, cur: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
        out.push(cur.clone());
        match v {
            Value::Table(t) => {
                for (k, x) in t {
                    cur.push(Seg::Key(k.clone()));
                    walk(x, cur, out);
                    cur.pop();
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    cur.push(Seg::Idx(i));
                    walk(x, cur, out);
                    cur.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, &mut Vec::new(), &mut out);
    out
}

fn get<'a>(v: &'a Value, p: &[Seg]) -> Option<&'a Value> {
    let mut cur = v;
    for s in p {
        cur = match (s, cur) {
            (Seg::Key(k), Value::Table(t)) => t.get(k)?,
            (Seg::Idx(i), Value::Array(a)) => a.get(*i)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn get_mut<'a>(v: &'a mut Value, p: &[Seg]) -> Option<&'a mut Value> {
    let mut cur = v;
    for s in p {
        cur = match (s, cur) {
            (Seg::Key(k), Value::Table(t)) => t.get_mut(k)?,
            (Seg::Idx(i), Value::Array(a)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(cur)
}

const KEYS: &[&str] = &[
    "name",
    "duration",
    "seed",
    "nodes",
    "hosts",
    "routers",
    "links",
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
    "trace",
    "trace_ba",
    "events",
    "at",
    "link",
    "down",
    "up",
    "stop",
    "queue",
    "tcp",
    "mss",
    "header_bytes",
    "init_cwnd",
    "init_ssthresh",
    "max_window",
    "min_rto",
    "max_rto",
    "initial_rto",
    "granularity",
    "delayed_ack",
    "delack_count",
    "delack_timeout",
    "dupack_threshold",
    "handshake",
    "ecn",
    "fin",
    "flows",
    "group",
    "src",
    "dst",
    "count",
    "cc",
    "start",
    "start_spread",
    "size",
    "cbr",
    "packet_size",
    "trace_cwnd",
    "workloads",
    "kind",
    "client",
    "server",
    "connections",
    "request_size",
    "response_size",
    "sessions",
    "inter_page",
    "objects_min",
    "objects_max",
    "inter_object",
    "size_min",
    "size_max",
    "shape",
    "size_unit",
    "probes",
    "output",
    "sample_interval",
    "cwnd_interval",
    "throughput_bin",
    "sweep",
    "seeds",
    "vary",
    "key",
    "values",
    "labels",
    "limit",
    "min_th",
    "max_th",
    "max_p",
    "w_q",
    "target",
    "interval",
    "flows",
    "quantum",
    "bins",
    "variant",
    "threshold",
    "mu",
    "update_period",
    "alpha",
    "beta",
    "gentle",
    "mean_pktsize",
    // [tcp] keys the registry's TCP_PARAMS does not list (yet)
    "syn_rto",
    "sack_variant",
    "rto_restart",
];

/// Kind names: every registered queue kind, congestion control and
/// workload, plus a few that are not.
fn kinds() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = aqmlab::aqm::QueueSpec::KINDS.to_vec();
    v.extend_from_slice(aqmlab::tcp::cc::CcConfig::NAMES);
    v.extend_from_slice(&["http", "web", "", "RED", "blue"]);
    v
}

fn any_kind(rng: &mut Pcg64Mcg) -> String {
    kinds().choose(rng).expect("nonempty").to_string()
}

const UNITS: &[&str] = &[
    "ns", "us", "ms", "s", "min", "bps", "kbps", "Mbps", "Gbps", "Tbps", "B", "KB", "MB", "GB",
    "KiB", "MiB", "GiB", "p", "pkts", "", "parsecs", "e", "s s", "µs",
];

fn edge_int(rng: &mut Pcg64Mcg) -> i64 {
    *[
        0,
        1,
        -1,
        2,
        3,
        7,
        100,
        1000,
        65535,
        65536,
        1 << 31,
        (1 << 32) - 1,
        1 << 32,
        (1 << 53) + 1,
        i64::MAX,
        i64::MIN,
        -1000,
        1_000_000,
        100_000_000,
        rng.gen_range(-10..1000),
    ]
    .choose(rng)
    .expect("nonempty")
}

fn edge_float(rng: &mut Pcg64Mcg) -> f64 {
    *[
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        1e-300,
        1e300,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MIN_POSITIVE,
        0.999_999_9,
        1.000_001,
        2.0,
        1e9,
        rng.gen_range(-1.0..2.0),
    ]
    .choose(rng)
    .expect("nonempty")
}

fn edge_number_text(rng: &mut Pcg64Mcg) -> String {
    [
        "0",
        "1",
        "-1",
        "0.5",
        "1e30",
        "1e-30",
        "18446744073709551615",
        "18446744073709551616",
        "4294967296000",
        "4294967295",
        "9007199254740993",
        "1e18",
        "1e9",
        "NaN",
        "inf",
        "-0",
        "1.5e",
        "",
        "+3",
        "99999999999999999999999",
        "1000000000",
        "0.000000001",
    ]
    .choose(rng)
    .expect("nonempty")
    .to_string()
}

fn random_value(rng: &mut Pcg64Mcg) -> Value {
    match rng.gen_range(0..9) {
        0 => Value::Integer(edge_int(rng)),
        1 => Value::Float(edge_float(rng)),
        2 => Value::Boolean(rng.gen()),
        3 => Value::String(format!(
            "{}{}",
            edge_number_text(rng),
            UNITS.choose(rng).expect("nonempty")
        )),
        4 => Value::String(any_kind(rng)),
        5 => Value::Array(vec![]),
        6 => Value::Array(vec![Value::String("h1".into()), Value::Integer(1)]),
        7 => {
            let mut t = toml::Table::new();
            t.insert("kind".into(), Value::String(any_kind(rng)));
            Value::Table(t)
        }
        _ => Value::String("x".repeat(rng.gen_range(0..300))),
    }
}

/// Node names declared in the document (hosts and routers).
fn node_names(doc: &Value) -> Vec<String> {
    let mut v = Vec::new();
    for k in ["hosts", "routers"] {
        if let Some(a) = doc
            .get("nodes")
            .and_then(|n| n.get(k))
            .and_then(|a| a.as_array())
        {
            v.extend(a.iter().filter_map(|x| x.as_str().map(String::from)));
        }
    }
    v
}

fn split_unit(s: &str) -> Option<(&str, &str)> {
    let end = s.find(|c: char| !(c.is_ascii_digit() || ".-+eE".contains(c)))?;
    (end > 0).then(|| (&s[..end], &s[end..]))
}

/// Apply one structured mutation; returns its description.
fn mutate(doc: &mut Value, corpus: &[Seed], rng: &mut Pcg64Mcg) -> String {
    let all = paths(doc);
    let pick = |rng: &mut Pcg64Mcg, f: &dyn Fn(&Value) -> bool, doc: &Value| -> Option<Vec<Seg>> {
        let c: Vec<&Vec<Seg>> = all.iter().filter(|p| get(doc, p).is_some_and(f)).collect();
        c.choose(rng).map(|p| (*p).clone())
    };
    match rng.gen_range(0..23) {
        // a number leaf to an edge value of the same or the other number type
        0 | 1 => {
            let Some(p) = pick(rng, &|v| v.is_integer() || v.is_float(), doc) else {
                return "no number".into();
            };
            let old = get(doc, &p).cloned().expect("path");
            let nv = match (rng.gen_range(0..4), old) {
                // an integer as a size with a unit (`mss = "1000B"`): byte
                // counts such as tcp.mss take both forms
                (3, Value::Integer(x)) => Value::String(format!(
                    "{x}{}",
                    ["B", "KB", "KiB", "b", ""].choose(rng).expect("nonempty")
                )),
                // a nearby value of the same type: most of these stay valid
                (0, Value::Integer(x)) => Value::Integer(
                    (((x as f64) * rng.gen_range(0.0..4.0)).round() as i64)
                        .saturating_add(rng.gen_range(-2..=2)),
                ),
                (0, Value::Float(x)) => Value::Float(x * rng.gen_range(0.0..4.0)),
                (1, _) => Value::Integer(edge_int(rng)),
                _ => Value::Float(edge_float(rng)),
            };
            let d = format!("{} = {nv}", path_str(&p));
            *get_mut(doc, &p).expect("path") = nv;
            d
        }
        // the number or the unit of a unit string
        2 | 3 => {
            let Some(p) = pick(
                rng,
                &|v| v.as_str().is_some_and(|s| split_unit(s).is_some()),
                doc,
            ) else {
                return "no unit string".into();
            };
            let v = get_mut(doc, &p).expect("path");
            let s = v.as_str().expect("string").to_string();
            let (num, unit) = split_unit(&s).expect("unit");
            let ns = match rng.gen_range(0..4) {
                0 => format!("{}{unit}", edge_number_text(rng)),
                1 => format!("{num}{}", UNITS.choose(rng).expect("nonempty")),
                2 => {
                    let x: f64 = num.parse().unwrap_or(1.0);
                    format!("{}{unit}", x * 10f64.powi(rng.gen_range(-12..=24)))
                }
                _ => format!(
                    "{}{}",
                    edge_number_text(rng),
                    UNITS.choose(rng).expect("nonempty")
                ),
            };
            let d = format!("{} = {ns:?}", path_str(&p));
            *v = Value::String(ns);
            d
        }
        // any leaf or table to a value of another type
        4 => {
            let Some(p) = pick(rng, &|_| true, doc) else {
                return "empty".into();
            };
            if p.is_empty() {
                return "root kept".into();
            }
            let nv = random_value(rng);
            let d = format!("{} = {nv}", path_str(&p));
            *get_mut(doc, &p).expect("path") = nv;
            d
        }
        // delete a key
        5 => {
            let Some(p) = pick(rng, &|_| true, doc) else {
                return "empty".into();
            };
            let Some((last, parent)) = p.split_last() else {
                return "root kept".into();
            };
            match (get_mut(doc, parent), last) {
                (Some(Value::Table(t)), Seg::Key(k)) => {
                    t.remove(k);
                }
                (Some(Value::Array(a)), Seg::Idx(i)) => {
                    a.remove(*i);
                }
                _ => {}
            }
            format!("delete {}", path_str(&p))
        }
        // add or rename a key in a table
        6 => {
            let Some(p) = pick(rng, &|v| v.is_table(), doc) else {
                return "no table".into();
            };
            let k = KEYS.choose(rng).expect("nonempty").to_string();
            let val = random_value(rng);
            let t = get_mut(doc, &p)
                .and_then(|v| v.as_table_mut())
                .expect("table");
            let d;
            if rng.gen_bool(0.3) && !t.is_empty() {
                let old = t
                    .keys()
                    .nth(rng.gen_range(0..t.len()))
                    .expect("key")
                    .clone();
                let v = t.remove(&old).expect("present");
                let renamed = if rng.gen_bool(0.5) {
                    k
                } else {
                    format!("{old}_")
                };
                d = if p.is_empty() {
                    format!("rename {old} -> {renamed}")
                } else {
                    format!("rename {}.{old} -> {renamed}", path_str(&p))
                };
                t.insert(renamed, v);
            } else {
                d = if p.is_empty() {
                    format!("{k} = {val}")
                } else {
                    format!("{}.{k} = {val}", path_str(&p))
                };
                t.insert(k, val);
            }
            d
        }
        // a reference to another (or no) node, kind or cc
        7 | 8 => {
            let names = node_names(doc);
            let refs = [
                "a", "b", "src", "dst", "client", "server", "kind", "cc", "group",
            ];
            let c: Vec<&Vec<Seg>> = all
                .iter()
                .filter(|p| matches!(p.last(), Some(Seg::Key(k)) if refs.contains(&k.as_str())))
                .collect();
            let Some(p) = c.choose(rng).map(|p| (*p).clone()) else {
                return "no reference".into();
            };
            let is_kind = matches!(p.last(), Some(Seg::Key(k)) if k == "kind" || k == "cc");
            let nv = if is_kind || names.is_empty() || rng.gen_bool(0.1) {
                any_kind(rng)
            } else if rng.gen_bool(0.1) {
                "nowhere".to_string()
            } else {
                names.choose(rng).expect("nonempty").clone()
            };
            let d = format!("{} = {nv:?}", path_str(&p));
            *get_mut(doc, &p).expect("path") = Value::String(nv);
            d
        }
        // topology and arrays: duplicate, remove or rewire elements
        9 | 10 => {
            let arrays = ["links", "flows", "workloads"];
            let which = arrays.choose(rng).expect("nonempty");
            let names = node_names(doc);
            let Some(Value::Array(a)) = doc.get_mut(*which) else {
                return format!("no {which}");
            };
            if a.is_empty() {
                return format!("{which} empty");
            }
            let i = rng.gen_range(0..a.len());
            match rng.gen_range(0..4) {
                0 => {
                    let x = a[i].clone();
                    a.push(x);
                    format!("duplicate {which}[{i}]")
                }
                1 => {
                    a.remove(i);
                    format!("remove {which}[{i}]")
                }
                2 if !names.is_empty() => {
                    let (ka, kb) = match *which {
                        "links" => ("a", "b"),
                        "flows" => ("src", "dst"),
                        _ => ("client", "server"),
                    };
                    let k = if rng.gen_bool(0.5) { ka } else { kb };
                    let n = names.choose(rng).expect("nonempty").clone();
                    if let Some(t) = a[i].as_table_mut() {
                        t.insert(k.into(), Value::String(n.clone()));
                    }
                    format!("{which}[{i}].{k} = {n:?}")
                }
                _ => {
                    // a big count or many connections
                    let k = ["count", "connections", "sessions"]
                        .choose(rng)
                        .expect("nonempty");
                    let n = *[0i64, 1, 5, 1000, 100_000, 10_000_000, 4_294_967_295]
                        .choose(rng)
                        .expect("nonempty");
                    if let Some(t) = a[i].as_table_mut() {
                        t.insert(k.to_string(), Value::Integer(n));
                    }
                    format!("{which}[{i}].{k} = {n}")
                }
            }
        }
        // nodes: add, remove, duplicate, move between hosts and routers
        11 => {
            let Some(nodes) = doc.get_mut("nodes").and_then(|n| n.as_table_mut()) else {
                return "no nodes".into();
            };
            let k = if rng.gen_bool(0.5) {
                "hosts"
            } else {
                "routers"
            };
            let other = if k == "hosts" { "routers" } else { "hosts" };
            let mut moved = None;
            let d = match nodes.get_mut(k).and_then(|a| a.as_array_mut()) {
                Some(a) if !a.is_empty() => {
                    let i = rng.gen_range(0..a.len());
                    match rng.gen_range(0..4) {
                        0 => {
                            let x = a[i].clone();
                            a.push(x);
                            format!("duplicate nodes.{k}[{i}]")
                        }
                        1 => {
                            a.remove(i);
                            format!("remove nodes.{k}[{i}]")
                        }
                        2 => {
                            moved = Some(a.remove(i));
                            format!("move nodes.{k}[{i}] to {other}")
                        }
                        _ => {
                            let n = rng.gen_range(1..2000);
                            for j in 0..n {
                                a.push(Value::String(format!("extra{j}")));
                            }
                            format!("add {n} nodes.{k}")
                        }
                    }
                }
                _ => format!("nodes.{k} empty"),
            };
            if let Some(m) = moved {
                if let Some(a) = nodes.get_mut(other).and_then(|a| a.as_array_mut()) {
                    a.push(m);
                }
            }
            d
        }
        // output intervals
        12 => {
            let k = ["sample_interval", "cwnd_interval", "throughput_bin"]
                .choose(rng)
                .expect("nonempty");
            let v = ["1ns", "1us", "10us", "1ms", "0s", "10s", "1e30s", "-1ms"]
                .choose(rng)
                .expect("nonempty");
            let root = doc.as_table_mut().expect("root table");
            let out = root
                .entry("output")
                .or_insert_with(|| Value::Table(Default::default()));
            if let Some(t) = out.as_table_mut() {
                t.insert(k.to_string(), Value::String(v.to_string()));
            }
            format!("output.{k} = {v:?}")
        }
        // one feature each (features.rs)
        14 | 15 => features::known_key(doc, rng),
        16 => features::topology(doc, rng),
        17 => features::workload(doc, rng),
        18 => features::output(doc, rng),
        19 => features::lp(doc, rng),
        20 => features::sweep(doc, rng),
        21 => features::long_name(doc, rng),
        22 => features::events(doc, rng),
        // graft a table from another scenario of the corpus
        _ => {
            let other = corpus.choose(rng).expect("nonempty");
            let Ok(o) = toml::from_str::<Value>(&other.text) else {
                return "graft source does not parse".into();
            };
            let op = paths(&o);
            let Some(src) = op.choose(rng) else {
                return "nothing to graft".into();
            };
            let Some(p) = pick(rng, &|_| true, doc) else {
                return "empty".into();
            };
            if p.is_empty() {
                return "root kept".into();
            }
            let Some(v) = get(&o, src).cloned() else {
                return "graft failed".into();
            };
            let d = format!("{} = <{}:{}>", path_str(&p), other.name, path_str(src));
            *get_mut(doc, &p).expect("path") = v;
            d
        }
    }
}

/// A `--set` override on a random path (sometimes a bad one).
fn random_override(doc: &Value, rng: &mut Pcg64Mcg) -> String {
    let all = paths(doc);
    let p = all.choose(rng).cloned().unwrap_or_default();
    // arrays of named tables by name (`links.bottleneck.rate`) or index
    let key = features::dotted(doc, &p, rng.gen_bool(0.5));
    let key = match rng.gen_range(0..5) {
        0 => format!("{key}.nope"),
        1 => format!("{key}.99"),
        _ => key,
    };
    // a quarter of the overrides set a scalar to the value it has, so the
    // `--set` path also reaches runs (random values are mostly refused)
    let mut d = doc.clone();
    let same = match get_mut(&mut d, &p) {
        Some(v @ (Value::String(_) | Value::Integer(_) | Value::Float(_) | Value::Boolean(_))) => {
            Some(v.to_string())
        }
        _ => None,
    };
    let val = random_value(rng);
    if let (Some(same), true) = (same, rng.gen_bool(0.25)) {
        format!("{key}={same}")
    } else if rng.gen_bool(0.2) {
        key // no `=`
    } else {
        format!("{key}={val}")
    }
}

// ---- raw mutations -------------------------------------------------------

fn raw_mutation(text: &mut String, rng: &mut Pcg64Mcg) -> String {
    let mut b = std::mem::take(text).into_bytes();
    let d = if b.is_empty() {
        b.extend_from_slice(b"name = ");
        "empty -> name = ".to_string()
    } else {
        let i = rng.gen_range(0..b.len());
        match rng.gen_range(0..6) {
            0 => {
                b.truncate(i);
                format!("truncate at {i}")
            }
            1 => {
                b[i] ^= 1 << rng.gen_range(0..8);
                format!("flip a bit of byte {i}")
            }
            2 => {
                let x = *b"\"'[]{}=.,\n#\\0\x00\xff9e-"
                    .choose(rng)
                    .expect("nonempty");
                b.insert(i, x);
                format!("insert byte {x:#x} at {i}")
            }
            3 => {
                let j = (i + rng.gen_range(1..64)).min(b.len());
                b.drain(i..j);
                format!("delete bytes {i}..{j}")
            }
            4 => {
                // duplicate a line
                let s = b[..i]
                    .iter()
                    .rposition(|&c| c == b'\n')
                    .map_or(0, |p| p + 1);
                let e = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p);
                let line: Vec<u8> = b[s..e].to_vec();
                b.splice(e..e, std::iter::once(b'\n').chain(line));
                format!("duplicate the line at byte {i}")
            }
            _ => {
                let s = b[..i]
                    .iter()
                    .rposition(|&c| c == b'\n')
                    .map_or(0, |p| p + 1);
                let e = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p);
                b.drain(s..e);
                format!("delete the line at byte {i}")
            }
        }
    };
    *text = String::from_utf8_lossy(&b).into_owned();
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus_here() -> Vec<Seed> {
        corpus(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios"))
    }

    #[test]
    fn every_corpus_scenario_loads_and_runs_unmutated() {
        let c = corpus_here();
        assert!(c.len() >= 10, "corpus has {} scenarios", c.len());
        for s in &c {
            let case = Case {
                index: 0,
                seed_name: s.name.clone(),
                mutations: vec![],
                overrides: vec![],
                sweep: false,
                threads: 1,
                text: s.text.clone(),
            };
            assert_eq!(run_case(&case), Outcome::Ran, "{}", s.name);
        }
    }

    /// Every key the scenario reference documents is one the mutations
    /// write: a registered kind's keys come from the registry itself, the
    /// others from `KEYS`, `TABLE_KEYS` and `TOPOLOGY_KEYS`.
    #[test]
    fn every_documented_scenario_key_is_in_the_mutation_set() {
        let doc = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src/reference/scenario.md"),
        )
        .expect("scenario reference");
        let mut known: std::collections::HashSet<&str> = KEYS.iter().copied().collect();
        for (_, ks) in TABLE_KEYS.iter().chain(TOPOLOGY_KEYS) {
            known.extend(ks.iter().copied());
        }
        for p in aqmlab::catalogue::TCP_PARAMS {
            known.insert(p.name);
        }
        for f in aqmlab::catalogue::families() {
            for k in f.kinds {
                known.extend(k.params.iter().map(|p| p.name));
            }
        }
        let mut missing = Vec::new();
        let mut seen = 0;
        for line in doc.lines().filter(|l| l.starts_with("| `")) {
            // first column: `a.b`, `a.b`, `c` or `[[table]]`
            let first = line.split('|').nth(1).unwrap_or("");
            for k in first.split('`').skip(1).step_by(2) {
                let k = k.trim_matches(|c| c == '[' || c == ']');
                let last = k.rsplit('.').next().unwrap_or(k);
                seen += 1;
                let a_kind = TOPOLOGY_KEYS.iter().any(|(kind, _)| *kind == last)
                    || aqmlab::catalogue::families()
                        .iter()
                        .any(|f| f.kinds.iter().any(|x| x.kind == last));
                if !known.contains(last) && !a_kind {
                    missing.push(k.to_string());
                }
            }
        }
        assert!(seen > 60, "read only {seen} keys from the reference");
        assert!(missing.is_empty(), "keys no mutation writes: {missing:?}");
    }

    /// A batch exercises every feature mutation, and some cases of each
    /// seed that starts from a generated topology still run.
    #[test]
    fn a_batch_covers_every_feature() {
        let c = corpus_here();
        let mut hits = std::collections::BTreeMap::<&str, (u32, u32)>::new();
        let features = FEATURES;
        for i in 0..3000 {
            let case = make_case(&c, 11, i);
            let ran = !case.sweep && case.threads == 1 && run_case(&case) == Outcome::Ran;
            for &(f, needle) in features {
                if case.mutations.iter().any(|m| m.contains(needle)) {
                    let e = hits.entry(f).or_default();
                    e.0 += 1;
                    e.1 += u32::from(ran);
                }
            }
        }
        for &(f, _) in features {
            let (n, ran) = hits.get(f).copied().unwrap_or_default();
            assert!(n >= 20, "{f}: {n} cases of 3000");
            // each feature's mutations leave some scenarios valid (not
            // only rejections), except key paths past the bound
            assert!(ran >= 1 || f == "key path", "{f}: none of {n} cases ran");
        }
        let threads = (0..3000)
            .filter(|&i| make_case(&c, 11, i).threads > 1)
            .count();
        assert!(
            (150..=450).contains(&threads),
            "{threads} thread-count cases"
        );
    }

    /// The unclear-message rule on the messages of the cases it exists for.
    #[test]
    fn unclear_messages_are_told_apart() {
        let m = |s: &str| unclear(s, &["links[1].rate = 3".to_string()]);
        assert_eq!(
            m("f: `links[1].rate`: invalid rate `3x`: missing unit"),
            None
        );
        assert_eq!(
            m("f: `tcp.ecn_feedback`: invalid type: unit variant, expected string only"),
            Some("a deserializer's words")
        );
        assert_eq!(m("f: bad"), Some("names no key"));
        let long = format!(
            "f: `links[1].trace`: line 1: `{}` is not a number",
            "9".repeat(1000)
        );
        assert_eq!(m(&long), Some("longer than 1000 characters"));
        let echo = format!(
            "f: `links[1].trace`: line 1: `{}` is no number",
            "9".repeat(300)
        );
        assert_eq!(m(&echo), Some("an echo over 200 characters"));
        let cut = format!(
            "f: `links[1].trace`: line 1: `{}` is no number",
            aqmlab::echo::echo(&"9".repeat(300))
        );
        assert_eq!(m(&cut), None, "{cut}");
        assert_eq!(m("f: `links[1].rate`: a\nb"), Some("more than one line"));
        // a TOML syntax error draws its line: several lines are fine
        assert_eq!(
            m("f: invalid TOML: TOML parse error at line 1, column 2\n  |\n1 | x\n"),
            None
        );
    }

    /// Long key paths reach `--set` and sweep axes in a batch, and are all
    /// refused naming the bound.
    #[test]
    fn long_key_paths_are_fuzzed_and_refused() {
        let c = corpus_here();
        let mut n = 0;
        for i in 0..3000 {
            let case = make_case(&c, 11, i);
            if !case.mutations.iter().any(|m| m.contains("<key path of ")) {
                continue;
            }
            n += 1;
            if let Outcome::Rejected(msg) = run_case(&case) {
                assert_eq!(unclear(&msg, &case.mutations), None, "case {i}: {msg}");
            }
        }
        assert!(n >= 20, "{n} cases with long key paths");
    }

    #[test]
    fn cases_are_a_function_of_seed_and_index() {
        let c = corpus_here();
        let a = make_case(&c, 7, 123);
        let b = make_case(&c, 7, 123);
        assert_eq!(a.text, b.text);
        assert_eq!(a.mutations, b.mutations);
        let d = make_case(&c, 8, 123);
        assert!(d.text != a.text || d.mutations != a.mutations);
    }
}
