//! The `aqmlab` command's library half: the paper reproductions, plots and
//! progress reporting, callable from other crates (the Python package calls
//! [`reproduce::reproduce`]). The binary (`main.rs`) is a thin layer over it.

/// `print!`, `println!`, `eprint!` and `eprintln!` that ignore a closed or
/// full stream, declared before the modules so that theirs shadow the
/// standard ones (`macro_rules!` scope is textual): a reader gone
/// (`aqmlab run … 2>&1 | head -1`) must not turn a run that wrote its
/// results into a panic and exit code 101. `quiet_write!` is the one
/// implementation; the binary's crate root declares the same four.
#[macro_export]
macro_rules! quiet_write {
    ($stream:ident, $mac:ident, $($t:tt)*) => {{
        use std::io::Write as _;
        let _ = $mac!(std::io::$stream().lock(), $($t)*);
    }};
}
#[allow(unused_macros)]
macro_rules! print { ($($t:tt)*) => { $crate::quiet_write!(stdout, write, $($t)*) } }
macro_rules! println { ($($t:tt)*) => { $crate::quiet_write!(stdout, writeln, $($t)*) } }
#[allow(unused_macros)]
macro_rules! eprint { ($($t:tt)*) => { $crate::quiet_write!(stderr, write, $($t)*) } }
macro_rules! eprintln { ($($t:tt)*) => { $crate::quiet_write!(stderr, writeln, $($t)*) } }

pub mod alloc;
pub mod plot;
pub mod progress;
pub mod reproduce;

use std::path::PathBuf;

/// An error, classified for the exit code.
#[derive(Debug)]
pub enum CliError {
    /// The user's input is wrong: exit 2.
    Input(String),
    /// Something failed that is not the user's fault: exit 1.
    Internal(String),
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Input(m) => write!(f, "{m}"),
            CliError::Internal(m) => write!(f, "internal error: {m}"),
        }
    }
}

impl std::error::Error for CliError {}

impl From<aqmlab::ScenarioError> for CliError {
    fn from(e: aqmlab::ScenarioError) -> Self {
        CliError::Input(e.to_string())
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::Internal(e.to_string())
    }
}

pub type CliResult<T = ()> = Result<T, CliError>;

/// The git commit this build comes from (`"unknown"` outside a git
/// checkout), for `provenance.json`.
pub const GIT_COMMIT: &str = env!("AQMLAB_GIT_COMMIT");

/// Where the repository's scenario files are (for commands that read them).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}
