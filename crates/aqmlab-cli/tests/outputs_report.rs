//! `--report` (report.html) of `aqmlab run` and `aqmlab sweep`: one file
//! that names no network resource, byte-identical for the same scenario and
//! seed whatever the thread count, and removed by a later run into the same
//! folder that does not ask for it. The page in a browser is tested by
//! python/tests/test_report.py (headless Chromium).

mod common;

use common::{aqmlab, output, root};
use std::fs;
use std::path::Path;

fn run(out: &Path, extra: &[&str]) -> (i32, String) {
    let mut c = aqmlab();
    c.arg("run")
        .arg(root().join("scenarios/bbr/coexistence.toml"))
        .arg("--out")
        .arg(out)
        .args(["--duration", "2s", "--set", "output.throughput_bin=200ms"])
        .args(extra);
    let (code, _, err) = output(&mut c);
    (code, err)
}

/// No element loads anything from elsewhere: no `src=` or `href=` at all
/// (the page inlines its scripts and styles), no `url(` in its CSS, no
/// `fetch`/`XMLHttpRequest` in the page's own script.
fn self_contained(html: &str) {
    for needle in [
        " src=",
        " href=",
        "url(",
        "XMLHttpRequest",
        "<link",
        "@import",
    ] {
        assert!(!html.contains(needle), "report.html contains `{needle}`");
    }
    assert_eq!(html.matches("<script").count(), 3, "data, uPlot, report.js");
}

#[test]
fn run_report_is_one_deterministic_self_contained_file() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    let (code, err) = run(&a, &["--report"]);
    assert_eq!(code, 0, "{err}");
    let (code, err) = run(&b, &["--report", "--threads", "2"]);
    assert_eq!(code, 0, "{err}");
    let ha = fs::read_to_string(a.join("report.html")).unwrap();
    let same = ha == fs::read_to_string(b.join("report.html")).unwrap();
    assert!(same, "report.html differs between --threads 1 and 2");
    self_contained(&ha);
    // Plots of the queues, throughput and delay CDFs, and the summary's
    // scenario name and seed in cells that name their keys.
    for s in [
        "Queue length",
        "Queueing delay",
        "Throughput",
        "Delay CDFs",
        "data-key=\"/scenario\"",
        "data-key=\"/seed\" data-value=\"1\"",
    ] {
        assert!(ha.contains(s), "report.html lacks {s}");
    }
    assert!(!ha.contains("data-key=\"/wall_seconds\""));
    // A later run into the folder without --report removes it.
    let (code, err) = run(&a, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(!a.join("report.html").exists());
    assert!(err.contains("report.html"), "{err}");
}

#[test]
fn sweep_report_plots_every_metric() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("sw");
    let mut c = aqmlab();
    c.arg("sweep")
        .arg(root().join("scenarios/aqm-compare.toml"))
        .arg("--out")
        .arg(&out)
        .args(["--seeds", "2", "--set", "duration=1s", "--report"]);
    let (code, _, err) = output(&mut c);
    assert_eq!(code, 0, "{err}");
    let h = fs::read_to_string(out.join("report.html")).unwrap();
    self_contained(&h);
    assert_eq!(
        h.matches("class=\"chart\"").count(),
        8,
        "one plot per metric"
    );
    assert!(h.contains("data-key=\"droptail|mean_delay_s|mean\""));
}
