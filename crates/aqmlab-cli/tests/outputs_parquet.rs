//! `aqmlab run --format parquet` writes `<table>.parquet` instead of each
//! `<table>.csv` (their contents are compared in python/tests and in
//! aqmlab's `output::columnar` tests); CSV (the default) whatever a table's
//! size; a sweep writes one Parquet dataset per table, whose parts may
//! differ in their columns.

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
        err.contains("output.format") && err.contains("`xml`") && err.contains("parquet"),
        "{err}"
    );
    // no form is chosen by size: `auto` is refused, naming the key and the
    // values allowed
    let (code, err, out) = run_scenario(
        dir.path(),
        &S.replace("[output]", "[output]\nformat = \"auto\""),
        &[],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("output.format")
            && err.contains("`auto` is not a format")
            && err.contains("\"csv\" (the default), \"parquet\""),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!out.exists());
    let (code, err, _) = run_scenario(dir.path(), S, &["--format", "auto"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--format") && err.contains("parquet"), "{err}");
}

/// The default is CSV for every table, whatever its size: a 10⁴-host star's
/// `links.csv` (about 2.6 MB) is CSV like its small tables.
#[test]
fn tables_are_csv_whatever_their_size() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, out) = run_scenario(dir.path(), S, &[]);
    assert_eq!(code, 0, "{err}");
    for n in ["flows.csv", "links.csv", "queues.csv", "events.csv"] {
        assert!(out.join(n).exists(), "{n}");
    }
    let star = "name = \"star\"\nduration = \"100ms\"\n[topology]\nkind = \"star\"\nhosts = 10000\naccess_rate = \"1Gbps\"\naccess_delay = \"1ms\"\nbottleneck_rate = \"100Mbps\"\nbottleneck_delay = \"10ms\"\n[[flows]]\ngroup = \"bulk\"\nsrc = \"h*\"\ndst = \"sink\"\n";
    let d2 = dir.path().join("star");
    std::fs::create_dir(&d2).unwrap();
    let (code, err, out) = run_scenario(&d2, star, &[]);
    assert_eq!(code, 0, "{err}");
    let links = out.join("links.csv");
    assert!(std::fs::metadata(&links).unwrap().len() > 2 << 20);
    let names: Vec<String> = (std::fs::read_dir(&out).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".parquet")), "{names:?}");
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
    // the default (csv): no dataset, and the one of the earlier sweep goes
    let mut c = aqmlab();
    c.arg("sweep").arg(&f).arg("--out").arg(&sw);
    let (code, _, err) = output(&mut c);
    assert_eq!(code, 0, "{err}");
    assert!(!sw.join("parquet").exists());
}

/// Whether the schema of a Parquet file names column `name` (the footer,
/// where the schema is, holds each name as plain UTF-8).
fn has_column(p: &std::path::Path, name: &str) -> bool {
    let b = std::fs::read(p).unwrap();
    assert!(
        b.starts_with(b"PAR1") && b.ends_with(b"PAR1"),
        "{}",
        p.display()
    );
    let footer_len = u32::from_le_bytes(b[b.len() - 8..b.len() - 4].try_into().unwrap()) as usize;
    let footer = &b[b.len() - 8 - footer_len..b.len() - 8];
    footer.windows(name.len()).any(|w| w == name.as_bytes())
}

/// A sweep over every queue kind of the catalogue (their `queues.csv` differ
/// in columns: DualPI2 adds its L and C queues') in both formats: `csv`
/// writes no dataset, `parquet` one per table whose every part has every
/// column; nothing temporary is left.
#[test]
fn a_sweep_over_every_queue_kind_writes_its_datasets() {
    let dir = tempfile::tempdir().unwrap();
    let kinds = aqmlab::aqm::QueueSpec::KINDS;
    assert!(kinds.len() >= 15, "{kinds:?}");
    // with the parameters each requires
    let required = |k: &str| match k {
        "red" => ", limit = 100, min_th = 5, max_th = 15",
        "ared" => ", limit = 100, auto = true",
        "rio" => ", limit = 100",
        "markmax" => ", theta = 0.5",
        "step" => ", k = 20",
        _ => "",
    };
    let values: Vec<String> = (kinds.iter())
        .map(|k| format!("{{ kind = \"{k}\"{} }}", required(k)))
        .collect();
    let text = format!(
        "{}[sweep]\nlink = \"a->b\"\n[[sweep.vary]]\nkey = \"links.0.queue\"\nvalues = [{}]\n",
        S.replace("duration = \"2s\"", "duration = \"300ms\"")
            .replace("delay = \"5ms\"", "delay = \"5ms\"\nmonitor = true"),
        values.join(", ")
    );
    let f = write(dir.path(), "sw.toml", &text);
    for format in ["csv", "parquet"] {
        let sw = dir.path().join(format);
        let (code, _, err) = output(
            aqmlab()
                .arg("sweep")
                .arg(&f)
                .arg("--out")
                .arg(&sw)
                .args(["--format", format]),
        );
        assert_eq!(code, 0, "{format}: {err}");
        let rows = csv_rows(&sw.join("sweep.csv"));
        assert_eq!(rows.len(), kinds.len());
        if format == "csv" {
            assert!(!sw.join("parquet").exists());
            continue;
        }
        // every part has DualPI2's L and C queue columns
        for k in kinds {
            let part = sw.join(format!("parquet/queues/{k}_seed-1.parquet"));
            assert!(
                has_column(&part, "l_len_pkts") && has_column(&part, "c_delay_s"),
                "{k}"
            );
        }
        for t in ["flows", "links", "queues", "events"] {
            if !sw.join("parquet").join(t).exists() {
                assert_eq!(t, "events");
                continue;
            }
            let n = std::fs::read_dir(sw.join("parquet").join(t))
                .unwrap()
                .count();
            assert_eq!(n, kinds.len(), "{t}");
        }
        let tmp: Vec<String> = (std::fs::read_dir(sw.join("parquet")).unwrap())
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(tmp.is_empty(), "{tmp:?}");
    }
}

/// The L4S sweep of docs/src/l4s.md (DualPI2, FQ-CoDel with L4S, CAKE),
/// shortened, as documented and with `--format parquet`: every run, then
/// the tables and the datasets, exit 0.
#[test]
fn the_shipped_l4s_sweep_runs_in_both_formats() {
    let dir = tempfile::tempdir().unwrap();
    let f = root().join("scenarios/l4s/l4s-sweep.toml");
    for format in ["csv", "parquet"] {
        let sw = dir.path().join(format);
        let (code, out, err) = output(
            aqmlab()
                .arg("sweep")
                .arg(&f)
                .arg("--out")
                .arg(&sw)
                .args([
                    "--set",
                    "duration=\"1500ms\"",
                    "--set",
                    "output.warmup=\"500ms\"",
                ])
                .args(["--seeds", "2", "--format", format]),
        );
        assert_eq!(code, 0, "{format}: {err}");
        assert!(out.contains("dualpi2") && out.contains("cake"), "{out}");
        let rows = csv_rows(&sw.join("sweep.csv"));
        assert_eq!(rows.len(), 6);
        let kinds: Vec<&str> = rows.iter().filter_map(|r| r["kind"].as_str()).collect();
        assert_eq!(
            kinds,
            ["dualpi2", "dualpi2", "fq_codel", "fq_codel", "cake", "cake"]
        );
        let pq = sw.join("parquet");
        if format == "csv" {
            assert!(!pq.exists());
            continue;
        }
        assert!(has_column(
            &pq.join("queues/cake_seed-1.parquet"),
            "c_len_pkts"
        ));
        let names: Vec<String> = (std::fs::read_dir(&pq).unwrap())
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(!names.iter().any(|n| n.starts_with('.')), "{names:?}");
        assert!(names.contains(&"queues".to_string()), "{names:?}");
    }
}
