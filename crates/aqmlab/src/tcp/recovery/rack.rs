//! RACK loss detection — RFC 8985 ("The RACK-TLP Loss Detection Algorithm
//! for TCP") §6, as Linux `net/ipv4/tcp_recovery.c` runs it: a segment is
//! lost when a segment sent sufficiently later has been delivered.
//!
//! - §6.2 step 2 (`RACK_update`): for each newly acknowledged or SACKed
//!   segment, `RACK.rtt = now − xmit_ts` (a retransmitted segment whose
//!   sample is below min_RTT is skipped: the ACK may be for the original),
//!   and `RACK.xmit_ts`/`RACK.end_seq` follow the most recently sent one.
//! - step 3 (`RACK_detect_reordering`): a never-retransmitted segment
//!   delivered below `RACK.fack` (the highest delivered end) means
//!   reordering.
//! - step 4 (`RACK_update_reo_wnd`): without reordering seen, 0 in recovery
//!   or once DupThresh segments are SACKed; else `min(min_RTT/4, SRTT)`
//!   (`reo_wnd_mult` = 1; D-SACK adaptation not modelled — the simulated
//!   receiver sends no D-SACK).
//! - step 5 (`RACK_detect_loss`): every segment sent before `RACK.xmit_ts`
//!   whose `xmit_ts + RACK.rtt + reo_wnd ≤ now` is lost; for the others the
//!   reordering timer is armed at the latest such deadline.
//!
//! Segments are kept in a map ordered by transmission time (Linux's
//! `tsorted_sent_queue`); delivered and lost segments leave it, so a walk
//! visits only segments that are still outstanding and sent before
//! `RACK.xmit_ts` — the holes — not the window. Tail loss probes (§7,
//! `tcp.tlp`) are sent by the sender (`sender.rs`), which shares the
//! retransmission timer with them as Linux does.

use crate::engine::Time;
use std::collections::{BTreeMap, VecDeque};

/// What RACK knows of one segment.
#[derive(Clone, Copy, Debug, Default)]
struct Seg {
    xmit: Time,
    order: u64,
    /// Sent more than once.
    retx: bool,
    /// In `by_time` (outstanding, not delivered, not marked lost).
    live: bool,
    /// Ever sent.
    sent: bool,
}

#[derive(Debug, Default)]
pub struct Rack {
    /// Outstanding segments by (xmit_ts, order) → seq.
    by_time: BTreeMap<(Time, u64), u32>,
    /// Per segment from `base` up.
    seg: VecDeque<Seg>,
    base: u32,
    order: u64,
    /// RACK.xmit_ts, RACK.end_seq of the most recently sent delivered one.
    xmit: Option<(Time, u32)>,
    pub rtt: Time,
    fack: u32,
    pub reordering_seen: bool,
    min_rtt: Option<Time>,
}

impl Rack {
    /// `seq` was (re)transmitted at `now`.
    pub fn on_transmit(&mut self, seq: u32, now: Time) {
        if seq < self.base {
            return;
        }
        let i = (seq - self.base) as usize;
        if self.seg.len() <= i {
            self.seg.resize(i + 1, Seg::default());
        }
        let e = self.seg[i];
        if e.live {
            self.by_time.remove(&(e.xmit, e.order));
        }
        self.order += 1;
        self.by_time.insert((now, self.order), seq);
        self.seg[i] = Seg {
            xmit: now,
            order: self.order,
            retx: e.sent,
            live: true,
            sent: true,
        };
    }

    /// Take a segment out of the time order (delivered or marked lost);
    /// returns its record if it was there.
    fn forget(&mut self, seq: u32) -> Option<Seg> {
        let i = seq.checked_sub(self.base)? as usize;
        let e = self.seg.get_mut(i)?;
        if !e.live {
            return None;
        }
        e.live = false;
        let e = *e;
        self.by_time.remove(&(e.xmit, e.order));
        Some(e)
    }

    /// Step 2 and 3 for one newly delivered segment.
    pub fn on_delivered(&mut self, seq: u32, now: Time) {
        let Some(Seg { xmit: t, retx, .. }) = self.forget(seq) else {
            return;
        };
        let rtt = now.saturating_sub(t);
        if retx && self.min_rtt.is_some_and(|m| rtt < m) {
            return;
        }
        self.rtt = rtt;
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        let end = seq + 1;
        let after = match self.xmit {
            None => true,
            Some((xt, xe)) => t > xt || (t == xt && end > xe),
        };
        if after {
            self.xmit = Some((t, end));
        }
        if end > self.fack {
            self.fack = end;
        } else if end < self.fack && !retx {
            self.reordering_seen = true;
        }
    }

    /// Step 4.
    pub fn reo_wnd(
        &self,
        in_recovery: bool,
        sacked: u32,
        dupthresh: u32,
        srtt: Option<Time>,
    ) -> Time {
        if !self.reordering_seen && (in_recovery || sacked >= dupthresh) {
            return 0;
        }
        let w = self.min_rtt.unwrap_or(0) / 4;
        srtt.map_or(w, |s| w.min(s))
    }

    /// Step 5: the segments now deemed lost, and the reordering timer's
    /// deadline if some may still be.
    pub fn detect_loss(&mut self, now: Time, reo_wnd: Time, lost: &mut Vec<u32>) -> Option<Time> {
        let (xt, xe) = self.xmit?;
        let mut timeout: Option<Time> = None;
        let mut gone = vec![];
        for (&(t, _), &seq) in self.by_time.iter() {
            // only segments sent before RACK.xmit_ts
            if !(xt > t || (xt == t && xe > seq + 1)) {
                break;
            }
            let deadline = t + self.rtt + reo_wnd;
            if deadline <= now {
                gone.push(seq);
            } else {
                timeout = Some(timeout.map_or(deadline, |d: Time| d.max(deadline)));
            }
        }
        for seq in gone {
            self.forget(seq);
            lost.push(seq);
        }
        timeout
    }

    /// The cumulative ACK passed `a`: segments below it are delivered.
    pub fn on_cum_ack(&mut self, from: u32, a: u32, now: Time) {
        for seq in from.max(self.base)..a {
            self.on_delivered(seq, now);
        }
        while self.base < a && !self.seg.is_empty() {
            self.seg.pop_front();
            self.base += 1;
        }
        self.base = self.base.max(a);
    }

    /// After a timeout everything outstanding is lost and will be resent
    /// (segments keep their "sent" mark, so the resends count as
    /// retransmissions).
    pub fn clear(&mut self) {
        self.by_time.clear();
        for e in self.seg.iter_mut() {
            e.live = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: Time = 1_000_000;

    /// RFC 8985 §6.2: with no reordering seen and fewer than DupThresh
    /// SACKed segments the reordering window is min_RTT/4; a hole is lost
    /// only once `xmit_ts + RACK.rtt + reo_wnd` has passed, and until then
    /// the reordering timer is armed at that deadline.
    #[test]
    fn reordering_window_delays_marking() {
        let mut r = Rack::default();
        // 0..4 sent 1 ms apart; 0 is lost, 1 is SACKed 100 ms after it left
        for s in 0..4u32 {
            r.on_transmit(s, s as Time * MS);
        }
        r.on_delivered(1, 101 * MS);
        assert_eq!(r.rtt, 100 * MS);
        let reo = r.reo_wnd(false, 1, 3, Some(100 * MS));
        assert_eq!(reo, 25 * MS, "min_RTT/4");
        let mut lost = vec![];
        // 0 left at 0: lost at 0 + 100 + 25 = 125 ms, not before
        let t = r.detect_loss(101 * MS, reo, &mut lost);
        assert!(lost.is_empty());
        assert_eq!(t, Some(125 * MS), "reordering timer at the deadline");
        let t = r.detect_loss(125 * MS, reo, &mut lost);
        assert_eq!(lost, vec![0]);
        assert_eq!(t, None, "2 and 3 were sent after RACK.xmit_ts");
        // With DupThresh SACKed (or in recovery) and no reordering: 0 window.
        assert_eq!(r.reo_wnd(false, 3, 3, Some(100 * MS)), 0);
        assert_eq!(r.reo_wnd(true, 0, 3, Some(100 * MS)), 0);
    }

    /// RFC 8985 §6.2 step 3: a segment delivered below RACK.fack that was
    /// never retransmitted is reordering; the window then stays open in
    /// recovery, capped at SRTT.
    #[test]
    fn reordering_is_detected_and_keeps_the_window() {
        let mut r = Rack::default();
        for s in 0..3u32 {
            r.on_transmit(s, s as Time * MS);
        }
        r.on_delivered(2, 102 * MS);
        assert!(!r.reordering_seen);
        r.on_delivered(0, 103 * MS); // late, never retransmitted
        assert!(r.reordering_seen);
        assert_eq!(r.reo_wnd(true, 5, 3, Some(100 * MS)), 25 * MS);
        assert_eq!(
            r.reo_wnd(true, 5, 3, Some(10 * MS)),
            10 * MS,
            "capped at SRTT"
        );
    }

    /// A retransmission's sample below min_RTT is ambiguous and skipped.
    #[test]
    fn retransmitted_samples_below_min_rtt_are_skipped() {
        let mut r = Rack::default();
        r.on_transmit(0, 0);
        r.on_transmit(1, 0);
        r.on_delivered(1, 100 * MS);
        r.on_transmit(0, 150 * MS); // retransmission
        r.on_delivered(0, 160 * MS); // 10 ms: an ACK of the original
        assert_eq!(r.rtt, 100 * MS);
    }

    /// A segment marked lost and resent is a retransmission: delivered below
    /// RACK.fack, it is not taken for reordering.
    #[test]
    fn repaired_losses_are_not_reordering() {
        let mut r = Rack::default();
        for s in 0..4u32 {
            r.on_transmit(s, s as Time * MS);
        }
        r.on_delivered(3, 103 * MS);
        let mut lost = vec![];
        r.detect_loss(200 * MS, 0, &mut lost);
        assert_eq!(lost, vec![0, 1, 2]);
        r.on_transmit(0, 200 * MS);
        r.on_delivered(0, 300 * MS);
        assert!(!r.reordering_seen);
        assert_eq!(r.rtt, 100 * MS);
    }
}
