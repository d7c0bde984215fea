//! The `aqmlab` binary as a user meets it: outputs, exit codes, messages.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{aqmlab, csv_rows, root};

const GOOD: &str = r#"
name = "cli-test"
duration = "2s"
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
queue_ab = { kind = "red", limit = 50, min_th = 5, max_th = 15, max_p = 0.1 }
[[flows]]
group = "bulk"
src = "h1"
dst = "h2"
count = 3
start_spread = "100ms"
"#;

/// Run `aqmlab run` on `text`; return (exit code, stderr, out dir).
fn run_text(dir: &Path, text: &str, extra: &[&str]) -> (i32, String, PathBuf) {
    common::run_scenario(dir, text, extra)
}

#[test]
fn run_writes_documented_outputs() {
    let d = tempfile::tempdir().unwrap();
    let (code, err, out) = run_text(d.path(), GOOD, &[]);
    assert_eq!(code, 0, "{err}");
    for f in ["summary.json", "flows.csv", "queues.csv", "links.csv"] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    let s: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for k in [
        "scenario",
        "seed",
        "sim_seconds",
        "wall_seconds",
        "timings",
        "events",
        "totals",
        "groups",
        "flow_figures",
        "queues",
        "fairness",
    ] {
        assert!(s.get(k).is_some(), "summary.json lacks `{k}`");
    }
    // Per-flow and per-link records are in the tables only.
    assert!(s.get("flows").is_none() && s.get("links").is_none());
    let flows = csv_rows(&out.join("flows.csv"));
    assert_eq!(s["totals"]["flows"].as_u64().unwrap() as usize, flows.len());
    let f0 = &flows[0];
    for k in [
        "id",
        "group",
        "src",
        "dst",
        "cc",
        "bytes_acked",
        "goodput_bps",
        "retransmits",
        "timeouts",
        "fast_retransmits",
        "completion_s",
    ] {
        assert!(f0.get(k).is_some(), "flow lacks `{k}`");
    }
    let q = s["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["link"] == "r->h2")
        .unwrap();
    for k in [
        "link",
        "kind",
        "arrivals",
        "enqueued",
        "dropped",
        "marked",
        "mean_len_pkts",
        "mean_delay_s",
    ] {
        assert!(q.get(k).is_some(), "queue lacks `{k}`");
    }
    assert_eq!(q["kind"], "red");
    assert!(q["enqueued"].as_u64().unwrap() > 1000);
    let links = csv_rows(&out.join("links.csv"));
    let l = links.iter().find(|l| l["link"] == "r->h2").unwrap();
    assert_eq!(l["enqueued"], q["enqueued"]);
    let u = l["utilization"].as_f64().unwrap();
    assert!(u > 0.5 && u <= 1.0, "bottleneck utilisation {u}");
    assert!(s["fairness"]["bulk"].as_f64().unwrap() > 0.5);
    assert_eq!(s["sim_seconds"].as_f64().unwrap(), 2.0);
    let queues = fs::read_to_string(out.join("queues.csv")).unwrap();
    // `label` (the scenario's name) and `seed` first, so that the rows of
    // several runs concatenated stay apart.
    assert!(queues.starts_with(
        "label,seed,time_s,link,len_pkts,len_bytes,avg_pkts,delay_s,arrivals,dropped,marked,drop_rate,mark_rate\n"
    ));
    // The per-interval rates are the differences of the cumulative columns.
    let rows: Vec<Vec<&str>> = queues
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .filter(|r: &Vec<&str>| r[3] == "r->h2")
        .collect();
    assert!(rows.iter().all(|r| r[0] == s["scenario"] && r[1] == "1"));
    let mut checked = 0;
    for p in rows.windows(2) {
        let n = |r: &Vec<&str>, i: usize| r[i + 2].parse::<f64>().unwrap();
        let da = n(&p[1], 6) - n(&p[0], 6);
        if da > 0.0 {
            let dr: f64 = p[1][9 + 2].parse().unwrap();
            assert!((dr - (n(&p[1], 7) - n(&p[0], 7)) / da).abs() < 1e-6);
            checked += 1;
        } else {
            assert_eq!(p[1][9 + 2], "");
        }
    }
    assert!(checked > 100);
    assert!(
        queues.lines().count() > 200,
        "10 ms samples over 2 s for each router port"
    );
}

#[test]
fn run_plot_draws_queue_and_signal_figures() {
    let d = tempfile::tempdir().unwrap();
    let (code, err, out) = run_text(d.path(), GOOD, &["--plot"]);
    assert_eq!(code, 0, "{err}");
    for f in ["queues.png", "queues.svg", "signal.png", "signal.svg"] {
        let b = fs::read(out.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(b.len() > 1000, "{f}: {} bytes", b.len());
    }
    let svg = fs::read_to_string(out.join("signal.svg")).unwrap();
    assert!(svg.contains("drop and mark rate over time"));
    assert!(
        svg.contains("r-&gt;h2") || svg.contains("r->h2"),
        "the RED queue's panel"
    );
}

#[test]
fn seed_duration_and_set_flags() {
    let d = tempfile::tempdir().unwrap();
    let (code, err, out) = run_text(
        d.path(),
        GOOD,
        &[
            "--seed",
            "7",
            "--duration",
            "1s",
            "--set",
            "flows.bulk.count=2",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let s: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["seed"], 7);
    assert_eq!(s["sim_seconds"].as_f64().unwrap(), 1.0);
    assert_eq!(s["totals"]["flows"], 2);
    assert_eq!(csv_rows(&out.join("flows.csv")).len(), 2);
}

fn strip_wall(p: &Path) -> String {
    let mut v: serde_json::Value = serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("wall_seconds");
    v.as_object_mut().unwrap().remove("timings");
    v.to_string()
}

#[test]
fn same_seed_same_bytes_other_seed_differs() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("s.toml");
    fs::write(&f, GOOD).unwrap();
    let outs: Vec<PathBuf> = ["a", "b", "c"].iter().map(|n| d.path().join(n)).collect();
    for (o, seed) in outs.iter().zip(["3", "3", "4"]) {
        aqmlab()
            .arg("run")
            .arg(&f)
            .arg("--out")
            .arg(o)
            .args(["--seed", seed])
            .assert()
            .success();
    }
    for file in ["flows.csv", "queues.csv", "links.csv"] {
        assert_eq!(
            fs::read(outs[0].join(file)).unwrap(),
            fs::read(outs[1].join(file)).unwrap(),
            "{file}"
        );
    }
    assert_eq!(
        strip_wall(&outs[0].join("summary.json")),
        strip_wall(&outs[1].join("summary.json"))
    );
    assert_ne!(
        fs::read(outs[0].join("flows.csv")).unwrap(),
        fs::read(outs[2].join("flows.csv")).unwrap()
    );
}

/// Each documented bad input: exit 2, a message naming the key and what is
/// allowed, and no output directory.
#[test]
fn bad_inputs_exit_2_with_clear_message_and_no_output() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "kind = \"red\"",
            "kind = \"blue\"",
            &[
                "links[1].queue_ab.kind",
                "unknown queue kind `blue`",
                "droptail",
                "red",
            ],
        ),
        (
            "min_th = 5",
            "min_th = 15",
            &["links[1].queue_ab.max_th", "greater than min_th"],
        ),
        (
            "min_th = 5",
            "min_th = 25",
            &["links[1].queue_ab.max_th", "greater than min_th (25)"],
        ),
        ("\"10Mbps\"", "\"-10Mbps\"", &["links[1].rate", "positive"]),
        ("\"10Mbps\"", "\"0Mbps\"", &["links[1].rate", "positive"]),
        (
            "dst = \"h2\"",
            "dst = \"h3\"",
            &["flows[0].dst", "unknown node `h3`", "`h1`, `h2`, `r`"],
        ),
        (
            "\"10ms\"",
            "\"10 msec\"",
            &[
                "links[1].delay",
                "unknown time unit `msec`",
                "ns, us, ms, s",
            ],
        ),
        (
            "\"10Mbps\"",
            "\"10Mbsp\"",
            &["links[1].rate", "unknown rate unit `Mbsp`", "Mbps"],
        ),
        ("\"10Mbps\"", "10", &["links[1].rate", "a unit is required"]),
        (
            "count = 3",
            "count = 3\ncc = \"cubicle\"",
            &[
                "flows[0].cc",
                "unknown congestion control `cubicle`",
                "newreno",
            ],
        ),
        ("max_p = 0.1", "max_p = 1.5", &["max_p", "(0, 1]"]),
        ("limit = 50", "limit = 0", &["limit", "positive"]),
        (
            "count = 3",
            "count = 3\nsizee = \"1MB\"",
            &["flows[0].sizee", "unknown key"],
        ),
        ("[nodes]", "[nodes", &["invalid TOML", "line"]),
        (
            "duration = \"2s\"",
            "duration = \"-2s\"",
            &["duration", "negative"],
        ),
        (
            "duration = \"2s\"",
            "duration = \"2s\"\noutput = { warmup = \"2s\" }",
            &[
                "output.warmup",
                "2 s is not shorter than `duration` (2 s)",
                "0 s ≤ warmup < duration",
            ],
        ),
        (
            "duration = \"2s\"",
            "duration = \"2s\"\noutput = { warmup = \"-1s\" }",
            &["output.warmup", "negative"],
        ),
    ];
    for (from, to, needles) in cases {
        assert!(GOOD.contains(from), "test case does not apply: {from}");
        let d = tempfile::tempdir().unwrap();
        let (code, err, out) = run_text(d.path(), &GOOD.replacen(from, to, 1), &[]);
        assert_eq!(code, 2, "{to}: exit {code}, stderr: {err}");
        assert!(
            err.contains("s.toml"),
            "{to}: message does not name the file: {err}"
        );
        for n in *needles {
            assert!(err.contains(n), "{to}: message lacks `{n}`: {err}");
        }
        assert!(!out.exists(), "{to}: output directory written on bad input");
    }
}

#[test]
fn missing_file_and_bad_flags_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let o = aqmlab()
        .args(["run", "/nonexistent/x.toml", "--out"])
        .arg(d.path().join("o"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read"));
    let (code, err, out) = run_text(d.path(), GOOD, &["--duration", "ten"]);
    assert_eq!(code, 2);
    assert!(err.contains("--duration"), "{err}");
    assert!(!out.exists());
    let (code, err, _) = run_text(d.path(), GOOD, &["--set", "links.nowhere.rate=\"1Mbps\""]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown element `nowhere`"), "{err}");
    let o = aqmlab().args(["frobnicate"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn shipped_scenarios_all_load() {
    let mut n = 0;
    let mut stack = vec![root().join("scenarios")];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "toml")
                // a reproduction's data beside its scenarios, not a scenario
                && !aqmlab::scenario::REPRODUCTION_DATA_FILES
                    .iter()
                    .any(|f| p.ends_with(f))
            {
                aqmlab::Scenario::from_file(&p).unwrap_or_else(|e| panic!("{e}"));
                n += 1;
            }
        }
    }
    assert!(n >= 2);
}

#[test]
fn reproduce_red_gateway_writes_tables_report_and_plots() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("rg");
    let o = aqmlab()
        .args(["reproduce", "red-gateway", "--seeds", "1", "--out"])
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
    for t in ["Table I", "Table II", "Table III", "Table IV"] {
        assert!(stdout.contains(t), "stdout lacks {t}");
    }
    // the paper's numbers are printed beside ours
    assert!(
        stdout.contains("651 /") && stdout.contains("0.55 /"),
        "{stdout}"
    );
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("Table IV") && report.contains("Usage"));
    let csv = fs::read_to_string(out.join("tables.csv")).unwrap();
    assert!(csv.lines().count() > 50);
    for p in [
        "goodput_b.png",
        "goodput_b.svg",
        "queue_b1_seed1.png",
        "queue_b1_seed1.svg",
    ] {
        assert!(fs::metadata(out.join(p)).unwrap().len() > 1000, "{p} empty");
    }
}

#[test]
fn reproduce_bad_arguments_exit_2() {
    let o = aqmlab()
        .args(["reproduce", "red-gateway", "--seeds", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--seeds"));
    let o = aqmlab()
        .args(["reproduce", "no-such-paper"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("red-gateway"),
        "lists the allowed papers"
    );
}

#[test]
fn sweep_runs_every_combination_and_writes_table_and_plots() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("sw");
    let o = aqmlab()
        .arg("sweep")
        .arg(root().join("scenarios/aqm-compare.toml"))
        .args(["--seeds", "1", "--set", "duration=\"5s\"", "--out"])
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
    let kinds = [
        "droptail",
        "red",
        "ared",
        "codel",
        "fq_codel",
        "sfq_codel",
        "pie",
        "fq_pie",
    ];
    for k in kinds {
        assert!(
            stdout.contains(&format!("\n| {k} | ")),
            "summary lacks {k}: {stdout}"
        );
        assert!(out.join(k).join("seed-1").join("summary.json").exists());
    }
    let csv = fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + kinds.len());
    // the AQMs keep the standing queue far below DropTail's 4 x BDP buffer
    let delay = |k: &str| -> f64 {
        let line = csv
            .lines()
            .find(|l| l.starts_with(&format!("{k},")))
            .unwrap();
        let col = csv
            .lines()
            .next()
            .unwrap()
            .split(',')
            .position(|c| c == "mean_delay_s")
            .unwrap();
        line.split(',').nth(col).unwrap().parse().unwrap()
    };
    assert!(delay("droptail") > 5.0 * delay("codel"), "{csv}");
    for p in [
        "queue_delay.png",
        "queue_delay.svg",
        "queue_length.png",
        "summary.md",
    ] {
        assert!(fs::metadata(out.join(p)).unwrap().len() > 500, "{p}");
    }
}

#[test]
fn sweep_bad_input_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("s.toml");
    // a scenario without [sweep]
    fs::write(&f, GOOD).unwrap();
    let o = aqmlab()
        .arg("sweep")
        .arg(&f)
        .arg("--out")
        .arg(d.path().join("o"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no [sweep] table"));
    // an unknown link to report
    let text = format!(
        "{GOOD}\n[sweep]\nlink = \"r->h9\"\n[[sweep.vary]]\nkey = \"flows.bulk.count\"\nvalues = [1, 2]\n"
    );
    fs::write(&f, text).unwrap();
    let o = aqmlab()
        .arg("sweep")
        .arg(&f)
        .arg("--out")
        .arg(d.path().join("o"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("sweep.link") && err.contains("r->h2"), "{err}");
    assert!(!d.path().join("o").exists());
}

#[test]
fn cwnd_trace_on_request() {
    let d = tempfile::tempdir().unwrap();
    let (code, err, out) = run_text(d.path(), GOOD, &["--set", "flows.bulk.trace_cwnd=true"]);
    assert_eq!(code, 0, "{err}");
    let csv = fs::read_to_string(out.join("cwnd.csv")).unwrap();
    assert!(csv.starts_with("label,seed,time_s,flow,group,cc,cwnd,ssthresh,in_flight,srtt_s"));
    // 3 flows sampled every 10 ms for 2 s (t = 0 included)
    assert_eq!(csv.lines().count() - 1, 3 * 201);
    let max_cwnd = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(6).unwrap().parse::<f64>().unwrap())
        .fold(0.0, f64::max);
    assert!(max_cwnd > 4.0, "windows grow: {max_cwnd}");
    // no trace unless asked
    let d2 = tempfile::tempdir().unwrap();
    let (_, _, out2) = run_text(d2.path(), GOOD, &[]);
    assert!(!out2.join("cwnd.csv").exists());
}

#[test]
fn throughput_series_on_request_add_up_to_goodput() {
    let d = tempfile::tempdir().unwrap();
    let (code, err, out) = run_text(
        d.path(),
        GOOD,
        &["--set", "output.throughput_bin=\"100ms\""],
    );
    assert_eq!(code, 0, "{err}");
    let csv = fs::read_to_string(out.join("throughput.csv")).unwrap();
    assert!(csv.starts_with("label,seed,time_s,flow,group,throughput_bps"));
    assert_eq!(
        csv.lines().count() - 1,
        3 * 21,
        "3 flows x (2 s / 100 ms + 1) bins"
    );
    let s: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["totals"]["flows"], 3);
    for f in &csv_rows(&out.join("flows.csv")) {
        let id = f["id"].as_u64().unwrap().to_string();
        let bytes: f64 = csv
            .lines()
            .skip(1)
            .filter(|l| l.split(',').nth(3) == Some(id.as_str()))
            .map(|l| l.split(',').nth(5).unwrap().parse::<f64>().unwrap() * 0.1 / 8.0)
            .sum();
        let delivered = f["segments_delivered"].as_f64().unwrap() * 1000.0;
        assert!(
            (bytes - delivered).abs() < 1.0,
            "flow {id}: {bytes} vs {delivered}"
        );
    }
}

#[test]
fn reproduce_codel_highspeed_tcp_prints_all_five_tables() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("hs");
    let o = aqmlab()
        .args(["reproduce", "codel-highspeed-tcp", "--seeds", "1", "--out"])
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
    for t in ["Table 1", "Table 2", "Table 3", "Table 4", "Table 5"] {
        assert!(stdout.contains(t), "stdout lacks {t}");
    }
    // the paper's numbers beside ours
    assert!(
        stdout.contains("222.941 /") && stdout.contains("0.997 /"),
        "{stdout}"
    );
    let csv = fs::read_to_string(out.join("tables.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 4 * 9 + 2 * 3);
    // CoDel and sfqCoDel keep the bottleneck busy with any of the three CCs
    for line in csv
        .lines()
        .filter(|l| l.starts_with("Table 1,CoDel") || l.starts_with("Table 1,sfqCoDel"))
    {
        let ours: f64 = line.split(',').nth(5).unwrap().parse().unwrap();
        assert!(ours > 450.0, "{line}");
    }
    for p in [
        "queue_cubic.png",
        "queue_htcp.png",
        "queue_compound.svg",
        "report.md",
    ] {
        assert!(fs::metadata(out.join(p)).unwrap().len() > 1000, "{p}");
    }
}

#[test]
fn no_arguments_is_a_one_line_usage_error() {
    let o = aqmlab().output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && err.contains("usage: aqmlab"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
}

#[test]
fn list_prints_the_registry() {
    let o = aqmlab().arg("list").output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    for k in aqmlab::aqm::QueueSpec::KINDS
        .iter()
        .chain(aqmlab::tcp::cc::CcConfig::NAMES)
        .chain(aqmlab::traffic::WorkloadSpec::KINDS)
    {
        assert!(out.contains(&format!("  {k} ")), "{k} missing: {out}");
    }
    assert_eq!(out, aqmlab::catalogue::list_all());
    let o = aqmlab().args(["list", "red"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("| max_p | number | 0.1 | probability | (0, 1] |"),
        "{out}"
    );
    assert!(out.contains("| limit | limit | required |"), "{out}");
    assert!(out.contains("Floyd & Jacobson 1993"), "{out}");
    let o = aqmlab().args(["list", "nope"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("`nope`") && err.contains("fq_pie") && err.contains("dctcp"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// The messages of the two-stage parser, through the CLI: exit 2, one line
/// naming the innermost key, no output written.
#[test]
fn parse_errors_name_the_innermost_key() {
    let cases: &[(&str, &[&str])] = &[
        (
            "links.bottleneck.queue_ab.max_p=\"abc\"",
            &["`links[1].queue_ab.max_p`: expected a number, got string \"abc\""],
        ),
        (
            "links.bottleneck.queue_ab={ kind = \"red\" }",
            &["`links[1].queue_ab.limit`: required"],
        ),
        (
            "links.bottleneck.queue_ab.kind=7",
            &[
                "`links[1].queue_ab.kind`",
                "`droptail`",
                "`fq_pie`",
                "`step`",
            ],
        ),
        (
            "links.0=3",
            &["`links[0]`: expected a table, got integer `3`"],
        ),
    ];
    for (set, needles) in cases {
        let d = tempfile::tempdir().unwrap();
        let (code, err, out) = run_text(d.path(), GOOD, &["--set", set]);
        assert_eq!(code, 2, "{set}: {err}");
        assert_eq!(err.lines().count(), 1, "{set}: {err}");
        for n in *needles {
            assert!(err.contains(n), "{set}: lacks {n}: {err}");
        }
        for rust in ["struct ", "enum ", "f64", "QueueSpec", "LinkSpec"] {
            assert!(!err.contains(rust), "{set}: {err}");
        }
        assert!(!out.exists(), "{set}: output written");
    }
}

/// Without `--out`, `aqmlab run` writes to `out/<file stem>/` under the
/// working directory and names that folder on stderr.
#[test]
fn run_without_out_writes_to_out_stem() {
    let d = tempfile::tempdir().unwrap();
    let file = common::write(d.path(), "mine.toml", GOOD);
    let (code, _, err) = common::output(aqmlab().current_dir(d.path()).arg("run").arg(&file));
    assert_eq!(code, 0, "{err}");
    let out = d.path().join("out").join("mine");
    assert!(out.join("summary.json").exists(), "{err}");
    assert!(err.contains("writing to out/mine"), "{err}");
}

/// A typo inside `[sweep]` is refused by `aqmlab run` too (exit 2, naming
/// the key), although `run` does not run the sweep; nothing is written.
#[test]
fn run_checks_the_sweep_table() {
    let d = tempfile::tempdir().unwrap();
    let text = format!(
        "{GOOD}\n[sweep]\nseeds = 2\n[[sweep.vary]]\nkey = \"links.bottleneck.queue_ab.max_pp\"\nvalues = [0.1, 0.2]\n"
    );
    let (code, err, out) = run_text(d.path(), &text, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("max_pp") && err.contains("unknown key"),
        "{err}"
    );
    assert!(!out.join("summary.json").exists());
    let text = format!("{GOOD}\n[sweep]\nseedz = 2\n");
    let (code, err, _) = run_text(d.path(), &text, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("sweep.seedz"), "{err}");
}
