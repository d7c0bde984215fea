//! Delivery-rate estimation, after Linux 6.1 `net/ipv4/tcp_rate.c` and
//! draft-cheng-iccrg-delivery-rate-estimation-02 (Cheng, Cardwell, Yeganeh,
//! Jacobson).
//!
//! Each transmission (retransmissions included) stamps its segment with
//! the connection's delivery state (`tcp_rate_skb_sent`): `delivered` so
//! far, the time `delivered` last grew (`delivered_mstamp`), the send time
//! of the most recently acknowledged segment when this one left
//! (`first_tx_mstamp`), and whether the sender was application-limited.
//! When an ACK cumulatively acknowledges or SACKs segments, each newly
//! delivered one is counted once (a SACKed segment is not counted again
//! when the cumulative ACK passes it), and the one sent last supplies the
//! sample's prior state (`tcp_rate_skb_delivered`). The sample
//! (`tcp_rate_gen`) is
//! `delivered = delivered_now − prior_delivered` over
//! `interval = max(send phase, ACK phase)`, where the send phase runs from
//! the prior segment's `first_tx_mstamp` to the newest acknowledged
//! segment's send time, and the ACK phase from the prior
//! `delivered_mstamp` to now. A sample whose interval is shorter than the
//! minimum RTT is discarded (`interval = None`). Counting is in segments
//! (ns-2's model), as Linux counts packets.
//!
//! Application-limited periods (`tcp_rate_check_app_limited`): when a
//! sized transfer has nothing more to send and the flight is below cwnd,
//! `app_limited = delivered + in_flight` (at least 1); samples from
//! segments sent while it was set are flagged, until `delivered` passes it.

use crate::engine::Time;
use std::collections::VecDeque;

/// One ACK's delivery-rate sample (Linux `struct rate_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// Segments delivered over the interval (`tp->delivered −
    /// prior_delivered`); `None` when the sample is invalid.
    pub delivered: Option<u64>,
    /// The sample's interval (`interval_us`); `None` when invalid (no
    /// prior state, or shorter than the minimum RTT).
    pub interval: Option<Time>,
    /// Segments this ACK newly cumulatively acknowledged or SACKed.
    pub acked_sacked: u32,
    /// Segments newly detected lost on this ACK.
    pub losses: u32,
    /// `delivered` when the segment supplying the sample was sent.
    pub prior_delivered: u64,
    /// CE-echoed segments delivered over the interval.
    pub delivered_ce: u64,
    /// Segments in flight before this ACK was processed.
    pub prior_in_flight: u32,
    /// RTT of the most recently sent newly delivered segment that was not
    /// retransmitted (Linux `rs->rtt_us` from `ca_rtt_us`/`sack_rtt_us`).
    pub rtt: Option<Time>,
    /// The segment supplying the sample was sent application-limited.
    pub is_app_limited: bool,
    /// The segment supplying the sample was a retransmission.
    pub is_retrans: bool,
    /// Segments outstanding when the segment supplying the sample was
    /// sent, itself included (the BBR v3 `rs->tx_in_flight`).
    pub tx_in_flight: u32,
    /// Segments marked lost between that segment's sending and this ACK
    /// (the BBR v3 `rs->lost` = `tp->lost − tx.lost`).
    pub lost: u64,
    /// The ACK carried ECE (`rs->is_ece`).
    pub is_ece: bool,
    /// The sender is in fast recovery after this ACK.
    pub in_recovery: bool,
    /// The connection's totals after this ACK: `tp->delivered`,
    /// `tp->lost`, `tp->delivered_mstamp`.
    pub total_delivered: u64,
    pub total_lost: u64,
    pub delivered_time: Time,
    /// `tp->delivered_ce` after this ACK.
    pub total_delivered_ce: u64,
}

impl RateSample {
    /// Delivery rate in segments per second, if the sample is valid.
    pub fn rate(&self) -> Option<f64> {
        match (self.delivered, self.interval) {
            (Some(d), Some(i)) if i > 0 => Some(d as f64 * 1e9 / i as f64),
            _ => None,
        }
    }
}

/// Per-segment state stamped at each transmission (`skb->tx`).
#[derive(Clone, Copy, Debug, Default)]
struct Tx {
    sent: Time,
    first_tx: Time,
    /// `None` once the segment has been counted delivered (SACKed).
    delivered_time: Option<Time>,
    delivered: u64,
    delivered_ce: u64,
    app_limited: bool,
    retrans: bool,
    /// Outstanding segments with this one (`tx.in_flight`), `tp->lost`
    /// at sending (`tx.lost`).
    in_flight: u32,
    lost: u64,
}

/// The connection's delivery state and the per-segment stamps of
/// segments `una..una + seg.len()`.
#[derive(Debug, Default)]
pub struct RateEstimator {
    seg: VecDeque<Tx>,
    una: u32,
    /// `tp->delivered`, `tp->delivered_ce`, `tp->lost`.
    pub delivered: u64,
    pub delivered_ce: u64,
    pub lost: u64,
    /// `tp->delivered_mstamp`, `tp->first_tx_mstamp`.
    pub delivered_time: Time,
    first_tx: Time,
    /// `tp->app_limited` (0: not application-limited).
    app_limited: u64,
    /// State of the sample being built for the current ACK.
    cur: Building,
}

#[derive(Debug, Default, Clone, Copy)]
struct Building {
    prior: Option<(u64, u64, Time)>,
    last_sent: Time,
    last_seq: u32,
    is_app_limited: bool,
    is_retrans: bool,
    tx_in_flight: u32,
    tx_lost: u64,
    send_phase: Time,
    newest_rtt_sent: Option<Time>,
}

impl RateEstimator {
    /// Segment `seq` leaves at `now` (`tcp_rate_skb_sent`); `packets_out`
    /// is the number outstanding before it.
    pub fn on_send(&mut self, seq: u32, now: Time, packets_out: u32) {
        if packets_out == 0 {
            self.first_tx = now;
            self.delivered_time = now;
        }
        if self.seg.is_empty() && packets_out == 0 {
            self.una = seq;
        }
        let tx = Tx {
            sent: now,
            first_tx: self.first_tx,
            delivered_time: Some(self.delivered_time),
            delivered: self.delivered,
            delivered_ce: self.delivered_ce,
            app_limited: self.app_limited != 0,
            retrans: false,
            in_flight: packets_out + 1,
            lost: self.lost,
        };
        let i = seq.wrapping_sub(self.una) as usize;
        if i < self.seg.len() {
            // a retransmission: restamped, flagged
            self.seg[i] = Tx {
                retrans: true,
                ..tx
            };
        } else {
            while self.seg.len() < i {
                self.seg.push_back(Tx::default());
            }
            self.seg.push_back(tx);
        }
    }

    /// `tcp_rate_skb_delivered` for the segment at index `i`.
    fn deliver(&mut self, i: usize, seq: u32, sacked: bool) -> bool {
        let tx = self.seg[i];
        let Some(dt) = tx.delivered_time else {
            return false;
        };
        let b = &mut self.cur;
        // tcp_skb_sent_after: a later send time, or the same and a higher
        // sequence
        if b.prior.is_none()
            || tx.sent > self.first_tx
            || (tx.sent == self.first_tx && seq > b.last_seq)
        {
            b.prior = Some((tx.delivered, tx.delivered_ce, dt));
            b.is_app_limited = tx.app_limited;
            b.is_retrans = tx.retrans;
            b.tx_in_flight = tx.in_flight;
            b.tx_lost = tx.lost;
            b.last_seq = seq;
            self.first_tx = tx.sent;
            b.send_phase = tx.sent - tx.first_tx;
        }
        if !tx.retrans && b.newest_rtt_sent.is_none_or(|t| tx.sent > t) {
            b.newest_rtt_sent = Some(tx.sent);
        }
        b.last_sent = b.last_sent.max(tx.sent);
        if sacked {
            self.seg[i].delivered_time = None;
        }
        true
    }

    /// An ACK arrived at `now`: cumulative ACK `cum`, SACK blocks
    /// `[start, end)`, ECE set or not; `losses` segments newly detected
    /// lost; `min_rtt` the minimum RTT so far. Returns the sample
    /// (`tcp_rate_gen`).
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        now: Time,
        cum: u32,
        sack: &[(u32, u32)],
        ece: bool,
        losses: u32,
        prior_in_flight: u32,
        min_rtt: Option<Time>,
    ) -> RateSample {
        self.cur = Building::default();
        let mut newly = 0u32;
        // SACKed segments above the cumulative ACK
        for &(s, e) in sack {
            let s = s.max(cum).max(self.una);
            let end = e.min(self.una + self.seg.len() as u32);
            for seq in s..end {
                let i = (seq - self.una) as usize;
                if self.deliver(i, seq, true) {
                    newly += 1;
                }
            }
        }
        // cumulatively acknowledged segments, each counted once
        while self.una < cum {
            let Some(_) = self.seg.front() else {
                self.una = cum;
                break;
            };
            if self.deliver(0, self.una, false) {
                newly += 1;
            }
            self.seg.pop_front();
            self.una += 1;
        }
        self.delivered += newly as u64;
        if ece {
            self.delivered_ce += newly as u64;
        }
        self.lost += losses as u64;
        // tcp_rate_gen
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if newly > 0 {
            self.delivered_time = now;
        }
        let b = self.cur;
        let mut rs = RateSample {
            acked_sacked: newly,
            losses,
            prior_in_flight,
            rtt: b.newest_rtt_sent.map(|t| now - t),
            is_app_limited: b.is_app_limited,
            is_retrans: b.is_retrans,
            is_ece: ece,
            total_delivered: self.delivered,
            total_lost: self.lost,
            delivered_time: self.delivered_time,
            total_delivered_ce: self.delivered_ce,
            ..RateSample::default()
        };
        let Some((pd, pce, pt)) = b.prior else {
            return rs;
        };
        rs.prior_delivered = pd;
        rs.tx_in_flight = b.tx_in_flight;
        rs.lost = self.lost - b.tx_lost;
        rs.delivered = Some(self.delivered - pd);
        rs.delivered_ce = self.delivered_ce - pce;
        let interval = b.send_phase.max(now - pt);
        if min_rtt.is_some_and(|m| interval < m) {
            return rs;
        }
        rs.interval = Some(interval);
        rs
    }

    /// `tcp_rate_check_app_limited`: nothing more to send and the flight
    /// below cwnd (and no lost segment waiting): mark the bubble.
    pub fn check_app_limited(&mut self, in_flight: u32) {
        self.app_limited = (self.delivered + in_flight as u64).max(1);
    }

    /// Whether the sender is application-limited (`tp->app_limited`).
    pub fn app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// Mark application-limited as Linux BBR does in ProbeRTT.
    pub fn set_app_limited(&mut self, in_flight: u32) {
        self.check_app_limited(in_flight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    /// Send `n` segments from `first` at `t`, `gap` apart.
    fn send(r: &mut RateEstimator, first: u32, n: u32, t: Time, gap: Time, out: &mut u32) {
        for k in 0..n {
            r.on_send(first + k, t + k as Time * gap, *out);
            *out += 1;
        }
    }

    /// A steady flow: 10 segments sent 1 ms apart, each ACKed 50 ms after
    /// it left: every sample after the first is 1 segment per ms.
    #[test]
    fn steady_flow_gives_the_sending_rate() {
        let mut r = RateEstimator::default();
        let mut out = 0;
        send(&mut r, 0, 10, 0, MS, &mut out);
        let mut last = None;
        for k in 0..10u32 {
            let now = 50 * MS + k as Time * MS;
            let rs = r.on_ack(now, k + 1, &[], false, 0, out, Some(50 * MS));
            out -= 1;
            assert_eq!(rs.acked_sacked, 1);
            assert_eq!(rs.rtt, Some(50 * MS));
            last = Some(rs);
        }
        // the last: delivered 10 − 0 over max(send 9 ms, ACK 59 ms)
        let rs = last.unwrap();
        assert_eq!(rs.delivered, Some(10));
        assert_eq!(rs.interval, Some(59 * MS));
        assert_eq!(r.delivered, 10);
    }

    /// tcp_rate.c: "the ACK phase ... can be shorter than the send phase
    /// (when ACKs are compressed), so the sample uses the longer": 4
    /// segments sent over 40 ms, all ACKed at once 50 ms after the first.
    #[test]
    fn compressed_acks_use_the_send_phase() {
        let mut r = RateEstimator::default();
        let mut out = 0;
        send(&mut r, 0, 4, 0, 10 * MS, &mut out);
        // the first ACK: segment 0 at 50 ms
        let rs = r.on_ack(50 * MS, 1, &[], false, 0, 4, None);
        assert_eq!((rs.delivered, rs.interval), (Some(1), Some(50 * MS)));
        // a stretched ACK of segments 1..4 at 81 ms: prior state from
        // segment 3 (sent at 30 ms when delivered = 0, delivered_mstamp 0,
        // first_tx 0): delivered 4 over max(30 − 0, 81 − 0) ms
        let rs = r.on_ack(81 * MS, 4, &[], false, 0, 3, None);
        assert_eq!((rs.delivered, rs.interval), (Some(4), Some(81 * MS)));
        assert_eq!(rs.rtt, Some(51 * MS), "newest: segment 3 sent at 30 ms");
    }

    /// SACKed segments count once: a SACK of 2..4 delivers 2 segments; the
    /// cumulative ACK that later covers them delivers only the hole.
    #[test]
    fn sacked_segments_are_counted_once() {
        let mut r = RateEstimator::default();
        let mut out = 0;
        send(&mut r, 0, 4, 0, MS, &mut out);
        let rs = r.on_ack(40 * MS, 0, &[(2, 4)], false, 0, 4, None);
        assert_eq!(rs.acked_sacked, 2);
        assert_eq!(rs.delivered, Some(2));
        // the same block again: nothing new, no sample
        let rs = r.on_ack(41 * MS, 0, &[(2, 4)], false, 0, 4, None);
        assert_eq!(rs.acked_sacked, 0);
        assert_eq!(rs.delivered, None);
        // segments 0 and 1 retransmitted at 41 ms (restamped: delivered
        // = 2, delivered_mstamp = 40 ms), then cumulatively ACKed
        r.on_send(0, 41 * MS, 4);
        r.on_send(1, 41 * MS, 4);
        let rs = r.on_ack(81 * MS, 4, &[], false, 1, 4, None);
        assert_eq!(rs.acked_sacked, 2);
        assert_eq!(r.delivered, 4);
        assert!(rs.is_retrans);
        assert_eq!(rs.rtt, None, "no RTT from retransmitted segments");
        // prior from segment 1 (retransmitted at 41 ms, delivered 2 then,
        // first_tx = 3 ms, the newest SACKed segment's send time):
        // delivered 4 − 2 over max(41 − 3, 81 − 40) ms
        assert_eq!(rs.delivered, Some(2));
        assert_eq!(rs.interval, Some(41 * MS));
        assert_eq!(r.lost, 1);
    }

    /// Application-limited: segments sent while the bubble is marked give
    /// flagged samples until `delivered` passes the mark.
    #[test]
    fn app_limited_samples_are_flagged_until_the_bubble_is_acked() {
        let mut r = RateEstimator::default();
        let mut out = 0;
        send(&mut r, 0, 2, 0, MS, &mut out);
        r.check_app_limited(2); // app_limited = 0 + 2
        send(&mut r, 2, 2, 2 * MS, MS, &mut out);
        let rs = r.on_ack(40 * MS, 2, &[], false, 0, 4, None);
        assert!(!rs.is_app_limited, "segments 0, 1 sent before the mark");
        assert!(r.app_limited());
        let rs = r.on_ack(42 * MS, 3, &[], false, 0, 2, None);
        assert!(rs.is_app_limited, "segment 2 sent app-limited");
        assert!(!r.app_limited(), "delivered 3 > 2: bubble gone");
    }

    /// A sample whose interval is below the minimum RTT is discarded.
    #[test]
    fn intervals_below_min_rtt_are_invalid() {
        let mut r = RateEstimator::default();
        let mut out = 0;
        send(&mut r, 0, 1, 0, MS, &mut out);
        let rs = r.on_ack(10 * MS, 1, &[], false, 0, 1, Some(20 * MS));
        assert_eq!(rs.delivered, Some(1));
        assert_eq!(rs.interval, None);
        assert_eq!(rs.rate(), None);
    }
}
