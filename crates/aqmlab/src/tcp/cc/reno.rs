//! TCP Reno — RFC 5681 (§3.1 slow start and congestion avoidance, §3.2 fast
//! retransmit and fast recovery); V. Jacobson, "Berkeley TCP Evolution from
//! 4.3-Tahoe to 4.3-Reno", IETF 18, 1990.
//!
//! Window growth: +1 segment per ACK in slow start, +1/cwnd per ACK in
//! congestion avoidance. On a congestion event `ssthresh = max(FlightSize/2,
//! 2)`. Fast recovery ends on the first ACK that acknowledges new data (no
//! partial-ACK handling; that is NewReno). No parameters.
//!
//! Reduces from FlightSize (`CcState::in_flight`, RFC 5681 eq. 4): the
//! outstanding segments, and with SACK recovery the RFC 6675 pipe (SACKed
//! and lost segments excluded, as ns-3's `TcpNewReno::GetSsThresh` over
//! `BytesInFlight`), never the window inflated in fast recovery.

use super::{reno_grow, reno_ssthresh, CcState, CongestionControl, Recovery};

#[derive(Default)]
pub struct Reno {
    /// [`CongestionControl::count_segments`].
    count_segments: bool,
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn on_ack(&mut self, s: &mut CcState, acked: u32) {
        reno_grow(s, acked, self.count_segments);
    }
    fn count_segments(&mut self, on: bool) {
        self.count_segments = on;
    }
    fn ssthresh(&mut self, s: &CcState) -> f64 {
        reno_ssthresh(s)
    }
    fn recovery(&self) -> Recovery {
        Recovery::Reno
    }
}

/// `reno` has no parameters (any key is an error).
#[derive(Clone, Debug, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RenoConfig {}

impl super::registry::Registered for RenoConfig {
    const KIND: &'static str = "reno";
    const ABOUT: &'static str = "TCP Reno (RFC 5681)";
    const PARAMS: &'static [crate::registry::Param] = &[];
}

impl super::registry::CcAlgorithm for RenoConfig {
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Reno::default())
    }
}
