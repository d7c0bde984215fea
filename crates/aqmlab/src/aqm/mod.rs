//! Queue disciplines ("AQMs") behind one trait.
//!
//! A discipline owns its packets and decides on enqueue (and, for sojourn-time
//! AQMs, on dequeue) whether to accept, mark or drop. The surrounding [`Port`]
//! (in `net::port`) keeps the statistics common to all disciplines: counts by
//! drop cause, marks, time-averaged length, sojourn-time histogram.
//!
//! To add a discipline: write one file here with its config struct and its
//! `QueueDisc` impl, then register it in [`QueueSpec`] and [`QueueSpec::build`]
//! below (one variant, one match arm).

pub mod ared;
pub mod codel;
pub mod droptail;
pub mod fq_codel;
pub mod markmax;
pub mod maxnet;
pub mod pie;
pub mod red;
pub mod rio;
pub mod sfq_codel;

use crate::engine::{RngStream, Time};
use crate::net::packet::Packet;
use serde::{Deserialize, Serialize};

pub use ared::AredConfig;
pub use codel::{Codel, CodelConfig, CodelVariant};
pub use droptail::{DropTail, DropTailConfig};
pub use fq_codel::{FqCodel, FqCodelConfig};
pub use markmax::{BacklogUnit, MarkMax, MarkMaxConfig, MarkMaxStats};
pub use maxnet::{MaxNet, MaxNetConfig};
pub use pie::{Pie, PieConfig};
pub use red::{Red, RedConfig};
pub use rio::{Rio, RioConfig};
pub use sfq_codel::{SfqCodel, SfqCodelConfig, SfqVariant};

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// Probabilistic AQM drop (RED's "unforced" drop, below the forced region).
    Early,
    /// AQM forced drop (RED: average above `max_th`, or `2·max_th` if gentle).
    Forced,
    /// The hard buffer limit was reached (tail drop).
    Overflow,
    /// Any other discipline-specific drop (e.g. CoDel's dequeue drops).
    Aqm,
}

/// Counters kept for every queue, whatever its discipline.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct QueueCounters {
    /// Packets offered to the queue (accepted or not).
    pub arrivals: u64,
    pub enqueued: u64,
    pub dequeued: u64,
    pub dropped_early: u64,
    pub dropped_forced: u64,
    pub dropped_overflow: u64,
    pub dropped_aqm: u64,
    /// Packets marked CE instead of being dropped.
    pub marked: u64,
}

impl QueueCounters {
    pub fn dropped(&self) -> u64 {
        self.dropped_early + self.dropped_forced + self.dropped_overflow + self.dropped_aqm
    }
    pub fn count_drop(&mut self, cause: DropCause) {
        match cause {
            DropCause::Early => self.dropped_early += 1,
            DropCause::Forced => self.dropped_forced += 1,
            DropCause::Overflow => self.dropped_overflow += 1,
            DropCause::Aqm => self.dropped_aqm += 1,
        }
    }
}

/// What a discipline may use while handling a packet.
pub struct QdCtx<'a> {
    pub now: Time,
    /// The queue's own random stream.
    pub rng: &'a mut RngStream,
    /// Packets the discipline dropped *other than* a rejected arrival (e.g.
    /// CoDel's drops at dequeue, or FQ-CoDel's drop from the fattest flow).
    pub dropped: &'a mut Vec<(Packet, DropCause)>,
    /// Number of packets marked CE during this call.
    pub marked: u32,
}

impl QdCtx<'_> {
    /// Record that the discipline dropped `pkt` (not the arriving packet).
    pub fn drop_packet(&mut self, pkt: Packet, cause: DropCause) {
        self.dropped.push((pkt, cause));
    }
}

/// A queue discipline.
pub trait QueueDisc: Send {
    /// The `kind` name, as written in scenarios.
    fn kind(&self) -> &'static str;
    /// Offer an arriving packet. `Err(cause)` drops the arriving packet. A
    /// discipline that marks sets `pkt.ecn = Ce` and increments `ctx.marked`.
    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdCtx) -> Result<(), DropCause>;
    /// Take the next packet to transmit, if any.
    fn dequeue(&mut self, ctx: &mut QdCtx) -> Option<Packet>;
    /// Packets queued.
    fn len_pkts(&self) -> usize;
    /// Bytes queued.
    fn len_bytes(&self) -> u64;
    /// The discipline's averaged queue estimate (RED's `avg`), if it has one.
    fn avg_len(&self) -> Option<f64> {
        None
    }
}

/// A queue size limit, in packets or in bytes.
///
/// In a scenario: an integer is packets (`limit = 16`); a string takes a unit:
/// `"16p"`/`"16pkts"` for packets, `"24KB"`, `"30000B"`, `"64KiB"` for bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Limit {
    Packets(u32),
    Bytes(u64),
}

impl Limit {
    /// Would a queue holding `pkts`/`bytes` overflow by adding `size` bytes?
    #[inline]
    pub fn exceeded_by(&self, pkts: usize, bytes: u64, size: u32) -> bool {
        match *self {
            Limit::Packets(n) => pkts + 1 > n as usize,
            Limit::Bytes(b) => bytes + size as u64 > b,
        }
    }
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            Limit::Packets(0) | Limit::Bytes(0) => Err("must be positive".into()),
            _ => Ok(()),
        }
    }
}

impl<'de> Deserialize<'de> for Limit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            I(i64),
            S(String),
        }
        let err = |m: String| serde::de::Error::custom(m);
        match Raw::deserialize(d).map_err(|_| {
            err(
                "expected a packet count (e.g. 100) or a size string (e.g. \"100p\", \"64KB\")"
                    .into(),
            )
        })? {
            Raw::I(n) if n > 0 && n <= u32::MAX as i64 => Ok(Limit::Packets(n as u32)),
            Raw::I(n) => Err(err(format!(
                "invalid limit {n}: must be a positive packet count"
            ))),
            Raw::S(s) => {
                let t = s.trim();
                for suf in ["pkts", "pkt", "packets", "p"] {
                    if let Some(num) = t.strip_suffix(suf) {
                        return match num.trim().parse::<u32>() {
                            Ok(n) if n > 0 => Ok(Limit::Packets(n)),
                            _ => Err(err(format!(
                                "invalid limit `{s}`: expected a positive packet count such as \"100p\""
                            ))),
                        };
                    }
                }
                crate::scenario::units::parse_size(t)
                    .map(Limit::Bytes)
                    .map_err(|e| err(format!("invalid limit `{s}`: {e}")))
            }
        }
    }
}

/// The queue kinds a scenario can name, each with its parameters.
/// Registration point for new disciplines.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum QueueSpec {
    /// Tail drop FIFO.
    DropTail(DropTailConfig),
    /// Random Early Detection (Floyd & Jacobson 1993).
    Red(RedConfig),
    /// Controlled Delay (RFC 8289).
    Codel(CodelConfig),
    /// Flow-queue CoDel (RFC 8290).
    #[serde(rename = "fq_codel")]
    FqCodel(FqCodelConfig),
    /// Stochastic flow queueing with CoDel per bin (ns-2 Pollere sfqCoDel).
    #[serde(rename = "sfq_codel")]
    SfqCodel(SfqCodelConfig),
    /// Proportional Integral controller Enhanced (RFC 8033).
    Pie(PieConfig),
    /// Adaptive RED (Floyd, Gummadi, Shenker 2001).
    Ared(AredConfig),
    /// MarkMax: cut the flow with the largest backlog (Osipova, Blanc, Avrachenkov).
    #[serde(rename = "markmax")]
    MarkMax(MarkMaxConfig),
    /// MaxNet link price over DropTail (Wydrowski et al. 2003; Suchara et al. 2008).
    #[serde(rename = "maxnet")]
    MaxNet(MaxNetConfig),
    /// RED with In and Out (Clark & Fang 1998; RIO-PS, Guo & Matta 2001).
    Rio(RioConfig),
}

impl QueueSpec {
    /// The names accepted for `kind`.
    pub const KINDS: &'static [&'static str] = &[
        "droptail",
        "red",
        "codel",
        "fq_codel",
        "sfq_codel",
        "pie",
        "ared",
        "markmax",
        "maxnet",
        "rio",
    ];

    pub fn kind(&self) -> &'static str {
        match self {
            QueueSpec::DropTail(_) => "droptail",
            QueueSpec::Red(_) => "red",
            QueueSpec::Codel(_) => "codel",
            QueueSpec::FqCodel(_) => "fq_codel",
            QueueSpec::SfqCodel(_) => "sfq_codel",
            QueueSpec::Pie(_) => "pie",
            QueueSpec::Ared(_) => "ared",
            QueueSpec::MarkMax(_) => "markmax",
            QueueSpec::MaxNet(_) => "maxnet",
            QueueSpec::Rio(_) => "rio",
        }
    }

    /// Check parameter ranges. The error names the offending key.
    pub fn validate(&self) -> Result<(), (String, String)> {
        match self {
            QueueSpec::DropTail(c) => c.validate(),
            QueueSpec::Red(c) => c.validate(),
            QueueSpec::Codel(c) => c.validate(),
            QueueSpec::FqCodel(c) => c.validate(),
            QueueSpec::SfqCodel(c) => c.validate(),
            QueueSpec::Pie(c) => c.validate(),
            QueueSpec::Ared(c) => c.validate(),
            QueueSpec::MarkMax(c) => c.validate(),
            QueueSpec::MaxNet(c) => c.validate(),
            QueueSpec::Rio(c) => c.validate(),
        }
    }

    /// Build the discipline for an egress port on a link of `rate_bps` and
    /// one-way delay `delay`;
    /// `rng` is the port's own stream (e.g. for FQ-CoDel's hash perturbation).
    pub fn build(&self, rate_bps: u64, delay: Time, rng: &mut RngStream) -> Box<dyn QueueDisc> {
        match self {
            QueueSpec::DropTail(c) => Box::new(DropTail::new(c)),
            QueueSpec::Red(c) => Box::new(Red::new(c, rate_bps, delay)),
            QueueSpec::Codel(c) => Box::new(Codel::new(c)),
            QueueSpec::FqCodel(c) => {
                use rand::RngCore;
                Box::new(FqCodel::new(c, rng.next_u64()))
            }
            QueueSpec::SfqCodel(c) => {
                use rand::RngCore;
                Box::new(SfqCodel::new(c, rng.next_u64()))
            }
            QueueSpec::Pie(c) => Box::new(Pie::new(c)),
            QueueSpec::Ared(c) => Box::new(Red::adaptive(&c.red, rate_bps, delay, c.adaptation())),
            QueueSpec::MarkMax(c) => Box::new(MarkMax::new(c)),
            QueueSpec::MaxNet(c) => Box::new(MaxNet::new(c, rate_bps)),
            QueueSpec::Rio(c) => Box::new(Rio::new(c, rate_bps)),
        }
    }
}

impl Default for QueueSpec {
    fn default() -> Self {
        QueueSpec::DropTail(DropTailConfig::default())
    }
}
