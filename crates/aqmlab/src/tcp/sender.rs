//! The TCP sender: window-limited transmission, the retransmission timer,
//! RTT measurement, and the hooks into loss recovery (`tcp::recovery`:
//! Reno, NewReno, SACK with PRR) and congestion control (`tcp::cc`).
//!
//! Sources:
//! - Duplicate-ACK counting and what happens in recovery: see the scheme's
//!   file under `tcp/recovery/` (RFC 5681 §3.2, RFC 6582, RFC 6675,
//!   RFC 6937).
//! - RFC 7323 §4 RTTM (`timestamps = true`): an RTT sample on every ACK
//!   that acknowledges new data, from its timestamp echo, retransmissions
//!   included; without timestamps one segment per RTT is timed (below).
//! - RFC 6298: SRTT/RTTVAR with α = 1/8, β = 1/4; RTO = SRTT + max(G, 4·RTTVAR)
//!   clamped to [min_rto, max_rto]; `initial_rto` before the first sample;
//!   the timer restarts on every ACK of new data and stops when all data is
//!   acknowledged (§5); exponential backoff on expiry (§5.5), kept until a
//!   new valid sample (Karn & Partridge: no samples from retransmitted
//!   segments — one segment at a time is timed, and timing is cancelled by
//!   any retransmission).
//! - RFC 5681 §3.1: after a timeout `cwnd = 1` (loss window) and go-back-N
//!   from the first unacknowledged segment (Reno, NewReno); with SACK
//!   recovery only segments not SACKed are resent (RFC 6675 §5.1).
//!   With SACK recovery a timeout while the previous timeout's recovery is
//!   still under way keeps ssthresh (RFC 5681 §3.1, Linux `tcp_enter_loss`,
//!   ns-3 `TcpSocketBase::ReTxTimeout`); Reno/NewReno keep ns-2's rule
//!   (ssthresh from the flight on every timeout).
//! - Window growth outside recovery is by the segments an ACK newly
//!   delivers (`LossRecovery::newly_delivered`: with SACK the cumulative
//!   advance less what was SACKed before, plus what it newly SACKs — ns-3
//!   `currentDelivered`, Linux `tcp_cong_avoid(sk, ack, delivered)`), so an
//!   ACK that fills the only hole after a timeout does not open the window
//!   by everything the receiver held.
//! - RFC 3168 §6.1.2: on an ACK with ECE, reduce the window as for a loss,
//!   at most once per window of data (losses and ECE together: neither a
//!   loss nor an ECE from a window already reduced reduces it again), and
//!   set CWR on the first new segment after any reduction (ECE, fast
//!   retransmit or timeout).
//! - Limited Transmit (`limited_transmit = true`): RFC 3042 §2 without
//!   SACK (one new segment on each of the first two duplicate ACKs,
//!   outstanding data at most cwnd + 2, cwnd unchanged); with SACK recovery
//!   RFC 6675 §5 step (3): outside recovery new data goes while
//!   pipe < cwnd, which ns-3 (`AvailableWindow` over `BytesInFlight`) and
//!   Linux (`tcp_cwnd_test` over `tcp_packets_in_flight`) do on every ACK.
//! - Tail Loss Probe (`tlp = true`, RFC 8985 §7): outside recovery, with
//!   nothing SACKed or lost, the retransmission timer is armed at the
//!   probe timeout PTO = 2·SRTT (+ WCDelAckT = 200 ms with one segment
//!   outstanding) when that comes before the RTO (§7.2; Linux
//!   `tcp_schedule_loss_probe` keeps both in one timer). When it fires,
//!   one new segment goes if the receive window allows, regardless of cwnd,
//!   else the highest segment sent is retransmitted; then the RTO is armed
//!   (§7.3). The episode ends when the cumulative ACK covers TLP.end_seq;
//!   this sender has no D-SACK, so a retransmitted probe is taken as a
//!   loss and the window is reduced once unless recovery already did
//!   (§7.4.2; Linux `tcp_process_tlp_ack` without `FLAG_DSACK_TLP`).
//! - Pacing (`pacing = true`): Linux `tcp_update_pacing_rate` — rate =
//!   `mss·max(cwnd, in_flight)/srtt`, × 200 % while `cwnd < ssthresh/2`
//!   (`tcp_pacing_ss_ratio`), × 120 % otherwise (`tcp_pacing_ca_ratio`);
//!   each segment leaves no earlier than the previous one plus its wire
//!   size at that rate (as `fq` / `tcp_internal_pacing` space them).
//!   Unpaced before the first RTT sample (Linux leaves the rate unlimited
//!   while `srtt_us` is 0). Retransmissions on a partial ACK or fast
//!   retransmit (Reno/NewReno) leave at once; SACK recovery's are paced.
//! - `fin = true`: the last segment of a sized transfer carries FIN (RFC
//!   793 §3.5; Linux `tcp_send_fin` and ns-3 `TcpSocketBase` send it with
//!   the last data), which the receiver acknowledges at once.
//! - ECN codepoint and feedback (`tcp/ecn.rs`): data carries the
//!   controller's codepoint (`CongestionControl::codepoint`: ECT(0), or
//!   ECT(1) for an L4S sender, RFC 9331 §8); the SYN asks for RFC 3168 or
//!   AccECN feedback (`tcp.ecn_feedback`) and the SYN-ACK settles the mode
//!   (RFC 9768 §3.1.2), which the controller may refuse
//!   (`CongestionControl::ecn_mode`: Prague without AccECN turns ECN off).
//!   In AccECN mode each ACK's ACE field gives the CE packets it reports
//!   (with the wrap safety rule, `ecn::ce_delta`); the controller sees an
//!   ACK whose ECE means "some reported", and the count through
//!   `CongestionControl::on_ce_delta`; the once-per-window reduction
//!   above is triggered by a count > 0, and no CWR is sent.
//! - Optional three-way handshake (RFC 793): the SYN is retransmitted with
//!   `initial_rto` (the "ITO") and exponential backoff until the SYN-ACK
//!   arrives; the SYN's RTT is a valid first sample if it was not resent.

use super::cc::{CcState, CongestionControl, Recovery};
use super::ecn::{self, EcnMode};
use super::rate::RateEstimator;
use super::receiver::TS_OPTION_BYTES;
use super::recovery::{
    self, EcnState, LossRecovery, RecIo, RecoveryKind, RetxQueue, RtoRestart, RtoSsthresh,
};
use super::{FlowCounters, TcpCtx, TcpParams, TimerKind};
use crate::engine::{Time, Timer, TimerAction};
use crate::net::packet::{flags, Ecn, FlowId, NodeId, Packet};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderState {
    /// Not started yet.
    Idle,
    /// SYN sent, waiting for the SYN-ACK.
    SynSent,
    Established,
    /// All data of a sized transfer acknowledged.
    Done,
}

/// The fields an ACK or a timer of a common sender (Reno/NewReno, no
/// pacing, RACK, handshake, ECN or TLP) touches come first and together, so
/// that one event touches [`Sender::HOT_BYTES`] (five cache lines in a flow
/// record, its recovery state and short send history included) and the
/// cache hints (`sim/hints.rs`) load exactly those (`#[repr(C)]` keeps the declared
/// order; the order has no other effect). What such a sender reads only in
/// rare events (a fast retransmit's queue and count, the RACK timers'
/// queue, the first segment's time, the send history beyond
/// [`SENT_INLINE`] segments) lies in the cold part behind a flag or a count
/// in the hot one, and the ECN and TLP state (with their counters) behind
/// `params.ecn` and `params.tlp`, so that an event of a sender without them
/// never reads it. Of the counters, those a send or a timeout updates are
/// hot (with 10⁵ flows on one bottleneck, a third to a half of a sender's
/// events are timeouts), the rest cold; [`Sender::counters`] assembles
/// them.
#[repr(C)]
pub struct Sender {
    // -- hot: every ACK, timeout and segment sent --
    /// Shared by the flows of every group with the same `tcp` keys (an
    /// `Arc`, so per-flow state stays small and, with 10⁵ flows, what an
    /// event reads of it is in cache).
    pub params: std::sync::Arc<TcpParams>,
    pub cc: Box<dyn CongestionControl>,
    /// Reno's and NewReno's state inline, so that an ACK does not wait for
    /// a separate heap object (with 10⁵ flows, a cache and TLB miss); SACK
    /// recovery boxed. How it is stored has no effect on results.
    rec: recovery::Recovery,
    pub cc_state: CcState,
    // RTT estimation (RFC 6298), nanoseconds
    srtt: f64,
    rttvar: f64,
    /// Now, for the recovery scheme.
    now: Time,
    pub rto_timer: Timer,
    /// Send time and "was retransmitted" of segments snd_una..snd_max
    /// (the first [`SENT_INLINE`]; the rest in `sent_spill`, cold).
    sent: SendLog,
    /// [`FlowCounters`]: data segments sent, retransmitted, timeouts.
    segments_sent: u64,
    retransmits: u64,
    timeouts: u64,
    rtt_seq: Option<u32>,
    /// Segments to send (`u32::MAX` for a bulk sender).
    pub total_segs: u32,
    last_payload: u32,
    pub snd_una: u32,
    pub snd_nxt: u32,
    /// One past the highest segment ever sent.
    pub snd_max: u32,
    dupacks: u32,
    backoff: u32,
    /// snd_una when the retransmission timer last fired (`u32::MAX`:
    /// never): a timeout with snd_una still there resends a segment the
    /// timer already resent (`tcp.rto_ssthresh`).
    rto_una: u32,
    flow: FlowId,
    src: NodeId,
    dst: NodeId,
    pub state: SenderState,
    /// In fast recovery (mirrors the recovery scheme's state).
    pub in_recovery: bool,
    /// A partial ACK has arrived in the current fast recovery
    /// (`tcp.rto_restart`; ns-3 `!m_isFirstPartialAck`).
    partial_acked: bool,
    has_rtt: bool,
    /// The retransmission timer holds a loss-probe timeout (TLP, RFC 8985
    /// §7; Linux keeps both in one timer slot, `ICSK_TIME_LOSS_PROBE`).
    pto_armed: bool,
    /// TLP.is_retrans: the probe was a retransmission.
    tlp_retrans: bool,
    /// A reduction (recovery or timeout) happened during the probe episode.
    tlp_reduced: bool,
    /// `pending_timers` is not empty (so that an ACK reads the vector, in
    /// the cold part, only when the recovery scheme asked for a timer).
    timers_pending: bool,
    /// `retx_buf` is not empty (likewise).
    retx_queued: bool,
    // -- hot for an ACK, not for a timeout: --
    rtt_time: Time,
    // -- cold: pacing, RACK, handshake, start and end; ECN and TLP state
    // (read only when `params.ecn` / `params.tlp`, and then loaded one
    // event ahead with the heap objects by the cache hints); the retransmission queue --
    ecn: EcnState,
    /// TLP.end_seq: one past the highest segment sent when the probe left
    /// (a probe episode is open).
    tlp_end: Option<u32>,
    /// [`FlowCounters`]: the rare ones (ECN and TLP counted beside their
    /// state).
    ecn_reductions: u64,
    loss_probes: u64,
    fast_retransmits: u64,
    /// The send history while it holds more than [`SENT_INLINE`] entries
    /// (see [`SendLog`]).
    sent_spill: VecDeque<(Time, bool)>,
    /// Segments the recovery scheme asks to (re)send now.
    retx_buf: Vec<u32>,
    /// Pacing: when the next segment may leave, and its timer.
    next_send: Time,
    pub pace_timer: Timer,
    /// RACK reordering timer.
    pub rack_timer: Timer,
    /// Timers the recovery scheme asked for (RACK), handed to the next
    /// context.
    pending_timers: Vec<(Time, TimerKind)>,
    /// When the first data segment was sent (after the handshake, if any).
    pub first_data_at: Option<Time>,
    syn_time: Time,
    syn_resent: bool,
    pub start_time: Time,
    pub completion_time: Option<Time>,
    /// Delivery-rate state (`tcp::rate`), for a rate-based controller
    /// only (`params.rate_cc`).
    rate: Option<Box<RateEstimator>>,
}

impl Sender {
    /// What a segment carries in its extension slot: the congestion
    /// control's fields (MaxNet), else the flow's DSCP, if any.
    #[inline]
    fn seg_ext(&self) -> crate::net::ext::Ext {
        match self.cc.ext() {
            crate::net::ext::Ext::None => crate::net::ext::Ext::with_dscp(self.params.dscp),
            e => e,
        }
    }

    /// Bytes from the start of a sender that its hot fields span (see
    /// [`Sender`]).
    pub const HOT_BYTES: usize = std::mem::offset_of!(Sender, ecn);

    pub fn new(
        p: impl Into<std::sync::Arc<TcpParams>>,
        mut cc: Box<dyn CongestionControl>,
        flow: FlowId,
        src: NodeId,
        dst: NodeId,
        bytes: Option<u64>,
    ) -> Sender {
        let mut p: std::sync::Arc<TcpParams> = p.into();
        // the controller's random stream: (run seed, flow id), as every
        // component's stream (`engine::RngStream`)
        use crate::engine::{splitmix64, stream_id};
        cc.seed(splitmix64(
            p.cc_seed ^ splitmix64(stream_id("cc") ^ flow.0 as u64),
        ));
        // Linux counts segments in window growth; ns-2, ns-3's TcpNewReno
        // and RFC 5681 count ACKs (`CongestionControl::count_segments`)
        cc.count_segments(p.profile == Some(super::profile::Profile::Linux));
        let rate_cc = cc.rate_based();
        if rate_cc {
            // a rate-based controller paces at its own rate (its own copy
            // of the parameters: the flag is read on every send)
            let mut q = (*p).clone();
            q.rate_cc = true;
            q.pacing = true;
            p = q.into();
        }
        let (total_segs, last_payload) = match bytes {
            None => (u32::MAX, p.mss),
            Some(b) => {
                let n = b.div_ceil(p.mss as u64).max(1);
                (n as u32, (b - (n - 1) * p.mss as u64) as u32)
            }
        };
        let st = CcState {
            now: 0,
            cwnd: p.init_cwnd,
            ssthresh: p.init_ssthresh,
            in_flight: 0,
            srtt: None,
            min_rtt: None,
            mss: p.mss,
            snd_una: 0,
            snd_nxt: 0,
            last_rtt: None,
        };
        let kind = p.recovery.unwrap_or(match cc.recovery() {
            Recovery::Reno => RecoveryKind::Reno,
            Recovery::NewReno => RecoveryKind::NewReno,
        });
        let rec = recovery::build(kind, p.prr, p.sack_variant, p.rack);
        let asked = EcnMode::requested(p.ecn, p.ecn_feedback);
        // without a handshake the peer is taken to agree
        let mode = if p.handshake {
            asked
        } else {
            cc.ecn_mode(asked)
        };
        let ecn = EcnState {
            enabled: p.ecn,
            mode,
            s_cep: ecn::CEP_INIT,
            recover: -1,
            cwr_pending: false,
        };
        Sender {
            params: p,
            cc,
            cc_state: st,
            state: SenderState::Idle,
            flow,
            src,
            dst,
            total_segs,
            last_payload,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            dupacks: 0,
            in_recovery: false,
            partial_acked: false,
            rec,
            retx_buf: Vec::new(),
            pending_timers: Vec::new(),
            timers_pending: false,
            retx_queued: false,
            srtt: 0.0,
            rttvar: 0.0,
            has_rtt: false,
            backoff: 0,
            rto_una: u32::MAX,
            rtt_seq: None,
            rtt_time: 0,
            rto_timer: Timer::default(),
            next_send: 0,
            pace_timer: Timer::default(),
            rack_timer: Timer::default(),
            pto_armed: false,
            tlp_end: None,
            tlp_retrans: false,
            tlp_reduced: false,
            now: 0,
            sent: SendLog::default(),
            sent_spill: VecDeque::new(),
            syn_time: 0,
            syn_resent: false,
            ecn,
            start_time: 0,
            first_data_at: None,
            completion_time: None,
            segments_sent: 0,
            retransmits: 0,
            timeouts: 0,
            ecn_reductions: 0,
            loss_probes: 0,
            fast_retransmits: 0,
            rate: rate_cc.then(Box::default),
        }
    }

    /// The ECN feedback mode in use (`tcp/ecn.rs`).
    pub fn ecn_mode(&self) -> EcnMode {
        self.ecn.mode
    }

    /// The flow's counters.
    pub fn counters(&self) -> FlowCounters {
        FlowCounters {
            segments_sent: self.segments_sent,
            retransmits: self.retransmits,
            timeouts: self.timeouts,
            fast_retransmits: self.fast_retransmits,
            loss_probes: self.loss_probes,
            ecn_reductions: self.ecn_reductions,
        }
    }

    /// Payload bytes of the whole transfer (`u64::MAX` for a bulk sender).
    pub fn total_bytes(&self) -> u64 {
        if self.total_segs == u32::MAX {
            u64::MAX
        } else {
            (self.total_segs as u64 - 1) * self.params.mss as u64 + self.last_payload as u64
        }
    }

    /// Payload bytes cumulatively acknowledged.
    pub fn bytes_acked(&self) -> u64 {
        if self.snd_una == 0 {
            0
        } else if self.snd_una >= self.total_segs {
            (self.total_segs as u64 - 1) * self.params.mss as u64 + self.last_payload as u64
        } else {
            self.snd_una as u64 * self.params.mss as u64
        }
    }

    /// The current RTO (backoff applied), nanoseconds.
    pub fn rto(&self) -> Time {
        let base = if self.has_rtt {
            let g = self.params.granularity as f64;
            (self.srtt + g.max(4.0 * self.rttvar)) as Time
        } else if self.state == SenderState::SynSent {
            self.params.syn_rto.unwrap_or(self.params.initial_rto)
        } else {
            self.params.initial_rto
        };
        let base = base.clamp(self.params.min_rto, self.params.max_rto);
        base.saturating_mul(1u64 << self.backoff.min(32))
            .min(self.params.max_rto)
    }

    pub fn srtt(&self) -> Option<Time> {
        self.has_rtt.then_some(self.srtt as Time)
    }

    fn arm_rto(&mut self, ctx: &mut TcpCtx) {
        let rto_at = ctx.now + self.rto();
        let at = match self.pto() {
            Some(pto) if ctx.now + pto < rto_at => {
                self.pto_armed = true;
                ctx.now + pto
            }
            _ => {
                self.pto_armed = false;
                rto_at
            }
        };
        if let TimerAction::Schedule(t) = self.rto_timer.arm(at) {
            ctx.timers.push((t, TimerKind::Rto));
        }
    }

    /// The loss-probe timeout if a probe may be scheduled now (RFC 8985
    /// §7.2): TLP on, an RTT sample, data outstanding, no probe episode
    /// open, not in fast recovery or after a timeout, nothing SACKed or
    /// marked lost. PTO = 2·SRTT, plus WCDelAckT = 200 ms when one segment
    /// is outstanding (the receiver may delay its ACK); the caller keeps the
    /// earlier of PTO and RTO.
    fn pto(&self) -> Option<Time> {
        if !self.params.tlp
            || self.state != SenderState::Established
            || !self.has_rtt
            || self.snd_max <= self.snd_una
            || self.tlp_end.is_some()
            || self.rec.controls_sending()
            || self.rec.not_in_flight() > 0
        {
            return None;
        }
        let mut pto = 2.0 * self.srtt;
        if self.snd_max - self.snd_una == 1 {
            pto += 200e6;
        }
        Some(pto as Time)
    }

    /// The loss-probe timer fired (RFC 8985 §7.3): send one new segment if
    /// there is one and the receive window allows (cwnd does not bound the
    /// probe), else retransmit the highest segment sent; open the probe
    /// episode and arm the RTO.
    fn on_pto(&mut self, ctx: &mut TcpCtx) {
        self.pto_armed = false;
        let limit = self
            .total_segs
            .min(self.snd_una.saturating_add(self.params.max_window));
        let seq = if self.snd_max < limit {
            self.tlp_retrans = false;
            self.snd_max
        } else {
            self.tlp_retrans = true;
            self.snd_max - 1
        };
        self.send_segment(seq, ctx);
        if seq >= self.snd_nxt {
            self.snd_nxt = seq + 1;
        }
        self.tlp_end = Some(self.snd_max);
        self.tlp_reduced = false;
        self.loss_probes += 1;
        self.rto_timer.cancel();
        self.arm_rto(ctx);
    }

    /// RFC 8985 §7.4: the probe episode ends when the cumulative ACK covers
    /// TLP.end_seq. This sender has no D-SACK, so a retransmitted probe is
    /// taken to mean that the original or the probe was lost (§7.4.2: "it
    /// MUST estimate that either the original data segment or the TLP
    /// retransmission were lost, and congestion control MUST react") and the
    /// window is reduced once, as Linux `tcp_process_tlp_ack` does (CWR:
    /// cwnd = ssthresh) — unless recovery or a timeout already reduced it.
    fn tlp_on_ack(&mut self, a: u32) {
        if !self.params.tlp {
            return; // no episode is ever open (`tlp_end` is cold)
        }
        let Some(end) = self.tlp_end else {
            return;
        };
        if self.in_recovery {
            self.tlp_reduced = true;
        }
        if a < end {
            return;
        }
        self.tlp_end = None;
        if self.tlp_retrans && !self.tlp_reduced && !self.rec.controls_sending() {
            self.cc_state.ssthresh = self.cc.ssthresh(&self.cc_state);
            self.cc_state.cwnd = self.cc_state.ssthresh;
            self.cc.on_recovery_exit(&mut self.cc_state);
        }
    }

    fn rtt_sample(&mut self, r: Time) {
        let r = r as f64;
        if !self.has_rtt {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.has_rtt = true;
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        }
        self.backoff = 0;
        self.cc_state.srtt = Some(self.srtt as Time);
    }

    fn sync(&mut self, now: Time) {
        self.cc_state.now = now;
        self.now = now;
        // RFC 5681 eq. 4 FlightSize, less what the recovery scheme knows the
        // receiver holds or presumes lost (SACK); Reno/NewReno know nothing.
        self.cc_state.in_flight =
            (self.snd_max - self.snd_una).saturating_sub(self.rec.not_in_flight());
        self.cc_state.snd_una = self.snd_una;
        self.cc_state.snd_nxt = self.snd_max;
    }

    /// The application starts: open the connection or start sending.
    pub fn start(&mut self, ctx: &mut TcpCtx) {
        self.start_time = ctx.now;
        if self.params.handshake {
            self.state = SenderState::SynSent;
            self.syn_time = ctx.now;
            self.send_syn(ctx);
        } else {
            self.state = SenderState::Established;
            self.send_available(ctx);
        }
    }

    /// The application stops writing (`[[events]]` `stop`) and closes the
    /// connection, as `close()` on a socket whose application wrote up to
    /// now: the segment after those already sent (`snd_max`) is the
    /// transfer's last; it is sent as the window allows, with FIN under
    /// `tcp.fin` (the close path of a sized transfer: RFC 793 §3.5, FIN on
    /// the last data, ACKed at once), and the flow completes when it is
    /// acknowledged. A transfer that has already sent its last segment, or
    /// is done, is unchanged. Returns the new number of segments.
    pub fn stop(&mut self) -> u32 {
        if self.state != SenderState::Done && self.snd_max < self.total_segs {
            self.total_segs = self.snd_max + 1;
            self.last_payload = self.params.mss;
        }
        self.total_segs
    }

    /// Bytes of the timestamps option on every segment (RFC 7323).
    fn ts_bytes(&self) -> u32 {
        if self.params.timestamps {
            TS_OPTION_BYTES
        } else {
            0
        }
    }

    fn send_syn(&mut self, ctx: &mut TcpCtx) {
        ctx.out.push(Packet {
            flow: self.flow,
            src: self.src,
            dst: self.dst,
            sent_time: ctx.now,
            size: self.params.header_bytes + self.ts_bytes(),
            flags: flags::SYN
                | ecn::syn_flags(EcnMode::requested(
                    self.params.ecn,
                    self.params.ecn_feedback,
                )),
            ext: self.seg_ext(),
            ..Default::default()
        });
        self.arm_rto(ctx);
    }

    fn window(&self) -> u32 {
        let w = self.cc_state.cwnd.floor().max(1.0);
        (w as u32).min(self.params.max_window)
    }

    /// Run `f` with the recovery scheme and the view it gets of the sender.
    fn with_rec<R>(&mut self, f: impl FnOnce(&mut dyn LossRecovery, &mut RecIo) -> R) -> R {
        let mut arm_rack = None;
        let srtt = self.srtt();
        let send_limit = self
            .total_segs
            .min(self.snd_una.saturating_add(self.params.max_window));
        let mut io = RecIo {
            now: self.now,
            srtt,
            arm_rack: &mut arm_rack,
            st: &mut self.cc_state,
            cc: self.cc.as_mut(),
            snd_una: self.snd_una,
            snd_max: self.snd_max,
            send_limit,
            dupthresh: self.params.dupack_threshold,
            ecn: &mut self.ecn,
            retx: RetxQueue {
                buf: &mut self.retx_buf,
                queued: &mut self.retx_queued,
            },
            fast_retransmits: &mut self.fast_retransmits,
        };
        let r = f(&mut *self.rec, &mut io);
        self.in_recovery = self.rec.in_recovery();
        if !self.in_recovery {
            self.partial_acked = false;
        }
        if let Some(t) = arm_rack {
            if let TimerAction::Schedule(t) = self.rack_timer.arm(t) {
                self.pending_timers.push((t, TimerKind::Rack));
                self.timers_pending = true;
            }
        }
        r
    }

    /// The RACK reordering timer fired (RFC 8985 §6.3).
    pub fn on_rack_timer(&mut self, ctx: &mut TcpCtx) {
        self.sync(ctx.now);
        self.now = ctx.now;
        if self.state != SenderState::Established {
            return;
        }
        let send = self.with_rec(|r, io| r.on_rack_timer(io));
        self.flush_timers(ctx);
        if send {
            self.send_available(ctx);
        }
    }

    fn flush_timers(&mut self, ctx: &mut TcpCtx) {
        if self.timers_pending {
            ctx.timers.append(&mut self.pending_timers);
            self.timers_pending = false;
        }
    }

    /// Send what the recovery scheme queued, in order.
    fn flush_retx(&mut self, ctx: &mut TcpCtx) {
        if !self.retx_queued {
            return;
        }
        let v = std::mem::take(&mut self.retx_buf);
        for &seq in &v {
            let new_data = seq >= self.snd_max;
            self.send_segment(seq, ctx);
            if new_data && seq >= self.snd_nxt {
                self.snd_nxt = seq + 1;
            }
        }
        self.retx_buf = v;
        self.retx_buf.clear();
        self.retx_queued = false;
    }

    /// Pacing rate in bytes per second (Linux `tcp_update_pacing_rate`), or
    /// `None` when unpaced.
    pub fn pacing_rate(&self) -> Option<f64> {
        if !self.params.pacing {
            return None;
        }
        if self.params.rate_cc {
            let wire = (self.params.mss + self.params.header_bytes + self.ts_bytes()) as f64;
            return self.cc.pacing_rate(&self.cc_state).map(|r| r * wire);
        }
        if !self.has_rtt || self.srtt <= 0.0 {
            return None;
        }
        let ratio = if self.cc_state.cwnd < self.cc_state.ssthresh / 2.0 {
            2.0
        } else {
            1.2
        };
        let w = self.cc_state.cwnd.max((self.snd_max - self.snd_una) as f64);
        Some(ratio * self.params.mss as f64 * w / (self.srtt / 1e9))
    }

    /// Pacing holds the next segment back: arm the pacing timer and say so.
    fn paced_out(&mut self, ctx: &mut TcpCtx) -> bool {
        if !self.params.pacing || ctx.now >= self.next_send {
            return false;
        }
        if let TimerAction::Schedule(t) = self.pace_timer.arm(self.next_send) {
            ctx.timers.push((t, TimerKind::Pace));
        }
        true
    }

    /// The pacing timer fired: send what the window allows.
    pub fn on_pace(&mut self, ctx: &mut TcpCtx) {
        self.send_available(ctx);
    }

    /// Send new segments while the window allows.
    fn send_available(&mut self, ctx: &mut TcpCtx) {
        if self.state != SenderState::Established {
            return;
        }
        if self.rec.controls_sending() {
            let limit = self
                .total_segs
                .min(self.snd_una.saturating_add(self.params.max_window));
            while !self.paced_out(ctx) {
                let Some(seq) = self.with_rec(|r, io| r.next_segment(io, limit)) else {
                    break;
                };
                self.send_segment(seq, ctx);
                if seq >= self.snd_nxt {
                    self.snd_nxt = seq + 1;
                }
            }
            if self.params.rate_cc {
                self.check_app_limited();
            }
            return;
        }
        let wnd = self
            .window()
            .saturating_add(self.limited_transmit_allowance());
        while self.snd_nxt < self.total_segs
            && self.snd_nxt < self.snd_una.saturating_add(wnd)
            && !self.paced_out(ctx)
        {
            let s = self.snd_nxt;
            self.send_segment(s, ctx);
            self.snd_nxt += 1;
        }
        if self.params.rate_cc {
            self.check_app_limited();
        }
    }

    /// `tcp_rate_check_app_limited`: a sized transfer has sent all its
    /// data and the flight is below cwnd.
    fn check_app_limited(&mut self) {
        let in_flight = (self.snd_max - self.snd_una).saturating_sub(self.rec.not_in_flight());
        if self.snd_max >= self.total_segs && in_flight < self.window() {
            if let Some(r) = self.rate.as_deref_mut() {
                r.check_app_limited(in_flight);
            }
        }
    }

    /// A rate-based controller's step on an ACK (Linux `tcp_ack`:
    /// `tcp_rate_gen`, then `tcp_cong_control` → `cong_control`): the
    /// delivery-rate sample, then the controller sets cwnd (and its pacing
    /// rate) before new data is sent. `losses` is the number of segments
    /// recovery retransmitted on this ACK (each one a segment it found
    /// lost).
    fn rate_step(&mut self, ack: &Packet, prior_in_flight: u32, retx_before: u64, now: Time) {
        self.sync(now);
        let losses = (self.retransmits - retx_before) as u32;
        let Some(r) = self.rate.as_deref_mut() else {
            return;
        };
        let mut rs = r.on_ack(
            now,
            self.snd_una,
            ack.sack_blocks(),
            ack.has(flags::ECE),
            losses,
            prior_in_flight,
            self.cc_state.min_rtt,
        );
        rs.in_recovery = self.in_recovery;
        self.cc.cong_control(&mut self.cc_state, &rs);
        if self.cc.wants_app_limited() {
            r.set_app_limited(self.cc_state.in_flight);
        }
    }

    /// Segments Limited Transmit lets go beyond `snd_una + cwnd` outside
    /// recovery (`tcp.limited_transmit`). With a SACK scoreboard, what the
    /// receiver holds or is presumed lost no longer counts, so new data goes
    /// while pipe < cwnd (RFC 6675 §5 step 3; ns-3 `AvailableWindow` over
    /// `BytesInFlight`, Linux `tcp_packets_in_flight`). Without SACK, one
    /// more segment on each of the first two duplicate ACKs below DupThresh
    /// (RFC 3042 §2: outstanding data at most cwnd + 2 segments, cwnd
    /// unchanged).
    fn limited_transmit_allowance(&self) -> u32 {
        if !self.params.limited_transmit || self.in_recovery {
            0
        } else if self.rec.counts_pipe() {
            self.rec.not_in_flight()
        } else if self.dupacks < self.params.dupack_threshold {
            self.dupacks.min(2)
        } else {
            0
        }
    }

    fn send_segment(&mut self, seq: u32, ctx: &mut TcpCtx) {
        let payload = if seq + 1 == self.total_segs {
            self.last_payload
        } else {
            self.params.mss
        };
        let retx = seq < self.snd_max;
        if self.params.rate_cc {
            if let Some(r) = self.rate.as_deref_mut() {
                r.on_send(seq, ctx.now, self.snd_max - self.snd_una);
            }
        }
        let mut f = flags::DATA;
        if seq + 1 == self.total_segs && self.params.fin {
            f |= flags::FIN;
        }
        if retx {
            self.retransmits += 1;
            self.rtt_seq = None; // Karn: no sample across a retransmission
            self.sent
                .mark_retransmitted(&mut self.sent_spill, (seq - self.snd_una) as usize);
        } else {
            self.sent.push_back(&mut self.sent_spill, (ctx.now, false));
            if self.rtt_seq.is_none() {
                self.rtt_seq = Some(seq);
                self.rtt_time = ctx.now;
            }
            self.snd_max = seq + 1;
            // (set only when ECN is on: `ecn` lies in the cold part)
            if self.params.ecn && self.ecn.cwr_pending {
                if self.ecn.mode == EcnMode::Classic {
                    f |= flags::CWR;
                }
                self.ecn.cwr_pending = false;
            }
        }
        // the first data segment (counted only here): the test reads a
        // line an event touches anyway, `first_data_at` lies in the cold part
        if self.segments_sent == 0 {
            self.first_data_at = Some(ctx.now);
        }
        self.segments_sent += 1;
        // RFC 3168 §6.1.5: no ECT on retransmitted segments.
        let ecn = if self.params.ecn && !retx && self.ecn.mode != EcnMode::Off {
            self.cc.codepoint()
        } else {
            Ecn::NotEct
        };
        ctx.out.push(Packet {
            flow: self.flow,
            src: self.src,
            dst: self.dst,
            seq,
            size: payload + self.params.header_bytes + self.ts_bytes(),
            payload,
            flags: f,
            ecn,
            sent_time: ctx.now,
            ext: self.seg_ext(),
            ..Default::default()
        });
        if self.params.rack {
            self.now = ctx.now;
            self.with_rec(|r, io| r.on_transmit(io, seq));
            self.flush_timers(ctx);
        }
        if let Some(rate) = self.pacing_rate() {
            let wire = (payload + self.params.header_bytes + self.ts_bytes()) as f64;
            self.next_send = self.next_send.max(ctx.now) + (wire / rate * 1e9) as Time;
        }
        if !self.rto_timer.is_armed() || (!retx && self.pto_armed) {
            // RFC 8985 §7.2: (re)start the PTO after new data is sent
            self.arm_rto(ctx);
        }
    }

    /// Process an ACK (or SYN-ACK) from the receiver.
    pub fn on_ack(&mut self, ack: &Packet, ctx: &mut TcpCtx) {
        self.sync(ctx.now);
        let accecn = self.params.ecn
            && self.ecn.mode == EcnMode::AccEcn
            && self.state == SenderState::Established
            && !ack.has(flags::SYN);
        let fed;
        let ack = if accecn {
            fed = self.accecn_feedback(ack);
            &fed
        } else {
            ack
        };
        self.cc.on_ack_packet(&mut self.cc_state, ack);
        match self.state {
            SenderState::SynSent => {
                if ack.has(flags::SYN) && ack.has(flags::ACK) {
                    if self.params.ecn {
                        let m = ecn::client_mode(self.ecn.mode, ack.flags);
                        self.ecn.mode = self.cc.ecn_mode(m);
                    }
                    if !self.syn_resent {
                        self.rtt_sample(ctx.now - self.syn_time);
                    }
                    self.backoff = 0;
                    self.rto_timer.cancel();
                    self.state = SenderState::Established;
                    self.send_available(ctx);
                }
                return;
            }
            SenderState::Established => {}
            _ => return,
        }
        if ack.has(flags::SYN) {
            return; // duplicate SYN-ACK
        }
        let a = ack.ack;
        if self.params.ecn
            && ack.has(flags::ECE)
            && self.ecn.mode != EcnMode::Off
            && (a as i64 - 1) > self.ecn.recover
            && !self.in_recovery
        {
            // RFC 3168 §6.1.2: once per window of data.
            self.cc_state.ssthresh = self.cc.ssthresh(&self.cc_state);
            self.cc_state.cwnd = self.cc_state.ssthresh;
            self.ecn.recover = self.snd_max as i64 - 1;
            self.ecn.cwr_pending = true;
            self.ecn_reductions += 1;
        }
        if a > self.snd_una {
            self.on_new_ack(a, ack, ctx);
        } else if a == self.snd_una && self.snd_max > self.snd_una && ack.payload == 0 {
            self.on_dupack(ack, ctx);
        }
    }

    /// RFC 9768 §3.2.2: the CE packets this ACK's ACE reports (with the
    /// wrap safety rule over the packets it newly delivers: its cumulative
    /// advance, or 1 for a duplicate ACK), handed to the controller; the
    /// returned copy carries ECE iff that count is positive, and no ACE.
    fn accecn_feedback(&mut self, ack: &Packet) -> Packet {
        let delivered = ack
            .ack
            .min(self.snd_max)
            .saturating_sub(self.snd_una)
            .max(1);
        let d = ecn::ce_delta(self.ecn.s_cep, ecn::ace_of(ack.flags), delivered);
        self.ecn.s_cep = self.ecn.s_cep.wrapping_add(d);
        self.cc.on_ce_delta(d);
        let mut a = *ack;
        a.flags &= !(flags::AE | flags::CWR | flags::ECE);
        if d > 0 {
            a.flags |= flags::ECE;
        }
        a
    }

    fn on_new_ack(&mut self, a: u32, ack: &Packet, ctx: &mut TcpCtx) {
        let (prior_in_flight, retx_before) = (self.cc_state.in_flight, self.retransmits);
        let a = a.min(self.snd_max);
        let acked = a - self.snd_una;
        if let (true, Some(t)) = (self.params.timestamps, ack.ts_ecr.get()) {
            // RFC 7323 §4.1 RTTM: every ACK of new data gives a sample.
            self.rtt_sample(ctx.now.saturating_sub(t));
            self.rtt_seq = None;
        } else if let Some(s) = self.rtt_seq {
            if a > s {
                self.rtt_sample(ctx.now - self.rtt_time);
                self.rtt_seq = None;
            }
        }
        // Per-ACK RTT sample for the congestion controller (Karn: none if
        // any newly acknowledged segment was retransmitted).
        let (newest, retx) = self.sent.pop_acked(&mut self.sent_spill, acked);
        self.snd_una = a;
        if self.snd_nxt < a {
            self.snd_nxt = a;
        }
        self.sync(ctx.now);
        if let (Some(t), false) = (newest, retx) {
            let r = ctx.now - t;
            self.cc_state.last_rtt = Some(r);
            self.cc_state.min_rtt = Some(self.cc_state.min_rtt.map_or(r, |m| m.min(r)));
            self.cc.on_rtt(&self.cc_state, r, acked);
        }
        let was_in_recovery = self.in_recovery;
        let blocks = ack.sack_blocks();
        let dupacks = self.dupacks + 1;
        let (r, counted_dup) = self.with_rec(|r, io| {
            r.on_sack(io, blocks);
            let dup = r.new_ack_is_dupack();
            if dup {
                r.on_dupack(io, dupacks);
            }
            (r.on_new_ack(io, acked), dup)
        });
        if counted_dup {
            self.dupacks = dupacks;
        }
        self.flush_timers(ctx);
        self.flush_retx(ctx);
        let mut restart_timer = r.restart_timer || self.pto_armed;
        if was_in_recovery && self.in_recovery {
            // A partial ACK: `tcp.rto_restart` overrides the scheme's rule.
            match self.params.rto_restart {
                Some(RtoRestart::EveryAck) => restart_timer = true,
                Some(RtoRestart::FirstPartialAck) => restart_timer = !self.partial_acked,
                None => {}
            }
            self.partial_acked = true;
        }
        self.tlp_on_ack(a);
        if counted_dup {
            // a duplicate ACK (ns-3 `isDupack`): no reset, no window growth
        } else if !was_in_recovery && !self.in_recovery {
            self.dupacks = 0;
            let grow = self.rec.newly_delivered(acked);
            if grow > 0 {
                self.cc.on_ack(&mut self.cc_state, grow);
            }
        } else if !self.in_recovery {
            self.dupacks = 0;
        }
        if self.params.rate_cc {
            self.rate_step(ack, prior_in_flight, retx_before, ctx.now);
        }
        if self.snd_una >= self.total_segs {
            self.state = SenderState::Done;
            self.completion_time = Some(ctx.now);
            self.rto_timer.cancel();
            return;
        }
        if self.snd_una >= self.snd_max {
            self.rto_timer.cancel();
        } else if restart_timer {
            self.rto_timer.cancel();
            self.arm_rto(ctx);
        }
        self.send_available(ctx);
    }

    fn on_dupack(&mut self, ack: &Packet, ctx: &mut TcpCtx) {
        let (prior_in_flight, retx_before) = (self.cc_state.in_flight, self.retransmits);
        self.dupacks += 1;
        if self.pto_armed {
            // SACKed data: no probe now (RFC 8985 §7.2); the RTO guards
            self.rto_timer.cancel();
            self.pto_armed = false;
            self.arm_rto(ctx);
        }
        let dupacks = self.dupacks;
        let blocks = ack.sack_blocks();
        let send = self.with_rec(|r, io| {
            r.on_sack(io, blocks);
            r.on_dupack(io, dupacks)
        });
        self.flush_timers(ctx);
        self.flush_retx(ctx);
        if self.params.rate_cc {
            self.rate_step(ack, prior_in_flight, retx_before, ctx.now);
        }
        if send || self.params.rate_cc || (self.params.limited_transmit && !self.in_recovery) {
            self.send_available(ctx);
        }
    }

    /// The retransmission timer fired (or the loss-probe timer that shares
    /// it).
    pub fn on_rto(&mut self, ctx: &mut TcpCtx) {
        self.sync(ctx.now);
        if self.pto_armed {
            if self.state == SenderState::Established && self.snd_una < self.snd_max {
                self.on_pto(ctx);
            } else {
                self.pto_armed = false;
            }
            return;
        }
        if self.params.tlp {
            // (set only with TLP on: `tlp_end` lies in the cold part)
            self.tlp_end = None;
        }
        match self.state {
            SenderState::SynSent => {
                self.syn_resent = true;
                self.timeouts += 1;
                self.backoff += 1;
                self.send_syn(ctx);
            }
            SenderState::Established if self.snd_una < self.snd_max => {
                self.timeouts += 1;
                // RFC 5681 §3.1 (eq. 4 and the paragraph after it): a
                // segment the timer already resent keeps ssthresh; ns-2
                // recomputes it on every expiry (`RtoSsthresh`)
                let repeated = self.rto_una == self.snd_una;
                self.rto_una = self.snd_una;
                match self.params.rto_ssthresh {
                    Some(RtoSsthresh::Cut) if repeated => {
                        // ns-2 `slowdown(CLOSE_SSTHRESH_HALF)`: half of
                        // `window()` = min(cwnd, wnd), the window the
                        // previous timeout left, not the flight
                        let mut v = self.cc_state.clone();
                        v.in_flight = v.cwnd.max(0.0) as u32;
                        self.cc_state.ssthresh = self.cc.ssthresh(&v);
                    }
                    Some(RtoSsthresh::Cut) => {
                        self.cc_state.ssthresh = self.cc.ssthresh(&self.cc_state);
                    }
                    Some(RtoSsthresh::Hold) | None => {
                        if !repeated && !self.rec.holds_ssthresh_on_timeout() {
                            self.cc_state.ssthresh = self.cc.ssthresh(&self.cc_state);
                        }
                    }
                }
                self.cc.on_timeout(&self.cc_state);
                self.cc_state.cwnd = 1.0;
                let go_back_n = self.with_rec(|r, io| r.on_rto(io));
                self.dupacks = 0;
                if self.params.ecn {
                    // RFC 3168 §6.1.2: CWR after a timeout too.
                    self.ecn.recover = self.snd_max as i64 - 1;
                    self.ecn.cwr_pending = true;
                }
                self.backoff += 1;
                if go_back_n {
                    self.snd_nxt = self.snd_una;
                    let s = self.snd_una;
                    self.send_segment(s, ctx);
                    self.snd_nxt = s + 1;
                } else {
                    // RFC 6675 §5.1: resend only what is not SACKed.
                    self.send_available(ctx);
                }
                self.arm_rto(ctx);
            }
            _ => {}
        }
    }
}

/// Entries of the send history held in the sender itself.
const SENT_INLINE: usize = 4;

/// The send history — (send time, retransmitted) of segments
/// snd_una..snd_max, oldest first — as a deque that keeps up to
/// [`SENT_INLINE`] entries in the sender's hot part (send times, and the
/// retransmitted flags as bits of one byte: 40 bytes rather than 64) and
/// moves them all to a heap buffer, the spill deque the caller passes
/// (kept in the sender's cold part), when the window outgrows that (back
/// inline once it drains). With 10⁵ flows windows are a few segments, and
/// an ACK then finds its history on the sender's own hot cache lines rather
/// than behind a pointer. The storage has no effect on results.
#[derive(Default)]
struct SendLog {
    ring: [Time; SENT_INLINE],
    /// Bit `i`: the entry in `ring[i]` was retransmitted.
    retx: u8,
    /// First entry and entries in `ring` (0 while the spill holds them).
    head: u8,
    len: u8,
    /// The spill deque holds all entries (it is not empty), so that an
    /// ACK of an inline history does not read the deque's header.
    spilled: bool,
}

impl SendLog {
    /// The ring slot of entry `i` (`i < SENT_INLINE`).
    #[inline]
    fn slot(&self, i: usize) -> usize {
        (self.head as usize + i) % SENT_INLINE
    }

    // The paths that read `spill` are functions of their own, never
    // inlined: inlined, the compiler may load the deque's header ahead of
    // the `spilled` test (a `&mut` is always readable), and every ACK
    // would read the cold line that holds it.

    #[inline]
    fn push_back(&mut self, spill: &mut VecDeque<(Time, bool)>, e: (Time, bool)) {
        if !self.spilled && (self.len as usize) < SENT_INLINE {
            let k = self.slot(self.len as usize);
            self.ring[k] = e.0;
            self.retx = (self.retx & !(1 << k)) | ((e.1 as u8) << k);
            self.len += 1;
        } else {
            self.push_spilled(spill, e);
        }
    }

    /// [`SendLog::push_back`] beyond the inline ring.
    #[cold]
    #[inline(never)]
    fn push_spilled(&mut self, spill: &mut VecDeque<(Time, bool)>, e: (Time, bool)) {
        if !self.spilled {
            for i in 0..SENT_INLINE {
                let k = self.slot(i);
                spill.push_back((self.ring[k], self.retx & (1 << k) != 0));
            }
            (self.head, self.len, self.retx) = (0, 0, 0);
            self.spilled = true;
        }
        spill.push_back(e);
    }

    /// Remove the `n` oldest entries (all, if fewer): the newest one's
    /// send time, and whether any of them was retransmitted.
    #[inline]
    fn pop_acked(&mut self, spill: &mut VecDeque<(Time, bool)>, n: u32) -> (Option<Time>, bool) {
        if self.spilled {
            return self.pop_spilled(spill, n);
        }
        let (mut newest, mut retx) = (None, false);
        for _ in 0..n.min(self.len as u32) {
            let k = self.head as usize;
            newest = Some(self.ring[k]);
            retx |= self.retx & (1 << k) != 0;
            self.head = ((k + 1) % SENT_INLINE) as u8;
            self.len -= 1;
        }
        (newest, retx)
    }

    /// [`SendLog::pop_acked`] while the spill holds the entries.
    #[cold]
    #[inline(never)]
    fn pop_spilled(&mut self, spill: &mut VecDeque<(Time, bool)>, n: u32) -> (Option<Time>, bool) {
        let (mut newest, mut retx) = (None, false);
        for _ in 0..n {
            let Some((t, r)) = spill.pop_front() else {
                break;
            };
            newest = Some(t);
            retx |= r;
        }
        self.spilled = !spill.is_empty();
        (newest, retx)
    }

    /// Flag entry `i` (0 the oldest) as retransmitted, if it exists.
    #[inline]
    fn mark_retransmitted(&mut self, spill: &mut VecDeque<(Time, bool)>, i: usize) {
        if self.spilled {
            Self::mark_spilled(spill, i);
        } else if i < self.len as usize {
            self.retx |= 1 << self.slot(i);
        }
    }

    /// [`SendLog::mark_retransmitted`] while the spill holds the entries.
    #[cold]
    #[inline(never)]
    fn mark_spilled(spill: &mut VecDeque<(Time, bool)>, i: usize) {
        if let Some(e) = spill.get_mut(i) {
            e.1 = true;
        }
    }
}

/// See [`Sender::heap_addresses`].
pub struct SenderHeap {
    pub rec: Option<*const u8>,
    pub cc: *const u8,
    pub spill_front: Option<*const u8>,
    /// [from, to) of the ECN and TLP state in the sender's cold part.
    pub cold: Option<(*const u8, *const u8)>,
}

/// The address of the oldest entry of a spilled send history. Out of line:
/// inline, the compiler reads the deque's header (a cold line of the
/// record) before testing `spilled`, a cache miss on every ACK with 10⁵
/// flows.
#[cold]
#[inline(never)]
fn spill_front(d: &VecDeque<(Time, bool)>) -> Option<*const u8> {
    d.front().map(|e| e as *const (Time, bool) as *const u8)
}

impl Sender {
    /// Addresses of the heap objects behind the sender that an ACK or a
    /// timer touches — the loss-recovery and congestion-control state and
    /// the oldest entry of the send history — and, with ECN or TLP on, the
    /// byte range of the sender's cold fields holding their state: what
    /// `sim::hints` loads ahead (reading them has no effect on results).
    #[inline]
    pub fn heap_addresses(&self) -> SenderHeap {
        SenderHeap {
            rec: self
                .rec
                .boxed()
                .map(|r| r as *const dyn LossRecovery as *const u8),
            cc: &*self.cc as *const dyn CongestionControl as *const u8,
            // (the deque's header lies in the cold part: read only when the
            // history outgrew the inline ring)
            spill_front: if self.sent.spilled {
                spill_front(&self.sent_spill)
            } else {
                None
            },
            cold: (self.params.ecn || self.params.tlp).then(|| {
                (
                    &self.ecn as *const EcnState as *const u8,
                    (&self.loss_probes as *const u64).wrapping_add(1) as *const u8,
                )
            }),
        }
    }

    pub fn src_node(&self) -> NodeId {
        self.src
    }
    pub fn dst_node(&self) -> NodeId {
        self.dst
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::CcKind;

    struct H {
        s: Sender,
        out: Vec<Packet>,
        timers: Vec<(Time, TimerKind)>,
        now: Time,
    }

    impl H {
        fn new(cc: CcKind, cwnd: f64) -> H {
            let p = TcpParams {
                init_cwnd: cwnd,
                delayed_ack: false,
                ..TcpParams::default()
            };
            let mut h = H {
                s: Sender::new(p, cc.build(), FlowId(0), NodeId(0), NodeId(1), None),
                out: vec![],
                timers: vec![],
                now: 0,
            };
            h.with(|s, c| s.start(c));
            h
        }
        fn with(&mut self, f: impl FnOnce(&mut Sender, &mut TcpCtx)) {
            let mut c = TcpCtx {
                now: self.now,
                out: &mut self.out,
                timers: &mut self.timers,
            };
            f(&mut self.s, &mut c);
        }
        fn ack(&mut self, a: u32) -> Vec<u32> {
            self.out.clear();
            let p = Packet {
                ack: a,
                flags: flags::ACK,
                ..Default::default()
            };
            self.with(|s, c| s.on_ack(&p, c));
            self.out.iter().map(|p| p.seq).collect()
        }
    }

    /// The send history behaves as the deque it replaces (flags included),
    /// across the move to the heap buffer and back inline.
    #[test]
    fn send_log_is_a_deque() {
        let mut log = SendLog::default();
        let mut spill = VecDeque::new();
        let mut reference: VecDeque<(Time, bool)> = VecDeque::new();
        // what popping `n` entries from the reference gives
        let pop = |reference: &mut VecDeque<(Time, bool)>, n: u32| {
            let (mut newest, mut retx) = (None, false);
            for _ in 0..n {
                if let Some((t, r)) = reference.pop_front() {
                    newest = Some(t);
                    retx |= r;
                }
            }
            (newest, retx)
        };
        let mut spilled = false;
        let mut rng = crate::engine::RngStream::new(7, 8);
        for step in 0..20_000u64 {
            match rng.below(5) {
                0 | 1 => {
                    // now and then an entry already flagged, so that a
                    // slot's stale flag must be cleared
                    let e = (step, rng.below(4) == 0);
                    log.push_back(&mut spill, e);
                    reference.push_back(e);
                }
                2 => {
                    let n = rng.below(3) as u32;
                    assert_eq!(log.pop_acked(&mut spill, n), pop(&mut reference, n));
                }
                3 => {
                    let i = rng.below(8) as usize;
                    log.mark_retransmitted(&mut spill, i);
                    if let Some(b) = reference.get_mut(i) {
                        b.1 = true;
                    }
                }
                _ => {
                    // drain to empty now and then, so the log goes back
                    // inline; sometimes asking for more than it holds
                    if rng.below(50) == 0 {
                        let n = reference.len() as u32 + rng.below(2) as u32;
                        assert_eq!(log.pop_acked(&mut spill, n), pop(&mut reference, n));
                        assert_eq!(log.pop_acked(&mut spill, 1), (None, false));
                        assert!(!log.spilled && spill.is_empty());
                    }
                }
            }
            assert_eq!(log.spilled, !spill.is_empty(), "step {step}");
            spilled |= log.spilled;
        }
        assert!(spilled, "the history went to the heap buffer");
        let n = reference.len() as u32;
        assert_eq!(log.pop_acked(&mut spill, n), pop(&mut reference, n));
        assert_eq!(log.pop_acked(&mut spill, 1), (None, false));
    }

    #[test]
    fn fast_retransmit_recovery_and_partial_acks() {
        let mut h = H::new(CcKind::NewReno(Default::default()), 10.0);
        assert_eq!(h.out.len(), 10, "initial window");
        h.now = 100_000_000;
        // segments 2 and 5 are lost; ACKs for 0, 1 arrive, then dupacks for 2
        h.ack(1);
        h.ack(2);
        let sent = h.ack(2);
        assert!(sent.is_empty());
        h.ack(2);
        let flight = h.s.snd_max - 2;
        let sent = h.ack(2); // third duplicate
        assert_eq!(sent.first(), Some(&2), "fast retransmit of the hole");
        assert!(h.s.in_recovery);
        assert_eq!(h.s.cc_state.ssthresh, (flight as f64 / 2.0).max(2.0));
        assert_eq!(h.s.cc_state.cwnd, h.s.cc_state.ssthresh + 3.0);
        let before = h.s.cc_state.cwnd;
        h.ack(2);
        assert_eq!(h.s.cc_state.cwnd, before + 1.0, "window inflation");
        // partial ACK up to the second hole (5): retransmit 5, deflate
        let deadline_before = h.s.rto_timer.deadline();
        h.now += 10_000_000;
        let cw = h.s.cc_state.cwnd;
        let sent = h.ack(5);
        assert_eq!(sent.first(), Some(&5));
        assert_eq!(
            h.s.cc_state.cwnd,
            cw - 3.0 + 1.0,
            "deflate by acked, add one"
        );
        assert!(
            h.s.in_recovery,
            "NewReno stays in recovery on a partial ACK"
        );
        let first_partial_deadline = h.s.rto_timer.deadline();
        assert_ne!(
            first_partial_deadline, deadline_before,
            "timer reset on the first partial ACK"
        );
        // a second partial ACK does not reset the timer (RFC 6582 "Impatient")
        h.now += 10_000_000;
        h.ack(6);
        assert_eq!(h.s.rto_timer.deadline(), first_partial_deadline);
        // full ACK ends recovery with cwnd = ssthresh
        let sent_max = h.s.snd_max;
        h.ack(sent_max);
        assert!(!h.s.in_recovery);
        assert_eq!(h.s.cc_state.cwnd, h.s.cc_state.ssthresh);
        assert_eq!(h.s.counters().fast_retransmits, 1);
    }

    /// `tcp.rto_restart = "every-ack"` overrides NewReno's own rule (RFC
    /// 6582 "Impatient": the first partial ACK only): every partial ACK
    /// restarts the timer, as Linux `tcp_rearm_rto` does.
    #[test]
    fn rto_restart_every_ack_overrides_newreno_impatient() {
        let mut h = H::new(CcKind::NewReno(Default::default()), 10.0);
        let mut p = (*h.s.params).clone();
        p.rto_restart = Some(RtoRestart::EveryAck);
        h.s.params = p.into();
        h.now = 100_000_000;
        for a in [1, 2, 2, 2, 2] {
            h.ack(a);
        }
        assert!(h.s.in_recovery);
        h.now += 10_000_000;
        h.ack(5);
        let first = h.s.rto_timer.deadline();
        h.now += 10_000_000;
        h.ack(6);
        assert!(h.s.in_recovery, "6 is a partial ACK");
        assert!(h.s.rto_timer.deadline() > first, "restarted again");
    }

    #[test]
    fn reno_leaves_recovery_on_first_new_ack() {
        let mut h = H::new(CcKind::Reno(Default::default()), 10.0);
        for a in [1, 2, 2, 2, 2] {
            h.ack(a);
        }
        assert!(h.s.in_recovery);
        h.ack(5); // partial for NewReno, but Reno exits
        assert!(!h.s.in_recovery);
        assert_eq!(h.s.cc_state.cwnd, h.s.cc_state.ssthresh);
    }

    #[test]
    fn timeout_backs_off_and_goes_back_n() {
        let mut h = H::new(CcKind::NewReno(Default::default()), 4.0);
        let rto0 = h.s.rto();
        assert_eq!(rto0, 1_000_000_000, "initial RTO before any sample");
        h.now = rto0;
        h.out.clear();
        h.with(|s, c| s.on_rto(c));
        assert_eq!(h.out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![0]);
        assert_eq!(h.s.cc_state.cwnd, 1.0);
        assert_eq!(h.s.rto(), 2 * rto0, "exponential backoff");
        assert_eq!(h.s.counters().timeouts, 1);
        assert_eq!(h.s.counters().retransmits, 1);
        // Karn: the ACK of a retransmitted segment gives no RTT sample
        h.now += 50_000_000;
        h.ack(4);
        assert!(h.s.srtt().is_none());
        assert_eq!(h.s.rto(), 2 * rto0, "backoff kept until a valid sample");
    }

    #[test]
    fn per_ack_rtt_samples_follow_karn() {
        let mut h = H::new(CcKind::NewReno(Default::default()), 4.0); // segments 0..4 sent at t = 0
        h.now = 30_000_000;
        h.ack(2);
        assert_eq!(h.s.cc_state.last_rtt, Some(30_000_000));
        // segment 4 and 5 go out at t = 30 ms (window growth); ACK at 70 ms
        h.now = 70_000_000;
        h.ack(5);
        assert_eq!(
            h.s.cc_state.last_rtt,
            Some(40_000_000),
            "newest acked segment (4) was sent at 30 ms"
        );
        assert_eq!(h.s.cc_state.min_rtt, Some(30_000_000));
        // a timeout retransmits segment 5: its ACK gives no sample
        h.now = 2_000_000_000;
        h.with(|s, c| s.on_rto(c));
        h.now += 10_000_000;
        h.ack(6);
        assert_eq!(
            h.s.cc_state.last_rtt,
            Some(40_000_000),
            "no sample from a retransmitted segment"
        );
    }

    #[test]
    fn rtt_estimator_follows_rfc6298() {
        let mut h = H::new(CcKind::NewReno(Default::default()), 1.0);
        h.now = 100_000_000; // 100 ms RTT sample
        h.ack(1);
        assert_eq!(h.s.srtt(), Some(100_000_000));
        // RTO = SRTT + max(G, 4·RTTVAR) = 100 + 4·50 = 300 ms
        assert_eq!(h.s.rto(), 300_000_000);
        h.now += 200_000_000; // next sample: 200 ms
        h.ack(2);
        // RTTVAR = 3/4·50 + 1/4·|100−200| = 62.5; SRTT = 7/8·100 + 1/8·200 = 112.5
        assert_eq!(h.s.srtt(), Some(112_500_000));
        assert_eq!(h.s.rto(), 112_500_000 + 250_000_000);
    }
}
