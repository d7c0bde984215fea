//! The events of a logical process. Plain data: no closures, no allocation;
//! ids are local to the process that runs the event.

use super::ids::{LocalFlow, LocalLink};
use crate::tcp::TimerKind;

#[derive(Clone, Copy, Debug)]
pub enum Ev {
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
