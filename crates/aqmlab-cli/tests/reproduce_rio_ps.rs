//! `aqmlab reproduce rio-ps` as a user meets it, with shortened web runs
//! (`--duration`): the paper's tables are printed beside ours,
//! and the report, the CSV table and the plot are written.

mod common;

use aqmlab_reproduce::table::{read_csv, HEADER};
use std::fs;

#[test]
fn reproduce_rio_ps_writes_tables_report_and_plot() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("rio");
    let o = common::aqmlab()
        .args([
            "reproduce",
            "rio-ps",
            "--seeds",
            "1",
            "--jobs",
            "2",
            "--duration",
            "60s",
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
    // the paper's goodput tables, exactly as on the slides
    for p in [
        "153479 /", "154269 /", "154486 /", "40973 /", "49897 /", "49945 /", "112506 /",
        "104372 /", "104541 /", "185650 /", "184315 /", "183154 /", "43854 /", "49990 /",
        "141796 /", "134325 /", "133164 /", "4207841", "4264890", "4255711", "4234309", "4254291",
        "4244158", "4718311", "4730029", "4723774",
    ] {
        assert!(
            stdout.contains(p),
            "stdout lacks the paper's {p}:\n{stdout}"
        );
    }
    for t in [
        "Exp1 (ITO=3s)",
        "Exp1 (ITO=1s)",
        "Exp2 (ITO=3s)",
        "SHORTENED",
        "RIO-PS / RED",
    ] {
        assert!(stdout.contains(t), "stdout lacks {t}:\n{stdout}");
    }
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    for t in [
        "## (a) Network goodput",
        "## (b) Web traffic",
        "## Notes",
        "SHORTENED",
    ] {
        assert!(report.contains(t), "report lacks {t}");
    }
    let csv = fs::read_to_string(out.join("tables.csv")).unwrap();
    assert_eq!(csv.lines().next().unwrap(), HEADER.join(","));
    let rows = read_csv(&out.join("tables.csv")).unwrap();
    // 2 rates × 3 classes × 3 schemes goodput cells, with the paper's number
    let goodput: Vec<_> = rows.iter().filter(|r| r.table == "goodput").collect();
    assert_eq!(goodput.len(), 18);
    assert!(goodput
        .iter()
        .all(|r| r.paper.is_some() && r.unit == "bytes/s"));
    // the goodput cells: aqmlab's "All" is within 10% of the link rate in B/s
    for r in goodput.iter().filter(|r| r.row.ends_with(" All")) {
        let rate = if r.row.starts_with("1.25") {
            156_250.0
        } else {
            187_500.0
        };
        assert!((r.aqmlab_mean / rate - 1.0).abs() < 0.1, "{r:?}");
    }
    let png = out.join("rt_relative_to_red.png");
    assert!(fs::metadata(&png).unwrap().len() > 1000);
    // drop/mark rate by class: RIO-PS signals short (In) packets less often
    // than long (Out) ones, in every experiment
    assert!(
        stdout.contains("short drop %") && report.contains("Drop and mark rates by packet class")
    );
    let cell = |exp: &str, scheme: &str, metric: &str| -> f64 {
        rows.iter()
            .find(|r| {
                r.table == format!("web {exp}: per class") && r.row == scheme && r.column == metric
            })
            .unwrap_or_else(|| panic!("no {exp} {scheme} {metric}"))
            .aqmlab_mean
    };
    for exp in ["Exp1 (ITO=3s)", "Exp1 (ITO=1s)", "Exp2 (ITO=3s)"] {
        let short = cell(exp, "RIO-PS", "short_drop") + cell(exp, "RIO-PS", "short_mark");
        let long = cell(exp, "RIO-PS", "long_drop") + cell(exp, "RIO-PS", "long_mark");
        assert!(short < long, "{exp}: short {short} % vs long {long} %");
        assert_eq!(
            cell(exp, "DropTail", "short_mark"),
            0.0,
            "DropTail never marks"
        );
    }
    // drop/mark rate over time: one window per 1 s sample (60 s / 100 is
    // less than the sample interval) for each scheme and experiment
    let ot = fs::read_to_string(out.join("signal_over_time.csv")).unwrap();
    assert_eq!(
        ot.lines().next().unwrap(),
        "experiment,scheme,seed,t_end_s,drop_pct,mark_pct"
    );
    assert_eq!(ot.lines().count(), 1 + 9 * 60);
    assert!(
        fs::metadata(out.join("signal_over_time.png"))
            .unwrap()
            .len()
            > 1000
    );
    assert!(report.contains("signal_over_time.png"));
}
