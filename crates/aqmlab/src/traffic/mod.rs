//! Traffic sources. Bulk senders (always have data: FTP/iperf elephants) and
//! sized transfers (N bytes) are TCP flow groups in the scenario (`size`
//! absent = bulk); [`cbr`] is an unresponsive constant-bit-rate source;
//! [`http`] opens request/response connections at run time. Workloads that
//! create connections while the simulation runs are declared in
//! `[[workloads]]` ([`WorkloadSpec`]).

pub mod cbr;
pub mod http;

pub use crate::scenario::FlowSpec;
pub use cbr::{Cbr, CbrSpec};
pub use http::{HttpSpec, HttpWorkload, Role, Spawn};

use serde::{Deserialize, Serialize};

/// The workloads a scenario can declare in `[[workloads]]`, by `kind`.
/// Registration point for workload generators.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum WorkloadSpec {
    /// HTTP request/response connections (mice).
    Http(HttpSpec),
}

impl WorkloadSpec {
    pub fn name(&self) -> &str {
        match self {
            WorkloadSpec::Http(h) => &h.name,
        }
    }
    /// (client, server) hosts.
    pub fn hosts(&self) -> Vec<(&'static str, &str)> {
        match self {
            WorkloadSpec::Http(h) => {
                vec![("client", h.client.as_str()), ("server", h.server.as_str())]
            }
        }
    }
    pub fn validate(&self) -> Result<(), (String, String)> {
        match self {
            WorkloadSpec::Http(h) => h.validate(),
        }
    }
    /// The workload's TCP overrides, if it runs TCP.
    pub fn tcp_options(&self) -> Option<&crate::tcp::TcpOptions> {
        match self {
            WorkloadSpec::Http(h) => Some(&h.tcp),
        }
    }
}
