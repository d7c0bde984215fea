//! MarkMax: a flow-aware AQM that cuts the connection with the largest
//! backlog, signalled by ECN.
//!
//! Source: N. Osipova, A. Blanc, K. Avrachenkov, "Improving TCP Fairness with
//! MarkMax Policy" (slides, "MarkMax algorithm"). No
//! public code of it exists; this file implements the
//! slides' algorithm, run on every packet arrival:
//!
//! ```text
//! enqueue packet
//! if q ≤ θ_l or q ≥ θ_h then flag ← TRUE
//! if q ≥ θ and flag = TRUE then
//!     a. select the connection with the largest backlog
//!     b. set the ECN flag in the first packet of that connection from the
//!        head of the queue
//!     c. flag ← FALSE
//! ```
//!
//! Definitions and choices (the slides leave these open):
//! - `q` is the number of packets in the queue *after* the arrival was
//!   handled (the slides enqueue first, then test). The flag starts TRUE.
//! - The queue is one FIFO with DropTail on overflow (`limit`). An arrival
//!   that does not fit is dropped, and the flag logic still runs for it
//!   with `q` = the (full) queue length: the slides' "select and cut a
//!   connection every time a new packet arrives" above θ_h applies to
//!   every arrival.
//! - A connection is a flow id (`Packet::flow`). Its *backlog* is by default
//!   the bytes of its packets in the queue (`backlog = "bytes"`, the amount
//!   of its data at the bottleneck, the slides' proxy for its rate); with
//!   `backlog = "packets"` it is the packet count. With packets of equal size
//!   (the paper's ns-2 runs) both select the same connection. Ties go to
//!   the connection whose first queued packet is nearest the head (its mark
//!   reaches the receiver first); this is deterministic.
//! - The signal: CE (`Ecn::Ce`) on the selected packet if it is
//!   ECN-capable (an already-CE packet is counted as marked again). If it is
//!   not ECN-capable, or `ecn = false`, the selected packet itself is
//!   dropped instead (a drop from the middle of the FIFO, `DropCause::Aqm`):
//!   the same connection still gets the congestion signal, as loss.
//!
//! Data structures and cost (F = connections with packets queued, n =
//! packets queued):
//! - the FIFO is a ring buffer of slots, each tagged with a sequence number
//!   (`head_seq` + position); a packet dropped from the middle leaves a
//!   tombstone that `dequeue` skips;
//! - per connection: bytes, packets and a FIFO of the sequence numbers of its
//!   queued packets, so its first packet from the head is found in O(1);
//!   connection slots are reused (no allocation per packet in steady state);
//! - an indexed binary max-heap of the connections keyed by
//!   (backlog, −first sequence number), updated incrementally on every
//!   enqueue and dequeue in O(log F); selection is O(1) (the heap's top).
//!
//! So enqueue and dequeue cost O(log F) (plus an O(1) flow-id lookup: a
//! direct table for ids below 65 536, a hash map above); nothing scans the
//! flows or the queue. Memory is O(n + F).
//!
//! Parameters (packets are counted in whole packets, "MSS" in the paper):
//! - `theta` (required): θ, packets. The paper uses 240 at 70 Mbit/s.
//! - `theta_low`: θ_l, packets; default 0.85·θ (the slides' experimental
//!   choice).
//! - `theta_high`: θ_h, packets; default 1.15·θ.
//! - `limit`: buffer size, packets (integer) or bytes (string with a unit);
//!   default 1000 packets. Must hold θ_h packets when given in packets.
//! - `backlog`: `"bytes"` (default) or `"packets"`.
//! - `ecn`: signal by CE (default true); false drops the selected packet.
//!
//! Validation: 0 ≤ θ_l < θ < θ_h ≤ limit (the last only for a packet
//! limit); each error names its key.
//!
//! Not implemented: the slides mention heavy-hitter counters and hash tables
//! for very many flows; this implementation keeps exact per-flow counts.

use super::{DropCause, Limit, QdCtx, QueueDisc};
use crate::net::packet::{Ecn, FlowId, Packet};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};

/// What "backlog" counts when MarkMax selects a connection.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum BacklogUnit {
    /// Bytes of the connection's packets in the queue.
    #[default]
    Bytes,
    /// Number of the connection's packets in the queue.
    Packets,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MarkMaxConfig {
    #[serde(default = "d_limit")]
    pub limit: Limit,
    /// θ, packets.
    pub theta: f64,
    /// θ_l, packets (default 0.85·θ).
    #[serde(default)]
    pub theta_low: Option<f64>,
    /// θ_h, packets (default 1.15·θ).
    #[serde(default)]
    pub theta_high: Option<f64>,
    #[serde(default)]
    pub backlog: BacklogUnit,
    #[serde(default = "d_true")]
    pub ecn: bool,
}

fn d_limit() -> Limit {
    Limit::Packets(1000)
}
fn d_true() -> bool {
    true
}

/// Default θ_l as a fraction of θ (slides: "θ_l = 0.85θ").
pub const THETA_LOW_FRACTION: f64 = 0.85;
/// Default θ_h as a fraction of θ (slides: "θ_h = 1.15θ").
pub const THETA_HIGH_FRACTION: f64 = 1.15;

impl MarkMaxConfig {
    /// A configuration with the default θ_l, θ_h, bytes backlog and ECN.
    pub fn new(limit: Limit, theta: f64) -> Self {
        MarkMaxConfig {
            limit,
            theta,
            theta_low: None,
            theta_high: None,
            backlog: BacklogUnit::Bytes,
            ecn: true,
        }
    }

    /// θ_l, θ, θ_h with the defaults applied.
    pub fn thresholds(&self) -> (f64, f64, f64) {
        (
            self.theta_low.unwrap_or(THETA_LOW_FRACTION * self.theta),
            self.theta,
            self.theta_high.unwrap_or(THETA_HIGH_FRACTION * self.theta),
        )
    }

    pub fn validate(&self) -> Result<(), (String, String)> {
        let e = |k: &str, m: String| Err((k.to_string(), m));
        self.limit
            .validate()
            .map_err(|m| ("limit".to_string(), m))?;
        if !(self.theta > 0.0 && self.theta.is_finite()) {
            return e(
                "theta",
                format!("must be a positive number of packets, got {}", self.theta),
            );
        }
        let (lo, th, hi) = self.thresholds();
        if !(lo >= 0.0 && lo < th) {
            return e(
                "theta_low",
                format!("must be at least 0 and less than theta ({th}), got {lo}"),
            );
        }
        if !(hi > th && hi.is_finite()) {
            return e(
                "theta_high",
                format!("must be greater than theta ({th}), got {hi}"),
            );
        }
        if let Limit::Packets(n) = self.limit {
            if hi > n as f64 {
                return e(
                    "theta_high",
                    format!(
                        "must not exceed limit ({n} packets), got {hi}{}: the queue could never reach it",
                        if self.theta_high.is_none() {
                            " (the default 1.15·theta)"
                        } else {
                            ""
                        }
                    ),
                );
            }
        }
        Ok(())
    }
}

/// Counters kept by MarkMax (beyond the port's generic counters).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MarkMaxStats {
    /// Congestion signals sent (marks + drops of selected packets).
    pub signals: u64,
    /// Signals sent as CE marks.
    pub marks: u64,
    /// Signals sent as drops (selected packet not ECN-capable, or `ecn = false`).
    pub drops: u64,
    /// Times the flag was re-armed because q ≤ θ_l (it was FALSE before).
    pub rearm_low: u64,
    /// Times the flag was re-armed because q ≥ θ_h (it was FALSE before).
    pub rearm_high: u64,
    /// Largest queue length (packets) seen at an arrival.
    pub max_q: usize,
}

/// A FIFO position: a packet, or a tombstone left by a drop from the middle.
#[derive(Clone, Copy)]
struct Slot {
    pkt: Packet,
    live: bool,
}

/// One connection with packets queued.
struct FlowQ {
    id: FlowId,
    bytes: u64,
    pkts: u32,
    /// Sequence numbers of its queued packets, oldest first.
    seqs: VecDeque<u64>,
    /// Position in the heap.
    pos: usize,
}

const NONE: u32 = u32::MAX;
/// Flow ids below this are looked up in a direct table.
const DENSE: u32 = 1 << 16;

pub struct MarkMax {
    limit: Limit,
    theta_low: f64,
    theta: f64,
    theta_high: f64,
    by_bytes: bool,
    ecn: bool,
    fifo: VecDeque<Slot>,
    /// Sequence number of `fifo[0]`.
    head_seq: u64,
    pkts: usize,
    bytes: u64,
    flows: Vec<FlowQ>,
    free: Vec<u32>,
    dense: Vec<u32>,
    sparse: HashMap<FlowId, u32>,
    /// Max-heap of flow slots.
    heap: Vec<u32>,
    flag: bool,
    stats: MarkMaxStats,
}

impl MarkMax {
    pub fn new(c: &MarkMaxConfig) -> Self {
        let (lo, th, hi) = c.thresholds();
        MarkMax {
            limit: c.limit,
            theta_low: lo,
            theta: th,
            theta_high: hi,
            by_bytes: c.backlog == BacklogUnit::Bytes,
            ecn: c.ecn,
            fifo: VecDeque::new(),
            head_seq: 0,
            pkts: 0,
            bytes: 0,
            flows: Vec::new(),
            free: Vec::new(),
            dense: Vec::new(),
            sparse: HashMap::new(),
            heap: Vec::new(),
            flag: true,
            stats: MarkMaxStats::default(),
        }
    }

    /// The flag of the slides' algorithm (TRUE: the next arrival with
    /// q ≥ θ sends a signal).
    pub fn flag(&self) -> bool {
        self.flag
    }

    /// (θ_l, θ, θ_h) in packets.
    pub fn thresholds(&self) -> (f64, f64, f64) {
        (self.theta_low, self.theta, self.theta_high)
    }

    pub fn stats(&self) -> &MarkMaxStats {
        &self.stats
    }

    /// Packets and bytes of `flow` in the queue.
    pub fn backlog(&self, flow: FlowId) -> (u32, u64) {
        match self.slot_of(flow) {
            Some(s) => {
                let f = &self.flows[s as usize];
                (f.pkts, f.bytes)
            }
            None => (0, 0),
        }
    }

    /// The connection MarkMax would select now (largest backlog), if any.
    pub fn largest(&self) -> Option<FlowId> {
        self.heap.first().map(|&s| self.flows[s as usize].id)
    }

    fn slot_of(&self, flow: FlowId) -> Option<u32> {
        let s = if flow.0 < DENSE {
            self.dense.get(flow.ix()).copied().unwrap_or(NONE)
        } else {
            self.sparse.get(&flow).copied().unwrap_or(NONE)
        };
        (s != NONE).then_some(s)
    }

    fn set_slot(&mut self, flow: FlowId, s: u32) {
        if flow.0 < DENSE {
            let i = flow.ix();
            if self.dense.len() <= i {
                self.dense.resize(i + 1, NONE);
            }
            self.dense[i] = s;
        } else if s == NONE {
            self.sparse.remove(&flow);
        } else {
            self.sparse.insert(flow, s);
        }
    }

    // ---- the heap ----------------------------------------------------------

    /// Heap order: does slot `a` rank above slot `b`?
    #[inline]
    fn above(&self, a: u32, b: u32) -> bool {
        let (fa, fb) = (&self.flows[a as usize], &self.flows[b as usize]);
        let (ka, kb) = if self.by_bytes {
            (fa.bytes, fb.bytes)
        } else {
            (fa.pkts as u64, fb.pkts as u64)
        };
        ka > kb || (ka == kb && fa.seqs.front() < fb.seqs.front())
    }

    #[inline]
    fn heap_set(&mut self, pos: usize, s: u32) {
        self.heap[pos] = s;
        self.flows[s as usize].pos = pos;
    }

    fn sift_up(&mut self, mut pos: usize) {
        let s = self.heap[pos];
        while pos > 0 {
            let parent = (pos - 1) / 2;
            let p = self.heap[parent];
            if !self.above(s, p) {
                break;
            }
            self.heap_set(pos, p);
            pos = parent;
        }
        self.heap_set(pos, s);
    }

    fn sift_down(&mut self, mut pos: usize) {
        let s = self.heap[pos];
        let n = self.heap.len();
        loop {
            let l = 2 * pos + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.above(self.heap[r], self.heap[l]) {
                r
            } else {
                l
            };
            if !self.above(self.heap[c], s) {
                break;
            }
            let cs = self.heap[c];
            self.heap_set(pos, cs);
            pos = c;
        }
        self.heap_set(pos, s);
    }

    fn heap_remove(&mut self, s: u32) {
        let pos = self.flows[s as usize].pos;
        let last = self.heap.pop().expect("non-empty heap");
        if last != s {
            self.heap_set(pos, last);
            self.sift_up(pos);
            let p = self.flows[last as usize].pos;
            self.sift_down(p);
        }
    }

    // ---- per-flow accounting ---------------------------------------------

    /// A packet of `pkt.flow` with sequence number `seq` joined the queue.
    fn flow_add(&mut self, pkt: &Packet, seq: u64) {
        match self.slot_of(pkt.flow) {
            Some(s) => {
                let f = &mut self.flows[s as usize];
                f.bytes += pkt.size as u64;
                f.pkts += 1;
                f.seqs.push_back(seq);
                let pos = f.pos;
                self.sift_up(pos);
            }
            None => {
                let s = match self.free.pop() {
                    Some(s) => s,
                    None => {
                        self.flows.push(FlowQ {
                            id: FlowId(0),
                            bytes: 0,
                            pkts: 0,
                            seqs: VecDeque::new(),
                            pos: 0,
                        });
                        (self.flows.len() - 1) as u32
                    }
                };
                let f = &mut self.flows[s as usize];
                f.id = pkt.flow;
                f.bytes = pkt.size as u64;
                f.pkts = 1;
                f.seqs.clear();
                f.seqs.push_back(seq);
                self.set_slot(pkt.flow, s);
                self.heap.push(s);
                let pos = self.heap.len() - 1;
                self.flows[s as usize].pos = pos;
                self.sift_up(pos);
            }
        }
    }

    /// The oldest packet of slot `s` (sequence `seq`, `size` bytes) left.
    fn flow_remove_first(&mut self, s: u32, seq: u64, size: u32) {
        let f = &mut self.flows[s as usize];
        let got = f.seqs.pop_front();
        debug_assert_eq!(got, Some(seq), "per-flow index out of step with the FIFO");
        f.bytes -= size as u64;
        f.pkts -= 1;
        if f.pkts == 0 {
            let id = f.id;
            self.heap_remove(s);
            self.set_slot(id, NONE);
            self.free.push(s);
        } else {
            let pos = f.pos;
            self.sift_down(pos);
        }
    }

    // ---- the algorithm ---------------------------------------------------

    /// The slides' flag logic, run after every arrival.
    fn on_arrival(&mut self, ctx: &mut QdCtx) {
        let q = self.pkts as f64;
        self.stats.max_q = self.stats.max_q.max(self.pkts);
        if q <= self.theta_low || q >= self.theta_high {
            if !self.flag {
                if q <= self.theta_low {
                    self.stats.rearm_low += 1;
                } else {
                    self.stats.rearm_high += 1;
                }
            }
            self.flag = true;
        }
        if q >= self.theta && self.flag {
            if let Some(&s) = self.heap.first() {
                self.signal(s, ctx);
                self.flag = false;
            }
        }
    }

    /// Signal connection slot `s` on its first packet from the head.
    fn signal(&mut self, s: u32, ctx: &mut QdCtx) {
        let seq = *self.flows[s as usize]
            .seqs
            .front()
            .expect("a queued flow has packets");
        let idx = (seq - self.head_seq) as usize;
        self.stats.signals += 1;
        let slot = &mut self.fifo[idx];
        debug_assert!(slot.live);
        if self.ecn && slot.pkt.ecn.capable() {
            slot.pkt.ecn = Ecn::Ce;
            ctx.marked += 1;
            self.stats.marks += 1;
        } else {
            slot.live = false;
            let pkt = slot.pkt;
            self.pkts -= 1;
            self.bytes -= pkt.size as u64;
            self.flow_remove_first(s, seq, pkt.size);
            self.stats.drops += 1;
            ctx.drop_packet(pkt, DropCause::Aqm);
        }
    }

    /// Check the internal invariants (for tests; O(n + F)): counts agree with
    /// the FIFO, every flow's index lists its live packets in order, and the
    /// heap is ordered.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut pkts = 0usize;
        let mut bytes = 0u64;
        let mut per: HashMap<FlowId, (u32, u64, Vec<u64>)> = HashMap::new();
        for (i, sl) in self.fifo.iter().enumerate() {
            if sl.live {
                pkts += 1;
                bytes += sl.pkt.size as u64;
                let e = per.entry(sl.pkt.flow).or_default();
                e.0 += 1;
                e.1 += sl.pkt.size as u64;
                e.2.push(self.head_seq + i as u64);
            }
        }
        if pkts != self.pkts || bytes != self.bytes {
            return Err(format!(
                "totals {}/{} but FIFO holds {pkts}/{bytes}",
                self.pkts, self.bytes
            ));
        }
        if per.len() != self.heap.len() {
            return Err(format!(
                "{} flows queued but {} in the heap",
                per.len(),
                self.heap.len()
            ));
        }
        for (id, (p, b, seqs)) in &per {
            let s = self.slot_of(*id).ok_or(format!("flow {id} not indexed"))?;
            let f = &self.flows[s as usize];
            if f.pkts != *p || f.bytes != *b || f.seqs.iter().copied().ne(seqs.iter().copied()) {
                return Err(format!("flow {id}: accounting out of step"));
            }
            if self.heap[f.pos] != s {
                return Err(format!("flow {id}: heap position wrong"));
            }
        }
        for i in 1..self.heap.len() {
            if self.above(self.heap[i], self.heap[(i - 1) / 2]) {
                return Err(format!("heap order violated at {i}"));
            }
        }
        Ok(())
    }
}

impl QueueDisc for MarkMax {
    fn kind(&self) -> &'static str {
        "markmax"
    }

    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdCtx) -> Result<(), DropCause> {
        let fits = !self.limit.exceeded_by(self.pkts, self.bytes, pkt.size);
        if fits {
            let seq = self.head_seq + self.fifo.len() as u64;
            self.fifo.push_back(Slot { pkt, live: true });
            self.pkts += 1;
            self.bytes += pkt.size as u64;
            self.flow_add(&pkt, seq);
        }
        self.on_arrival(ctx);
        if fits {
            Ok(())
        } else {
            Err(DropCause::Overflow)
        }
    }

    fn dequeue(&mut self, _ctx: &mut QdCtx) -> Option<Packet> {
        loop {
            let sl = self.fifo.pop_front()?;
            let seq = self.head_seq;
            self.head_seq += 1;
            if !sl.live {
                continue;
            }
            let p = sl.pkt;
            self.pkts -= 1;
            self.bytes -= p.size as u64;
            let s = self.slot_of(p.flow).expect("queued flow is indexed");
            self.flow_remove_first(s, seq, p.size);
            return Some(p);
        }
    }

    fn len_pkts(&self) -> usize {
        self.pkts
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }
    /// Signals sent (as marks and as drops), flag re-arms and the largest
    /// queue seen ([`MarkMaxStats`]).
    fn stats(&self) -> Vec<(&'static str, f64)> {
        let s = &self.stats;
        vec![
            ("signals", s.signals as f64),
            ("marks", s.marks as f64),
            ("drops", s.drops as f64),
            ("rearm_low", s.rearm_low as f64),
            ("rearm_high", s.rearm_high as f64),
            ("max_q", s.max_q as f64),
        ]
    }
}

impl super::registry::Registered for MarkMaxConfig {
    const KIND: &'static str = "markmax";
    const ABOUT: &'static str = "MarkMax: cut the flow with the largest backlog (Osipova, Blanc, Avrachenkov)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("limit", "packets, or bytes with a unit", "> 0", "0", "buffer size"),
        crate::registry::param!(required = "240", "theta", "backlog unit", "> 0", "0.0", "threshold θ on the queue"),
        crate::registry::param!("theta_low", "backlog unit", "[0, theta); default 0.85·theta", "-1.0", "θ_l: stop cutting below it"),
        crate::registry::param!("theta_high", "backlog unit", "> theta; default 1.15·theta", "0.0", "θ_h: cut on every arrival above it"),
        crate::registry::param!("backlog", "", "\"bytes\" or \"packets\"", "\"x\"", "unit of the backlog and thresholds"),
        crate::registry::param!("ecn", "", "true/false", "", "mark instead of dropping"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        MarkMaxConfig::validate(self)
    }
}

impl super::registry::QueueKind for MarkMaxConfig {
    const FIFO: bool = true;
    const MARKS_QUEUED: bool = true;
    fn build(&self, _: &mut super::PortCtx) -> Box<dyn QueueDisc> {
        Box::new(MarkMax::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStream;

    fn pkt(uid: u64, flow: u32, size: u32) -> Packet {
        Packet {
            uid,
            flow: FlowId(flow),
            size,
            ecn: Ecn::Ect0,
            ..Default::default()
        }
    }

    struct Env {
        rng: RngStream,
        dropped: Vec<(Packet, DropCause)>,
    }

    impl Env {
        fn new() -> Self {
            Env {
                rng: RngStream::new(0, 0),
                dropped: Vec::new(),
            }
        }
        /// Enqueue; returns (result, marked).
        fn enq(&mut self, q: &mut MarkMax, p: Packet) -> (Result<(), DropCause>, u32) {
            let mut c = QdCtx {
                now: 0,
                rng: &mut self.rng,
                dropped: &mut self.dropped,
                marked: 0,
            };
            let r = q.enqueue(p, &mut c);
            (r, c.marked)
        }
        fn deq(&mut self, q: &mut MarkMax) -> Option<Packet> {
            let mut c = QdCtx {
                now: 0,
                rng: &mut self.rng,
                dropped: &mut self.dropped,
                marked: 0,
            };
            q.dequeue(&mut c)
        }
    }

    fn cfg(limit: u32, th: f64, lo: f64, hi: f64) -> MarkMaxConfig {
        MarkMaxConfig {
            theta_low: Some(lo),
            theta_high: Some(hi),
            ..MarkMaxConfig::new(Limit::Packets(limit), th)
        }
    }

    #[test]
    fn defaults_are_the_slides() {
        let c: MarkMaxConfig = toml::from_str("theta = 240").unwrap();
        assert_eq!(c.thresholds(), (204.0, 240.0, 276.0));
        assert_eq!(c.limit, Limit::Packets(1000));
        assert_eq!(c.backlog, BacklogUnit::Bytes);
        assert!(c.ecn);
        c.validate().unwrap();
    }

    #[test]
    fn validation_names_the_key() {
        let bad = |t: &str, key: &str| {
            let c: MarkMaxConfig = toml::from_str(t).unwrap();
            let (k, m) = c.validate().unwrap_err();
            assert_eq!(k, key, "{t}: {m}");
        };
        bad("theta = 0", "theta");
        bad("theta = 10\ntheta_low = 10", "theta_low");
        bad("theta = 10\ntheta_low = -1", "theta_low");
        bad("theta = 10\ntheta_high = 9", "theta_high");
        bad("theta = 240\nlimit = 240", "theta_high");
        let c: MarkMaxConfig = toml::from_str("theta = 240\nlimit = \"100KB\"").unwrap();
        assert!(c.validate().is_ok(), "a byte limit is not compared");
    }

    #[test]
    fn marks_first_packet_of_largest_flow_then_waits_for_rearm() {
        // θ_l = 3, θ = 5, θ_h = 8, limit 10.
        let mut q = MarkMax::new(&cfg(10, 5.0, 3.0, 8.0));
        let mut e = Env::new();
        // flow 1: uids 0, 2; flow 2: uids 1, 3, 4 → at the 5th arrival q = 5,
        // flow 2 has the largest backlog and its first packet is uid 1.
        for (uid, f) in [(0, 1), (1, 2), (2, 1), (3, 2)] {
            assert_eq!(e.enq(&mut q, pkt(uid, f, 100)), (Ok(()), 0));
        }
        assert_eq!(e.enq(&mut q, pkt(4, 2, 100)), (Ok(()), 1));
        assert!(!q.flag());
        // q = 6, 7: no second mark while θ_l < q < θ_h
        assert_eq!(e.enq(&mut q, pkt(5, 1, 100)).1, 0);
        assert_eq!(e.enq(&mut q, pkt(6, 1, 100)).1, 0);
        // q = 8 ≥ θ_h re-arms and marks at once: flow 1 now has 5 packets
        // (uids 0, 2, 5, 6, 7) against flow 2's 3; its first is uid 0.
        assert_eq!(e.enq(&mut q, pkt(7, 1, 100)).1, 1);
        assert_eq!(q.stats().rearm_high, 1);
        let out: Vec<(u64, Ecn)> =
            std::iter::from_fn(|| e.deq(&mut q).map(|p| (p.uid, p.ecn))).collect();
        let ce: Vec<u64> = out
            .iter()
            .filter(|(_, c)| *c == Ecn::Ce)
            .map(|x| x.0)
            .collect();
        assert_eq!(ce, vec![0, 1]);
        assert_eq!(
            out.iter().map(|x| x.0).collect::<Vec<_>>(),
            (0..8).collect::<Vec<_>>()
        );
        // empty queue: the next arrival (q = 1 ≤ θ_l) re-arms
        assert!(!q.flag());
        e.enq(&mut q, pkt(8, 3, 100)).0.unwrap();
        assert!(q.flag());
        assert_eq!(q.stats().rearm_low, 1);
        q.check_invariants().unwrap();
    }

    #[test]
    fn bytes_and_packets_backlog_differ_with_unequal_sizes() {
        for (unit, expect) in [(BacklogUnit::Bytes, 1), (BacklogUnit::Packets, 2)] {
            let mut c = cfg(100, 4.0, 1.0, 10.0);
            c.backlog = unit;
            let mut q = MarkMax::new(&c);
            let mut e = Env::new();
            // flow 1: one 1500-byte packet; flow 2: three 100-byte packets
            e.enq(&mut q, pkt(0, 1, 1500)).0.unwrap();
            for u in 1..4 {
                e.enq(&mut q, pkt(u, 2, 100)).0.unwrap();
            }
            assert_eq!(q.largest(), Some(FlowId(expect)), "{unit:?}");
        }
    }

    #[test]
    fn non_ect_selected_packet_is_dropped_from_the_middle() {
        let mut q = MarkMax::new(&cfg(10, 3.0, 1.0, 6.0));
        let mut e = Env::new();
        let mut p = pkt(0, 7, 100);
        e.enq(&mut q, p).0.unwrap();
        p = pkt(1, 9, 100);
        p.ecn = Ecn::NotEct;
        e.enq(&mut q, p).0.unwrap();
        p.uid = 2;
        let (r, m) = e.enq(&mut q, p);
        assert_eq!((r, m), (Ok(()), 0));
        assert_eq!(e.dropped.len(), 1);
        assert_eq!(
            (e.dropped[0].0.uid, e.dropped[0].1),
            (1, DropCause::Aqm),
            "flow 9's first packet"
        );
        assert_eq!((q.len_pkts(), q.len_bytes()), (2, 200));
        assert_eq!(q.backlog(FlowId(9)), (1, 100));
        q.check_invariants().unwrap();
        let out: Vec<u64> = std::iter::from_fn(|| e.deq(&mut q).map(|p| p.uid)).collect();
        assert_eq!(out, vec![0, 2]);
        assert_eq!(q.stats().drops, 1);
    }

    #[test]
    fn overflow_is_droptail_and_still_signals() {
        let mut q = MarkMax::new(&cfg(4, 2.0, 1.0, 4.0));
        let mut e = Env::new();
        let mut marks = 0;
        for u in 0..4 {
            let (r, m) = e.enq(&mut q, pkt(u, 1, 100));
            assert!(r.is_ok());
            marks += m;
        }
        // q: 1 (re-arm), 2 (mark), 3, 4 (≥ θ_h: re-arm and mark)
        assert_eq!(marks, 2);
        let (r, m) = e.enq(&mut q, pkt(4, 2, 100));
        assert_eq!(r, Err(DropCause::Overflow));
        assert_eq!(m, 1, "q = limit ≥ θ_h: the arrival re-arms and signals");
        assert_eq!(q.len_pkts(), 4);
        q.check_invariants().unwrap();
    }

    #[test]
    fn many_flows_heap_stays_consistent() {
        let mut q = MarkMax::new(&cfg(5000, 100.0, 50.0, 4000.0));
        let mut e = Env::new();
        let mut rng = RngStream::new(3, 4);
        for u in 0..20_000u64 {
            if rng.below(3) < 2 {
                let f = rng.below(300) as u32 * 997; // some ids above DENSE
                let _ = e.enq(&mut q, pkt(u, f, 40 + rng.below(1460) as u32));
            } else {
                e.deq(&mut q);
            }
            if u % 1000 == 0 {
                q.check_invariants().unwrap();
            }
        }
        q.check_invariants().unwrap();
    }
}
