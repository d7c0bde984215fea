//! `aqmlab reproduce maxnet-mice` as a user meets it, on shortened runs
//! (`--duration`, one seed): the paper's numbers are printed
//! beside aqmlab's, and the report, the tables and the plots are written.
//! Also the MaxNet bad-input cases of `aqmlab run`: exit 2 with a message
//! that names the key.

mod common;

use aqmlab_reproduce::table::{read_csv, HEADER};
use std::fs;
use std::path::Path;

use common::aqmlab;

#[test]
fn reproduce_maxnet_mice_writes_tables_report_and_plots() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("mm");
    let o = aqmlab()
        .args([
            "reproduce",
            "maxnet-mice",
            "--seeds",
            "1",
            "--jobs",
            "2",
            "--duration",
            "30s",
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
    for t in [
        "Fig. 5",
        "Figs. 6–7",
        "Figs. 8–9",
        "--duration",
        "paper: ≤ 135 ms",
        "not impacted",
        "Fig. 8: always a backlog",
    ] {
        assert!(stdout.contains(t), "stdout lacks {t}:\n{stdout}");
    }
    // the paper's two numbers (§4.2): 100 % for MaxNet, about 30 % for Reno/RED
    let row = |sys: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(sys) && l.contains(" 200 "))
            .unwrap_or_else(|| panic!("no {sys} row:\n{stdout}"))
            .to_string()
    };
    assert!(row("MaxNet ").contains("100.0 %"), "{}", row("MaxNet "));
    assert!(row("Reno/RED ").contains("≈30.0 %"), "{}", row("Reno/RED "));
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    for t in [
        "## Setup",
        "## Choices (the paper does not give them)",
        "## Paper vs aqmlab",
        "## Where aqmlab differs from the paper, and why",
        "## Checks",
        "--duration",
        "tc-red(8)",
    ] {
        assert!(report.contains(t), "report lacks {t}");
    }
    let csv = fs::read_to_string(out.join("tables.csv")).unwrap();
    assert_eq!(csv.lines().next().unwrap(), HEADER.join(","));
    let rows = read_csv(&out.join("tables.csv")).unwrap();
    let find = |table: &str, row: &str, column: &str| {
        rows.iter()
            .find(|r| r.table == table && r.row == row && r.column == column)
            .unwrap_or_else(|| panic!("no {table} / {row} / {column}:\n{csv}"))
    };
    let slow = |sys: &str| format!("{sys}, 200 connections, 10 Mbit/s");
    assert_eq!(
        find("Fig. 5", &slow("maxnet"), "fraction_le_135ms").paper,
        Some(1.0)
    );
    assert_eq!(
        find("Fig. 5", &slow("reno-red"), "fraction_le_135ms").paper,
        Some(0.3)
    );
    for fig in ["Fig. 6", "Fig. 7"] {
        for sys in ["maxnet", "reno-red"] {
            assert!(
                rows.iter()
                    .any(|r| r.table == fig && r.row.starts_with(sys)),
                "{csv}"
            );
        }
    }
    let fast = |sys: &str| format!("{sys}, 200 connections, 100 Mbit/s");
    find("Fig. 8", &fast("reno-red"), "backlog_mean_10_20s_pkts");
    find("Fig. 9", &fast("maxnet"), "backlog_mean_10_20s_pkts");
    // every aqmlab value is a number
    for r in &rows {
        assert!(r.aqmlab_mean.is_finite(), "{r:?}");
    }
    for stem in [
        "fig5_response_time_cdf",
        "fig6_elephant_50_http",
        "fig7_elephant_200_http",
        "fig8_backlog_red",
        "fig9_backlog_maxnet",
        "fig8_9_backlog_zoom",
    ] {
        for ext in ["png", "svg"] {
            let p = out.join(format!("{stem}.{ext}"));
            assert!(
                fs::metadata(&p).unwrap().len() > 1000,
                "{} empty",
                p.display()
            );
        }
    }
    let png = fs::read(out.join("fig5_response_time_cdf.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let svg = fs::read_to_string(out.join("fig5_response_time_cdf.svg")).unwrap();
    assert!(svg.contains("MaxNet") && svg.contains("Reno/RED") && svg.contains("135 ms"));
}

/// A 10 Mbit/s bottleneck `r -> h2` with queue `QUEUE` and one flow with
/// cc `CC`.
const BASE: &str = r#"
name = "maxnet-bad"
duration = "1s"
[nodes]
hosts = ["h1", "h2"]
routers = ["r"]
[[links]]
a = "h1"
b = "r"
rate = "100Mbps"
delay = "1ms"
[[links]]
name = "bottleneck"
a = "r"
b = "h2"
rate = "10Mbps"
delay = "10ms"
queue_ab = QUEUE
[[flows]]
group = "m"
src = "h1"
dst = "h2"
cc = CC
"#;

/// `aqmlab run` on the scenario: (exit code, stderr, whether `out` exists).
fn run(dir: &Path, queue: &str, cc: &str) -> (i32, String, bool) {
    let f = dir.join("s.toml");
    fs::write(&f, BASE.replace("QUEUE", queue).replace("CC", cc)).unwrap();
    let out = dir.join("out");
    let o = aqmlab()
        .arg("run")
        .arg(&f)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    (
        o.status.code().unwrap(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        out.exists(),
    )
}

#[test]
fn maxnet_bad_inputs_exit_2_naming_the_key() {
    let d = tempfile::tempdir().unwrap();
    let maxnet = "{ kind = \"maxnet\" }";
    // the good case runs
    let (code, err, out) = run(d.path(), maxnet, "\"maxnet\"");
    assert_eq!(code, 0, "{err}");
    assert!(out);
    let cases: [(&str, &str, &[&str]); 6] = [
        // a MaxNet source on a path with no MaxNet link
        (
            "{ kind = \"red\", limit = 50, min_th = 5, max_th = 15 }",
            "\"maxnet\"",
            &["flows[0].cc", "MaxNet link", "h1 -> r -> h2"],
        ),
        // μ outside (0, 1]
        (
            "{ kind = \"maxnet\", mu = 1.5 }",
            "\"maxnet\"",
            &["links[1].queue_ab.mu", "(0, 1]", "1.5"],
        ),
        (
            "{ kind = \"maxnet\", mu = 0.0 }",
            "\"maxnet\"",
            &["links[1].queue_ab.mu", "(0, 1]"],
        ),
        // a non-positive update period
        (
            "{ kind = \"maxnet\", update_period = \"0ms\" }",
            "\"maxnet\"",
            &["links[1].queue_ab.update_period", "positive"],
        ),
        (
            "{ kind = \"maxnet\", update_period = \"-10ms\" }",
            "\"maxnet\"",
            &["update_period", "negative"],
        ),
        // a bad source gain
        (
            maxnet,
            "{ kind = \"maxnet\", gain = -1.0 }",
            &["flows[0].cc", "gain"],
        ),
    ];
    for (queue, cc, words) in cases {
        let d = tempfile::tempdir().unwrap();
        let (code, err, out) = run(d.path(), queue, cc);
        assert_eq!(code, 2, "{queue} / {cc}: {err}");
        for w in words {
            assert!(err.contains(w), "{queue} / {cc}: stderr lacks {w:?}: {err}");
        }
        assert!(!out, "no output on bad input");
    }
}
