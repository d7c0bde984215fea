//! A port's statistics, with one owner: every counter, class breakdown,
//! delay histogram and queue-length integral of a [`Port`](super::link::Port)
//! is written and read through [`PortStats`], whose fields are private to
//! this module.
//!
//! A packet offered to an idle link whose queue is an empty DropTail that
//! accepts it is handed to the transmitter without entering the queue
//! ([`Port::bypass`](super::link::Port::bypass)). Such a packet of the
//! default class is only counted ([`PortStats::record_bypass`]); every reader
//! below adds those packets to what it returns (an arrival enqueued and
//! dequeued with a delay of 0), so no reader can see the figures without
//! them. [`PortStats::fold_bypassed`] adds them in for good (before results
//! are collected, so that readers borrow the histogram instead of copying
//! it); it changes no figure read.

use crate::aqm::{DropCause, QueueCounters};
use crate::engine::Time;
use crate::net::packet::Class;
use hdrhistogram::Histogram;

/// Statistics of one port.
///
/// `#[repr(C)]`: what a bypassing packet writes (the last delay, the count
/// of bypassed packets not yet folded in) first, the rest after (see
/// `sim/hints.rs` for the layout rule).
#[repr(C)]
#[derive(Clone, Debug, Default)]
pub struct PortStats {
    /// Queueing delay of the last packet dequeued (or bypassed).
    last_sojourn: Time,
    /// Packets of the default class that bypassed the empty queue and are
    /// not yet in `counters`, `by_class` and `sojourn`.
    bypassed: u64,
    /// Per-packet queueing delay (enqueue → dequeue), nanoseconds.
    sojourn: SojournHist,
    /// Arrivals, drops and marks per packet class (indexed by `Class as usize`).
    by_class: [ClassCounters; 3],
    counters: QueueCounters,
    /// ∫ len_pkts dt, in packet·ns, up to `last_change`.
    area_pkts: f64,
    area_bytes: f64,
    /// The integral's end: the time of the last change of the queue's
    /// length or earlier (a bypassing packet leaves the length at 0 and
    /// the integral as it was).
    last_change: Time,
    sojourn_sum_ns: u128,
}

/// What a port counts for one packet class
/// ([`Class`](crate::net::packet::Class): default, In, Out).
///
/// A drop is charged to the class of the dropped packet. A CE mark is
/// charged to the class of the packet the discipline was handling when it
/// marked: the arrival for disciplines that mark on enqueue (RED, ARED,
/// RIO, PIE), the departing packet for those that mark on dequeue (CoDel,
/// FQ-CoDel, sfqCoDel). MarkMax marks a queued packet of the largest
/// flow, not the arrival, so its per-class marks are approximate; the
/// queue's total `marked` is exact for every discipline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassCounters {
    pub arrivals: u64,
    pub dropped: u64,
    pub marked: u64,
}

impl PortStats {
    /// Bytes from the start that a bypassing packet writes: the hot
    /// prefix of the declared order.
    pub const HOT_BYTES: usize = std::mem::offset_of!(PortStats, sojourn);

    // ---- writers ----

    /// Advance the queue-length integral to `now`; `len_pkts`/`len_bytes`
    /// is the length since the last change. Called before any change of
    /// the length.
    #[inline]
    pub fn integrate(&mut self, now: Time, len_pkts: usize, len_bytes: u64) {
        let dt = (now - self.last_change) as f64;
        if dt > 0.0 {
            self.area_pkts += len_pkts as f64 * dt;
            self.area_bytes += len_bytes as f64 * dt;
            self.last_change = now;
        }
    }

    /// A packet of `class` offered to the queue, with the CE marks the
    /// discipline made while taking it; `Err` if the arrival was dropped.
    #[inline]
    pub fn record_arrival(&mut self, class: Class, marked: u64, r: Result<(), DropCause>) {
        self.counters.arrivals += 1;
        self.counters.marked += marked;
        let c = &mut self.by_class[class as usize];
        c.arrivals += 1;
        c.marked += marked;
        match r {
            Ok(()) => self.counters.enqueued += 1,
            Err(cause) => {
                self.counters.count_drop(cause);
                c.dropped += 1;
            }
        }
    }

    /// A dequeue's CE marks, charged to the departing packet's class if
    /// one departs.
    #[inline]
    pub fn record_dequeue_marks(&mut self, class: Option<Class>, marked: u64) {
        self.counters.marked += marked;
        if let Some(c) = class {
            self.by_class[c as usize].marked += marked;
        }
    }

    /// A packet dequeued after a queueing delay of `d` ns.
    #[inline]
    pub fn record_departure(&mut self, d: Time) {
        self.counters.dequeued += 1;
        self.last_sojourn = d;
        self.sojourn_sum_ns += d as u128;
        self.sojourn.record(d);
    }

    /// A queued packet of `class` dropped by the discipline.
    #[inline]
    pub fn record_drop(&mut self, class: Class, cause: DropCause) {
        self.counters.count_drop(cause);
        self.by_class[class as usize].dropped += 1;
    }

    /// A packet of `class` that bypassed the empty queue: as an arrival
    /// enqueued and dequeued at once with a delay of 0. The queue's length
    /// stays 0, so the length integral gains 0·dt and is left alone. A
    /// packet of the default class is only counted in `bypassed`, which
    /// every reader adds in; the others are counted at once.
    #[inline]
    pub fn record_bypass(&mut self, class: Class) {
        self.last_sojourn = 0;
        match class {
            Class::Default => self.bypassed += 1,
            c => self.add_bypassed(c, 1),
        }
    }

    /// Add `n` bypassed packets of class `c` to the queue and class
    /// counters and the delay histogram.
    fn add_bypassed(&mut self, c: Class, n: u64) {
        count_bypassed(&mut self.counters, n);
        self.by_class[c as usize].arrivals += n;
        self.sojourn.record_zeros(n);
    }

    /// Fold the bypassed packets not yet counted into the counters and the
    /// histogram (no effect on any figure read).
    pub fn fold_bypassed(&mut self) {
        let n = std::mem::take(&mut self.bypassed);
        if n > 0 {
            self.add_bypassed(Class::Default, n);
        }
    }

    // ---- readers (each adds the bypassed packets not yet folded in) ----

    /// Packets offered, queued, dequeued, dropped and marked.
    pub fn counters(&self) -> QueueCounters {
        let mut c = self.counters.clone();
        count_bypassed(&mut c, self.bypassed);
        c
    }

    /// Arrivals, drops and marks per packet class (indexed by
    /// `Class as usize`).
    pub fn by_class(&self) -> [ClassCounters; 3] {
        let mut b = self.by_class;
        b[Class::Default as usize].arrivals += self.bypassed;
        b
    }

    /// The distribution of per-packet queueing delays (enqueue → dequeue),
    /// nanoseconds.
    pub fn sojourn(&self) -> std::borrow::Cow<'_, SojournHist> {
        if self.bypassed == 0 {
            std::borrow::Cow::Borrowed(&self.sojourn)
        } else {
            let mut h = self.sojourn.clone();
            h.record_zeros(self.bypassed);
            std::borrow::Cow::Owned(h)
        }
    }

    /// Queueing delay of the last packet that left the queue.
    pub fn last_sojourn(&self) -> Time {
        self.last_sojourn
    }

    /// Mean per-packet queueing delay in nanoseconds (exact, not binned).
    pub fn mean_sojourn_ns(&self) -> f64 {
        let dequeued = self.counters.dequeued + self.bypassed;
        if dequeued == 0 {
            0.0
        } else {
            self.sojourn_sum_ns as f64 / dequeued as f64
        }
    }

    /// (packets, bytes) × nanoseconds of queue integrated over [0, now],
    /// as [`PortStats::integrate`] would leave them at `now`, given the
    /// queue's length since its last change. Reading changes nothing, so
    /// a snapshot taken mid-run leaves the run's own figures as they were.
    pub fn areas(&self, now: Time, len_pkts: usize, len_bytes: u64) -> (f64, f64) {
        let dt = now.saturating_sub(self.last_change) as f64;
        if dt > 0.0 {
            (
                self.area_pkts + len_pkts as f64 * dt,
                self.area_bytes + len_bytes as f64 * dt,
            )
        } else {
            (self.area_pkts, self.area_bytes)
        }
    }

    /// The delay histogram has the dense form (for the scale benchmark).
    pub fn dense_histogram(&self) -> bool {
        matches!(self.sojourn, SojournHist::Dense(_))
    }

    /// Heap bytes of the delay histogram.
    pub fn hist_bytes(&self) -> usize {
        self.sojourn.heap_bytes()
    }

    /// The delay histogram's heap buffer that recording a delay other than
    /// 0 reads, if it has one (for `sim/hints.rs`).
    pub(crate) fn sojourn_buffer(&self) -> Option<*const u8> {
        self.sojourn.buffer()
    }
}

/// Count `n` bypassed packets: each an arrival, enqueued and dequeued.
fn count_bypassed(c: &mut QueueCounters, n: u64) {
    c.arrivals += n;
    c.enqueued += n;
    c.dequeued += n;
}

/// Largest sojourn recorded (1000 s); larger values are clamped to it.
const SOJOURN_MAX_NS: u64 = 1_000_000_000_000;
/// Distinct values kept in a list before a port switches to the dense histogram.
const SPARSE_MAX: usize = 48;

/// The per-packet queueing-delay distribution of one port: an HDR histogram
/// of 1 ns .. 1000 s at 3 significant digits, stored so that a port that
/// sees few distinct delays costs a few hundred bytes instead of the dense
/// histogram's 100–250 KiB (a star of 10⁵ hosts has 2·10⁵ ports).
///
/// Each value is first reduced to the lowest value of its HDR bucket (what
/// the dense histogram would count it under). Up to [`SPARSE_MAX`] distinct
/// bucket values are kept as a count of zeros (a packet that found its
/// link idle and its queue empty: on an access link of a large star nearly
/// every one, counted without touching the list's heap buffer) and a list
/// of (value, count) of the others; beyond that the port
/// switches to a dense, auto-growing [`Histogram`] with the same bucket
/// layout (its counts array grows only to the largest delay seen). Queries
/// rebuild a histogram from the list, so quantiles and the maximum are the
/// dense histogram's exactly.
#[derive(Clone, Debug)]
pub enum SojournHist {
    /// The count of zero delays, and (value, count) of the other values.
    Sparse(u64, Vec<(u64, u64)>),
    Dense(Box<Histogram<u64>>),
}

impl Default for SojournHist {
    fn default() -> Self {
        SojournHist::Sparse(0, Vec::new())
    }
}

/// An empty histogram with the layout every port uses (1 ns resolution,
/// 3 significant digits), growing as larger values are recorded.
fn empty_histogram() -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(1, 2, 3).expect("histogram bounds");
    h.auto(true);
    h
}

/// The template that maps a value to its bucket's lowest value.
fn layout() -> &'static Histogram<u64> {
    static L: std::sync::OnceLock<Histogram<u64>> = std::sync::OnceLock::new();
    L.get_or_init(empty_histogram)
}

impl SojournHist {
    /// Record one delay in nanoseconds.
    #[inline]
    pub fn record(&mut self, d: Time) {
        let d = d.min(SOJOURN_MAX_NS);
        let (zeros, v) = match self {
            SojournHist::Sparse(zeros, v) => (zeros, v),
            SojournHist::Dense(h) => {
                h.record(d).expect("auto-resizing histogram");
                return;
            }
        };
        let key = if d < 2048 {
            d // below 2048 ns every value is its own bucket
        } else {
            layout().lowest_equivalent(d)
        };
        if key == 0 && *zeros > 0 {
            *zeros += 1;
            return;
        }
        if key != 0 {
            if let Some(e) = v.iter_mut().find(|e| e.0 == key) {
                e.1 += 1;
                return;
            }
        }
        // a value not held yet: the list's and zero's (if any) count
        if v.len() + usize::from(*zeros > 0) < SPARSE_MAX {
            if key == 0 {
                *zeros = 1;
            } else {
                v.push((key, 1));
            }
        } else {
            let mut h = self.histogram();
            h.record(key).expect("auto-resizing histogram");
            *self = SojournHist::Dense(Box::new(h));
        }
    }

    /// The sparse list's heap buffer, which recording a delay other than
    /// 0 reads (`None` for the dense form or no buffer yet).
    #[inline]
    fn buffer(&self) -> Option<*const u8> {
        match self {
            SojournHist::Sparse(_, v) if v.capacity() > 0 => Some(v.as_ptr() as *const u8),
            _ => None,
        }
    }

    /// Record `n` delays of 0, as `n` calls of [`SojournHist::record`]
    /// would.
    pub fn record_zeros(&mut self, n: u64) {
        match self {
            SojournHist::Sparse(zeros, _) if *zeros > 0 => *zeros += n,
            SojournHist::Sparse(zeros, v) if v.len() < SPARSE_MAX => *zeros = n,
            SojournHist::Sparse(..) => {
                let mut h = self.histogram();
                h.record_n(0, n).expect("auto-resizing histogram");
                *self = SojournHist::Dense(Box::new(h));
            }
            SojournHist::Dense(h) => h.record_n(0, n).expect("auto-resizing histogram"),
        }
    }

    /// The distribution as a histogram (a copy for the sparse form).
    pub fn histogram(&self) -> Histogram<u64> {
        match self {
            SojournHist::Sparse(zeros, v) => {
                let mut h = empty_histogram();
                if *zeros > 0 {
                    h.record_n(0, *zeros).expect("auto-resizing histogram");
                }
                for &(k, n) in v {
                    h.record_n(k, n).expect("auto-resizing histogram");
                }
                h
            }
            SojournHist::Dense(h) => (**h).clone(),
        }
    }

    /// The `q`-quantile, as [`Histogram::value_at_quantile`] of the dense
    /// histogram gives it (the highest value of the bucket where the
    /// cumulative count reaches ⌈q·n⌉, at least 1), without building one.
    pub fn quantile(&self, q: f64) -> u64 {
        self.quantiles([q])[0]
    }

    /// [`SojournHist::quantile`] of each of `qs`, sorting a sparse
    /// histogram once for all of them.
    pub fn quantiles<const N: usize>(&self, qs: [f64; N]) -> [u64; N] {
        match self {
            SojournHist::Dense(h) => qs.map(|q| h.value_at_quantile(q)),
            SojournHist::Sparse(zeros, list) => {
                let mut v = Vec::with_capacity(list.len() + 1);
                v.extend_from_slice(list);
                if *zeros > 0 {
                    v.push((0, *zeros));
                }
                v.sort_unstable();
                let total: u64 = v.iter().map(|e| e.1).sum();
                qs.map(|q| {
                    let q = q.min(1.0);
                    let target = ((q * total as f64).ceil() as u64).max(1);
                    let mut cum = 0;
                    for &(k, n) in &v {
                        cum += n;
                        if cum >= target {
                            return if q == 0.0 {
                                k
                            } else {
                                layout().highest_equivalent(k)
                            };
                        }
                    }
                    0
                })
            }
        }
    }

    /// The largest value recorded (highest value of its bucket), as
    /// [`Histogram::max`]; 0 when empty.
    pub fn max(&self) -> u64 {
        match self {
            SojournHist::Dense(h) => h.max(),
            SojournHist::Sparse(zeros, v) => v
                .iter()
                .map(|e| e.0)
                .chain((*zeros > 0).then_some(0))
                .max()
                .map_or(0, |k| layout().highest_equivalent(k)),
        }
    }

    /// Heap bytes held (for memory tests).
    pub fn heap_bytes(&self) -> usize {
        match self {
            SojournHist::Sparse(_, v) => v.capacity() * std::mem::size_of::<(u64, u64)>(),
            SojournHist::Dense(h) => h.distinct_values() * std::mem::size_of::<u64>(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `record_zeros(n)` leaves a histogram as `n` calls of `record(0)`
    /// do — the same form, quantiles, maximum and counts — from a sparse
    /// list short of full, full, with zeros or without, and a dense one.
    #[test]
    fn zeros_recorded_at_once_match_zeros_one_by_one() {
        for distinct in [0, 1, SPARSE_MAX - 1, SPARSE_MAX, SPARSE_MAX + 3] {
            for zero_first in [false, true] {
                for n in [1u64, 2, 1000] {
                    let mut h = SojournHist::default();
                    if zero_first {
                        h.record(0);
                    }
                    for j in 0..distinct {
                        h.record(5000 + 1000 * j as u64);
                    }
                    let (mut a, mut b) = (h.clone(), h);
                    a.record_zeros(n);
                    for _ in 0..n {
                        b.record(0);
                    }
                    let what = format!("{distinct} distinct, zero first {zero_first}, n {n}");
                    assert_eq!(
                        matches!(a, SojournHist::Dense(_)),
                        matches!(b, SojournHist::Dense(_)),
                        "{what}"
                    );
                    assert_eq!(a.histogram(), b.histogram(), "{what}");
                    for q in [0.0, 0.3, 0.5, 0.99, 1.0] {
                        assert_eq!(a.quantile(q), b.quantile(q), "{what}, q {q}");
                    }
                    assert_eq!(a.max(), b.max(), "{what}");
                }
            }
        }
    }

    /// The sparse form (zeros counted apart, up to `SPARSE_MAX` distinct
    /// values) answers as the dense histogram of the same values, and
    /// turns dense at the 49th distinct value, zero included, whether zero
    /// comes first, late or last.
    #[test]
    fn sparse_delays_with_zeros_apart_match_the_dense_histogram() {
        let mut x = 99u64;
        for zero_at in [0usize, 10, 47, 48, 60, usize::MAX] {
            let (mut s, mut dense) = (SojournHist::default(), empty_histogram());
            let mut distinct = std::collections::BTreeSet::new();
            for i in 0..3000usize {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // a new value each 50 draws (zero as the `zero_at`th),
                // repeats of those seen between
                let b = i / 50;
                let value = |j: usize| {
                    if j == zero_at {
                        0
                    } else {
                        (j as u64 + 1) * 1000 + 7
                    }
                };
                let d = if i % 50 == 0 {
                    value(b)
                } else {
                    value((x >> 20) as usize % (b + 1))
                };
                s.record(d);
                dense.record(d).unwrap();
                distinct.insert(layout().lowest_equivalent(d));
                assert_eq!(
                    matches!(s, SojournHist::Dense(_)),
                    distinct.len() > SPARSE_MAX,
                    "zero at {zero_at}, draw {i}"
                );
                for q in [0.0, 0.1, 0.5, 0.9, 0.99, 1.0] {
                    assert_eq!(s.quantile(q), dense.value_at_quantile(q), "q {q}");
                }
                assert_eq!(s.max(), dense.max());
                assert_eq!(s.histogram(), dense);
            }
        }
    }
}
