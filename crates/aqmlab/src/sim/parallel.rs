//! The parallel runner: conservative, synchronous windows (YAWNS: Nicol,
//! "The cost of conservative synchronization in parallel discrete event
//! simulations", JACM 1993). Every logical process runs on its own thread.
//! A window starts at `T`, the earliest pending event (or message) of all
//! processes, and covers `[T, T + L)`, where the lookahead `L` is the
//! shortest delay of a cut link: a packet sent over a cut link inside the
//! window arrives at or after `T + L`, so no process can receive anything
//! inside the window it is running. At the end of a window each process
//! posts its outgoing packets into the mailbox of their destination and the
//! earliest time it knows of, and all meet at one barrier. Mailboxes and
//! published times are double-buffered by window parity, so one barrier per
//! window suffices: a process that starts window `r + 1` writes only the
//! buffers of parity `r`, which nobody reads until the barrier of `r + 1`.
//!
//! Byte-identity with the sequential run follows from the event order
//! ([`crate::engine::TieBreak`]): events are ordered by (time, owner, owner's
//! counter), every owner lives in one process, and a packet's arrival
//! event carries the far end's counter, so each process runs its events in
//! the order the sequential run does.

use super::forward::Msg;
use super::lp::LogicalProcess;
use super::Shared;
use crate::engine::Time;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::Instant;

/// What one process measured while running in parallel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LpStats {
    /// Wall seconds spent waiting at the window barrier.
    pub wait_s: f64,
    /// Wall seconds spent running events.
    pub busy_s: f64,
    /// CPU seconds of the process's thread.
    pub cpu_s: f64,
}

/// CPU time of the calling thread in seconds (Linux schedstat; 0 where it
/// is not available).
pub fn thread_cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns / 1e9)
}

/// The shared state of one parallel run.
struct Sync {
    barrier: Barrier,
    /// Earliest pending time per process, by window parity.
    next: [Vec<AtomicU64>; 2],
    /// Incoming packets per process, by window parity.
    mail: [Vec<Mutex<Vec<Msg>>>; 2],
    lookahead: Time,
    end: Time,
}

impl Sync {
    fn new(n: usize, lookahead: Time, end: Time) -> Sync {
        let times = || (0..n).map(|_| AtomicU64::new(u64::MAX)).collect();
        let boxes = || (0..n).map(|_| Mutex::new(Vec::new())).collect();
        Sync {
            barrier: Barrier::new(n),
            next: [times(), times()],
            mail: [boxes(), boxes()],
            lookahead,
            end,
        }
    }
}

/// Run one process's windows until every process is past `end`. Returns
/// the windows run and the process's timings.
fn worker(
    lp: &mut LogicalProcess,
    shared: &Shared,
    sy: &Sync,
    progress: &mut dyn FnMut(Time),
) -> (u64, LpStats) {
    let me = lp.id.ix();
    let mut st = LpStats::default();
    let cpu0 = thread_cpu_seconds();
    sy.next[0][me].store(lp.next_time().unwrap_or(u64::MAX), Ordering::SeqCst);
    let t0 = Instant::now();
    sy.barrier.wait();
    st.wait_s += t0.elapsed().as_secs_f64();
    let mut r = 0usize;
    loop {
        let p = r % 2;
        let start = (sy.next[p].iter())
            .map(|t| t.load(Ordering::SeqCst))
            .min()
            .unwrap_or(u64::MAX);
        for m in std::mem::take(&mut *sy.mail[p][me].lock().expect("mailbox")) {
            lp.accept(m);
        }
        if start > sy.end {
            break;
        }
        let busy = Instant::now();
        let limit = start.saturating_add(sy.lookahead - 1).min(sy.end);
        lp.run_until(shared, limit, progress);
        let q = (r + 1) % 2;
        let mut earliest = lp.next_time().unwrap_or(u64::MAX);
        let mut out = std::mem::take(&mut lp.outbox);
        out.sort_by_key(|m| m.to);
        for chunk in out.chunk_by(|a, b| a.to == b.to) {
            earliest = earliest.min(chunk.iter().map(|m| m.at).min().expect("chunk"));
            let mut mb = sy.mail[q][chunk[0].to.ix()].lock().expect("mailbox");
            mb.extend_from_slice(chunk);
        }
        out.clear();
        lp.outbox = out;
        sy.next[q][me].store(earliest, Ordering::SeqCst);
        st.busy_s += busy.elapsed().as_secs_f64();
        let w = Instant::now();
        sy.barrier.wait();
        st.wait_s += w.elapsed().as_secs_f64();
        r += 1;
    }
    st.cpu_s = thread_cpu_seconds() - cpu0;
    (r as u64, st)
}

/// Run every process to `end` (every event due at or before it; the last
/// window is cut at `end`, so `end` is a window boundary and a measurement
/// snapshot taken there sees every process at the same instant) on its
/// own thread (process 0 on the calling thread, which reports progress).
/// Returns the windows run and each process's timings.
pub(super) fn run(
    lps: &mut [LogicalProcess],
    shared: &Shared,
    lookahead: Time,
    end: Time,
    progress: &mut dyn FnMut(Time),
) -> (u64, Vec<LpStats>) {
    assert!(lookahead > 0, "a parallel run needs a positive lookahead");
    let sy = Sync::new(lps.len(), lookahead, end);
    let (first, rest) = lps.split_first_mut().expect("one process at least");
    std::thread::scope(|s| {
        let handles: Vec<_> = (rest.iter_mut())
            .map(|lp| {
                let sy = &sy;
                s.spawn(move || worker(lp, shared, sy, &mut |_| {}))
            })
            .collect();
        let (windows, st0) = worker(first, shared, &sy, progress);
        let mut stats = vec![st0];
        for h in handles {
            let (w, st) = h.join().expect("worker thread");
            debug_assert_eq!(w, windows, "every process runs the same windows");
            stats.push(st);
        }
        (windows, stats)
    })
}
