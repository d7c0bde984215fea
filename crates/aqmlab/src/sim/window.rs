//! Measurement windows: the figures of a run over `[t₀, end]` instead of
//! `[0, end]`, from one run.
//!
//! [`Simulation::run_until`] runs every event due at or before `t₀` (in a
//! parallel run the last synchronisation window is cut at `t₀`, so every
//! process stands at the same instant) and returns a [`Snapshot`]: the
//! results a run of duration `t₀` would report, byte for byte, plus what a
//! difference needs beyond them (the queues' delay histograms, the flows'
//! delay sums). Taking it changes no simulated state.
//! [`Simulation::measured_since`] then gives the results over the window:
//! every counter is its value at the end minus its value at `t₀`, and every
//! mean is recomputed from those differences (the time-averaged queue and
//! the utilisation over the window's length, the mean queueing delay over
//! the packets dequeued in it).
//!
//! A scenario's `[output] warmup` uses the same mechanism: the simulation
//! takes the snapshot when it reaches the warm-up instant, and [`run`]
//! returns the window's results (`RunResult::warmup_s` says so).
//!
//! What the window does not change: the time series (queue samples, cwnd
//! traces, throughput bins) and the request log cover the whole run with
//! their time stamps; `conservation`, `events`, the final cwnd and RTT,
//! and the components' `stats` (a mix of counters and states) are the
//! run's at its end. A flow's `completion_s` is reported only for flows
//! that started at or after `t₀`, and a workload's response times only
//! for the requests opened at or after it, so that no transient enters a
//! per-flow time.
//!
//! [`run`]: Simulation::run

use super::collect::Halves;
use super::ids::LinkId;
use super::Simulation;
use crate::engine::{to_secs, Time};
use crate::metrics::{FlowResult, LinkResult, QueueResult, RunResult};
use crate::net::link::SojournHist;

/// The counters of a simulation at one instant, taken by
/// [`Simulation::run_until`]; [`Simulation::measured_since`] gives the
/// results since then.
pub struct Snapshot {
    /// When it was taken, ns.
    pub at: Time,
    /// The results at `at`, as a run of duration `at` reports them.
    pub result: RunResult,
    /// Per queue (global link order): its delay histogram.
    sojourn: Vec<SojournHist>,
    /// Per flow (global id): one-way delays of data delivered, (sum ns, count).
    owd: Vec<(u128, u64)>,
    /// Its place among this simulation's snapshots (from 1): the flows'
    /// largest delays restart at every snapshot.
    mark: u64,
}

impl Simulation {
    /// Run every event due at or before `t` (at most the end of the run;
    /// nothing when the run is already there) and return the counters at
    /// that instant. Running on with [`run`](Self::run) gives the same
    /// results as if this had not been called.
    pub fn run_until(&mut self, t: Time) -> Snapshot {
        let t = t.clamp(self.now, self.sh.end);
        self.advance(t, &mut |_| {});
        self.snapshot()
    }

    /// The results over the window from `snap` to now (the end of the run
    /// after [`run`](Self::run)); see the [module](self) for what is
    /// measured over the window. Its `wall_seconds` is 0 (the run's own
    /// result has the run's).
    pub fn measured_since(&mut self, snap: &Snapshot) -> RunResult {
        let whole = self.collect(self.now, 0.0);
        self.window(snap, whole)
    }

    /// Run to `limit`, taking the scenario's warm-up snapshot on the way.
    pub(super) fn advance(&mut self, limit: Time, progress: &mut dyn FnMut(Time)) {
        if let Some(w) = self.warmup {
            if self.warm.is_none() && self.now <= w && w <= limit && w < self.sh.end {
                self.step(w, progress);
                let s = self.snapshot();
                self.warm = Some(s);
            }
        }
        self.step(limit, progress);
    }

    fn snapshot(&mut self) -> Snapshot {
        let result = self.collect(self.now, 0.0);
        let sojourn = (0..self.n_links)
            .map(|gi| {
                let (near, _) = self.link_places(LinkId(gi as u32));
                let lp = &self.lps[near.ix()];
                lp.links[lp.link_ix[gi] as usize]
                    .l
                    .port
                    .stats
                    .sojourn()
                    .into_owned()
            })
            .collect();
        let owd = (self.halves().iter())
            .map(|h| (h.rcv.owd_sum, h.rcv.owd_n))
            .collect();
        self.marks += 1;
        for lp in self.lps.iter_mut() {
            for f in lp.flows.iter_mut() {
                f.owd_max_before = f.owd_max_before.max(f.owd_max);
                f.owd_max = 0;
            }
        }
        Snapshot {
            at: self.now,
            result,
            sojourn,
            owd,
            mark: self.marks,
        }
    }

    /// `whole` (the results at now) over the window since `snap`.
    pub(super) fn window(&self, snap: &Snapshot, mut whole: RunResult) -> RunResult {
        let a = &snap.result;
        let (ta, tb) = (a.sim_seconds, whole.sim_seconds);
        let span = tb - ta;
        let hv = self.halves();
        let latest = snap.mark == self.marks;
        for (i, f) in whole.flows.iter_mut().enumerate() {
            let h = &hv[i];
            flow_window(f, a.flows.get(i), h, snap, latest, self.now);
        }
        for (gi, q) in whole.queues.iter_mut().enumerate() {
            let (near, _) = self.link_places(LinkId(gi as u32));
            let lp = &self.lps[near.ix()];
            let now = lp.links[lp.link_ix[gi] as usize].l.port.stats.sojourn();
            queue_window(q, &a.queues[gi], (ta, tb), &now, &snap.sojourn[gi]);
        }
        for (l, la) in whole.links.iter_mut().zip(&a.links) {
            link_window(l, la, (ta, tb));
        }
        drop(hv);
        whole.fairness = super::collect::fairness(&whole.flows);
        let (_, workloads) = self.collect_workloads(&self.halves(), snap.at);
        whole.workloads = workloads;
        whole.warmup_s = Some(ta);
        debug_assert!(span >= 0.0);
        whole
    }
}

/// A flow's figures over the window: counters less their values at the
/// snapshot (a flow absent then started after it), goodput over the part
/// of the window it was sending in.
fn flow_window(
    f: &mut FlowResult,
    a: Option<&FlowResult>,
    h: &Halves,
    snap: &Snapshot,
    latest: bool,
    end: Time,
) {
    if let Some(a) = a {
        debug_assert_eq!(a.id, f.id);
        let d = |x: &mut u64, y: u64| *x = x.saturating_sub(y);
        d(&mut f.bytes_acked, a.bytes_acked);
        d(&mut f.segments_delivered, a.segments_delivered);
        d(&mut f.segments_sent, a.segments_sent);
        d(&mut f.retransmits, a.retransmits);
        d(&mut f.timeouts, a.timeouts);
        d(&mut f.fast_retransmits, a.fast_retransmits);
        d(&mut f.ecn_reductions, a.ecn_reductions);
        d(&mut f.drops, a.drops);
    }
    let (s, r) = (h.snd, h.rcv);
    if s.start < snap.at {
        f.completion_s = None;
    }
    let stop = s
        .transport
        .sender()
        .and_then(|x| x.completion_time)
        .unwrap_or(end);
    let from = s.start.max(snap.at);
    f.goodput_bps = if s.started && stop > from {
        f.bytes_acked as f64 * 8.0 / to_secs(stop - from)
    } else {
        0.0
    };
    let (sum0, n0) = snap.owd.get(f.id as usize).copied().unwrap_or((0, 0));
    let n = r.owd_n - n0;
    f.mean_owd_s = (n > 0).then(|| (r.owd_sum - sum0) as f64 / n as f64 / 1e9);
    f.max_owd_s = (n > 0 && latest).then(|| to_secs(r.owd_max));
}

/// A queue's figures over the window `(ta, tb)` (seconds); its delay
/// quantiles and maximum from the histogram of the delays recorded in it.
fn queue_window(
    q: &mut QueueResult,
    a: &QueueResult,
    (ta, tb): (f64, f64),
    hist: &SojournHist,
    hist0: &SojournHist,
) {
    debug_assert_eq!(q.link, a.link);
    let span = tb - ta;
    // sums over the window from the means at its two ends
    let sojourn = q.mean_delay_s * q.dequeued as f64 - a.mean_delay_s * a.dequeued as f64;
    let d = |x: &mut u64, y: u64| *x = x.saturating_sub(y);
    d(&mut q.arrivals, a.arrivals);
    d(&mut q.enqueued, a.enqueued);
    d(&mut q.dequeued, a.dequeued);
    d(&mut q.dropped, a.dropped);
    d(&mut q.dropped_early, a.dropped_early);
    d(&mut q.dropped_forced, a.dropped_forced);
    d(&mut q.dropped_overflow, a.dropped_overflow);
    d(&mut q.dropped_aqm, a.dropped_aqm);
    d(&mut q.marked, a.marked);
    let avg = |mb: f64, ma: f64| {
        if span > 0.0 {
            ((mb * tb - ma * ta) / span).max(0.0)
        } else {
            0.0
        }
    };
    q.mean_len_pkts = avg(q.mean_len_pkts, a.mean_len_pkts);
    q.mean_len_bytes = avg(q.mean_len_bytes, a.mean_len_bytes);
    q.mean_delay_s = if q.dequeued == 0 {
        0.0
    } else {
        sojourn / q.dequeued as f64
    };
    let mut h = hist.histogram();
    let ok = h.subtract(hist0.histogram()).is_ok();
    let (p50, p99, max) = if q.dequeued == 0 || !ok || h.is_empty() {
        (0, 0, 0)
    } else {
        (h.value_at_quantile(0.5), h.value_at_quantile(0.99), h.max())
    };
    q.p50_delay_s = to_secs(p50);
    q.p99_delay_s = to_secs(p99);
    q.max_delay_s = to_secs(max);
    for c in q.classes.iter_mut() {
        if let Some(c0) = a.classes.iter().find(|c0| c0.class == c.class) {
            d(&mut c.arrivals, c0.arrivals);
            d(&mut c.dropped, c0.dropped);
            d(&mut c.marked, c0.marked);
        }
    }
}

/// A link's figures over the window `(ta, tb)`: transmissions, losses,
/// and the busy fraction (busy time at each end = utilisation × time, as
/// the results report it; booked when a transmission starts, so each end
/// may carry up to one packet time, hence the clamp).
fn link_window(l: &mut LinkResult, a: &LinkResult, (ta, tb): (f64, f64)) {
    debug_assert_eq!(l.link, a.link);
    let span = tb - ta;
    l.tx_packets = l.tx_packets.saturating_sub(a.tx_packets);
    l.tx_bytes = l.tx_bytes.saturating_sub(a.tx_bytes);
    l.lost = l.lost.saturating_sub(a.lost);
    l.utilization = if span > 0.0 {
        ((l.utilization * tb - a.utilization * ta) / span).clamp(0.0, 1.0)
    } else {
        0.0
    };
}
