//! Proportional Rate Reduction — RFC 6937 §3 (PRR-SSRB, the slow-start
//! reduction bound the RFC recommends and Linux `tcp_cwnd_reduction` uses).
//!
//! At the start of recovery `prr_delivered = prr_out = 0` and `RecoverFS =
//! snd.nxt − snd.una`. On every ACK in recovery:
//!
//! ```text
//! DeliveredData = Δsnd.una + ΔSACKed
//! prr_delivered += DeliveredData
//! if pipe > ssthresh:  sndcnt = ⌈prr_delivered · ssthresh / RecoverFS⌉ − prr_out
//! else:                sndcnt = min(ssthresh − pipe,
//!                                   max(prr_delivered − prr_out, DeliveredData) + 1)
//! cwnd = pipe + sndcnt
//! ```
//!
//! and every segment sent adds one to `prr_out`. On the ACK that starts
//! recovery at least one segment (the fast retransmit) may go, as in Linux
//! (`tcp_cwnd_reduction`'s `fast_rexmit`). Units are segments.
//!
//! [`PrrNs3`] is ns-3 3.44's `TcpPrrRecovery` (tcp-prr-recovery.cc,
//! `EnterRecovery` / `DoRecovery` / `UpdateBytesSent`) as coded, for
//! `tcp.sack_variant = "ns3"`. It differs from the RFC in five places:
//! RecoverFS is the pipe at entry (`m_recoveryFlightSize =
//! m_bytesInFlight`), not snd.nxt − snd.una; a call with `isDupAck` adds one
//! SMSS to DeliveredData while `prr_delivered < RecoverFS`; a call that
//! delivers nothing returns before touching cwnd; below ssthresh the bound
//! is PRR-CRB, with SSRB's extra SMSS only on a "safe" ACK
//! (`m_isRetransDataAcked`: the cumulative ACK covered a retransmission);
//! and the arithmetic is 32-bit unsigned bytes: `m_prrDelivered *
//! m_ssThresh` wraps modulo 2^32 before it is divided by RecoverFS (so once
//! `prr_delivered · ssthresh` passes 4 GiB — after 1 to 12 segments at the
//! windows of 100 to 3000 segments the kit runs — the proportional part
//! lets almost nothing go), and `max(m_prrDelivered − m_prrOut,
//! deliveredBytes)` wraps to a negative limit (nothing sent) whenever
//! more was sent than delivered.

/// PRR state of one recovery episode.
#[derive(Clone, Debug, PartialEq)]
pub struct Prr {
    pub recover_fs: u32,
    pub prr_delivered: u64,
    pub prr_out: u64,
}

impl Prr {
    pub fn new(recover_fs: u32) -> Prr {
        Prr {
            recover_fs: recover_fs.max(1),
            prr_delivered: 0,
            prr_out: 0,
        }
    }

    /// Segments that may be sent on this ACK (`sndcnt`).
    pub fn sndcnt(&mut self, delivered: u32, pipe: u32, ssthresh: f64, entering: bool) -> u32 {
        self.prr_delivered += delivered as u64;
        let ss = ssthresh.floor().max(0.0) as i64;
        let pipe = pipe as i64;
        let out = self.prr_out as i64;
        let mut sndcnt = if pipe > ss {
            let num = self.prr_delivered as i64 * ss;
            let fs = self.recover_fs as i64;
            (num + fs - 1) / fs - out
        } else {
            let limit = (self.prr_delivered as i64 - out).max(delivered as i64) + 1;
            (ss - pipe).min(limit)
        };
        if entering && self.prr_out == 0 {
            sndcnt = sndcnt.max(1);
        }
        sndcnt.max(0) as u32
    }

    /// A segment was sent in recovery.
    pub fn on_sent(&mut self) {
        self.prr_out += 1;
    }
}

/// ns-3 3.44 `TcpPrrRecovery` as coded (bytes, 32-bit unsigned like
/// `m_prrDelivered`, `m_prrOut`, `m_recoveryFlightSize`, `m_ssThresh`,
/// `m_bytesInFlight`).
#[derive(Clone, Debug, PartialEq)]
pub struct PrrNs3 {
    pub mss: u32,
    pub recover_fs: u32,
    pub prr_delivered: u32,
    pub prr_out: u32,
}

impl PrrNs3 {
    /// `TcpPrrRecovery::EnterRecovery`: RecoverFS = the pipe (bytes) when
    /// recovery starts; the caller then runs [`PrrNs3::do_recovery`] with
    /// `is_dupack = true`.
    pub fn new(recover_fs: u32, mss: u32) -> PrrNs3 {
        PrrNs3 {
            mss,
            recover_fs,
            prr_delivered: 0,
            prr_out: 0,
        }
    }

    /// `TcpPrrRecovery::DoRecovery (tcb, deliveredBytes, isDupAck)`: the new
    /// cwnd in bytes, or `None` when it returns early (nothing delivered:
    /// cwnd stays). `pipe` is `tcb->m_bytesInFlight` as last computed, `safe`
    /// is `tcb->m_isRetransDataAcked`.
    pub fn do_recovery(
        &mut self,
        delivered: u32,
        pipe: u32,
        ssthresh: u32,
        is_dupack: bool,
        safe: bool,
    ) -> Option<u32> {
        let mut delivered = delivered;
        if is_dupack && self.prr_delivered < self.recover_fs {
            delivered = delivered.wrapping_add(self.mss);
        }
        if delivered == 0 {
            return None;
        }
        self.prr_delivered = self.prr_delivered.wrapping_add(delivered);
        let send_count: i32 = if pipe > ssthresh {
            // `std::ceil (m_prrDelivered * tcb->m_ssThresh * 1.0 /
            // m_recoveryFlightSize) - m_prrOut`: the product is uint32_t
            let prod = self.prr_delivered.wrapping_mul(ssthresh) as f64;
            let fs = self.recover_fs.max(1) as f64;
            ((prod / fs).ceil() - self.prr_out as f64) as i32
        } else {
            // `int limit = std::max (m_prrDelivered - m_prrOut,
            // deliveredBytes)`: uint32_t max, then int
            let mut limit = self.prr_delivered.wrapping_sub(self.prr_out).max(delivered) as i32;
            if safe {
                limit = limit.wrapping_add(self.mss as i32);
            }
            limit.min(ssthresh.wrapping_sub(pipe) as i32)
        };
        // "Force a fast retransmit upon entering fast recovery"
        let floor = if self.prr_out > 0 { 0 } else { self.mss as i32 };
        let send_count = send_count.max(floor);
        Some(pipe.wrapping_add(send_count as u32))
    }

    /// `UpdateBytesSent`: a segment of `bytes` left in recovery.
    pub fn on_sent(&mut self, bytes: u32) {
        self.prr_out = self.prr_out.wrapping_add(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The single-loss case of RFC 6937 §5: 20 segments outstanding, one
    /// lost, ssthresh 10, one segment delivered per ACK. From the third
    /// duplicate ACK on, PRR sends on every other ACK — the retransmission
    /// first — while pipe > ssthresh (sndcnt = ⌈d·10/20⌉ − out); at ACK 17
    /// pipe reaches ssthresh and PRR-SSRB takes over (ACK 17: ssthresh −
    /// pipe = 0, nothing; ACKs 18 and 19: one each), so pipe ends at
    /// ssthresh with ⌈17·10/20⌉ = 9 segments sent over the 17 ACKs.
    #[test]
    fn rfc6937_single_loss_example() {
        let mut p = Prr::new(20);
        // pipe before the fast retransmit on ACK 3: 20 outstanding − 3
        // SACKed − 1 lost = 16 + (limited transmit in the RFC: 2 more
        // sent on ACKs 1 and 2, which this sender does not do) — model the
        // RFC's pipe column directly.
        let mut pipe: i64 = 18;
        let mut sent_on = vec![];
        for ack in 3..=19u32 {
            // each ACK delivers one segment (a SACK), so pipe drops by one
            pipe -= 1;
            let n = p.sndcnt(1, pipe as u32, 10.0, ack == 3);
            for _ in 0..n {
                p.on_sent();
                pipe += 1;
            }
            if n > 0 {
                sent_on.push(ack);
            }
            assert!(n <= 1);
        }
        assert_eq!(sent_on, vec![3, 5, 7, 9, 11, 13, 15, 18, 19]);
        assert_eq!(p.prr_out, 9, "⌈17·10/20⌉ = 9 segments over 17 ACKs");
        assert_eq!(pipe, 10, "pipe ends at ssthresh");
    }

    /// RFC 6937 §3's reduction bound: once pipe is at or below ssthresh
    /// (heavy losses), PRR-SSRB sends at most one segment more than was
    /// delivered and never above ssthresh.
    #[test]
    fn ssrb_bounds_the_catch_up() {
        let mut p = Prr::new(20);
        // pipe collapsed to 4 (many losses), ssthresh 10: an ACK delivering
        // 2 segments lets 3 go (max(2 − 0, 2) + 1), not 6.
        assert_eq!(p.sndcnt(2, 4, 10.0, false), 3);
        for _ in 0..3 {
            p.on_sent();
        }
        // pipe 9: only one more fits under ssthresh.
        assert_eq!(p.sndcnt(5, 9, 10.0, false), 1);
        // proportional part: pipe above ssthresh sends ⌈7·10/20⌉ − 3 = 1
        let mut q = Prr::new(20);
        assert_eq!(q.sndcnt(7, 15, 10.0, false), 4);
        q.prr_out = 3;
        assert_eq!(q.sndcnt(0, 15, 10.0, false), 1);
    }

    /// ns-3 3.44 `TcpPrrRecovery::DoRecovery` as coded, 1448-B segments.
    #[test]
    fn ns3_do_recovery_rules() {
        let m = 1448;
        // entry: RecoverFS 20 segments, a SACKing ACK delivering one counts
        // two; pipe 18 > ssthresh 10: ⌈2·10/20⌉ − 0 = 1 segment (bytes:
        // 2896·14480 fits in 32 bits)
        let mut p = PrrNs3::new(20 * m, m);
        assert_eq!(p.do_recovery(m, 18 * m, 10 * m, true, false), Some(19 * m));
        assert_eq!(p.prr_delivered, 2 * m);
        p.on_sent(m);
        // nothing delivered, not a dupack: returns early, cwnd kept
        assert_eq!(p.do_recovery(0, 18 * m, 10 * m, false, false), None);
        // below ssthresh: PRR-CRB, max(prr_delivered − prr_out, delivered)
        let mut q = PrrNs3::new(20 * m, m);
        q.prr_delivered = 10 * m;
        q.prr_out = 3 * m;
        assert_eq!(
            q.do_recovery(2 * m, 4 * m, 10 * m, false, false),
            Some(10 * m)
        );
        let mut q = PrrNs3::new(20 * m, m);
        q.prr_out = 3 * m;
        // delivered 2, prr_delivered − prr_out = −1 wraps: limit = −1 seg,
        // nothing goes (the RFC's max(−1, 2) + 1 would send 3)
        assert_eq!(
            q.do_recovery(2 * m, 4 * m, 10 * m, false, false),
            Some(4 * m)
        );
        let mut f = Prr::new(20);
        f.prr_out = 3;
        assert_eq!(f.sndcnt(2, 4, 10.0, false), 3);
        // the same with the ACK covering a retransmission (SSRB's SMSS): 0
        let mut r = PrrNs3::new(20 * m, m);
        r.prr_out = 3 * m;
        assert_eq!(
            r.do_recovery(2 * m, 4 * m, 10 * m, false, true),
            Some(4 * m)
        );
        // below a larger ssthresh (20): CRB max(12 − 3, 2) = 9, SSRB + 1
        let mut r = PrrNs3::new(20 * m, m);
        r.prr_delivered = 10 * m;
        r.prr_out = 3 * m;
        assert_eq!(
            r.do_recovery(2 * m, 4 * m, 20 * m, false, true),
            Some(14 * m)
        );
        let mut r = PrrNs3::new(20 * m, m);
        r.prr_delivered = 10 * m;
        r.prr_out = 3 * m;
        assert_eq!(
            r.do_recovery(2 * m, 4 * m, 20 * m, false, false),
            Some(13 * m)
        );
        // prr_out = 0: one segment whatever the bound
        let mut z = PrrNs3::new(20 * m, m);
        assert_eq!(z.do_recovery(m, 10 * m, 10 * m, false, false), Some(11 * m));
    }

    /// The 32-bit product: with ssthresh 176 segments (254 848 B) and
    /// RecoverFS 250 segments, `prr_delivered · ssthresh` passes 2^32 after
    /// 11.6 segments delivered and the proportional bound falls back to
    /// about zero; RFC 6937 would let 0.7 segments go per segment
    /// delivered.
    #[test]
    fn ns3_proportional_part_wraps_at_32_bits() {
        let m = 1448;
        let (fs, ss) = (250 * m, 176 * m);
        let mut p = PrrNs3::new(fs, m);
        p.prr_delivered = 11 * m;
        p.prr_out = 5 * m;
        // 12·1448·254848 = 4 428 238 848 ≥ 2^32: wrapped to 133 271 552,
        // / 362 000 → ⌈368.2⌉ = 369 B, minus 7240 B sent: nothing
        let cwnd = p.do_recovery(m, 240 * m, ss, false, false).unwrap();
        assert_eq!(cwnd, 240 * m, "no room: cwnd = pipe");
        // one segment earlier (11 delivered in all) the product fits:
        // ⌈11·1448·254848 / 362000⌉ = 11 214 B, minus 7240: 3974 B
        let mut q = PrrNs3::new(fs, m);
        q.prr_delivered = 10 * m;
        q.prr_out = 5 * m;
        assert_eq!(
            q.do_recovery(m, 240 * m, ss, false, false),
            Some(240 * m + 3974)
        );
        // RFC 6937 at 12 delivered: ⌈12·176/250⌉ − 5 = 4 segments
        let mut r = Prr::new(250);
        r.prr_delivered = 11;
        r.prr_out = 5;
        assert_eq!(r.sndcnt(1, 240, 176.0, false), 4);
    }
}
