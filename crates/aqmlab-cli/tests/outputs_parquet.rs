//! `aqmlab run --format parquet` writes `<table>.parquet` instead of each
//! `<table>.csv` (their contents are compared in python/tests and in
//! aqmlab's `output::columnar` tests); a sweep refuses it with exit 2.

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
fn a_bad_format_and_a_parquet_sweep_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, _) = run_scenario(dir.path(), S, &["--format", "arrow"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--format") && err.contains("parquet"), "{err}");
    let text = format!(
        "{S}format = \"parquet\"\n[sweep]\n[[sweep.vary]]\nkey = \"links.0.queue.kind\"\nvalues = [\"codel\", \"pie\"]\n"
    );
    let f = write(dir.path(), "sw.toml", &text);
    let mut c = aqmlab();
    c.arg("sweep")
        .arg(&f)
        .arg("--out")
        .arg(dir.path().join("sw"));
    let (code, _, err) = output(&mut c);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("output.format"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
