//! Constant-bit-rate source: an unresponsive, UDP-like sender of fixed-size
//! packets at a fixed rate (ns-2 `Application/Traffic/CBR`, ns-3 `OnOffApplication`
//! with a constant on-time). It has no congestion control, no ACKs and no
//! retransmissions; the receiver counts packets and one-way delays.
//!
//! Packet `k` (from 0) leaves at `start + k · packet_size · 8 / rate`, computed
//! exactly in integer nanoseconds (no drift).
//!
//! Parameters (`flows.cbr`): `rate` (required), `packet_size` = 1000 bytes on
//! the wire, `ecn` = false (send ECT(0), so an ECN AQM marks instead of
//! dropping). With the flow's `size`, it stops after that many bytes.

use crate::engine::{Time, NS_PER_SEC};
use crate::net::packet::{flags, Ecn, FlowId, NodeId, Packet};
use crate::units::Rate;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CbrSpec {
    pub rate: Rate,
    #[serde(default = "d_size")]
    pub packet_size: u32,
    #[serde(default)]
    pub ecn: bool,
}

fn d_size() -> u32 {
    1000
}

impl CbrSpec {
    pub fn validate(&self) -> Result<(), (String, String)> {
        if !(1..=65_535).contains(&self.packet_size) {
            return Err((
                "packet_size".into(),
                format!(
                    "must be 1..=65535 bytes (an IP datagram), got {}",
                    self.packet_size
                ),
            ));
        }
        // packets at least 1 ns apart: a source of zero spacing would send
        // without end at one instant
        let gap_ns = self.packet_size as u128 * 8 * NS_PER_SEC as u128 / self.rate.0 as u128;
        if gap_ns == 0 {
            return Err((
                "rate".into(),
                format!(
                    "{} bps sends {}-byte packets less than 1 ns apart; at most {} bps for this packet_size",
                    self.rate.0,
                    self.packet_size,
                    self.packet_size as u64 * 8 * NS_PER_SEC
                ),
            ));
        }
        Ok(())
    }
}

pub struct Cbr {
    flow: FlowId,
    src: NodeId,
    dst: NodeId,
    rate_bps: u64,
    size: u32,
    ecn: bool,
    /// The flow group's DSCP (0: none).
    dscp: u8,
    max_pkts: u64,
    start: Time,
    pub sent: u64,
    pub received: u64,
    pub bytes_received: u64,
}

impl Cbr {
    pub fn new(s: &CbrSpec, flow: FlowId, src: NodeId, dst: NodeId, bytes: Option<u64>) -> Cbr {
        Cbr {
            flow,
            src,
            dst,
            rate_bps: s.rate.0,
            size: s.packet_size,
            ecn: s.ecn,
            dscp: 0,
            max_pkts: bytes.map_or(u64::MAX, |b| b.div_ceil(s.packet_size as u64)),
            start: 0,
            sent: 0,
            received: 0,
            bytes_received: 0,
        }
    }

    /// Put DSCP `d` on the packets (the flow group's `dscp`).
    pub fn with_dscp(mut self, d: u8) -> Cbr {
        self.dscp = d;
        self
    }

    /// Time packet `k` leaves.
    fn departure(&self, k: u64) -> Time {
        self.start
            + (k as u128 * self.size as u128 * 8 * NS_PER_SEC as u128 / self.rate_bps as u128)
                as Time
    }

    /// Start sending at `now`; returns the time of the first packet.
    pub fn start(&mut self, now: Time) -> Time {
        self.start = now;
        now
    }

    /// Send the next packet; returns when to send the one after, if any.
    pub fn send(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        if self.sent >= self.max_pkts {
            return None;
        }
        out.push(Packet {
            flow: self.flow,
            src: self.src,
            dst: self.dst,
            seq: self.sent as u32,
            size: self.size,
            payload: self.size,
            flags: flags::DATA,
            ecn: if self.ecn { Ecn::Ect0 } else { Ecn::NotEct },
            ext: crate::net::ext::Ext::with_dscp(self.dscp),
            sent_time: now,
            ..Default::default()
        });
        self.sent += 1;
        (self.sent < self.max_pkts).then(|| self.departure(self.sent))
    }

    pub fn on_receive(&mut self, p: &Packet) {
        self.received += 1;
        self.bytes_received += p.size as u64;
    }

    /// Stop sending (`[[events]]` `stop`): no packet after those sent.
    pub fn stop(&mut self) {
        self.max_pkts = self.max_pkts.min(self.sent);
    }

    pub fn done(&self) -> bool {
        self.sent >= self.max_pkts
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

    #[test]
    fn departures_are_exact_and_bounded() {
        let s = CbrSpec {
            rate: Rate(1_000_000),
            packet_size: 125,
            ecn: false,
        };
        let mut c = Cbr::new(&s, FlowId(0), NodeId(0), NodeId(1), Some(1000));
        let mut out = vec![];
        let mut t = c.start(5);
        let mut times = vec![];
        loop {
            times.push(t);
            match c.send(t, &mut out) {
                Some(n) => t = n,
                None => break,
            }
        }
        assert_eq!(out.len(), 8, "1000 bytes in 125-byte packets");
        assert_eq!(times[1] - times[0], 1_000_000, "125 B at 1 Mbit/s = 1 ms");
        assert_eq!(times[7], 5 + 7_000_000);
        assert!(c.done());
    }
}
