//! Golden results: each reproduction on a small deterministic configuration
//! (one seed, shortened runs), its `tables.csv` compared byte for byte with
//! the file committed under `tests/golden/`. A model change that moves any
//! number in any table fails here until the golden file is regenerated on
//! purpose and the change explained in the commit:
//!
//! ```text
//! AQMLAB_UPDATE_GOLDEN=1 cargo test --release -p aqmlab-cli --test reproduce_golden
//! ```

mod common;

use std::fs;
use std::path::PathBuf;

fn golden_path(paper: &str) -> PathBuf {
    common::root()
        .join("crates/aqmlab-cli/tests/golden")
        .join(format!("{paper}.tables.csv"))
}

/// Run `aqmlab reproduce PAPER ARGS` and compare its tables.csv with the
/// golden file (or rewrite the golden file when `AQMLAB_UPDATE_GOLDEN` is set).
fn check(paper: &str, args: &[&str]) {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join(paper);
    let o = common::aqmlab()
        .args(["reproduce", paper, "--jobs", "1"])
        .args(args)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let got = fs::read_to_string(out.join("tables.csv")).unwrap();
    let path = golden_path(paper);
    if std::env::var_os("AQMLAB_UPDATE_GOLDEN").is_some() {
        fs::write(&path, &got).unwrap();
        return;
    }
    let want = fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (set AQMLAB_UPDATE_GOLDEN=1)", path.display()));
    if got != want {
        let first = got
            .lines()
            .zip(want.lines())
            .position(|(g, w)| g != w)
            .unwrap_or(got.lines().count().min(want.lines().count()));
        panic!(
            "{paper}: tables.csv differs from {} at line {}:\n  golden: {:?}\n  now:    {:?}\n\
             (if the change is deliberate, regenerate with AQMLAB_UPDATE_GOLDEN=1 and explain it in the commit)",
            path.display(),
            first + 1,
            want.lines().nth(first),
            got.lines().nth(first),
        );
    }
}

#[test]
fn golden_red_gateway() {
    // the run length is the paper's (30 s); one seed instead of ten
    check("red-gateway", &["--seeds", "1"]);
}

#[test]
fn golden_codel_highspeed_tcp() {
    check("codel-highspeed-tcp", &["--seeds", "1", "--duration", "5s"]);
}

#[test]
fn golden_markmax() {
    check("markmax", &["--seeds", "1", "--duration", "10s"]);
}

#[test]
fn golden_rio_ps() {
    check("rio-ps", &["--seeds", "1", "--duration", "100s"]);
}

#[test]
fn golden_maxnet_mice() {
    check("maxnet-mice", &["--seeds", "1", "--duration", "25s"]);
}
