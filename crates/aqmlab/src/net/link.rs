//! A simplex link: an egress [`Port`] (queue discipline + statistics), a
//! transmitter that serialises one packet at a time at `rate` (delay =
//! size·8/rate), and a propagation "pipe" of constant delay. Because the
//! delay is constant, packets leave the pipe in the order they entered, so the
//! pipe is a FIFO and needs at most one pending arrival event (htsim's Pipe).
//! A duplex link is two simplex links.

use crate::aqm::{DropCause, DropTail, QdCtx, QueueDisc};
use crate::engine::{RngStream, Time};
use crate::net::classifier::Classifier;
use crate::net::event_log::{LogEvent, LogReason, PortLog};
use crate::net::link_model::Varying;
use crate::net::packet::{Ecn, NodeId, Packet};
use std::collections::VecDeque;

pub use super::port_stats::{ClassCounters, PortStats, SojournHist};

/// A port's queue discipline: DropTail (every access link of a generated
/// topology that names no `access_queue`) held in the port itself, any other
/// behind a pointer. Both run the discipline's own code; holding DropTail
/// inline spares a port event the load of a separate heap object, which
/// with 10⁵ hosts is a cache miss. Read as `dyn QueueDisc` through `Deref`.
///
/// `#[repr(C, u8)]`: the tag first, then DropTail's own fields in their
/// declared order, so that the port's idle-send test (an empty DropTail
/// that accepts the packet: `Port::may_bypass`) reads the record's bytes up to
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
    /// Bytes from a `Disc`'s start that [`Port::may_bypass`] reads: the tag,
    /// then DropTail's limit and count (checked in `sim/hints.rs`).
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

/// An egress queue: an optional classifier, the discipline and the
/// statistics every discipline shares ([`PortStats`], its only writer and
/// reader).
///
/// `#[repr(C)]`, hot fields first (see `sim/hints.rs`): what a
/// packet bypassing an idle link's empty DropTail queue touches (the
/// classifier's pointer, the statistics' first fields, the discipline's
/// tag, limit and count) lies at the two places `sim/hints.rs`
/// names; a queued packet also touches the rest of the statistics and
/// the discipline's buffers; the random stream (whose address only is
/// passed to the discipline; only RED-like disciplines draw from it) is
/// last. `align(32)` rounds its size so that the pipe's 32-byte header
/// after it in [`Link`] lies in one cache line.
#[repr(C, align(32))]
pub struct Port {
    /// What sees the port's packets besides the discipline: the RIO-PS edge
    /// classifier and the per-packet event log. `None` on most ports; an
    /// idle DropTail port is bypassed only then.
    pub edge: Option<Box<Edge>>,
    pub stats: PortStats,
    pub disc: Disc,
    scratch: Vec<(Packet, DropCause)>,
    pub rng: RngStream,
}

/// A port's optional parts (see [`Port::edge`]).
#[derive(Default)]
pub struct Edge {
    /// Edge classifier tagging the packet's class (`Ext::Rio`) before the
    /// discipline sees the packet.
    pub classifier: Option<Classifier>,
    /// The per-packet event log (`net/event_log.rs`).
    pub log: Option<PortLog>,
    /// The port feeds a trace-driven link: a departure's delay is
    /// recorded when its link has found the opportunity that carries it
    /// ([`Port::record_traced_departure`]), not at the dequeue.
    pub traced: bool,
    /// Marks the discipline made on the packet dequeued last (traced).
    pending_marks: u32,
}

impl Port {
    pub fn new(disc: impl Into<Disc>, rng: RngStream) -> Self {
        Port {
            edge: None,
            stats: PortStats::default(),
            disc: disc.into(),
            scratch: Vec::new(),
            rng,
        }
    }

    /// The edge classifier, if any.
    pub fn classifier(&self) -> Option<&Classifier> {
        self.edge.as_deref().and_then(|e| e.classifier.as_ref())
    }

    /// Set (or remove) the edge classifier. Removing it from a port without
    /// optional parts allocates nothing (the build calls this for every port).
    pub fn set_classifier(&mut self, c: Option<Classifier>) {
        if c.is_none() && self.edge.is_none() {
            return;
        }
        self.edge.get_or_insert_with(Default::default).classifier = c;
        self.tidy_edge();
    }

    /// The event log, if any.
    pub fn log(&self) -> Option<&PortLog> {
        self.edge.as_deref().and_then(|e| e.log.as_ref())
    }

    /// Set (or remove) the event log.
    pub fn set_log(&mut self, l: Option<PortLog>) {
        if l.is_none() && self.edge.is_none() {
            return;
        }
        self.edge.get_or_insert_with(Default::default).log = l;
        self.tidy_edge();
    }

    /// Mark the port as feeding a trace-driven link (see [`Edge::traced`]).
    pub fn set_traced(&mut self) {
        self.edge.get_or_insert_with(Default::default).traced = true;
    }

    fn tidy_edge(&mut self) {
        if matches!(self.edge.as_deref(), Some(e) if e.classifier.is_none() && e.log.is_none() && !e.traced)
        {
            self.edge = None;
        }
    }

    #[inline]
    fn integrate(&mut self, now: Time) {
        let (n, b) = (self.disc.len_pkts(), self.disc.len_bytes());
        self.stats.integrate(now, n, b);
    }

    /// Whether `pkt`, offered to this port while its link's transmitter is
    /// idle, would be queued and dequeued at once with nothing else
    /// changing: the discipline is an empty DropTail queue that accepts
    /// it and no classifier tags it. The caller then hands the packet to
    /// the transmitter itself after [`Port::bypass`], instead of writing
    /// it into the queue and reading it back.
    #[inline]
    pub fn may_bypass(&self, pkt: &Packet) -> bool {
        self.edge.is_none()
            && matches!(&self.disc, Disc::DropTail(d) if d.is_empty() && d.accepts_alone(pkt.size))
    }

    /// Count a packet that [`Port::may_bypass`] as [`Port::enqueue`] and
    /// [`Port::dequeue`] at the same instant would: one arrival, enqueued
    /// and dequeued, a delay of 0 ([`PortStats::record_bypass`]), its
    /// `enq_time` stamped. DropTail marks and drops nothing on the way.
    #[inline]
    pub fn bypass(&mut self, pkt: &mut Packet, now: Time) {
        pkt.enq_time = now;
        self.stats.record_bypass(pkt.ext.class());
    }

    /// Offer a packet; dropped packets (the arrival or others) are appended
    /// to `drops`.
    #[inline]
    pub fn enqueue(&mut self, mut pkt: Packet, now: Time, drops: &mut Vec<Packet>) {
        self.integrate(now);
        pkt.enq_time = now;
        let logged = match self.edge.as_deref_mut() {
            Some(e) => {
                if let Some(c) = e.classifier.as_mut() {
                    c.tag(&mut pkt, now);
                }
                e.log.is_some()
            }
            None => false,
        };
        let mut ctx = QdCtx {
            now,
            rng: &mut self.rng,
            dropped: &mut self.scratch,
            marked: 0,
        };
        let class = pkt.ext.class();
        let r = self.disc.enqueue(pkt, &mut ctx);
        let marked = ctx.marked;
        self.stats.record_arrival(class, marked as u64, r);
        if logged {
            self.log_arrival(now, &pkt, r, marked);
        }
        if r.is_err() {
            drops.push(pkt);
        }
        self.flush_drops(drops, now);
    }

    /// Log an arrival's enqueue or drop and the marks made on it.
    #[inline(never)]
    fn log_arrival(&mut self, now: Time, pkt: &Packet, r: Result<(), DropCause>, marked: u32) {
        let q = (self.disc.len_pkts(), self.disc.len_bytes());
        let Some(log) = self.edge.as_deref_mut().and_then(|e| e.log.as_mut()) else {
            return;
        };
        match r {
            Ok(()) => log.record(now, pkt, LogEvent::Enqueue, LogReason::None, 0, q.0, q.1),
            Err(c) => log.record_drop(now, pkt, c, true, q),
        }
        let mut m = *pkt;
        m.ecn = Ecn::Ce;
        for _ in 0..marked {
            log.record(now, &m, LogEvent::Mark, LogReason::Disc, 0, q.0, q.1);
        }
    }

    /// Take the next packet to transmit.
    #[inline]
    pub fn dequeue(&mut self, now: Time, drops: &mut Vec<Packet>) -> Option<Packet> {
        // An empty DropTail queue gives nothing and changes nothing (its
        // length stays 0), so it is asked without touching its buffers or
        // the integral.
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
        let marked = ctx.marked;
        (self.stats).record_dequeue_marks(p.as_ref().map(|p| p.ext.class()), marked as u64);
        self.flush_drops(drops, now);
        if let Some(p) = &p {
            if self.edge.is_none() {
                self.stats.record_departure(now - p.enq_time);
            } else {
                // a copy, made only when the port logs: lending `p` out
                // would keep the packet from being built in the caller's slot
                self.depart_edge(now, *p, marked);
            }
        }
        p
    }

    /// A departure from a port with optional parts: recorded now, or, on a
    /// traced link, once the link knows when the packet leaves.
    #[inline(never)]
    fn depart_edge(&mut self, now: Time, p: Packet, marked: u32) {
        if let Some(e) = self.edge.as_deref_mut().filter(|e| e.traced) {
            e.pending_marks = marked;
            return;
        }
        self.stats.record_departure(now - p.enq_time);
        self.log_departure(now, now - p.enq_time, p, marked);
    }

    /// The packet just dequeued from a traced port leaves its link at
    /// `left`: its delay is `left` less its arrival, Mahimahi's
    /// (`LinkQueue::record_departure`: departure time less arrival time),
    /// which includes the wait for the opportunity (the event log, whose
    /// records are in time order, logs the dequeue at `now`). A
    /// packet that never leaves (a `trace_once` link past its trace) counts
    /// the time it waited in the queue.
    pub fn record_traced_departure(&mut self, now: Time, left: Time, p: &Packet) {
        let marked = match self.edge.as_deref_mut() {
            Some(e) => std::mem::take(&mut e.pending_marks),
            None => 0,
        };
        let d = if left >= super::link_model::NEVER {
            now
        } else {
            left
        } - p.enq_time;
        self.stats.record_departure(d);
        // the event log keeps its records in time order: its sojourn is
        // the time in the queue, to the dequeue
        self.log_departure(now, now - p.enq_time, *p, marked);
    }

    /// Log a departure (its delay `sojourn`) and the marks made on it, if
    /// the port logs.
    #[inline(never)]
    fn log_departure(&mut self, now: Time, sojourn: Time, p: Packet, marked: u32) {
        let q = (self.disc.len_pkts(), self.disc.len_bytes());
        let Some(log) = self.edge.as_deref_mut().and_then(|e| e.log.as_mut()) else {
            return;
        };
        log.record(
            now,
            &p,
            LogEvent::Dequeue,
            LogReason::None,
            sojourn,
            q.0,
            q.1,
        );
        for _ in 0..marked {
            log.record(now, &p, LogEvent::Mark, LogReason::Disc, sojourn, q.0, q.1);
        }
    }

    /// Move the discipline's drops (other than the arrival) to `drops`. Most
    /// calls find none: that test stays inline, the loop does not.
    #[inline]
    fn flush_drops(&mut self, drops: &mut Vec<Packet>, now: Time) {
        if !self.scratch.is_empty() {
            self.flush_drops_slow(drops, now);
        }
    }

    #[inline(never)]
    fn flush_drops_slow(&mut self, drops: &mut Vec<Packet>, now: Time) {
        let q = (self.disc.len_pkts(), self.disc.len_bytes());
        let mut log = self.edge.as_deref_mut().and_then(|e| e.log.as_mut());
        for (p, c) in self.scratch.drain(..) {
            self.stats.record_drop(p.ext.class(), c);
            if let Some(l) = log.as_deref_mut() {
                l.record_drop(now, &p, c, false, q);
            }
            drops.push(p);
        }
    }

    /// When the discipline, having just given no packet while some are
    /// queued, lets the next one go ([`QueueDisc::wake_at`]); `None` for
    /// DropTail, an empty queue or a discipline that never holds back.
    #[inline]
    pub fn wake_at(&self) -> Option<Time> {
        match &self.disc {
            Disc::DropTail(_) => None,
            Disc::Boxed(b) if b.len_pkts() > 0 => b.wake_at(),
            Disc::Boxed(_) => None,
        }
    }

    /// The link went down: empty the queue (through
    /// [`QueueDisc::drain`]), every packet it held counted and logged as a
    /// [`DropCause::LinkDown`] drop and appended to `drops`.
    pub fn drain_down(&mut self, now: Time, drops: &mut Vec<Packet>) {
        self.integrate(now);
        let mut out = Vec::new();
        let mut ctx = QdCtx {
            now,
            rng: &mut self.rng,
            dropped: &mut self.scratch,
            marked: 0,
        };
        self.disc.drain(&mut ctx, &mut out);
        out.extend(self.scratch.drain(..).map(|(p, _)| p));
        for p in out {
            self.lose_on_down(now, p, drops);
        }
    }

    /// A packet of this port's link (queued, being serialised or
    /// propagating) lost because the link went down: counted and logged
    /// here, appended to `drops`.
    pub fn lose_on_down(&mut self, now: Time, p: Packet, drops: &mut Vec<Packet>) {
        self.stats.record_drop(p.ext.class(), DropCause::LinkDown);
        let q = (self.disc.len_pkts(), self.disc.len_bytes());
        if let Some(l) = self.edge.as_deref_mut().and_then(|e| e.log.as_mut()) {
            l.record_drop(now, &p, DropCause::LinkDown, false, q);
        }
        drops.push(p);
    }

    /// Time-averaged queue length in packets over [0, now] (`now` not
    /// before the last queue change). Reading it changes nothing.
    pub fn mean_len_pkts(&self, now: Time) -> f64 {
        let (area, _) = (self.stats).areas(now, self.disc.len_pkts(), self.disc.len_bytes());
        if now == 0 {
            0.0
        } else {
            area / now as f64
        }
    }

    /// Time-averaged queue length in bytes over [0, now].
    pub fn mean_len_bytes(&self, now: Time) -> f64 {
        let (_, area) = (self.stats).areas(now, self.disc.len_pkts(), self.disc.len_bytes());
        if now == 0 {
            0.0
        } else {
            area / now as f64
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
    /// Idle, with packets queued that the discipline holds back until the
    /// wake-up its `TxDone` event is scheduled for ([`Port::wake_at`]); that
    /// event sends nothing and counts nothing, it only asks again.
    Waiting,
    /// The link went down while serialising: the packet is lost, and the
    /// transmitter stays occupied until that serialisation would have
    /// ended (its `TxDone` event then frees it and counts nothing).
    Aborted,
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
    /// The constant rate; 0 on a link whose service varies (`varying`).
    pub rate_bps: u64,
    // statistics
    pub busy_ns: u64,
    pub tx_bytes: u64,
    pub tx_pkts: u64,
    pub tx_state: TxState,
    /// Arrival events still scheduled for packets the link lost when it
    /// went down (their times in `stale_at`); in the padding before
    /// `tx_size`, so an arrival tests it in a line it reads anyway.
    pub stale: u16,
    /// The size in bytes of the packet being serialised (counted in
    /// `tx_bytes` when it ends).
    pub tx_size: u32,
    pub port: Port,
    /// Packets propagating: (arrival time at `to`, packet).
    pub pipe: VecDeque<(Time, Packet)>,
    /// The packet being serialised, on a link whose packets do not enter
    /// their delay lane when their serialisation starts (a link with its
    /// own pipe, a cut link, or any link while a packet tap is set); see
    /// `LogicalProcess::transmit`.
    pub tx: Option<Packet>,
    pub lost: u64,
    /// Whether queue time series are recorded for this link's port.
    pub monitored: bool,
    pub name: String,
    pub loss_rng: RngStream,
    /// The service model of a link whose rate, delay or loss changes or
    /// that follows a trace (then `rate_bps == 0`); none on a constant link.
    pub varying: Option<Box<Varying>>,
    /// The times of the stale arrival events (see `stale`).
    pub stale_at: Vec<Time>,
}

impl Link {
    /// When packet `p`, starting at `now` on a link with a [`Varying`]
    /// model, has left the transmitter. On a trace link the port records
    /// its delay then (up to that time: [`Port::record_traced_departure`]).
    #[inline(never)]
    pub fn modelled_finish(&mut self, now: Time, p: &Packet) -> Time {
        let v = self.varying.as_mut().expect("rate 0: modelled");
        let left = v.finish(now, p.size, p.enq_time);
        if v.traced() {
            self.port.record_traced_departure(now, left, p);
        }
        left
    }

    /// The delay a packet leaving the transmitter at `now` propagates with.
    #[inline]
    pub fn delay_at(&self, now: Time) -> Time {
        match &self.varying {
            None => self.delay,
            Some(v) => v.delay_at(now),
        }
    }

    /// The loss probability a packet reaching the far end at `now` meets.
    #[inline]
    pub fn loss_at(&self, now: Time) -> f64 {
        match &self.varying {
            None => self.loss,
            Some(v) => v.loss_at(now),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::{DropTailConfig, Limit};
    use crate::net::packet::Class;

    fn snapshot(p: &Port, now: Time) -> String {
        format!(
            "{:?} {:?} {} {} {} {} {} {} {} {} {}",
            p.stats.counters(),
            p.stats.by_class(),
            p.stats.last_sojourn(),
            p.mean_len_pkts(now).to_bits(),
            p.mean_len_bytes(now).to_bits(),
            p.stats.mean_sojourn_ns().to_bits(),
            p.stats.sojourn().quantile(0.5),
            p.stats.sojourn().quantile(0.99),
            p.stats.sojourn().max(),
            p.disc.len_pkts(),
            p.disc.len_bytes(),
        )
    }

    /// A port whose packets pass an idle link's empty queue
    /// (`may_bypass` + `bypass`, the inline DropTail) counts, integrates
    /// and records delays exactly as one that queues and dequeues each of
    /// them (the same discipline behind a pointer, which never bypasses),
    /// over random sends of packets of every class and transmission ends
    /// with a byte limit that refuses the largest packets even at an empty
    /// queue, whether or not the bypassed packets are folded in now and
    /// then (`fold_bypassed`).
    #[test]
    fn bypassing_an_idle_empty_queue_changes_no_statistic() {
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
                    if tx[i].is_none() && port.may_bypass(&p) {
                        assert_eq!(i, 0, "a boxed discipline never bypasses");
                        port.bypass(&mut p, now);
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
                fast.stats.fold_bypassed();
                assert!(matches!(
                    fast.stats.sojourn(),
                    std::borrow::Cow::Borrowed(_)
                ));
                assert_eq!(snapshot(&fast, now), snapshot(&slow, now));
            }
        }
        let dropped = fast.stats.counters().dropped_overflow;
        assert!(passed > 1000 && dropped > 100, "{passed} {dropped}");
        assert_eq!(drops.len() as u64, 2 * fast.stats.counters().dropped());
    }
}
