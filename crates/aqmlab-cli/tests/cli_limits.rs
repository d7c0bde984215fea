//! Values out of range, resources above the default limits and unreadable
//! scenario files: exit 2, one line naming the key, the value and what is
//! allowed, and no output (issue 13, items 1 and 2).

mod common;

use assert_cmd::Command;
use std::fs;
use std::path::Path;
use std::time::Duration;

const GOOD: &str = r#"
name = "limits-test"
duration = "200ms"
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
[[flows]]
group = "bulk"
src = "h1"
dst = "h2"
"#;

fn aqmlab() -> Command {
    let mut c = common::aqmlab();
    c.timeout(Duration::from_secs(60));
    c
}

/// `aqmlab <args>` → (exit code, stderr).
fn exec(args: &[&str]) -> (i32, String) {
    let (code, _, err) = common::output(aqmlab().args(args));
    (code, err)
}

/// `aqmlab run` on `text` with `extra` flags → (exit code, stderr); asserts
/// that a failed run created no output directory.
fn run(dir: &Path, text: &str, extra: &[&str]) -> (i32, String) {
    let f = dir.join("s.toml");
    fs::write(&f, text).unwrap();
    let out = dir.join("out");
    let _ = fs::remove_dir_all(&out);
    let mut args = vec!["run", f.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let (code, err) = exec(&args);
    if code != 0 {
        assert!(!out.exists(), "a failed run wrote {}", out.display());
    }
    (code, err)
}

/// Exit 2 with one line that contains every `needles`.
fn rejected(code: i32, err: &str, needles: &[&str]) {
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` missing from: {err}");
    }
}

fn with_flow_line(line: &str) -> String {
    GOOD.replace("dst = \"h2\"\n", &format!("dst = \"h2\"\n{line}\n"))
}

#[test]
fn values_that_do_not_fit_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let (c, e) = run(p, &GOOD.replace("\"10ms\"", "\"1e30s\""), &[]);
    rejected(c, &e, &["links[1].delay", "1e30s", "at most 1000000000s"]);
    let (c, e) = run(
        p,
        &with_flow_line("start = \"18446744073709551615ns\""),
        &[],
    );
    rejected(c, &e, &["flows[0].start", "at most"]);
    let (c, e) = run(p, &with_flow_line("size = \"4294967296000B\""), &[]);
    rejected(
        c,
        &e,
        &["flows[0].size", "4294967296 segments", "at most 4294967294"],
    );
    let (c, e) = run(p, &format!("{GOOD}[tcp]\nmss = 4294967295\n"), &[]);
    rejected(c, &e, &["tcp.mss", "4294967295", "1..=65495"]);
    let (c, e) = run(p, &format!("{GOOD}[tcp]\nheader_bytes = 4294967295\n"), &[]);
    rejected(c, &e, &["tcp.header_bytes", "20..=120"]);
    let (c, e) = run(
        p,
        &with_flow_line("cbr = { rate = \"1Mbps\", packet_size = 0 }"),
        &[],
    );
    rejected(c, &e, &["flows[0].cbr.packet_size", "1..=65535"]);
    let (c, e) = run(p, &with_flow_line("cbr = { rate = \"1e30Tbps\" }"), &[]);
    rejected(c, &e, &["flows[0].cbr.rate", "at most 10Tbps"]);
    let (c, e) = run(
        p,
        &with_flow_line("cbr = { rate = \"9Tbps\", packet_size = 1 }"),
        &[],
    );
    rejected(c, &e, &["flows[0].cbr.rate", "less than 1 ns apart"]);
    let dup = format!("{GOOD}[[flows]]\ngroup = \"bulk\"\nsrc = \"h2\"\ndst = \"h1\"\n");
    let (c, e) = run(p, &dup, &[]);
    rejected(c, &e, &["flows[1].group", "`bulk`", "already used"]);
    let (c, e) = run(p, GOOD, &["--duration", "1e30s"]);
    rejected(c, &e, &["--duration", "1e30s", "at most"]);
    // the good scenario itself runs
    let (c, e) = run(p, GOOD, &[]);
    assert_eq!(c, 0, "{e}");
}

#[test]
fn resources_above_the_limits_need_allow_large() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let big = GOOD.replace("\"200ms\"", "\"1000s\"") + "[output]\nthroughput_bin = \"1ns\"\n";
    let (c, e) = run(p, &big, &[]);
    rejected(
        c,
        &e,
        &["output.throughput_bin", "1000000000001", "--allow-large"],
    );
    let (c, e) = run(
        p,
        &(GOOD.to_string() + "[output]\nsample_interval = \"1ns\"\n"),
        &[],
    );
    rejected(c, &e, &["output.sample_interval", "400000002"]);
    let (c, e) = run(
        p,
        &GOOD.replace("dst = \"h2\"\n", "dst = \"h2\"\ncount = 4000000000\n"),
        &[],
    );
    rejected(c, &e, &["flows[0].count", "4000000000", "100000"]);
    // a generated star of 200 000 hosts: refused by default (150 000
    // nodes), run with --allow-large
    let many = "name = \"big\"\nduration = \"1s\"\n[topology]\nkind = \"star\"\nhosts = 200000\naccess_rate = \"1Gbps\"\naccess_delay = \"1ms\"\nbottleneck_rate = \"100Mbps\"\nbottleneck_delay = \"10ms\"\n[[flows]]\ngroup = \"g\"\nsrc = \"h0\"\ndst = \"sink\"\n";
    let (c, e) = run(p, many, &[]);
    rejected(c, &e, &["`nodes`", "150000", "--allow-large"]);
    let (c, e) = run(p, many, &["--duration", "10ms", "--allow-large"]);
    assert_eq!(c, 0, "{e}");
}

#[test]
fn sweep_and_reproduce_bound_seeds_and_threads() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("s.toml");
    fs::write(
        &f,
        format!("{GOOD}[sweep]\n[[sweep.vary]]\nkey = \"flows.bulk.count\"\nvalues = [1, 2]\n"),
    )
    .unwrap();
    let out = d.path().join("out");
    let (f, o) = (f.to_str().unwrap(), out.to_str().unwrap());
    let (c, e) = exec(&["sweep", f, "--out", o, "--seeds", "1000000000000"]);
    rejected(c, &e, &["--seeds", "2000000000000", "10000"]);
    let (c, e) = exec(&["sweep", f, "--out", o, "--jobs", "100000"]);
    rejected(c, &e, &["--jobs", "100000", "1024"]);
    assert!(!out.exists());
    let (c, e) = exec(&[
        "reproduce",
        "markmax",
        "--out",
        o,
        "--seeds",
        "1000000000000",
    ]);
    rejected(c, &e, &["--seeds", "1000000000000", "10000"]);
    let (c, e) = exec(&["reproduce", "markmax", "--out", o, "--jobs", "100000"]);
    rejected(c, &e, &["--jobs", "1024"]);
    let (c, e) = exec(&["reproduce", "markmax", "--out", o, "--duration", "1e30s"]);
    rejected(c, &e, &["--duration", "at most"]);
    let (c, e) = exec(&["reproduce", "markmax", "--out", o, "--duration", "20000s"]);
    rejected(c, &e, &["--duration", "10000 s", "--allow-large"]);
    assert!(!out.exists());
}

#[test]
fn scenario_files_must_be_regular_and_small() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let o = out.to_str().unwrap();
    let (c, e) = exec(&["run", "/dev/zero", "--out", o]);
    rejected(c, &e, &["/dev/zero", "not a regular file"]);
    let fifo = d.path().join("fifo.toml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    if made {
        // used to block forever waiting for a writer
        let (c, e) = exec(&["run", fifo.to_str().unwrap(), "--out", o]);
        rejected(c, &e, &["fifo.toml", "not a regular file"]);
        let (c, e) = exec(&["sweep", fifo.to_str().unwrap(), "--out", o]);
        rejected(c, &e, &["fifo.toml", "not a regular file"]);
    }
    let big = d.path().join("big.toml");
    fs::write(&big, "#".repeat(5 << 20)).unwrap();
    let (c, e) = exec(&["run", big.to_str().unwrap(), "--out", o]);
    rejected(c, &e, &["big.toml", "at most 4194304 bytes"]);
    assert!(!out.exists());
}

/// `--allow-large` lifts the default limits but not the machine's memory:
/// a run whose estimate exceeds `MemAvailable` is refused before anything
/// is built, naming the key of its largest part (here 4·10⁹ queue samples,
/// about 900 GiB), and writes nothing.
#[test]
fn allow_large_still_refuses_more_memory_than_the_machine_has() {
    if !Path::new("/proc/meminfo").exists() {
        return; // the check is made where MemAvailable can be read
    }
    let dir = tempfile::tempdir().unwrap();
    let huge = GOOD.replace(
        "duration = \"200ms\"",
        "duration = \"1000s\"\n[output]\nsample_interval = \"1us\"",
    );
    let (code, err) = run(dir.path(), &huge, &["--allow-large"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`output.sample_interval`"), "{err}");
    assert!(
        err.contains("GiB of memory") && err.contains("available"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // without --allow-large the default limit says it first
    let (code, err) = run(dir.path(), &huge, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("above the default limit"), "{err}");
}
