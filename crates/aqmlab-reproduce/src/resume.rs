//! Interrupt and resume a reproduction, as `aqmlab sweep` does.
//!
//! While [`crate::reproduce`] runs with an output folder, every run's
//! (small) result is kept in `<out>/.resume/<fingerprint>/<call>/<job>.bin`
//! as soon as it finishes: postcard's encoding, written to a temporary name
//! and renamed into place, so a file is either complete or absent whatever
//! moment a SIGINT/SIGTERM stops the process. The fingerprint is a hash of
//! the paper, its options and the build (version and git commit): results
//! of another configuration or another build are never reused. The same
//! command again reads the kept results, runs only the jobs that have none
//! and computes the tables, report and plots from the whole set, as an
//! uninterrupted run does; the encoding is exact (an `f64` is its 8 bytes),
//! so the outputs are byte-identical. A reproduction that completes removes
//! `.resume`.
//!
//! `<call>` numbers a driver's [`par_map_resumable`] calls in the order it
//! makes them; a driver is deterministic, so the same call gets the same
//! number when resumed.

use crate::progress::par_map;
use crate::{Opts, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs complete (kept, whether run now or read back) in this process, for
/// the interrupt message.
static DONE: AtomicUsize = AtomicUsize::new(0);
/// The call in progress: its label, runs complete and runs in all.
static PHASE: Mutex<Option<(String, usize, usize)>> = Mutex::new(None);

struct Active {
    dir: PathBuf,
    next_call: usize,
}

thread_local! {
    /// Set by [`crate::reproduce`] for the driver it calls on this thread.
    static ACTIVE: RefCell<Option<Active>> = const { RefCell::new(None) };
}

/// The folder kept runs go to for `paper` with `o`, under `out`.
pub fn dir(out: &Path, paper: &str, o: &Opts) -> PathBuf {
    let key = format!(
        "{paper}|seeds={}|duration={:?}|load={:?}|{}|{}",
        o.seeds,
        o.duration_s.map(f64::to_bits),
        o.load.map(f64::to_bits),
        env!("CARGO_PKG_VERSION"),
        crate::GIT_COMMIT
    );
    // FNV-1a, 64 bits: a folder name, not a security measure.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    out.join(".resume").join(format!("{paper}-{h:016x}"))
}

/// Keep runs in `dir` while `f` runs on this thread, then remove
/// `<out>/.resume` if `f` succeeded. Kept runs of other fingerprints are
/// removed first: they can never be used.
pub fn with<T>(dir: PathBuf, f: impl FnOnce() -> Result<T>) -> Result<T> {
    if let Some(root) = dir.parent() {
        if let Ok(rd) = std::fs::read_dir(root) {
            for e in rd.flatten() {
                if e.path() != dir {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
    }
    ACTIVE.with(|a| {
        *a.borrow_mut() = Some(Active {
            dir: dir.clone(),
            next_call: 0,
        })
    });
    let r = f();
    ACTIVE.with(|a| *a.borrow_mut() = None);
    *PHASE.lock().unwrap_or_else(|e| e.into_inner()) = None;
    if r.is_ok() {
        if let Some(root) = dir.parent() {
            let _ = std::fs::remove_dir_all(root);
        }
    }
    r
}

/// Runs complete so far in this process and the call in progress (its
/// label, runs complete, runs in all), for an interrupt message.
pub fn progress() -> (usize, Option<(String, usize, usize)>) {
    let phase = PHASE.lock().unwrap_or_else(|e| e.into_inner()).clone();
    (DONE.load(Ordering::SeqCst), phase)
}

/// [`par_map`] whose results are kept while a reproduction runs (see the
/// module's documentation): jobs with a kept result are read back, not
/// run. Errors are returned, not kept. Outside [`with`] this is `par_map`.
pub fn par_map_resumable<J: Sync, T: Send + Serialize + DeserializeOwned>(
    label: &str,
    jobs: &[J],
    f: impl Fn(&J) -> Result<T> + Sync,
) -> Vec<Result<T>> {
    let call_dir = ACTIVE.with(|a| {
        a.borrow_mut().as_mut().map(|a| {
            let d = a.dir.join(a.next_call.to_string());
            a.next_call += 1;
            d
        })
    });
    let Some(call_dir) = call_dir else {
        return par_map(label, jobs, f);
    };
    // A folder that cannot be made leaves the runs unkept, not wrong.
    let _ = std::fs::create_dir_all(&call_dir);
    let path = |i: usize| call_dir.join(format!("{i}.bin"));
    let mut kept: Vec<Option<T>> = (0..jobs.len())
        .map(|i| {
            let bytes = std::fs::read(path(i)).ok()?;
            postcard::from_bytes(&bytes).ok()
        })
        .collect();
    let n_kept = kept.iter().filter(|k| k.is_some()).count();
    DONE.fetch_add(n_kept, Ordering::SeqCst);
    *PHASE.lock().unwrap_or_else(|e| e.into_inner()) =
        Some((label.to_string(), n_kept, jobs.len()));
    if n_kept > 0 {
        eprintln!(
            "{label}: resuming: {n_kept} of {} runs kept from an interrupted run in {}",
            jobs.len(),
            call_dir.display()
        );
    }
    let todo: Vec<usize> = (0..jobs.len()).filter(|&i| kept[i].is_none()).collect();
    let fresh = par_map(label, &todo, |&i| {
        let r = f(&jobs[i]);
        if let Ok(t) = &r {
            if let Ok(bytes) = postcard::to_allocvec(t) {
                let tmp = call_dir.join(format!("{i}.tmp"));
                if std::fs::write(&tmp, &bytes).is_ok() && std::fs::rename(&tmp, path(i)).is_ok() {
                    DONE.fetch_add(1, Ordering::SeqCst);
                    if let Some(p) = PHASE.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                        p.1 += 1;
                    }
                }
            }
        }
        r
    });
    let mut fresh = fresh.into_iter();
    kept.iter_mut()
        .map(|k| match k.take() {
            Some(t) => Ok(t),
            None => fresh.next().expect("one fresh result per job without one"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_results_are_read_back_exactly_and_not_run_again() {
        let d = tempfile::tempdir().unwrap();
        let o = Opts {
            seeds: 2,
            duration_s: Some(1.5),
            load: None,
        };
        let kd = dir(d.path(), "p", &o);
        let jobs: Vec<u64> = (0..6).collect();
        let val = |j: &u64| (*j as f64 / 3.0, f64::NAN, vec![*j; 2]);
        let ran = AtomicUsize::new(0);
        // First time: job 4 fails, the others are kept; the call fails so
        // the folder stays.
        let r: Result<()> = with(kd.clone(), || {
            let v = par_map_resumable("t", &jobs, |j| {
                ran.fetch_add(1, Ordering::SeqCst);
                if *j == 4 {
                    Err(crate::Error::Internal("boom".into()))
                } else {
                    Ok(val(j))
                }
            });
            assert!(v[4].is_err());
            Err(crate::Error::Internal("stop".into()))
        });
        assert!(r.is_err());
        assert_eq!(ran.load(Ordering::SeqCst), 6);
        assert_eq!(std::fs::read_dir(kd.join("0")).unwrap().count(), 5);
        // Second time: only job 4 runs; the values read back are the same
        // bits (NaN included); success removes `.resume`.
        ran.store(0, Ordering::SeqCst);
        with(kd.clone(), || {
            let v = par_map_resumable("t", &jobs, |j| {
                ran.fetch_add(1, Ordering::SeqCst);
                Ok(val(j))
            });
            for (j, r) in jobs.iter().zip(v) {
                let (a, b, c) = r.unwrap();
                let (wa, wb, wc) = val(j);
                assert_eq!(
                    (a.to_bits(), b.to_bits(), c),
                    (wa.to_bits(), wb.to_bits(), wc)
                );
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        assert!(!d.path().join(".resume").exists());
        // Other options, another folder.
        let o2 = Opts { seeds: 3, ..o };
        assert_ne!(dir(d.path(), "p", &o2), kd);
    }
}
