//! Loss recovery, a layer of its own under the sender and beside congestion
//! control: any congestion controller runs with any recovery scheme, as
//! Linux separates `tcp_congestion_ops` from its recovery state machine and
//! ns-3 separates `TcpCongestionOps` from `TcpRecoveryOps`.
//!
//! | `tcp.recovery` | file | source |
//! |---|---|---|
//! | `reno` | `reno.rs` | RFC 5681 §3.2 |
//! | `newreno` | `newreno.rs` | RFC 6582 §3.2 |
//! | `sack` | `sack.rs` (+ `scoreboard.rs`, `prr.rs`) | RFC 6675, RFC 6937 (PRR-SSRB, `tcp.prr`) |
//!
//! The sender detects new and duplicate ACKs and owns transmission and the
//! RTO timer; a scheme decides how the window changes in recovery, which
//! segments are retransmitted, and (SACK) which segment goes next.

pub mod newreno;
pub mod prr;
pub mod rack;
pub mod reno;
pub mod sack;
pub mod scoreboard;

use super::cc::CcState;
use super::cc::CongestionControl;
use serde::{Deserialize, Serialize};

/// `tcp.recovery`: the loss-recovery scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecoveryKind {
    /// RFC 5681 Reno fast recovery.
    Reno,
    /// RFC 6582 NewReno.
    NewReno,
    /// RFC 6675 SACK-based recovery (needs `tcp.sack = true`).
    Sack,
}

impl RecoveryKind {
    pub const NAMES: &'static [&'static str] = &["reno", "newreno", "sack"];
}

/// `tcp.rto_restart`: which new ACKs in fast recovery restart the
/// retransmission timer. Unset, each scheme keeps its own rule: NewReno
/// restarts it on the first partial ACK only (RFC 6582 §3.2 step 3,
/// "Impatient" §4), SACK on every ACK of new data (RFC 6298 §5.3; Linux
/// `tcp_ack` → `tcp_set_xmit_timer` → `tcp_rearm_rto`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RtoRestart {
    /// Every ACK of new data restarts the timer (RFC 6298 §5.3).
    EveryAck,
    /// In fast recovery only the first partial ACK of the episode restarts
    /// it; the full ACK that ends recovery and ACKs outside recovery do as
    /// usual (ns-3 `TcpSocketBase::ProcessAck`: `NewAck (ackNumber,
    /// m_isFirstPartialAck)` in `CA_RECOVERY`, for SACK and NewReno alike).
    FirstPartialAck,
}

/// `tcp.rto_ssthresh`: what a repeated retransmission timeout does to
/// ssthresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RtoSsthresh {
    /// A timeout that resends a segment the timer already resent (no new
    /// data acknowledged since the last timeout) keeps ssthresh (RFC 5681
    /// §3.1: "when a TCP sender detects segment loss using the
    /// retransmission timer and the given segment has already been
    /// retransmitted by way of the retransmission timer at least once, the
    /// value of ssthresh is held constant"). Linux 6.1 `tcp_enter_loss`
    /// (net/ipv4/tcp_input.c: ssthresh is set only when `icsk_ca_state <=
    /// TCP_CA_Disorder`, `snd_una == high_seq`, or in `TCP_CA_Loss` with
    /// `icsk_retransmits == 0`, which `tcp_ack` clears when snd_una
    /// advances) and ns-3 3.44 `TcpSocketBase::ReTxTimeout` (`m_ssThresh`
    /// only when not in `CA_LOSS` or the head was not retransmitted) do
    /// the same. SACK recovery also keeps it for any timeout during the
    /// loss recovery a timeout started (`recovery/sack.rs`, as ns-3).
    Hold,
    /// Every timeout recomputes ssthresh: ns-2.35 `TcpAgent::timeout`
    /// (tcp.cc) calls `slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_RESTART)` on
    /// each expiry (`Sack1TcpAgent::timeout` ends in it too).
    Cut,
}

impl RtoSsthresh {
    pub const NAMES: &'static [&'static str] = &["hold", "cut"];
}

/// `tcp.sack_variant`: which SACK loss recovery `recovery = "sack"` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SackVariant {
    /// RFC 6675 with RFC 6937 PRR-SSRB (`sack.rs`, `prr.rs`).
    Rfc,
    /// ns-3 3.44 as coded (`TcpSocketBase`, `TcpTxBuffer`,
    /// `TcpPrrRecovery`): see `sack.rs` and `prr.rs` for each rule.
    Ns3,
}

impl SackVariant {
    pub const NAMES: &'static [&'static str] = &["rfc", "ns3"];
}

impl RtoRestart {
    pub const NAMES: &'static [&'static str] = &["every-ack", "first-partial-ack"];
}

/// ECN state the recovery shares with the sender (RFC 3168 §6.1.2).
#[derive(Clone, Copy, Debug)]
pub struct EcnState {
    pub enabled: bool,
    /// The feedback mode (`tcp/ecn.rs`): asked for until the SYN-ACK,
    /// then negotiated (and accepted by the congestion control).
    pub mode: crate::tcp::ecn::EcnMode,
    /// RFC 9768 s.cep: CE packets the ACE fields have reported (from 5).
    pub s_cep: u32,
    /// Highest segment of the window already reduced.
    pub recover: i64,
    /// Set CWR on the next new segment.
    pub cwr_pending: bool,
}

/// The sender's queue of segments to (re)transmit at once, and its flag
/// that the queue is not empty: the flag lies with the sender's hot fields,
/// the queue with its cold ones, so that an ACK that queued nothing does
/// not read the queue's cache line.
pub struct RetxQueue<'a> {
    pub buf: &'a mut Vec<u32>,
    pub queued: &'a mut bool,
}

impl RetxQueue<'_> {
    /// Queue segment `seq`.
    #[inline]
    pub fn push(&mut self, seq: u32) {
        self.buf.push(seq);
        *self.queued = true;
    }
}

/// What a recovery scheme sees of the sender and may change.
pub struct RecIo<'a> {
    pub st: &'a mut CcState,
    pub cc: &'a mut dyn CongestionControl,
    /// First unacknowledged segment (after this ACK).
    pub snd_una: u32,
    /// One past the highest segment sent.
    pub snd_max: u32,
    /// Duplicate ACKs that trigger fast retransmit (DupThresh).
    pub dupthresh: u32,
    pub ecn: &'a mut EcnState,
    /// One past the highest segment that may be sent (data available and
    /// receive window).
    pub send_limit: u32,
    /// Segments to (re)transmit at once, in order (new data among them is
    /// `snd_max` and up).
    pub retx: RetxQueue<'a>,
    pub fast_retransmits: &'a mut u64,
    /// Now.
    pub now: crate::engine::Time,
    /// Smoothed RTT of the RFC 6298 estimator, if any.
    pub srtt: Option<crate::engine::Time>,
    /// Arm the RACK reordering timer at this time (set by the scheme).
    pub arm_rack: &'a mut Option<crate::engine::Time>,
}

impl RecIo<'_> {
    /// The reduction at the start of fast recovery, common to every scheme
    /// (RFC 5681 §3.2 step 2; RFC 3168 §6.1.2: one reduction per window for
    /// losses and ECN echoes together — a loss in a window already reduced
    /// on ECE keeps that ssthresh, as ns-2 and Linux do). Returns the
    /// recovery point (`recover`, RFC 6582 / RFC 6675 RecoveryPoint).
    pub fn enter_recovery(&mut self, a: u32) -> i64 {
        let reduce = !(self.ecn.enabled && a as i64 <= self.ecn.recover);
        if reduce {
            self.st.ssthresh = self.cc.ssthresh(self.st);
        }
        let recover = self.snd_max as i64 - 1;
        if self.ecn.enabled && reduce {
            // §6.1.2: CWR after a reduction "for any reason", and ECE
            // echoes of this window no longer reduce.
            self.ecn.recover = recover;
            self.ecn.cwr_pending = true;
        }
        *self.fast_retransmits += 1;
        recover
    }
}

/// What the sender does after a new ACK was handed to the scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewAck {
    /// Restart the retransmission timer (RFC 6298 §5.3), unless the scheme
    /// says otherwise (RFC 6582 "Impatient").
    pub restart_timer: bool,
}

/// A loss-recovery scheme.
pub trait LossRecovery: Send {
    fn name(&self) -> &'static str;

    /// In fast recovery (window growth by the congestion controller is
    /// suspended, ECN echoes do not reduce again).
    fn in_recovery(&self) -> bool;

    /// The SACK blocks of an ACK, before it is classified (SACK schemes).
    /// `snd_una` is the cumulative ACK it carries.
    fn on_sack(&mut self, _io: &mut RecIo, _blocks: &[(u32, u32)]) {}

    /// The cumulative ACK advanced by `acked` segments to `io.snd_una`.
    /// Outside recovery the sender then grows the window with the
    /// congestion controller if this returns `grow = true`.
    fn on_new_ack(&mut self, io: &mut RecIo, acked: u32) -> NewAck;

    /// A duplicate ACK (the `dupacks`-th in a row). Returns whether the
    /// sender should then send what the window allows.
    fn on_dupack(&mut self, io: &mut RecIo, dupacks: u32) -> bool;

    /// After [`LossRecovery::on_sack`] of an ACK that advanced the
    /// cumulative ACK: whether the scheme counts it as a duplicate ACK all
    /// the same (ns-3 3.44 with SACK: `isDupack = scoreboardUpdated`, an ACK
    /// that newly SACKs data, before recovery). The sender then counts it,
    /// calls [`LossRecovery::on_dupack`] before
    /// [`LossRecovery::on_new_ack`] and does not grow the window on it.
    fn new_ack_is_dupack(&self) -> bool {
        false
    }

    /// The retransmission timer fired (after the sender has taken ssthresh
    /// and set the loss window). Returns `true` if the sender should go
    /// back to `snd_una` (go-back-N), `false` if the scheme chooses what to
    /// resend through [`LossRecovery::next_segment`].
    fn on_rto(&mut self, io: &mut RecIo) -> bool;

    /// The scheme chooses what is sent next (SACK recovery after loss
    /// detection or a timeout); otherwise the sender fills the window
    /// `[snd_una, snd_una + cwnd)` with new data.
    fn controls_sending(&self) -> bool {
        false
    }

    /// The next segment to send now, if any (`io.snd_max` means new data);
    /// `limit` is one past the highest segment the sender may send (data
    /// available and receive window). Called only while
    /// [`LossRecovery::controls_sending`]. The scheme counts it as sent.
    fn next_segment(&mut self, _io: &mut RecIo, _limit: u32) -> Option<u32> {
        None
    }

    /// Outstanding segments not in the network: SACKed or presumed lost,
    /// less those retransmitted (so that outstanding minus this is the
    /// RFC 6675 pipe), for the flight size a congestion controller reduces
    /// from (RFC 5681 eq. 4 FlightSize).
    fn not_in_flight(&self) -> u32 {
        0
    }

    /// The scheme keeps a scoreboard, so [`LossRecovery::not_in_flight`]
    /// gives the RFC 6675 pipe (SACK); Reno and NewReno know nothing of
    /// what the receiver holds.
    fn counts_pipe(&self) -> bool {
        false
    }

    /// The highest segment a duplicate ACK must cover to start recovery
    /// (`recover`, RFC 6582 step 2).
    fn recover(&self) -> i64;

    /// Segments the ACK just processed newly delivered, given that it
    /// advanced the cumulative ACK by `acked`: what the congestion
    /// controller grows the window by. Without a scoreboard that is
    /// `acked`; with SACK it excludes segments already SACKed before (they
    /// were delivered, and counted, earlier) — ns-3 `TcpRateOps` /
    /// `currentDelivered`, Linux `tp->delivered − prior_delivered` handed to
    /// `tcp_cong_avoid`. Otherwise a cumulative ACK that fills the last hole
    /// after a timeout would open the window by everything the receiver
    /// held (a slow-start burst of thousands of segments).
    fn newly_delivered(&self, acked: u32) -> u32 {
        acked
    }

    /// A timeout while the previous timeout's recovery is still under way
    /// keeps ssthresh (RFC 5681 §3.1: "when a TCP sender detects segment
    /// loss using the retransmission timer and the given segment has
    /// already been retransmitted by way of the retransmission timer at
    /// least once, the value of ssthresh is held constant"; Linux
    /// `tcp_enter_loss`, ns-3 `TcpSocketBase::ReTxTimeout`). SACK holds it
    /// through the whole loss recovery; for every scheme the sender also
    /// holds it when the timer resends the segment it resent last time
    /// ([`RtoSsthresh::Hold`]).
    fn holds_ssthresh_on_timeout(&self) -> bool {
        false
    }

    /// Segment `seq` left at `io.now` (new data or a retransmission), for
    /// schemes that time segments (RACK).
    fn on_transmit(&mut self, _io: &mut RecIo, _seq: u32) {}

    /// The RACK reordering timer fired. Returns whether the sender should
    /// send what the window allows.
    fn on_rack_timer(&mut self, _io: &mut RecIo) -> bool {
        false
    }
}

/// A built scheme: Reno's and NewReno's few bytes of state inline (in the
/// sender's record, one cache line from the rest of its hot state), SACK
/// recovery with its scoreboard boxed. Used as `dyn LossRecovery` through
/// `Deref`.
pub enum Recovery {
    Reno(reno::Reno),
    NewReno(newreno::NewReno),
    Boxed(Box<dyn LossRecovery>),
}

impl Recovery {
    /// The boxed scheme's object, if any (for the cache hints to load it ahead).
    pub fn boxed(&self) -> Option<&dyn LossRecovery> {
        match self {
            Recovery::Boxed(r) => Some(r.as_ref()),
            _ => None,
        }
    }
}

impl std::ops::Deref for Recovery {
    type Target = dyn LossRecovery;
    #[inline]
    fn deref(&self) -> &(dyn LossRecovery + 'static) {
        match self {
            Recovery::Reno(r) => r,
            Recovery::NewReno(r) => r,
            Recovery::Boxed(r) => r.as_ref(),
        }
    }
}

impl std::ops::DerefMut for Recovery {
    #[inline]
    fn deref_mut(&mut self) -> &mut (dyn LossRecovery + 'static) {
        match self {
            Recovery::Reno(r) => r,
            Recovery::NewReno(r) => r,
            Recovery::Boxed(r) => r.as_mut(),
        }
    }
}

/// Build the scheme named `kind` (`prr`: bound sending in SACK recovery
/// with PRR-SSRB; `rack`: RACK loss detection in SACK recovery).
pub fn build(
    kind: RecoveryKind,
    prr: bool,
    sack_variant: Option<SackVariant>,
    rack: bool,
) -> Recovery {
    match kind {
        RecoveryKind::Reno => Recovery::Reno(reno::Reno::default()),
        RecoveryKind::NewReno => Recovery::NewReno(newreno::NewReno::default()),
        RecoveryKind::Sack => {
            let mut s = sack::SackRecovery::new(prr, rack);
            s.ns3 = sack_variant == Some(SackVariant::Ns3);
            s.sb.sticky_retx = s.ns3;
            Recovery::Boxed(Box::new(s))
        }
    }
}
