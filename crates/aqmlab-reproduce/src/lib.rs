//! aqmlab's paper reproductions and what they share with the `aqmlab`
//! command and the Python package: the paper registry ([`papers`]), the
//! one entry point [`reproduce`], the long-format tables, plots, progress
//! reporting and statistics over seeds ([`stats`]), and the allocator
//! both binaries install ([`alloc`]).
//!
//! Layers inside the crate, each using only those above it in this list:
//! [`error`], [`stats`], [`progress`], [`plot`], the helpers a driver uses
//! ([`opts`], [`matrix`], [`paper`], [`table`], [`template`], [`verdict`],
//! [`common`]), the drivers (`papers/<paper>.rs`) and, last, the registry
//! that names them ([`papers`]).

pub mod alloc;
pub mod common;
pub mod error;
pub mod matrix;
pub mod opts;
pub mod paper;
pub mod papers;
pub mod plot;
pub mod progress;
pub mod stats;
pub mod table;
pub mod template;
pub mod verdict;

pub use error::{Error, Result};
pub use opts::{parse_duration, Opts, MAX_DURATION_S};
pub use papers::{reproduce, Driver, PAPERS};
pub use table::TableRow;

/// The git commit aqmlab is built from (`"unknown"` outside a git
/// checkout), for `provenance.json`.
pub const GIT_COMMIT: &str = env!("AQMLAB_GIT_COMMIT");
