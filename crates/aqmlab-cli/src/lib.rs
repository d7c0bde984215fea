//! The `aqmlab` command's library half: the paper reproductions, plots and
//! progress reporting, callable from other crates (the Python package calls
//! [`reproduce::reproduce`]). The binary (`main.rs`) is a thin layer over it.

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
