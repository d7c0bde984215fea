//! A simplex link: an egress [`Port`] (queue discipline + statistics), a
//! transmitter that serialises one packet at a time at `rate` (delay =
//! size·8/rate), and a propagation "pipe" of constant delay. Because the
//! delay is constant, packets leave the pipe in the order they entered, so the
//! pipe is a FIFO and needs at most one pending arrival event (htsim's Pipe).
//! A duplex link is two simplex links.

use crate::aqm::{DropCause, DropTail, QdCtx, QueueCounters, QueueDisc};
use crate::engine::{RngStream, Time};
use crate::net::classifier::Classifier;
use crate::net::packet::{Class, NodeId, Packet};
use hdrhistogram::Histogram;
use std::collections::VecDeque;

/// A port's queue discipline: DropTail (every access link of a generated
/// topology that names no `access_queue`) held in the port itself, any other
/// behind a pointer. Both run the discipline's own code; holding DropTail
/// inline spares a port event the load of a separate heap object, which
/// with 10⁵ hosts is a cache miss. Read as `dyn QueueDisc` through `Deref`.
///
/// `#[repr(C, u8)]`: the tag first, then DropTail's own fields in their
/// declared order, so that the port's idle-send test (an empty DropTail
/// that accepts the packet) reads the record's bytes up to
/// [`Disc::HOT_BYTES`] only.
#[repr(C, u8)]
pub enum Disc {
    DropTail(DropTail),
    Boxed(Box<dyn QueueDisc>),
}

impl From<Box<dyn QueueDisc>> for Disc {
    fn from(b: Box<dyn QueueDisc>) -> Self {
        Disc::Boxed(b)
    }
}

impl std::ops::Deref for Disc {
    type Target = dyn QueueDisc;
    fn deref(&self) -> &(dyn QueueDisc + 'static) {
        match self {
            Disc::DropTail(d) => d,
            Disc::Boxed(b) => &**b,
        }
    }
}

impl std::ops::DerefMut for Disc {
    fn deref_mut(&mut self) -> &mut (dyn QueueDisc + 'static) {
        match self {
            Disc::DropTail(d) => d,
            Disc::Boxed(b) => &mut **b,
        }
    }
}

impl Disc {
    /// Bytes from a `Disc`'s start that [`Port::passes`] reads: the tag,
    /// then DropTail's limit and count (`tests::idle_test_reads_the_discs_first_bytes`).
    pub const HOT_BYTES: usize = 8 + DropTail::HOT_BYTES;

    // The calls a packet makes, dispatched statically for the inline case.
    #[inline]
    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdCtx) -> Result<(), DropCause> {
        match self {
            Disc::DropTail(d) => d.enqueue(pkt, ctx),
            Disc::Boxed(b) => b.enqueue(pkt, ctx),
        }
    }
    #[inline]
    fn dequeue(&mut self, ctx: &mut QdCtx) -> Option<Packet> {
        match self {
            Disc::DropTail(d) => d.dequeue(ctx),
            Disc::Boxed(b) => b.dequeue(ctx),
        }
    }
    /// Packets queued.
    #[inline]
    pub fn len_pkts(&self) -> usize {
        match self {
            Disc::DropTail(d) => d.len_pkts(),
            Disc::Boxed(b) => b.len_pkts(),
        }
    }
    /// Bytes queued.
    #[inline]
    pub fn len_bytes(&self) -> u64 {
        match self {
            Disc::DropTail(d) => d.len_bytes(),
            Disc::Boxed(b) => b.len_bytes(),
        }
    }
}

/// An egress queue with the statistics every discipline shares.
///
/// `#[repr(C)]`, laid out for a packet that passes an idle link's empty
/// DropTail queue ([`Port::passes`], [`Port::count_pass`]; with 10⁵ hosts
/// nearly every packet of an access link): what that touches (classifier,
/// last sojourn, the count of such packets, the discipline's tag, limit and
/// count) lies in the [`Port::PASS_END`] bytes from the start, so with the
/// transmitter's fields before it an idle send touches three cache lines
/// of its link's record (seven before the count of passes, four before the
/// packet went straight into its delay lane). Those packets are counted once
/// (`passes`) and added to the queue and class counters and to the delay
/// histogram (as delays of 0) when these are read ([`Port::counters`],
/// [`Port::by_class`], [`Port::sojourn`]) or folded in ([`Port::settle`]).
/// A queued packet also touches the statistics, the discipline's buffers
/// and the queue-length integral after them; the random stream (whose
/// address only is passed to the discipline; only RED-like disciplines
/// draw from it) is last. See `SimLink`'s layout.
#[repr(C)]
pub struct Port {
    /// Edge classifier tagging the packet's class (`Ext::Rio`) before `disc`
    /// sees the packet.
    pub classifier: Option<Box<Classifier>>,
    /// Sojourn time of the last packet dequeued.
    pub last_sojourn: Time,
    /// Packets of the default class that passed the empty queue at once
    /// ([`Port::count_pass`]) and are not yet in `counters`, `by_class`
    /// and `sojourn`.
    passes: u64,
    pub disc: Disc,
    /// Per-packet queueing delay (enqueue → dequeue), nanoseconds.
    sojourn: SojournHist,
    /// Arrivals, drops and marks per packet class (indexed by `Class as usize`).
    by_class: [ClassCounters; 3],
    counters: QueueCounters,
    /// ∫ len_pkts dt, in packet·ns, up to `last_change`.
    area_pkts: f64,
    area_bytes: f64,
    /// The integral's end: the time of the last change of the queue's
    /// length or earlier (a packet passing an empty queue at once leaves
    /// its length at 0 and the integral as it was: `Port::count_pass`).
    last_change: Time,
    scratch: Vec<(Packet, DropCause)>,
    sojourn_sum_ns: u128,
    pub rng: RngStream,
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

impl Port {
    /// Bytes from a port's start that [`Port::passes`] and
    /// [`Port::count_pass`] touch.
    pub const PASS_END: usize = std::mem::offset_of!(Port, disc) + Disc::HOT_BYTES;
    /// Bytes from a port's start that a packet queued behind a busy
    /// transmitter and its dequeue touch besides the heap buffers:
    /// everything but the random stream.
    pub const QUEUE_END: usize = std::mem::offset_of!(Port, rng);

    pub fn new(disc: impl Into<Disc>, rng: RngStream) -> Self {
        Port {
            disc: disc.into(),
            classifier: None,
            rng,
            counters: QueueCounters::default(),
            area_pkts: 0.0,
            area_bytes: 0.0,
            last_change: 0,
            sojourn: SojournHist::default(),
            sojourn_sum_ns: 0,
            last_sojourn: 0,
            passes: 0,
            scratch: Vec::new(),
            by_class: [ClassCounters::default(); 3],
        }
    }

    #[inline]
    fn integrate(&mut self, now: Time) {
        let dt = (now - self.last_change) as f64;
        if dt > 0.0 {
            self.area_pkts += self.disc.len_pkts() as f64 * dt;
            self.area_bytes += self.disc.len_bytes() as f64 * dt;
            self.last_change = now;
        }
    }

    /// Whether `pkt`, offered to this port while its link's transmitter is
    /// idle, would be queued and dequeued at once with nothing else
    /// changing: the discipline is an empty DropTail queue that accepts
    /// it and no classifier tags it. The caller then hands the packet to
    /// the transmitter itself after [`Port::count_pass`], instead of
    /// writing it into the queue and reading it back.
    #[inline]
    pub fn passes(&self, pkt: &Packet) -> bool {
        self.classifier.is_none()
            && matches!(&self.disc, Disc::DropTail(d) if d.is_empty() && d.accepts_alone(pkt.size))
    }

    /// Count a packet that [`Port::passes`] as [`Port::enqueue`] and
    /// [`Port::dequeue`] at the same instant would: one arrival (of its
    /// class), enqueued and dequeued, a sojourn of 0, its `enq_time`
    /// stamped. The queue's length stays 0, so the length integral gains
    /// 0·dt: `integrate` is not called, and its end (`last_change`) stays
    /// where it was — exact, as the next change of the length integrates
    /// from there, over an interval where the length was 0. DropTail
    /// marks and drops nothing on the way (no `scratch` entries). A packet
    /// of the default class is only counted in `passes` (see [`Port`]).
    #[inline]
    pub fn count_pass(&mut self, pkt: &mut Packet, now: Time) {
        pkt.enq_time = now;
        self.last_sojourn = 0;
        match pkt.ext.class() {
            Class::Default => self.passes += 1,
            c => self.add_passed(c, 1),
        }
    }

    /// Add `n` packets of class `c` that passed the empty queue at once to
    /// the queue and class counters and the delay histogram.
    fn add_passed(&mut self, c: Class, n: u64) {
        count_passed(&mut self.counters, n);
        self.by_class[c as usize].arrivals += n;
        self.sojourn.record_zeros(n);
    }

    /// Add the packets counted in `passes` to the queue and class
    /// counters and the delay histogram (reads then borrow the histogram
    /// instead of copying it). No effect on any figure read.
    pub fn settle(&mut self) {
        let n = std::mem::take(&mut self.passes);
        if n > 0 {
            self.add_passed(Class::Default, n);
        }
    }

    /// The delay histogram has the dense form (for the scale benchmark).
    pub fn dense_histogram(&self) -> bool {
        matches!(self.sojourn, SojournHist::Dense(_))
    }

    /// Packets offered, queued, dequeued, dropped and marked.
    pub fn counters(&self) -> QueueCounters {
        let mut c = self.counters.clone();
        count_passed(&mut c, self.passes);
        c
    }

    /// Arrivals, drops and marks per packet class (indexed by
    /// `Class as usize`).
    pub fn by_class(&self) -> [ClassCounters; 3] {
        let mut b = self.by_class;
        b[Class::Default as usize].arrivals += self.passes;
        b
    }

    /// The distribution of per-packet queueing delays (enqueue → dequeue),
    /// nanoseconds.
    pub fn sojourn(&self) -> std::borrow::Cow<'_, SojournHist> {
        if self.passes == 0 {
            std::borrow::Cow::Borrowed(&self.sojourn)
        } else {
            let mut h = self.sojourn.clone();
            h.record_zeros(self.passes);
            std::borrow::Cow::Owned(h)
        }
    }

    /// Offer a packet; dropped packets (the arrival or others) are appended
    /// to `drops`.
    #[inline]
    pub fn enqueue(&mut self, mut pkt: Packet, now: Time, drops: &mut Vec<Packet>) {
        self.integrate(now);
        pkt.enq_time = now;
        if let Some(c) = self.classifier.as_mut() {
            c.tag(&mut pkt, now);
        }
        let mut ctx = QdCtx {
            now,
            rng: &mut self.rng,
            dropped: &mut self.scratch,
            marked: 0,
        };
        let class = pkt.ext.class() as usize;
        let r = self.disc.enqueue(pkt, &mut ctx);
        self.counters.arrivals += 1;
        self.counters.marked += ctx.marked as u64;
        let c = &mut self.by_class[class];
        c.arrivals += 1;
        c.marked += ctx.marked as u64;
        match r {
            Ok(()) => {
                self.counters.enqueued += 1;
                self.sojourn.prefetch();
            }
            Err(cause) => {
                self.counters.count_drop(cause);
                c.dropped += 1;
                drops.push(pkt);
            }
        }
        self.flush_drops(drops);
    }

    /// Take the next packet to transmit.
    #[inline]
    pub fn dequeue(&mut self, now: Time, drops: &mut Vec<Packet>) -> Option<Packet> {
        // An empty DropTail queue gives nothing and changes nothing (its
        // length stays 0: see `count_pass` on the integral), so it is asked
        // without touching its buffers or the integral.
        if let Disc::DropTail(d) = &self.disc {
            if d.is_empty() {
                return None;
            }
        }
        self.integrate(now);
        let mut ctx = QdCtx {
            now,
            rng: &mut self.rng,
            dropped: &mut self.scratch,
            marked: 0,
        };
        let p = self.disc.dequeue(&mut ctx);
        self.counters.marked += ctx.marked as u64;
        if let Some(p) = &p {
            self.by_class[p.ext.class() as usize].marked += ctx.marked as u64;
        }
        self.flush_drops(drops);
        if let Some(p) = &p {
            self.counters.dequeued += 1;
            let d = now - p.enq_time;
            self.last_sojourn = d;
            self.sojourn_sum_ns += d as u128;
            self.sojourn.record(d);
        }
        p
    }

    /// Move the discipline's drops (other than the arrival) to `drops`. Most
    /// calls find none: that test stays inline, the loop does not.
    #[inline]
    fn flush_drops(&mut self, drops: &mut Vec<Packet>) {
        if !self.scratch.is_empty() {
            self.flush_drops_slow(drops);
        }
    }

    #[inline(never)]
    fn flush_drops_slow(&mut self, drops: &mut Vec<Packet>) {
        for (p, c) in self.scratch.drain(..) {
            self.counters.count_drop(c);
            self.by_class[p.ext.class() as usize].dropped += 1;
            drops.push(p);
        }
    }

    /// Time-averaged queue length in packets over [0, now] (`now` not
    /// before the last queue change). Reading it changes nothing, so a
    /// measurement snapshot taken mid-run leaves the run's own figures
    /// as they would be without it.
    pub fn mean_len_pkts(&self, now: Time) -> f64 {
        let (area, _) = self.areas(now);
        if now == 0 {
            0.0
        } else {
            area / now as f64
        }
    }

    /// Time-averaged queue length in bytes over [0, now].
    pub fn mean_len_bytes(&self, now: Time) -> f64 {
        let (_, area) = self.areas(now);
        if now == 0 {
            0.0
        } else {
            area / now as f64
        }
    }

    /// (packets, bytes) × nanoseconds of queue integrated over [0, now],
    /// as [`Port::integrate`] would leave them at `now`.
    fn areas(&self, now: Time) -> (f64, f64) {
        let dt = now.saturating_sub(self.last_change) as f64;
        if dt > 0.0 {
            (
                self.area_pkts + self.disc.len_pkts() as f64 * dt,
                self.area_bytes + self.disc.len_bytes() as f64 * dt,
            )
        } else {
            (self.area_pkts, self.area_bytes)
        }
    }

    /// Heap bytes of this port's delay histogram.
    pub fn hist_bytes(&self) -> usize {
        self.sojourn.heap_bytes()
    }

    /// Mean per-packet queueing delay in nanoseconds (exact, not binned).
    pub fn mean_sojourn_ns(&self) -> f64 {
        let dequeued = self.counters.dequeued + self.passes;
        if dequeued == 0 {
            0.0
        } else {
            self.sojourn_sum_ns as f64 / dequeued as f64
        }
    }
}

/// Count `n` packets that passed an empty queue at once: each an
/// arrival, enqueued and dequeued.
fn count_passed(c: &mut QueueCounters, n: u64) {
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

    /// Prefetch the sparse list's buffer, which recording a delay other
    /// than 0 reads (a hint, with no effect on results): with 10⁵ hosts
    /// it is a cold line, and the port's `enqueue` asks for it one
    /// serialisation time or more before the packet's dequeue records its
    /// delay.
    #[inline]
    pub fn prefetch(&self) {
        if let SojournHist::Sparse(_, v) = self {
            if v.capacity() > 0 {
                crate::engine::prefetch_addr(v.as_ptr() as *const u8);
            }
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
        match self {
            SojournHist::Dense(h) => h.value_at_quantile(q),
            SojournHist::Sparse(zeros, list) => {
                let mut v = Vec::with_capacity(list.len() + 1);
                v.extend_from_slice(list);
                if *zeros > 0 {
                    v.push((0, *zeros));
                }
                v.sort_unstable();
                let total: u64 = v.iter().map(|e| e.1).sum();
                let q = q.min(1.0);
                let target = ((q * total as f64).ceil() as u64).max(1);
                let mut cum = 0;
                for (k, n) in v {
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

/// What a link's transmitter is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxState {
    Idle,
    /// Serialising a packet that is already in its delay lane.
    InLane,
    /// Serialising the packet held in `Link::tx`.
    Held,
}

/// One direction of a link.
///
/// `#[repr(C)]`, laid out with its holder `SimLink` hot-first: the far
/// end, loss and delay that an arrival reads, then what the transmitter
/// and a packet passing the port at once touch, the rest of the port, the
/// pipe and the transmitter's packet (read by links without a delay lane),
/// then the cold fields (losses, name, loss stream), which no packet event
/// reads.
#[repr(C)]
pub struct Link {
    pub to: NodeId,
    pub from: NodeId,
    /// Independent random loss probability applied to packets on this link.
    pub loss: f64,
    pub delay: Time,
    pub rate_bps: u64,
    // statistics
    pub busy_ns: u64,
    pub tx_bytes: u64,
    pub tx_pkts: u64,
    pub tx_state: TxState,
    /// The size in bytes of the packet being serialised (counted in
    /// `tx_bytes` when it ends).
    pub tx_size: u32,
    pub port: Port,
    /// Packets propagating: (arrival time at `to`, packet).
    pub pipe: VecDeque<(Time, Packet)>,
    /// The packet being serialised, on a link whose packets do not enter
    /// their delay lane when their serialisation starts (a link with its
    /// own pipe, a cut link, or any link while a packet tap is set); see
    /// `Lp::transmit`.
    pub tx: Option<Packet>,
    pub lost: u64,
    /// Whether queue time series are recorded for this link's port.
    pub monitored: bool,
    pub name: String,
    pub loss_rng: RngStream,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::{DropTailConfig, Limit};

    /// `Port::passes` reads the tag, DropTail's limit and its count only:
    /// they lie in the disc's first `Disc::HOT_BYTES`, which lie in the
    /// port's first `Port::PASS_END`, with what `count_pass` writes of a
    /// packet of the default class; the statistics lie after them.
    #[test]
    fn idle_test_reads_the_discs_first_bytes() {
        let port = Port::new(
            Disc::DropTail(DropTail::new(&DropTailConfig::default())),
            RngStream::new(1, 1),
        );
        let Disc::DropTail(d) = &port.disc else {
            unreachable!()
        };
        let disc = &port.disc as *const Disc as usize;
        let inner = d as *const DropTail as usize;
        assert_eq!(inner - disc, 8, "tag, then DropTail's first field");
        assert!(inner - disc + DropTail::HOT_BYTES <= Disc::HOT_BYTES);
        assert_eq!(
            Port::PASS_END,
            std::mem::offset_of!(Port, disc) + Disc::HOT_BYTES
        );
        for o in [
            std::mem::offset_of!(Port, classifier),
            std::mem::offset_of!(Port, last_sojourn),
            std::mem::offset_of!(Port, passes),
        ] {
            assert!(o < Port::PASS_END);
        }
        for o in [
            std::mem::offset_of!(Port, sojourn),
            std::mem::offset_of!(Port, by_class),
            std::mem::offset_of!(Port, counters),
            std::mem::offset_of!(Port, area_pkts),
            std::mem::offset_of!(Port, last_change),
            std::mem::offset_of!(Port, scratch),
            std::mem::offset_of!(Port, rng),
        ] {
            assert!(o >= Port::PASS_END);
        }
    }

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

    fn snapshot(p: &Port, now: Time) -> String {
        format!(
            "{:?} {:?} {} {} {} {} {} {} {} {} {}",
            p.counters(),
            p.by_class(),
            p.last_sojourn,
            p.mean_len_pkts(now).to_bits(),
            p.mean_len_bytes(now).to_bits(),
            p.mean_sojourn_ns().to_bits(),
            p.sojourn().quantile(0.5),
            p.sojourn().quantile(0.99),
            p.sojourn().max(),
            p.disc.len_pkts(),
            p.disc.len_bytes(),
        )
    }

    /// A port whose packets pass an idle link's empty queue
    /// (`passes` + `count_pass`, the inline DropTail) counts, integrates
    /// and records delays exactly as one that queues and dequeues each of
    /// them (the same discipline behind a pointer, which never passes),
    /// over random sends of packets of every class and transmission ends
    /// with a byte limit that refuses the largest packets even at an empty
    /// queue, whether or not the passes are folded in now and then
    /// (`settle`).
    #[test]
    fn passing_an_idle_empty_queue_changes_no_statistic() {
        let cfg = DropTailConfig {
            limit: Limit::Bytes(3000),
        };
        let mut fast = Port::new(Disc::DropTail(DropTail::new(&cfg)), RngStream::new(1, 1));
        let mut slow = Port::new(
            Disc::Boxed(Box::new(DropTail::new(&cfg))),
            RngStream::new(1, 1),
        );
        // (port, packet being sent) per model
        let mut tx: [Option<Packet>; 2] = [None, None];
        let (mut drops, mut now, mut x, mut passed) = (Vec::new(), 0, 7u64, 0);
        for uid in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            now += (x >> 40) % 5000;
            let send = (x >> 20) % 2 == 0;
            for (i, port) in [&mut fast, &mut slow].into_iter().enumerate() {
                if send {
                    let class = [Class::Default, Class::In, Class::Out][((x >> 14) % 3) as usize];
                    let mut p = Packet {
                        uid,
                        size: [40, 1500, 3500][((x >> 10) % 3) as usize],
                        ext: crate::net::ext::Ext::Rio(class),
                        ..Default::default()
                    };
                    if tx[i].is_none() && port.passes(&p) {
                        assert_eq!(i, 0, "a boxed discipline never passes");
                        port.count_pass(&mut p, now);
                        assert_eq!(p.enq_time, now);
                        tx[i] = Some(p);
                        passed += 1;
                    } else {
                        port.enqueue(p, now, &mut drops);
                        if tx[i].is_none() {
                            tx[i] = port.dequeue(now, &mut drops);
                        }
                    }
                } else if tx[i].is_some() {
                    // the transmission ends; the next one starts
                    tx[i] = port.dequeue(now, &mut drops);
                }
            }
            assert_eq!(tx[0].map(|p| p.uid), tx[1].map(|p| p.uid));
            assert_eq!(snapshot(&fast, now), snapshot(&slow, now));
            assert_eq!(snapshot(&fast, now + 777), snapshot(&slow, now + 777));
            if uid % 1000 == 999 {
                fast.settle();
                assert_eq!(fast.passes, 0);
                assert_eq!(snapshot(&fast, now), snapshot(&slow, now));
            }
        }
        let dropped = fast.counters().dropped_overflow;
        assert!(passed > 1000 && dropped > 100, "{passed} {dropped}");
        assert_eq!(drops.len() as u64, 2 * fast.counters().dropped());
    }
}
