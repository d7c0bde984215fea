//! TCP: a sender with RFC 6298 RTO and a loss-recovery layer (`recovery`:
//! Reno, NewReno, SACK with PRR), a receiver with delayed ACKs, SACK blocks
//! and timestamps, the congestion-control trait (`cc`), and stack profiles
//! (`profile`).
//!
//! Sequence numbers count segments (ns-2's model): segment `i` carries
//! payload bytes `[i·mss, (i+1)·mss)`; the last segment of a sized transfer
//! may be shorter. Windows are in segments.

pub mod cc;
pub mod ecn;
pub mod profile;
pub mod rate;
pub mod receiver;
pub mod recovery;
pub mod sender;

use crate::engine::Time;
use crate::net::packet::Packet;
use crate::units::Dur;
use serde::{Deserialize, Serialize};

pub use profile::Profile;
pub use receiver::Receiver;
pub use recovery::{RecoveryKind, RtoRestart, RtoSsthresh, SackVariant};
pub use sender::Sender;

/// The timers of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    /// The flow's application starts.
    Start,
    /// Sender retransmission timer.
    Rto,
    /// Receiver delayed-ACK timer.
    DelAck,
    /// Sender pacing: the next segment may leave (`tcp.pacing`).
    Pace,
    /// RACK reordering timer (RFC 8985 §6.3, `tcp.rack`).
    Rack,
}

/// What a TCP endpoint hands back to the simulation.
pub struct TcpCtx<'a> {
    pub now: Time,
    /// Packets to send from this endpoint's node.
    pub out: &'a mut Vec<Packet>,
    /// Timer events to schedule.
    pub timers: &'a mut Vec<(Time, TimerKind)>,
}

/// TCP parameters as written in a scenario's `[tcp]` table (global defaults)
/// or a flow's `tcp` table (overrides). Every field is optional; unset fields
/// take the value from the level above, and finally [`TcpParams::default`].
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TcpOptions {
    /// Payload bytes per full segment (MSS): bytes, or a size with a unit.
    #[serde(default, deserialize_with = "crate::units::opt_bytes_u32")]
    pub mss: Option<u32>,
    /// TCP/IP header bytes added to every segment; a pure ACK is this size.
    #[serde(default, deserialize_with = "crate::units::opt_bytes_u32")]
    pub header_bytes: Option<u32>,
    /// Initial congestion window, segments.
    pub init_cwnd: Option<f64>,
    /// Initial slow-start threshold, segments (default: no limit).
    pub init_ssthresh: Option<f64>,
    /// Receive window (the cap on the sender's window), segments.
    pub max_window: Option<u32>,
    /// Minimum RTO.
    pub min_rto: Option<Dur>,
    /// Maximum RTO.
    pub max_rto: Option<Dur>,
    /// RTO before any RTT sample (RFC 6298 §2.1; also the SYN timeout "ITO").
    pub initial_rto: Option<Dur>,
    /// Timeout of the SYN (handshake), before backoff; unset: `initial_rto`.
    pub syn_rto: Option<Dur>,
    /// Clock granularity G in RFC 6298 §2.3: RTO = SRTT + max(G, 4·RTTVAR).
    pub granularity: Option<Dur>,
    /// Receiver delays ACKs (one ACK per `delack_count` in-order segments).
    pub delayed_ack: Option<bool>,
    /// Segments per delayed ACK.
    pub delack_count: Option<u32>,
    /// Delayed-ACK timeout.
    pub delack_timeout: Option<Dur>,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: Option<u32>,
    /// Open the connection with a SYN / SYN-ACK handshake.
    pub handshake: Option<bool>,
    /// ECN-capable transport (RFC 3168): data carries ECT(0), the receiver
    /// echoes CE with ECE, the sender reacts once per window and sets CWR.
    pub ecn: Option<bool>,
    /// ECN feedback with `ecn = true`: "rfc3168" (ECE/CWR) or "accecn"
    /// (RFC 9768, negotiated in the handshake; `tcp/ecn.rs`).
    pub ecn_feedback: Option<ecn::EcnFeedback>,
    /// Stack profile: every default as that stack sets it (see
    /// [`Profile`]); keys written beside it override it.
    pub profile: Option<Profile>,
    /// SACK option (RFC 2018): the receiver sends SACK blocks.
    pub sack: Option<bool>,
    /// Timestamps option (RFC 7323): +12 bytes per segment, an RTT sample
    /// per ACK.
    pub timestamps: Option<bool>,
    /// Loss recovery: "reno", "newreno" or "sack" (default: the congestion
    /// controller's own, Reno for `reno` and NewReno for the others).
    pub recovery: Option<RecoveryKind>,
    /// Proportional Rate Reduction (RFC 6937) in SACK recovery.
    pub prr: Option<bool>,
    /// RACK loss detection (RFC 8985 §6) in SACK recovery; needs
    /// `recovery = "sack"`. Tail loss probes (§7) are `tlp`.
    pub rack: Option<bool>,
    /// Pace segments at Linux's internal pacing rate (`tcp_update_pacing_rate`:
    /// cwnd·mss/srtt × 200 % below ssthresh/2, × 120 % above).
    pub pacing: Option<bool>,
    /// The receiver acknowledges the first data segment after the
    /// handshake at once, then every `delack_count` (ns-3 `TcpSocketBase`:
    /// "always respond to first data packet to speed up the connection").
    pub ack_first_segment: Option<bool>,
    /// Limited Transmit (RFC 3042; RFC 6675 §5 step 3 with SACK): new data
    /// on the duplicate ACKs before DupThresh.
    pub limited_transmit: Option<bool>,
    /// Tail Loss Probe (RFC 8985 §7); needs `rack = true`.
    pub tlp: Option<bool>,
    /// Which new ACKs in fast recovery restart the retransmission timer:
    /// "every-ack" or "first-partial-ack" (default: the recovery scheme's
    /// own rule, see [`RtoRestart`]).
    pub rto_restart: Option<RtoRestart>,
    /// What a repeated timeout (the timer resending the segment it resent
    /// last time) does to ssthresh: "hold" (RFC 5681 §3.1, Linux, ns-3;
    /// the default) or "cut" (ns-2: every timeout recomputes it); see
    /// [`RtoSsthresh`].
    pub rto_ssthresh: Option<RtoSsthresh>,
    /// SACK recovery as the RFCs write it, "rfc" (RFC 6675 with RFC 6937
    /// PRR-SSRB, the default), or as ns-3 3.44 codes it, "ns3" (see
    /// `recovery/sack.rs`).
    pub sack_variant: Option<SackVariant>,
    /// The last segment of a sized transfer carries FIN and the receiver
    /// acknowledges it at once (Linux `tcp_send_fin` puts FIN on the last
    /// queued data, `tcp_fin` schedules the ACK; ns-3 `TcpSocketBase`
    /// sends FIN with the last data and `DoPeerClose` ACKs it). Off:
    /// ns-2's one-way TCP, which has no FIN, where an unpaired last
    /// segment waits for the delayed-ACK timer.
    pub fin: Option<bool>,
}

impl TcpOptions {
    /// Overlay the keys `o` sets.
    fn merge(&mut self, o: &TcpOptions) {
        macro_rules! m {
            ($($f:ident),*) => { $( if o.$f.is_some() { self.$f = o.$f; } )* };
        }
        m!(
            mss,
            header_bytes,
            init_cwnd,
            init_ssthresh,
            max_window,
            min_rto,
            max_rto,
            initial_rto,
            syn_rto,
            granularity,
            delayed_ack,
            delack_count,
            delack_timeout,
            dupack_threshold,
            handshake,
            ecn,
            ecn_feedback,
            profile,
            sack,
            timestamps,
            recovery,
            prr,
            rack,
            pacing,
            ack_first_segment,
            limited_transmit,
            tlp,
            rto_restart,
            rto_ssthresh,
            sack_variant,
            fin
        );
    }
}

/// Largest MSS accepted: a 65535-byte IPv4 datagram less 20 B IP and 20 B
/// TCP headers.
pub const MAX_MSS: u32 = 65_495;
/// Smallest per-segment header accepted (an IPv4 header alone).
pub const MIN_HEADER: u32 = 20;
/// Largest per-segment header accepted (IPv6 40 B + TCP with options 60 B,
/// with room for tunnels: 120 B).
pub const MAX_HEADER: u32 = 120;

/// Resolved TCP parameters of one flow.
#[derive(Clone, Debug, Serialize)]
pub struct TcpParams {
    pub mss: u32,
    pub header_bytes: u32,
    pub init_cwnd: f64,
    pub init_ssthresh: f64,
    pub max_window: u32,
    pub min_rto: Time,
    pub max_rto: Time,
    pub initial_rto: Time,
    /// `None`: `initial_rto`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub syn_rto: Option<Time>,
    pub granularity: Time,
    pub delayed_ack: bool,
    pub delack_count: u32,
    pub delack_timeout: Time,
    pub dupack_threshold: u32,
    pub handshake: bool,
    pub ecn: bool,
    pub ecn_feedback: ecn::EcnFeedback,
    pub profile: Option<Profile>,
    pub sack: bool,
    pub timestamps: bool,
    /// `None`: the congestion controller's own scheme.
    pub recovery: Option<RecoveryKind>,
    pub prr: bool,
    pub rack: bool,
    pub pacing: bool,
    pub ack_first_segment: bool,
    pub limited_transmit: bool,
    pub tlp: bool,
    /// `None`: the recovery scheme's own rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rto_restart: Option<RtoRestart>,
    /// `None`: "hold".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rto_ssthresh: Option<RtoSsthresh>,
    /// `None`: "rfc".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sack_variant: Option<SackVariant>,
    pub fin: bool,
    /// The flow's congestion control is rate-based
    /// (`CongestionControl::rate_based`): the sender keeps delivery-rate
    /// state and paces at the controller's rate (set by the sender, not a
    /// scenario key).
    #[serde(skip)]
    pub rate_cc: bool,
    /// The run's seed, from which each flow's congestion-control seed is
    /// derived (`CongestionControl::seed`; set by the simulation builder
    /// and the workloads, not a scenario key).
    #[serde(skip)]
    pub cc_seed: u64,
    /// The DSCP the sender puts on its segments (the flow group's `dscp`,
    /// not a `tcp` key; 0: none, CS0).
    #[serde(skip)]
    pub dscp: u8,
    /// Every key set explicitly so far, in layer order (a profile named in
    /// a later layer is applied under all of them).
    #[serde(skip)]
    pub explicit: TcpOptions,
}

impl Default for TcpParams {
    /// Defaults follow the RFCs and today's stacks where they agree; paper
    /// scenarios pin every value explicitly (ns-2 differs: see README).
    fn default() -> Self {
        TcpParams {
            mss: 1000,
            header_bytes: 40,
            init_cwnd: 2.0,
            init_ssthresh: 1e9,
            max_window: 10_000,
            min_rto: 200_000_000,
            max_rto: 60_000_000_000,
            initial_rto: 1_000_000_000,
            syn_rto: None,
            granularity: 1_000_000,
            delayed_ack: true,
            delack_count: 2,
            delack_timeout: 200_000_000,
            dupack_threshold: 3,
            handshake: false,
            ecn: false,
            ecn_feedback: ecn::EcnFeedback::Rfc3168,
            profile: None,
            sack: false,
            timestamps: false,
            recovery: None,
            prr: false,
            rack: false,
            pacing: false,
            ack_first_segment: false,
            limited_transmit: false,
            tlp: false,
            rto_restart: None,
            rto_ssthresh: None,
            sack_variant: None,
            fin: false,
            rate_cc: false,
            cc_seed: 0,
            dscp: 0,
            explicit: TcpOptions::default(),
        }
    }
}

impl TcpParams {
    /// Apply the options that are set. Options accumulate over calls (the
    /// scenario's `[tcp]`, then a flow's `tcp`); a `profile` set at any
    /// level replaces the defaults under every explicit key.
    pub fn apply(&mut self, o: &TcpOptions) {
        let prev = self.explicit.profile;
        self.explicit.merge(o);
        if self.explicit.profile != prev {
            let explicit = std::mem::take(&mut self.explicit);
            *self = match explicit.profile {
                Some(p) => p.params(),
                None => TcpParams::default(),
            };
            self.profile = explicit.profile;
            self.apply_keys(&explicit);
            self.explicit = explicit;
        } else {
            self.apply_keys(o);
        }
        // A profile's TLP follows RACK: `rack = false` beside `linux-6.1`
        // turns its probe off too; `tlp = true` written without RACK stays
        // an error (`validate`).
        if self.explicit.tlp.is_none() && !self.rack {
            self.tlp = false;
        }
        // ns-3 3.44 has no RACK: `rack = true` beside `ns3-3.44` runs the
        // RFC SACK recovery with RACK; `sack_variant = "ns3"` written with
        // RACK is an error (`validate`).
        if self.explicit.sack_variant.is_none() && self.rack {
            self.sack_variant = None;
        }
    }

    fn apply_keys(&mut self, o: &TcpOptions) {
        macro_rules! set {
            ($f:ident) => {
                if let Some(v) = o.$f {
                    self.$f = v;
                }
            };
            ($f:ident, dur) => {
                if let Some(v) = o.$f {
                    self.$f = v.0;
                }
            };
        }
        set!(mss);
        set!(header_bytes);
        set!(init_cwnd);
        set!(init_ssthresh);
        set!(max_window);
        set!(min_rto, dur);
        set!(max_rto, dur);
        set!(initial_rto, dur);
        set!(granularity, dur);
        set!(delayed_ack);
        set!(delack_count);
        set!(delack_timeout, dur);
        set!(dupack_threshold);
        set!(handshake);
        set!(ecn);
        set!(ecn_feedback);
        set!(sack);
        set!(timestamps);
        set!(prr);
        set!(rack);
        set!(pacing);
        set!(ack_first_segment);
        set!(limited_transmit);
        set!(tlp);
        set!(fin);
        if o.recovery.is_some() {
            self.recovery = o.recovery;
        }
        if o.rto_restart.is_some() {
            self.rto_restart = o.rto_restart;
        }
        if o.rto_ssthresh.is_some() {
            self.rto_ssthresh = o.rto_ssthresh;
        }
        if let Some(d) = o.syn_rto {
            self.syn_rto = Some(d.0);
        }
        if o.sack_variant.is_some() {
            self.sack_variant = o.sack_variant;
        }
    }

    /// Range checks; the error names the key.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let e = |k: &str, m: &str| Err((k.to_string(), m.to_string()));
        if !(1..=MAX_MSS).contains(&self.mss) {
            return Err((
                "mss".into(),
                format!(
                    "must be 1..={MAX_MSS} bytes (an IPv4 datagram of 65535 B less 40 B of headers), got {}",
                    self.mss
                ),
            ));
        }
        if !(MIN_HEADER..=MAX_HEADER).contains(&self.header_bytes) {
            return Err((
                "header_bytes".into(),
                format!(
                    "must be {MIN_HEADER}..={MAX_HEADER} bytes (IPv4 20 B up to IPv6 40 B plus TCP 60 B and options), got {}",
                    self.header_bytes
                ),
            ));
        }
        if !(self.init_cwnd >= 1.0 && self.init_cwnd.is_finite()) {
            return e("init_cwnd", "must be at least 1 segment");
        }
        if self.init_ssthresh.is_nan() || self.init_ssthresh < 2.0 {
            return e("init_ssthresh", "must be at least 2 segments");
        }
        if self.max_window == 0 {
            return e("max_window", "must be at least 1 segment");
        }
        if self.min_rto == 0 {
            return e("min_rto", "must be positive");
        }
        if self.max_rto < self.min_rto {
            return e("max_rto", "must be at least min_rto");
        }
        if self.initial_rto == 0 {
            return e("initial_rto", "must be positive");
        }
        if self.syn_rto == Some(0) {
            return e("syn_rto", "must be positive");
        }
        if self.delack_count == 0 {
            return e("delack_count", "must be at least 1");
        }
        if self.delayed_ack && self.delack_timeout == 0 {
            return e("delack_timeout", "must be positive when delayed_ack = true");
        }
        if self.dupack_threshold == 0 {
            return e("dupack_threshold", "must be at least 1");
        }
        if self.recovery == Some(RecoveryKind::Sack) && !self.sack {
            return e(
                "recovery",
                "\"sack\" needs sack = true (the receiver must send SACK blocks)",
            );
        }
        if self.rack && !self.sack {
            return e("rack", "RACK needs sack = true");
        }
        if self.rack && self.recovery != Some(RecoveryKind::Sack) {
            return e("rack", "RACK needs recovery = \"sack\"");
        }
        if self.sack_variant == Some(SackVariant::Ns3) {
            if self.rack {
                return e(
                    "sack_variant",
                    "\"ns3\" models ns-3 3.44, which has no RACK: set rack = false or sack_variant = \"rfc\"",
                );
            }
            if self.explicit.sack_variant.is_some() && self.recovery != Some(RecoveryKind::Sack) {
                return e("sack_variant", "\"ns3\" needs recovery = \"sack\"");
            }
        }
        if self.tlp && !self.rack {
            return e(
                "tlp",
                "the tail loss probe needs rack = true (RFC 8985 §7: RACK detects the losses the probe reveals)",
            );
        }
        Ok(())
    }
}

/// Per-flow counters.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowCounters {
    /// Data segments transmitted, retransmissions included.
    pub segments_sent: u64,
    /// Data segments retransmitted (fast retransmit, partial ACK, RTO).
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    /// Tail loss probes sent (RFC 8985 §7, `tcp.tlp`).
    pub loss_probes: u64,
    /// Congestion-window reductions caused by ECN echoes.
    pub ecn_reductions: u64,
}
