//! The network: packets, links with egress ports, nodes and routing.

pub mod classifier;
pub mod event_log;
pub mod ext;
pub mod link;
pub mod link_model;
pub mod packet;
pub mod port_stats;
pub mod routing;

pub use ext::{Class, Ext, ExtEcho, MaxNetFields};
pub use link::{Link, Port};
pub use packet::{Ecn, FlowId, NodeId, OptTime, Packet};
