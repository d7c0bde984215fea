//! Traffic sources. Bulk senders (always have data: FTP/iperf elephants) and
//! sized transfers (N bytes) are TCP flow groups in the scenario (`size`
//! absent = bulk); [`cbr`] is an unresponsive constant-bit-rate source;
//! [`http`] opens request/response connections at run time. Workloads that
//! create connections while the simulation runs are declared in
//! `[[workloads]]` ([`WorkloadSpec`]).

pub mod cbr;
pub mod cdf;
pub mod http;
pub mod incast;
pub mod web;

pub use crate::scenario::FlowSpec;
pub use cbr::{Cbr, CbrSpec};
pub use http::{HttpSpec, HttpWorkload, Role, Spawn};
pub use web::{WebSpec, WebWorkload};

use serde::{Deserialize, Serialize};

/// The workloads a scenario can declare in `[[workloads]]`, by `kind`.
/// Registration point for workload generators.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum WorkloadSpec {
    /// HTTP request/response connections (mice).
    Http(HttpSpec),
    /// Web sessions and foreground probes (Guo & Matta 2001).
    Web(WebSpec),
    /// Many servers answering one client at once (`incast.rs`).
    Incast(incast::IncastSpec),
    /// Poisson flow arrivals with sizes from a CDF (`cdf.rs`).
    Cdf(cdf::CdfSpec),
}

/// A workload generator running inside a simulation. It opens connections
/// ([`Spawn`]) at arrival times it chooses and when transfers complete; the
/// simulation keeps the flows of each item (connection, object) and reports
/// per-item timings ([`crate::metrics::RequestResult`]).
pub trait Workload: Send {
    fn name(&self) -> &str;
    /// The `kind` as written in scenarios.
    fn kind(&self) -> &'static str;
    /// When the first arrival happens (None: never).
    fn first_arrival(&self) -> Option<crate::engine::Time>;
    /// Arrivals due at `now`: flows to create, and the next arrival time.
    fn arrive(&mut self, now: crate::engine::Time) -> (Vec<Spawn>, Option<crate::engine::Time>);
    /// A transfer of item `item` with role `role` was completely received
    /// at `now`: flows to create in response.
    fn transfer_done(&mut self, item: u32, role: Role, now: crate::engine::Time) -> Vec<Spawn>;
}

impl WorkloadSpec {
    /// The running workload for a run with `seed`; `tcp` is the scenario's
    /// global `[tcp]` table.
    pub fn build(&self, tcp: &crate::tcp::TcpOptions, seed: u64) -> Box<dyn Workload> {
        match self {
            WorkloadSpec::Http(h) => Box::new(HttpWorkload::new(h, tcp, seed)),
            WorkloadSpec::Web(w) => Box::new(WebWorkload::new(w, tcp, seed)),
            WorkloadSpec::Incast(w) => Box::new(incast::IncastWorkload::new(w, tcp)),
            WorkloadSpec::Cdf(w) => Box::new(cdf::CdfWorkload::new(w, tcp, seed)),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            WorkloadSpec::Http(h) => &h.name,
            WorkloadSpec::Web(w) => &w.name,
            WorkloadSpec::Incast(w) => &w.name,
            WorkloadSpec::Cdf(w) => &w.name,
        }
    }
    /// (client, server) hosts.
    pub fn hosts(&self) -> Vec<(&'static str, &str)> {
        match self {
            WorkloadSpec::Http(h) => {
                vec![("client", h.client.as_str()), ("server", h.server.as_str())]
            }
            WorkloadSpec::Web(w) => {
                vec![("client", w.client.as_str()), ("server", w.server.as_str())]
            }
            WorkloadSpec::Incast(w) => std::iter::once(("client", w.client.as_str()))
                .chain(w.servers.iter().map(|s| ("servers", s.as_str())))
                .collect(),
            WorkloadSpec::Cdf(w) => w
                .senders
                .iter()
                .map(|s| ("senders", s.as_str()))
                .chain(w.receivers.iter().map(|s| ("receivers", s.as_str())))
                .collect(),
        }
    }
    pub fn validate(&self) -> Result<(), (String, String)> {
        match self {
            WorkloadSpec::Http(h) => h.validate(),
            WorkloadSpec::Web(w) => w.validate(),
            WorkloadSpec::Incast(w) => w.validate(),
            WorkloadSpec::Cdf(w) => w.validate(),
        }
    }
    /// The workload's TCP overrides, if it runs TCP.
    pub fn tcp_options(&self) -> Option<&crate::tcp::TcpOptions> {
        match self {
            WorkloadSpec::Http(h) => Some(&h.tcp),
            WorkloadSpec::Web(w) => Some(&w.tcp),
            WorkloadSpec::Incast(w) => Some(&w.tcp),
            WorkloadSpec::Cdf(w) => Some(&w.tcp),
        }
    }
}
