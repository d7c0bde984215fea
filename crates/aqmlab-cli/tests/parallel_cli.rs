//! `aqmlab run --threads N`: the files of a run are byte-identical to the
//! one-thread run's (summary.json without wall time and the `parallel`
//! object, which records the partition and the measured waiting).

use assert_cmd::Command;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

fn scenario() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/multi-site.toml")
}

fn run(out: &Path, threads: &str) -> String {
    let o = Command::cargo_bin("aqmlab")
        .unwrap()
        .arg("run")
        .arg(scenario())
        .args(["--duration", "1s", "--threads", threads, "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn summary(dir: &Path) -> (Value, Option<Value>) {
    let mut v: Value =
        serde_json::from_slice(&fs::read(dir.join("summary.json")).unwrap()).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("wall_seconds").expect("wall_seconds");
    o.remove("timings").expect("timings");
    let p = o.remove("parallel");
    (v, p)
}

#[test]
fn threads_give_byte_identical_files() {
    let d = tempfile::tempdir().unwrap();
    let one = d.path().join("t1");
    run(&one, "1");
    let (s1, p1) = summary(&one);
    assert!(
        p1.is_none(),
        "a plain sequential run has no parallel object"
    );
    for t in ["2", "3", "8"] {
        let dir = d.path().join(format!("t{t}"));
        run(&dir, t);
        for f in ["flows.csv", "queues.csv", "links.csv"] {
            let (a, b) = (
                fs::read(one.join(f)).unwrap(),
                fs::read(dir.join(f)).unwrap(),
            );
            assert!(a == b, "{f} differs with --threads {t}");
        }
        let (s, p) = summary(&dir);
        assert_eq!(s, s1, "summary.json differs with --threads {t}");
        let p = p.expect("a parallel object");
        assert!(p["processes"].as_u64().unwrap() >= 2, "{p}");
        assert!(p["lookahead_s"].as_f64().unwrap() >= 0.005, "{p}");
        assert!(p["windows"].as_u64().unwrap() > 0, "{p}");
    }
}

#[test]
fn bad_thread_counts_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let o = Command::cargo_bin("aqmlab")
        .unwrap()
        .arg("run")
        .arg(scenario())
        .args(["--threads", "0", "--out"])
        .arg(d.path().join("x"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--threads"));
    assert!(!d.path().join("x").exists());
}
