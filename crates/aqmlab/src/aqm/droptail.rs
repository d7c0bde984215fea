//! DropTail: a FIFO that drops arrivals once the limit is reached.
//!
//! Source: the classic tail-drop queue (ns-2 `queue/drop-tail.cc`, ns-3
//! `FifoQueueDisc`). Parameters:
//! - `limit`: packets (integer) or bytes (string with unit); default 1000 packets.

use super::{DropCause, Limit, QdCtx, QueueDisc};
use crate::net::packet::Packet;
use serde::{Deserialize, Serialize};
use super::fifo::Fifo;

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DropTailConfig {
    #[serde(default = "default_limit")]
    pub limit: Limit,
}

fn default_limit() -> Limit {
    Limit::Packets(1000)
}

impl Default for DropTailConfig {
    fn default() -> Self {
        DropTailConfig {
            limit: default_limit(),
        }
    }
}

impl DropTailConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        self.limit.validate().map_err(|m| ("limit".into(), m))
    }
}

/// `#[repr(C)]`: the limit and the count first, which is all that an idle
/// link's port reads to let a packet pass an empty queue
/// (`Port::may_bypass`), then the buffers.
#[repr(C)]
pub struct DropTail {
    limit: Limit,
    /// Packets queued (`head` and `q`).
    n: usize,
    /// The oldest packet, when it arrived at an empty queue; the others
    /// follow in `q` (`head` empty and `q` not: `q` holds them all). On a
    /// lightly loaded port (the access link of one of 10⁵ hosts) a packet
    /// is queued and taken at once, and then touches no memory outside the
    /// port: the ring's heap buffer would be a cache miss per packet.
    head: Option<Packet>,
    q: Fifo,
}

impl DropTail {
    pub fn new(c: &DropTailConfig) -> Self {
        // The buffer grows on demand (amortised, so no allocation once the
        // queue has reached its longest): pre-allocating the limit cost 64 KiB
        // per port, 13 GiB for a star of 10⁵ hosts.
        DropTail {
            limit: c.limit,
            n: 0,
            head: None,
            q: Fifo::new(),
        }
    }
}

impl DropTail {
    /// Bytes from the start that [`DropTail::is_empty`] and
    /// [`DropTail::accepts_alone`] read.
    pub const HOT_BYTES: usize = std::mem::offset_of!(DropTail, n) + std::mem::size_of::<usize>();

    /// Nothing queued.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Whether a packet of `size` bytes arriving at the empty queue is
    /// accepted (a byte limit may be below one packet's size).
    #[inline]
    pub fn accepts_alone(&self, size: u32) -> bool {
        !self.limit.exceeded_by(0, 0, size)
    }
}

impl QueueDisc for DropTail {
    fn kind(&self) -> &'static str {
        "droptail"
    }
    #[inline]
    fn enqueue(&mut self, pkt: Packet, _ctx: &mut QdCtx) -> Result<(), DropCause> {
        if (self.limit).exceeded_by(self.len_pkts(), self.len_bytes(), pkt.size) {
            return Err(DropCause::Overflow);
        }
        if self.n == 0 {
            self.head = Some(pkt);
        } else {
            self.q.push_back(pkt);
        }
        self.n += 1;
        Ok(())
    }
    #[inline]
    fn dequeue(&mut self, _ctx: &mut QdCtx) -> Option<Packet> {
        if self.n == 0 {
            return None;
        }
        self.n -= 1;
        if self.head.is_some() {
            self.head.take()
        } else {
            self.q.pop_front()
        }
    }
    #[inline]
    fn len_pkts(&self) -> usize {
        self.n
    }
    #[inline]
    fn len_bytes(&self) -> u64 {
        self.head.as_ref().map_or(0, |p| p.size as u64) + self.q.bytes()
    }
}

impl super::registry::Registered for DropTailConfig {
    const KIND: &'static str = "droptail";
    const ABOUT: &'static str = "tail-drop FIFO (ns-2 drop-tail, ns-3 FifoQueueDisc)";
    const PARAMS: &'static [crate::registry::Param] = &[crate::registry::param!(
        "limit",
        "packets, or bytes with a unit",
        "> 0",
        "0",
        "buffer size: 100 = packets, \"64KB\" = bytes"
    )];
    fn validate(&self) -> Result<(), (String, String)> {
        DropTailConfig::validate(self)
    }
}

impl super::registry::QueueKind for DropTailConfig {
    const FIFO: bool = true;
    fn build(&self, _: &mut super::PortCtx) -> Box<dyn QueueDisc> {
        Box::new(DropTail::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStream;

    fn ctx<'a>(rng: &'a mut RngStream, d: &'a mut Vec<(Packet, DropCause)>) -> QdCtx<'a> {
        QdCtx {
            now: 0,
            rng,
            dropped: d,
            marked: 0,
        }
    }

    #[test]
    fn packet_limit_and_fifo_order() {
        let mut q = DropTail::new(&DropTailConfig {
            limit: Limit::Packets(3),
        });
        let (mut r, mut d) = (RngStream::new(0, 0), vec![]);
        let mut c = ctx(&mut r, &mut d);
        for i in 0..5 {
            let res = q.enqueue(
                Packet {
                    uid: i,
                    size: 100,
                    ..Default::default()
                },
                &mut c,
            );
            assert_eq!(res.is_ok(), i < 3);
        }
        assert_eq!(q.len_bytes(), 300);
        let order: Vec<u64> = std::iter::from_fn(|| q.dequeue(&mut c).map(|p| p.uid)).collect();
        assert_eq!(order, vec![0, 1, 2]);
        assert_eq!(q.len_bytes(), 0);
    }

    #[test]
    fn order_and_lengths_across_the_inline_head_and_the_ring() {
        // pushes and pops interleaved, against a VecDeque
        let mut q = DropTail::new(&DropTailConfig {
            limit: Limit::Packets(6),
        });
        let (mut r, mut d) = (RngStream::new(0, 0), vec![]);
        let mut c = ctx(&mut r, &mut d);
        let mut model = std::collections::VecDeque::new();
        let mut x = 12345u64;
        for uid in 0..3000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if (x >> 33) % 5 < 2 {
                let got = q.dequeue(&mut c).map(|p| p.uid);
                assert_eq!(got, model.pop_front().map(|p: Packet| p.uid));
            } else {
                let p = Packet {
                    uid,
                    size: 40 + (uid % 7) as u32,
                    ..Default::default()
                };
                let ok = q.enqueue(p, &mut c).is_ok();
                assert_eq!(ok, model.len() < 6);
                if ok {
                    model.push_back(p);
                }
            }
            assert_eq!(q.len_pkts(), model.len());
            let bytes: u64 = model.iter().map(|p| p.size as u64).sum();
            assert_eq!(q.len_bytes(), bytes);
        }
    }

    #[test]
    fn byte_limit() {
        let mut q = DropTail::new(&DropTailConfig {
            limit: Limit::Bytes(1000),
        });
        let (mut r, mut d) = (RngStream::new(0, 0), vec![]);
        let mut c = ctx(&mut r, &mut d);
        assert!(q
            .enqueue(
                Packet {
                    size: 600,
                    ..Default::default()
                },
                &mut c
            )
            .is_ok());
        assert!(q
            .enqueue(
                Packet {
                    size: 400,
                    ..Default::default()
                },
                &mut c
            )
            .is_ok());
        assert_eq!(
            q.enqueue(
                Packet {
                    size: 1,
                    ..Default::default()
                },
                &mut c
            ),
            Err(DropCause::Overflow)
        );
    }
}
