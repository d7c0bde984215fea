//! A first-in first-out packet buffer that counts its bytes, shared by the
//! disciplines that queue in arrival order (DropTail, RED/ARED, RIO, PIE,
//! step marking, MaxNet's link).
//!
//! The buffer grows on demand and keeps its capacity, so a queue allocates
//! nothing once it has reached its longest (pre-allocating the limit would
//! cost up to 2¹⁶ packets per port on topologies with thousands of ports).

use super::Limit;
use crate::net::packet::Packet;
use std::collections::VecDeque;

#[derive(Debug, Default)]
pub struct Fifo {
    q: VecDeque<Packet>,
    bytes: u64,
}

impl Fifo {
    pub fn new() -> Self {
        Fifo::default()
    }

    /// An empty buffer with room for `n` packets before it reallocates.
    pub fn with_capacity(n: usize) -> Self {
        Fifo {
            q: VecDeque::with_capacity(n),
            bytes: 0,
        }
    }

    /// Whether a packet of `size` bytes would exceed `limit`.
    pub fn would_exceed(&self, limit: &Limit, size: u32) -> bool {
        limit.exceeded_by(self.q.len(), self.bytes, size)
    }

    pub fn push_back(&mut self, pkt: Packet) {
        self.bytes += pkt.size as u64;
        self.q.push_back(pkt);
    }

    pub fn pop_front(&mut self) -> Option<Packet> {
        let p = self.q.pop_front()?;
        self.bytes -= p.size as u64;
        Some(p)
    }

    pub fn front(&self) -> Option<&Packet> {
        self.q.front()
    }

    /// Packets queued.
    pub fn len(&self) -> usize {
        self.q.len()
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// Bytes queued (the sum of the queued packets' sizes).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn iter(&self) -> impl Iterator<Item = &Packet> {
        self.q.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(size: u32) -> Packet {
        Packet {
            size,
            ..Packet::default()
        }
    }

    #[test]
    fn counts_bytes_in_order_and_applies_the_limit() {
        let mut f = Fifo::new();
        for s in [100, 200, 300] {
            f.push_back(pkt(s));
        }
        assert_eq!((f.len(), f.bytes()), (3, 600));
        assert!(f.would_exceed(&Limit::Packets(3), 1));
        assert!(!f.would_exceed(&Limit::Packets(4), 1));
        assert!(f.would_exceed(&Limit::Bytes(650), 100));
        assert!(!f.would_exceed(&Limit::Bytes(700), 100));
        assert_eq!(f.pop_front().map(|p| p.size), Some(100));
        assert_eq!((f.len(), f.bytes()), (2, 500));
        f.pop_front();
        f.pop_front();
        assert!(f.is_empty() && f.bytes() == 0 && f.pop_front().is_none());
    }
}
