//! Queue disciplines ("AQMs") behind one trait.
//!
//! A discipline owns its packets and decides on enqueue (and, for sojourn-time
//! AQMs, on dequeue) whether to accept, mark or drop. The surrounding [`Port`]
//! (in `net::port`) keeps the statistics common to all disciplines: counts by
//! drop cause, marks, time-averaged length, sojourn-time histogram.
//!
//! To add a discipline: write one file here with its config struct (which
//! implements [`registry::QueueKind`]) and its `QueueDisc` impl, then add one
//! line to the `queue_kinds!` list below.

pub mod fifo;
pub mod flow_queues;
pub mod registry;

// The registry: one line per discipline (module, config type, enum
// variant). The config implements `registry::QueueKind` in its own file.
registry::queue_kinds! {
    droptail::DropTailConfig => DropTail,
    red::RedConfig => Red,
    codel::CodelConfig => Codel,
    fq_codel::FqCodelConfig => FqCodel,
    sfq_codel::SfqCodelConfig => SfqCodel,
    pie::PieConfig => Pie,
    ared::AredConfig => Ared,
    markmax::MarkMaxConfig => MarkMax,
    maxnet::MaxNetConfig => MaxNet,
    rio::RioConfig => Rio,
    fq_pie::FqPieConfig => FqPie,
    step::StepConfig => Step,
    dualpi2::DualPi2Config => DualPi2,
    cobalt::CobaltConfig => Cobalt,
    cake::CakeConfig => Cake,
}

use crate::engine::{RngStream, Time};
use crate::net::packet::Packet;
use serde::{Deserialize, Serialize};

pub use registry::{PortCtx, QueueKind};

pub use ared::AredConfig;
pub use cobalt::{Cobalt, CobaltConfig};
pub use codel::{Codel, CodelConfig, CodelVariant};
pub use droptail::{DropTail, DropTailConfig};
pub use dualpi2::{DualPi2, DualPi2Config, DualPi2Variant};
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
    /// The link went down (`[[events]]` `down = true`): the packets queued,
    /// being serialised or propagating on it are lost. Counted by the port
    /// of the link direction, never decided by a discipline.
    LinkDown,
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
    /// Packets lost because the link went down (queued, being serialised
    /// or propagating on it).
    pub dropped_link_down: u64,
    /// Packets marked CE instead of being dropped.
    pub marked: u64,
}

impl QueueCounters {
    pub fn dropped(&self) -> u64 {
        self.dropped_early
            + self.dropped_forced
            + self.dropped_overflow
            + self.dropped_aqm
            + self.dropped_link_down
    }
    pub fn count_drop(&mut self, cause: DropCause) {
        match cause {
            DropCause::Early => self.dropped_early += 1,
            DropCause::Forced => self.dropped_forced += 1,
            DropCause::Overflow => self.dropped_overflow += 1,
            DropCause::Aqm => self.dropped_aqm += 1,
            DropCause::LinkDown => self.dropped_link_down += 1,
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
    /// Named statistics beyond the counters every port keeps (e.g. RIO's
    /// per-class signals), reported in `summary.json` under the queue's
    /// `stats`. Read once, when the run's results are collected.
    fn stats(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// Counters of the discipline's own queues (DualPI2's `l` and `c`),
    /// reported beside the port's per-class counters. Cumulative, read
    /// when results are collected and, on a monitored port, at every
    /// queue sample (`queues.csv`'s per-class columns); empty for a
    /// single-queue discipline.
    fn classes(&self) -> Vec<QueueClassCounts> {
        Vec::new()
    }
    /// The port's wake-up hook, for a discipline that may hold back its
    /// packets (CAKE's shaper): asked after [`QueueDisc::dequeue`] returned
    /// `None` with packets still queued, the time before which nothing can
    /// be dequeued. The port's transmitter then waits and asks `dequeue`
    /// again at that time (one wake-up timer; an arrival meanwhile does not
    /// shorten the wait). `None` (the default): the discipline never holds
    /// packets back, and the port waits for the next arrival.
    fn wake_at(&self) -> Option<Time> {
        None
    }
    /// The link's rate is `rate_bps` from `now` on (an `[[events]]` rate
    /// change). Disciplines that read the rate follow it (RED, ARED and
    /// RIO's idle-time decay, MaxNet's capacity); the others ignore it.
    fn set_rate(&mut self, now: Time, rate_bps: u64) {
        let _ = (now, rate_bps);
    }
    /// Change parameter `key` to `value` during the run (`[[events]]`
    /// `queue = { key = value }`), as `tc qdisc change` does: the
    /// discipline's state stays. The default changes nothing and says so;
    /// a scenario's events are tried on a fresh instance when it is
    /// loaded, so a refusal is a validation error.
    fn set_param(&mut self, key: &str, value: &toml::Value) -> Result<(), String> {
        let _ = (key, value);
        Err(format!(
            "a `{}` queue's parameters cannot be changed during a run (codel: target, interval)",
            self.kind()
        ))
    }
    /// Empty the queue because its link went down, appending every packet
    /// it held to `out`. The default takes them through `dequeue` until it
    /// gives nothing (so a discipline's own drops on the way are in
    /// `ctx.dropped`, and the caller counts them as link-down drops too); a
    /// discipline that can hold packets back from `dequeue` overrides it.
    fn drain(&mut self, ctx: &mut QdCtx, out: &mut Vec<Packet>) {
        while let Some(p) = self.dequeue(ctx) {
            out.push(p);
        }
    }
}

/// One internal queue's counters, as a discipline with several queues
/// counts them ([`QueueDisc::classes`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueClassCounts {
    /// The queue's name in the outputs' `class` column.
    pub name: &'static str,
    /// Packets classified to the queue (accepted or not).
    pub arrivals: u64,
    /// Packets of the queue dropped (on arrival or later).
    pub dropped: u64,
    /// Packets of the queue marked CE.
    pub marked: u64,
    /// Packets that left the queue for the link.
    pub dequeued: u64,
    /// Sum of their queueing delays, ns.
    pub sojourn_ns: u128,
    /// The queue now: packets and bytes held, and the queueing delay of
    /// the last packet that left it (what `queues.csv` samples).
    pub len_pkts: u64,
    pub len_bytes: u64,
    pub last_sojourn_ns: u64,
}

/// A queue size limit, in packets or in bytes.
///
/// In a scenario: an integer is packets (`limit = 16`); a string takes a unit:
/// `"16p"`/`"16pkts"` for packets, `"24KB"`, `"30000B"`, `"64KiB"` for bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// Written back as a scenario would write it: `100` or `"30000B"`.
impl Serialize for Limit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Limit::Packets(n) => s.serialize_u32(n),
            Limit::Bytes(b) => s.serialize_str(&format!("{b}B")),
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
        let raw = Raw::deserialize(d).map_err(|e| {
            // a missing `limit` is reported as such (serde's own message)
            if e.to_string().starts_with("missing field") {
                e
            } else {
                err(
                    "expected a packet count (e.g. 100) or a size string (e.g. \"100p\", \"64KB\")"
                        .into(),
                )
            }
        })?;
        match raw {
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
                crate::units::parse_size(t)
                    .map(Limit::Bytes)
                    .map_err(|e| err(format!("invalid limit `{s}`: {e}")))
            }
        }
    }
}

impl Default for QueueSpec {
    fn default() -> Self {
        QueueSpec::DropTail(Box::default())
    }
}
