//! Flow queueing shared by FQ-CoDel and FQ-PIE: hashed per-flow queues
//! served by deficit round robin with new and old flow lists.
//!
//! Source: RFC 8290 §4 (T. Høiland-Jørgensen et al., 2018: enqueue,
//! dequeue, the new/old flow lists, DRR with a byte quantum) and Linux
//! `net/sched/sch_fq_codel.c` (`fq_codel_dequeue`), whose flow queueing
//! `net/sched/sch_fq_pie.c` repeats (`fq_pie_qdisc_dequeue`).
//!
//! - A queue that becomes active joins the tail of the new-flows list with
//!   `deficit = quantum`.
//! - [`FlowQueues::next_flow`] serves the head of new-flows if any, else of
//!   old-flows; a queue whose deficit is exhausted gets `quantum` more and
//!   moves to the tail of old-flows.
//! - [`FlowQueues::retire`]: a new queue found empty moves to old-flows if
//!   that list is non-empty (Linux: so that it cannot starve old flows by
//!   coming back as new), else it leaves; an old queue found empty leaves.
//!
//! The discipline keeps its own per-queue state (`S`: CoDel's or PIE's
//! variables) beside each queue, and decides what to do with the packets.

use crate::net::packet::Packet;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

/// One flow queue and the discipline's state for it.
pub struct FlowQueue<S> {
    pub q: VecDeque<Packet>,
    /// Bytes queued here.
    pub bytes: u64,
    deficit: i64,
    list: List,
    pub state: S,
}

/// The flow queues of one port.
pub struct FlowQueues<S> {
    pub flows: Vec<FlowQueue<S>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    quantum: i64,
    perturb: u64,
    /// Bytes queued over all flows.
    pub bytes: u64,
    /// Packets queued over all flows.
    pub pkts: usize,
}

/// Queue index of a packet: a 64-bit mix of (flow, src, dst, perturbation)
/// reduced to `0..n` (Linux hashes the 5-tuple with a per-qdisc random
/// perturbation, `skb_get_hash_perturb`).
pub fn bucket_of(p: &Packet, perturb: u64, n: u32) -> u32 {
    let mut z = (p.flow.0 as u64) ^ ((p.src.0 as u64) << 32) ^ ((p.dst.0 as u64) << 48) ^ perturb;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    ((z as u128 * n as u128) >> 64) as u32
}

impl<S> FlowQueues<S> {
    /// `n` queues, each with the state `init()` gives.
    pub fn new(n: u32, quantum: u32, perturb: u64, init: impl Fn() -> S) -> Self {
        FlowQueues {
            flows: (0..n)
                .map(|_| FlowQueue {
                    q: VecDeque::new(),
                    bytes: 0,
                    deficit: 0,
                    list: List::None,
                    state: init(),
                })
                .collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            quantum: quantum as i64,
            perturb,
            bytes: 0,
            pkts: 0,
        }
    }

    /// The queue `p` hashes to.
    pub fn index_of(&self, p: &Packet) -> u32 {
        bucket_of(p, self.perturb, self.flows.len() as u32)
    }

    /// Append `p` to queue `idx`; an inactive queue joins new-flows.
    pub fn push(&mut self, idx: u32, p: Packet) {
        let f = &mut self.flows[idx as usize];
        f.bytes += p.size as u64;
        self.bytes += p.size as u64;
        self.pkts += 1;
        f.q.push_back(p);
        if f.list == List::None {
            f.list = List::New;
            f.deficit = self.quantum;
            self.new_flows.push_back(idx);
        }
    }

    /// Remove the head of queue `idx`.
    pub fn pop(&mut self, idx: u32) -> Option<Packet> {
        let f = &mut self.flows[idx as usize];
        let p = f.q.pop_front()?;
        f.bytes -= p.size as u64;
        self.bytes -= p.size as u64;
        self.pkts -= 1;
        Some(p)
    }

    /// The queue whose turn it is, and whether it came from new-flows
    /// (deficits refilled and queues rotated on the way); `None` when both
    /// lists are empty.
    pub fn next_flow(&mut self) -> Option<(u32, bool)> {
        loop {
            let from_new = !self.new_flows.is_empty();
            let idx = if from_new {
                *self.new_flows.front()?
            } else {
                *self.old_flows.front()?
            };
            let f = &mut self.flows[idx as usize];
            if f.deficit > 0 {
                return Some((idx, from_new));
            }
            f.deficit += self.quantum;
            f.list = List::Old;
            if from_new {
                self.new_flows.pop_front();
            } else {
                self.old_flows.pop_front();
            }
            self.old_flows.push_back(idx);
        }
    }

    /// Charge `bytes` sent from queue `idx` to its deficit.
    pub fn charge(&mut self, idx: u32, bytes: u32) {
        self.flows[idx as usize].deficit -= bytes as i64;
    }

    /// Queue `idx`, at the head of its list (`from_new` as [`Self::next_flow`]
    /// said), had nothing to send: it leaves its list.
    pub fn retire(&mut self, idx: u32, from_new: bool) {
        let f = &mut self.flows[idx as usize];
        if from_new {
            self.new_flows.pop_front();
            if !self.old_flows.is_empty() {
                f.list = List::Old;
                self.old_flows.push_back(idx);
            } else {
                f.list = List::None;
            }
        } else {
            self.old_flows.pop_front();
            f.list = List::None;
        }
    }

    /// The queue with the largest byte backlog (the lowest index on a tie).
    pub fn fattest(&self) -> u32 {
        let (idx, _) = self
            .flows
            .iter()
            .enumerate()
            .max_by_key(|(i, f)| (f.bytes, std::cmp::Reverse(*i)))
            .expect("at least one queue");
        idx as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::FlowId;

    fn pkt(flow: u32, size: u32) -> Packet {
        Packet {
            flow: FlowId(flow),
            size,
            ..Default::default()
        }
    }

    /// Serve until empty; the order of flows served.
    fn drain(fq: &mut FlowQueues<()>) -> Vec<u32> {
        let mut out = Vec::new();
        while let Some((idx, from_new)) = fq.next_flow() {
            match fq.pop(idx) {
                Some(p) => {
                    fq.charge(idx, p.size);
                    out.push(p.flow.0);
                }
                None => fq.retire(idx, from_new),
            }
        }
        out
    }

    #[test]
    fn drr_serves_quantum_bytes_per_turn() {
        // quantum 3000: a flow of 1000-B packets sends 3 per turn, one of
        // 1500-B packets 2 per turn
        let mut fq = FlowQueues::new(2, 3000, 0, || ());
        let (a, b) = (0u32, 1u32);
        for _ in 0..6 {
            fq.push(a, pkt(10, 1000));
        }
        for _ in 0..4 {
            fq.push(b, pkt(20, 1500));
        }
        assert_eq!((fq.pkts, fq.bytes), (10, 12_000));
        let order = drain(&mut fq);
        assert_eq!(order, [10, 10, 10, 20, 20, 10, 10, 10, 20, 20]);
        assert_eq!((fq.pkts, fq.bytes), (0, 0));
        assert!(fq.next_flow().is_none(), "both lists empty after draining");
    }

    #[test]
    fn new_flow_goes_before_old_and_empty_new_flow_joins_old() {
        let mut fq = FlowQueues::new(3, 1000, 0, || ());
        for _ in 0..3 {
            fq.push(0, pkt(0, 1000));
        }
        // flow 0 uses its quantum and becomes old
        let (i, new) = fq.next_flow().unwrap();
        assert_eq!((i, new), (0, true));
        let p = fq.pop(i).unwrap();
        fq.charge(i, p.size);
        // a new flow arrives: served before old flow 0
        fq.push(1, pkt(1, 500));
        let (i, new) = fq.next_flow().unwrap();
        assert_eq!((i, new), (1, true));
        let p = fq.pop(i).unwrap();
        fq.charge(i, p.size);
        // flow 1 still has deficit but no packet: it joins old-flows (which
        // holds flow 0) instead of leaving
        let (i, new) = fq.next_flow().unwrap();
        assert_eq!((i, new), (1, true));
        assert!(fq.pop(i).is_none());
        fq.retire(i, new);
        assert_eq!(fq.next_flow().unwrap(), (0, false));
        // a packet for flow 1 now does not make it new again: it waits on
        // old-flows behind flow 0's quantum (1000 B = one packet), then flow
        // 0 sends its last packet
        fq.push(1, pkt(1, 500));
        assert_eq!(drain(&mut fq), [0, 1, 0]);
    }

    #[test]
    fn fattest_is_the_largest_byte_backlog() {
        let mut fq = FlowQueues::new(4, 1514, 0, || ());
        fq.push(1, pkt(1, 1500));
        fq.push(2, pkt(2, 1000));
        fq.push(2, pkt(2, 1000));
        fq.push(3, pkt(3, 2000));
        // queues 2 and 3 hold 2000 B each: the lower index wins the tie
        assert_eq!(fq.fattest(), 2);
        fq.push(3, pkt(3, 1));
        assert_eq!(fq.fattest(), 3);
    }

    #[test]
    fn hash_spreads_flows_and_depends_on_perturbation() {
        let n = 1024;
        let a: Vec<u32> = (0..64).map(|f| bucket_of(&pkt(f, 1), 1, n)).collect();
        let b: Vec<u32> = (0..64).map(|f| bucket_of(&pkt(f, 1), 2, n)).collect();
        assert!(a.iter().all(|&x| x < n));
        assert_ne!(a, b);
        let distinct: std::collections::HashSet<_> = a.iter().collect();
        assert!(
            distinct.len() >= 60,
            "64 flows into 1024 queues: {}",
            distinct.len()
        );
    }
}
