//! Helpers shared by the CLI's integration tests. Each test file includes
//! this module (`mod common;`) and uses part of it.
#![allow(dead_code)]

use assert_cmd::Command;
use std::fs;
use std::path::{Path, PathBuf};

/// The repository's root (for the shipped scenarios).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `aqmlab` binary built for the tests.
pub fn aqmlab() -> Command {
    Command::cargo_bin("aqmlab").unwrap()
}

/// Run `c` → (exit code, -1 if killed; stdout; stderr).
pub fn output(c: &mut Command) -> (i32, String, String) {
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Write `text` to `dir/name` and return the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let f = dir.join(name);
    fs::write(&f, text).unwrap();
    f
}

/// `aqmlab run` on `text` (written to `dir/s.toml`) with output folder
/// `dir/out` and `extra` flags → (exit code, stderr, output folder).
pub fn run_scenario(dir: &Path, text: &str, extra: &[&str]) -> (i32, String, PathBuf) {
    let f = write(dir, "s.toml", text);
    let out = dir.join("out");
    let mut c = aqmlab();
    c.arg("run").arg(&f).arg("--out").arg(&out).args(extra);
    let (code, _, err) = output(&mut c);
    (code, err, out)
}

/// A table's rows as JSON objects: cells that parse as integers or numbers
/// become numbers, empty cells null, the others strings.
pub fn csv_rows(p: &Path) -> Vec<serde_json::Value> {
    let mut rd = csv::Reader::from_path(p).unwrap();
    let head = rd.headers().unwrap().clone();
    rd.records()
        .map(|r| {
            let r = r.unwrap();
            let o = head
                .iter()
                .zip(r.iter())
                .map(|(h, x)| {
                    let v = if x.is_empty() {
                        serde_json::Value::Null
                    } else if let Ok(u) = x.parse::<u64>() {
                        u.into()
                    } else if let Ok(f) = x.parse::<f64>() {
                        f.into()
                    } else {
                        x.into()
                    };
                    (h.to_string(), v)
                })
                .collect();
            serde_json::Value::Object(o)
        })
        .collect()
}
