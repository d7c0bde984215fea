//! `aqmlab run --format parquet` writes `<table>.parquet` instead of each
//! `<table>.csv` (their contents are compared in python/tests and in
//! aqmlab's `output::columnar` tests); `auto` (the default) only above
//! 1 MiB of CSV; a sweep writes one Parquet dataset per table.

mod common;
use common::*;

const S: &str = r#"
name = "pq"
duration = "2s"
[nodes]
hosts = ["a", "b"]
[[links]]
a = "a"
b = "b"
rate = "10Mbps"
delay = "5ms"
queue = { kind = "codel" }
[[flows]]
group = "g"
src = "a"
dst = "b"
count = 2
[output]
log = ["a->b"]
"#;

#[test]
fn format_parquet_writes_parquet_tables_and_log() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, out) = run_scenario(dir.path(), S, &["--format", "parquet"]);
    assert_eq!(code, 0, "{err}");
    let mut names: Vec<String> = (std::fs::read_dir(&out).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "events.parquet",
            "flows.parquet",
            "links.parquet",
            "provenance.json",
            "queues.parquet",
            "scenario.toml",
            "summary.json"
        ]
    );
    for n in names.iter().filter(|n| n.ends_with(".parquet")) {
        let b = std::fs::read(out.join(n)).unwrap();
        assert!(b.starts_with(b"PAR1") && b.ends_with(b"PAR1"), "{n}");
    }
    // Back to CSV in the same folder: the Parquet files of the earlier run go.
    let (code, err, _) = run_scenario(dir.path(), S, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("flows.parquet"), "{err}");
    assert!(out.join("flows.csv").exists() && !out.join("flows.parquet").exists());
}

#[test]
fn a_bad_format_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, _) = run_scenario(dir.path(), S, &["--format", "arrow"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--format") && err.contains("parquet"), "{err}");
    let (code, err, _) = run_scenario(
        dir.path(),
        &S.replace("[output]", "[output]\nformat = \"xml\""),
        &[],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("output.format") && err.contains("auto"),
        "{err}"
    );
}

/// `auto`: these tables are far below 1 MiB of CSV, so CSV (the event log
/// too); a table above it is Parquet, table by table (a 10⁴-host star:
/// links.csv would be about 1.9 MB, flows.csv is 0.7 MB).
#[test]
fn auto_writes_small_tables_as_csv_and_large_ones_as_parquet() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, out) = run_scenario(dir.path(), S, &["--format", "auto"]);
    assert_eq!(code, 0, "{err}");
    for n in ["flows.csv", "links.csv", "queues.csv", "events.csv"] {
        assert!(out.join(n).exists(), "{n}");
    }
    let star = "name = \"star\"\nduration = \"100ms\"\n[topology]\nkind = \"star\"\nhosts = 10000\naccess_rate = \"1Gbps\"\naccess_delay = \"1ms\"\nbottleneck_rate = \"100Mbps\"\nbottleneck_delay = \"10ms\"\n[[flows]]\ngroup = \"bulk\"\nsrc = \"h*\"\ndst = \"sink\"\n";
    let d2 = dir.path().join("star");
    std::fs::create_dir(&d2).unwrap();
    let (code, err, out) = run_scenario(&d2, star, &[]);
    assert_eq!(code, 0, "{err}");
    for n in ["flows.csv", "links.parquet", "queues.csv"] {
        assert!(out.join(n).exists(), "{n}");
    }
    assert!(!out.join("links.csv").exists());
}

/// A sweep's runs write CSV (the sweep's tables are read from them); with
/// `--format parquet` the sweep also writes each table of all runs as one
/// Parquet dataset (read whole by pandas in python/tests/test_parquet_sweep.py).
#[test]
fn a_parquet_sweep_writes_one_dataset_per_table() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "{S}[sweep]\nlink = \"a->b\"\n[[sweep.vary]]\nkey = \"links.0.queue.kind\"\nvalues = [\"codel\", \"pie\"]\n"
    );
    let f = write(dir.path(), "sw.toml", &text);
    let sw = dir.path().join("sw");
    let mut c = aqmlab();
    c.arg("sweep")
        .arg(&f)
        .arg("--out")
        .arg(&sw)
        .args(["--format", "parquet"]);
    let (code, _, err) = output(&mut c);
    assert_eq!(code, 0, "{err}");
    for t in ["flows", "links", "queues"] {
        let mut parts: Vec<String> = (std::fs::read_dir(sw.join("parquet").join(t)).unwrap())
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        parts.sort();
        assert_eq!(parts, ["codel_seed-1.parquet", "pie_seed-1.parquet"], "{t}");
        assert!(sw.join("codel/seed-1").join(format!("{t}.csv")).exists());
    }
    let toml = std::fs::read_to_string(sw.join("codel/seed-1/scenario.toml")).unwrap();
    assert!(toml.contains("format = \"csv\""), "{toml}");
    // the default (auto): tables this small give no dataset, and the one
    // of the earlier sweep goes
    let mut c = aqmlab();
    c.arg("sweep").arg(&f).arg("--out").arg(&sw);
    let (code, _, err) = output(&mut c);
    assert_eq!(code, 0, "{err}");
    assert!(!sw.join("parquet").exists());
}
