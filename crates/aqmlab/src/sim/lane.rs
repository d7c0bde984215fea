//! Delay lanes: the packets propagating on the links whose two ends lie in
//! one logical process, held in one FIFO per propagation delay instead of
//! in each link's pipe with an arrival event in the event heap.
//!
//! A link's delay is constant, and a packet enters its lane when its
//! serialisation starts (`LogicalProcess::transmit`), due at `now + serialisation +
//! delay`; the clock never goes back, so the arrivals pushed onto the lane
//! of one delay come nearly in time order already (htsim's pipe, a FIFO per
//! link, relies on the same fact; here links of equal delay share one
//! FIFO): only a packet pushed later with a shorter serialisation (a
//! smaller packet, or a faster link) can be due before the last ones. A
//! push therefore goes in behind the last arrival whose key is not larger,
//! looking back from the tail, and arrivals at one time are put in
//! [`TieBreak`](crate::engine::TieBreak) order, so every lane is sorted by the event
//! queue's own key (time, owner, counter), and merging the lanes' heads
//! with the queue's next event gives exactly the order one heap of all
//! events would: every arrival is in its lane before its time comes.
//!
//! What it saves with 10⁵ hosts: a packet in flight is written to and read
//! from a lane's ring, which the CPU streams into cache by itself, instead of a
//! pipe buffer of its own link (a cold line, and a page fault the first
//! time each of 2·10⁵ buffers is allocated), and its arrival costs no heap
//! push and pop. The arrival carries what it needs of the link (far end,
//! whether it is lossy), so on a lossless link it reads nothing of the
//! link's record.

use super::ids::{LocalLink, LpId};
use crate::engine::Time;
use crate::net::packet::{NodeId, Packet};
use std::collections::VecDeque;

/// Most lanes a process keeps: the most common delays among its own links
/// get one each; a link with any other delay keeps its pipe.
pub const MAX_LANES: usize = 8;

/// A link whose packets propagate in its own pipe (no lane).
pub const NO_LANE: u8 = u8::MAX;

/// A packet propagating on a link, with its arrival's key.
#[derive(Clone, Copy, Debug)]
pub struct Transit {
    /// Arrival time at the far end.
    pub time: Time,
    /// The arrival's tie-break (the link's far end and its counter).
    pub owner: u64,
    pub seq: u64,
    pub link: LocalLink,
    /// The link's far end.
    pub to: NodeId,
    /// The link drops packets at random (it has a loss probability).
    pub lossy: bool,
    pub pkt: Packet,
}

impl Transit {
    #[inline]
    fn key(&self) -> (Time, u64, u64) {
        (self.time, self.owner, self.seq)
    }
}

/// One process's lanes.
#[derive(Default)]
pub struct Lanes {
    lanes: Vec<VecDeque<Transit>>,
    /// The lane holding the earliest arrival and that arrival's key (kept
    /// up to date by every push and pop, so that a peek reads one field).
    first: Option<(usize, (Time, u64, u64))>,
    len: usize,
    popped: u64,
}

impl Lanes {
    /// `n` empty lanes.
    pub fn new(n: usize) -> Lanes {
        Lanes {
            lanes: (0..n).map(|_| VecDeque::new()).collect(),
            first: None,
            len: 0,
            popped: 0,
        }
    }

    /// Packets propagating in the lanes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Lanes (delays) held.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.lanes.len()
    }

    /// Arrivals taken from the lanes so far (events).
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// Put a packet on lane `lane`, behind the packets with smaller keys
    /// (mostly all of them: see the module's text; the search looks back
    /// from the tail).
    #[inline]
    pub fn push(&mut self, lane: u8, t: Transit) {
        let q = &mut self.lanes[lane as usize];
        let k = t.key();
        let mut i = q.len();
        while i > 0 && q[i - 1].key() > k {
            i -= 1;
        }
        if i == q.len() {
            q.push_back(t);
        } else {
            q.insert(i, t);
        }
        self.len += 1;
        if self.first.is_none_or(|(_, f)| k < f) {
            self.first = Some((lane as usize, k));
        }
    }

    /// The lane holding the earliest arrival, and that arrival's key.
    #[inline]
    pub fn peek(&self) -> Option<(usize, (Time, u64, u64))> {
        self.first
    }

    /// Find the earliest head again.
    #[inline]
    fn rescan(&mut self) {
        let mut best: Option<(usize, (Time, u64, u64))> = None;
        for (i, q) in self.lanes.iter().enumerate() {
            if let Some(h) = q.front() {
                let k = h.key();
                if best.is_none_or(|(_, b)| k < b) {
                    best = Some((i, k));
                }
            }
        }
        self.first = best;
    }

    /// The arrival `k` places behind the head of lane `lane`, if any.
    #[inline]
    pub fn ahead(&self, lane: usize, k: usize) -> Option<&Transit> {
        self.lanes[lane].get(k)
    }

    /// Take the head of lane `lane` (which [`Lanes::peek`] named).
    #[inline]
    pub fn pop(&mut self, lane: usize) -> Transit {
        let t = self.lanes[lane].pop_front().expect("peeked lane");
        self.len -= 1;
        self.popped += 1;
        self.rescan();
        t
    }
}

/// The lanes of one process: up to [`MAX_LANES`] delays, those of the most
/// links first (ties: the shorter delay), among the links whose two ends
/// lie in process `me`. Returns each link's lane ([`NO_LANE`] for the
/// others) and the number of lanes.
pub fn assign(links: &[(LpId, LpId, Time)], me: LpId) -> (Vec<u8>, usize) {
    let mut count: std::collections::BTreeMap<Time, usize> = Default::default();
    for &(tx, rx, d) in links {
        if tx == me && rx == me {
            *count.entry(d).or_default() += 1;
        }
    }
    let mut by: Vec<(usize, Time)> = count.into_iter().map(|(d, n)| (n, d)).collect();
    by.sort_by_key(|&(n, d)| (std::cmp::Reverse(n), d));
    by.truncate(MAX_LANES);
    let lane_of = |d: Time| by.iter().position(|&(_, x)| x == d);
    let lanes = (links.iter())
        .map(|&(tx, rx, d)| match lane_of(d) {
            Some(i) if tx == me && rx == me => i as u8,
            _ => NO_LANE,
        })
        .collect();
    (lanes, by.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{EventQueue, RngStream, TieBreak};

    fn transit(time: Time, owner: u64, seq: u64) -> Transit {
        Transit {
            time,
            owner,
            seq,
            link: LocalLink(0),
            to: NodeId(0),
            lossy: false,
            pkt: Packet::default(),
        }
    }

    /// Lanes of several delays, fed as links feed them (time = now + a
    /// serialisation time of 0 to 3 µs + delay, so that a later push may
    /// be due before earlier ones; owners in any order at one time) and
    /// merged with an event queue, give exactly the order of one event
    /// queue holding all.
    #[test]
    fn lanes_merged_with_the_queue_give_the_queues_order() {
        let delays = [0u64, 5, 1_000, 1_000_000];
        let mut lanes = Lanes::new(delays.len());
        let mut q: EventQueue<u64> = EventQueue::new();
        let mut reference: EventQueue<u64> = EventQueue::new();
        let mut rng = RngStream::new(3, 4);
        let (mut now, mut seq) = (0u64, 0u64);
        let (mut got, mut want) = (Vec::new(), Vec::new());
        for step in 0..30_000u64 {
            for _ in 0..(step % 3) {
                // few owners, so that equal times meet on one lane
                let owner = rng.below(6);
                let tie = TieBreak { owner, seq };
                if rng.below(3) == 0 {
                    let at = now + rng.below(2_000);
                    q.schedule(at, tie, seq);
                    reference.schedule(at, tie, seq);
                } else {
                    let l = rng.below(delays.len() as u64) as usize;
                    let ser = [0, 1, 1_000, 3_000][rng.below(4) as usize];
                    let at = now + ser + delays[l];
                    lanes.push(l as u8, transit(at, owner, seq));
                    reference.schedule(at, tie, seq);
                }
                seq += 1;
            }
            if step % 2 == 0 {
                let from_lane = match (q.peek_key(), lanes.peek()) {
                    (Some(a), Some((_, b))) => b < a,
                    (None, Some(_)) => true,
                    (_, None) => false,
                };
                let next = if from_lane {
                    let (l, _) = lanes.peek().unwrap();
                    let t = lanes.pop(l);
                    Some((t.time, t.seq))
                } else {
                    q.pop()
                };
                if let Some((t, s)) = next {
                    now = t;
                    got.push((t, s));
                    want.push(reference.pop().unwrap());
                }
            }
        }
        assert!(got.len() > 10_000);
        assert_eq!(got, want);
        assert_eq!(lanes.popped() as usize + q.popped() as usize, got.len());
    }

    /// The most common delays among the process's own links get the
    /// lanes; cut links and the rarest delays keep their pipes.
    #[test]
    fn lanes_go_to_the_commonest_delays_of_links_held_whole() {
        let (a, b) = (LpId(0), LpId(1));
        let mut links = vec![(a, b, 7)];
        links.extend((0..=MAX_LANES as u64).flat_map(|d| (0..=d).map(move |_| (a, a, d))));
        let (lanes, n) = assign(&links, a);
        assert_eq!(n, MAX_LANES);
        assert_eq!(lanes[0], NO_LANE, "a cut link");
        // delay MAX_LANES has the most links, delay 0 the fewest
        assert_eq!(lanes[links.len() - 1], 0);
        assert_eq!(lanes[1], NO_LANE, "the rarest delay");
        let (lanes, n) = assign(&links, b);
        assert_eq!((n, lanes.iter().all(|&l| l == NO_LANE)), (0, true));
    }
}
