//! The packet: a small `Copy` record moved by value through queues and links.
//! No byte buffers, no header serialisation (as in htsim); only the fields the
//! models read (SACK blocks and the timestamp echo are the option fields
//! an ACK needs; their bytes count in `size`). Sequence and acknowledgement numbers count *segments* (as in
//! ns-2's TCP agents), sizes are bytes on the wire. Fields of one protocol
//! (MaxNet's price, RIO's class) live in the extension slot [`Packet::ext`]
//! (`net/ext.rs`), not in fields of their own.

use crate::engine::Time;
pub use crate::net::ext::{Class, Ext};
use std::num::NonZeroU64;

/// A node, by its index in the topology's node list. A newtype, as
/// `sim::ids::LinkId`: no arithmetic by accident, and conversions to
/// and from table indices are explicit ([`NodeId::ix`], `NodeId(i as u32)`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

/// A flow (a TCP connection or a CBR source), by its global number in the
/// simulation (the scenario's flows first, then those workloads open, in
/// the order they open). A newtype, as [`NodeId`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub u32);

impl NodeId {
    /// The index into per-node tables.
    #[inline]
    pub fn ix(self) -> usize {
        self.0 as usize
    }
}

impl FlowId {
    /// The index into per-flow tables.
    #[inline]
    pub fn ix(self) -> usize {
        self.0 as usize
    }
}

impl std::fmt::Display for NodeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::fmt::Display for FlowId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// TCP header flags.
pub mod flags {
    pub const SYN: u8 = 1 << 0;
    pub const ACK: u8 = 1 << 1;
    pub const FIN: u8 = 1 << 2;
    /// ECN-Echo (RFC 3168 §6.1.3).
    pub const ECE: u8 = 1 << 3;
    /// Congestion Window Reduced (RFC 3168 §6.1.2).
    pub const CWR: u8 = 1 << 4;
    /// The packet carries data from the flow's sender to its receiver.
    pub const DATA: u8 = 1 << 5;
    /// Accurate ECN (RFC 9768 §3.1: the former NS bit, bit 7 of byte 12 of
    /// the TCP header, i.e. bit 8 of the 12-bit flags field): with CWR and
    /// ECE it forms the handshake codes and the 3-bit ACE counter.
    pub const AE: u8 = 1 << 6;
}

/// IP ECN codepoint (RFC 3168 §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct = 0,
    Ect1 = 1,
    Ect0 = 2,
    Ce = 3,
}

impl Ecn {
    /// True for ECT(0), ECT(1) and CE: an ECN-capable transport.
    pub fn capable(self) -> bool {
        self != Ecn::NotEct
    }
}

/// An optional time in 8 bytes (`Option<Time>` takes 16): `t + 1`, or 0
/// for none. `Time::MAX` cannot be stored (it reads back as none); no packet
/// is sent at the end of time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OptTime(Option<NonZeroU64>);

impl OptTime {
    pub const NONE: OptTime = OptTime(None);

    #[inline]
    pub fn new(t: Option<Time>) -> Self {
        OptTime(t.and_then(|t| NonZeroU64::new(t.wrapping_add(1))))
    }

    #[inline]
    pub fn get(self) -> Option<Time> {
        self.0.map(|v| v.get() - 1)
    }
}

/// A SACK block (RFC 2018 §3) in segments: `[start, end)`, the first
/// segment held and one past the last.
pub type SackBlock = (u32, u32);

/// Most SACK blocks an ACK carries: 4 without timestamps, 3 with (RFC 2018
/// §3, 40 bytes of option space).
pub const MAX_SACK_BLOCKS: usize = 4;

#[derive(Clone, Copy, Debug, Default)]
pub struct Packet {
    /// Unique id in this run (for traces and FIFO-order tests).
    pub uid: u64,
    /// Time the packet entered its current queue (set by the port).
    pub enq_time: Time,
    /// Time the sending endpoint emitted it (for one-way delay).
    pub sent_time: Time,
    pub flow: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    /// Segment number of the data (data packets) — SYN carries 0.
    pub seq: u32,
    /// Cumulative acknowledgement: the next segment expected (ACK packets).
    pub ack: u32,
    /// Bytes on the wire (payload + headers).
    pub size: u32,
    /// Payload bytes (0 for pure ACKs).
    pub payload: u32,
    pub flags: u8,
    pub ecn: Ecn,
    /// The fields of one protocol (MaxNet's price and spare capacity, RIO's
    /// class), read and written only by that protocol's components; see
    /// `net/ext.rs`.
    pub ext: Ext,
    /// Number of valid entries in `sack` (ACKs only).
    pub nsack: u8,
    /// SACK blocks of an ACK, most recent first (RFC 2018 §4).
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
    /// RFC 7323 timestamp echo (TSecr) of an ACK: the `sent_time` (TSval)
    /// of the segment the receiver echoes; none without timestamps.
    pub ts_ecr: OptTime,
}

impl Packet {
    /// The SACK blocks an ACK carries.
    #[inline]
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..self.nsack as usize]
    }
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    #[inline]
    pub fn is_data(&self) -> bool {
        self.flags & flags::DATA != 0
    }
    /// Travels from the flow's sender to its receiver (data or SYN).
    #[inline]
    pub fn is_forward(&self) -> bool {
        self.flags & (flags::DATA | flags::SYN) != 0 && self.flags & flags::ACK == 0
            || self.flags & flags::DATA != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 112 bytes with MaxNet's price and spare capacity and RIO's class as
    /// fields of every packet and a 16-byte `Option<Time>` echo; 104 with
    /// the 9-byte extension slot and an 8-byte echo. A protocol that adds a
    /// variant to `Ext` must not make this grow.
    #[test]
    fn packet_is_small() {
        assert!(
            std::mem::size_of::<Packet>() <= 104,
            "{}",
            std::mem::size_of::<Packet>()
        );
        assert_eq!(std::mem::size_of::<OptTime>(), 8);
    }

    #[test]
    fn opt_time_round_trips() {
        for t in [
            None,
            Some(0),
            Some(1),
            Some(123_456_789),
            Some(Time::MAX - 1),
        ] {
            assert_eq!(OptTime::new(t).get(), t);
        }
        assert_eq!(OptTime::default().get(), None);
        assert_eq!(Packet::default().ts_ecr.get(), None);
        assert_eq!(Packet::default().ext, Ext::None);
    }

    #[test]
    fn direction() {
        let mut p = Packet {
            flags: flags::DATA,
            ..Default::default()
        };
        assert!(p.is_forward());
        p.flags = flags::SYN;
        assert!(p.is_forward());
        p.flags = flags::SYN | flags::ACK;
        assert!(!p.is_forward());
        p.flags = flags::ACK | flags::ECE;
        assert!(!p.is_forward());
    }
}
