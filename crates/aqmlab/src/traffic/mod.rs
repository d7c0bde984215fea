//! Traffic sources. Today: bulk senders (always have data: FTP/iperf
//! elephants) and sized transfers (N bytes), both configured per flow group in
//! the scenario (`size` absent = bulk), each with a start time. The HTTP
//! request/response and web-session workloads of later issues attach here.

pub use crate::scenario::FlowSpec;
