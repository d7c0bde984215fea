//! The network: packets, links with egress ports, nodes and routing.

pub mod classifier;
pub mod link;
pub mod packet;
pub mod routing;

pub use link::{Link, Port};
pub use packet::{Class, Ecn, FlowId, NodeId, Packet};
