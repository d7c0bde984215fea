//! Web sessions (HTTP/1.0, one TCP connection per object) and foreground
//! probe flows — the workload of Guo & Matta, "The War Between Mice and
//! Elephants", ICNP 2001 (slides, "Simulations
//! setup" and "Study of Foreground Traffic"), in the spirit of ns-2's
//! `tcl/webcache/webtraf.tcl` (session → page → object).
//!
//! Each of `sessions` sessions requests pages with exponential inter-page
//! times (mean `inter_page` = 9.5 s; the first page after an exponential
//! delay from `start`); a page has a uniform number of objects in
//! [`objects_min`, `objects_max`] = [2, 7], requested with exponential
//! inter-object times (mean `inter_object` = 0.05 s; the first at the page
//! time); each object is one TCP connection from `server` to `client`
//! carrying the object (SYN/SYN-ACK handshake always on, subject to loss
//! and the initial RTO). Arrivals are open-loop (they do not wait for
//! earlier objects to finish).
//!
//! Object sizes are bounded Pareto ([`bounded_pareto`], inverse CDF) with
//! `size_min` = 4, `size_max` = 200 000, `shape` = 1.2, in `size_unit`:
//! `"bytes"` (default, as the slides state) — the transfer is `⌈x⌉` bytes —
//! or `"packets"` — `⌈x⌉` full segments of `mss` bytes (ns-2's webtraf
//! counts object sizes in packets; see the reproduction's notes).
//!
//! **Load.** One session offers on average
//! `E[objects] · E[wire bytes per object] · 8 / inter_page` bit/s forward
//! ([`WebSpec::offered_bps_per_session`]); to load a bottleneck of rate `C`
//! to a fraction `ρ`, use `sessions = ρ · C / offered_bps_per_session`
//! ([`WebSpec::sessions_for_load`]).
//!
//! **Probes** (`probes = { … }`): every `short_every` = 25 s, `count` = 10
//! short flows of `short_pkts` = 10 segments; every `long_every` = 125 s,
//! `count` = 10 long flows of `long_pkts` = 1000 segments; from `start`
//! (first batches at `start`). To record probes apart from the background,
//! declare them as a separate `[[workloads]]` entry with `sessions = 0`;
//! items are then told apart by size.
//!
//! Each object is one item of the workload (`RunResult.requests`:
//! `total_s` = connection open → last byte received, handshake included).
//!
//! Parameters: `name`, `client`, `server`, `sessions` = 0, `start` = 0 s,
//! `inter_page` = 9.5 s, `objects_min` = 2, `objects_max` = 7,
//! `inter_object` = 0.05 s, `size_min` = 4, `size_max` = 200000,
//! `shape` = 1.2, `size_unit` = "bytes", `probes` (optional), `cc` =
//! newreno, `tcp` (overrides).

use super::{Role, Spawn};
use crate::engine::{secs, RngStream, Time};
use crate::units::Dur;
use crate::tcp::cc::{deserialize_cc, CcConfig};
use crate::tcp::{TcpOptions, TcpParams};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Sample a bounded Pareto variable on `[lo, hi]` with shape `alpha` from
/// a uniform `u ∈ [0, 1)` by inverting its CDF
/// `F(x) = (1 − (lo/x)^α) / (1 − (lo/hi)^α)`:
/// `x = lo · (1 − u·(1 − (lo/hi)^α))^(−1/α)`.
pub fn bounded_pareto(u: f64, lo: f64, hi: f64, alpha: f64) -> f64 {
    let k = 1.0 - (lo / hi).powf(alpha);
    (lo * (1.0 - u * k).powf(-1.0 / alpha)).clamp(lo, hi)
}

/// The mean of the bounded Pareto distribution on `[lo, hi]` with shape `alpha`.
pub fn bounded_pareto_mean(lo: f64, hi: f64, alpha: f64) -> f64 {
    let k = 1.0 - (lo / hi).powf(alpha);
    if (alpha - 1.0).abs() < 1e-12 {
        lo * (hi / lo).ln() / k
    } else {
        lo.powf(alpha) / k * alpha / (alpha - 1.0) * (lo.powf(1.0 - alpha) - hi.powf(1.0 - alpha))
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SizeUnit {
    #[default]
    Bytes,
    Packets,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeSpec {
    #[serde(default = "d_count")]
    pub count: u32,
    #[serde(default = "d_short_pkts")]
    pub short_pkts: u32,
    #[serde(default = "d_long_pkts")]
    pub long_pkts: u32,
    #[serde(default = "d_short_every")]
    pub short_every: Dur,
    #[serde(default = "d_long_every")]
    pub long_every: Dur,
}

impl Default for ProbeSpec {
    fn default() -> Self {
        ProbeSpec {
            count: d_count(),
            short_pkts: d_short_pkts(),
            long_pkts: d_long_pkts(),
            short_every: d_short_every(),
            long_every: d_long_every(),
        }
    }
}

fn d_count() -> u32 {
    10
}
fn d_short_pkts() -> u32 {
    10
}
fn d_long_pkts() -> u32 {
    1000
}
fn d_short_every() -> Dur {
    Dur(25_000_000_000)
}
fn d_long_every() -> Dur {
    Dur(125_000_000_000)
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WebSpec {
    pub name: String,
    pub client: String,
    pub server: String,
    #[serde(default)]
    pub sessions: u32,
    #[serde(default)]
    pub start: Dur,
    #[serde(default = "d_inter_page")]
    pub inter_page: Dur,
    #[serde(default = "d_omin")]
    pub objects_min: u32,
    #[serde(default = "d_omax")]
    pub objects_max: u32,
    #[serde(default = "d_inter_object")]
    pub inter_object: Dur,
    #[serde(default = "d_smin")]
    pub size_min: f64,
    #[serde(default = "d_smax")]
    pub size_max: f64,
    #[serde(default = "d_shape")]
    pub shape: f64,
    #[serde(default)]
    pub size_unit: SizeUnit,
    #[serde(default)]
    pub probes: Option<ProbeSpec>,
    #[serde(default, deserialize_with = "deserialize_cc")]
    pub cc: CcConfig,
    #[serde(default)]
    pub tcp: TcpOptions,
}

fn d_inter_page() -> Dur {
    Dur(9_500_000_000)
}
fn d_omin() -> u32 {
    2
}
fn d_omax() -> u32 {
    7
}
fn d_inter_object() -> Dur {
    Dur(50_000_000)
}
fn d_smin() -> f64 {
    4.0
}
fn d_smax() -> f64 {
    200_000.0
}
fn d_shape() -> f64 {
    1.2
}

/// Largest `inter_page`, ns (10⁶ s).
const MAX_INTER_PAGE: u64 = 1_000_000 * 1_000_000_000;
/// Largest `inter_object`, ns (10⁴ s).
const MAX_INTER_OBJECT: u64 = 10_000 * 1_000_000_000;
/// Largest `objects_max`.
const MAX_OBJECTS: u32 = 1000;

impl WebSpec {
    pub fn validate(&self) -> Result<(), (String, String)> {
        let e = |k: &str, m: String| Err((k.to_string(), m));
        if self.client == self.server {
            return e("server", "client and server must differ".into());
        }
        if self.sessions == 0 && self.probes.is_none() {
            return e(
                "sessions",
                "must be at least 1 (or give `probes` for a probe-only workload)".into(),
            );
        }
        // bounds keep every arrival time (start + up to ~37 mean gaps per
        // draw) far below u64 nanoseconds
        if self.inter_page.0 == 0 || self.inter_page.0 > MAX_INTER_PAGE {
            return e(
                "inter_page",
                format!("must be in (0, 1000000s], got {}ns", self.inter_page.0),
            );
        }
        if self.inter_object.0 > MAX_INTER_OBJECT {
            return e(
                "inter_object",
                format!("must be at most 10000s, got {}ns", self.inter_object.0),
            );
        }
        if self.objects_max > MAX_OBJECTS {
            return e(
                "objects_max",
                format!(
                    "must be at most {MAX_OBJECTS} objects per page, got {}",
                    self.objects_max
                ),
            );
        }
        if self.objects_min == 0 {
            return e("objects_min", "must be at least 1".into());
        }
        if self.objects_max < self.objects_min {
            return e(
                "objects_max",
                format!(
                    "need 1 ≤ objects_min ≤ objects_max, got {} and {}",
                    self.objects_min, self.objects_max
                ),
            );
        }
        if !(self.size_min > 0.0 && self.size_min.is_finite()) {
            return e(
                "size_min",
                format!("must be positive, got {}", self.size_min),
            );
        }
        if !(self.size_max > self.size_min && self.size_max.is_finite()) {
            return e(
                "size_max",
                format!("must be greater than size_min ({})", self.size_min),
            );
        }
        let max = match self.size_unit {
            SizeUnit::Bytes => crate::units::MAX_SIZE as f64,
            SizeUnit::Packets => 1e9,
        };
        if self.size_max > max {
            return e(
                "size_max",
                format!(
                    "must be at most {max} (the size_unit), got {}",
                    self.size_max
                ),
            );
        }
        if !(self.shape > 0.0 && self.shape.is_finite()) {
            return e("shape", format!("must be positive, got {}", self.shape));
        }
        if let Some(p) = &self.probes {
            if p.count == 0 || p.short_pkts == 0 || p.long_pkts == 0 {
                return e(
                    "probes",
                    "count, short_pkts and long_pkts must be positive".into(),
                );
            }
            if p.short_every.0 == 0 || p.long_every.0 == 0 {
                return e(
                    "probes",
                    "short_every and long_every must be positive".into(),
                );
            }
        }
        self.cc.validate().map_err(|(k, m)| (format!("cc.{k}"), m))
    }

    /// Transfer bytes of an object of sampled size `x`.
    pub fn object_bytes(&self, x: f64, mss: u32) -> u64 {
        let n = x.ceil().max(1.0) as u64;
        match self.size_unit {
            SizeUnit::Bytes => n,
            SizeUnit::Packets => n * mss as u64,
        }
    }

    /// Mean forward wire bits per second one session offers (payload plus
    /// `header` bytes per data segment and one SYN), for segments of `mss`
    /// bytes; the mean wire size per object is estimated from 200 000
    /// deterministic samples.
    pub fn offered_bps_per_session(&self, mss: u32, header: u32) -> f64 {
        let mut rng = RngStream::new(0, 0x5eed);
        let n = 200_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let x = bounded_pareto(rng.uniform(), self.size_min, self.size_max, self.shape);
            let b = self.object_bytes(x, mss);
            let segs = b.div_ceil(mss as u64);
            sum += (b + (segs + 1) * header as u64) as f64;
        }
        let per_obj = sum / n as f64;
        let objs = (self.objects_min + self.objects_max) as f64 / 2.0;
        objs * per_obj * 8.0 / self.inter_page.secs()
    }

    /// Sessions that load a bottleneck of `rate_bps` to fraction `load`.
    pub fn sessions_for_load(&self, rate_bps: f64, load: f64, mss: u32, header: u32) -> u32 {
        (load * rate_bps / self.offered_bps_per_session(mss, header))
            .round()
            .max(1.0) as u32
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
    /// Session `0` requests a page.
    Page(u32),
    /// An object is requested.
    Object,
    ShortProbes,
    LongProbes,
}

pub struct WebWorkload {
    pub spec: WebSpec,
    params: TcpParams,
    rng: RngStream,
    heap: BinaryHeap<Reverse<(Time, u64, Due)>>,
    seq: u64,
    items: u32,
}

impl WebWorkload {
    pub fn new(spec: &WebSpec, global: &TcpOptions, seed: u64) -> Self {
        let mut params = TcpParams::default();
        params.apply(global);
        params.apply(&spec.tcp);
        params.cc_seed = seed;
        params.handshake = true;
        let mut w = WebWorkload {
            spec: spec.clone(),
            params,
            rng: RngStream::new(
                seed,
                crate::engine::stream_id(&format!("workload:{}", spec.name)),
            ),
            heap: BinaryHeap::new(),
            seq: 0,
            items: 0,
        };
        for s in 0..spec.sessions {
            let t = spec.start.0 + w.exp(spec.inter_page.secs());
            w.push(t, Due::Page(s));
        }
        if spec.probes.is_some() {
            w.push(spec.start.0, Due::ShortProbes);
            w.push(spec.start.0, Due::LongProbes);
        }
        w
    }

    fn exp(&mut self, mean: f64) -> Time {
        secs(-(1.0 - self.rng.uniform()).ln() * mean)
    }

    fn push(&mut self, t: Time, d: Due) {
        self.heap.push(Reverse((t, self.seq, d)));
        self.seq += 1;
    }

    fn spawn(&mut self, bytes: u64, group: &str) -> Spawn {
        let item = self.items;
        self.items += 1;
        Spawn {
            src: self.spec.server.clone(),
            dst: self.spec.client.clone(),
            bytes,
            params: self.params.clone(),
            cc: self.spec.cc.clone(),
            group: format!("{}:{group}", self.spec.name),
            item,
            role: Role::Response,
        }
    }
}

impl super::Workload for WebWorkload {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn kind(&self) -> &'static str {
        "web"
    }

    fn first_arrival(&self) -> Option<Time> {
        self.heap.peek().map(|r| r.0 .0)
    }

    fn transfer_done(&mut self, _item: u32, _role: Role, _now: Time) -> Vec<Spawn> {
        Vec::new()
    }

    fn arrive(&mut self, now: Time) -> (Vec<Spawn>, Option<Time>) {
        let mut out = Vec::new();
        while let Some(&Reverse((t, _, d))) = self.heap.peek() {
            if t > now {
                break;
            }
            self.heap.pop();
            match d {
                Due::Page(s) => {
                    let span = (self.spec.objects_max - self.spec.objects_min + 1) as u64;
                    let n = self.spec.objects_min as u64 + self.rng.below(span);
                    let mut at = t;
                    for _ in 0..n {
                        self.push(at, Due::Object);
                        at += self.exp(self.spec.inter_object.secs());
                    }
                    let next = t + self.exp(self.spec.inter_page.secs());
                    self.push(next, Due::Page(s));
                }
                Due::Object => {
                    let s = &self.spec;
                    let x = bounded_pareto(self.rng.uniform(), s.size_min, s.size_max, s.shape);
                    let b = s.object_bytes(x, self.params.mss);
                    out.push(self.spawn(b, "object"));
                }
                Due::ShortProbes | Due::LongProbes => {
                    let p = self.spec.probes.clone().unwrap_or_default();
                    let (pkts, every, g) = if d == Due::ShortProbes {
                        (p.short_pkts, p.short_every.0, "short")
                    } else {
                        (p.long_pkts, p.long_every.0, "long")
                    };
                    let bytes = pkts as u64 * self.params.mss as u64;
                    for _ in 0..p.count {
                        out.push(self.spawn(bytes, g));
                    }
                    self.push(t + every, d);
                }
            }
        }
        (out, self.first_arrival())
    }
}

impl crate::registry::Registered for WebSpec {
    const KIND: &'static str = "web";
    const ABOUT: &'static str = "web sessions with Pareto objects and foreground probes (Guo & Matta 2001)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!(required = "\"web\"", "name", "", "unique among workloads", "", "name in outputs"),
        crate::registry::param!(required = "\"h1\"", "client", "", "a host", "", "host that requests pages"),
        crate::registry::param!(required = "\"h2\"", "server", "", "a host other than client", "", "host that serves them"),
        crate::registry::param!(required = "4", "sessions", "sessions", "≥ 1 unless probes are set", "", "concurrent web sessions"),
        crate::registry::param!("start", "time", "≥ 0", "", "when sessions start"),
        crate::registry::param!("inter_page", "time", "> 0", "\"0ms\"", "mean think time between pages"),
        crate::registry::param!("objects_min", "objects", "≥ 1", "0", "fewest objects per page"),
        crate::registry::param!("objects_max", "objects", "≥ objects_min", "", "most objects per page"),
        crate::registry::param!("inter_object", "time", "≥ 0", "", "mean gap between objects of a page"),
        crate::registry::param!("size_min", "size_unit", "> 0", "0.0", "Pareto scale of object sizes"),
        crate::registry::param!("size_max", "size_unit", "> size_min", "", "cap of object sizes"),
        crate::registry::param!("shape", "", "> 0", "0.0", "Pareto shape of object sizes"),
        crate::registry::param!("size_unit", "", "\"bytes\" or \"packets\"", "\"x\"", "unit of size_min and size_max"),
        crate::registry::param!("probes", "", "table { count, short_pkts, long_pkts, short_every, long_every }", "{ count = 0 }", "foreground probe transfers"),
        crate::registry::param!("cc", "", "a congestion control (see `aqmlab list`)", "\"cubicle\"", "congestion control of the transfers"),
        crate::registry::param!("tcp", "", "table of [tcp] keys", "", "TCP overrides"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        WebSpec::validate(self)
    }
}

impl super::registry::WorkloadKind for WebSpec {
    fn build(&self, tcp: &TcpOptions, seed: u64) -> Box<dyn super::Workload> {
        Box::new(WebWorkload::new(self, tcp, seed))
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
    fn expected_flows(&self, duration: u64) -> (u64, &'static str) {
        let after = duration.saturating_sub(self.start.0) as f64;
        let pages = after / self.inter_page.0.max(1) as f64 + 1.0;
        let objects = (self.objects_min as f64 + self.objects_max as f64) / 2.0;
        let mut n = self.sessions as f64 * pages * objects;
        if let Some(p) = &self.probes {
            for every in [p.short_every.0, p.long_every.0] {
                n += p.count as f64 * (after / every.max(1) as f64 + 1.0);
            }
        }
        let n = if n >= u64::MAX as f64 {
            u64::MAX
        } else {
            n.ceil() as u64
        };
        (n, "sessions")
    }
    fn largest_transfers(&self, mss: u32) -> Vec<(&'static str, u64)> {
        let mss = mss as u64;
        // size_max is bounded by WebSpec::validate, so this cannot wrap
        let top = self.size_max.ceil() as u64;
        let mut v = vec![(
            "size_max",
            match self.size_unit {
                SizeUnit::Bytes => top,
                SizeUnit::Packets => top * mss,
            },
        )];
        if let Some(p) = &self.probes {
            v.push(("probes.short_pkts", p.short_pkts as u64 * mss));
            v.push(("probes.long_pkts", p.long_pkts as u64 * mss));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::Workload;

    #[test]
    fn bounded_pareto_mean_and_bounds_match_closed_form() {
        let (lo, hi, a) = (4.0, 200_000.0, 1.2);
        let mut rng = RngStream::new(7, 7);
        let n = 1_000_000;
        let (mut sum, mut min, mut max) = (0.0, f64::MAX, 0.0f64);
        for _ in 0..n {
            let x = bounded_pareto(rng.uniform(), lo, hi, a);
            sum += x;
            min = min.min(x);
            max = max.max(x);
        }
        let mean = sum / n as f64;
        let m = bounded_pareto_mean(lo, hi, a);
        assert!((mean / m - 1.0).abs() < 0.02, "mean {mean} vs {m}");
        assert!(min >= lo && max <= hi);
        // the minimum approaches lo (P(X < 1.02·lo) ≈ 2.4% per sample);
        // the inverse CDF is exact at the median and at both ends
        assert!((min / lo - 1.0) < 0.02);
        let med = bounded_pareto(0.5, lo, hi, a);
        let f = (1.0 - (lo / med).powf(a)) / (1.0 - (lo / hi).powf(a));
        assert!((f - 0.5).abs() < 1e-12);
        assert_eq!(bounded_pareto(0.0, lo, hi, a), lo);
        assert!((bounded_pareto(1.0 - 1e-16, lo, hi, a) / hi - 1.0).abs() < 1e-6);
        // closed form: for these parameters the mean is about 21.2
        assert!((m - 21.2).abs() < 0.1, "{m}");
    }

    fn spec() -> WebSpec {
        WebSpec {
            name: "web".into(),
            client: "c".into(),
            server: "s".into(),
            sessions: 50,
            start: Dur(0),
            inter_page: d_inter_page(),
            objects_min: 2,
            objects_max: 7,
            inter_object: d_inter_object(),
            size_min: 4.0,
            size_max: 200_000.0,
            shape: 1.2,
            size_unit: SizeUnit::Packets,
            probes: None,
            cc: CcConfig::default(),
            tcp: TcpOptions::default(),
        }
    }

    #[test]
    fn object_rate_matches_session_model() {
        // 50 sessions × 4.5 objects / 9.5 s = 23.7 objects/s
        let mut w = WebWorkload::new(&spec(), &TcpOptions::default(), 3);
        let end = secs(2000.0);
        let mut n = 0usize;
        let mut t = w.first_arrival().unwrap();
        while t <= end {
            let (v, next) = w.arrive(t);
            n += v.len();
            assert!(v.iter().all(|s| s.params.handshake && s.src == "s"));
            t = next.unwrap();
        }
        let rate = n as f64 / 2000.0;
        let want = 50.0 * 4.5 / 9.5;
        assert!((rate / want - 1.0).abs() < 0.05, "{rate} vs {want}");
    }

    #[test]
    fn probes_every_25_and_125_seconds() {
        let mut s = spec();
        s.sessions = 0;
        s.probes = Some(ProbeSpec::default());
        let mut w = WebWorkload::new(&s, &TcpOptions::default(), 3);
        let mut t = w.first_arrival().unwrap();
        let (mut short, mut long) = (0, 0);
        while t <= secs(250.0) {
            let (v, next) = w.arrive(t);
            for sp in &v {
                if sp.group.ends_with(":short") {
                    short += 1;
                    assert_eq!(sp.bytes, 10 * 1000);
                } else {
                    long += 1;
                    assert_eq!(sp.bytes, 1000 * 1000);
                }
            }
            t = next.unwrap();
        }
        // t = 0, 25, …, 250 → 11 batches; 0, 125, 250 → 3 batches
        assert_eq!((short, long), (110, 30));
    }
}
