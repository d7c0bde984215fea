//! COBALT — CoDel and BLUE Alternate, the AQM of each CAKE queue and a
//! queue kind of its own.
//!
//! Sources: Linux `net/sched/sch_cake.c` (`cobalt_should_drop`,
//! `cobalt_queue_full`, `cobalt_queue_empty`, `cobalt_control`); ns-3
//! `src/traffic-control/model/cobalt-queue-disc.cc` (`CobaltShouldDrop`,
//! `CobaltQueueFull`, `CobaltQueueEmpty`, `DoDequeue`), a port of the Linux
//! code; T. Høiland-Jørgensen, D. Täht, J. Morton, "Piece of CAKE", IEEE
//! LANMAN 2018, §III-D.
//!
//! CoDel part (a condensed CoDel, not RFC 8289's state machine): a packet
//! whose sojourn is above `target` puts the queue in the dropping state and
//! schedules the first signal at `now + interval` (`drop_next`); while
//! dropping, each packet dequeued at or after `drop_next` is CE-marked (if
//! ECN-capable and ECN is on) or dropped, `count` grows and `drop_next`
//! advances by the control law `interval/√count`. Below target the state
//! leaves dropping and `count` decays by one per control-law step that has
//! passed. `drop_next` doubles as an activity timeout: with `count = 0` it is
//! `now + interval`, and it is pulled to `now` when the schedule has passed
//! without a signal. The control law is CoDel's ([`super::codel::control_law`],
//! exact √; Linux and ns-3 keep 1/√count in Q0.32 with a 16-entry cache and
//! Newton steps, within 10⁻⁴ relative).
//!
//! BLUE part: a drop probability `p_drop` (initial `pdrop` = 0) rises by
//! `increment` (1/256) on a tail drop (queue full) and falls by `decrement`
//! (1/4096) when a dequeue finds the queue empty, each at most once per
//! `target` of time (`blue_timer`); every dequeued packet is then dropped
//! with probability `p_drop` whatever its ECN capability ("lack of ECN is
//! deliberate"). ns-3 adds `BlueThreshold` (400 ms): a dequeued packet that
//! waited longer also raises `p_drop` (at most once per `target`); Linux has
//! no such rule (`blue_threshold = "off"`).
//!
//! `ce_threshold`/`use_l4s` (ns-3 `CeThreshold`, `UseL4s`): with `use_l4s`
//! an ECT(1)/CE packet gets only the sojourn step and is never dropped; else
//! a packet above the step is CE-marked when ECN is on and COBALT did not
//! mark it already.
//!
//! Parameters (ns-3 defaults): `limit` = 1 500 000 bytes (1000 × 1500 B),
//! `target` = 5 ms, `interval` = 100 ms, `ecn` = false, `pdrop` = 0,
//! `increment` = 1/256, `decrement` = 1/4096, `blue_threshold` = 400 ms.

use super::codel::control_law;
use super::fifo::Fifo;
use super::step::{mark, CeSelector, SojournStep};
use super::{DropCause, Limit, QdCtx, QueueDisc};
use crate::engine::Time;
use crate::net::packet::Packet;
use crate::units::Dur;
use serde::{Deserialize, Serialize};

/// COBALT's parameters (Linux `struct cobalt_params`, plus ns-3's BLUE
/// threshold and L4S step).
#[derive(Clone, Copy, Debug)]
pub struct CobaltParams {
    pub target: Time,
    pub interval: Time,
    /// Serialisation time of an MTU at the shaped rate (Linux `mtu_time`;
    /// 0 unshaped, and in ns-3): a sojourn must also exceed `4·mtu_time`.
    pub mtu_time: Time,
    pub p_inc: f64,
    pub p_dec: f64,
    /// ns-3 `BlueThreshold`; `None` as in Linux.
    pub blue_threshold: Option<Time>,
    /// Mark ECN-capable packets instead of dropping them (CAKE: always).
    pub ecn: bool,
    pub ce: Option<SojournStep>,
    pub use_l4s: bool,
}

/// Per-queue COBALT state (Linux `struct cobalt_vars`).
#[derive(Clone, Copy, Debug, Default)]
pub struct CobaltVars {
    pub count: u32,
    pub drop_next: Time,
    pub blue_timer: Time,
    pub p_drop: f64,
    pub dropping: bool,
}

/// `a − b` of two times, signed.
fn diff(a: Time, b: Time) -> i128 {
    a as i128 - b as i128
}

impl CobaltVars {
    /// A packet was tail-dropped: raise BLUE's probability (once per
    /// `target`) and start signalling at once (`cobalt_queue_full`). True if
    /// BLUE went from quiescent to active.
    pub fn queue_full(&mut self, p: &CobaltParams, now: Time) -> bool {
        let mut up = false;
        if diff(now, self.blue_timer) > p.target as i128 {
            up = self.p_drop == 0.0;
            self.p_drop = (self.p_drop + p.p_inc).min(1.0);
            self.blue_timer = now;
        }
        self.dropping = true;
        self.drop_next = now;
        if self.count == 0 {
            self.count = 1;
        }
        up
    }

    /// A dequeue found the queue empty: lower BLUE's probability (once per
    /// `target`), leave dropping, let `count` decay one step
    /// (`cobalt_queue_empty`). True if BLUE became quiescent.
    pub fn queue_empty(&mut self, p: &CobaltParams, now: Time) -> bool {
        let mut down = false;
        if self.p_drop > 0.0 && diff(now, self.blue_timer) > p.target as i128 {
            self.p_drop = (self.p_drop - p.p_dec).max(0.0);
            self.blue_timer = now;
            down = self.p_drop == 0.0;
        }
        self.dropping = false;
        if self.count > 0 && diff(now, self.drop_next) >= 0 {
            self.count -= 1;
            self.drop_next = control_law(self.drop_next, p.interval, self.count);
        }
        down
    }

    /// Decide on a freshly dequeued packet: `true` to drop it; a CE mark is
    /// made on `pkt` (counted in `ctx`). `bulk_flows` is Linux's ingress-mode
    /// scaling of the `mtu_time` floor (0 otherwise).
    /// (`cobalt_should_drop`; ns-3 `CobaltShouldDrop`.)
    pub fn should_drop(
        &mut self,
        p: &CobaltParams,
        pkt: &mut Packet,
        bulk_flows: u32,
        ctx: &mut QdCtx,
    ) -> bool {
        let now = ctx.now;
        let sojourn = now.saturating_sub(pkt.enq_time);
        if let Some(step) = p.ce.filter(|s| p.use_l4s && s.selects(pkt)) {
            // ns-3 UseL4s: the step only, no CoDel or BLUE
            step.apply(pkt, ctx);
            return false;
        }
        let mut schedule = diff(now, self.drop_next);
        let over_target = sojourn > p.target
            && sojourn as u128 > p.mtu_time as u128 * bulk_flows as u128 * 2
            && sojourn as u128 > p.mtu_time as u128 * 4;
        let mut next_due = self.count > 0 && schedule >= 0;
        let mut drop = false;
        let mut marked = false;
        if over_target {
            if !self.dropping {
                self.dropping = true;
                self.drop_next = control_law(now, p.interval, self.count);
            }
            if self.count == 0 {
                self.count = 1;
            }
        } else if self.dropping {
            self.dropping = false;
        }
        if next_due && self.dropping {
            if p.ecn && pkt.ecn.capable() {
                mark(pkt, ctx);
                marked = true;
            } else {
                drop = true;
            }
            self.count = self.count.saturating_add(1);
            self.drop_next = control_law(self.drop_next, p.interval, self.count);
            schedule = diff(now, self.drop_next);
        } else {
            while next_due {
                self.count -= 1;
                self.drop_next = control_law(self.drop_next, p.interval, self.count);
                schedule = diff(now, self.drop_next);
                next_due = self.count > 0 && schedule >= 0;
            }
        }
        if let Some(step) = p.ce {
            // ns-3: the step needs ECN on and is not applied twice
            if !marked && !p.use_l4s && p.ecn {
                step.apply(pkt, ctx);
            }
        }
        if let Some(th) = p.blue_threshold {
            if sojourn > th && diff(now, self.blue_timer) > p.target as i128 {
                self.p_drop = (self.p_drop + p.p_inc).min(1.0);
                self.blue_timer = now;
            }
        }
        // BLUE: drop whatever the ECN capability
        if self.p_drop > 0.0 {
            drop |= ctx.rng.uniform() < self.p_drop;
        }
        // drop_next doubles as an activity timeout
        if self.count == 0 {
            self.drop_next = now + p.interval;
        } else if schedule > 0 && !drop {
            self.drop_next = now;
        }
        drop
    }
}

/// Parse `blue_threshold`: a time, or `"off"` (Linux: no threshold).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlueThreshold {
    Off,
    At(Dur),
}

impl Serialize for BlueThreshold {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            BlueThreshold::Off => s.serialize_str("off"),
            BlueThreshold::At(d) => d.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for BlueThreshold {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = toml::Value::deserialize(d)?;
        if v.as_str() == Some("off") {
            return Ok(BlueThreshold::Off);
        }
        Dur::deserialize(v)
            .map(BlueThreshold::At)
            .map_err(|e| {
                let e = e.to_string();
                serde::de::Error::custom(format!("{}, or \"off\"", e.trim_end()))
            })
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CobaltConfig {
    #[serde(default = "d_limit")]
    pub limit: Limit,
    #[serde(default = "super::codel::d_target")]
    pub target: Dur,
    #[serde(default = "super::codel::d_interval")]
    pub interval: Dur,
    #[serde(default)]
    pub ecn: bool,
    #[serde(default)]
    pub pdrop: f64,
    #[serde(default = "d_inc")]
    pub increment: f64,
    #[serde(default = "d_dec")]
    pub decrement: f64,
    #[serde(default = "d_blue")]
    pub blue_threshold: BlueThreshold,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ce_threshold: Option<Dur>,
    #[serde(default)]
    pub use_l4s: bool,
}

fn d_limit() -> Limit {
    Limit::Bytes(1_500_000)
}
fn d_inc() -> f64 {
    1.0 / 256.0
}
fn d_dec() -> f64 {
    1.0 / 4096.0
}
fn d_blue() -> BlueThreshold {
    BlueThreshold::At(Dur(400_000_000))
}

impl CobaltConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        self.limit
            .validate()
            .map_err(|m| ("limit".to_string(), m))?;
        if self.target.0 == 0 {
            return Err(("target".into(), "must be positive".into()));
        }
        if self.interval.0 == 0 {
            return Err(("interval".into(), "must be positive".into()));
        }
        for (k, v) in [
            ("pdrop", self.pdrop),
            ("increment", self.increment),
            ("decrement", self.decrement),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err((k.into(), format!("must be in [0, 1], got {v}")));
            }
        }
        if self.blue_threshold == BlueThreshold::At(Dur(0)) {
            return Err((
                "blue_threshold".into(),
                "must be positive, or \"off\"".into(),
            ));
        }
        super::codel::CeKeys {
            ce_threshold: self.ce_threshold,
            ce_threshold_selector: CeSelector::Ect,
            use_l4s: self.use_l4s,
        }
        .validate()
    }

    pub fn params(&self) -> CobaltParams {
        CobaltParams {
            target: self.target.0,
            interval: self.interval.0,
            mtu_time: 0,
            p_inc: self.increment,
            p_dec: self.decrement,
            blue_threshold: match self.blue_threshold {
                BlueThreshold::Off => None,
                BlueThreshold::At(d) => Some(d.0),
            },
            ecn: self.ecn,
            ce: self.ce_threshold.map(|d| SojournStep {
                threshold: d.0,
                selector: if self.use_l4s {
                    CeSelector::Ect1
                } else {
                    CeSelector::Ect
                },
            }),
            use_l4s: self.use_l4s,
        }
    }
}

/// COBALT over one FIFO (ns-3 `CobaltQueueDisc`).
pub struct Cobalt {
    limit: Limit,
    p: CobaltParams,
    v: CobaltVars,
    q: Fifo,
}

impl Cobalt {
    pub fn new(c: &CobaltConfig) -> Self {
        let v = CobaltVars {
            p_drop: c.pdrop,
            ..Default::default()
        };
        Cobalt {
            limit: c.limit,
            p: c.params(),
            v,
            q: Fifo::new(),
        }
    }
    pub fn vars(&self) -> &CobaltVars {
        &self.v
    }
}

impl QueueDisc for Cobalt {
    fn kind(&self) -> &'static str {
        "cobalt"
    }

    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdCtx) -> Result<(), DropCause> {
        if self.q.would_exceed(&self.limit, pkt.size) {
            self.v.queue_full(&self.p, ctx.now);
            return Err(DropCause::Overflow);
        }
        self.q.push_back(pkt);
        Ok(())
    }

    fn dequeue(&mut self, ctx: &mut QdCtx) -> Option<Packet> {
        loop {
            let Some(mut pkt) = self.q.pop_front() else {
                self.v.queue_empty(&self.p, ctx.now);
                return None;
            };
            let (ecn, marks) = (pkt.ecn, ctx.marked);
            if self.v.should_drop(&self.p, &mut pkt, 0, ctx) {
                // marked by CoDel, then dropped by BLUE: a drop, not a mark
                pkt.ecn = ecn;
                ctx.marked = marks;
                ctx.drop_packet(pkt, DropCause::Aqm);
            } else {
                return Some(pkt);
            }
        }
    }

    fn len_pkts(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![("blue_p_drop", self.v.p_drop)]
    }
}

impl super::registry::Registered for CobaltConfig {
    const KIND: &'static str = "cobalt";
    const ABOUT: &'static str =
        "CoDel + BLUE (Linux sch_cake.c cobalt_*; ns-3 CobaltQueueDisc)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("limit", "packets, or bytes with a unit", "> 0", "0", "buffer size (tail drop raises BLUE's probability)"),
        crate::registry::param!("target", "time", "> 0", "\"0ms\"", "acceptable standing sojourn time; also BLUE's update spacing"),
        crate::registry::param!("interval", "time", "> 0", "\"0ms\"", "CoDel interval"),
        crate::registry::param!("ecn", "", "true/false", "", "CoDel marks ECN-capable packets instead of dropping (BLUE always drops)"),
        crate::registry::param!("pdrop", "probability", "[0, 1]", "1.5", "BLUE's initial drop probability"),
        crate::registry::param!("increment", "probability", "[0, 1]", "-0.1", "BLUE's step up on a tail drop"),
        crate::registry::param!("decrement", "probability", "[0, 1]", "2.0", "BLUE's step down on an empty dequeue"),
        crate::registry::param!("blue_threshold", "time", "> 0, or \"off\"", "\"0ms\"", "a sojourn above it raises BLUE's probability (ns-3; Linux: off)"),
        crate::registry::param!("ce_threshold", "time", "> 0; unset = off", "\"0ms\"", "CE-mark ECN-capable packets above this sojourn (needs ecn; ns-3 CeThreshold)"),
        crate::registry::param!("use_l4s", "", "true/false; needs ce_threshold", "", "ECT(1)/CE packets get the step only, no COBALT (ns-3 UseL4s)"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        CobaltConfig::validate(self)
    }
}

impl super::registry::QueueKind for CobaltConfig {
    const FIFO: bool = true;
    fn build(&self, _: &mut super::PortCtx) -> Box<dyn QueueDisc> {
        Box::new(Cobalt::new(self))
    }
}

/// The cases of ns-3's `cobalt-queue-disc-test-suite.cc`, each with its
/// assertions, on the same scripted enqueue/dequeue times.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStream;
    use crate::net::packet::Ecn;

    const MS: Time = 1_000_000;

    fn cfg(extra: &str) -> CobaltConfig {
        let c: CobaltConfig = toml::from_str(extra).unwrap();
        c.validate().unwrap();
        c
    }

    /// The queue, its random stream and its drops, driven at given times.
    struct Bench {
        q: Cobalt,
        rng: RngStream,
        dropped: Vec<(Packet, DropCause)>,
        overflow: u32,
        marked: u32,
        uid: u64,
    }

    impl Bench {
        fn new(c: &CobaltConfig, seed: u64) -> Self {
            Bench {
                q: Cobalt::new(c),
                rng: RngStream::new(seed, 1),
                dropped: Vec::new(),
                overflow: 0,
                marked: 0,
                uid: 0,
            }
        }
        fn enqueue(&mut self, now: Time, size: u32, ect: bool) {
            let mut ctx = QdCtx {
                now,
                rng: &mut self.rng,
                dropped: &mut self.dropped,
                marked: 0,
            };
            let p = Packet {
                uid: self.uid,
                size,
                enq_time: now,
                ecn: if ect { Ecn::Ect0 } else { Ecn::NotEct },
                ..Default::default()
            };
            self.uid += 1;
            if self.q.enqueue(p, &mut ctx).is_err() {
                self.overflow += 1;
            }
        }
        fn dequeue(&mut self, now: Time) -> Option<Packet> {
            let mut ctx = QdCtx {
                now,
                rng: &mut self.rng,
                dropped: &mut self.dropped,
                marked: 0,
            };
            let p = self.q.dequeue(&mut ctx);
            self.marked += ctx.marked;
            p
        }
    }

    #[test]
    fn defaults_are_ns3s() {
        let c = cfg("");
        assert_eq!(c.limit, Limit::Bytes(1_500_000));
        assert_eq!((c.target.0, c.interval.0), (5 * MS, 100 * MS));
        assert_eq!((c.pdrop, c.increment, c.decrement), (0.0, 1.0 / 256.0, 1.0 / 4096.0));
        assert_eq!(c.blue_threshold, BlueThreshold::At(Dur(400 * MS)));
        assert!(!c.ecn);
    }

    /// Test 1: six packets in, six out in order, no drops (BLUE off,
    /// target 4 ms, interval 50 ms, in packets and in bytes).
    #[test]
    fn ns3_basic_enqueue_dequeue() {
        for limit in ["limit = 1500", "limit = \"1500000B\""] {
            let c = cfg(&format!(
                "{limit}\ntarget = \"4ms\"\ninterval = \"50ms\"\nblue_threshold = \"off\""
            ));
            let mut b = Bench::new(&c, 1);
            for k in 0..6 {
                b.enqueue(0, 1000, false);
                assert_eq!(b.q.len_pkts(), k + 1);
            }
            for k in 0..6u64 {
                assert_eq!(b.dequeue(0).unwrap().uid, k);
                assert_eq!(b.q.len_pkts(), 5 - k as usize);
            }
            assert!(b.dequeue(0).is_none());
            assert!(b.dropped.is_empty() && b.overflow == 0);
        }
    }

    /// Test 2: 200 packets, one every 10 ms, into a 100-packet queue never
    /// served: overflow drops, and BLUE's probability rises from 0.
    #[test]
    fn ns3_drop_test_overflow_raises_pdrop() {
        for limit in ["limit = 100", "limit = \"150000B\""] {
            let c = cfg(&format!("{limit}\nblue_threshold = \"off\""));
            let mut b = Bench::new(&c, 1);
            for i in 0..200 {
                b.enqueue((i + 1) * 10 * MS, 1500, true);
            }
            assert_eq!(b.overflow, 100);
            // one increment per overflow: they are 10 ms apart, above target
            assert_eq!(b.q.vars().p_drop, 100.0 / 256.0);
        }
    }

    /// Test 3: 20 packets at t = 0; dequeues at 2·target, then at
    /// 2·target + 2·interval (twice), then at twice that.
    #[test]
    fn ns3_mark_test() {
        let first = 2 * 5 * MS;
        let second = first + 2 * 100 * MS;
        // case 1: not ECN-capable, ecn off: the second dequeue drops
        let c = cfg("limit = 500\nblue_threshold = \"off\"");
        let mut b = Bench::new(&c, 1);
        (0..20).for_each(|_| b.enqueue(0, 1000, false));
        b.dequeue(first);
        assert!(b.dropped.is_empty(), "no drop within the first interval");
        let drops_before_first = b.q.len_pkts();
        b.dequeue(second);
        // drop_next was pulled to 10 ms, so the drops go on while due:
        // 10 → 80.7 → 138.4 → 188.4 → 233.1 ms (count 1 → 5), four drops
        assert_eq!(b.dropped.len(), 4);
        assert_eq!(b.q.len_pkts(), 14);

        // case 2: ECN-capable, ecn on: marks where case 1 dropped
        let c = cfg("limit = 500\necn = true\nblue_threshold = \"off\"");
        let mut b = Bench::new(&c, 1);
        (0..20).for_each(|_| b.enqueue(0, 1000, true));
        b.dequeue(first);
        assert_eq!((b.q.len_pkts(), b.marked, b.dropped.len()), (19, 0, 0));
        let before_first_mark = b.q.len_pkts();
        b.dequeue(second);
        assert_eq!((b.q.len_pkts(), b.marked, b.dropped.len()), (18, 1, 0));
        assert_eq!(before_first_mark, drops_before_first, "same packet N");
        // drop_next was pulled to now: marked again at the same time
        assert_eq!(b.q.vars().drop_next, second);
        b.dequeue(second);
        assert_eq!((b.q.len_pkts(), b.marked, b.dropped.len()), (17, 2, 0));
        b.dequeue(2 * second);
        assert_eq!((b.q.len_pkts(), b.marked, b.dropped.len()), (16, 3, 0));

        // case 3: three ECN-capable packets, then 17 that are not
        let mut b = Bench::new(&c, 1);
        (0..3).for_each(|_| b.enqueue(0, 1000, true));
        (0..17).for_each(|_| b.enqueue(0, 1000, false));
        b.dequeue(first);
        b.dequeue(second);
        b.dequeue(second);
        assert_eq!((b.q.len_pkts(), b.marked, b.dropped.len()), (17, 2, 0));
        // due again: a not-ECT head is dropped, as many times as drop_next
        // is due in this dequeue, and one packet is handed out
        let count_before = b.q.vars().count;
        let out = b.dequeue(2 * second);
        assert!(out.is_some());
        let drops = b.dropped.len();
        assert!(drops >= 1, "the not-ECT packet is dropped");
        assert_eq!(b.q.len_pkts(), 17 - drops - 1);
        assert_eq!(b.q.vars().count, count_before + drops as u32);
        assert_eq!(b.marked, 2, "still two marks");
    }

    /// Test 4: CE threshold 1 ms; arrivals every 1 ms, service every
    /// 1.1 ms so the 11th packet waits 1.1 ms and is marked; arrivals then
    /// slow (1.2 ms) and speed up again (1 ms) — ns-3's script exactly,
    /// same-time events in the order ns-3 runs them (as scheduled).
    #[test]
    fn ns3_ce_threshold_test() {
        let c = cfg("ecn = true\nce_threshold = \"1ms\"\nblue_threshold = \"off\"");
        let mut b = Bench::new(&c, 1);
        const US: Time = 1_000;
        // (time, order scheduled, is_enqueue)
        let mut ev: Vec<(Time, u32, bool)> = Vec::new();
        let mut seq = 0;
        let mut push = |ev: &mut Vec<_>, t, enq| {
            ev.push((t, seq, enq));
            seq += 1;
        };
        (1..=11).for_each(|i| push(&mut ev, i * MS, true));
        (1..=11).for_each(|i| push(&mut ev, i * 1100 * US, false));
        (1..=9).for_each(|i| push(&mut ev, 11 * MS + i * 1200 * US, true));
        (1..=9).for_each(|i| push(&mut ev, 11 * MS + i * 1100 * US, false));
        (1..=10).for_each(|i| push(&mut ev, 20 * MS + i * MS, true));
        (1..=10).for_each(|i| push(&mut ev, 11 * MS + i * 1100 * US, false));
        ev.sort();
        let mut checked = 0;
        for (t, _, enq) in ev {
            if enq {
                b.enqueue(t, 1000, true);
                continue;
            }
            b.dequeue(t);
            // ns-3 also asserts 3 marks for dequeues after 31 ms, but its
            // script's last dequeue is at 22 ms, so that check never runs
            assert!(t <= 22 * MS);
            if t > 11 * MS && t < 28 * MS {
                assert_eq!(b.marked, 1, "at {t} ns, queue {}", b.q.len_pkts());
                checked += 1;
            }
        }
        assert_eq!(checked, 20, "dequeues checked in (11, 28) ms");
        assert!(b.dropped.is_empty());
    }

    /// Test 5: 200 packets at t = 0, 100 dequeues 10 ms apart. From the
    /// 41st dequeue (410 ms) every head has waited over 400 ms, so BLUE's
    /// probability rises by 1/256 sixty times: exactly 0.234375. ns-3's
    /// stream 1 gives 49 drops (CoDel's and BLUE's); ours differ by the
    /// random stream: over 40 seeds the mean is within 15 % of 49. With ECN
    /// on and no BLUE threshold: no drop, probability 0.
    #[test]
    fn ns3_enhanced_blue_test() {
        let mut total = 0;
        let seeds = 40;
        for seed in 0..seeds {
            let c = cfg("");
            let mut b = Bench::new(&c, seed);
            (0..200).for_each(|_| b.enqueue(0, 1500, true));
            (1..=100).for_each(|i| {
                b.dequeue(i * 10 * MS);
            });
            assert_eq!(b.q.vars().p_drop, 0.234375, "seed {seed}");
            let drops = b.dropped.len();
            assert!((20..=80).contains(&drops), "seed {seed}: {drops} drops");
            total += drops;
        }
        let mean = total as f64 / seeds as f64;
        println!("enhanced BLUE: mean drops {mean:.1} over {seeds} seeds (ns-3 stream 1: 49)");
        assert!((mean / 49.0 - 1.0).abs() < 0.15, "mean drops {mean}");

        let c = cfg("ecn = true\nblue_threshold = \"off\"");
        let mut b = Bench::new(&c, 1);
        (0..200).for_each(|_| b.enqueue(0, 1500, true));
        (1..=100).for_each(|i| {
            b.dequeue(i * 10 * MS);
        });
        assert_eq!(b.q.vars().p_drop, 0.0);
        assert!(b.dropped.is_empty());
    }

    /// BLUE decays by 1/4096 per empty dequeue spaced more than `target`
    /// apart (Linux `cobalt_queue_empty`), not more often.
    #[test]
    fn blue_decays_on_empty_dequeues_once_per_target() {
        let c = cfg("pdrop = 0.01");
        let mut b = Bench::new(&c, 1);
        for i in 1..=10 {
            b.dequeue(i * 6 * MS); // 6 ms apart: each counts
        }
        let p = b.q.vars().p_drop;
        assert!((p - (0.01 - 10.0 / 4096.0)).abs() < 1e-15, "{p}");
        for i in 1..=12 {
            b.dequeue(60 * MS + i * MS); // 1 ms apart: at 66 and 72 ms only
        }
        let p2 = b.q.vars().p_drop;
        assert!((p2 - (p - 2.0 / 4096.0)).abs() < 1e-15, "{p2}");
    }
}
