//! Traffic sources. Bulk senders (always have data: FTP/iperf elephants) and
//! sized transfers (N bytes) are TCP flow groups in the scenario (`size`
//! absent = bulk); [`cbr`] is an unresponsive constant-bit-rate source. The
//! HTTP request/response and web-session workloads of later issues attach here.

pub mod cbr;

pub use crate::scenario::FlowSpec;
pub use cbr::{Cbr, CbrSpec};
