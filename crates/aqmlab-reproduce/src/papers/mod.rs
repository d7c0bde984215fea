//! The paper registry: every reproduction is one [`Driver`] in [`PAPERS`].
//!
//! Adding a paper is one folder of data (`scenarios/papers/<name>/`: the
//! scenario files, `matrix.toml`, `paper.toml`), one driver file here
//! (`<name>.rs`, with its report templates in `templates/`) that exports a
//! `pub const DRIVER: Driver`, and one line in [`PAPERS`]. The command
//! line's paper names, defaults and option checks, the Python package and
//! the matrix tests below all read this list.

pub mod codel_highspeed_tcp;
pub mod markmax;
pub mod maxnet_mice;
pub mod red_gateway;
pub mod rio_ps;

use crate::{Error, Opts, Result, TableRow};
use std::path::Path;

/// One paper's reproduction, as the registry knows it.
pub struct Driver {
    /// Command-line name (`red-gateway`), also the default output folder
    /// `results/<name>`.
    pub name: &'static str,
    /// One line for `--help`: authors, what is compared, venue.
    pub about: &'static str,
    /// Seeds per configuration when `--seeds` is not given.
    pub default_seeds: u64,
    /// Run the experiment with checked options, write the report, plots and
    /// `tables.csv` into the folder and return the table rows.
    pub run: fn(&Opts, &Path) -> Result<Vec<TableRow>>,
    /// `scenarios/papers/<name>/matrix.toml`, its compiled-in text and the
    /// driver's loader and checks run on a text.
    pub matrix_file: &'static str,
    pub matrix_toml: &'static str,
    pub check_matrix: fn(&str) -> Result,
    /// Why `--duration` is refused (the paper's run length is fixed), or
    /// `None` where it applies.
    pub fixed_duration: Option<&'static str>,
    /// What `--load` sets, or `None` where the paper has no load knob.
    pub load: Option<&'static str>,
}

/// Every paper, in the order `--help` lists them.
pub const PAPERS: [&Driver; 5] = [
    &red_gateway::DRIVER,
    &codel_highspeed_tcp::DRIVER,
    &markmax::DRIVER,
    &rio_ps::DRIVER,
    &maxnet_mice::DRIVER,
];

/// The paper named `name` (`red-gateway`, …), or an input error listing
/// the names.
pub fn find(name: &str) -> Result<&'static Driver> {
    PAPERS
        .iter()
        .copied()
        .find(|d| d.name == name)
        .ok_or_else(|| {
            let names: Vec<&str> = PAPERS.iter().map(|d| d.name).collect();
            Error::Input(format!(
                "paper `{name}`: unknown; one of {}",
                names.join(", ")
            ))
        })
}

impl Driver {
    /// The paper's defaults: its number of seeds, its run length and load.
    pub fn default_opts(&self) -> Opts {
        Opts {
            seeds: self.default_seeds,
            duration_s: None,
            load: None,
        }
    }

    /// The options that apply to this paper, with values in range.
    fn check(&self, o: &Opts) -> Result {
        if o.seeds == 0 {
            return Err(Error::Input("--seeds must be at least 1".into()));
        }
        if let Some(d) = o.duration_s {
            if !(d.is_finite() && d > 0.0) {
                return Err(Error::Input(format!(
                    "--duration: must be positive, got {d} s"
                )));
            }
            if let Some(why) = self.fixed_duration {
                return Err(Error::Input(format!("--duration: {why}")));
            }
        }
        if let Some(l) = o.load {
            if self.load.is_none() {
                let (names, what): (Vec<&str>, Vec<&str>) = PAPERS
                    .iter()
                    .filter_map(|d| d.load.map(|what| (d.name, what)))
                    .unzip();
                return Err(Error::Input(format!(
                    "--load: only {} has an offered-load knob ({})",
                    names.join(", "),
                    what.join("; ")
                )));
            }
            if !(l > 0.0 && l <= 2.0) {
                return Err(Error::Input(format!(
                    "--load: a fraction of the bottleneck in (0, 2], got {l}"
                )));
            }
        }
        Ok(())
    }
}

/// Reproduce `paper` (its command-line name, e.g. `"red-gateway"`) with
/// `opts`: run its experiment, write the report, plots and `tables.csv` to
/// `out` (a temporary directory, removed afterwards, when `None`) and return
/// the long-format table rows. Bad options are [`Error::Input`] and write
/// nothing.
pub fn reproduce(paper: &str, opts: &Opts, out: Option<&Path>) -> Result<Vec<TableRow>> {
    let d = find(paper)?;
    d.check(opts)?;
    match out {
        Some(dir) => (d.run)(opts, dir),
        None => {
            let tmp = tempfile::tempdir()?;
            TEMP_OUT.with(|t| t.set(true));
            let r = (d.run)(opts, tmp.path());
            TEMP_OUT.with(|t| t.set(false));
            r
        }
    }
}

thread_local! {
    /// Set while [`reproduce`] writes to a temporary folder that it removes
    /// afterwards (Python's `reproduce()` without `out=`).
    static TEMP_OUT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The output folder as the closing line names it: its path, or, for a
/// temporary folder removed at the end, a note that nothing is kept (no
/// message names a folder that will not exist).
pub(crate) fn shown(out: &Path) -> String {
    if TEMP_OUT.with(|t| t.get()) {
        "a temporary folder that is removed (pass an output folder to keep them)".to_string()
    } else {
        out.display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err_of(r: Result) -> String {
        match r {
            Err(Error::Internal(m)) => m,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    /// Every `scenarios/papers/*/matrix.toml` in the tree belongs to one
    /// registered paper, and names are unique.
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
        let mut known: Vec<String> = PAPERS.iter().map(|d| d.matrix_file.to_string()).collect();
        known.sort();
        assert_eq!(on_disk, known);
        for d in PAPERS {
            let on = std::fs::read_to_string(root.join(d.matrix_file)).unwrap();
            assert_eq!(
                on, d.matrix_toml,
                "{}: compiled-in text differs",
                d.matrix_file
            );
            assert_eq!(find(d.name).unwrap().name, d.name);
        }
        let mut names: Vec<&str> = PAPERS.iter().map(|d| d.name).collect();
        names.dedup();
        assert_eq!(names.len(), PAPERS.len());
    }

    /// Every matrix parses and passes its paper's checks; a bad key, at the
    /// top or inside a table, is a one-line error naming the file and the key.
    #[test]
    fn every_matrix_parses_and_a_bad_key_is_named() {
        for d in PAPERS {
            let (file, text, check) = (d.matrix_file, d.matrix_toml, d.check_matrix);
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

    #[test]
    fn options_are_checked_against_the_paper() {
        let rg = find("red-gateway").unwrap();
        let mut o = rg.default_opts();
        assert_eq!(o.seeds, 10);
        o.duration_s = Some(5.0);
        match rg.check(&o) {
            Err(Error::Input(m)) => assert!(m.starts_with("--duration: red-gateway"), "{m}"),
            other => panic!("{other:?}"),
        }
        let mut o = rg.default_opts();
        o.load = Some(0.5);
        match rg.check(&o) {
            Err(Error::Input(m)) => assert_eq!(
                m,
                "--load: only rio-ps has an offered-load knob (its web workload)"
            ),
            other => panic!("{other:?}"),
        }
        let rio = find("rio-ps").unwrap();
        let mut o = rio.default_opts();
        o.load = Some(0.5);
        rio.check(&o).unwrap();
        assert!(matches!(find("nope"), Err(Error::Input(_))));
    }
}
