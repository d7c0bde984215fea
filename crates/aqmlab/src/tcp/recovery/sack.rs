//! SACK-based loss recovery — RFC 6675 ("A Conservative Loss Recovery
//! Algorithm Based on Selective Acknowledgment (SACK) for TCP"), with PRR
//! (RFC 6937) bounding what is sent in recovery when `tcp.prr = true`.
//!
//! - §5 entry: a duplicate ACK when `DupAcks ≥ DupThresh` or
//!   `IsLost(HighACK + 1)`, provided the cumulative ACK covers the previous
//!   RecoveryPoint (no second reduction for one window, as RFC 6582 step 2).
//!   RecoveryPoint = HighData; ssthresh from the congestion controller over
//!   FlightSize without SACKed or lost segments (RFC 5681 eq. 4, this
//!   simulator's `CcState::in_flight`); the first unacknowledged segment is
//!   retransmitted at once (step 4.3) and HighRxt = RescueRxt = it.
//! - Without PRR, `cwnd = ssthresh` (step 4.2) and segments go while
//!   `cwnd − pipe ≥ 1`; with PRR `cwnd = pipe + sndcnt` on every ACK.
//! - §4 NextSeg: (1) the lowest lost un-SACKed segment above HighRxt;
//!   (2) new data; (3) the lowest un-SACKed segment above HighRxt below the
//!   highest SACKed one; (4) one rescue retransmission of the highest
//!   un-SACKed segment per recovery, if HighACK > RescueRxt.
//! - Recovery ends when the cumulative ACK passes RecoveryPoint; then
//!   `cwnd = ssthresh` (RFC 6937 §3).
//! - §5.1 after a retransmission timeout: RecoveryPoint = HighData, no new
//!   recovery until it is acknowledged, and the scoreboard is kept: every
//!   un-SACKed segment is marked lost and retransmitted in order under the
//!   slow-start window (Linux `tcp_enter_loss` → `tcp_timeout_mark_lost`
//!   keeps SACKed segments and marks the rest lost; `tcp_xmit_retransmit_
//!   queue` then resends only those), new data only after them. Receiver
//!   reneging is not modelled (the simulated receiver never discards held
//!   data).
//!
//! - With `tcp.rack`, RACK (RFC 8985 §6, `rack.rs`) marks segments lost in
//!   place of DupThresh (as Linux does when RACK is on) and recovery starts
//!   once one is marked (Linux `tcp_time_to_recover`); a retransmission
//!   RACK finds lost again is resent.
//!
//! - With `tcp.sack_variant = "ns3"` (the `ns3-3.44` profile) the scheme
//!   follows ns-3 3.44 as coded instead, where it departs from the RFCs
//!   (each rule cites its ns-3 function below): `TcpSocketBase::
//!   EnterRecovery` marks the head lost before it reads the flight;
//!   `TcpPrrRecovery` is run as `DupAck` and `ProcessAck` call it
//!   (`prr.rs`, [`PrrNs3`]); on a partial ACK whose new head was not
//!   retransmitted, `DoRetransmit` sends one segment outside cwnd;
//!   `TcpTxBuffer::NextSeg` takes rule 1 only below the highest SACKed
//!   segment, rule 3 only in fast recovery and no rule 4. RACK is not
//!   combined with it (ns-3 3.44 has none).
//!
//! Costs: see `scoreboard.rs` — O(log n) or amortised O(1) per ACK.

use super::prr::{Prr, PrrNs3};
use super::rack::Rack;
use super::scoreboard::Scoreboard;
use super::{LossRecovery, NewAck, RecIo};

#[derive(Debug)]
pub struct SackRecovery {
    pub sb: Scoreboard,
    in_recovery: bool,
    /// After a timeout, until RecoveryPoint is acknowledged (Linux CA_Loss).
    in_loss: bool,
    recover: i64,
    /// Next candidate for rule (1)/(3): HighRxt + 1.
    rxt_next: u32,
    rescue_rxt: Option<u32>,
    use_prr: bool,
    /// ns-3 3.44 as coded (`tcp.sack_variant = "ns3"`).
    pub ns3: bool,
    prr: Option<Prr>,
    /// ns-3 3.44 `TcpPrrRecovery` state (`ns3` with `tcp.prr`).
    prr3: Option<PrrNs3>,
    /// The ACK being processed newly SACKed data (ns-3 `isDupAck`).
    newly_sacked: bool,
    /// It cumulatively acknowledged a retransmitted, un-SACKed segment
    /// (ns-3 `m_isRetransDataAcked`).
    retx_acked: bool,
    /// It advanced the cumulative ACK.
    una_advanced: bool,
    /// DeliveredData of the ACK being processed (RFC 6937).
    delivered: u32,
    /// RACK loss detection (RFC 8985) in place of DupThresh (`tcp.rack`).
    pub rack: Option<Rack>,
    lost_buf: Vec<u32>,
}

impl SackRecovery {
    pub fn new(use_prr: bool, rack: bool) -> SackRecovery {
        let mut sb = Scoreboard::default();
        sb.record = rack;
        SackRecovery {
            sb,
            in_recovery: false,
            in_loss: false,
            recover: -1,
            rxt_next: 0,
            rescue_rxt: None,
            use_prr,
            ns3: false,
            prr: None,
            prr3: None,
            newly_sacked: false,
            retx_acked: false,
            una_advanced: false,
            delivered: 0,
            rack: rack.then(Rack::default),
            lost_buf: Vec::new(),
        }
    }

    /// RACK §6.2 steps 4–5: mark what is lost, arm the reordering timer.
    fn rack_detect(&mut self, io: &mut RecIo) {
        let Some(r) = self.rack.as_mut() else {
            return;
        };
        let reo = r.reo_wnd(
            self.in_recovery || self.in_loss,
            self.sb.sacked(),
            io.dupthresh,
            io.srtt,
        );
        self.lost_buf.clear();
        if let Some(t) = r.detect_loss(io.now, reo, &mut self.lost_buf) {
            *io.arm_rack = Some(t);
        }
        for &q in &self.lost_buf {
            self.sb.mark_lost_again(q);
            self.rxt_next = self.rxt_next.min(q);
        }
    }

    /// RACK: enter recovery once a segment is marked lost (Linux
    /// `tcp_time_to_recover`: `lost_out` > 0).
    fn rack_maybe_enter(&mut self, io: &mut RecIo) -> bool {
        if self.rack.is_none() || self.in_recovery || self.in_loss || self.sb.lost() == 0 {
            return false;
        }
        let a = io.snd_una;
        if (a as i64 - 1) < self.recover {
            return false;
        }
        self.enter(io, a);
        true
    }

    fn enter(&mut self, io: &mut RecIo, a: u32) {
        if self.ns3 {
            return self.enter_ns3(io, a);
        }
        // RFC 5681 eq. 4 FlightSize without what the receiver holds or is
        // presumed lost: the RFC 6675 pipe (as ns-3's `BytesInFlight`).
        io.st.in_flight = self.sb.pipe();
        self.recover = io.enter_recovery(a);
        self.in_recovery = true;
        if self.rack.is_none() {
            self.sb.force_lost(a);
            self.rxt_next = a;
        }
        self.rescue_rxt = Some(a);
        if self.use_prr {
            self.prr = Some(Prr::new(self.sb.high() - a));
            self.prr_ack(io, true);
        } else {
            io.st.cwnd = io.st.ssthresh;
        }
    }

    /// ns-3 3.44 `TcpSocketBase::EnterRecovery`: the head is marked lost
    /// first (`MarkHeadAsLost` unless `IsLost`), then `BytesInFlight ()` is
    /// the flight ssthresh is taken from and, with PRR,
    /// `TcpPrrRecovery::EnterRecovery` takes it as RecoverFS and calls
    /// `DoRecovery (…, isDupAck = true)`; the head is retransmitted at once
    /// (the sender's next `next_segment`, NextSeg rule 1, sends it: cwnd
    /// leaves room for one segment at least).
    fn enter_ns3(&mut self, io: &mut RecIo, a: u32) {
        self.sb.force_lost(a);
        self.rxt_next = a;
        let pipe = self.sb.pipe();
        io.st.in_flight = pipe;
        self.recover = io.enter_recovery(a);
        self.in_recovery = true;
        self.rescue_rxt = Some(a);
        if self.use_prr {
            let m = io.st.mss;
            let mut p = PrrNs3::new(pipe * m, m);
            let ss = ns3_bytes(io.st.ssthresh, m);
            if let Some(c) = p.do_recovery(self.delivered * m, pipe * m, ss, true, false) {
                io.st.cwnd = c as f64 / m as f64;
            }
            self.prr3 = Some(p);
        } else {
            io.st.cwnd = io.st.ssthresh;
        }
    }

    pub fn in_loss(&self) -> bool {
        self.in_loss
    }

    /// PRR: `cwnd = pipe + sndcnt` for this ACK.
    fn prr_ack(&mut self, io: &mut RecIo, entering: bool) {
        if let Some(p) = self.prr3.as_mut() {
            // ns-3 `TcpSocketBase::DupAck` → `DoRecovery (…, true)` on an
            // ACK that newly SACKs (`isDupack`); `ProcessAck`, partial ACK
            // of at least one segment (`segsAcked >= 1`) → `DoRecovery (…,
            // false)` as well, with the same delivered bytes and the same
            // `m_bytesInFlight` (computed once, before `ProcessAck`).
            let m = io.st.mss;
            let pipe = self.sb.pipe() * m;
            let ss = ns3_bytes(io.st.ssthresh, m);
            let d = self.delivered * m;
            if self.newly_sacked {
                if let Some(c) = p.do_recovery(d, pipe, ss, true, self.retx_acked) {
                    io.st.cwnd = c as f64 / m as f64;
                }
            }
            if !entering && self.una_advanced && self.delivered >= 1 {
                if let Some(c) = p.do_recovery(d, pipe, ss, false, self.retx_acked) {
                    io.st.cwnd = c as f64 / m as f64;
                }
            }
            return;
        }
        if let Some(p) = self.prr.as_mut() {
            let pipe = self.sb.pipe();
            let n = p.sndcnt(self.delivered, pipe, io.st.ssthresh, entering);
            io.st.cwnd = (pipe + n) as f64;
        }
    }

    fn exit(&mut self, io: &mut RecIo) {
        self.in_recovery = false;
        self.prr = None;
        self.prr3 = None;
        io.st.cwnd = io.st.ssthresh;
        io.cc.on_recovery_exit(io.st);
    }
}

impl LossRecovery for SackRecovery {
    fn name(&self) -> &'static str {
        "sack"
    }

    fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    fn recover(&self) -> i64 {
        self.recover
    }

    fn controls_sending(&self) -> bool {
        self.in_recovery || self.in_loss
    }

    fn newly_delivered(&self, _acked: u32) -> u32 {
        self.delivered
    }

    fn counts_pipe(&self) -> bool {
        true
    }

    fn holds_ssthresh_on_timeout(&self) -> bool {
        self.in_loss
    }

    fn not_in_flight(&self) -> u32 {
        // outstanding − not_in_flight = RFC 6675 pipe
        (self.sb.sacked() + self.sb.lost()).saturating_sub(self.sb.retransmitted())
    }

    fn on_sack(&mut self, io: &mut RecIo, blocks: &[(u32, u32)]) {
        let una0 = self.sb.una();
        let sacked0 = self.sb.sacked();
        self.sb.extend(io.snd_max);
        if let Some(r) = self.rack.as_mut() {
            r.on_cum_ack(una0, io.snd_una, io.now);
        }
        self.una_advanced = io.snd_una > una0;
        self.retx_acked = self.ns3
            && self.in_recovery
            && (una0..io.snd_una).any(|q| self.sb.is_retransmitted(q) && !self.sb.is_sacked(q));
        self.sb.advance(io.snd_una);
        let mut newly = 0;
        for &(s, e) in blocks {
            newly += self.sb.sack(s, e);
        }
        self.newly_sacked = newly > 0;
        if let Some(r) = self.rack.as_mut() {
            for &q in &self.sb.newly_sacked {
                r.on_delivered(q, io.now);
            }
            self.sb.newly_sacked.clear();
            self.rack_detect(io);
        } else {
            self.sb.mark_lost(io.dupthresh);
        }
        self.delivered =
            (io.snd_una.saturating_sub(una0) + self.sb.sacked()).saturating_sub(sacked0);
        self.rxt_next = self.rxt_next.max(io.snd_una);
    }

    fn on_new_ack(&mut self, io: &mut RecIo, _acked: u32) -> NewAck {
        let a = io.snd_una as i64;
        if self.in_loss && a > self.recover {
            self.in_loss = false;
        }
        if self.in_recovery {
            if a > self.recover {
                self.exit(io);
            } else {
                self.prr_ack(io, false);
                if self.ns3 && !self.sb.is_retransmitted(io.snd_una) {
                    self.do_retransmit_ns3(io);
                }
            }
        } else {
            self.rack_maybe_enter(io);
        }
        NewAck {
            restart_timer: true,
        }
    }

    /// ns-3 3.44 `TcpSocketBase::ProcessAck`: with SACK, `isDupack =
    /// scoreboardUpdated` — an ACK that newly SACKs data is a duplicate ACK
    /// even when it also advances snd.una; outside recovery and loss
    /// `DupAck` counts it (`CA_OPEN` → `CA_DISORDER`, recovery at the
    /// DupThresh-th or once `IsLost (HighACK + 1)`), and in `CA_DISORDER`
    /// such an ACK calls `PktsAcked` but not `IncreaseWindow`.
    fn new_ack_is_dupack(&self) -> bool {
        self.ns3 && !self.in_recovery && !self.in_loss && self.newly_sacked
    }

    fn on_dupack(&mut self, io: &mut RecIo, dupacks: u32) -> bool {
        if self.in_recovery {
            self.prr_ack(io, false);
            return true;
        }
        if self.in_loss {
            return true;
        }
        if self.rack.is_some() {
            return self.rack_maybe_enter(io);
        }
        let a = io.snd_una;
        if !(dupacks >= io.dupthresh || self.sb.is_lost(a)) || (a as i64 - 1) < self.recover {
            return false;
        }
        self.enter(io, a);
        // ns-3: on an ACK that also advanced snd.una, `EnterRecovery` ran
        // PRR for the duplicate ACK; `ProcessAck`'s partial-ACK branch then
        // calls `DoRecovery (…, false)` only (see `prr_ack`)
        self.newly_sacked = false;
        true
    }

    fn on_transmit(&mut self, io: &mut RecIo, seq: u32) {
        if let Some(r) = self.rack.as_mut() {
            r.on_transmit(seq, io.now);
        }
    }

    fn on_rack_timer(&mut self, io: &mut RecIo) -> bool {
        self.rack_detect(io);
        if self.in_recovery {
            self.prr_ack(io, false);
            return true;
        }
        self.rack_maybe_enter(io) || self.in_loss
    }

    fn on_rto(&mut self, io: &mut RecIo) -> bool {
        self.sb.extend(io.snd_max);
        self.sb.timeout();
        if let Some(r) = self.rack.as_mut() {
            r.clear();
        }
        self.in_recovery = false;
        self.prr = None;
        self.prr3 = None;
        self.in_loss = true;
        self.recover = io.snd_max as i64 - 1;
        self.rxt_next = io.snd_una;
        self.rescue_rxt = None;
        false
    }

    fn next_segment(&mut self, io: &mut RecIo, limit: u32) -> Option<u32> {
        self.sb.extend(io.snd_max);
        let pipe = self.sb.pipe() as f64;
        let cwnd = if self.in_loss {
            io.st.cwnd.floor().max(1.0)
        } else {
            io.st.cwnd.floor()
        };
        if pipe + 1.0 > cwnd {
            return None;
        }
        if self.ns3 {
            let seg = self.next_seg_ns3(io, limit, self.in_recovery)?;
            if let Some(p) = self.prr3.as_mut() {
                p.on_sent(io.st.mss);
            }
            return Some(seg);
        }
        let seg = if let Some(s) = self.sb.next_lost(&mut self.rxt_next) {
            // (1)
            self.sb.mark_retransmitted(s);
            self.rxt_next = s + 1;
            s
        } else if io.snd_max < limit {
            // (2)
            let s = io.snd_max;
            self.sb.extend(s + 1);
            s
        } else if let Some(s) = self.sb.next_unsacked(self.rxt_next) {
            // (3)
            self.sb.mark_retransmitted(s);
            self.rxt_next = s + 1;
            s
        } else if self.in_recovery && self.rescue_rxt.is_none_or(|r| io.snd_una > r) {
            // (4) rescue
            let s = self.sb.highest_unsacked()?;
            if self.sb.is_retransmitted(s) {
                return None;
            }
            self.sb.mark_retransmitted(s);
            self.rescue_rxt = Some(self.recover.max(0) as u32);
            s
        } else {
            return None;
        };
        if let Some(p) = self.prr.as_mut() {
            p.on_sent();
        }
        Some(seg)
    }
}

/// ssthresh in bytes as ns-3 holds it (`m_ssThresh`, uint32_t).
fn ns3_bytes(ssthresh_segs: f64, mss: u32) -> u32 {
    (ssthresh_segs * mss as f64).clamp(0.0, u32::MAX as f64) as u32
}

impl SackRecovery {
    /// ns-3 3.44 `TcpTxBuffer::NextSeg (seq, seqHigh, isRecovery)`, marking
    /// what it returns as sent. Rule 1 takes the lowest lost segment not
    /// yet retransmitted that lies below the highest SACKed segment
    /// (`m_sackSeen && startSeq < m_highestSack.second`), so after a
    /// timeout (`SetSentListLost` marks every un-SACKed segment lost) the
    /// segments above the highest SACK are not resent before new data;
    /// rule 2 new data; rule 3 only when `isRecovery` (fast recovery), and
    /// no rule 4 (ns-3 leaves the rescue retransmission out).
    fn next_seg_ns3(&mut self, io: &mut RecIo, limit: u32, rule3: bool) -> Option<u32> {
        let cap = self.sb.high_sacked().unwrap_or(u32::MAX);
        if let Some(s) = self.sb.next_lost_below(&mut self.rxt_next, cap) {
            self.sb.mark_retransmitted(s);
            self.rxt_next = s + 1;
            Some(s)
        } else if io.snd_max < limit {
            let s = io.snd_max;
            self.sb.extend(s + 1);
            Some(s)
        } else if rule3 {
            let s = self.sb.next_unsacked(self.rxt_next)?;
            self.sb.mark_retransmitted(s);
            self.rxt_next = s + 1;
            Some(s)
        } else {
            None
        }
    }

    /// ns-3 3.44 `TcpSocketBase::ProcessAck`, partial ACK in
    /// `CA_RECOVERY`: unless the new head was retransmitted
    /// (`IsRetransmittedDataAcked (ackNumber + segmentSize)`),
    /// `DoRetransmit ()` sends one segment whatever cwnd allows: `NextSeg
    /// (…, false)` — the lowest lost, not retransmitted segment, else new
    /// data — or the head when NextSeg finds nothing. It counts in PRR's
    /// `prr_out` (`SendDataPacket` → `UpdateBytesSent` in `CA_RECOVERY`).
    fn do_retransmit_ns3(&mut self, io: &mut RecIo) {
        let seq = match self.next_seg_ns3(io, io.send_limit, false) {
            Some(s) => s,
            None => {
                let s = io.snd_una;
                self.sb.mark_retransmitted(s);
                s
            }
        };
        if let Some(p) = self.prr3.as_mut() {
            p.on_sent(io.st.mss);
        }
        io.retx.push(seq);
    }
}

#[cfg(test)]
mod tests {
    use super::super::scoreboard::Scoreboard;

    /// RFC 6675 §4 IsLost with DupThresh = 3: a segment is lost once three
    /// segments above it are SACKed (discontiguous or not).
    #[test]
    fn is_lost_needs_dupthresh_sacked_above() {
        let mut sb = Scoreboard::default();
        sb.extend(10);
        sb.sack(2, 3);
        sb.sack(4, 5);
        sb.mark_lost(3);
        assert!(!sb.is_lost(0) && !sb.is_lost(1) && !sb.is_lost(3));
        sb.sack(6, 7); // third discontiguous SACKed segment
        sb.mark_lost(3);
        // 0, 1 and 3 have 2, 4, 6 above them; 5 has only 6 above
        // 0 and 1 have 2, 4, 6 above them; 3 has only 4 and 6
        assert!(sb.is_lost(0) && sb.is_lost(1));
        assert!(!sb.is_lost(3) && !sb.is_lost(5) && !sb.is_lost(7));
        assert_eq!(sb.lost(), 2);
        assert_eq!(sb.sacked(), 3);
        // pipe = 10 outstanding − 3 SACKed − 2 lost
        assert_eq!(sb.pipe(), 5);
        sb.mark_retransmitted(0);
        assert_eq!(sb.pipe(), 6, "a retransmission counts in pipe");
        // 7 and 8 SACKed: 3 and 5 now have three SACKed segments above
        sb.sack(7, 9);
        sb.mark_lost(3);
        assert!(sb.is_lost(3) && sb.is_lost(5) && !sb.is_lost(9));
        assert_eq!(sb.lost(), 4);
        // the cumulative ACK removes everything below it
        sb.advance(4);
        assert_eq!((sb.sacked(), sb.lost(), sb.retransmitted()), (4, 1, 0));
    }

    /// ns-3 3.44 `TcpTxBuffer`: `Update` (a SACK) clears `m_lost` but not
    /// `m_retrans`, so `BytesInFlight () = sent − sackedOut − lostOut +
    /// retrans` keeps a SACKed retransmission in flight until
    /// `RemoveFromCounts` (the cumulative ACK) or `SetSentListLost` (a
    /// timeout); RFC 6675 SetPipe drops it at once.
    #[test]
    fn ns3_sacked_retransmission_stays_in_pipe() {
        for sticky in [false, true] {
            let mut sb = Scoreboard::default();
            sb.sticky_retx = sticky;
            // 0..10 sent; 0 and 5 lost; 1..5 and 6..10 SACKed
            sb.extend(10);
            sb.sack(1, 5);
            sb.sack(6, 10);
            sb.mark_lost(3);
            assert_eq!((sb.sacked(), sb.lost()), (8, 2));
            sb.mark_retransmitted(0);
            sb.mark_retransmitted(5);
            // 10 − 8 − 2 + 2: the two retransmissions
            assert_eq!(sb.pipe(), 2);
            // the retransmission of 5 arrives (SACKed), that of 0 is lost
            sb.sack(5, 6);
            assert_eq!((sb.sacked(), sb.lost()), (9, 1));
            assert!(sb.is_sacked(5) && !sb.is_retransmitted(5));
            if sticky {
                // ns-3: sent 10 − sackedOut 9 − lostOut 1 + retrans 2
                assert_eq!((sb.retransmitted(), sb.pipe()), (2, 2));
            } else {
                assert_eq!((sb.retransmitted(), sb.pipe()), (1, 1));
            }
            // the cumulative ACK passes 5: it leaves every count
            sb.advance(7);
            assert_eq!((sb.sacked(), sb.lost(), sb.retransmitted()), (3, 0, 0));
            assert_eq!(sb.pipe(), 0);
        }
        // a timeout clears the retransmitted count, SACKed segments included
        let mut sb = Scoreboard::default();
        sb.sticky_retx = true;
        sb.extend(6);
        sb.sack(2, 6);
        sb.mark_lost(3);
        sb.mark_retransmitted(0);
        sb.mark_retransmitted(1);
        sb.sack(1, 2);
        assert_eq!((sb.retransmitted(), sb.pipe()), (2, 2));
        sb.timeout();
        assert_eq!((sb.sacked(), sb.lost(), sb.retransmitted()), (5, 1, 0));
        assert_eq!(sb.pipe(), 0);
        sb.mark_retransmitted(0);
        sb.advance(6);
        assert_eq!((sb.sacked(), sb.lost(), sb.retransmitted()), (0, 0, 0));
    }

    /// Repeated blocks cost nothing new; blocks merge; clipping at snd_una.
    #[test]
    fn sack_blocks_merge_and_clip() {
        let mut sb = Scoreboard::default();
        sb.extend(100);
        assert_eq!(sb.sack(10, 20), 10);
        assert_eq!(sb.sack(10, 21), 1, "a repeated block adds only its new end");
        assert_eq!(sb.sack(30, 40), 10);
        assert_eq!(sb.sack(15, 35), 9, "the gap 21..30 is new");
        assert_eq!(sb.high_sacked(), Some(40));
        sb.advance(12);
        assert_eq!(sb.sack(0, 12), 0, "below snd_una: nothing");
        assert_eq!(sb.sacked(), 28);
        assert_eq!(sb.highest_unsacked(), Some(99));
        assert_eq!(sb.sack(90, 100), 10);
        assert_eq!(sb.highest_unsacked(), Some(89));
    }
}
