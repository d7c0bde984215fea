//! `aqmlab run --flent`: refused before the run without throughput bins
//! (exit 2, naming the key, no output folder), written beside the run's
//! other files with them, and removed when a later run into the folder
//! does not ask for it.

mod common;

use common::{aqmlab, output, root};

fn run(out: &std::path::Path, extra: &[&str]) -> (i32, String) {
    let mut c = aqmlab();
    c.arg("run")
        .arg(root().join("scenarios/bbr/coexistence.toml"))
        .arg("--out")
        .arg(out)
        .args(["--duration", "2s"])
        .args(extra);
    let (code, _, err) = output(&mut c);
    (code, err)
}

#[test]
fn flent_needs_throughput_bins_and_says_which_key() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let (code, err) = run(&out, &["--flent"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--flent") && err.contains("output.throughput_bin"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!out.exists(), "no output folder for a refused run");
}

#[test]
fn flent_file_is_written_with_the_run_and_removed_by_a_run_without_it() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let (code, err) = run(&out, &["--flent", "--set", "output.throughput_bin=100ms"]);
    assert_eq!(code, 0, "{err}");
    let f = out.join("run.flent.gz");
    let bytes = std::fs::read(&f).unwrap();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "gzip magic");
    // Same scenario and seed, same bytes.
    let out2 = d.path().join("out2");
    let (code, err) = run(&out2, &["--flent", "--set", "output.throughput_bin=100ms"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(out2.join("run.flent.gz")).unwrap(), bytes);
    // A later run into the same folder without --flent leaves no stale file.
    let (code, err) = run(&out, &["--set", "output.throughput_bin=100ms"]);
    assert_eq!(code, 0, "{err}");
    assert!(!f.exists(), "{err}");
    assert!(err.contains("run.flent.gz"), "says it removed it: {err}");
}
