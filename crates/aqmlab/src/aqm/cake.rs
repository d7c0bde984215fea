//! CAKE — Common Applications Kept Enhanced.
//!
//! Sources: Linux `net/sched/sch_cake.c` (`cake_hash`, `cake_enqueue`,
//! `cake_dequeue`, `cake_advance_shaper`, `cake_drop`,
//! `cake_get_flow_quantum`, `cake_calc_overhead`, `cake_ack_filter`,
//! `cake_config_*`, `cake_set_rate`, `cake_select_tin`); T.
//! Høiland-Jørgensen, D. Täht, J. Morton, "Piece of CAKE: A Comprehensive
//! Queue Management Solution for Home Gateways", IEEE LANMAN 2018 (§III-A
//! flow isolation, §III-B DRR++, §III-C DiffServ, §III-D COBALT, §IV-B the
//! deficit-mode shaper).
//!
//! As modelled:
//! - **Shaper** (`bandwidth`; none: unlimited): deficit mode
//!   (`cake_advance_shaper`): each packet sent moves the next allowed time
//!   on by its overhead-compensated length at the rate, counted from the
//!   previous due time, not from now, so the long-run rate is exact and a
//!   late dequeue does not lose capacity; an idle queue's schedule is
//!   brought up to now on the next arrival (`cake_enqueue`). While the
//!   schedule is ahead of now, `dequeue` gives nothing and the port waits
//!   for it (`QueueDisc::wake_at`, Linux's qdisc watchdog). The rate is
//!   kept as sch_cake keeps it, nanoseconds per byte in fixed point.
//!   Shaped, each tin also gets its rate threshold (diffserv3: 1, 1/16,
//!   1/4 of the rate) and the tin served is the highest one still on its
//!   own schedule, else the one due first; a tin's flow quantum is
//!   `rate/4096` within 300..1514 B, and its COBALT target is at least 1.5
//!   MTU times at the tin's rate (`cake_set_rate`). The failsafe schedule
//!   (1.5 × the rate) only matters in ingress mode and is not modelled.
//! - **Tins** (`diffserv`): `besteffort` (1 tin), `diffserv3` (default: best
//!   effort, bulk, voice; tin quanta 1024/64/256), `diffserv4` (best effort,
//!   bulk, video, voice; 1024/64/512/256), `diffserv8` and `precedence`
//!   (8 tins, quanta and thresholds from 256 and the rate, each × 7/8),
//!   with sch_cake's DSCP → tin tables. A packet's DSCP is its flow's
//!   `dscp` (`Ext::Dscp`; 0 if none). Unshaped, the tins share by a DRR of
//!   their quanta (`cake_dequeue`'s unlimited mode).
//! - **Flow isolation** (`flow_mode`): 1024 queues per tin with the 8-way
//!   set-associative hash (`cake_hash`: direct hit, then a reserved way of
//!   the set, then a free way, else a collision); `flows` hashes the 5-tuple
//!   (flow, source, destination here), `srchost`/`dsthost`/`hosts` the
//!   addresses only, `dual-srchost`/`dual-dsthost`/`triple-isolate` hash
//!   flows and divide each flow's quantum by the number of bulk flows of its
//!   source and/or destination host (`cake_get_flow_quantum`, with its
//!   random dither). Hosts are node ids.
//! - **DRR++** (`cake_dequeue`): new (sparse), old (bulk) and decaying flow
//!   lists; a flow out of deficit moves to the bulk rotation; an emptied
//!   flow whose COBALT state has not decayed stays on the decaying list.
//! - **COBALT per queue** ([`super::cobalt`], Linux rules: ECN always on,
//!   no BLUE threshold); the last packet of a queue is never dropped.
//! - **Overflow**: over `memlimit` bytes (default `limit` × 1514 B) the head
//!   of the longest queue over all tins is dropped, and its BLUE probability
//!   raised (`cake_drop`; Linux keeps a heap, here a scan on overflow).
//! - **Overhead compensation** (`overhead`, `mpu`): each packet is charged
//!   `max(size + overhead, mpu)` bytes in the DRR deficits
//!   (`cake_calc_overhead`; packet sizes here are IP sizes, so there is no
//!   link-layer header to strip).
//! - **ACK filter** (`ack_filter`): on enqueue of a pure ACK, an older pure
//!   ACK of the same flow in its queue that it makes redundant is dropped
//!   (`cake_ack_filter`; `aggressive` also drops a lone eligible ACK right
//!   ahead of it).
//!
//! Not modelled: ingress mode, autorate, ATM/PTM framing, NAT lookups,
//! wash, fwmark and GSO splitting.
//!
//! Parameters (Linux `cake_init` defaults): `limit` = 10240 packets,
//! `memlimit` (bytes; default `limit` × 1514), `flow_mode` =
//! `"triple-isolate"`, `diffserv` = `"diffserv3"`, `target` = 5 ms, `rtt` =
//! 100 ms (COBALT's interval), `overhead` = 0, `mpu` = 0, `ack_filter` =
//! `false`, `bandwidth` = none (unlimited).

use super::cobalt::{CobaltParams, CobaltVars};
use super::{DropCause, Limit, QdCtx, QueueDisc};
use crate::net::packet::{flags, Packet};
use crate::engine::Time;
use crate::units::{Dur, Rate};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

const QUEUES: usize = 1024;
const WAYS: usize = 8;
/// Linux `psched_mtu` of an Ethernet device: MTU + link header.
const MTU: u64 = 1514;

/// Linux's `flow_mode` values (`CAKE_FLOW_*`): bit 0 source host, bit 1
/// destination host, bit 2 flows.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum FlowMode {
    #[serde(rename = "none")]
    Flowblind,
    Srchost,
    Dsthost,
    Hosts,
    Flows,
    DualSrchost,
    DualDsthost,
    #[default]
    TripleIsolate,
}

impl FlowMode {
    fn bits(self) -> u8 {
        self as u8
    }
    fn flows(self) -> bool {
        self.bits() & 4 != 0
    }
    /// `cake_dsrc`: per-source-host fairness.
    fn dsrc(self) -> bool {
        self.bits() & 5 == 5
    }
    /// `cake_ddst`: per-destination-host fairness.
    fn ddst(self) -> bool {
        self.bits() & 6 == 6
    }
}

/// The tin layouts (`cake_config_besteffort`, `_diffserv3`, `_diffserv4`,
/// `_diffserv8`, `_precedence`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Diffserv {
    Besteffort,
    #[default]
    Diffserv3,
    Diffserv4,
    Diffserv8,
    Precedence,
}

// sch_cake.c's DSCP → tin tables `diffserv3`, `diffserv4` and `diffserv8`,
// 64 entries each, indexed by the DSCP (`precedence` is DSCP >> 3 and
// `besteffort` all zeros, computed in `tin_of`).
const DIFFSERV3: [u8; 64] = [
    0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0,
    0, 0,
];
const DIFFSERV4: [u8; 64] = [
    0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2,
    0, 3, 0, 2, 0, 2, 0, 2, 0, 3, 0, 0, 0, 3, 0, 3, 0, 3, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0,
    0, 0,
];
const DIFFSERV8: [u8; 64] = [
    2, 0, 1, 2, 4, 2, 2, 2, 1, 2, 1, 2, 1, 2, 1, 2, 5, 2, 4, 2, 4, 2, 4, 2, 3, 2, 3, 2, 3, 2, 3,
    2, 6, 2, 3, 2, 3, 2, 3, 2, 6, 2, 2, 2, 6, 2, 6, 2, 7, 2, 2, 2, 2, 2, 2, 2, 7, 2, 2, 2, 2, 2,
    2, 2,
];

impl Diffserv {
    /// Each tin's rate threshold (bytes/s; 0 unlimited) and DRR quantum
    /// for the shaper rate `rate`, as `cake_config_*` set them: diffserv3
    /// rate, rate/16, rate/4 with quanta 1024, 64, 256; diffserv4 rate,
    /// rate/16, rate/2, rate/4 with 1024, 64, 512, 256; diffserv8 and
    /// precedence eight tins from (rate, 256), each the previous × 7/8.
    pub fn layout(self, rate: u64) -> Vec<(u64, u16)> {
        match self {
            Diffserv::Besteffort => vec![(rate, 65535)],
            Diffserv::Diffserv3 => vec![(rate, 1024), (rate >> 4, 64), (rate >> 2, 256)],
            Diffserv::Diffserv4 => vec![
                (rate, 1024),
                (rate >> 4, 64),
                (rate >> 1, 512),
                (rate >> 2, 256),
            ],
            Diffserv::Diffserv8 | Diffserv::Precedence => {
                let (mut r, mut q) = (rate, 256u32);
                (0..8)
                    .map(|_| {
                        let t = (r, q.max(1) as u16);
                        r = (r * 7) >> 3;
                        q = (q * 7) >> 3;
                        t
                    })
                    .collect()
            }
        }
    }
    /// The tin of a DSCP (`cake_select_tin` through the mode's table).
    pub fn tin_of(self, dscp: u8) -> usize {
        let d = (dscp & 63) as usize;
        match self {
            Diffserv::Besteffort => 0,
            Diffserv::Diffserv3 => DIFFSERV3[d] as usize,
            Diffserv::Diffserv4 => DIFFSERV4[d] as usize,
            Diffserv::Diffserv8 => DIFFSERV8[d] as usize,
            Diffserv::Precedence => d >> 3,
        }
    }
}

/// `ack_filter`: `false`, `true` or `"aggressive"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AckFilter {
    #[default]
    Off,
    On,
    Aggressive,
}

impl Serialize for AckFilter {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            AckFilter::Off => s.serialize_bool(false),
            AckFilter::On => s.serialize_bool(true),
            AckFilter::Aggressive => s.serialize_str("aggressive"),
        }
    }
}

impl<'de> Deserialize<'de> for AckFilter {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match toml::Value::deserialize(d)? {
            toml::Value::Boolean(false) => Ok(AckFilter::Off),
            toml::Value::Boolean(true) => Ok(AckFilter::On),
            toml::Value::String(s) if s == "aggressive" => Ok(AckFilter::Aggressive),
            v => Err(serde::de::Error::custom(format!(
                "invalid ack_filter {v}: expected false, true or \"aggressive\""
            ))),
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CakeConfig {
    #[serde(default = "d_limit")]
    pub limit: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memlimit: Option<Limit>,
    #[serde(default)]
    pub flow_mode: FlowMode,
    #[serde(default)]
    pub diffserv: Diffserv,
    #[serde(default = "super::codel::d_target")]
    pub target: Dur,
    #[serde(default = "super::codel::d_interval")]
    pub rtt: Dur,
    #[serde(default)]
    pub overhead: i32,
    #[serde(default)]
    pub mpu: u32,
    #[serde(default)]
    pub ack_filter: AckFilter,
    /// The shaper's rate (tc-cake `bandwidth`); none: unlimited.
    #[serde(
        default,
        deserialize_with = "shaper_rate",
        skip_serializing_if = "Option::is_none"
    )]
    pub bandwidth: Option<Rate>,
}

/// `bandwidth` as a rate, a zero rate read as 0 so that
/// [`CakeConfig::validate`] names CAKE's minimum (512 bit/s) rather than
/// a rate's (1 bit/s).
fn shaper_rate<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Rate>, D::Error> {
    use serde::de::Error;
    match toml::Value::deserialize(d)? {
        toml::Value::String(s) => crate::units::parse_rate_or_zero(&s)
            .map(|r| Some(Rate(r)))
            .map_err(|m| D::Error::custom(format!("invalid rate `{s}`: {m}"))),
        v => Rate::deserialize(v)
            .map(Some)
            .map_err(|e| D::Error::custom(e.message())),
    }
}

fn d_limit() -> u32 {
    10240
}

impl CakeConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        if self.limit == 0 {
            return Err(("limit".into(), "must be a positive packet count".into()));
        }
        match self.memlimit {
            Some(Limit::Packets(_)) => {
                return Err((
                    "memlimit".into(),
                    "must be a size in bytes, e.g. \"4MiB\"".into(),
                ))
            }
            Some(l) => l.validate().map_err(|m| ("memlimit".to_string(), m))?,
            None => {}
        }
        if self.target.0 == 0 {
            return Err(("target".into(), "must be positive".into()));
        }
        if self.rtt.0 == 0 {
            return Err(("rtt".into(), "must be positive".into()));
        }
        if !(-64..=256).contains(&self.overhead) {
            return Err((
                "overhead".into(),
                format!("must be in -64..=256 bytes (tc-cake), got {}", self.overhead),
            ));
        }
        if let Some(r) = self.bandwidth {
            if r.0 < 8 * MIN_RATE {
                return Err((
                    "bandwidth".into(),
                    format!(
                        "must be at least {} bit/s (sch_cake's MIN_RATE, 64 B/s), got {} bit/s",
                        8 * MIN_RATE,
                        r.0
                    ),
                ));
            }
        }
        if self.mpu > 256 {
            return Err((
                "mpu".into(),
                format!("must be in 0..=256 bytes (tc-cake), got {}", self.mpu),
            ));
        }
        Ok(())
    }

    /// The shaper's rate in bytes per second (Linux `rate_bps`); 0:
    /// unlimited.
    fn rate_bytes(&self) -> u64 {
        self.bandwidth.map_or(0, |r| r.0 / 8)
    }

    /// Linux `cake_reconfigure`: `memlimit` if set; else, shaped, four
    /// `rtt`s at the rate but at least 4 MiB; and never above `limit` ×
    /// MTU unless `memlimit` says so.
    fn buffer_limit(&self) -> u64 {
        match self.memlimit {
            Some(Limit::Bytes(b)) => b,
            _ => {
                let rate = self.rate_bytes();
                let all = self.limit as u64 * MTU;
                if rate == 0 {
                    all
                } else {
                    // rate_bps · interval(µs) / (10⁶ / 4)
                    let t = (rate as u128 * (self.rtt.0 / 1000) as u128 / 250_000) as u64;
                    t.max(4 << 20).min(all)
                }
            }
        }
    }
}

/// sch_cake's `MIN_RATE`, bytes per second.
const MIN_RATE: u64 = 64;

/// A tin's rate as `cake_set_rate` stores it: nanoseconds per byte in fixed
/// point (`rate_ns` / 2^`rate_shft`, at most 34 bits of mantissa), so a
/// packet of `len` bytes lasts `(len · rate_ns) >> rate_shft` ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShaperRate {
    pub rate_ns: u64,
    pub rate_shft: u32,
}

impl ShaperRate {
    /// `cake_set_rate`'s conversion of `rate` bytes/s (0: unlimited).
    pub fn new(rate: u64) -> Self {
        if rate == 0 {
            return ShaperRate::default();
        }
        let mut shft = 34u32;
        let mut ns = ((1_000_000_000u128 << shft) / rate.max(MIN_RATE) as u128) as u64;
        while ns >> 34 != 0 {
            ns >>= 1;
            shft -= 1;
        }
        ShaperRate {
            rate_ns: ns,
            rate_shft: shft,
        }
    }
    /// How long `len` bytes last at this rate, ns.
    #[inline]
    pub fn dur(self, len: u64) -> Time {
        ((len as u128 * self.rate_ns as u128) >> self.rate_shft) as Time
    }
}

/// `cake_set_rate`: a tin's DRR flow quantum, its shaper rate and its
/// COBALT parameters at tin rate `rate` (bytes/s, 0 unlimited): an MTU's
/// serialisation time at that rate (`mtu_time`) raises the target to at
/// least 1.5 of it and the interval with it.
fn set_rate(c: &CakeConfig, rate: u64) -> (u32, ShaperRate, CobaltParams) {
    let flow_quantum = if rate == 0 {
        1514
    } else {
        (rate >> 12).clamp(300, 1514) as u32
    };
    let sr = ShaperRate::new(rate);
    let byte_target_ns = sr.dur(MTU);
    let target = (byte_target_ns * 3 / 2).max(c.target.0);
    let cp = CobaltParams {
        target,
        interval: (c.rtt.0 + target - c.target.0).max(2 * target),
        mtu_time: byte_target_ns,
        p_inc: 1.0 / 256.0,
        p_dec: 1.0 / 4096.0,
        blue_threshold: None,
        ecn: true,
        ce: None,
        use_l4s: false,
    };
    (flow_quantum, sr, cp)
}

/// Linux `CAKE_SET_*`: which rotation a queue is counted in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Set {
    #[default]
    None,
    Sparse,
    SparseWait,
    Bulk,
    Decaying,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum List {
    #[default]
    None,
    New,
    Old,
    Decaying,
}

#[derive(Default)]
struct Flow {
    q: VecDeque<Packet>,
    bytes: u64,
    deficit: i32,
    cvars: CobaltVars,
    srchost: u16,
    dsthost: u16,
    set: Set,
    list: List,
}

#[derive(Clone, Copy, Default)]
struct Host {
    src_tag: u32,
    dst_tag: u32,
    src_bulk: u16,
    dst_bulk: u16,
}

struct Tin {
    /// COBALT's parameters at this tin's rate (`cake_set_rate`).
    cparams: CobaltParams,
    /// The tin's shaper (its rate threshold) and when it next allows a
    /// packet on schedule (Linux `tin_rate_ns`, `time_next_packet`).
    rate: ShaperRate,
    time_next: Time,
    flows: Vec<Flow>,
    tags: Vec<u32>,
    hosts: Vec<Host>,
    flow_quantum: u32,
    bulk: u16,
    sparse: u16,
    decaying: u16,
    new_flows: VecDeque<u16>,
    old_flows: VecDeque<u16>,
    decaying_flows: VecDeque<u16>,
    tin_quantum: i32,
    tin_deficit: i32,
    pkts: usize,
    way_hits: u64,
    way_misses: u64,
    way_collisions: u64,
}

impl Tin {
    fn new(c: &CakeConfig, rate: u64, quantum: u16) -> Self {
        let (flow_quantum, sr, cparams) = set_rate(c, rate);
        Tin {
            cparams,
            rate: sr,
            time_next: 0,
            flows: (0..QUEUES).map(|_| Flow::default()).collect(),
            tags: vec![0; QUEUES],
            hosts: vec![Host::default(); QUEUES],
            flow_quantum,
            bulk: 0,
            sparse: 0,
            decaying: 0,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            decaying_flows: VecDeque::new(),
            tin_quantum: quantum as i32,
            tin_deficit: 0,
            pkts: 0,
            way_hits: 0,
            way_misses: 0,
            way_collisions: 0,
        }
    }

    fn list(&mut self, l: List) -> &mut VecDeque<u16> {
        match l {
            List::New => &mut self.new_flows,
            List::Old => &mut self.old_flows,
            List::Decaying | List::None => &mut self.decaying_flows,
        }
    }

    /// `list_move_tail`: take flow `idx` off its list (wherever it is) and
    /// append it to `to` (or to none).
    fn move_to(&mut self, idx: u16, to: List) {
        let from = self.flows[idx as usize].list;
        if from != List::None {
            let l = self.list(from);
            if l.front() == Some(&idx) {
                l.pop_front();
            } else if let Some(pos) = l.iter().position(|&x| x == idx) {
                l.remove(pos);
            }
        }
        if to != List::None {
            self.list(to).push_back(idx);
        }
        self.flows[idx as usize].list = to;
    }

    fn inc_bulk(&mut self, idx: usize, mode: FlowMode) {
        let (s, d) = (self.flows[idx].srchost as usize, self.flows[idx].dsthost as usize);
        if mode.dsrc() && (self.hosts[s].src_bulk as usize) < QUEUES {
            self.hosts[s].src_bulk += 1;
        }
        if mode.ddst() && (self.hosts[d].dst_bulk as usize) < QUEUES {
            self.hosts[d].dst_bulk += 1;
        }
    }

    fn dec_bulk(&mut self, idx: usize, mode: FlowMode) {
        let (s, d) = (self.flows[idx].srchost as usize, self.flows[idx].dsthost as usize);
        if mode.dsrc() && self.hosts[s].src_bulk > 0 {
            self.hosts[s].src_bulk -= 1;
        }
        if mode.ddst() && self.hosts[d].dst_bulk > 0 {
            self.hosts[d].dst_bulk -= 1;
        }
    }

    /// `cake_get_flow_quantum`: the flow quantum divided by the bulk-flow
    /// count of its host(s), dithered by a random 16-bit value.
    fn flow_quantum(&self, idx: usize, mode: FlowMode, dither: u32) -> i32 {
        let f = &self.flows[idx];
        let mut load = 1u32;
        if mode.dsrc() {
            load = load.max(self.hosts[f.srchost as usize].src_bulk as u32);
        }
        if mode.ddst() {
            load = load.max(self.hosts[f.dsthost as usize].dst_bulk as u32);
        }
        let div = 65535 / load;
        ((self.flow_quantum * div + dither) >> 16) as i32
    }
}

/// A 32-bit hash of `parts` and the port's perturbation (Linux hashes the
/// dissected keys with a random `jhash` seed).
fn hash32(parts: &[u64], perturb: u64) -> u32 {
    let mut z = perturb;
    for &p in parts {
        z ^= p;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
    }
    (z >> 32) as u32
}

pub struct Cake {
    mode: FlowMode,
    diffserv: Diffserv,
    /// The global shaper (tin 0's rate: the `bandwidth`; unlimited when
    /// `rate_ns` is 0) and when it next allows a packet (Linux
    /// `time_next_packet`).
    rate: ShaperRate,
    rate_bps: u64,
    time_next: Time,
    /// Set when `dequeue` gave nothing because of the shaper: the time it
    /// waits for ([`QueueDisc::wake_at`]).
    held_until: Option<Time>,
    /// Bytes charged to the shaper (overhead-compensated lengths), and the
    /// dequeues it refused (Linux `overlimits`).
    shaped_bytes: u64,
    overlimits: u64,
    overhead: i32,
    mpu: u32,
    ack_filter: AckFilter,
    buffer_limit: u64,
    tins: Vec<Tin>,
    cur_tin: usize,
    perturb: u64,
    pkts: usize,
    bytes: u64,
    ack_drops: u64,
}

impl Cake {
    pub fn new(c: &CakeConfig, perturb: u64) -> Self {
        Cake {
            mode: c.flow_mode,
            diffserv: c.diffserv,
            rate: ShaperRate::new(c.rate_bytes()),
            rate_bps: c.bandwidth.map_or(0, |r| r.0),
            time_next: 0,
            held_until: None,
            shaped_bytes: 0,
            overlimits: 0,
            overhead: c.overhead,
            mpu: c.mpu,
            ack_filter: c.ack_filter,
            buffer_limit: c.buffer_limit(),
            tins: c
                .diffserv
                .layout(c.rate_bytes())
                .into_iter()
                .map(|(r, q)| Tin::new(c, r, q))
                .collect(),
            cur_tin: 0,
            perturb,
            pkts: 0,
            bytes: 0,
            ack_drops: 0,
        }
    }

    /// `cake_hash`: the queue of `p` in tin `t`, with the set-associative
    /// lookup and the host bookkeeping of the dual/triple modes.
    fn hash(&mut self, t: usize, p: &Packet) -> usize {
        let mode = self.mode;
        if mode == FlowMode::Flowblind {
            return 0;
        }
        let srch = hash32(&[1, p.src.0 as u64], self.perturb);
        let dsth = hash32(&[2, p.dst.0 as u64], self.perturb);
        let mut flow_hash = 0u32;
        if mode.flows() {
            flow_hash = hash32(&[3, p.flow.0 as u64, p.src.0 as u64, p.dst.0 as u64], self.perturb);
        } else {
            if mode.bits() & 1 != 0 {
                flow_hash ^= srch;
            }
            if mode.bits() & 2 != 0 {
                flow_hash ^= dsth;
            }
        }
        let b = &mut self.tins[t];
        let mut reduced = flow_hash as usize % QUEUES;
        if b.tags[reduced] == flow_hash && b.flows[reduced].set != Set::None {
            return reduced;
        }
        let inner = reduced % WAYS;
        let outer = reduced - inner;
        let (mut alloc_src, mut alloc_dst) = (false, false);
        let mut k = inner;
        let mut found = None;
        for i in 0..WAYS {
            if b.tags[outer + k] == flow_hash {
                if i > 0 {
                    b.way_hits += 1;
                }
                if b.flows[outer + k].set == Set::None {
                    alloc_src = mode.dsrc();
                    alloc_dst = mode.ddst();
                }
                found = Some(k);
                break;
            }
            k = (k + 1) % WAYS;
        }
        if found.is_none() {
            for _ in 0..WAYS {
                if b.flows[outer + k].set == Set::None {
                    b.way_misses += 1;
                    found = Some(k);
                    break;
                }
                k = (k + 1) % WAYS;
            }
            if found.is_none() {
                b.way_collisions += 1;
                if b.flows[outer + k].set == Set::Bulk {
                    b.dec_bulk(outer + k, mode);
                }
            }
            alloc_src = mode.dsrc();
            alloc_dst = mode.ddst();
        }
        reduced = outer + k;
        b.tags[reduced] = flow_hash;
        if alloc_src {
            let h = host_slot(&b.hosts, srch, |h| h.src_tag, |h| h.src_bulk);
            b.hosts[h].src_tag = srch;
            b.flows[reduced].srchost = h as u16;
            if b.flows[reduced].set == Set::Bulk
                && mode.dsrc()
                && (b.hosts[h].src_bulk as usize) < QUEUES
            {
                b.hosts[h].src_bulk += 1;
            }
        }
        if alloc_dst {
            let h = host_slot(&b.hosts, dsth, |h| h.dst_tag, |h| h.dst_bulk);
            b.hosts[h].dst_tag = dsth;
            b.flows[reduced].dsthost = h as u16;
            if b.flows[reduced].set == Set::Bulk
                && mode.ddst()
                && (b.hosts[h].dst_bulk as usize) < QUEUES
            {
                b.hosts[h].dst_bulk += 1;
            }
        }
        reduced
    }

    /// `cake_drop`: drop the head of the longest queue over all tins.
    fn drop_fattest(&mut self, ctx: &mut QdCtx) {
        let mut best = (0usize, 0usize, 0u64);
        for (t, b) in self.tins.iter().enumerate() {
            for (i, f) in b.flows.iter().enumerate() {
                if f.bytes > best.2 {
                    best = (t, i, f.bytes);
                }
            }
        }
        let (t, i, _) = best;
        let b = &mut self.tins[t];
        let p = b.cparams;
        let Some(pkt) = b.flows[i].q.pop_front() else {
            return;
        };
        b.flows[i].bytes -= pkt.size as u64;
        b.flows[i].cvars.queue_full(&p, ctx.now);
        b.pkts -= 1;
        self.pkts -= 1;
        self.bytes -= pkt.size as u64;
        ctx.drop_packet(pkt, DropCause::Overflow);
    }

    /// `cake_ack_filter`: with the pure ACK `trig` just queued at the tail
    /// of flow queue `q`, the index of an older ACK it makes redundant.
    fn ack_to_filter(&self, q: &VecDeque<Packet>) -> Option<usize> {
        let aggressive = self.ack_filter == AckFilter::Aggressive;
        let trig = q.back()?;
        if q.len() < 2 || trig.flags & (flags::ACK | flags::SYN) != flags::ACK {
            return None;
        }
        let ecn_bits = |p: &Packet| p.flags & (flags::ECE | flags::CWR);
        let (mut elig, mut elig_flags, mut found) = (None, 0u8, 0);
        let n = q.len() - 1;
        for (i, c) in q.iter().take(n).enumerate() {
            if c.flow != trig.flow || c.src != trig.src || c.dst != trig.dst {
                continue;
            }
            if elig.is_some() && ecn_bits(c) != elig_flags {
                elig = None;
                found -= 1;
            }
            // a pure ACK (no SYN/FIN, no data), not acking beyond the
            // trigger, with a timestamp echo not newer than the trigger's
            let pure = c.flags & !(flags::ECE | flags::CWR) == flags::ACK && c.payload == 0;
            let ts_ok = match (c.ts_ecr.get(), trig.ts_ecr.get()) {
                (Some(a), Some(b)) => a <= b,
                (None, _) => true,
                (Some(_), None) => false,
            };
            if !pure || !ts_ok || (c.ack.wrapping_sub(trig.ack) as i32) > 0 {
                continue;
            }
            let sack = sack_compare(c, trig);
            if sack < 0 || (c.ack == trig.ack && sack == 0) {
                continue;
            }
            if elig.is_none() {
                elig = Some(i);
                elig_flags = ecn_bits(c);
            }
            found += 1;
            if found > 1 {
                return elig;
            }
        }
        match elig {
            Some(i) if aggressive && i + 1 == n && elig_flags == ecn_bits(trig) => Some(i),
            _ => None,
        }
    }
}

/// `cake_tcph_sack_compare`: −1 if `a` SACKs something `b` does not (or `b`
/// none while `a` has some), 1 if `b` SACKs more bytes, 0 if the same.
fn sack_compare(a: &Packet, b: &Packet) -> i32 {
    let (sa, sb) = (a.sack_blocks(), b.sack_blocks());
    match (sa.is_empty(), sb.is_empty()) {
        (false, true) => return -1,
        (true, false) => return 1,
        (true, true) => return 0,
        _ => {}
    }
    let bytes = |s: &[(u32, u32)]| s.iter().map(|&(l, r)| r.wrapping_sub(l) as u64).sum::<u64>();
    for &(l, r) in sa {
        if (l.wrapping_sub(a.ack) as i32) < 0 {
            return -1; // a D-SACK: never dropped
        }
        if !sb.iter().any(|&(bl, br)| (bl.wrapping_sub(l) as i32) <= 0 && (br.wrapping_sub(r) as i32) >= 0) {
            return -1;
        }
    }
    if bytes(sb) > bytes(sa) {
        1
    } else {
        0
    }
}

/// A host slot for `tag` in its 8-way set: the way holding it, else a way
/// with no bulk flows, else the last way tried (Linux's `found_src`/`dst`).
fn host_slot(
    hosts: &[Host],
    tag: u32,
    tag_of: impl Fn(&Host) -> u32,
    bulk_of: impl Fn(&Host) -> u16,
) -> usize {
    let idx = tag as usize % QUEUES;
    let inner = idx % WAYS;
    let outer = idx - inner;
    let mut k = inner;
    for _ in 0..WAYS {
        if tag_of(&hosts[outer + k]) == tag {
            return outer + k;
        }
        k = (k + 1) % WAYS;
    }
    for _ in 0..WAYS {
        if bulk_of(&hosts[outer + k]) == 0 {
            break;
        }
        k = (k + 1) % WAYS;
    }
    outer + k
}

impl QueueDisc for Cake {
    fn kind(&self) -> &'static str {
        "cake"
    }

    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdCtx) -> Result<(), DropCause> {
        // cake_select_tin: the packet's DSCP through the mode's table
        let t = self.diffserv.tin_of(pkt.ext.dscp());
        // ensure the shaper state is not stale (`cake_enqueue`): an idle
        // tin's or queue's schedule does not lag behind now
        let now = ctx.now;
        if self.tins[t].pkts == 0 && self.tins[t].time_next < now {
            self.tins[t].time_next = now;
        }
        if self.pkts == 0 && self.time_next < now {
            self.time_next = now;
        }
        let idx = self.hash(t, &pkt);
        let size = pkt.size as u64;
        let filter = self.ack_filter != AckFilter::Off && !pkt.is_data();
        let mode = self.mode;
        {
            let f = &mut self.tins[t].flows[idx];
            f.q.push_back(pkt);
            f.bytes += size;
        }
        self.tins[t].pkts += 1;
        self.pkts += 1;
        self.bytes += size;
        if filter {
            if let Some(i) = self.ack_to_filter(&self.tins[t].flows[idx].q) {
                let f = &mut self.tins[t].flows[idx];
                let ack = f.q.remove(i).expect("index in queue");
                f.bytes -= ack.size as u64;
                self.tins[t].pkts -= 1;
                self.pkts -= 1;
                self.bytes -= ack.size as u64;
                self.ack_drops += 1;
                ctx.drop_packet(ack, DropCause::Aqm);
            }
        }
        let b = &mut self.tins[t];
        match b.flows[idx].set {
            Set::None | Set::Decaying => {
                if b.flows[idx].set == Set::Decaying {
                    b.decaying -= 1;
                }
                b.move_to(idx as u16, List::New);
                b.flows[idx].set = Set::Sparse;
                b.sparse += 1;
                let dither = ctx.rng.below(1 << 16) as u32;
                b.flows[idx].deficit = b.flow_quantum(idx, mode, dither);
            }
            Set::SparseWait => {
                b.flows[idx].set = Set::Bulk;
                b.sparse -= 1;
                b.bulk += 1;
                b.inc_bulk(idx, mode);
            }
            _ => {}
        }
        while self.bytes > self.buffer_limit {
            self.drop_fattest(ctx);
        }
        Ok(())
    }

    /// The link went down: every queued packet leaves, the shaper's
    /// schedule holding none back.
    fn drain(&mut self, ctx: &mut QdCtx, out: &mut Vec<Packet>) {
        while self.pkts > 0 {
            self.time_next = self.time_next.min(ctx.now);
            match self.dequeue(ctx) {
                Some(p) => out.push(p),
                None => break,
            }
        }
    }

    fn dequeue(&mut self, ctx: &mut QdCtx) -> Option<Packet> {
        let now = ctx.now;
        let mode = self.mode;
        self.held_until = None;
        // Linux: `first_flow` is not reset by `goto begin`, so decaying
        // flows are served first once per dequeue
        let mut first_flow = true;
        'begin: loop {
            if self.pkts == 0 {
                return None;
            }
            let shaped = self.rate.rate_ns != 0;
            // the global hard shaper: nothing before its time
            if shaped && self.time_next > now {
                self.overlimits += 1;
                self.held_until = Some(self.time_next);
                return None;
            }
            let n = self.tins.len();
            if shaped {
                // shaped mode: the highest tin on schedule, else the one
                // due first (`cake_dequeue`: a later tin wins ties)
                let mut best: Option<(usize, i128)> = None;
                for (i, b) in self.tins.iter().enumerate() {
                    if b.sparse + b.bulk > 0 {
                        let to_pkt = b.time_next as i128 - now as i128;
                        if to_pkt <= 0 || best.is_none_or(|(_, t)| to_pkt <= t) {
                            best = Some((i, to_pkt));
                        }
                    }
                }
                self.cur_tin = best?.0;
            } else {
                // tin DRR (cake_dequeue's unlimited mode)
                let (mut wrapped, mut empty) = (false, true);
                loop {
                    let b = &mut self.tins[self.cur_tin];
                    let active = b.sparse + b.bulk > 0;
                    if b.tin_deficit >= 0 && active {
                        break;
                    }
                    if b.tin_deficit <= 0 {
                        b.tin_deficit += b.tin_quantum;
                    }
                    if active {
                        empty = false;
                    }
                    self.cur_tin += 1;
                    if self.cur_tin >= n {
                        self.cur_tin = 0;
                        if wrapped {
                            if empty {
                                return None;
                            }
                        } else {
                            wrapped = true;
                        }
                    }
                }
            }
            let t = self.cur_tin;
            'retry: loop {
                let b = &mut self.tins[t];
                let p = b.cparams;
                let list = if first_flow && !b.decaying_flows.is_empty() {
                    List::Decaying
                } else if !b.new_flows.is_empty() {
                    List::New
                } else if !b.old_flows.is_empty() {
                    List::Old
                } else if !b.decaying_flows.is_empty() {
                    List::Decaying
                } else {
                    continue 'begin;
                };
                let idx = *b.list(list).front().expect("nonempty list") as usize;
                first_flow = false;
                if b.flows[idx].deficit <= 0 {
                    if b.flows[idx].set == Set::Sparse {
                        if !b.flows[idx].q.is_empty() {
                            b.sparse -= 1;
                            b.bulk += 1;
                            b.flows[idx].set = Set::Bulk;
                            b.inc_bulk(idx, mode);
                        } else {
                            b.flows[idx].set = Set::SparseWait;
                        }
                    }
                    let dither = ctx.rng.below(1 << 16) as u32;
                    let q = b.flow_quantum(idx, mode, dither);
                    b.flows[idx].deficit += q;
                    b.move_to(idx as u16, List::Old);
                    continue 'retry;
                }
                loop {
                    let f = &mut b.flows[idx];
                    let Some(mut pkt) = f.q.pop_front() else {
                        f.cvars.queue_empty(&p, now);
                        let v = f.cvars;
                        if v.p_drop > 0.0 || v.count > 0 || now < v.drop_next {
                            match f.set {
                                Set::Bulk => {
                                    b.bulk -= 1;
                                    b.dec_bulk(idx, mode);
                                    b.decaying += 1;
                                }
                                Set::Sparse | Set::SparseWait => {
                                    b.sparse -= 1;
                                    b.decaying += 1;
                                }
                                _ => {}
                            }
                            b.flows[idx].set = Set::Decaying;
                            b.move_to(idx as u16, List::Decaying);
                        } else {
                            match f.set {
                                Set::Sparse | Set::SparseWait => b.sparse -= 1,
                                Set::Bulk => {
                                    b.bulk -= 1;
                                    b.dec_bulk(idx, mode);
                                }
                                _ => b.decaying -= 1,
                            }
                            b.flows[idx].set = Set::None;
                            b.move_to(idx as u16, List::None);
                        }
                        continue 'begin;
                    };
                    f.bytes -= pkt.size as u64;
                    b.pkts -= 1;
                    self.pkts -= 1;
                    self.bytes -= pkt.size as u64;
                    let (ecn, marks) = (pkt.ecn, ctx.marked);
                    let drop = f.cvars.should_drop(&p, &mut pkt, 0, ctx);
                    // the last packet of a queue is not dropped
                    if !drop || f.q.is_empty() {
                        // cake_calc_overhead, without ATM/PTM framing
                        let len = (pkt.size as i32 + self.overhead).max(self.mpu as i32);
                        f.deficit -= len;
                        b.tin_deficit -= len;
                        if shaped {
                            // cake_advance_shaper: charge the tin's and the
                            // global schedule (deficit mode: from the
                            // previous due time, not from now)
                            let len = len.max(0) as u64;
                            let tin_dur = b.rate.dur(len);
                            if b.time_next < now {
                                b.time_next += tin_dur;
                            } else if b.time_next < now + tin_dur {
                                b.time_next = now + tin_dur;
                            }
                            self.time_next += self.rate.dur(len);
                            self.shaped_bytes += len;
                        }
                        return Some(pkt);
                    }
                    // marked by CoDel, then dropped by BLUE: a drop, not a mark
                    pkt.ecn = ecn;
                    ctx.marked = marks;
                    ctx.drop_packet(pkt, DropCause::Aqm);
                }
            }
        }
    }

    fn len_pkts(&self) -> usize {
        self.pkts
    }
    fn len_bytes(&self) -> u64 {
        self.bytes
    }
    fn stats(&self) -> Vec<(&'static str, f64)> {
        let sum = |f: fn(&Tin) -> u64| self.tins.iter().map(f).sum::<u64>() as f64;
        let mut v = vec![
            ("ack_drops", self.ack_drops as f64),
            ("way_indirect_hits", sum(|b| b.way_hits)),
            ("way_misses", sum(|b| b.way_misses)),
            ("way_collisions", sum(|b| b.way_collisions)),
        ];
        if self.rate.rate_ns != 0 {
            v.extend([
                ("shaper_rate_bps", self.rate_bps as f64),
                ("shaper_bytes", self.shaped_bytes as f64),
                ("shaper_overlimits", self.overlimits as f64),
            ]);
        }
        v
    }
    fn wake_at(&self) -> Option<Time> {
        self.held_until
    }
}

impl super::registry::Registered for CakeConfig {
    const KIND: &'static str = "cake";
    const ABOUT: &'static str =
        "CAKE: deficit-mode shaper, DiffServ tins, set-associative flow/host isolation, DRR++, COBALT (Linux sch_cake.c; Piece of CAKE, LANMAN 2018)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("limit", "packets", "≥ 1", "0", "buffer size in packets (× 1514 B unless memlimit)"),
        crate::registry::param!("memlimit", "bytes", "> 0, a size with a unit", "\"0B\"", "buffer size in bytes (Linux memlimit)"),
        crate::registry::param!("flow_mode", "", "\"none\", \"srchost\", \"dsthost\", \"hosts\", \"flows\", \"dual-srchost\", \"dual-dsthost\", \"triple-isolate\"", "\"host\"", "flow isolation"),
        crate::registry::param!("diffserv", "", "\"besteffort\", \"diffserv3\", \"diffserv4\", \"diffserv8\", \"precedence\"", "\"diffserv5\"", "tin layout: a packet's tin is its flow's dscp through sch_cake's table"),
        crate::registry::param!("bandwidth", "bit/s", "≥ 512 bit/s, or absent (unlimited)", "\"100bps\"", "the deficit-mode shaper's rate (overhead-compensated lengths)"),
        crate::registry::param!("target", "time", "> 0", "\"0ms\"", "COBALT target"),
        crate::registry::param!("rtt", "time", "> 0", "\"0ms\"", "COBALT interval (at least 2 × target)"),
        crate::registry::param!("overhead", "bytes", "-64 to 256", "300", "per-packet overhead added in the DRR and shaper accounting"),
        crate::registry::param!("mpu", "bytes", "0 to 256", "1000", "minimum packet size charged"),
        crate::registry::param!("ack_filter", "", "false, true, \"aggressive\"", "\"maybe\"", "drop pure ACKs made redundant by a newer one"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        CakeConfig::validate(self)
    }
}

impl super::registry::QueueKind for CakeConfig {
    fn build(&self, port: &mut super::PortCtx) -> Box<dyn QueueDisc> {
        use rand::RngCore;
        Box::new(Cake::new(self, port.rng.next_u64()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStream;
    use crate::net::packet::{FlowId, NodeId};

    fn cake(extra: &str) -> Cake {
        let c: CakeConfig = toml::from_str(extra).unwrap();
        c.validate().unwrap();
        Cake::new(&c, 12345)
    }

    fn ack(uid: u64, ack: u32) -> Packet {
        Packet {
            uid,
            flow: FlowId(1),
            src: NodeId(2),
            dst: NodeId(1),
            size: 40,
            flags: flags::ACK,
            ack,
            ..Default::default()
        }
    }

    /// 100 flows into 1024 queues: a direct-mapped hash would put about
    /// five pairs together; the 8-way sets give every flow its own queue,
    /// so the first round serves 100 distinct flows.
    #[test]
    fn set_associative_hash_isolates_flows() {
        let mut q = cake("flow_mode = \"flows\"");
        let (mut rng, mut dropped) = (RngStream::new(0, 0), Vec::new());
        let mut ctx = QdCtx {
            now: 0,
            rng: &mut rng,
            dropped: &mut dropped,
            marked: 0,
        };
        for f in 0..100u32 {
            for k in 0..3 {
                let p = Packet {
                    uid: (f * 3 + k) as u64,
                    flow: FlowId(f),
                    src: NodeId(0),
                    dst: NodeId(1),
                    size: 1514, // one quantum: one packet per turn
                    flags: flags::DATA,
                    ..Default::default()
                };
                q.enqueue(p, &mut ctx).unwrap();
            }
        }
        let first: std::collections::HashSet<u32> =
            (0..100).map(|_| q.dequeue(&mut ctx).unwrap().flow.0).collect();
        assert_eq!(first.len(), 100);
        let st: std::collections::HashMap<_, _> = q.stats().into_iter().collect();
        assert_eq!(st["way_collisions"], 0.0);
        assert!(st["way_misses"] > 0.0, "some flows needed another way");
    }

    /// `ack_filter = true` drops an older redundant pure ACK once two are
    /// eligible; `"aggressive"` also drops a lone one right ahead.
    #[test]
    fn ack_filter_drops_redundant_acks() {
        for (mode, left) in [("false", 3), ("true", 2), ("\"aggressive\"", 1)] {
            let mut q = cake(&format!("ack_filter = {mode}"));
            let (mut rng, mut dropped) = (RngStream::new(0, 0), Vec::new());
            let mut ctx = QdCtx {
                now: 0,
                rng: &mut rng,
                dropped: &mut dropped,
                marked: 0,
            };
            for i in 0..3 {
                q.enqueue(ack(i, 10 + i as u32), &mut ctx).unwrap();
            }
            assert_eq!(q.len_pkts(), left, "ack_filter = {mode}");
            // the newest ACK always stays
            let mut out = Vec::new();
            while let Some(p) = q.dequeue(&mut ctx) {
                out.push(p.ack);
            }
            assert_eq!(*out.last().unwrap(), 12);
            assert_eq!(dropped.len(), 3 - left);
        }
        // an ACK with different ECE bits carries news: kept
        let mut q = cake("ack_filter = true");
        let (mut rng, mut dropped) = (RngStream::new(0, 0), Vec::new());
        let mut ctx = QdCtx {
            now: 0,
            rng: &mut rng,
            dropped: &mut dropped,
            marked: 0,
        };
        let mut e = ack(0, 10);
        e.flags |= flags::ECE;
        q.enqueue(e, &mut ctx).unwrap();
        q.enqueue(ack(1, 11), &mut ctx).unwrap();
        q.enqueue(ack(2, 12), &mut ctx).unwrap();
        assert_eq!(q.len_pkts(), 3);
    }

    /// The shaper in deficit mode (`cake_advance_shaper`): at 20 Mbit/s
    /// (2.5 MB/s) a 1500-byte packet lasts 600 µs in sch_cake's fixed
    /// point; a burst goes out one packet per 600 µs from the first
    /// dequeue, each due time counted from the previous one, so a late
    /// dequeue does not push the schedule back; between, the queue gives
    /// nothing and names the time it waits for.
    #[test]
    fn shaper_spaces_packets_in_deficit_mode() {
        let r = ShaperRate::new(2_500_000);
        assert_eq!(r.dur(1500), 600_000);
        // precision: 1 GB at 64 B/s (sch_cake's floor) within 1 ns per s
        let slow = ShaperRate::new(MIN_RATE);
        assert!((slow.dur(64) as i64 - 1_000_000_000).abs() <= 1);
        let mut q = cake("bandwidth = \"20Mbps\"\nflow_mode = \"flows\"");
        let (mut rng, mut dropped) = (RngStream::new(0, 0), Vec::new());
        let mut ctx = QdCtx {
            now: 1_000,
            rng: &mut rng,
            dropped: &mut dropped,
            marked: 0,
        };
        for uid in 0..4 {
            let p = Packet {
                uid,
                flow: FlowId(1),
                size: 1500,
                flags: flags::DATA,
                enq_time: 1_000,
                ..Default::default()
            };
            q.enqueue(p, &mut ctx).unwrap();
        }
        assert_eq!(q.dequeue(&mut ctx).unwrap().uid, 0);
        assert!(q.dequeue(&mut ctx).is_none());
        assert_eq!(q.wake_at(), Some(601_000));
        // woken 50 µs late: sent, and the next is due 600 µs after the
        // previous due time, not after now
        ctx.now = 651_000;
        assert_eq!(q.dequeue(&mut ctx).unwrap().uid, 1);
        assert_eq!(q.wake_at(), None);
        assert!(q.dequeue(&mut ctx).is_none());
        assert_eq!(q.wake_at(), Some(1_201_000));
        ctx.now = 1_201_000;
        assert_eq!(q.dequeue(&mut ctx).unwrap().uid, 2);
        let st: std::collections::HashMap<_, _> = q.stats().into_iter().collect();
        assert_eq!((st["shaper_bytes"], st["shaper_overlimits"]), (4500.0, 2.0));
    }

    /// `cake_set_rate` at 20 Mbit/s: flow quantum 2.5e6 >> 12 = 610 B; an
    /// MTU lasts 605.6 µs, under the 5 ms target, so the target stays; the
    /// bulk tin (rate/16) has 9.69 ms, so its target is 1.5 × that.
    #[test]
    fn tin_rates_set_quantum_and_target() {
        let c: CakeConfig = toml::from_str("bandwidth = \"20Mbps\"").unwrap();
        let q = Cake::new(&c, 1);
        assert_eq!(q.tins[0].flow_quantum, 610);
        assert_eq!(q.tins[0].cparams.target, 5_000_000);
        assert_eq!(q.tins[0].cparams.mtu_time, 605_600);
        assert_eq!(q.tins[1].flow_quantum, 300);
        assert_eq!(q.tins[1].cparams.target, 605_600 * 16 * 3 / 2);
        assert_eq!(c.buffer_limit(), 4 << 20);
    }

    #[test]
    fn defaults_are_linuxs_and_tins_follow_the_tables() {
        let c: CakeConfig = toml::from_str("").unwrap();
        assert_eq!(c.limit, 10240);
        assert_eq!(c.flow_mode, FlowMode::TripleIsolate);
        assert_eq!(c.diffserv, Diffserv::Diffserv3);
        assert_eq!((c.target.0, c.rtt.0), (5_000_000, 100_000_000));
        // diffserv3: CS1 (8) → bulk, EF (46) → voice, CS0 → best effort
        let d = Diffserv::Diffserv3;
        assert_eq!((d.tin_of(0), d.tin_of(8), d.tin_of(46)), (0, 1, 2));
        assert_eq!(Diffserv::Diffserv4.tin_of(34), 2); // AF41: video
        // diffserv8: LE (1) → 0, CS0 → 2, CS1 → 1, EF → 6, CS7 → 7
        let d8 = Diffserv::Diffserv8;
        let t8: Vec<_> = [1, 0, 8, 46, 56].map(|d| d8.tin_of(d)).to_vec();
        assert_eq!(t8, [0, 2, 1, 6, 7]);
        // precedence: the top three bits
        assert_eq!(Diffserv::Precedence.tin_of(46), 5);
        assert_eq!(Diffserv::Besteffort.tin_of(46), 0);
        // cake_config_diffserv8: quanta 256, 224, 196, 171, 149, 130, 113, 98
        let q: Vec<u16> = d8.layout(0).iter().map(|t| t.1).collect();
        assert_eq!(q, [256, 224, 196, 171, 149, 130, 113, 98]);
        assert_eq!(d8.layout(8_000_000)[1].0, 7_000_000);
        assert!(toml::from_str::<CakeConfig>("ack_filter = \"maybe\"").is_err());
    }
}
