//! Traffic sources. Bulk senders (always have data: FTP/iperf elephants) and
//! sized transfers (N bytes) are TCP flow groups in the scenario (`size`
//! absent = bulk); [`cbr`] is an unresponsive constant-bit-rate source;
//! [`http`] opens request/response connections at run time. Workloads that
//! create connections while the simulation runs are declared in
//! `[[workloads]]` ([`WorkloadSpec`]).

pub mod cbr;
pub mod registry;

// The registry: one line per workload (module, spec type, enum variant).
// The spec implements `registry::WorkloadKind` in its own file.
registry::workload_kinds! {
    http::HttpSpec => Http,
    web::WebSpec => Web,
    incast::IncastSpec => Incast,
    cdf::CdfSpec => Cdf,
}

pub use cbr::{Cbr, CbrSpec};
pub use http::{HttpSpec, HttpWorkload, Role, Spawn};
pub use web::{WebSpec, WebWorkload};

pub use registry::WorkloadKind;

/// A workload generator running inside a simulation. It opens connections
/// ([`Spawn`]) at arrival times it chooses and when transfers complete; the
/// simulation keeps the flows of each item (connection, object) and reports
/// per-item timings (`metrics::RequestResult`).
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
        self.as_kind().build(tcp, seed)
    }
    pub fn name(&self) -> &str {
        self.as_kind().name()
    }
    /// (client, server) hosts.
    pub fn hosts(&self) -> Vec<(&'static str, &str)> {
        self.as_kind().hosts()
    }
    pub fn validate(&self) -> Result<(), (String, String)> {
        self.as_kind().validate()
    }
    /// The workload's TCP overrides, if it runs TCP.
    pub fn tcp_options(&self) -> Option<&crate::tcp::TcpOptions> {
        self.as_kind().tcp_options()
    }
}
