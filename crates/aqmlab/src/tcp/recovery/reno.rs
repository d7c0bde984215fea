//! Reno fast recovery — RFC 5681 §3.2; V. Jacobson, "Berkeley TCP Evolution
//! from 4.3-Tahoe to 4.3-Reno", IETF 18, 1990.
//!
//! Fast retransmit on the DupThresh-th duplicate ACK, `cwnd = ssthresh +
//! DupThresh`, inflation by one segment per further duplicate ACK, and the
//! end of recovery (`cwnd = ssthresh`) on the first ACK of new data: no
//! partial-ACK handling (that is NewReno, whose machine this reuses with
//! that one rule changed). The `recover` guard of RFC 6582 step 2 applies
//! here too, as it did in this simulator before recovery became a layer.

use super::newreno::NewReno;
use super::{LossRecovery, NewAck, RecIo};

#[derive(Debug)]
pub struct Reno(NewReno);

impl Default for Reno {
    fn default() -> Self {
        let mut n = NewReno::default();
        n.reno = true;
        Reno(n)
    }
}

impl LossRecovery for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn in_recovery(&self) -> bool {
        self.0.in_recovery
    }
    fn recover(&self) -> i64 {
        self.0.recover
    }
    fn on_new_ack(&mut self, io: &mut RecIo, acked: u32) -> NewAck {
        self.0.on_new_ack(io, acked)
    }
    fn on_dupack(&mut self, io: &mut RecIo, dupacks: u32) -> bool {
        self.0.on_dupack(io, dupacks)
    }
    fn on_rto(&mut self, io: &mut RecIo) -> bool {
        self.0.on_rto(io)
    }
}
