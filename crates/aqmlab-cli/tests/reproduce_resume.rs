//! `aqmlab reproduce` interrupted by SIGINT part-way, then the same command
//! again: it reads back the runs kept before the signal, runs only the
//! others and ends with the same files, byte for byte, as an uninterrupted
//! reproduction (red-gateway, 2 seeds: 30 runs of about 0.5 s each on one
//! thread).

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ARGS: [&str; 6] = ["reproduce", "red-gateway", "--seeds", "2", "--jobs", "1"];
const RUNS: usize = 30;

/// Every file under `dir` (relative path → bytes).
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut m = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_path_buf();
                m.insert(rel, fs::read(&p).unwrap());
            }
        }
    }
    m
}

/// Kept runs (`.bin` files) under `out/.resume`.
fn kept(out: &Path) -> usize {
    let r = out.join(".resume");
    if !r.exists() {
        return 0;
    }
    tree(&r)
        .keys()
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .count()
}

fn reproduce(out: &Path) -> (i32, String, String) {
    let mut c = common::aqmlab();
    c.args(ARGS).arg("--out").arg(out);
    common::output(&mut c)
}

#[test]
fn interrupted_reproduction_resumes_byte_identically() {
    let d = tempfile::tempdir().unwrap();
    let b = d.path().join("b");
    let child = Command::new(assert_cmd::cargo::cargo_bin("aqmlab"))
        .args(ARGS)
        .arg("--out")
        .arg(&b)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Part-way: a few runs kept, most still to do.
    let t0 = Instant::now();
    while kept(&b) < 3 {
        std::thread::sleep(Duration::from_millis(20));
        assert!(t0.elapsed().as_secs() < 300, "no run was kept");
    }
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{e}");
    let n = kept(&b);
    assert!((3..RUNS).contains(&n), "{n} runs kept: {e}");
    // The message counts the runs kept (one more may land between the
    // count and the exit) and says how to resume.
    let line = e.lines().find(|l| l.starts_with("interrupted: ")).unwrap();
    let said: usize = line["interrupted: ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(said <= n && n <= said + 1, "{line} / {n} kept");
    assert!(line.contains(&format!("of {RUNS} runs complete")), "{line}");
    assert!(
        line.contains("run the same command again to resume"),
        "{line}"
    );
    assert!(
        !b.join("tables.csv").exists(),
        "tables written before the end"
    );

    // The same command: reads back the kept runs, runs the rest.
    let (c, _, e) = reproduce(&b);
    assert_eq!(c, 0, "{e}");
    assert!(
        e.contains(&format!("resuming: {n} of {RUNS} runs kept")),
        "{e}"
    );
    assert!(!b.join(".resume").exists(), "kept runs left behind");

    // An uninterrupted reproduction writes the same files, byte for byte.
    let a = d.path().join("a");
    let (c, _, e) = reproduce(&a);
    assert_eq!(c, 0, "{e}");
    let (ta, tb) = (tree(&a), tree(&b));
    assert!(ta.contains_key(Path::new("tables.csv")) && ta.len() >= 10);
    assert_eq!(ta.keys().collect::<Vec<_>>(), tb.keys().collect::<Vec<_>>());
    for (p, bytes) in &ta {
        assert!(&tb[p] == bytes, "{} differs after resuming", p.display());
    }
}
