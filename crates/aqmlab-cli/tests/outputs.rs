//! Output folders: complete or absent, reuse, provenance, tables, resumable
//! and sharded sweeps, interruption, progress lines, pcap traces.

mod common;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use common::{aqmlab, csv_rows, write};

/// A dumbbell with RED + ECN at the bottleneck (marks), a lossy reverse
/// path (retransmissions) and a CBR flow (UDP in pcap).
const ECN: &str = r#"
name = "out-test"
duration = "3s"
[nodes]
hosts = ["h1", "h2", "h3"]
routers = ["r"]
[tcp]
ecn = true
[[links]]
a = "h1"
b = "r"
rate = "100Mbps"
delay = "1ms"
queue = { kind = "droptail", limit = 10000 }
[[links]]
a = "h3"
b = "r"
rate = "100Mbps"
delay = "1ms"
queue = { kind = "droptail", limit = 10000 }
[[links]]
name = "bottleneck"
a = "r"
b = "h2"
rate = "10Mbps"
delay = "10ms"
queue_ab = { kind = "red", limit = 30, min_th = 5, max_th = 15, max_p = 0.1, ecn = true }
[[flows]]
group = "bulk"
src = "h1"
dst = "h2"
count = 3
start_spread = "100ms"
trace_cwnd = true
[[flows]]
group = "voice"
src = "h3"
dst = "h2"
cbr = { rate = "500kbps", packet_size = 200 }
[output]
throughput_bin = "100ms"
"#;

/// No random component at all: DropTail and a fixed start.
const FIXED: &str = r#"
name = "fixed"
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
queue_ab = { kind = "droptail", limit = 20 }
[[flows]]
group = "bulk"
src = "h1"
dst = "h2"
count = 2
[sweep]
link = "r->h2"
[[sweep.vary]]
key = "links.bottleneck.queue_ab.limit"
values = [10, 40]
"#;

fn run(args: &[&str]) -> (i32, String, String) {
    common::output(aqmlab().args(args))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every file under `dir`, relative path → contents, with the fields that
/// legitimately differ between two invocations masked (`wall_seconds`,
/// `timings`, the command line).
fn tree(dir: &Path) -> BTreeMap<String, String> {
    fn walk(base: &Path, d: &Path, m: &mut BTreeMap<String, String>) {
        for e in fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, m);
                continue;
            }
            let rel = p.strip_prefix(base).unwrap().display().to_string();
            let bytes = fs::read(&p).unwrap();
            let text = match String::from_utf8(bytes) {
                Ok(t) => t,
                Err(e) => format!("{:?}", e.into_bytes()),
            };
            let text = if rel.ends_with("summary.json") {
                let mut v: Value = serde_json::from_str(&text).unwrap();
                let o = v.as_object_mut().unwrap();
                o.remove("wall_seconds").expect("wall_seconds");
                o.remove("timings").expect("timings");
                serde_json::to_string_pretty(&v).unwrap()
            } else if rel.ends_with("provenance.json") {
                let mut v: Value = serde_json::from_str(&text).unwrap();
                v["command_line"] = Value::Null;
                v.to_string()
            } else {
                text
            };
            m.insert(rel, text);
        }
    }
    let mut m = BTreeMap::new();
    walk(dir, dir, &mut m);
    m
}

fn no_tmp_files(dir: &Path) {
    for (rel, _) in tree(dir) {
        assert!(!rel.contains(".tmp-"), "temporary file left: {rel}");
    }
}

#[test]
fn reused_out_keeps_no_file_of_an_earlier_scenario() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "s.toml", ECN);
    let out = d.path().join("o");
    let (c, _, e) = run(&["run", s(&f), "--out", s(&out), "--plot"]);
    assert_eq!(c, 0, "{e}");
    for x in [
        "cwnd.csv",
        "throughput.csv",
        "cwnd.png",
        "throughput.svg",
        "queues.png",
    ] {
        assert!(out.join(x).is_file(), "{x}");
    }
    fs::write(out.join("notes.txt"), "mine").unwrap();
    // The same folder, a scenario without traces, no plots.
    let g = write(d.path(), "g.toml", FIXED.split("[sweep]").next().unwrap());
    let (c, _, e) = run(&["run", s(&g), "--out", s(&out)]);
    assert_eq!(c, 0, "{e}");
    for x in [
        "cwnd.csv",
        "throughput.csv",
        "cwnd.png",
        "throughput.svg",
        "queues.png",
    ] {
        assert!(
            !out.join(x).exists(),
            "{x} of the earlier run is still there"
        );
    }
    assert!(e.contains("removed") && e.contains("cwnd.csv"), "{e}");
    assert_eq!(fs::read_to_string(out.join("notes.txt")).unwrap(), "mine");
    let sum: Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(sum["scenario"], "fixed");
    no_tmp_files(&out);
}

#[test]
fn invalid_out_is_bad_input_naming_the_path() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "s.toml", ECN);
    let file = write(d.path(), "plain-file", "x");
    let (c, _, e) = run(&["run", s(&f), "--out", s(&file)]);
    assert_eq!(c, 2, "{e}");
    assert!(
        e.contains("plain-file") && e.contains("not a directory"),
        "{e}"
    );
    let (c, _, e) = run(&["run", s(&f), "--out", "/dev/null"]);
    assert_eq!(c, 2, "{e}");
    assert!(e.contains("/dev/null"), "{e}");
    let (c, _, e) = run(&["run", s(&f), "--out", &format!("{}/sub", s(&file))]);
    assert_eq!(c, 2, "{e}");
    assert!(e.contains("plain-file"), "{e}");
    // A read-only folder (root writes anywhere: checked only when it bites).
    let ro = d.path().join("ro");
    fs::create_dir(&ro).unwrap();
    let mut perm = fs::metadata(&ro).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o555);
    fs::set_permissions(&ro, perm).unwrap();
    if fs::File::create(ro.join("probe")).is_err() {
        let (c, _, e) = run(&["run", s(&f), "--out", s(&ro.join("o"))]);
        assert_eq!(c, 2, "{e}");
        assert!(e.contains("ro") && e.contains("cannot write"), "{e}");
    }
}

#[test]
fn provenance_records_the_effective_scenario_and_reruns_identically() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "s.toml", ECN);
    let out = d.path().join("o");
    let (c, _, e) = run(&[
        "run",
        s(&f),
        "--out",
        s(&out),
        "--seed",
        "7",
        "--set",
        "links.bottleneck.queue_ab.max_p=0.2",
        "--duration",
        "2s",
    ]);
    assert_eq!(c, 0, "{e}");
    let p: Value =
        serde_json::from_str(&fs::read_to_string(out.join("provenance.json")).unwrap()).unwrap();
    assert_eq!(p["seed"], 7);
    assert_eq!(p["aqmlab_version"], env!("CARGO_PKG_VERSION"));
    assert!(!p["git_commit"].as_str().unwrap().is_empty());
    assert_eq!(p["overrides"][0], "links.bottleneck.queue_ab.max_p=0.2");
    assert_eq!(p["overrides"][1], "duration=\"2s\"");
    assert!(p["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a == "--seed"));
    let toml = fs::read_to_string(out.join("scenario.toml")).unwrap();
    assert!(
        toml.contains("max_p = 0.2")
            && toml.contains("seed = 7")
            && toml.contains("duration = \"2s\""),
        "{toml}"
    );
    // The effective scenario alone repeats the run.
    let out2 = d.path().join("o2");
    let (c, _, e) = run(&["run", s(&out.join("scenario.toml")), "--out", s(&out2)]);
    assert_eq!(c, 0, "{e}");
    let t1 = tree(&out);
    let t2 = tree(&out2);
    for k in [
        "summary.json",
        "flows.csv",
        "queues.csv",
        "links.csv",
        "cwnd.csv",
        "scenario.toml",
    ] {
        assert_eq!(t1[k], t2[k], "{k}");
    }
}

#[test]
fn links_csv_has_every_counter_of_summary_json() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "s.toml", ECN);
    let out = d.path().join("o");
    let (c, _, e) = run(&["run", s(&f), "--out", s(&out)]);
    assert_eq!(c, 0, "{e}");
    let sum: Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let mut rd = csv::Reader::from_path(out.join("links.csv")).unwrap();
    let head: BTreeSet<String> = rd.headers().unwrap().iter().map(String::from).collect();
    assert!(sum.get("links").is_none(), "links are in links.csv only");
    for (k, v) in sum["queues"][0].as_object().unwrap() {
        if v.is_array() {
            continue; // per-class counters are in classes.csv
        }
        assert!(head.contains(k), "links.csv lacks `{k}` of queues[]");
    }
    // One drop rate: dropped / arrivals.
    let bott = rd
        .deserialize::<BTreeMap<String, String>>()
        .map(|r| r.unwrap())
        .find(|r| r["link"] == "r->h2")
        .unwrap();
    let dr: f64 = bott["drop_rate"].parse().unwrap();
    let want = bott["dropped"].parse::<f64>().unwrap() / bott["arrivals"].parse::<f64>().unwrap();
    assert!((dr - want).abs() < 1e-12);
    assert!(
        bott["marked"].parse::<u64>().unwrap() > 0,
        "the RED queue marks"
    );
}

fn sweep(f: &Path, out: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut a = vec!["sweep", s(f), "--out", s(out), "--jobs", "2"];
    a.extend_from_slice(extra);
    run(&a)
}

#[test]
fn sharded_and_resumed_sweeps_end_identical_to_an_uninterrupted_one() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "s.toml",
        &format!("{ECN}\n[sweep]\nlink = \"r->h2\"\n[[sweep.vary]]\nkey = \"links.bottleneck.queue_ab.max_p\"\nvalues = [0.05, 0.2]\n[[sweep.vary]]\nkey = \"flows.bulk.count\"\nvalues = [2, 3]\n"),
    );
    let a = d.path().join("a");
    let (c, stdout, e) = sweep(&f, &a, &["--seeds", "2"]);
    assert_eq!(c, 0, "{e}");
    assert!(stdout.contains("95 %"), "{stdout}");
    // Tidy table: one column per axis, the seed, per-group goodput.
    let mut rd = csv::Reader::from_path(a.join("sweep.csv")).unwrap();
    let head: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        head[..3],
        [
            "links.bottleneck.queue_ab.max_p",
            "flows.bulk.count",
            "seed"
        ]
    );
    for g in [
        "goodput_bps_bulk",
        "goodput_bps_voice",
        "drop_rate",
        "mark_rate",
    ] {
        assert!(head.iter().any(|h| h == g), "{g}: {head:?}");
    }
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 8);
    let first3: Vec<&str> = rows[1].iter().take(3).collect();
    assert_eq!(first3, ["0.05", "2", "2"]);
    // Shards, then an interruption-like loss, then the plain command.
    let b = d.path().join("b");
    let (c, _, e) = sweep(&f, &b, &["--seeds", "2", "--shard", "1/3"]);
    assert_eq!(c, 0, "{e}");
    assert!(!b.join("sweep.csv").exists(), "a shard writes no table");
    assert!(e.contains("without --shard"), "{e}");
    let (c, _, e) = sweep(&f, &b, &["--seeds", "2", "--shard", "2/3"]);
    assert_eq!(c, 0, "{e}");
    let done: Vec<PathBuf> = fs::read_dir(&b)
        .unwrap()
        .flatten()
        .flat_map(|x| fs::read_dir(x.path()).unwrap().flatten().map(|y| y.path()))
        .collect();
    assert_eq!(done.len(), 6, "shards 1 and 2 of 3 hold 6 of 8 runs");
    fs::remove_file(done[0].join("summary.json")).unwrap(); // killed mid-commit
    let (c, _, e) = sweep(&f, &b, &["--seeds", "2"]);
    assert_eq!(c, 0, "{e}");
    assert!(e.contains("5 of 8 runs already complete"), "{e}");
    assert_eq!(tree(&a), tree(&b));
    no_tmp_files(&b);
    // A changed scenario reruns everything (hash differs), fewer seeds leave
    // stale runs: refused, then deleted with --force.
    let (c, _, e) = sweep(&f, &b, &["--seeds", "1"]);
    assert_eq!(c, 2, "{e}");
    assert!(
        e.contains("not part of this sweep") && e.contains("seed-2") && e.contains("--force"),
        "{e}"
    );
    let (c, _, e) = sweep(&f, &b, &["--seeds", "1", "--force"]);
    assert_eq!(c, 0, "{e}");
    assert!(e.contains("deleted 4 run folder"), "{e}");
    let rows = fs::read_to_string(b.join("sweep.csv")).unwrap();
    assert_eq!(rows.lines().count(), 5);
    let (c, _, e) = sweep(&f, &b, &["--seeds", "1", "--set", "duration=\"2s\""]);
    assert_eq!(c, 0, "{e}");
    assert!(
        !e.contains("already complete"),
        "a changed scenario is run again: {e}"
    );
    // Bad shards.
    for bad in ["0/3", "4/3", "x", "1/0"] {
        let (c, _, e) = sweep(&f, &b, &["--shard", bad]);
        assert_eq!(c, 2, "{bad}: {e}");
        assert!(e.contains("--shard"), "{e}");
    }
}

#[test]
fn identical_seeds_are_flagged() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "s.toml", FIXED);
    let out = d.path().join("o");
    let (c, _, e) = sweep(&f, &out, &["--seeds", "3"]);
    assert_eq!(c, 0, "{e}");
    assert!(e.contains("identical results"), "{e}");
    let md = fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        md.contains("identical results") && md.contains("Standard deviation"),
        "{md}"
    );
    // With a random component, no warning.
    let g = write(
        d.path(),
        "g.toml",
        &FIXED.replace("count = 2", "count = 2\nstart_spread = \"50ms\""),
    );
    let (c, _, e) = sweep(&g, &d.path().join("p"), &["--seeds", "3"]);
    assert_eq!(c, 0, "{e}");
    assert!(!e.contains("identical results"), "{e}");
}

#[test]
fn progress_lines_when_stderr_is_not_a_terminal() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "s.toml", FIXED);
    let o = aqmlab()
        .env("AQMLAB_PROGRESS_SECS", "0.001")
        .args([
            "sweep",
            s(&f),
            "--out",
            s(&d.path().join("o")),
            "--seeds",
            "4",
            "--jobs",
            "1",
        ])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{e}");
    let line = e
        .lines()
        .find(|l| l.starts_with("sweep 8 runs: "))
        .unwrap_or_else(|| panic!("{e}"));
    assert!(line.contains("/8 (") && line.contains("elapsed"), "{line}");
    assert!(e.contains("8/8 (100 %)"), "{e}");
}

#[test]
fn interrupted_sweep_leaves_complete_runs_and_resumes_identically() {
    let d = tempfile::tempdir().unwrap();
    // Runs long enough (~0.6 s each, 12 of them) to be caught in progress.
    let text = format!("{}\n[sweep]\nlink = \"r->h2\"\n[[sweep.vary]]\nkey = \"links.bottleneck.queue_ab.max_p\"\nvalues = [0.05, 0.1, 0.2]\n", ECN.replace("duration = \"3s\"", "duration = \"120s\"").replace("rate = \"10Mbps\"", "rate = \"40Mbps\""));
    let f = write(d.path(), "s.toml", &text);
    let b = d.path().join("b");
    let bin = assert_cmd::cargo::cargo_bin("aqmlab");
    let child = std::process::Command::new(&bin)
        .args([
            "sweep",
            s(&f),
            "--out",
            s(&b),
            "--seeds",
            "4",
            "--jobs",
            "2",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the first complete run, then interrupt.
    let t0 = std::time::Instant::now();
    while !fs::read_dir(&b)
        .map(|r| {
            r.flatten().any(|x| {
                x.path().join("seed-1/summary.json").exists()
                    || x.path().join("seed-2/summary.json").exists()
                    || x.path().join("seed-3/summary.json").exists()
            })
        })
        .unwrap_or(false)
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(t0.elapsed().as_secs() < 120, "no run completed");
    }
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    if o.status.code() == Some(0) {
        eprintln!("the sweep finished before the signal: nothing to check");
        return;
    }
    assert_eq!(o.status.code(), Some(130), "{e}");
    assert!(
        e.contains("runs complete in") && e.contains("same command"),
        "{e}"
    );
    no_tmp_files(&b);
    // Every run folder left is complete: summary.json and all its files.
    for x in fs::read_dir(&b).unwrap().flatten() {
        for r in fs::read_dir(x.path()).unwrap().flatten() {
            let p = r.path();
            assert!(
                p.join("summary.json").is_file(),
                "{} is partial",
                p.display()
            );
        }
    }
    let (c, _, e) = sweep(&f, &b, &["--seeds", "4"]);
    assert_eq!(c, 0, "{e}");
    let a = d.path().join("a");
    let (c, _, e) = sweep(&f, &a, &["--seeds", "4"]);
    assert_eq!(c, 0, "{e}");
    assert_eq!(tree(&a), tree(&b));
}

/// Minimal independent reading of the pcap bytes (not aqmlab's writer):
/// the record list from `pcap-parser`, headers decoded by offset.
struct Pkt {
    ts_ns: u64,
    orig_len: u32,
    proto: u8,
    ecn: u8,
    sport: u16,
    dport: u16,
    seq: u32,
    tcp_flags: u8,
    payload: u32,
}

fn read_pcap(p: &Path) -> Vec<Pkt> {
    let bytes = fs::read(p).unwrap();
    let cap = pcap_parser::PcapCapture::from_file(&bytes).unwrap();
    assert_eq!(cap.header.magic_number, 0xa1b2_3c4d, "nanosecond magic");
    assert_eq!(cap.header.snaplen, 128);
    cap.blocks
        .iter()
        .map(|b| {
            let d = b.data;
            assert_eq!(&d[12..14], &[0x08, 0x00], "IPv4 ethertype");
            let ip = &d[14..];
            let ihl = (ip[0] & 0x0f) as usize * 4;
            let total = u16::from_be_bytes([ip[2], ip[3]]) as u32;
            let l4 = &ip[ihl..];
            let (hl, flags, seq) = if ip[9] == 6 {
                (
                    (l4[12] >> 4) as u32 * 4,
                    l4[13],
                    u32::from_be_bytes([l4[4], l4[5], l4[6], l4[7]]),
                )
            } else {
                (8, 0, 0)
            };
            assert_eq!(b.origlen, 14 + total);
            Pkt {
                ts_ns: b.ts_sec as u64 * 1_000_000_000 + b.ts_usec as u64,
                orig_len: b.origlen,
                proto: ip[9],
                ecn: ip[1] & 3,
                sport: u16::from_be_bytes([l4[0], l4[1]]),
                dport: u16::from_be_bytes([l4[2], l4[3]]),
                seq,
                tcp_flags: flags,
                payload: total - ihl as u32 - hl,
            }
        })
        .collect()
}

#[test]
fn pcap_traces_match_aqmlab_counters() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "s.toml",
        &ECN.replace(
            "[output]",
            "[output]\npcap = [\"h1-r\", \"bottleneck\", \"h3->r\"]",
        ),
    );
    let out = d.path().join("o");
    let (c, _, e) = run(&["run", s(&f), "--out", s(&out)]);
    assert_eq!(c, 0, "{e}");
    let sum: Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    // links.csv: each link direction with its queue's counters.
    let rows = csv_rows(&out.join("links.csv"));
    let link = |n: &str| rows.iter().find(|l| l["link"] == n).unwrap().clone();
    let queue = link;
    let files: BTreeSet<String> = fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|x| x.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".pcap"))
        .collect();
    assert_eq!(
        files,
        [
            "h1-r.h1-r.pcap",
            "h1-r.r-h1.pcap",
            "bottleneck.r-h2.pcap",
            "bottleneck.h2-r.pcap",
            "h3-r.h3-r.pcap"
        ]
        .map(String::from)
        .into_iter()
        .collect()
    );
    // The access link carries every packet the TCP senders emit, before
    // any queue can drop them: count, sequence numbers, retransmissions.
    let up = read_pcap(&out.join("h1-r.h1-r.pcap"));
    assert_eq!(
        up.len() as u64,
        link("h1->r")["tx_packets"].as_u64().unwrap()
    );
    // IPv4 + TCP headers are 40 B, as the default tcp.header_bytes.
    let wire: u64 = up.iter().map(|p| p.orig_len as u64 - 14).sum();
    assert_eq!(wire, link("h1->r")["tx_bytes"].as_u64().unwrap());
    assert!(up.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns));
    let flows = csv_rows(&out.join("flows.csv"));
    assert_eq!(
        sum["totals"]["flows"].as_u64().unwrap() as usize,
        flows.len()
    );
    let mss = 1000u32;
    for fl in flows.iter().filter(|f| f["group"] == "bulk") {
        let port = 1024 + fl["id"].as_u64().unwrap() as u16;
        let data: Vec<&Pkt> = up
            .iter()
            .filter(|p| p.proto == 6 && p.sport == port && p.payload > 0)
            .collect();
        assert_eq!(data.len() as u64, fl["segments_sent"].as_u64().unwrap());
        let mut seen = BTreeSet::new();
        let mut retx = 0;
        for p in &data {
            assert_eq!(p.seq % mss, 0, "byte sequence numbers are segment × MSS");
            assert_eq!(p.dport, 5001);
            assert_eq!(p.tcp_flags & 0x18, 0x18, "PSH+ACK");
            let first = seen.insert(p.seq);
            if !first {
                retx += 1;
            }
            // ECT(0) on data of an ECN flow, not on retransmissions (RFC
            // 3168 §6.1.5).
            assert_eq!(p.ecn, if first { 2 } else { 0 });
        }
        assert_eq!(retx, fl["retransmits"].as_u64().unwrap(), "flow {port}");
        let top = data.iter().map(|p| p.seq / mss).max().unwrap() as u64;
        assert!(top + 1 >= fl["segments_delivered"].as_u64().unwrap());
    }
    // After the RED queue: CE marks in IP equal the queue's marks; the
    // receivers echo them (ECE) on the way back.
    let down = read_pcap(&out.join("bottleneck.r-h2.pcap"));
    assert_eq!(
        down.len() as u64,
        link("r->h2")["tx_packets"].as_u64().unwrap()
    );
    let ce = down.iter().filter(|p| p.ecn == 3).count() as u64;
    // Marked packets still queued, or on the wire, at the end are not in
    // the trace.
    let q = queue("r->h2");
    let marked = q["marked"].as_u64().unwrap();
    let left = q["enqueued"].as_u64().unwrap() - q["dequeued"].as_u64().unwrap() + 1;
    assert!(
        ce <= marked && marked - ce <= left,
        "{ce} CE, {marked} marked"
    );
    assert!(ce > 0);
    let back = read_pcap(&out.join("bottleneck.h2-r.pcap"));
    assert!(
        back.iter().any(|p| p.tcp_flags & 0x40 != 0),
        "ECE on some ACK"
    );
    assert!(back
        .iter()
        .all(|p| p.payload == 0 && p.tcp_flags & 0x10 != 0));
    // CBR is UDP.
    let cbr = read_pcap(&out.join("h3-r.h3-r.pcap"));
    let voice = flows.iter().find(|f| f["group"] == "voice").unwrap();
    assert_eq!(cbr.len() as u64, voice["segments_sent"].as_u64().unwrap());
    assert!(cbr.iter().all(|p| p.proto == 17 && p.payload == 200 - 28));
}

#[test]
fn pcap_bad_link_is_bad_input() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "s.toml",
        &ECN.replace("[output]", "[output]\npcap = [\"nowhere\"]"),
    );
    let out = d.path().join("o");
    let (c, _, e) = run(&["run", s(&f), "--out", s(&out)]);
    assert_eq!(c, 2, "{e}");
    assert!(
        e.contains("output.pcap[0]") && e.contains("bottleneck"),
        "{e}"
    );
    assert!(!out.exists());
}
