//! TCP NewReno — RFC 6582 (the NewReno modification to fast recovery) on top
//! of RFC 5681's window growth.
//!
//! Window growth and `ssthresh` are Reno's (+1 per ACK in slow start, +1/cwnd
//! per ACK in congestion avoidance, `ssthresh = max(FlightSize/2, 2)`). The
//! difference is in recovery, carried out by the sender: a partial ACK
//! retransmits the next hole and keeps the sender in fast recovery until all
//! data outstanding at the loss (`recover`) is acknowledged (RFC 6582 §3.2
//! steps 1–5, including the `recover` check that prevents a second fast
//! retransmit in the same window). No parameters.
//!
//! Reduces from FlightSize (`CcState::in_flight`, RFC 5681 eq. 4): the
//! outstanding segments, and with SACK recovery the RFC 6675 pipe (SACKed
//! and lost segments excluded, as ns-3's `TcpNewReno::GetSsThresh` over
//! `BytesInFlight`), never the window inflated in fast recovery.

use super::{reno_grow, reno_ssthresh, CcState, CongestionControl, Recovery};

#[derive(Default)]
pub struct NewReno {
    /// [`CongestionControl::count_segments`].
    count_segments: bool,
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
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
        Recovery::NewReno
    }
}

/// `newreno` has no parameters (any key is an error).
#[derive(Clone, Debug, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewRenoConfig {}

impl super::registry::Registered for NewRenoConfig {
    const KIND: &'static str = "newreno";
    const ABOUT: &'static str = "TCP NewReno (RFC 5681 + RFC 6582)";
    const PARAMS: &'static [crate::registry::Param] = &[];
}

impl super::registry::CcAlgorithm for NewRenoConfig {
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(NewReno::default())
    }
}
