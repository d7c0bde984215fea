//! A sweep's memory is linear in its runs and bounded: 10⁴ one-millisecond
//! runs (the default limit) peak at a few tens of MB (they were quadratic:
//! 602 MB at 3 000, an abort at 6 000), and an axis past the limit is
//! refused before any combination is made.

mod common;
use common::*;
use std::process::{Command, Stdio};

/// A sweep of `n` one-millisecond runs: one axis of `n` values.
fn many(n: usize) -> String {
    let values: Vec<String> = (0..n).map(|i| format!("\"d{i}\"")).collect();
    format!(
        r#"name = "many"
description = "x"
duration = "1ms"
[nodes]
hosts = ["a", "b"]
[[links]]
a = "a"
b = "b"
rate = "10Mbps"
delay = "1ms"
monitor = true
[[flows]]
group = "g"
src = "a"
dst = "b"
[sweep]
[[sweep.vary]]
key = "description"
values = [{}]
"#,
        values.join(", ")
    )
}

/// Run `aqmlab` with `args` → (exit code, peak resident memory in bytes,
/// stderr), the peak from the kernel's accounting of the child
/// (`wait4`'s `ru_maxrss`).
// the child is reaped by `wait4` (which also gives its resource usage), not
// by `Child::wait`
#[allow(clippy::zombie_processes)]
fn run_measured(dir: &std::path::Path, args: &[&std::ffi::OsStr]) -> (i32, u64, String) {
    let err_path = dir.join("stderr.txt");
    let child = Command::new(assert_cmd::cargo::cargo_bin("aqmlab"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: plain system call on our own child; `ru` is written by it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut ru) };
    assert_eq!(pid, child.id() as libc::pid_t);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    let err = std::fs::read_to_string(&err_path).unwrap();
    (code, ru.ru_maxrss as u64 * 1024, err)
}

#[test]
fn ten_thousand_runs_stay_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "many.toml", &many(10_000));
    let out = dir.path().join("out");
    let (code, peak, err) = run_measured(
        dir.path(),
        &[
            "sweep".as_ref(),
            f.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ],
    );
    assert_eq!(code, 0, "{}", &err[err.len().saturating_sub(2000)..]);
    // measured: 34 MB at 10⁴ runs, 28 MB at 10³ (the runs' rows are on
    // disk; a combination is made when it runs)
    assert!(peak < 64 << 20, "peak {} MB", peak >> 20);
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 10_001);
    assert!(csv
        .lines()
        .last()
        .unwrap()
        .starts_with("d9999,1,d9999/seed-1,"));
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("10000 combinations × 1 seeds = 10000 runs"));
    // the plots show the first combinations and say so
    let svg = std::fs::read_to_string(out.join("metrics.svg")).unwrap();
    assert!(svg.contains("the first 200 of 10000 combinations"));
    let svg = std::fs::read_to_string(out.join("queue_delay.svg")).unwrap();
    assert!(svg.contains("the first 24 of 10000 combinations"));
    let tmp: Vec<String> = (std::fs::read_dir(&out).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tmp"))
        .collect();
    assert!(tmp.is_empty(), "{tmp:?}");
}

#[test]
fn an_axis_past_the_run_limit_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "huge.toml", &many(100_000));
    let out = dir.path().join("out");
    let t = std::time::Instant::now();
    let (code, _, err) = run_measured(
        dir.path(),
        &[
            "sweep".as_ref(),
            f.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(t.elapsed().as_secs() < 10, "{:?}", t.elapsed());
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("`sweep.vary[0].values` (axis `description`, 100000 values)")
            && err.contains("100000 combinations × 1 seeds")
            && err.contains("10000")
            && err.contains("--allow-large"),
        "{err}"
    );
    assert!(!out.exists());
    // the seeds are named when they alone pass the limit
    let f = write(dir.path(), "seeds.toml", &many(2));
    let mut c = aqmlab();
    c.arg("sweep")
        .arg(&f)
        .arg("--out")
        .arg(&out)
        .args(["--seeds", "20000"]);
    let (code, _, err) = output(&mut c);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`--seeds`: runs (2 combinations × 20000 seeds)"),
        "{err}"
    );
}
