//! The congestion-control trait and the registry of algorithms.
//!
//! Congestion control decides how the window grows and how far it shrinks;
//! loss detection and recovery (duplicate ACKs, fast retransmit and recovery,
//! partial ACKs, RTO) stay in the sender (`tcp::sender`), as in Linux's
//! `tcp_congestion_ops` and ns-3's `TcpCongestionOps`. Windows are in
//! segments (f64), as in ns-2's TCP agents.
//!
//! To add an algorithm: write one file here implementing
//! [`CongestionControl`], then add a variant to [`CcKind`] and an arm to
//! [`CcKind::build`] (the one registration point).

pub mod newreno;
pub mod reno;

use crate::engine::Time;
use crate::net::packet::Packet;
use serde::{Deserialize, Serialize};

/// The sender state a congestion controller may read and change.
#[derive(Clone, Debug)]
pub struct CcState {
    pub now: Time,
    /// Congestion window, segments.
    pub cwnd: f64,
    /// Slow-start threshold, segments.
    pub ssthresh: f64,
    /// Segments sent and not yet cumulatively acknowledged (FlightSize).
    pub in_flight: u32,
    /// Smoothed RTT, if a sample exists.
    pub srtt: Option<Time>,
    /// Smallest RTT sample seen.
    pub min_rtt: Option<Time>,
    /// Bytes of payload per full segment.
    pub mss: u32,
}

/// How the sender recovers from a loss detected by duplicate ACKs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// RFC 5681 Reno: leave fast recovery on the first ACK of new data.
    Reno,
    /// RFC 6582 NewReno: stay in recovery until all data outstanding at the
    /// loss is acknowledged; retransmit on each partial ACK.
    NewReno,
}

pub trait CongestionControl: Send {
    /// The `cc` name, as written in scenarios.
    fn name(&self) -> &'static str;

    /// New data was acknowledged outside loss recovery: grow the window.
    /// `acked` is the number of segments newly acknowledged by this ACK.
    fn on_ack(&mut self, s: &mut CcState, acked: u32);

    /// A congestion event (third duplicate ACK, ECN echo, or timeout):
    /// return the new slow-start threshold in segments.
    fn ssthresh(&mut self, s: &CcState) -> f64;

    /// A retransmission timeout happened (after `ssthresh` was taken); the
    /// sender then sets `cwnd` to the loss window.
    fn on_timeout(&mut self, _s: &CcState) {}

    /// A valid RTT sample (Karn's rule applied).
    fn on_rtt(&mut self, _s: &CcState, _rtt: Time) {}

    /// Fast recovery ended; the sender has set `cwnd = ssthresh`.
    fn on_recovery_exit(&mut self, _s: &mut CcState) {}

    /// Every ACK the sender receives, before any other processing (for
    /// algorithms that read explicit signals carried in the ACK).
    fn on_ack_packet(&mut self, _s: &mut CcState, _ack: &Packet) {}

    /// Which loss-recovery rule the sender applies with this algorithm.
    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }
}

/// The algorithms a scenario can name in `cc`. Registration point.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum CcKind {
    /// TCP Reno (RFC 5681).
    Reno,
    /// TCP NewReno (RFC 5681 + RFC 6582).
    #[default]
    NewReno,
}

impl CcKind {
    pub const NAMES: &'static [&'static str] = &["reno", "newreno"];

    pub fn name(&self) -> &'static str {
        match self {
            CcKind::Reno => "reno",
            CcKind::NewReno => "newreno",
        }
    }

    pub fn build(&self) -> Box<dyn CongestionControl> {
        match self {
            CcKind::Reno => Box::new(reno::Reno),
            CcKind::NewReno => Box::new(newreno::NewReno),
        }
    }
}

/// RFC 5681 §3.1 window growth shared by Reno-family algorithms: slow start
/// adds one segment per ACK while `cwnd < ssthresh` (eq. 2 with N ≥ SMSS);
/// congestion avoidance adds `1/cwnd` segment per ACK (eq. 3). Growth is per
/// ACK, not per segment acknowledged, as in RFC 5681 and ns-2.
pub fn reno_increase(s: &mut CcState) {
    if s.cwnd < s.ssthresh {
        s.cwnd += 1.0;
    } else {
        s.cwnd += 1.0 / s.cwnd;
    }
}

/// RFC 5681 eq. (4): `ssthresh = max(FlightSize / 2, 2·SMSS)`.
pub fn reno_ssthresh(s: &CcState) -> f64 {
    (s.in_flight as f64 / 2.0).max(2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(cwnd: f64, ssthresh: f64) -> CcState {
        CcState {
            now: 0,
            cwnd,
            ssthresh,
            in_flight: 0,
            srtt: None,
            min_rtt: None,
            mss: 1000,
        }
    }

    #[test]
    fn slow_start_doubles_per_rtt_and_ca_adds_one() {
        let mut s = st(1.0, 100.0);
        // one RTT of slow start with an ACK per segment: cwnd doubles
        for _ in 0..4 {
            let acks = s.cwnd as u32;
            for _ in 0..acks {
                reno_increase(&mut s);
            }
        }
        assert_eq!(s.cwnd, 16.0);
        // congestion avoidance: one RTT of cwnd ACKs adds about one segment
        let mut s = st(10.0, 5.0);
        for _ in 0..10 {
            reno_increase(&mut s);
        }
        assert!((s.cwnd - 10.95).abs() < 0.01, "{}", s.cwnd);
    }

    #[test]
    fn ssthresh_is_half_flight_min_two() {
        let mut s = st(10.0, 5.0);
        s.in_flight = 20;
        assert_eq!(reno_ssthresh(&s), 10.0);
        s.in_flight = 3;
        assert_eq!(reno_ssthresh(&s), 2.0);
    }

    #[test]
    fn names_round_trip() {
        for n in CcKind::NAMES {
            let k: CcKind = serde_json::from_str(&format!("\"{n}\"")).unwrap();
            assert_eq!(k.name(), *n);
            assert_eq!(k.build().name(), *n);
        }
    }
}
