//! `aqmlab reproduce markmax` as a user meets it, on shortened runs
//! (`--duration`): the paper's numbers are printed beside
//! ours, and the report, the tables and the plots are written.

mod common;

use aqmlab_reproduce::table::{read_csv, HEADER};
use std::fs;

#[test]
fn reproduce_markmax_writes_tables_report_and_plots() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("mm");
    let o = common::aqmlab()
        .args([
            "reproduce",
            "markmax",
            "--seeds",
            "1",
            "--duration",
            "12s",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    for t in ["Scheme 1", "Scheme 2", "--duration"] {
        assert!(stdout.contains(t), "stdout lacks {t}:\n{stdout}");
    }
    // the paper's numbers, exactly as printed in its two tables
    for p in [
        "0.9893 /", "0.9751 /", "8.9 /", "0.9853 /", "0.9999 /",
        "9.9 /", // scheme 1, δ2/δ1 = 3
        "0.5484 /", "0.9561 /", "8.4 /", // scheme 1, δ2/δ1 = 20
        "0.8561 /", "0.9338 /", "3.9 /", "0.9637 /", "0.9600 /", "4.7 /", // scheme 2, 7
        "0.5244 /", "0.9262 /", "0.8572 /", "0.9937 /", "5.7 /", // scheme 2, 50
    ] {
        assert!(
            stdout.contains(p),
            "stdout lacks the paper's {p}:\n{stdout}"
        );
    }
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    for t in [
        "## Setup",
        "What δ_i is",
        "paper | aqmlab | difference",
        "## Where aqmlab differs from the paper",
        "## Checks",
        "--duration",
    ] {
        assert!(report.contains(t), "report lacks {t}");
    }
    let csv = fs::read_to_string(out.join("tables.csv")).unwrap();
    assert_eq!(csv.lines().next().unwrap(), HEADER.join(","));
    let rows = read_csv(&out.join("tables.csv")).unwrap();
    // 16 paper cells × 3 metrics carry the paper's number
    assert_eq!(rows.iter().filter(|r| r.paper.is_some()).count(), 16 * 3);
    assert!(
        rows.iter().any(|r| r.table == "scheme 1"
            && r.row == "MarkMax, delta_ratio=7"
            && r.column == "J"
            && r.paper == Some(0.9625)),
        "{csv}"
    );
    for p in [
        "cwnd_ratio7.png",
        "cwnd_ratio7.svg",
        "cwnd_ratio10.png",
        "cwnd_ratio10.svg",
        "fairness.png",
        "fairness.svg",
        "delay.png",
        "delay.svg",
    ] {
        assert!(fs::metadata(out.join(p)).unwrap().len() > 1000, "{p} empty");
    }
    let svg = fs::read_to_string(out.join("cwnd_ratio7.svg")).unwrap();
    assert!(svg.contains("MarkMax") && svg.contains("DropTail"));
}

#[test]
fn reproduce_rejects_bad_duration_and_load_flags() {
    // (paper, flags, what the message must name)
    let cases: [(&str, &[&str], &str); 7] = [
        ("markmax", &["--duration", "soon"], "--duration `soon`"),
        ("markmax", &["--duration", "12"], "missing unit"),
        ("markmax", &["--duration", "0s"], "must be positive"),
        ("maxnet-mice", &["--duration", "10s"], "at least 25 s"),
        ("rio-ps", &["--load", "3"], "(0, 2]"),
        ("markmax", &["--load", "0.5"], "only rio-ps"),
        ("red-gateway", &["--duration", "5s"], "30 s runs"),
    ];
    for (paper, flags, want) in cases {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("x");
        let o = common::aqmlab()
            .args(["reproduce", paper, "--seeds", "1"])
            .args(flags)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{paper} {flags:?}: {err}");
        assert!(
            err.contains(want),
            "{paper} {flags:?}: `{err}` lacks `{want}`"
        );
        assert!(
            !out.exists(),
            "{paper} {flags:?}: wrote output before failing"
        );
    }
}
