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
//! | `granularity` (G) | 10 ms (`tcpTick_`) | 1 ms (`ClockGranularity`) | 200 ms (*) |
//! | `delayed_ack` / `delack_count` | off / 1 (`TCPSink`) | on / 2 (`DelAckCount`) | on / 2 |
//! | `delack_timeout` | 100 ms (`DelAckSink interval_`) | 200 ms (`DelAckTimeout`) | 40 ms (`TCP_DELACK_MIN`) (†) |
//! | `sack` / `timestamps` | off / off | on / on (`Sack`, `Timestamp`) | on / on (`tcp_sack`, `tcp_timestamps`) |
//! | `recovery` / `prr` | newreno / off | sack / on (`TcpPrrRecovery`) | sack / on (`tcp_cwnd_reduction`) |
//! | `rack` / `tlp` | off / off | off / off (absent in 3.44) | on / on (`tcp_recovery = 1`, `tcp_early_retrans = 3`) |
//! | `limited_transmit` | off | on (`LimitedTransmit`) | on (pipe-based `tcp_cwnd_test`) |
//! | `dupack_threshold` | 3 (`numdupacks_`) | 3 (`ReTxThreshold`) | 3 (`tcp_reordering`) |
//! | `header_bytes` | 40 (`tcpip_base_hdr_size_`) | 40 (+12 timestamps) | 40 (+12 timestamps) |
//! | CUBIC `variant` | `linux-2.6.22` | `rfc9438` | `linux` (‡) |
//!
//! (*) Linux `tcp_rtt_estimator`/`tcp_set_rto`: RTO = srtt + rttvar where
//! rttvar never falls below `tcp_rto_min` (200 ms): the RFC 6298 formula
//! with G = 200 ms. (†) Linux adapts the delayed-ACK timeout (`ato`)
//! between 40 ms and 200 ms and starts in quick-ACK mode; the profile takes
//! the 40 ms floor and no quick-ACK mode. (‡) The CUBIC variant is not a
//! `tcp` key; the profile records it for the `cc` table (see README).
//! Linux 6.1 runs RACK-TLP (`tcp_recovery = 1`, `tcp_early_retrans = 3`);
//! aqmlab models RACK's loss detection (RFC 8985 §6) and the tail loss
//! probe (§7, without D-SACK: see `sender.rs`). Linux paces CUBIC
//! only under the `fq` qdisc (internal pacing serves algorithms that request
//! it), so `pacing` stays off here as in ns-3 (`EnablePacing` false).

use super::recovery::RecoveryKind;
use super::TcpParams;
use crate::engine::Time;
use serde::{Deserialize, Serialize};

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

    /// The CUBIC variant this stack runs (for the `cc` table).
    pub fn cubic_variant(self) -> &'static str {
        match self {
            Profile::Ns2 => "linux-2.6.22",
            Profile::Ns3 => "rfc9438",
            Profile::Linux => "linux",
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
            }
            Profile::Ns3 => {
                p.init_cwnd = 10.0;
                p.min_rto = 1_000 * MS;
                p.max_rto = 60_000 * MS;
                p.initial_rto = 1_000 * MS;
                p.granularity = MS;
                p.delayed_ack = true;
                p.delack_count = 2;
                p.delack_timeout = 200 * MS;
                p.sack = true;
                p.timestamps = true;
                p.recovery = Some(RecoveryKind::Sack);
                p.prr = true;
                // TcpSocketBase "LimitedTransmit", default true
                p.limited_transmit = true;
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
            }
        }
        p
    }
}
