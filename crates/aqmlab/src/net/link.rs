//! A simplex link: an egress [`Port`] (queue discipline + statistics), a
//! transmitter that serialises one packet at a time at `rate` (delay =
//! size·8/rate), and a propagation "pipe" of constant delay. Because the
//! delay is constant, packets leave the pipe in the order they entered, so the
//! pipe is a FIFO and needs at most one pending arrival event (htsim's Pipe).
//! A duplex link is two simplex links.

use crate::aqm::{DropCause, QdCtx, QueueCounters, QueueDisc};
use crate::engine::{RngStream, Time};
use crate::net::classifier::Classifier;
use crate::net::packet::{NodeId, Packet};
use hdrhistogram::Histogram;
use std::collections::VecDeque;

/// An egress queue with the statistics every discipline shares.
pub struct Port {
    pub qd: Box<dyn QueueDisc>,
    /// Edge classifier tagging `pkt.class` before `qd` sees the packet.
    pub classifier: Option<Classifier>,
    pub rng: RngStream,
    pub counters: QueueCounters,
    /// ∫ len_pkts dt, in packet·ns, up to `last_change`.
    area_pkts: f64,
    area_bytes: f64,
    last_change: Time,
    /// Per-packet queueing delay (enqueue → dequeue), nanoseconds.
    pub sojourn: Histogram<u64>,
    sojourn_sum_ns: u128,
    /// Sojourn time of the last packet dequeued.
    pub last_sojourn: Time,
    scratch: Vec<(Packet, DropCause)>,
    /// Arrivals, drops and marks per packet class (indexed by `Class as usize`).
    pub by_class: [ClassCounters; 3],
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
    pub fn new(qd: Box<dyn QueueDisc>, rng: RngStream) -> Self {
        Port {
            qd,
            classifier: None,
            rng,
            counters: QueueCounters::default(),
            area_pkts: 0.0,
            area_bytes: 0.0,
            last_change: 0,
            // 1 ns .. 1000 s at 3 significant digits
            sojourn: Histogram::new_with_bounds(1, 1_000_000_000_000, 3).expect("histogram"),
            sojourn_sum_ns: 0,
            last_sojourn: 0,
            scratch: Vec::new(),
            by_class: [ClassCounters::default(); 3],
        }
    }

    #[inline]
    fn integrate(&mut self, now: Time) {
        let dt = (now - self.last_change) as f64;
        if dt > 0.0 {
            self.area_pkts += self.qd.len_pkts() as f64 * dt;
            self.area_bytes += self.qd.len_bytes() as f64 * dt;
            self.last_change = now;
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
        let class = pkt.class as usize;
        let r = self.qd.enqueue(pkt, &mut ctx);
        self.counters.arrivals += 1;
        self.counters.marked += ctx.marked as u64;
        let c = &mut self.by_class[class];
        c.arrivals += 1;
        c.marked += ctx.marked as u64;
        match r {
            Ok(()) => self.counters.enqueued += 1,
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
        self.integrate(now);
        let mut ctx = QdCtx {
            now,
            rng: &mut self.rng,
            dropped: &mut self.scratch,
            marked: 0,
        };
        let p = self.qd.dequeue(&mut ctx);
        self.counters.marked += ctx.marked as u64;
        if let Some(p) = &p {
            self.by_class[p.class as usize].marked += ctx.marked as u64;
        }
        self.flush_drops(drops);
        if let Some(p) = &p {
            self.counters.dequeued += 1;
            let d = now - p.enq_time;
            self.last_sojourn = d;
            self.sojourn_sum_ns += d as u128;
            self.sojourn.saturating_record(d);
        }
        p
    }

    #[inline]
    fn flush_drops(&mut self, drops: &mut Vec<Packet>) {
        for (p, c) in self.scratch.drain(..) {
            self.counters.count_drop(c);
            self.by_class[p.class as usize].dropped += 1;
            drops.push(p);
        }
    }

    /// Time-averaged queue length in packets over [0, now].
    pub fn mean_len_pkts(&mut self, now: Time) -> f64 {
        self.integrate(now);
        if now == 0 {
            0.0
        } else {
            self.area_pkts / now as f64
        }
    }

    /// Time-averaged queue length in bytes over [0, now].
    pub fn mean_len_bytes(&mut self, now: Time) -> f64 {
        self.integrate(now);
        if now == 0 {
            0.0
        } else {
            self.area_bytes / now as f64
        }
    }

    /// Mean per-packet queueing delay in nanoseconds (exact, not binned).
    pub fn mean_sojourn_ns(&self) -> f64 {
        if self.counters.dequeued == 0 {
            0.0
        } else {
            self.sojourn_sum_ns as f64 / self.counters.dequeued as f64
        }
    }
}

/// One direction of a link.
pub struct Link {
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    pub rate_bps: u64,
    pub delay: Time,
    /// Independent random loss probability applied to packets on this link.
    pub loss: f64,
    pub loss_rng: RngStream,
    pub port: Port,
    /// Packet being serialised, if any.
    pub tx: Option<Packet>,
    /// Packets propagating: (arrival time at `to`, packet).
    pub pipe: VecDeque<(Time, Packet)>,
    /// Whether queue time series are recorded for this link's port.
    pub monitored: bool,
    // statistics
    pub busy_ns: u64,
    pub tx_bytes: u64,
    pub tx_pkts: u64,
    pub lost: u64,
}
