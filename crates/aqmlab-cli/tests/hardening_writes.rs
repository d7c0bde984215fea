//! Regression tests for issue 35's writes (item 6): a closed stderr never
//! changes a successful run's exit code; a failed write names the file and
//! the cause and leaves no hidden temporary file; stdout on a full disk is
//! an error, not a panic; a 100 kB name is refused in bounded time and
//! output; `--seed` out of range names `--seed` and the range.

mod common;

use common::{aqmlab, write};
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

const GOOD: &str = r#"
name = "writes"
duration = "200ms"
[nodes]
hosts = ["h1", "h2"]
routers = ["r"]
[[links]]
a = "h1"
b = "r"
rate = "10Mbps"
delay = "1ms"
[[links]]
name = "bottleneck"
a = "r"
b = "h2"
rate = "2Mbps"
delay = "5ms"
[[flows]]
group = "bulk"
src = "h1"
dst = "h2"
[output]
pcap = ["bottleneck"]
"#;

/// Every file below `dir` whose name starts with `.tmp-`.
fn hidden_temporaries(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            if e.file_name().to_string_lossy().starts_with(".tmp-") {
                out.push(p.display().to_string());
            }
        }
    }
    out
}

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("aqmlab")
}

#[test]
fn a_closed_stderr_does_not_change_a_successful_runs_exit_code() {
    // `aqmlab run ... 2>&1 | head -1` once exited 101 after writing its
    // outputs: the last line to stderr panicked on EPIPE
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "s.toml", GOOD);
    let out = d.path().join("out");
    let mut child = Command::new(bin())
        .arg("run")
        .arg(&f)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // close the read end before the run writes anything
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "exit status {status:?}");
    for f in ["summary.json", "flows.csv", "links.csv"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    assert!(hidden_temporaries(d.path()).is_empty());
}

#[test]
fn a_failed_write_names_the_file_and_the_cause_and_leaves_no_temporary() {
    // summary.json cannot take the place of a non-empty folder of that name
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "s.toml", GOOD);
    let out = d.path().join("out");
    fs::create_dir_all(out.join("summary.json").join("inside")).unwrap();
    let o = aqmlab()
        .arg("run")
        .arg(&f)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert_ne!(o.status.code(), Some(101), "a panic: {err}");
    assert!(err.contains("summary.json"), "names no file: {err}");
    // the cause as the OS words it (a directory in the way)
    assert!(
        err.contains("directory") || err.contains("Directory"),
        "no cause: {err}"
    );
    let left = hidden_temporaries(d.path());
    assert!(left.is_empty(), "temporary files left: {left:?}");
    assert_eq!(o.status.code(), Some(1), "{err}");
}

#[test]
fn stdout_on_a_full_disk_is_an_error_not_a_panic() {
    let Ok(full) = fs::OpenOptions::new().write(true).open("/dev/full") else {
        return; // no /dev/full on this system
    };
    let o = Command::new(bin())
        .arg("list")
        .stdout(full)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(101), "a panic: {err}");
    assert_ne!(o.status.code(), Some(0), "a lost write reported success");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.lines().count() <= 2, "{err}");
}

#[test]
fn a_100_kb_name_is_refused_at_once_with_a_bounded_message() {
    let d = tempfile::tempdir().unwrap();
    let name = "n".repeat(100_000);
    let text = GOOD.replace("name = \"writes\"", &format!("name = \"{name}\""));
    let f = write(d.path(), "s.toml", &text);
    let out = d.path().join("out");
    let t = std::time::Instant::now();
    let o = aqmlab()
        .arg("run")
        .arg(&f)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", &err[..err.len().min(300)]);
    assert!(err.contains("`name`"), "{}", &err[..err.len().min(300)]);
    assert!(
        err.contains("at most 200"),
        "{}",
        &err[..err.len().min(300)]
    );
    // the message quotes no 100 kB value, and nothing is written
    assert!(err.len() < 2_000, "message of {} bytes", err.len());
    assert!(!out.exists(), "output folder created");
    assert!(t.elapsed().as_secs() < 10, "took {:?}", t.elapsed());
}

#[test]
fn a_name_at_the_limit_runs_and_is_written_as_given() {
    let d = tempfile::tempdir().unwrap();
    let name = "é".repeat(200);
    let text = GOOD.replace("name = \"writes\"", &format!("name = \"{name}\""));
    let f = write(d.path(), "s.toml", &text);
    let out = d.path().join("out");
    let o = aqmlab()
        .arg("run")
        .arg(&f)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let s: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["scenario"].as_str(), Some(name.as_str()));
}

#[test]
fn a_seed_out_of_range_names_the_option_and_the_range() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "s.toml", GOOD);
    for seed in ["9223372036854775808", "18446744073709551616", "-1", "x"] {
        let o = aqmlab()
            .arg("run")
            .arg(&f)
            .arg("--out")
            .arg(d.path().join("out"))
            .arg(format!("--seed={seed}"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{seed}: {err}");
        assert!(err.contains("--seed"), "{seed}: {err}");
        assert!(!d.path().join("out").exists(), "{seed}: output written");
    }
}

#[test]
fn a_closed_stdout_is_still_success() {
    // `aqmlab list | head -1`: the reader is gone, nothing is lost that
    // was asked for
    let mut child = Command::new(bin())
        .arg("list")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
