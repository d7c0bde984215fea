//! The examples and commands of the book and the README, run:
//!
//! - every ```` ```toml ```` block is a whole scenario that parses and
//!   validates, unless the line above its fence is `<!-- fragment -->`
//!   (then it must still be TOML, and its keys are checked as part of a
//!   scenario by `docs_keys.rs`' reference instead);
//! - a block whose fence follows `<!-- copy of PATH -->` equals that file,
//!   and every `{{#include PATH}}` names a file that exists;
//! - every `aqmlab` command in a shell block (`aqmlab ...`,
//!   `./target/release/aqmlab ...`, `cargo run --release -- ...`) runs and
//!   exits 0, shortened: `run` with `--duration` 1 s (or 1 s past the
//!   scenario's warm-up and last event), `sweep` with one seed and that
//!   `duration`, `reproduce` with one seed (red-gateway's
//!   run length is fixed),
//!   output into a temporary folder. `bench` is only parsed (`--help`):
//!   a benchmark takes minutes.
//!
//! The output reference (`docs/src/reference/outputs.md`) against what runs
//! write: shipped scenarios are run on short durations with the options
//! that add files (plots, report, flent, pcap, event log, warm-up, Parquet)
//! and a small sweep; every file, CSV column and JSON key they write must
//! have a row on the page, and every row must be written by one of them.
//! A row's name may hold `<placeholders>` (`<link>.<from>-<to>.pcap`,
//! `groups.<group>.flows`), which match any text without `/`.

mod common;
#[path = "../../aqmlab/tests/docs_common/mod.rs"]
mod docs_common;

use common::{aqmlab, output};
use docs_common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

#[test]
fn every_toml_block_is_a_valid_scenario_or_marked_a_fragment() {
    let mut problems = Vec::new();
    let mut n = 0;
    for page in all_pages() {
        for b in page.blocks() {
            if b.info.split(',').next() != Some("toml") {
                continue;
            }
            n += 1;
            let at = page.at(b.line);
            if b.body.contains("{{#include") {
                continue; // checked by the include test
            }
            if let Err(e) = toml::from_str::<toml::Table>(&b.body) {
                problems.push(format!("{at}: not TOML: {e}"));
                continue;
            }
            let fragment = b
                .note
                .as_deref()
                .is_some_and(|n| n == "fragment" || n.starts_with("part of "));
            if fragment {
                continue;
            }
            // relative paths resolve from the page's folder, as a reader's
            // file next to it would; shipped examples name files under
            // scenarios/, so try the repository root too
            let file = repo().join("scenarios/docs-example.toml");
            if let Err(e) = aqmlab::Scenario::from_toml(&b.body, &file.to_string_lossy()) {
                problems.push(format!(
                    "{at}: this TOML block is not a valid scenario ({e}); fix it, or put \
                     `<!-- fragment -->` on the line above the fence if it is a part of one"
                ));
            }
        }
    }
    assert!(n > 10, "only {n} toml blocks found");
    if !problems.is_empty() {
        panic!(
            "{} problem(s)\n  {}\n{HOW}",
            problems.len(),
            problems.join("\n  ")
        );
    }
}

#[test]
fn every_copy_and_include_matches_its_file() {
    let mut problems = Vec::new();
    let mut copies = 0;
    for page in all_pages() {
        let dir = repo().join(&page.path).parent().unwrap().to_path_buf();
        for b in page.blocks() {
            let note = b.note.as_deref().unwrap_or("");
            if let Some(path) = note.strip_prefix("part of ") {
                let path = path.trim();
                match std::fs::read_to_string(repo().join(path)) {
                    Ok(text) if text.contains(&b.body) => {}
                    Ok(_) => problems.push(format!(
                        "{}: the block is not a part of {path} as it stands; copy the lines again",
                        page.at(b.line)
                    )),
                    Err(e) => problems.push(format!("{}: {path}: {e}", page.at(b.line))),
                }
                continue;
            }
            let Some(path) = note.strip_prefix("copy of ") else {
                continue;
            };
            copies += 1;
            let path = path.trim();
            match std::fs::read_to_string(repo().join(path)) {
                Ok(text) if text == b.body => {}
                Ok(text) => {
                    let line = text
                        .lines()
                        .zip(b.body.lines())
                        .position(|(a, b)| a != b)
                        .unwrap_or_else(|| text.lines().count().min(b.body.lines().count()));
                    problems.push(format!(
                        "{}: the block differs from {path} (first at its line {}); copy the file \
                         into the block again",
                        page.at(b.line + 1 + line),
                        line + 1
                    ));
                }
                Err(e) => problems.push(format!("{}: {path}: {e}", page.at(b.line))),
            }
        }
        for (i, l) in page.lines.iter().enumerate() {
            for part in l.split("{{#include ").skip(1) {
                let target = part
                    .split("}}")
                    .next()
                    .unwrap_or("")
                    .split(':')
                    .next()
                    .unwrap_or("");
                if !dir.join(target.trim()).is_file() {
                    problems.push(format!(
                        "{}: {{{{#include {target}}}}}: no such file",
                        page.at(i + 1)
                    ));
                }
            }
        }
    }
    assert!(
        copies >= 2,
        "expected the README's and the tutorial's copies of examples/first.toml"
    );
    if !problems.is_empty() {
        panic!(
            "{} problem(s)\n  {}\n{HOW}",
            problems.len(),
            problems.join("\n  ")
        );
    }
}

/// Split a shell line into words (quotes and backslashes as sh does for
/// the commands the docs show; no expansions).
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut w = String::new();
    let mut any = false;
    let mut q: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (q, c) {
            (Some(x), c) if c == x => q = None,
            (Some('"'), '\\') => w.extend(chars.next()),
            (Some(_), c) => w.push(c),
            (None, '\'' | '"') => {
                q = Some(c);
                any = true;
            }
            (None, '\\') => w.extend(chars.next()),
            (None, '#') if !any && w.is_empty() => break,
            (None, c) if c.is_whitespace() => {
                if any || !w.is_empty() {
                    out.push(std::mem::take(&mut w));
                    any = false;
                }
            }
            (None, c) => {
                w.push(c);
                any = true;
            }
        }
    }
    if any || !w.is_empty() {
        out.push(w);
    }
    out
}

/// The `aqmlab` commands of a shell block: (line, arguments after `aqmlab`).
fn commands(b: &Block) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut joined = String::new();
    let mut start = 0;
    for (i, l) in b.body.lines().enumerate() {
        if joined.is_empty() {
            start = i;
        }
        if let Some(x) = l.trim_end().strip_suffix('\\') {
            joined.push_str(x);
            joined.push(' ');
            continue;
        }
        joined.push_str(l);
        let line = std::mem::take(&mut joined);
        for part in line.split("&&") {
            let w = words(part);
            let args = match w.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
                ["aqmlab" | "./target/release/aqmlab", ..] => w[1..].to_vec(),
                // `cargo run` of the CLI (not `-p aqmlab-fuzz`)
                ["cargo", "run", rest @ ..] => match rest.iter().position(|x| *x == "--") {
                    Some(p) if !rest[..p].iter().any(|x| *x == "-p" || *x == "--package") => {
                        w[3 + p..].to_vec()
                    }
                    _ => continue,
                },
                _ => continue,
            };
            out.push((b.line + 1 + start, args));
        }
    }
    out
}

/// Set option `name` to `value` (replacing a value written), or add it.
fn set_opt(args: &mut Vec<String>, names: &[&str], value: &str) {
    if let Some(i) = args.iter().position(|a| names.contains(&a.as_str())) {
        if i + 1 < args.len() {
            args[i + 1] = value.to_string();
            return;
        }
    }
    args.push(names[0].to_string());
    args.push(value.to_string());
}

/// A short duration for scenario `file` (relative to `cwd`): 1 s, or 1 s
/// past its warm-up and its last `[[events]]` time, at most its own.
fn short_duration(cwd: &Path, file: &str) -> String {
    let ns = |v: Option<&toml::Value>| {
        v.and_then(|v| v.as_str())
            .and_then(|s| aqmlab::units::parse_duration(s).ok())
    };
    let t: toml::Table = std::fs::read_to_string(cwd.join(file))
        .ok()
        .and_then(|s| toml::from_str(&s).ok())
        .unwrap_or_default();
    let mut need = ns(t.get("output").and_then(|o| o.get("warmup"))).unwrap_or(0);
    if let Some(ev) = t.get("events").and_then(|e| e.as_array()) {
        for e in ev {
            need = need.max(ns(e.get("at")).unwrap_or(0));
        }
    }
    let mut d = need + 1_000_000_000;
    if let Some(full) = ns(t.get("duration")) {
        d = d.min(full);
    }
    format!("{}ms", d / 1_000_000)
}

/// The command shortened for the test (see the file's comment), run in
/// `cwd`.
fn shortened(args: &[String], out: &str, cwd: &Path) -> Vec<String> {
    let mut a = args.to_vec();
    let file = a.get(1).cloned().unwrap_or_default();
    match a.first().map(String::as_str) {
        Some("run") => {
            set_opt(&mut a, &["--duration"], &short_duration(cwd, &file));
            set_opt(&mut a, &["--out", "-o"], out);
        }
        Some("sweep") => {
            set_opt(&mut a, &["--seeds"], "1");
            set_opt(&mut a, &["--out"], out);
            a.push("--set".into());
            a.push(format!("duration=\"{}\"", short_duration(cwd, &file)));
        }
        Some("reproduce") => {
            set_opt(&mut a, &["--seeds"], "1");
            set_opt(&mut a, &["--out"], out);
        }
        Some("bench") => a.push("--help".into()),
        _ => {}
    }
    a
}

#[test]
fn every_documented_aqmlab_command_runs() {
    let cmds: Vec<(String, Vec<String>)> = all_pages()
        .iter()
        .flat_map(|p| {
            p.blocks()
                .into_iter()
                .filter(|b| matches!(b.info.as_str(), "sh" | "bash" | "shell" | "console" | ""))
                .flat_map(|b| {
                    commands(&b)
                        .into_iter()
                        .map(|(l, a)| (p.at(l), a))
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        cmds.len() >= 15,
        "only {} aqmlab commands found",
        cmds.len()
    );
    let tmp = tempfile::tempdir().unwrap();
    // the reader's working directory: the repository's files, outputs here
    for d in ["scenarios", "examples"] {
        std::os::unix::fs::symlink(repo().join(d), tmp.path().join(d)).unwrap();
    }
    let jobs = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(4);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let problems = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((at, args)) = cmds.get(i) else { break };
                let out = tmp.path().join(format!("out-{i}"));
                let a = shortened(args, &out.to_string_lossy(), tmp.path());
                let mut c = aqmlab();
                c.current_dir(tmp.path())
                    .args(&a)
                    .env("AQMLAB_PROGRESS_SECS", "3600");
                let t = std::time::Instant::now();
                let (code, _, err) = output(&mut c);
                let secs = t.elapsed().as_secs_f64();
                eprintln!("{at}: aqmlab {} → {code} in {secs:.1} s", a.join(" "));
                if code != 0 {
                    let err: String = err.lines().rev().take(3).collect::<Vec<_>>().join(" / ");
                    problems.lock().unwrap().push(format!(
                        "{at}: `aqmlab {}` exits {code} (run as `aqmlab {}`): {err}",
                        args.join(" "),
                        a.join(" ")
                    ));
                }
            });
        }
    });
    let problems = problems.into_inner().unwrap();
    if !problems.is_empty() {
        panic!(
            "{} problem(s)\n  {}\n{HOW}",
            problems.len(),
            problems.join("\n  ")
        );
    }
}

#[test]
fn the_shell_words_and_commands_are_read_as_sh_would() {
    assert_eq!(
        words(r#"aqmlab run a.toml --set 'x="1s"' --set y=2 # note"#),
        ["aqmlab", "run", "a.toml", "--set", "x=\"1s\"", "--set", "y=2"]
    );
    let b = Block {
        line: 10,
        info: "sh".into(),
        body: "cargo build --release\n./target/release/aqmlab run f.toml \\\n  --out o   # x\ncargo run --release -- list red && python x\n".into(),
        note: None,
    };
    let c = commands(&b);
    assert_eq!(c.len(), 2);
    assert_eq!(
        c[0],
        (
            12,
            vec!["run".into(), "f.toml".into(), "--out".into(), "o".into()]
        )
    );
    assert_eq!(c[1], (14, vec!["list".into(), "red".into()]));
    assert_eq!(
        shortened(&c[0].1, "T", Path::new("/nonexistent")),
        ["run", "f.toml", "--out", "T", "--duration", "1000ms"]
    );
}

const OUTPUTS: &str = "docs/src/reference/outputs.md";

/// The runs: scenario and flags. Together they write every documented
/// file, column and key.
const RUNS: &[(&str, &[&str])] = &[
    (
        "scenarios/aqm-compare.toml",
        &[
            "--duration",
            "2s",
            "--plot",
            "--report",
            "--format",
            "csv",
            "--threads",
            "2",
        ],
    ),
    (
        "scenarios/l4s/ns3-fqcodel-l4s/scenario-5.toml",
        &[
            "--duration",
            "2s",
            "--flent",
            "--plot",
            "--threads",
            "2",
            "--format",
            "csv",
            "--set",
            "output.pcap=[\"bottleneck\"]",
            "--set",
            "output.warmup=\"500ms\"",
        ],
    ),
    (
        "scenarios/l4s/ns3-fqcodel-l4s/scenario-2.toml",
        &[
            "--duration",
            "1s",
            "--format",
            "csv",
            "--set",
            "output.log_format=\"parquet\"",
        ],
    ),
    (
        "scenarios/l4s/dualpi2-classic.toml",
        &["--duration", "11s", "--format", "csv"],
    ),
    (
        "scenarios/papers/rio-ps/web.toml",
        &["--duration", "2s", "--format", "csv"],
    ),
    (
        "scenarios/bbr/alone.toml",
        &["--duration", "1s", "--plot", "--format", "csv"],
    ),
    (
        "scenarios/multi-site.toml",
        &[
            "--duration",
            "200ms",
            "--threads",
            "2",
            "--format",
            "parquet",
        ],
    ),
    // BBR without SACK: a run with a warning (`summary.json`'s `warnings`)
    (
        "scenarios/import/ring.toml",
        &["--duration", "1s", "--set", "flows.bulk.cc=\"bbr\""],
    ),
];

/// Everything the runs wrote: file name → the run that wrote it; per file,
/// its CSV columns or JSON key paths.
#[derive(Default)]
struct Seen {
    files: BTreeMap<String, String>,
    fields: BTreeMap<String, BTreeSet<String>>,
}

/// Key paths of a JSON value: `a.b`, arrays as `a[]`, every level listed.
fn json_paths(v: &serde_json::Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.insert(p.clone());
                json_paths(x, &p, out);
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                if x.is_object() {
                    let p = format!("{prefix}[]");
                    json_paths(x, &p, out);
                }
            }
        }
        _ => {}
    }
}

fn collect(dir: &Path, run: &str, seen: &mut Seen) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            // a sweep's run folders: `<label>/seed-<n>/`
            collect(&p, run, seen);
            continue;
        }
        seen.files
            .entry(name.clone())
            .or_insert_with(|| run.to_string());
        let fields = seen.fields.entry(name.clone()).or_default();
        if name.ends_with(".csv") {
            let mut rd = csv::Reader::from_path(&p).unwrap();
            fields.extend(rd.headers().unwrap().iter().map(str::to_string));
        } else if name.ends_with(".json") {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            json_paths(&v, "", fields);
        } else if name.ends_with(".parquet") {
            // Parquet columns equal the CSV's (tests/outputs_parquet.rs)
        }
    }
}

/// Does `pattern` (with `<placeholders>`) match `s`?
fn glob(pattern: &str, s: &str) -> bool {
    match pattern.find('<') {
        None => pattern == s,
        Some(i) => {
            let Some(j) = pattern[i..].find('>') else {
                return pattern == s;
            };
            let (head, rest) = (&pattern[..i], &pattern[i + j + 1..]);
            let Some(tail) = s.strip_prefix(head) else {
                return false;
            };
            (1..=tail.len()).any(|n| {
                tail.is_char_boundary(n) && !tail[..n].contains('/') && glob(rest, &tail[n..])
            })
        }
    }
}

/// The page's documented names: for each table (`files` for the file
/// list, else the file a `### `file`` heading names), name → line.
fn documented(page: &Page) -> BTreeMap<String, BTreeMap<String, usize>> {
    let mut out: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for t in page.tables() {
        let first = t.header.first().map(String::as_str).unwrap_or("");
        let of = match first {
            "file" => "files".to_string(),
            "column" | "key" => match backticked(&t.heading).first() {
                Some(f) => f.clone(),
                None => continue,
            },
            _ => continue,
        };
        for r in &t.rows {
            for name in backticked(&r.cells[0]) {
                out.entry(of.clone()).or_default().insert(name, r.line);
            }
        }
    }
    out
}

#[test]
fn every_output_file_column_and_key_is_documented() {
    let tmp = tempfile::tempdir().unwrap();
    let root = common::root();
    let mut seen = Seen::default();
    let results: Vec<(String, std::path::PathBuf, (i32, String, String))> = std::thread::scope(
        |s| {
            let handles: Vec<_> = RUNS
                .iter()
                .enumerate()
                .map(|(i, (file, args))| {
                    let out = tmp.path().join(format!("run{i}"));
                    let root = &root;
                    s.spawn(move || {
                        let mut c = aqmlab();
                        c.current_dir(root)
                            .arg("run")
                            .arg(file)
                            .arg("--out")
                            .arg(&out)
                            .args(*args);
                        (
                            format!("aqmlab run {file} {}", args.join(" ")),
                            out,
                            output(&mut c),
                        )
                    })
                })
                .collect();
            let mut v: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            // a small sweep: its own files (sweep.csv, summary.md, plots)
            let out = tmp.path().join("sweep");
            let mut c = aqmlab();
            c.current_dir(&root)
                .args(["sweep", "scenarios/aqm-compare.toml", "--seeds", "1", "--format", "parquet", "--set"])
                .arg("duration=\"1s\"")
                .args(["--set", "sweep.vary=[{ key = \"links.bottleneck.queue_ab\", values = [{ kind = \"red\", limit = 100, max_th = 15 }, { kind = \"codel\" }] }]"])
                .arg("--out")
                .arg(&out);
            v.push((
                "aqmlab sweep scenarios/aqm-compare.toml (2 queues, 1 seed, 1 s)".into(),
                out,
                output(&mut c),
            ));
            v
        },
    );
    for (cmd, out, (code, _, err)) in &results {
        assert_eq!(*code, 0, "{cmd}: {err}");
        collect(out, cmd, &mut seen);
    }

    let page = Page::read(OUTPUTS);
    let doc = documented(&page);
    let mut problems = Vec::new();
    let files = doc.get("files").cloned().unwrap_or_default();
    let matched = |names: &BTreeMap<String, usize>, s: &str| names.keys().any(|p| glob(p, s));
    for (f, run) in &seen.files {
        if !matched(&files, f) {
            problems.push(format!(
                "{OUTPUTS}: `{run}` writes `{f}`, which the file table does not list"
            ));
        }
    }
    for (p, line) in &files {
        if !seen.files.keys().any(|f| glob(p, f)) {
            problems.push(format!("{OUTPUTS}:{line}: `{p}` is listed, but none of the runs of tests/docs_outputs.rs writes it"));
        }
    }
    for (f, fields) in &seen.fields {
        if fields.is_empty() {
            continue;
        }
        // the file's table: the documented name that matches it
        let Some((_, names)) = doc.iter().find(|(d, _)| *d != "files" && glob(d, f)) else {
            problems.push(format!("{OUTPUTS}: `{f}` has no `### `{f}`` section with a `| column |` or `| key |` table"));
            continue;
        };
        for x in fields {
            // an object that holds keys needs no row of its own
            let leaf = !fields.iter().any(|y| {
                y.len() > x.len()
                    && y.starts_with(x.as_str())
                    && (y[x.len()..].starts_with('.') || y[x.len()..].starts_with('['))
            });
            if leaf && !matched(names, x) {
                problems.push(format!(
                    "{OUTPUTS}: `{f}` has `{x}` (written by `{}`), which its table does not list",
                    seen.files[f]
                ));
            }
        }
    }
    for (d, names) in &doc {
        if d == "files" {
            continue;
        }
        let written: Vec<&BTreeSet<String>> = seen
            .fields
            .iter()
            .filter(|(f, _)| glob(d, f))
            .map(|(_, x)| x)
            .collect();
        for (n, line) in names {
            if !written.iter().any(|x| x.iter().any(|x| glob(n, x))) {
                problems.push(format!("{OUTPUTS}:{line}: `{d}`: `{n}` is listed, but none of the runs of tests/docs_outputs.rs writes it"));
            }
        }
    }
    if !problems.is_empty() {
        panic!(
            "{} problem(s)\n  {}\n{HOW}",
            problems.len(),
            problems.join("\n  ")
        );
    }
}
