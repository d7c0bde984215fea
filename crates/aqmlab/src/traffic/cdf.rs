//! Flow arrivals with sizes from an empirical distribution: a Poisson
//! process of `rate` flows per second, each a TCP transfer from a random
//! sender to a random receiver (uniform, never the sender itself) with a
//! size drawn from a CDF — the open-loop data-centre workload of DCTCP
//! (Alizadeh et al., SIGCOMM 2010), pFabric (SIGCOMM 2013) and HPCC
//! (SIGCOMM 2019).
//!
//! `sizes` is `"web-search"` or `"data-mining"` (shipped with their sources:
//! `data/web-search.cdf`, DCTCP's web-search distribution, and
//! `data/data-mining.cdf`, VL2's data-mining distribution as pFabric
//! tabulated it) or the path of a CDF file in the same format: one point per line,
//! `bytes cumulative-percent`, percent rising to 100, `#` comments. A size is
//! drawn by inverting the CDF with linear interpolation between points (as
//! the HPCC traffic generator does), rounded up to a whole byte, at least 1.
//!
//! Parameters: `name`, `senders`, `receivers` (hosts; an entry ending in `*`
//! stands for every host with that prefix), `flows` (number of arrivals),
//! `rate` (flows per second), `start` (0 s), `sizes`, `cc` (newreno), `tcp`.
//! Each flow is one item of `requests.csv`: `completion_s` is its flow
//! completion time (first byte sent → last byte received).

use super::{Role, Spawn};
use crate::engine::{secs, stream_id, RngStream, Time};
use crate::units::Dur;
use crate::tcp::cc::{deserialize_cc, CcConfig};
use crate::tcp::{TcpOptions, TcpParams};
use serde::{Deserialize, Serialize};

/// The `sizes` values that name a shipped distribution, not a file.
pub const BUILTIN_SIZES: [&str; 2] = ["web-search", "data-mining"];

/// The shipped web-search distribution.
pub const WEB_SEARCH: &str = include_str!("../../data/web-search.cdf");
/// The shipped data-mining distribution.
pub const DATA_MINING: &str = include_str!("../../data/data-mining.cdf");

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CdfSpec {
    pub name: String,
    pub senders: Vec<String>,
    pub receivers: Vec<String>,
    pub flows: u32,
    pub rate: f64,
    #[serde(default)]
    pub start: Dur,
    pub sizes: String,
    #[serde(default, deserialize_with = "deserialize_cc")]
    pub cc: CcConfig,
    #[serde(default)]
    pub tcp: TcpOptions,
    /// The distribution of a `sizes` file, as loaded with the scenario
    /// (`Scenario::load_files`).
    #[serde(skip)]
    pub file: Option<std::sync::Arc<SizeCdf>>,
}

/// What `sizes` may be.
pub const SIZES_ALLOWED: &str = "\"web-search\", \"data-mining\" or a CDF file";

/// A size distribution: (bytes, cumulative probability) points.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCdf(Vec<(f64, f64)>);

impl SizeCdf {
    /// Parse the CDF file format; the error names the line.
    pub fn parse(text: &str) -> Result<SizeCdf, String> {
        let mut pts: Vec<(f64, f64)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let v: Vec<f64> = line
                .split_whitespace()
                .map(|x| x.parse::<f64>())
                .collect::<Result<_, _>>()
                .map_err(|_| format!("line {}: expected `bytes percent`, got `{line}`", i + 1))?;
            let &[b, p] = v.as_slice() else {
                return Err(format!(
                    "line {}: expected two numbers, got `{line}`",
                    i + 1
                ));
            };
            if !(b >= 0.0 && b.is_finite() && (0.0..=100.0).contains(&p)) {
                return Err(format!(
                    "line {}: bytes must be ≥ 0 and percent in [0, 100], got `{line}`",
                    i + 1
                ));
            }
            if let Some(&(pb, pp)) = pts.last() {
                if b < pb || p < pp * 100.0 {
                    return Err(format!(
                        "line {}: sizes and percentages must not decrease",
                        i + 1
                    ));
                }
            }
            pts.push((b, p / 100.0));
        }
        if pts.last().is_some_and(|&(b, p)| p == 1.0 && b < 1.0) {
            // every draw would be 0 bytes: refuse rather than turn them
            // into 1-byte transfers
            Err("the largest size is below 1 byte; a transfer carries at least 1 byte".into())
        } else if pts.last().is_some_and(|&(_, p)| p == 1.0) {
            Ok(SizeCdf(pts))
        } else {
            Err("the last point must be at 100 percent".into())
        }
    }

    /// The size at cumulative probability `u` in [0, 1).
    pub fn quantile(&self, u: f64) -> u64 {
        let p = &self.0;
        let i = p.partition_point(|&(_, c)| c < u).min(p.len() - 1);
        let x = if i == 0 {
            p[0].0
        } else {
            let ((b0, c0), (b1, c1)) = (p[i - 1], p[i]);
            if c1 > c0 {
                b0 + (b1 - b0) * (u - c0) / (c1 - c0)
            } else {
                b1
            }
        };
        (x.ceil() as u64).max(1)
    }

    /// Mean size in bytes (the integral of the interpolated inverse CDF).
    pub fn mean(&self) -> f64 {
        self.0
            .windows(2)
            .map(|w| (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0)
            .sum()
    }
}

impl CdfSpec {
    /// The distribution named by `sizes`.
    /// A file's distribution is the one loaded with the scenario
    /// (`Scenario::load_files` reads the file and sets [`CdfSpec::file`]).
    pub fn load(&self) -> Result<SizeCdf, String> {
        match self.sizes.as_str() {
            "web-search" => SizeCdf::parse(WEB_SEARCH),
            "data-mining" => SizeCdf::parse(DATA_MINING),
            "" => Err(format!("empty; give {SIZES_ALLOWED}")),
            path => self.file.as_deref().cloned().ok_or_else(|| {
                format!("the CDF file `{path}` was not loaded (call Scenario::load_files)")
            }),
        }
    }

    /// Does `sizes` name a file (not a built-in distribution)?
    pub fn names_file(&self) -> bool {
        !self.sizes.is_empty() && !BUILTIN_SIZES.contains(&self.sizes.as_str())
    }

    pub fn validate(&self) -> Result<(), (String, String)> {
        for (k, v) in [("senders", &self.senders), ("receivers", &self.receivers)] {
            if v.is_empty() {
                return Err((k.into(), "give at least one host".into()));
            }
        }
        // (a `prefix*` pattern is checked once expanded into hosts, when
        // validation runs again on the expanded lists)
        let pattern = |v: &[String]| v.iter().any(|h| h.ends_with('*'));
        if !pattern(&self.senders) && !pattern(&self.receivers) {
            // a drawn sender needs a receiver other than itself: every
            // sender must have one (else the draw could never end)
            if let Some(s) = self.senders.iter().find(|s| self.receivers.iter().all(|r| r == *s)) {
                return Err((
                    "receivers".into(),
                    format!(
                        "sender `{s}` has no receiver other than itself; give each sender a receiver that is another host"
                    ),
                ));
            }
        }
        if self.flows == 0 {
            return Err(("flows".into(), "must be at least 1".into()));
        }
        // as http's: at least 10⁻⁶/s keeps the exponential gaps (up to ~37 /
        // rate) far below u64 nanoseconds
        if !((1e-6..=1e9).contains(&self.rate) && self.rate.is_finite()) {
            return Err((
                "rate".into(),
                format!(
                    "must be 0.000001..=1000000000 flows per second, got {}",
                    self.rate
                ),
            ));
        }
        // a file is read and checked when the scenario loads its files
        // (`Scenario::load_files`), after this stage-two check
        if !self.names_file() || self.file.is_some() {
            self.load().map_err(|m| ("sizes".to_string(), m))?;
        }
        self.cc.validate().map_err(|(k, m)| (format!("cc.{k}"), m))
    }
}

impl crate::registry::Registered for CdfSpec {
    const KIND: &'static str = "cdf";
    const ABOUT: &'static str = "Poisson flow arrivals between random hosts, sizes from a CDF (web-search: DCTCP, Alizadeh et al. SIGCOMM 2010; data-mining: VL2, Greenberg et al. SIGCOMM 2009)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!(required = "\"ws\"", "name", "", "unique among workloads", "", "name in outputs"),
        crate::registry::param!(required = "[\"a\", \"b\"]", "senders", "", "hosts; `prefix*` = every host with the prefix", "[]", "hosts that send"),
        crate::registry::param!(required = "[\"b\", \"a\"]", "receivers", "", "hosts; `prefix*` = every host with the prefix", "[]", "hosts that receive"),
        crate::registry::param!(required = "100", "flows", "flows", "≥ 1", "0", "arrivals in all"),
        crate::registry::param!(required = "50.0", "rate", "1/s", "10⁻⁶ to 10⁹", "0.0", "Poisson arrival rate of flows"),
        crate::registry::param!("start", "time", "≥ 0", "", "first arrival"),
        crate::registry::param!(required = "\"web-search\"", "sizes", "", "\"web-search\", \"data-mining\" or a CDF file path", "\"\"", "flow size distribution"),
        crate::registry::param!("cc", "", "a congestion control (see `aqmlab list`)", "\"cubicle\"", "congestion control of the flows"),
        crate::registry::param!("tcp", "", "table of [tcp] keys", "", "TCP overrides"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        CdfSpec::validate(self)
    }
}

impl super::registry::WorkloadKind for CdfSpec {
    fn build(&self, tcp: &TcpOptions, seed: u64) -> Box<dyn super::Workload> {
        Box::new(CdfWorkload::new(self, tcp, seed))
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn hosts(&self) -> Vec<(&'static str, &str)> {
        self.senders
            .iter()
            .map(|s| ("senders", s.as_str()))
            .chain(self.receivers.iter().map(|s| ("receivers", s.as_str())))
            .collect()
    }
    fn tcp_options(&self) -> Option<&TcpOptions> {
        Some(&self.tcp)
    }
    fn expected_flows(&self, _duration: u64) -> (u64, &'static str) {
        (self.flows as u64, "flows")
    }
    fn largest_transfers(&self, _mss: u32) -> Vec<(&'static str, u64)> {
        // the distribution's largest size (validate has loaded it once)
        match self.load() {
            Ok(cdf) => vec![("sizes", cdf.quantile(1.0))],
            Err(_) => Vec::new(),
        }
    }
    fn host_lists_mut(&mut self) -> Vec<(&'static str, &mut Vec<String>)> {
        vec![
            ("senders", &mut self.senders),
            ("receivers", &mut self.receivers),
        ]
    }
}

pub struct CdfWorkload {
    spec: CdfSpec,
    cdf: SizeCdf,
    params: TcpParams,
    rng: RngStream,
    launched: u32,
    next: Time,
}

impl CdfWorkload {
    /// Build a validated workload (the distribution loads).
    pub fn new(spec: &CdfSpec, global: &TcpOptions, seed: u64) -> Self {
        let mut params = TcpParams::default();
        params.apply(global);
        params.apply(&spec.tcp);
        params.cc_seed = seed;
        CdfWorkload {
            cdf: spec.load().expect("validated size distribution"),
            spec: spec.clone(),
            params,
            rng: RngStream::new(seed, stream_id(&format!("workload:{}", spec.name))),
            launched: 0,
            next: spec.start.0,
        }
    }
}

impl super::Workload for CdfWorkload {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn kind(&self) -> &'static str {
        "cdf"
    }

    fn first_arrival(&self) -> Option<Time> {
        Some(self.next)
    }

    fn arrive(&mut self, now: Time) -> (Vec<Spawn>, Option<Time>) {
        let s = &self.spec;
        let src = s.senders[self.rng.below(s.senders.len() as u64) as usize].clone();
        // rejection ends: validation gives every sender a receiver other
        // than itself
        let dst = loop {
            let d = &s.receivers[self.rng.below(s.receivers.len() as u64) as usize];
            if *d != src {
                break d.clone();
            }
        };
        let bytes = self.cdf.quantile(self.rng.uniform());
        let sp = Spawn {
            src,
            dst,
            bytes,
            params: self.params.clone(),
            cc: s.cc.clone(),
            group: s.name.clone(),
            item: self.launched,
            role: Role::Response,
        };
        self.launched += 1;
        let next = (self.launched < s.flows).then(|| {
            let gap = -(1.0 - self.rng.uniform()).ln() / s.rate;
            now + secs(gap)
        });
        (vec![sp], next)
    }

    fn transfer_done(&mut self, _item: u32, _role: Role, _now: Time) -> Vec<Spawn> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_search_cdf_loads_and_inverts() {
        let c = SizeCdf::parse(WEB_SEARCH).unwrap();
        assert_eq!(c.quantile(0.15), 10_000);
        assert_eq!(c.quantile(0.53), 80_000);
        let top = c.quantile(0.999_999);
        assert!((29_999_000..=30_000_000).contains(&top), "{top}");
        // halfway between the 30 % and 40 % points
        assert_eq!(c.quantile(0.35), 40_000);
        // mean of the interpolated distribution, by the trapezoids of the
        // table: 1 711 250 bytes
        assert!((c.mean() - 1_711_250.0).abs() < 1e-6, "{}", c.mean());
        // sampled mean agrees with the integral
        let mut r = RngStream::new(1, 1);
        let n = 200_000;
        let m: f64 = (0..n).map(|_| c.quantile(r.uniform()) as f64).sum::<f64>() / n as f64;
        assert!((m / c.mean() - 1.0).abs() < 0.03, "{m}");
    }

    /// The data-mining table (VL2 via pFabric) inverts at its points and
    /// between them, and its mean is the trapezoid integral of the table.
    #[test]
    fn data_mining_cdf_loads_and_inverts() {
        let c = SizeCdf::parse(DATA_MINING).unwrap();
        assert_eq!(c.quantile(0.1), 180);
        assert_eq!(c.quantile(0.5), 1_100);
        assert_eq!(c.quantile(0.8), 10_000);
        assert_eq!(c.quantile(0.95), 3_160_000);
        // halfway between the 80 % (10 kB) and 90 % (400 kB) points
        assert_eq!(c.quantile(0.85), 205_000);
        let top = c.quantile(0.999_999);
        assert!((999_000_000..=1_000_000_000).contains(&top), "{top}");
        // trapezoids of the table: 12 658 198.6 bytes, 7.4 x web-search's
        assert!((c.mean() - 12_658_198.6).abs() < 1e-3, "{}", c.mean());
        // most flows are small, most bytes are in the largest 2 %
        let tail = 0.02 * (1e8 + 1e9) / 2.0;
        assert!(tail / c.mean() > 0.85);
        // the spec loads it by name, and the workload's largest transfer
        // (1 GB) fits the segment counter at mss 1460
        let spec: CdfSpec = toml::from_str(
            "name = \"dm\"\nsenders = [\"a\"]\nreceivers = [\"b\"]\nflows = 10\nrate = 1.0\nsizes = \"data-mining\"\n",
        )
        .unwrap();
        assert_eq!(spec.load().unwrap(), c);
        assert!(spec.validate().is_ok());
        use super::super::registry::WorkloadKind;
        assert_eq!(spec.largest_transfers(1460), vec![("sizes", 1_000_000_000)]);
    }

    #[test]
    fn bad_cdf_files_name_the_line() {
        assert!(SizeCdf::parse("0 0\n10 50\n5 100\n")
            .unwrap_err()
            .contains("line 3"));
        assert!(SizeCdf::parse("0 0\n10 50\n").unwrap_err().contains("100"));
        assert!(SizeCdf::parse("0 0\nten 100\n")
            .unwrap_err()
            .contains("line 2"));
    }
}
