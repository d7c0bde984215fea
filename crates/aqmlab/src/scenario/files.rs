//! Files a scenario names: a link's Mahimahi trace (`links[].trace`,
//! `links[].trace_ba`) and a CDF workload's size distribution
//! (`workloads[].sizes` other than the built-in names).
//!
//! The rule (docs/src/reference/scenario.md, "Files a scenario names"):
//! a relative path written in a scenario file is relative to that file's
//! folder; one given by `--set` (or Python's `Scenario.set`) or in a
//! scenario without a file (text, a Python dict) is relative to the
//! working directory. [`pin_paths`] writes every such path as an absolute
//! one into the scenario document when it is loaded, so the `scenario.toml`
//! of a run folder names the same files from any working directory. Each
//! file is read once by the bounded reader ([`super::read_text`]: a regular
//! file of at most 4 MiB, so a FIFO or `/dev/zero` is refused at once), and
//! its SHA-256 is kept ([`InputFile`]) for `provenance.json`. A sweep that
//! ships runs to other machines sends the files' text with them
//! ([`Supplied`]); the receiver checks each one's SHA-256.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

pub use crate::traffic::cdf::BUILTIN_SIZES;

/// One file a scenario read.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct InputFile {
    /// The first key that names it (`links[0].trace`).
    pub key: String,
    /// The path it was read from (absolute once pinned).
    pub path: String,
    /// SHA-256 of its bytes, lower-case hex.
    pub sha256: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its text (not recorded in `provenance.json`).
    #[serde(skip)]
    pub text: Arc<str>,
}

/// Files given with a scenario instead of read from disk: path (as the
/// scenario names it) → (SHA-256 expected, text). A path that is not here
/// is read from disk.
pub type Supplied = BTreeMap<String, (String, String)>;

/// Is `v` a path, under the key named `last` (the last segment of its key
/// path)? `trace` and `trace_ba` always; `sizes` unless a built-in name.
fn names_file(last: &str, v: &str) -> bool {
    match last {
        "trace" | "trace_ba" => !v.is_empty(),
        "sizes" => !v.is_empty() && !BUILTIN_SIZES.contains(&v),
        _ => false,
    }
}

/// `v` made absolute against `base` when it is relative.
fn pin(v: &mut toml::Value, base: &Path) {
    if let toml::Value::String(s) = v {
        let p = Path::new(s.as_str());
        if p.is_relative() {
            *s = base.join(p).display().to_string();
        }
    }
}

/// The folder relative paths are taken from: `folder` (made absolute with
/// the working directory), or the working directory; `None` when the
/// working directory cannot be read (the paths then stay as written).
pub fn base_folder(folder: Option<&Path>) -> Option<std::path::PathBuf> {
    let cwd = std::env::current_dir().ok();
    match folder {
        Some(f) if f.is_absolute() => Some(f.to_path_buf()),
        Some(f) => cwd.map(|c| c.join(f)),
        None => cwd,
    }
}

/// Make every relative file path of the scenario document `doc` absolute
/// against `base`: `links[].trace`, `links[].trace_ba`, a cdf workload's
/// `sizes`, `topology.file`, and the values of a `[[sweep.vary]]` axis
/// whose key ends in one of the first three or is `topology.file`.
/// Absolute paths and built-in names are left as they are.
pub fn pin_paths(doc: &mut toml::Value, base: &Path) {
    let Some(t) = doc.as_table_mut() else {
        return;
    };
    if let Some(toml::Value::Array(links)) = t.get_mut("links") {
        for l in links.iter_mut().filter_map(|l| l.as_table_mut()) {
            for k in ["trace", "trace_ba"] {
                if let Some(v) = l.get_mut(k) {
                    pin(v, base);
                }
            }
        }
    }
    if let Some(toml::Value::Table(topo)) = t.get_mut("topology") {
        if let Some(v) = topo.get_mut("file") {
            pin(v, base);
        }
    }
    if let Some(toml::Value::Array(ws)) = t.get_mut("workloads") {
        for w in ws.iter_mut().filter_map(|w| w.as_table_mut()) {
            if w.get("kind").and_then(|k| k.as_str()) != Some("cdf") {
                continue;
            }
            if let Some(v) = w.get_mut("sizes") {
                if v.as_str().is_some_and(|s| names_file("sizes", s)) {
                    pin(v, base);
                }
            }
        }
    }
    let Some(toml::Value::Array(axes)) = t
        .get_mut("sweep")
        .and_then(|s| s.as_table_mut())
        .and_then(|s| s.get_mut("vary"))
    else {
        return;
    };
    for ax in axes.iter_mut().filter_map(|a| a.as_table_mut()) {
        let Some(key) = ax.get("key").and_then(|k| k.as_str()).map(str::trim) else {
            continue;
        };
        let topology_file = key == "topology.file";
        let last = key.rsplit('.').next().unwrap_or_default().to_string();
        if let Some(toml::Value::Array(vals)) = ax.get_mut("values") {
            for v in vals.iter_mut() {
                if v.as_str()
                    .is_some_and(|s| topology_file || names_file(&last, s))
                {
                    pin(v, base);
                }
            }
        }
    }
}

/// SHA-256 of `bytes`, lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The files a scenario has read so far, by path, and what was supplied.
pub(crate) struct Reader<'a> {
    pub supplied: Option<&'a Supplied>,
    pub read: BTreeMap<String, Arc<InputFile>>,
    /// Largest file read, bytes ([`super::MAX_FILE_BYTES`], or
    /// [`super::MAX_LARGE_FILE_BYTES`] under `--allow-large`).
    pub max_bytes: u64,
}

impl Reader<'_> {
    /// The file at `path` (named first by `key`): from the supplied files
    /// (its SHA-256 checked) or read through the bounded reader. The error
    /// is the cause, without the key.
    pub fn get(&mut self, key: &str, path: &str, what: &str) -> Result<Arc<InputFile>, String> {
        if let Some(f) = self.read.get(path) {
            return Ok(f.clone());
        }
        let text: String = match self.supplied.and_then(|s| s.get(path)) {
            Some((want, text)) => {
                let got = sha256_hex(text.as_bytes());
                if &got != want {
                    return Err(format!(
                        "the copy of `{path}` sent with the scenario has SHA-256 {got}, not {want}; it changed on the way or the sender read another file"
                    ));
                }
                text.clone()
            }
            None => super::read_text_limit(Path::new(path), what, self.max_bytes)
                .map_err(|e| format!("cannot read `{path}` ({e})"))?,
        };
        let f = Arc::new(InputFile {
            key: key.to_string(),
            path: path.to_string(),
            sha256: sha256_hex(text.as_bytes()),
            bytes: text.len() as u64,
            text: text.into(),
        });
        self.read.insert(path.to_string(), f.clone());
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_relative_file_paths_only() {
        let mut doc: toml::Value = toml::from_str(
            r#"
[[links]]
trace = "a.trace"
trace_ba = "/abs/b.trace"
[[workloads]]
kind = "cdf"
sizes = "web-search"
[[workloads]]
kind = "cdf"
sizes = "my.cdf"
[[workloads]]
kind = "http"
sizes = "x"
[sweep]
[[sweep.vary]]
key = "links.l.trace"
values = ["c.trace", "/d.trace"]
[[sweep.vary]]
key = "workloads.0.sizes"
values = ["data-mining", "e.cdf"]
[[sweep.vary]]
key = "links.l.rate"
values = ["f"]
[[sweep.vary]]
key = "topology.file"
values = ["g.csv", "/h.csv"]
[topology]
kind = "edges"
file = "t.csv"
"#,
        )
        .unwrap();
        pin_paths(&mut doc, Path::new("/base"));
        let s = |v: &toml::Value| v.as_str().unwrap().to_string();
        assert_eq!(s(&doc["links"][0]["trace"]), "/base/a.trace");
        assert_eq!(s(&doc["links"][0]["trace_ba"]), "/abs/b.trace");
        assert_eq!(s(&doc["workloads"][0]["sizes"]), "web-search");
        assert_eq!(s(&doc["workloads"][1]["sizes"]), "/base/my.cdf");
        assert_eq!(s(&doc["workloads"][2]["sizes"]), "x");
        let v = &doc["sweep"]["vary"];
        assert_eq!(s(&v[0]["values"][0]), "/base/c.trace");
        assert_eq!(s(&v[0]["values"][1]), "/d.trace");
        assert_eq!(s(&v[1]["values"][0]), "data-mining");
        assert_eq!(s(&v[1]["values"][1]), "/base/e.cdf");
        assert_eq!(s(&v[2]["values"][0]), "f");
        assert_eq!(s(&v[3]["values"][0]), "/base/g.csv");
        assert_eq!(s(&v[3]["values"][1]), "/h.csv");
        assert_eq!(s(&doc["topology"]["file"]), "/base/t.csv");
    }

    #[test]
    fn a_supplied_copy_must_match_its_hash() {
        let mut sup = Supplied::new();
        sup.insert("/x".into(), (sha256_hex(b"1\n"), "1\n".into()));
        sup.insert("/y".into(), (sha256_hex(b"1\n"), "2\n".into()));
        let mut r = Reader {
            supplied: Some(&sup),
            read: BTreeMap::new(),
            max_bytes: super::super::MAX_FILE_BYTES,
        };
        let f = r.get("k", "/x", "a file").unwrap();
        assert_eq!(
            f.sha256,
            "4355a46b19d348dc2f57c046f8ef63d4538ebb936000f3c9ee954a27460dd865"
        );
        let e = r.get("k", "/y", "a file").unwrap_err();
        assert!(e.contains("SHA-256") && e.contains("`/y`"), "{e}");
    }
}
