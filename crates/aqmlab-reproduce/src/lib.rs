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
#[allow(unused_macros)]
macro_rules! println { ($($t:tt)*) => { $crate::quiet_write!(stdout, writeln, $($t)*) } }
#[allow(unused_macros)]
macro_rules! eprint { ($($t:tt)*) => { $crate::quiet_write!(stderr, write, $($t)*) } }
#[allow(unused_macros)]
macro_rules! eprintln { ($($t:tt)*) => { $crate::quiet_write!(stderr, writeln, $($t)*) } }

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
