//! NewReno fast recovery — RFC 6582 §3.2 on top of RFC 5681 §3.2.
//!
//! - Step 1/2: on the DupThresh-th duplicate ACK, if the ACK covers more
//!   than `recover` (the highest segment sent when the previous recovery
//!   started), take ssthresh from the congestion controller, retransmit the
//!   first unacknowledged segment, set `cwnd = ssthresh + DupThresh` and
//!   `recover` = the highest segment sent.
//! - Step 3 (in recovery): every further duplicate ACK inflates `cwnd` by
//!   one segment; a partial ACK retransmits the first unacknowledged
//!   segment, deflates `cwnd` by the amount acknowledged and adds back one
//!   segment, and restarts the RTO timer on the first partial ACK only (§4
//!   "Impatient"); a full ACK ends recovery with `cwnd = ssthresh` (step 3,
//!   option 2, as in ns-2).
//! - After an RTO, `recover` = the highest segment sent (§4) and the sender
//!   goes back to the first unacknowledged segment (RFC 5681 §3.1).
//!
//! `Reno` (RFC 5681 §3.2) is the same machine leaving recovery on the first
//! ACK of new data (`reno.rs`).

use super::{LossRecovery, NewAck, RecIo};

#[derive(Debug)]
pub struct NewReno {
    pub(super) in_recovery: bool,
    pub(super) recover: i64,
    /// A partial ACK has arrived in the current recovery.
    partial_acked: bool,
    /// Reno: leave recovery on the first ACK of new data.
    pub(super) reno: bool,
}

impl Default for NewReno {
    fn default() -> Self {
        NewReno {
            in_recovery: false,
            recover: -1,
            partial_acked: false,
            reno: false,
        }
    }
}

impl LossRecovery for NewReno {
    fn name(&self) -> &'static str {
        if self.reno {
            "reno"
        } else {
            "newreno"
        }
    }

    fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    fn recover(&self) -> i64 {
        self.recover
    }

    fn on_new_ack(&mut self, io: &mut RecIo, acked: u32) -> NewAck {
        let a = io.snd_una;
        if !self.in_recovery {
            return NewAck {
                restart_timer: true,
            };
        }
        if a as i64 > self.recover || self.reno {
            // Full ACK (or Reno's first new ACK): leave fast recovery.
            self.in_recovery = false;
            io.st.cwnd = io.st.ssthresh;
            io.cc.on_recovery_exit(io.st);
            NewAck {
                restart_timer: true,
            }
        } else {
            // Partial ACK: retransmit the next hole, deflate.
            io.retx.push(a);
            io.st.cwnd = (io.st.cwnd - acked as f64 + 1.0).max(1.0);
            // RFC 6582 §3.2 step 3: reset the timer only on the first
            // partial ACK of this recovery ("Impatient", §4).
            let restart_timer = !self.partial_acked;
            self.partial_acked = true;
            NewAck { restart_timer }
        }
    }

    fn on_dupack(&mut self, io: &mut RecIo, dupacks: u32) -> bool {
        if self.in_recovery {
            io.st.cwnd += 1.0; // window inflation
            return true;
        }
        if dupacks != io.dupthresh {
            return false;
        }
        let a = io.snd_una;
        // RFC 6582 step 2: only if the ACKs cover more than `recover`.
        if (a as i64 - 1) < self.recover {
            return false;
        }
        self.recover = io.enter_recovery(a);
        io.st.cwnd = io.st.ssthresh + io.dupthresh as f64;
        self.in_recovery = true;
        self.partial_acked = false;
        io.retx.push(a);
        true
    }

    fn on_rto(&mut self, io: &mut RecIo) -> bool {
        self.in_recovery = false;
        self.recover = io.snd_max as i64 - 1;
        true
    }
}
