//! Experiment matrices as data: `scenarios/papers/<paper>/matrix.toml`
//! names the scenario files a reproduction runs, the overrides of each
//! configuration, the run lengths and loads. Every paper's matrix is read
//! here, with key paths (`serde_path_to_error`), so a bad key or value is a
//! one-line error naming the file and the key; each paper's driver declares
//! the matrix's shape as a `#[serde(deny_unknown_fields)]` struct and checks
//! what its tables need (names matching `paper.toml`, counts).
//!
//! The files are compiled into the binary (`include_str!`), like the
//! scenario files they name: [`Scenarios`] resolves those names.

use crate::{CliError, CliResult};
use aqmlab::Scenario;
use serde::de::DeserializeOwned;

/// Parse matrix `text` (the contents of `file`) into `T`. Errors are one
/// line: `file: `key.path`: message`.
pub fn parse<T: DeserializeOwned>(text: &str, file: &str) -> CliResult<T> {
    let value: toml::Value = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| format!(" line {}:", text[..s.start].lines().count().max(1)))
            .unwrap_or_default();
        CliError::Internal(format!("{file}:{line} {}", one_line(e.message())))
    })?;
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let path = if path.is_empty() || path == "." {
            "(top level)".to_string()
        } else {
            path
        };
        bad(file, &path, one_line(&e.into_inner().to_string()))
    })
}

/// The one-line error about `key` of matrix `file`: `file: `key`: message`
/// (the format every matrix error has).
pub fn bad(file: &str, key: &str, message: impl std::fmt::Display) -> CliError {
    CliError::Internal(format!("{file}: `{key}`: {message}"))
}

/// `s` with its line breaks folded into spaces.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A paper's scenario files as compiled in: (name inside the paper's
/// directory, text).
pub struct Scenarios {
    /// `scenarios/papers/<paper>`.
    pub dir: &'static str,
    pub files: &'static [(&'static str, &'static str)],
}

impl Scenarios {
    /// The path (`scenarios/papers/<paper>/<name>`) and text of `name`, or an
    /// error naming the matrix key that asked for it.
    pub fn get(&self, name: &str, key: &str) -> CliResult<(String, &'static str)> {
        self.files
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, t)| (format!("{}/{n}", self.dir), *t))
            .ok_or_else(|| {
                let names: Vec<&str> = self.files.iter().map(|(n, _)| *n).collect();
                bad(
                    &format!("{}/matrix.toml", self.dir),
                    key,
                    format!("no scenario file `{name}`; one of {}", names.join(", ")),
                )
            })
    }

    /// Scenario `name` with `overrides` applied. The files are compiled
    /// into the binary: an error in them is ours.
    pub fn load(&self, name: &str, key: &str, overrides: &[String]) -> CliResult<Scenario> {
        let (file, text) = self.get(name, key)?;
        Scenario::from_toml_with(text, &file, overrides)
            .map_err(|e| CliError::Internal(format!("built-in scenario: {e}")))
    }
}

/// A duration in a matrix ("30s", "4000s"), in seconds, or an error naming
/// the key.
pub fn seconds(file: &str, key: &str, text: &str) -> CliResult<f64> {
    aqmlab::scenario::units::parse_duration(text)
        .map(|ns| ns as f64 / 1e9)
        .map_err(|m| bad(file, key, format!("`{text}`: {m}")))
}

/// Every paper's matrix: (file, compiled-in text, the paper's loader and
/// checks run on a text).
pub type Check = fn(&str) -> CliResult;
pub const ALL: [(&str, &str, Check); 5] = [
    (
        super::red_gateway::MATRIX_FILE,
        super::red_gateway::MATRIX_TOML,
        super::red_gateway::check_matrix,
    ),
    (
        super::codel_highspeed_tcp::MATRIX_FILE,
        super::codel_highspeed_tcp::MATRIX_TOML,
        super::codel_highspeed_tcp::check_matrix,
    ),
    (
        super::maxnet_mice::MATRIX_FILE,
        super::maxnet_mice::MATRIX_TOML,
        super::maxnet_mice::check_matrix,
    ),
    (
        super::rio_ps::MATRIX_FILE,
        super::rio_ps::MATRIX_TOML,
        super::rio_ps::check_matrix,
    ),
    (
        super::markmax::MATRIX_FILE,
        super::markmax::MATRIX_TOML,
        super::markmax::check_matrix,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct T {
        #[allow(dead_code)]
        a: u32,
        #[allow(dead_code)]
        entry: Vec<E>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct E {
        #[allow(dead_code)]
        name: String,
    }

    fn err(text: &str) -> String {
        match parse::<T>(text, "m.toml") {
            Err(CliError::Internal(m)) => m,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn errors_are_one_line_and_name_the_key() {
        let good = "a = 1\n[[entry]]\nname = \"x\"\n";
        parse::<T>(good, "m.toml").unwrap();
        let e = err("a = 1\nbogus = 2\n[[entry]]\nname = \"x\"\n");
        assert!(e.starts_with("m.toml: ") && e.contains("bogus"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let e = err("a = 1\n[[entry]]\nname = \"x\"\n[[entry]]\nnam = \"y\"\n");
        assert!(e.contains("`entry[1].nam`: unknown field"), "{e}");
        let e = err("a = \"one\"\n[[entry]]\nname = \"x\"\n");
        assert!(e.contains("`a`") && !e.contains('\n'), "{e}");
        let e = err("a = \n");
        assert!(e.starts_with("m.toml: line 1:") && !e.contains('\n'), "{e}");
    }

    /// Every `scenarios/papers/*/matrix.toml` in the tree is one of [`ALL`].
    #[test]
    fn every_matrix_file_is_registered() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut on_disk = Vec::new();
        for d in std::fs::read_dir(root.join("scenarios/papers")).unwrap() {
            let p = d.unwrap().path().join("matrix.toml");
            if p.exists() {
                let rel = p.strip_prefix(&root).unwrap().to_string_lossy().to_string();
                on_disk.push(rel.replace('\\', "/"));
            }
        }
        on_disk.sort();
        let mut known: Vec<String> = ALL.iter().map(|(f, ..)| f.to_string()).collect();
        known.sort();
        assert_eq!(on_disk, known);
        for (f, text, _) in ALL {
            let on = std::fs::read_to_string(root.join(f)).unwrap();
            assert_eq!(on, text, "{f}: compiled-in text differs from the file");
        }
    }

    fn err_of(r: CliResult) -> String {
        match r {
            Err(CliError::Internal(m)) => m,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    /// Every matrix parses and passes its paper's checks; a bad key, at the
    /// top or inside a table, is a one-line error naming the file and the key.
    #[test]
    fn every_matrix_parses_and_a_bad_key_is_named() {
        for (file, text, check) in ALL {
            check(text).unwrap_or_else(|e| panic!("{file}: {e:?}"));
            // an unknown key at the top
            let bad = format!("bogus_key = 1\n{text}");
            let e = err_of(check(&bad));
            assert!(e.contains(file) && e.contains("bogus_key"), "{e}");
            assert!(!e.contains('\n'), "{e}");
            // an unknown key inside the first table
            let i = text
                .lines()
                .position(|l| l.trim_start().starts_with('['))
                .unwrap();
            let mut lines: Vec<&str> = text.lines().collect();
            lines.insert(i + 1, "bogus_inner = 1");
            let e = err_of(check(&lines.join("\n")));
            assert!(e.contains(file) && e.contains("bogus_inner"), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
