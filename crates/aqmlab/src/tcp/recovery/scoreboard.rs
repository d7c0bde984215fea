//! The SACK scoreboard of RFC 6675 §2–§4 (`Update()`, `IsLost()`,
//! `SetPipe()`), built so that an ACK costs O(log n) or amortised O(1),
//! never a walk over the window:
//!
//! - SACKed runs sit in an interval map (`BTreeMap` start → end), so the
//!   part of a reported block that is new is found in O(log n) however
//!   often the receiver repeats the block;
//! - per-segment flags (`SACKED`, `LOST`, `RETX`) from `snd_una` up, with
//!   counters of each, so that `pipe` is arithmetic:
//!   `pipe = outstanding − sacked − lost + retransmitted` (RFC 6675 §4
//!   SetPipe: a segment counts once if it is neither SACKed nor lost, and
//!   once more if it was retransmitted and is neither SACKed nor acked);
//! - `IsLost(S)` holds when at least DupThresh segments above `S` are
//!   SACKed (in segments the two conditions of RFC 6675 §4 coincide), so the
//!   lost segments are the un-SACKed ones below the DupThresh-th highest
//!   SACKed segment: a boundary that only moves up, found by looking at the
//!   top DupThresh runs of the map, and marked by a moving pointer. Every
//!   segment is marked SACKed, lost, retransmitted and acknowledged at most
//!   a bounded number of times.
//!
//! With [`Scoreboard::sticky_retx`] (ns-3 3.44, `tcp.sack_variant = "ns3"`)
//! a retransmission stays counted when it is SACKed: `TcpTxBuffer::Update`
//! sets `m_sacked` and adds to `m_sackedOut` but leaves the item's
//! `m_retrans` and the `m_retrans` total alone, and only `RemoveFromCounts`
//! (the cumulative ACK passing the segment) or `SetSentListLost` (a
//! timeout) takes it off. `BytesInFlight () = m_sentSize − m_sackedOut −
//! m_lostOut + m_retrans` then counts every SACKed retransmission once
//! while a hole below it is open: a segment the receiver holds, counted as
//! in flight.
//!
//! Sequence numbers are segments (the simulator's model).

use std::collections::{BTreeMap, VecDeque};

const SACKED: u8 = 1;
const LOST: u8 = 2;
const RETX: u8 = 4;

#[derive(Debug, Default)]
pub struct Scoreboard {
    /// Segment of `flags[0]` (snd_una).
    una: u32,
    flags: VecDeque<u8>,
    runs: BTreeMap<u32, u32>,
    sacked: u32,
    lost: u32,
    retx: u32,
    /// Un-SACKed segments below this are marked lost.
    lost_hi: u32,
    /// Segments newly SACKed since the owner last drained this (RACK).
    pub newly_sacked: Vec<u32>,
    /// Record newly SACKed segments in `newly_sacked`.
    pub record: bool,
    /// ns-3 3.44: a SACKed retransmission stays in the retransmitted count
    /// (and so in `pipe`) until the cumulative ACK passes it or a timeout
    /// (see the module's note).
    pub sticky_retx: bool,
}

impl Scoreboard {
    pub fn una(&self) -> u32 {
        self.una
    }
    /// One past the highest segment tracked (snd_max).
    pub fn high(&self) -> u32 {
        self.una + self.flags.len() as u32
    }
    /// SACKed segments above `snd_una`.
    pub fn sacked(&self) -> u32 {
        self.sacked
    }
    /// Segments marked lost and not SACKed.
    pub fn lost(&self) -> u32 {
        self.lost
    }
    /// Retransmitted segments neither SACKed nor acknowledged (with
    /// `sticky_retx`: not acknowledged, SACKed or not).
    pub fn retransmitted(&self) -> u32 {
        self.retx
    }
    /// RFC 6675 §4 SetPipe.
    pub fn pipe(&self) -> u32 {
        self.flags.len() as u32 - self.sacked - self.lost + self.retx
    }
    /// One past the highest SACKed segment, if any.
    pub fn high_sacked(&self) -> Option<u32> {
        self.runs.last_key_value().map(|(_, &e)| e)
    }

    fn flag(&self, seq: u32) -> u8 {
        if seq < self.una {
            return SACKED; // acknowledged: treated as delivered
        }
        self.flags
            .get((seq - self.una) as usize)
            .copied()
            .unwrap_or(0)
    }
    pub fn is_sacked(&self, seq: u32) -> bool {
        self.flag(seq) & SACKED != 0
    }
    /// Marked lost (RFC 6675 IsLost, as of the last [`Scoreboard::mark_lost`]).
    pub fn is_lost(&self, seq: u32) -> bool {
        self.flag(seq) & (LOST | SACKED) == LOST
    }
    pub fn is_retransmitted(&self, seq: u32) -> bool {
        self.flag(seq) & (RETX | SACKED) == RETX
    }

    /// Segments up to `snd_max` (exclusive) have been sent.
    pub fn extend(&mut self, snd_max: u32) {
        while self.high() < snd_max {
            self.flags.push_back(0);
        }
    }

    /// The cumulative ACK moved to `a`.
    pub fn advance(&mut self, a: u32) {
        while self.una < a && !self.flags.is_empty() {
            let f = self.flags.pop_front().unwrap_or(0);
            if f & SACKED != 0 {
                self.sacked -= 1;
            } else if f & LOST != 0 {
                self.lost -= 1;
            }
            // SACKED and RETX together only with `sticky_retx`
            if f & RETX != 0 {
                self.retx -= 1;
            }
            self.una += 1;
        }
        if self.una < a {
            self.una = a;
        }
        while let Some((&s, &e)) = self.runs.first_key_value() {
            if s >= a {
                break;
            }
            self.runs.remove(&s);
            if e > a {
                self.runs.insert(a, e);
                break;
            }
        }
        self.lost_hi = self.lost_hi.max(self.una);
    }

    fn set_sacked(&mut self, seq: u32) {
        let i = (seq - self.una) as usize;
        let f = self.flags[i];
        if f & SACKED != 0 {
            return;
        }
        if f & LOST != 0 {
            self.lost -= 1;
        }
        if f & RETX != 0 && !self.sticky_retx {
            self.retx -= 1;
        }
        self.flags[i] = if self.sticky_retx {
            SACKED | (f & RETX)
        } else {
            SACKED
        };
        self.sacked += 1;
        if self.record {
            self.newly_sacked.push(seq);
        }
    }

    /// RFC 6675 Update(): the receiver holds `[s, e)`. Returns the number of
    /// segments newly SACKed. Blocks below `snd_una` or above `snd_max`
    /// are clipped (a D-SACK or a bogus block changes nothing).
    pub fn sack(&mut self, s: u32, e: u32) -> u32 {
        let s = s.max(self.una);
        let e = e.min(self.high());
        if s >= e {
            return 0;
        }
        // Runs overlapping or touching [s, e).
        let mut lo = s;
        let mut hi = e;
        let mut cursor = s;
        let mut new = 0;
        let start_key = match self.runs.range(..=s).next_back() {
            Some((&ps, &pe)) if pe >= s => ps,
            _ => s,
        };
        let touching: Vec<(u32, u32)> = self
            .runs
            .range(start_key..=e)
            .map(|(&a, &b)| (a, b))
            .collect();
        for (rs, re) in touching {
            self.runs.remove(&rs);
            if rs > cursor {
                for q in cursor..rs.min(e) {
                    self.set_sacked(q);
                    new += 1;
                }
            }
            cursor = cursor.max(re);
            lo = lo.min(rs);
            hi = hi.max(re);
        }
        if cursor < e {
            for q in cursor..e {
                self.set_sacked(q);
                new += 1;
            }
        }
        self.runs.insert(lo, hi);
        new
    }

    /// The DupThresh-th highest SACKed segment: every un-SACKed segment
    /// below it has DupThresh SACKed segments above it (IsLost).
    fn loss_boundary(&self, dupthresh: u32) -> Option<u32> {
        let mut acc = 0;
        for (&s, &e) in self.runs.iter().rev() {
            let len = e - s;
            if acc + len >= dupthresh {
                return Some(e - (dupthresh - acc));
            }
            acc += len;
        }
        None
    }

    /// Mark lost every un-SACKed segment for which IsLost holds.
    pub fn mark_lost(&mut self, dupthresh: u32) {
        if let Some(h) = self.loss_boundary(dupthresh) {
            self.mark_lost_below(h);
        }
    }

    /// Mark lost every un-SACKed segment below `h`.
    pub fn mark_lost_below(&mut self, h: u32) {
        let h = h.min(self.high());
        let mut q = self.lost_hi.max(self.una);
        while q < h {
            let i = (q - self.una) as usize;
            if self.flags[i] & (SACKED | LOST) == 0 {
                self.flags[i] |= LOST;
                self.lost += 1;
            }
            q += 1;
        }
        self.lost_hi = self.lost_hi.max(h);
    }

    /// Mark one segment lost (the fast retransmit of a segment IsLost does
    /// not yet cover).
    pub fn force_lost(&mut self, seq: u32) {
        if seq < self.una || seq >= self.high() {
            return;
        }
        let i = (seq - self.una) as usize;
        if self.flags[i] & (SACKED | LOST) == 0 {
            self.flags[i] |= LOST;
            self.lost += 1;
        }
    }

    /// RACK marked `seq` lost (again, if its retransmission was lost too):
    /// it becomes a candidate for NextSeg rule (1).
    pub fn mark_lost_again(&mut self, seq: u32) {
        if seq < self.una || seq >= self.high() {
            return;
        }
        let i = (seq - self.una) as usize;
        let f = self.flags[i];
        if f & SACKED != 0 {
            return;
        }
        if f & RETX != 0 {
            self.retx -= 1;
        }
        if f & LOST == 0 {
            self.lost += 1;
        }
        self.flags[i] = LOST;
        self.lost_hi = self.lost_hi.max(seq + 1);
    }

    /// After a retransmission timeout: every un-SACKed segment is lost and
    /// no retransmission is outstanding (Linux `tcp_timeout_mark_lost`).
    /// O(window), once per timeout.
    pub fn timeout(&mut self) {
        for f in self.flags.iter_mut() {
            *f = if *f & SACKED == 0 { LOST } else { SACKED };
        }
        self.lost = self.flags.len() as u32 - self.sacked;
        self.retx = 0;
        self.lost_hi = self.high();
    }

    /// `seq` was retransmitted.
    pub fn mark_retransmitted(&mut self, seq: u32) {
        let i = (seq - self.una) as usize;
        if self.flags[i] & (SACKED | RETX) == 0 {
            self.flags[i] |= RETX;
            self.retx += 1;
        }
    }

    /// The lowest segment at or above `from` that is lost and not yet
    /// retransmitted (NextSeg rule 1), advancing `from` past what it skips.
    pub fn next_lost(&self, from: &mut u32) -> Option<u32> {
        self.next_lost_below(from, u32::MAX)
    }

    /// [`Scoreboard::next_lost`] among the segments below `cap` only.
    pub fn next_lost_below(&self, from: &mut u32, cap: u32) -> Option<u32> {
        let mut q = (*from).max(self.una);
        let end = self.lost_hi.min(self.high()).min(cap);
        while q < end {
            let f = self.flags[(q - self.una) as usize];
            if f & SACKED == 0 && f & LOST != 0 && f & RETX == 0 {
                *from = q;
                return Some(q);
            }
            q += 1;
        }
        *from = q;
        None
    }

    /// The lowest un-SACKed, not retransmitted segment at or above `from`
    /// and below the highest SACKed one (NextSeg rule 3).
    pub fn next_unsacked(&self, from: u32) -> Option<u32> {
        let end = self.high_sacked()?;
        let mut q = from.max(self.una);
        while q < end {
            let f = self.flags[(q - self.una) as usize];
            if f & (SACKED | RETX) == 0 {
                return Some(q);
            }
            if f & SACKED != 0 {
                // Skip the whole SACKed run.
                q = match self.runs.range(..=q).next_back() {
                    Some((_, &e)) if e > q => e,
                    _ => q + 1,
                };
            } else {
                q += 1;
            }
        }
        None
    }

    /// The highest outstanding un-SACKed segment (NextSeg rule 4).
    pub fn highest_unsacked(&self) -> Option<u32> {
        let mut top = self.high();
        while top > self.una {
            match self.runs.range(..top).next_back() {
                Some((&s, &e)) if e >= top => top = s,
                _ => return Some(top - 1),
            }
        }
        None
    }
}
