//! The events of a logical process. Plain data: no closures, no allocation;
//! ids are local to the process that runs the event.

use super::ids::{LocalFlow, LocalLink};
use crate::tcp::TimerKind;

#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// The transmitter of a link finished serialising its packet.
    TxDone(LocalLink),
    /// The packet at the head of a link's pipe reaches the far node.
    Arrive(LocalLink),
    /// A flow endpoint's timer (a CBR source's next packet is its `Pace`).
    Timer(LocalFlow, TimerKind),
    /// Sample the monitored queues.
    Sample,
    /// Sample the traced congestion windows.
    CwndSample,
    /// Workload `0` opens its next connection(s).
    Workload(u32),
}

/// The owners of events, for the model-derived tie-break
/// ([`crate::engine::TieBreak`]): events at one time run samplers first, then
/// workloads, link transmitters, link far ends, senders and receivers, each
/// in global id order and, within one owner, in the order that owner
/// scheduled them. Every owner lives in exactly one logical process, so its
/// counter — and therefore the whole order — is the same in every
/// partition.
pub mod owner {
    use crate::net::packet::FlowId;
    use crate::sim::ids::LinkId;

    const CLASS: u32 = 60;
    /// The queue sampler.
    pub const SAMPLE: u64 = 0;
    /// The congestion-window sampler.
    pub const CWND: u64 = 1;
    /// Workload `w`'s arrivals.
    pub fn workload(w: u32) -> u64 {
        2 + w as u64
    }
    /// A link's transmitter (its `TxDone` events).
    pub fn link_tx(l: LinkId) -> u64 {
        1 << CLASS | l.0 as u64
    }
    /// A link's far end (its `Arrive` events).
    pub fn link_rx(l: LinkId) -> u64 {
        2 << CLASS | l.0 as u64
    }
    /// A flow's sending end (start, RTO, RACK, pacing timers).
    pub fn sender(f: FlowId) -> u64 {
        3 << CLASS | f.0 as u64
    }
    /// A flow's receiving end (delayed-ACK timer).
    pub fn receiver(f: FlowId) -> u64 {
        4 << CLASS | f.0 as u64
    }
}
