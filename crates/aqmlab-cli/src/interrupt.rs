//! SIGINT/SIGTERM: stop the work, keep the runs already complete, remove
//! the files of runs still in progress, say how many runs are complete and
//! that the same command resumes, and exit 130.
//!
//! The handler (the `ctrlc` crate, with SIGTERM) waits for a run that is
//! being renamed into place to finish ([`aqmlab::output::abort_cleanup`]),
//! so a run folder is either complete or has no `summary.json`.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

static DONE: AtomicUsize = AtomicUsize::new(0);
static TOTAL: AtomicUsize = AtomicUsize::new(0);
static OUT: OnceLock<String> = OnceLock::new();

/// Install the handler for a command that will complete `total` runs into
/// `out`. Runs already complete (resumed) count through [`run_done`].
pub fn install(total: usize, out: &Path) {
    TOTAL.store(total, Ordering::SeqCst);
    if OUT.set(out.display().to_string()).is_err() {
        return; // installed already
    }
    // An error here (a handler set by someone else) leaves the default
    // behaviour, which still leaves only complete files behind.
    let _ = ctrlc::set_handler(|| {
        let removed = aqmlab::output::abort_cleanup();
        let done = DONE.load(Ordering::SeqCst);
        let total = TOTAL.load(Ordering::SeqCst);
        let out = OUT.get().map(String::as_str).unwrap_or("?");
        eprintln!(
            "\ninterrupted: {done} of {total} runs complete in {out} ({removed} partial files removed); \
             run the same command again to resume (complete runs are kept and skipped)"
        );
        std::process::exit(130);
    });
}

/// One more run is complete (its files are in place).
pub fn run_done() {
    DONE.fetch_add(1, Ordering::SeqCst);
}
