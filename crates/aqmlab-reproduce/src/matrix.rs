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

use crate::{Error, Result};
use aqmlab::Scenario;
use serde::de::DeserializeOwned;

/// Parse matrix `text` (the contents of `file`) into `T`. Errors are one
/// line: `file: `key.path`: message`.
pub fn parse<T: DeserializeOwned>(text: &str, file: &str) -> Result<T> {
    let value: toml::Value = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| format!(" line {}:", text[..s.start].lines().count().max(1)))
            .unwrap_or_default();
        Error::Internal(format!("{file}:{line} {}", one_line(e.message())))
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
pub fn bad(file: &str, key: &str, message: impl std::fmt::Display) -> Error {
    Error::Internal(format!("{file}: `{key}`: {message}"))
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
    pub fn get(&self, name: &str, key: &str) -> Result<(String, &'static str)> {
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
    pub fn load(&self, name: &str, key: &str, overrides: &[String]) -> Result<Scenario> {
        let (file, text) = self.get(name, key)?;
        Scenario::from_toml_with(text, &file, overrides)
            .map_err(|e| Error::Internal(format!("built-in scenario: {e}")))
    }
}

/// A duration in a matrix ("30s", "4000s"), in seconds, or an error naming
/// the key.
pub fn seconds(file: &str, key: &str, text: &str) -> Result<f64> {
    aqmlab::scenario::units::parse_duration(text)
        .map(|ns| ns as f64 / 1e9)
        .map_err(|m| bad(file, key, format!("`{text}`: {m}")))
}

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
            Err(Error::Internal(m)) => m,
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
}
