//! HTTP request/response "mice" (the workload of Phan et al., "MaxNet and TCP Reno/RED on Mice Traffic" §4.1,
//! generated there with httperf): each connection sends one request
//! (default 62 bytes) from the client to the server, and the server answers
//! with one response (default 4 KB).
//!
//! A connection opens with a three-way handshake (the request flow always
//! uses `handshake = true`, subject to loss and the initial RTO); the request
//! is sent when the handshake completes; when the server has received the
//! whole request it sends the response on the same connection (a second
//! segment stream in the other direction, no new handshake).
//!
//! Measured per request (as in the paper): **response time** = from the
//! request's first byte sent to the response's first byte received by the
//! client; **completion time** = from the request's first byte sent to the
//! response's last byte received.
//!
//! Arrivals: `connections` connections either all at `start` (absent `rate`),
//! or as a Poisson process of `rate` connections per second from `start`
//! (from the workload's own random stream).
//!
//! Parameters: `name`, `client`, `server` (hosts), `connections` (≥ 1),
//! `start` = 0 s, `rate` (per second, optional), `request_size` = 62 B,
//! `response_size` = 4 KB (4000 B), `cc` = newreno, `tcp` (overrides).

use crate::engine::{secs, RngStream, Time};
use crate::units::{Dur, Size};
use crate::tcp::cc::{deserialize_cc, CcConfig};
use crate::tcp::{TcpOptions, TcpParams};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSpec {
    pub name: String,
    pub client: String,
    pub server: String,
    pub connections: u32,
    #[serde(default)]
    pub start: Dur,
    /// Poisson arrival rate, connections per second (absent: all at `start`).
    #[serde(default)]
    pub rate: Option<f64>,
    #[serde(default = "d_req")]
    pub request_size: Size,
    #[serde(default = "d_resp")]
    pub response_size: Size,
    #[serde(default, deserialize_with = "deserialize_cc")]
    pub cc: CcConfig,
    #[serde(default)]
    pub tcp: TcpOptions,
}

fn d_req() -> Size {
    Size(62)
}
fn d_resp() -> Size {
    Size(4000)
}

impl HttpSpec {
    pub fn validate(&self) -> Result<(), (String, String)> {
        if self.connections == 0 {
            return Err(("connections".into(), "must be at least 1".into()));
        }
        if let Some(r) = self.rate {
            // at least 10⁻⁶/s keeps the exponential gaps (up to ~37 / rate)
            // far below u64 nanoseconds
            if !((1e-6..=1e9).contains(&r) && r.is_finite()) {
                return Err((
                    "rate".into(),
                    format!("must be 0.000001..=1000000000 connections per second, got {r}"),
                ));
            }
        }
        if self.client == self.server {
            return Err(("server".into(), "client and server must differ".into()));
        }
        self.cc.validate().map_err(|(k, m)| (format!("cc.{k}"), m))
    }
}

/// Which half of a connection a flow carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Request,
    Response,
}

/// A flow the simulation should create now.
#[derive(Clone, Debug)]
pub struct Spawn {
    pub src: String,
    pub dst: String,
    pub bytes: u64,
    pub params: TcpParams,
    pub cc: CcConfig,
    pub group: String,
    /// (item, role) for the owner's notifications.
    pub item: u32,
    pub role: Role,
}

pub struct HttpWorkload {
    pub spec: HttpSpec,
    params: TcpParams,
    rng: RngStream,
    launched: u32,
    next: Time,
}

impl HttpWorkload {
    pub fn new(spec: &HttpSpec, global: &TcpOptions, seed: u64) -> Self {
        let mut params = TcpParams::default();
        params.apply(global);
        params.apply(&spec.tcp);
        params.cc_seed = seed;
        HttpWorkload {
            spec: spec.clone(),
            params,
            rng: RngStream::new(
                seed,
                crate::engine::stream_id(&format!("workload:{}", spec.name)),
            ),
            launched: 0,
            next: spec.start.0,
        }
    }

    /// The server has the whole request of connection `item`: send the response.
    pub fn request_received(&mut self, item: u32) -> Spawn {
        let mut p = self.params.clone();
        p.handshake = false;
        Spawn {
            src: self.spec.server.clone(),
            dst: self.spec.client.clone(),
            bytes: self.spec.response_size.0,
            params: p,
            cc: self.spec.cc.clone(),
            group: format!("{}:response", self.spec.name),
            item,
            role: Role::Response,
        }
    }
}

impl super::Workload for HttpWorkload {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn kind(&self) -> &'static str {
        "http"
    }

    fn first_arrival(&self) -> Option<Time> {
        Some(self.next)
    }

    fn transfer_done(&mut self, item: u32, role: Role, _now: Time) -> Vec<Spawn> {
        match role {
            Role::Request => vec![self.request_received(item)],
            Role::Response => vec![],
        }
    }

    /// Open the next connection(s) due at `now`; returns the flows to
    /// create and the time of the next arrival, if any.
    fn arrive(&mut self, now: Time) -> (Vec<Spawn>, Option<Time>) {
        let n = if self.spec.rate.is_some() {
            1
        } else {
            self.spec.connections
        };
        let mut out = Vec::new();
        for _ in 0..n {
            if self.launched >= self.spec.connections {
                break;
            }
            let mut p = self.params.clone();
            p.handshake = true;
            out.push(Spawn {
                src: self.spec.client.clone(),
                dst: self.spec.server.clone(),
                bytes: self.spec.request_size.0,
                params: p,
                cc: self.spec.cc.clone(),
                group: format!("{}:request", self.spec.name),
                item: self.launched,
                role: Role::Request,
            });
            self.launched += 1;
        }
        let next = match self.spec.rate {
            Some(r) if self.launched < self.spec.connections => {
                let gap = -(1.0 - self.rng.uniform()).ln() / r;
                Some(now + secs(gap))
            }
            _ => None,
        };
        (out, next)
    }
}

impl crate::registry::Registered for HttpSpec {
    const KIND: &'static str = "http";
    const ABOUT: &'static str = "HTTP request/response connections (mice), as httperf in Suchara et al. 2008 §4.1";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!(required = "\"mice\"", "name", "", "unique among workloads", "", "name in outputs"),
        crate::registry::param!(required = "\"h1\"", "client", "", "a host", "", "host that sends requests"),
        crate::registry::param!(required = "\"h2\"", "server", "", "a host other than client", "", "host that answers"),
        crate::registry::param!(required = "10", "connections", "connections", "≥ 1", "0", "connections opened"),
        crate::registry::param!("start", "time", "≥ 0", "", "first arrival"),
        crate::registry::param!("rate", "1/s", "10⁻⁶ to 10⁹; absent = all at start", "0.0", "Poisson arrival rate of connections"),
        crate::registry::param!("request_size", "bytes", "> 0", "", "request size"),
        crate::registry::param!("response_size", "bytes", "> 0", "", "response size"),
        crate::registry::param!("cc", "", "a congestion control (see `aqmlab list`)", "\"cubicle\"", "congestion control of the connections"),
        crate::registry::param!("tcp", "", "table of [tcp] keys", "", "TCP overrides"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        HttpSpec::validate(self)
    }
}

impl super::registry::WorkloadKind for HttpSpec {
    fn build(&self, tcp: &TcpOptions, seed: u64) -> Box<dyn super::Workload> {
        Box::new(HttpWorkload::new(self, tcp, seed))
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn hosts(&self) -> Vec<(&'static str, &str)> {
        vec![("client", self.client.as_str()), ("server", self.server.as_str())]
    }
    fn tcp_options(&self) -> Option<&TcpOptions> {
        Some(&self.tcp)
    }
    fn expected_flows(&self, _duration: u64) -> (u64, &'static str) {
        // a request and a response per connection
        (2 * self.connections as u64, "connections")
    }
    fn largest_transfers(&self, _mss: u32) -> Vec<(&'static str, u64)> {
        vec![
            ("request_size", self.request_size.0),
            ("response_size", self.response_size.0),
        ]
    }
}
