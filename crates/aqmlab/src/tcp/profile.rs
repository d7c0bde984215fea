//! Stack profiles (`tcp.profile`): every TCP default as one real stack sets
//! it. A key written beside the profile (in `[tcp]` or a flow's `tcp`)
//! overrides the profile's value. The segment size (`mss`), the receive
//! window (`max_window`) and the congestion controller are not part of a
//! profile: a scenario chooses them.
//!
//! | key | `ns2-2.35` | `ns3-3.44` | `linux-6.1` |
//! |---|---|---|---|
//! | `init_cwnd` | 2 (`windowInit_`) | 10 (`TcpSocket::InitialCwnd`) | 10 (`TCP_INIT_CWND`) |
//! | `min_rto` | 200 ms (`minrto_`) | 1 s (`TcpSocketBase::MinRto`) | 200 ms (`TCP_RTO_MIN`) |
//! | `max_rto` | 60 s (`maxrto_`) | 60 s (`m_maxRto`) | 120 s (`TCP_RTO_MAX`) |
//! | `initial_rto` | 3 s (`rtxcur_init_`) | 1 s (`RttEstimator::InitialEstimation`) | 1 s (`TCP_TIMEOUT_INIT`) |
//! | `syn_rto` | unset (`initial_rto`) | 3 s (`TcpSocket::ConnTimeout`) | unset (`initial_rto`) |
//! | `granularity` (G) | 10 ms (`tcpTick_`) | 1 ms (`ClockGranularity`) | 200 ms (*) |
//! | `delayed_ack` / `delack_count` | off / 1 (`TCPSink`) | on / 2 (`DelAckCount`) | on / 2 |
//! | `delack_timeout` | 100 ms (`DelAckSink interval_`) | 200 ms (`DelAckTimeout`) | 40 ms (`TCP_DELACK_MIN`) (†) |
//! | `sack` / `timestamps` | off / off | on / on (`Sack`, `Timestamp`) | on / on (`tcp_sack`, `tcp_timestamps`) |
//! | `recovery` / `prr` | newreno / off | sack / on (`TcpPrrRecovery`) | sack / on (`tcp_cwnd_reduction`) |
//! | `sack_variant` | `rfc` | `ns3` (`TcpSocketBase`, `TcpTxBuffer`, `TcpPrrRecovery` as coded, see `recovery/sack.rs`) | `rfc` |
//! | `rack` / `tlp` | off / off | off / off (absent in 3.44) | on / on (`tcp_recovery = 1`, `tcp_early_retrans = 3`) |
//! | `limited_transmit` | off | on (`LimitedTransmit`) | on (pipe-based `tcp_cwnd_test`) |
//! | `rto_restart` (¶) | unset (the scheme's rule) | `first-partial-ack` (`NewAck (ackNumber, m_isFirstPartialAck)`) | `every-ack` (`tcp_rearm_rto`) |
//! | `rto_ssthresh` (#) | `cut` (`TcpAgent::timeout`) | `hold` (`ReTxTimeout`) | `hold` (`tcp_enter_loss`) |
//! | `dupack_threshold` | 3 (`numdupacks_`) | 3 (`ReTxThreshold`) | 3 (`tcp_reordering`) |
//! | `ack_first_segment` | false | true (§) | false (†) |
//! | `fin` | false (one-way `Agent/TCP`: no FIN) | true (`TcpSocketBase`: FIN with the last data, ACKed at once) | true (`tcp_send_fin`, `tcp_fin`) |
//! | `header_bytes` | 40 (`tcpip_base_hdr_size_`) | 40 (+12 timestamps) | 40 (+12 timestamps) |
//! | CUBIC `variant` (‡) | `linux-2.6.22` | `ns3` (`TcpCubic`) | `linux` (`tcp_cubic.c`) |
//!
//! (¶) Which new ACKs in fast recovery restart the retransmission timer.
//! ns-3 3.44 `TcpSocketBase::ProcessAck`, `CA_RECOVERY` partial ACK:
//! `NewAck (ackNumber, m_isFirstPartialAck)` restarts it only on the first
//! partial ACK of the episode (`m_isFirstPartialAck` is set again when
//! recovery or loss ends), with SACK as without; SACK duplicate ACKs never
//! do. A recovery longer than the RTO (MinRto 1 s) therefore times out.
//! Linux 6.1 `tcp_ack` sets `FLAG_SET_XMIT_TIMER` on every ACK of new data
//! and `tcp_set_xmit_timer` → `tcp_rearm_rto` restarts it. ns-2 keeps the
//! recovery scheme's own rule (NewReno: first partial ACK, RFC 6582 §4).
//! With SACK (ns-3 and Linux), Limited Transmit is not a separate rule:
//! both send new data whenever pipe < cwnd (ns-3 `AvailableWindow` over
//! `TcpTxBuffer::BytesInFlight` = sent − SACKed − lost + retransmitted;
//! `m_limitedTx` is read only when SACK is off, in `DupAck`).
//! (#) A repeated timeout: the timer resends the segment it resent last
//! time. ns-2.35 `TcpAgent::timeout` (tcp.cc) recomputes ssthresh on
//! every expiry (`slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_RESTART)`: half
//! of `window()`, which after a timeout is the loss window, so a repeated
//! timeout sets the floor of 2);
//! RFC 5681 §3.1, ns-3 3.44
//! `TcpSocketBase::ReTxTimeout` and Linux 6.1 `tcp_enter_loss` hold it
//! (see [`RtoSsthresh`](super::RtoSsthresh)). Not modelled of Linux's rule:
//! a timeout during fast recovery (`TCP_CA_Recovery`, `high_seq` not yet
//! acknowledged) keeps the ssthresh fast recovery set, and a timeout in
//! `TCP_CA_Loss` after new data was acknowledged cuts again; here the
//! first is cut and, with SACK, the second held (ns-3's rule).
//! (§) `TcpSocketBase` sets `m_delAckCount = m_delAckMaxCount` on reaching
//! ESTABLISHED ("always respond to first data packet to speed up the
//! connection"): the first data segment is ACKed at once, so each
//! slow-start round grows the window 2n − 1 (10, 19, 37, 73, …) rather than
//! 2n, which moves HyStart's exit (see validation/ns3/README.md).
//! (*) Linux `tcp_rtt_estimator`/`tcp_set_rto`: RTO = srtt + rttvar where
//! rttvar never falls below `tcp_rto_min` (200 ms): the RFC 6298 formula
//! with G = 200 ms. (†) Linux adapts the delayed-ACK timeout (`ato`)
//! between 40 ms and 200 ms and starts in quick-ACK mode; the profile takes
//! the 40 ms floor and no quick-ACK mode. (‡) The CUBIC variant is not a
//! `tcp` key: a flow with `cc = "cubic"` and no `variant` runs its
//! profile's CUBIC ([`resolve_cc`]); a `variant` written in the flow's `cc`
//! wins. `ns2-2.35` takes `linux-2.6.22`, the tcp-linux CUBIC v2.1 that the
//! ns-2.35 runs of the codel-highspeed-tcp paper load; `ns3-3.44` takes
//! `ns3`, ns-3 3.44's own `TcpCubic` (Linux-derived, not RFC 9438).
//! Linux 6.1 runs RACK-TLP (`tcp_recovery = 1`, `tcp_early_retrans = 3`);
//! aqmlab models RACK's loss detection (RFC 8985 §6) and the tail loss
//! probe (§7, without D-SACK: see `sender.rs`). Linux paces CUBIC
//! only under the `fq` qdisc (internal pacing serves algorithms that request
//! it), so `pacing` stays off here as in ns-3 (`EnablePacing` false).

use super::cc::cubic::{CubicConfig, CubicVariant};
use super::cc::{CcConfig, CongestionControl};
use super::recovery::{RecoveryKind, RtoRestart, RtoSsthresh, SackVariant};
use super::TcpParams;
use crate::engine::Time;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

const MS: Time = 1_000_000;

/// `tcp.profile`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Profile {
    /// ns-2.35 `Agent/TCP/Newreno` with `Agent/TCPSink` (no SACK).
    #[serde(rename = "ns2-2.35")]
    Ns2,
    /// ns-3.44 `TcpSocketBase` defaults.
    #[serde(rename = "ns3-3.44")]
    Ns3,
    /// Linux 6.1 defaults.
    #[serde(rename = "linux-6.1")]
    Linux,
}

impl Profile {
    pub const NAMES: &'static [&'static str] = &["ns2-2.35", "ns3-3.44", "linux-6.1"];

    pub fn name(self) -> &'static str {
        match self {
            Profile::Ns2 => "ns2-2.35",
            Profile::Ns3 => "ns3-3.44",
            Profile::Linux => "linux-6.1",
        }
    }

    /// The CUBIC variant this stack runs.
    pub fn cubic_variant(self) -> CubicVariant {
        match self {
            Profile::Ns2 => CubicVariant::Linux2622,
            Profile::Ns3 => CubicVariant::Ns3,
            Profile::Linux => CubicVariant::Linux,
        }
    }

    /// The defaults of this stack.
    pub fn params(self) -> TcpParams {
        let mut p = TcpParams {
            header_bytes: 40,
            dupack_threshold: 3,
            ..TcpParams::default()
        };
        match self {
            Profile::Ns2 => {
                p.init_cwnd = 2.0;
                p.min_rto = 200 * MS;
                p.max_rto = 60_000 * MS;
                p.initial_rto = 3_000 * MS;
                p.granularity = 10 * MS;
                p.delayed_ack = false;
                p.delack_count = 1;
                p.delack_timeout = 100 * MS;
                p.sack = false;
                p.timestamps = false;
                p.recovery = Some(RecoveryKind::NewReno);
                p.prr = false;
                // TcpAgent::timeout: slowdown(CLOSE_SSTHRESH_HALF|...) on
                // every expiry
                p.rto_ssthresh = Some(RtoSsthresh::Cut);
            }
            Profile::Ns3 => {
                p.init_cwnd = 10.0;
                p.min_rto = 1_000 * MS;
                p.max_rto = 60_000 * MS;
                p.initial_rto = 1_000 * MS;
                // `TcpSocketBase::SendEmptyPacket`: a SYN (or SYN-ACK) is
                // resent after `m_cnTimeout · 2^k` (ConnTimeout 3 s)
                p.syn_rto = Some(3_000 * MS);
                p.granularity = MS;
                p.delayed_ack = true;
                p.delack_count = 2;
                p.delack_timeout = 200 * MS;
                p.sack = true;
                p.timestamps = true;
                p.recovery = Some(RecoveryKind::Sack);
                p.prr = true;
                // TcpSocketBase / TcpTxBuffer / TcpPrrRecovery as coded
                p.sack_variant = Some(SackVariant::Ns3);
                p.ack_first_segment = true;
                // TcpSocketBase "LimitedTransmit", default true
                p.limited_transmit = true;
                // TcpSocketBase::ProcessAck: NewAck (ackNumber,
                // m_isFirstPartialAck) in CA_RECOVERY
                p.rto_restart = Some(RtoRestart::FirstPartialAck);
                p.fin = true;
            }
            Profile::Linux => {
                p.init_cwnd = 10.0;
                p.min_rto = 200 * MS;
                p.max_rto = 120_000 * MS;
                p.initial_rto = 1_000 * MS;
                p.granularity = 200 * MS;
                p.delayed_ack = true;
                p.delack_count = 2;
                p.delack_timeout = 40 * MS;
                p.sack = true;
                p.timestamps = true;
                p.recovery = Some(RecoveryKind::Sack);
                p.prr = true;
                p.rack = true;
                // net.ipv4.tcp_early_retrans = 3: RACK with TLP
                p.tlp = true;
                // tcp_cwnd_test counts tcp_packets_in_flight (SACKed and
                // lost segments out): new data goes on every SACKed dupack
                p.limited_transmit = true;
                // tcp_ack: FLAG_SET_XMIT_TIMER -> tcp_rearm_rto
                p.rto_restart = Some(RtoRestart::EveryAck);
                p.fin = true;
            }
        }
        p
    }
}

/// The congestion control a flow runs under `profile`: what the flow's `cc`
/// leaves unset and the profile decides is filled in (CUBIC's `variant`);
/// everything written in `cc` is kept.
pub fn resolve_cc(cc: &CcConfig, profile: Option<Profile>) -> Cow<'_, CcConfig> {
    match (cc, profile) {
        (CcConfig::Cubic(c), Some(p)) if c.variant.is_none() => {
            Cow::Owned(CcConfig::Cubic(CubicConfig {
                variant: Some(p.cubic_variant()),
                ..c.clone()
            }))
        }
        _ => Cow::Borrowed(cc),
    }
}

impl CcConfig {
    /// Build the controller a flow with this `cc` runs under `profile`
    /// (see [`resolve_cc`]).
    pub fn build_for(&self, profile: Option<Profile>) -> Box<dyn CongestionControl> {
        resolve_cc(self, profile).build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cubic(variant: Option<CubicVariant>) -> CcConfig {
        CcConfig::Cubic(CubicConfig {
            variant,
            ..CubicConfig::default()
        })
    }

    fn variant_of(cc: &CcConfig) -> Option<CubicVariant> {
        match cc {
            CcConfig::Cubic(c) => c.variant,
            _ => None,
        }
    }

    #[test]
    fn profile_picks_cubic_variant_when_unset() {
        for (p, v) in [
            (Profile::Ns2, CubicVariant::Linux2622),
            (Profile::Ns3, CubicVariant::Ns3),
            (Profile::Linux, CubicVariant::Linux),
        ] {
            let cc = cubic(None);
            let r = resolve_cc(&cc, Some(p));
            assert_eq!(variant_of(&r), Some(v), "{}", p.name());
        }
        // no profile: the config's own default (RFC 9438)
        let cc = cubic(None);
        let r = resolve_cc(&cc, None);
        assert_eq!(variant_of(&r), None);
        let CcConfig::Cubic(c) = r.as_ref() else {
            panic!("cubic expected")
        };
        assert_eq!(c.variant(), CubicVariant::Rfc9438);
    }

    #[test]
    fn explicit_cubic_variant_wins_over_profile() {
        for p in [Profile::Ns2, Profile::Ns3, Profile::Linux] {
            let cc = cubic(Some(CubicVariant::Rfc9438));
            let r = resolve_cc(&cc, Some(p));
            assert_eq!(variant_of(&r), Some(CubicVariant::Rfc9438));
        }
        // other controllers are untouched
        let nr = CcConfig::NewReno(Default::default());
        assert_eq!(resolve_cc(&nr, Some(Profile::Ns3)).as_ref(), &nr);
    }

    #[test]
    fn profile_variant_changes_the_controller_built() {
        use crate::tcp::cc::CcState;
        // β differs: ns-3 0.7 (a double), Linux 717/1024 (7001 of 10000)
        let s = CcState::with_window(10_000.0, 1e9, 1448);
        let mut ns3 = cubic(None).build_for(Some(Profile::Ns3));
        let mut linux = cubic(None).build_for(Some(Profile::Linux));
        assert_eq!(ns3.ssthresh(&s), 7000.0);
        assert_eq!(linux.ssthresh(&s), (10_000 * 717 / 1024) as f64);
    }
}
