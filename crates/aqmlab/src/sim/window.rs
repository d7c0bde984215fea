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
//! the packets dequeued in it). A flow's goodput is defined in
//! [`flow_window`] so that bytes in flight at `t₀` cannot raise it above
//! what the path carries.
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
use super::endpoint::Transport;
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
    /// Per flow (global id): payload bytes the receiver holds ([`received`]).
    rx: Vec<u64>,
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
        let t = t.clamp(self.now, self.shared.end);
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
            if self.warm.is_none() && self.now <= w && w <= limit && w < self.shared.end {
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
                    .link
                    .port
                    .stats
                    .sojourn()
                    .into_owned()
            })
            .collect();
        let hv = self.halves();
        let owd = hv.iter().map(|h| (h.rcv.owd_sum, h.rcv.owd_n)).collect();
        let rx = hv.iter().map(received).collect();
        drop(hv);
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
            rx,
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
            let now = lp.links[lp.link_ix[gi] as usize].link.port.stats.sojourn();
            queue_window(q, &a.queues[gi], (ta, tb), &now, &snap.sojourn[gi]);
        }
        for (l, la) in whole.links.iter_mut().zip(&a.links) {
            link_window(l, la, self.now.saturating_sub(snap.at));
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

/// Payload bytes the receiver of a flow holds (distinct data received, in
/// order or buffered past a hole; for CBR, the bytes received).
fn received(h: &Halves) -> u64 {
    match (&h.snd.transport, &h.rcv.transport) {
        (Transport::Tcp(s), Transport::Tcp(r)) => {
            let segs = r.rcv.rcv_nxt as u64 + r.rcv.out_of_order() as u64;
            (segs * s.snd.params.mss as u64).min(s.snd.total_bytes())
        }
        (_, Transport::Cbr(c)) => c.bytes_received,
        _ => 0,
    }
}

/// A flow's figures over the window: counters less their values at the
/// snapshot (a flow absent then started after it), and its goodput:
///
/// - a flow that started in the window: `bytes_acked · 8` over its life
///   (start to completion, or the window's end), as over a whole run —
///   every byte it counts crossed the path in that span;
/// - a flow that started before the window: the payload bytes its
///   receiver got in the window (first arrivals) · 8 over the window's
///   whole length, even when it completed early in it. Bytes acknowledged
///   in the window may have crossed the path before it opened (up to a
///   window of data in flight), and dividing by the sliver the flow lived
///   in the window inflated them; bytes received in it crossed the
///   receiver's link in it.
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
    f.goodput_bps = if s.start >= snap.at {
        if s.started && stop > s.start {
            f.bytes_acked as f64 * 8.0 / to_secs(stop - s.start)
        } else {
            0.0
        }
    } else if end > snap.at {
        let before = snap.rx.get(f.id as usize).copied().unwrap_or(0);
        let got = received(h).saturating_sub(before);
        got as f64 * 8.0 / to_secs(end - snap.at)
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
    d(&mut q.dropped_link_down, a.dropped_link_down);
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
    // (a difference of two floating-point sums: a residue below 0 is 0)
    q.mean_delay_s = if q.dequeued == 0 {
        0.0
    } else {
        (sojourn / q.dequeued as f64).max(0.0)
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
            if let (Some(n), Some(n0)) = (c.dequeued.as_mut(), c0.dequeued) {
                d(n, n0);
                c.sojourn_ns = c.sojourn_ns.saturating_sub(c0.sojourn_ns);
                c.mean_delay_s = Some(super::collect::mean_delay_s(c.sojourn_ns, *n));
            }
        }
    }
}

/// A link's figures over a window of `span` ns: transmissions, losses,
/// and the busy fraction (busy time booked in the window, a difference of
/// integers: exactly 0 when nothing was sent; a transmission's time is
/// booked when it starts, so the last may reach past the end, hence the
/// bound at 1).
fn link_window(l: &mut LinkResult, a: &LinkResult, span: Time) {
    debug_assert_eq!(l.link, a.link);
    l.tx_packets = l.tx_packets.saturating_sub(a.tx_packets);
    l.tx_bytes = l.tx_bytes.saturating_sub(a.tx_bytes);
    l.lost = l.lost.saturating_sub(a.lost);
    l.busy_ns = l.busy_ns.saturating_sub(a.busy_ns);
    l.utilization = super::collect::utilisation(l.busy_ns, span);
    if let (Some((u, o)), Some((u0, o0))) = (l.offered, a.offered) {
        l.offered = Some((u.saturating_sub(u0), o.saturating_sub(o0)));
        l.utilization = super::collect::share(u - u0.min(u), o - o0.min(o));
    }
}
