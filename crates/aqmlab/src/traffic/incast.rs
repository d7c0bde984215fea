//! Incast: one client asks `servers` hosts for a block each at the same
//! moment, and the answers converge on the client's access link — the
//! barrier-synchronised many-to-one pattern of cluster storage reads studied
//! by Phanishayee et al., "Measurement and Analysis of TCP Throughput
//! Collapse in Cluster-based Storage Systems" (FAST 2008), and Vasudevan et
//! al., "Safe and Effective Fine-grained TCP Retransmissions for Datacenter
//! Communication" (SIGCOMM 2009), and the classic data-centre AQM stress
//! (DCTCP, SIGCOMM 2010 §4.2).
//!
//! Each round: at its start the client sends a request (`request_size`) to
//! every server; a server answers with `response_size` bytes (the server
//! request unit, SRU) as soon as it has the whole request. The next round
//! starts when the client holds every response of the current one (the
//! barrier), for `rounds` rounds. Each (round, server) pair is one item of
//! `requests.csv` (request → response timings, as for `http`).
//!
//! Parameters: `name`, `client` (host), `servers` (hosts; an entry ending
//! in `*` stands for every host with that prefix), `start` (0 s), `rounds`
//! (1), `request_size` (62 B), `response_size` (256 KB, the SRU of
//! Vasudevan et al.), `cc` (newreno), `tcp` (overrides; requests and
//! responses use the workload's TCP parameters, with the scenario's
//! `handshake` setting for the request).

use super::{Role, Spawn};
use crate::engine::Time;
use crate::units::{Dur, Size};
use crate::tcp::cc::{deserialize_cc, CcConfig};
use crate::tcp::{TcpOptions, TcpParams};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IncastSpec {
    pub name: String,
    pub client: String,
    pub servers: Vec<String>,
    #[serde(default)]
    pub start: Dur,
    #[serde(default = "one")]
    pub rounds: u32,
    #[serde(default = "d_req")]
    pub request_size: Size,
    #[serde(default = "d_resp")]
    pub response_size: Size,
    #[serde(default, deserialize_with = "deserialize_cc")]
    pub cc: CcConfig,
    #[serde(default)]
    pub tcp: TcpOptions,
}

fn one() -> u32 {
    1
}
fn d_req() -> Size {
    Size(62)
}
fn d_resp() -> Size {
    Size(256_000)
}

impl IncastSpec {
    pub fn validate(&self) -> Result<(), (String, String)> {
        if self.servers.is_empty() {
            return Err(("servers".into(), "give at least one server".into()));
        }
        if self.rounds == 0 {
            return Err(("rounds".into(), "must be at least 1".into()));
        }
        if self.servers.contains(&self.client) {
            return Err((
                "servers".into(),
                format!(
                    "`{}` is the client; servers must differ from it",
                    self.client
                ),
            ));
        }
        self.cc.validate().map_err(|(k, m)| (format!("cc.{k}"), m))
    }
}

impl crate::registry::Registered for IncastSpec {
    const KIND: &'static str = "incast";
    const ABOUT: &'static str = "N servers answer one client's request at once, barrier-synchronised rounds (Phanishayee et al. FAST 2008; Vasudevan et al. SIGCOMM 2009)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!(required = "\"read\"", "name", "", "unique among workloads", "", "name in outputs"),
        crate::registry::param!(required = "\"c\"", "client", "", "a host", "", "host that requests and receives"),
        crate::registry::param!(required = "[\"s0\", \"s1\"]", "servers", "", "hosts other than client; `prefix*` = every host with the prefix", "[\"c\"]", "hosts that answer"),
        crate::registry::param!("start", "time", "≥ 0", "", "first round"),
        crate::registry::param!("rounds", "rounds", "≥ 1", "0", "rounds; the next starts when every response is in"),
        crate::registry::param!("request_size", "bytes", "> 0", "", "request size"),
        crate::registry::param!("response_size", "bytes", "> 0", "", "response size per server (SRU)"),
        crate::registry::param!("cc", "", "a congestion control (see `aqmlab list`)", "\"cubicle\"", "congestion control of the connections"),
        crate::registry::param!("tcp", "", "table of [tcp] keys", "", "TCP overrides"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        IncastSpec::validate(self)
    }
}

impl super::registry::WorkloadKind for IncastSpec {
    fn build(&self, tcp: &TcpOptions, seed: u64) -> Box<dyn super::Workload> {
        Box::new(IncastWorkload::new(self, tcp, seed))
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn hosts(&self) -> Vec<(&'static str, &str)> {
        std::iter::once(("client", self.client.as_str()))
            .chain(self.servers.iter().map(|s| ("servers", s.as_str())))
            .collect()
    }
    fn tcp_options(&self) -> Option<&TcpOptions> {
        Some(&self.tcp)
    }
    fn expected_flows(&self, _duration: u64) -> (u64, &'static str) {
        // each round: a request to and a response from every server
        let n = 2 * self.servers.len() as u64;
        (n.saturating_mul(self.rounds as u64), "rounds")
    }
    fn largest_transfers(&self, _mss: u32) -> Vec<(&'static str, u64)> {
        vec![
            ("request_size", self.request_size.0),
            ("response_size", self.response_size.0),
        ]
    }
    fn host_lists_mut(&mut self) -> Vec<(&'static str, &mut Vec<String>)> {
        vec![("servers", &mut self.servers)]
    }
}

pub struct IncastWorkload {
    spec: IncastSpec,
    params: TcpParams,
    round: u32,
    /// Responses of the current round still outstanding.
    pending: usize,
}

impl IncastWorkload {
    /// `seed`: the run's, for the flows' congestion control
    /// (`TcpParams::cc_seed`).
    pub fn new(spec: &IncastSpec, global: &TcpOptions, seed: u64) -> Self {
        let mut params = TcpParams::default();
        params.apply(global);
        params.apply(&spec.tcp);
        params.cc_seed = seed;
        IncastWorkload {
            spec: spec.clone(),
            params,
            round: 0,
            pending: 0,
        }
    }

    /// The requests of the current round, one per server.
    fn requests(&mut self) -> Vec<Spawn> {
        let n = self.spec.servers.len();
        self.pending = n;
        (0..n)
            .map(|i| Spawn {
                src: self.spec.client.clone(),
                dst: self.spec.servers[i].clone(),
                bytes: self.spec.request_size.0,
                params: self.params.clone(),
                cc: self.spec.cc.clone(),
                group: format!("{}:request", self.spec.name),
                item: self.round * n as u32 + i as u32,
                role: Role::Request,
            })
            .collect()
    }
}

impl super::Workload for IncastWorkload {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn kind(&self) -> &'static str {
        "incast"
    }

    fn first_arrival(&self) -> Option<Time> {
        Some(self.spec.start.0)
    }

    fn arrive(&mut self, _now: Time) -> (Vec<Spawn>, Option<Time>) {
        (self.requests(), None)
    }

    fn transfer_done(&mut self, item: u32, role: Role, _now: Time) -> Vec<Spawn> {
        let n = self.spec.servers.len() as u32;
        match role {
            Role::Request => {
                let mut p = self.params.clone();
                p.handshake = false; // the answer uses the open connection
                vec![Spawn {
                    src: self.spec.servers[(item % n) as usize].clone(),
                    dst: self.spec.client.clone(),
                    bytes: self.spec.response_size.0,
                    params: p,
                    cc: self.spec.cc.clone(),
                    group: format!("{}:response", self.spec.name),
                    item,
                    role: Role::Response,
                }]
            }
            Role::Response => {
                self.pending -= 1;
                if self.pending == 0 && self.round + 1 < self.spec.rounds {
                    self.round += 1;
                    self.requests()
                } else {
                    Vec::new()
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::Workload;

    #[test]
    fn a_round_starts_when_every_response_of_the_last_one_is_in() {
        let spec: IncastSpec = toml::from_str(
            "name = \"i\"\nclient = \"c\"\nservers = [\"s0\", \"s1\", \"s2\"]\nrounds = 2\n",
        )
        .unwrap();
        let mut w = IncastWorkload::new(&spec, &TcpOptions::default(), 1);
        let (r, next) = w.arrive(0);
        assert!(next.is_none());
        assert_eq!(r.len(), 3);
        assert!(r.iter().all(|s| s.src == "c" && s.role == Role::Request));
        // the server of item 1 answers the client with the SRU
        let resp = w.transfer_done(1, Role::Request, 5);
        assert_eq!((resp[0].src.as_str(), resp[0].dst.as_str()), ("s1", "c"));
        assert_eq!(resp[0].bytes, 256_000);
        assert!(w.transfer_done(0, Role::Response, 6).is_empty());
        assert!(w.transfer_done(2, Role::Response, 7).is_empty());
        // the last response releases round 2 (items 3..5)
        let r2 = w.transfer_done(1, Role::Response, 8);
        assert_eq!(r2.iter().map(|s| s.item).collect::<Vec<_>>(), [3, 4, 5]);
        for i in 3..6 {
            w.transfer_done(i, Role::Response, 9);
        }
        assert_eq!(w.round, 1, "no third round");
    }
}
