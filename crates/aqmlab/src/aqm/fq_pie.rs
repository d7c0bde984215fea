//! FQ-PIE — FQ-CoDel's flow queueing with a PIE controller in each queue.
//!
//! Source: Linux `net/sched/sch_fq_pie.c` (G. Ramakrishnan, M. P. Tahiliani
//! et al., 2020: `fq_pie_qdisc_enqueue`, `fq_pie_qdisc_dequeue`,
//! `fq_pie_timer`) with the PIE functions it calls from
//! `net/sched/sch_pie.c` (`pie_drop_early`, `pie_process_dequeue`,
//! `pie_calculate_probability`, `pie_vars_init`); PIE itself is RFC 8033.
//!
//! - Flow queueing is FQ-CoDel's (RFC 8290 §4), the same code
//!   ([`super::flow_queues`]): packets hashed into `flows` queues, new/old
//!   flow lists, DRR with a byte `quantum`; a new queue that empties moves
//!   to the old list if that list is non-empty.
//! - Each queue has its own PIE state. On arrival, with the whole queue at
//!   `limit` the packet is tail-dropped (unlike FQ-CoDel, FQ-PIE does not
//!   drop from the fattest flow). Otherwise `pie_drop_early` runs on the
//!   packet's queue: no drop while its burst allowance lasts, while its
//!   `qdelay < target/2` and `prob < 0.2`, or while its backlog is under two
//!   `mtu`; else de-randomised drop with probability `prob` (accumulated
//!   probability below 0.85: keep; at or above 8.5: drop). A packet chosen
//!   for drop is CE-marked instead when `ecn` is on, the packet is
//!   ECN-capable and `prob ≤ ecn_prob`.
//! - On dequeue (`pie_process_dequeue`, timestamp mode, the Linux default):
//!   the queue's `qdelay` is the packet's sojourn time, 0 when its queue is
//!   left empty; the burst allowance shrinks by the time since the queue's
//!   previous dequeue.
//! - Every `t_update` every queue's probability is updated
//!   (`pie_calculate_probability`): `α, β` halved below `prob` 0.1 and
//!   quartered for each further decade (down to ÷2048, RFC 8033 §4.2);
//!   `Δ = α·(qdelay − target) + β·(qdelay − qdelay_old)`; Δ capped at 0.02
//!   once `prob ≥ 0.1`; +0.02 when `qdelay > 250 ms`; `prob` clamped to
//!   [0, 1]; `prob −= prob/64` when `qdelay` and `qdelay_old` are both 0; the
//!   queue's state is reset (burst allowance refilled) when both delays are
//!   under `target/2` and `prob` is 0. Linux runs this from a timer; here it
//!   runs at the next enqueue or dequeue for every period that has passed
//!   (an idle queue keeps `qdelay = 0`, so the result is the same).
//!
//! Not modelled: Linux's `memory_limit` (32 MB of socket-buffer memory, an
//! overmemory counter that does not drop), the optional dequeue-rate
//! estimator (`dq_rate_estimator`, off by default) and byte mode.
//!
//! Parameters (Linux defaults): `limit` = 10240 packets, `flows` = 1024,
//! `quantum` = 1514 bytes, `target` = 15 ms, `t_update` = 15 ms,
//! `alpha` = 0.125 Hz, `beta` = 1.25 Hz (tc's 2 and 20 in 1/16),
//! `max_burst` = 150 ms, `mtu` = 1514 bytes, `ecn` = false, `ecn_prob` = 0.1.

use super::flow_queues::FlowQueues;
use super::{DropCause, Limit, QdCtx, QueueDisc};
use crate::engine::{to_secs, Time};
use crate::net::packet::{Ecn, Packet};
use crate::units::Dur;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FqPieConfig {
    #[serde(default = "d_limit")]
    pub limit: Limit,
    #[serde(default = "d_flows")]
    pub flows: u32,
    #[serde(default = "d_quantum")]
    pub quantum: u32,
    #[serde(default = "d_15ms")]
    pub target: Dur,
    #[serde(default = "d_15ms")]
    pub t_update: Dur,
    #[serde(default = "d_alpha")]
    pub alpha: f64,
    #[serde(default = "d_beta")]
    pub beta: f64,
    #[serde(default = "d_burst")]
    pub max_burst: Dur,
    #[serde(default = "d_quantum")]
    pub mtu: u32,
    #[serde(default)]
    pub ecn: bool,
    #[serde(default = "d_ecn_prob")]
    pub ecn_prob: f64,
}

fn d_limit() -> Limit {
    Limit::Packets(10240)
}
fn d_flows() -> u32 {
    1024
}
fn d_quantum() -> u32 {
    1514
}
fn d_15ms() -> Dur {
    Dur(15_000_000)
}
fn d_alpha() -> f64 {
    0.125
}
fn d_beta() -> f64 {
    1.25
}
fn d_burst() -> Dur {
    Dur(150_000_000)
}
fn d_ecn_prob() -> f64 {
    0.1
}

impl FqPieConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        let e = |k: &str, m: String| Err((k.to_string(), m));
        self.limit.validate().map_err(|m| ("limit".to_string(), m))?;
        if self.flows == 0 || self.flows > 65536 {
            return e("flows", format!("must be in 1..=65536, got {}", self.flows));
        }
        if self.quantum == 0 {
            return e("quantum", "must be a positive number of bytes".into());
        }
        if self.target.0 == 0 {
            return e("target", "must be positive".into());
        }
        if self.t_update.0 == 0 {
            return e("t_update", "must be positive".into());
        }
        for (k, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(v >= 0.0 && v.is_finite()) {
                return e(k, format!("must be a non-negative number, got {v}"));
            }
        }
        if self.mtu == 0 {
            return e("mtu", "must be a positive number of bytes".into());
        }
        if !(0.0..=1.0).contains(&self.ecn_prob) {
            return e("ecn_prob", format!("must be in [0, 1], got {}", self.ecn_prob));
        }
        Ok(())
    }
}

/// `struct pie_vars` in timestamp mode.
#[derive(Clone, Debug)]
struct PieVars {
    prob: f64,
    accu_prob: f64,
    qdelay: Time,
    qdelay_old: Time,
    burst_time: Time,
    /// Time of the queue's previous dequeue (`dq_tstamp`).
    dq_tstamp: Option<Time>,
}

impl PieVars {
    fn new(max_burst: Time) -> Self {
        PieVars {
            prob: 0.0,
            accu_prob: 0.0,
            qdelay: 0,
            qdelay_old: 0,
            burst_time: max_burst,
            dq_tstamp: None,
        }
    }
}

pub struct FqPie {
    c: FqPieConfig,
    fq: FlowQueues<PieVars>,
    next_update: Time,
}

/// `pie_calculate_probability` for one queue (timestamp mode).
fn calculate_probability(c: &FqPieConfig, v: &mut PieVars) {
    let (target, qdelay, qdelay_old) = (c.target.0, v.qdelay, v.qdelay_old);
    let (mut alpha, mut beta) = (c.alpha, c.beta);
    if v.prob < 0.1 {
        alpha /= 2.0;
        beta /= 2.0;
        let mut power = 100.0;
        while v.prob < 1.0 / power && power <= 1e6 {
            alpha /= 4.0;
            beta /= 4.0;
            power *= 10.0;
        }
    }
    let mut delta = alpha * (to_secs(qdelay) - to_secs(target))
        + beta * (to_secs(qdelay) - to_secs(qdelay_old));
    if delta > 0.02 && v.prob >= 0.1 {
        delta = 0.02;
    }
    if qdelay > 250_000_000 {
        delta += 0.02;
    }
    let raw = v.prob + delta;
    let overflow = raw > 1.0;
    v.prob = raw.clamp(0.0, 1.0);
    if qdelay == 0 && qdelay_old == 0 && !overflow {
        v.prob -= v.prob / 64.0;
    }
    if qdelay < target / 2 && qdelay_old < target / 2 && v.prob == 0.0 {
        // pie_vars_init: a new measurement cycle
        v.burst_time = c.max_burst.0;
        v.dq_tstamp = None;
        v.accu_prob = 0.0;
    }
    v.qdelay_old = qdelay;
}

impl FqPie {
    pub fn new(c: &FqPieConfig, perturb: u64) -> Self {
        FqPie {
            c: c.clone(),
            fq: FlowQueues::new(c.flows, c.quantum, perturb, || {
                PieVars::new(c.max_burst.0)
            }),
            next_update: c.t_update.0,
        }
    }

    /// The drop probability of the queue `pkt` would join (for tests).
    pub fn prob_of(&self, pkt: &Packet) -> f64 {
        self.fq.flows[self.fq.index_of(pkt) as usize].state.prob
    }

    /// `fq_pie_timer`, for every period that has passed.
    fn catch_up(&mut self, now: Time) {
        while now >= self.next_update {
            for f in &mut self.fq.flows {
                calculate_probability(&self.c, &mut f.state);
            }
            self.next_update += self.c.t_update.0;
        }
    }

    /// `pie_drop_early` for one queue with `backlog` bytes.
    fn drop_early(c: &FqPieConfig, v: &mut PieVars, backlog: u64, ctx: &mut QdCtx) -> bool {
        if v.burst_time > 0 {
            return false;
        }
        if v.qdelay < c.target.0 / 2 && v.prob < 0.2 {
            return false;
        }
        if backlog < 2 * c.mtu as u64 {
            return false;
        }
        if v.prob == 0.0 {
            v.accu_prob = 0.0;
        } else {
            v.accu_prob += v.prob;
        }
        if v.accu_prob < 0.85 {
            return false;
        }
        if v.accu_prob >= 8.5 {
            return true;
        }
        if ctx.rng.uniform() < v.prob {
            v.accu_prob = 0.0;
            return true;
        }
        false
    }
}

impl QueueDisc for FqPie {
    fn kind(&self) -> &'static str {
        "fq_pie"
    }

    fn enqueue(&mut self, mut pkt: Packet, ctx: &mut QdCtx) -> Result<(), DropCause> {
        self.catch_up(ctx.now);
        let idx = self.fq.index_of(&pkt);
        let full = self.c.limit.exceeded_by(self.fq.pkts, self.fq.bytes, pkt.size);
        let f = &mut self.fq.flows[idx as usize];
        if full {
            f.state.accu_prob = 0.0;
            return Err(DropCause::Overflow);
        }
        if FqPie::drop_early(&self.c, &mut f.state, f.bytes, ctx) {
            if self.c.ecn && pkt.ecn.capable() && f.state.prob <= self.c.ecn_prob {
                pkt.ecn = Ecn::Ce;
                ctx.marked += 1;
            } else {
                f.state.accu_prob = 0.0;
                return Err(DropCause::Early);
            }
        }
        self.fq.push(idx, pkt);
        Ok(())
    }

    fn dequeue(&mut self, ctx: &mut QdCtx) -> Option<Packet> {
        self.catch_up(ctx.now);
        loop {
            let (idx, from_new) = self.fq.next_flow()?;
            match self.fq.pop(idx) {
                Some(p) => {
                    self.fq.charge(idx, p.size);
                    // pie_process_dequeue, timestamp mode
                    let f = &mut self.fq.flows[idx as usize];
                    let v = &mut f.state;
                    v.qdelay = if f.bytes == 0 { 0 } else { ctx.now - p.enq_time };
                    let dtime = v.dq_tstamp.map_or(0, |t| ctx.now - t);
                    v.dq_tstamp = Some(ctx.now);
                    v.burst_time = v.burst_time.saturating_sub(dtime);
                    return Some(p);
                }
                None => self.fq.retire(idx, from_new),
            }
        }
    }

    fn len_pkts(&self) -> usize {
        self.fq.pkts
    }
    fn len_bytes(&self) -> u64 {
        self.fq.bytes
    }
}

impl super::registry::Registered for FqPieConfig {
    const KIND: &'static str = "fq_pie";
    const ABOUT: &'static str =
        "flow queueing with PIE per queue (Linux sch_fq_pie; PIE: RFC 8033)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("limit", "packets, or bytes with a unit", "> 0", "0", "buffer size over all queues (tail drop)"),
        crate::registry::param!("flows", "queues", "1 to 65536", "0", "number of flow queues"),
        crate::registry::param!("quantum", "bytes", "≥ 1", "0", "DRR quantum per round"),
        crate::registry::param!("target", "time", "> 0", "\"0ms\"", "PIE reference queueing delay per queue"),
        crate::registry::param!("t_update", "time", "> 0", "\"0ms\"", "probability update period"),
        crate::registry::param!("alpha", "1/s", "≥ 0", "-1.0", "gain on the delay error"),
        crate::registry::param!("beta", "1/s", "≥ 0", "-1.0", "gain on the delay trend"),
        crate::registry::param!("max_burst", "time", "≥ 0", "", "burst allowance per queue"),
        crate::registry::param!("mtu", "bytes", "≥ 1", "0", "no early drop below 2·mtu queued in the flow"),
        crate::registry::param!("ecn", "", "true/false", "", "mark ECN-capable packets while prob ≤ ecn_prob"),
        crate::registry::param!("ecn_prob", "probability", "[0, 1]", "1.5", "above it ECN-capable packets are dropped too"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        FqPieConfig::validate(self)
    }
}

impl super::registry::QueueKind for FqPieConfig {
    fn build(&self, port: &mut super::PortCtx) -> Box<dyn QueueDisc> {
        use rand::RngCore;
        Box::new(FqPie::new(self, port.rng.next_u64()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStream;
    use crate::net::packet::FlowId;

    fn cfg() -> FqPieConfig {
        toml::from_str("").unwrap()
    }

    fn pkt(flow: u32, uid: u64, size: u32, now: Time) -> Packet {
        Packet {
            uid,
            flow: FlowId(flow),
            size,
            enq_time: now,
            flags: crate::net::packet::flags::DATA,
            ..Default::default()
        }
    }

    /// `pie_calculate_probability` by hand: qdelay 40 ms against a 15 ms
    /// target from prob 0 scales α, β by 1/2048 (prob < 10⁻⁶); from 0.2 no
    /// scaling and the 2 % cap; above 250 ms +2 %; two zero delays decay by
    /// 1/64.
    #[test]
    fn probability_update_follows_linux_pie() {
        let c = cfg();
        let mut v = PieVars::new(0);
        v.qdelay = 40_000_000;
        calculate_probability(&c, &mut v);
        let want = (0.125 * 0.025 + 1.25 * 0.040) / 2048.0;
        assert!((v.prob - want).abs() < 1e-12, "{} vs {want}", v.prob);
        assert_eq!(v.qdelay_old, 40_000_000);
        let mut v = PieVars::new(0);
        v.prob = 0.2;
        v.qdelay = 40_000_000;
        calculate_probability(&c, &mut v);
        assert!((v.prob - 0.22).abs() < 1e-12, "capped at +0.02: {}", v.prob);
        let mut v = PieVars::new(0);
        v.prob = 0.5;
        v.qdelay = 300_000_000;
        v.qdelay_old = 300_000_000;
        calculate_probability(&c, &mut v);
        // α·0.285 = 0.035625 → capped 0.02, then +0.02 above 250 ms
        assert!((v.prob - 0.54).abs() < 1e-12, "{}", v.prob);
        let mut v = PieVars::new(0);
        v.prob = 0.5;
        calculate_probability(&c, &mut v);
        // Δ = −α·0.015 = −0.001875, then ×63/64
        let want = (0.5 - 0.125 * 0.015) * 63.0 / 64.0;
        assert!((v.prob - want).abs() < 1e-12, "{} vs {want}", v.prob);
    }

    /// A flow with a standing queue is dropped by its own PIE; a sparse flow
    /// sharing the link is never dropped and is served first (new list).
    #[test]
    fn flows_are_isolated() {
        let c = cfg();
        let mut q = FqPie::new(&c, 7);
        let mut rng = RngStream::new(1, 1);
        let mut dropped = Vec::new();
        let (mut drops_fat, mut drops_sparse, mut uid) = (0, 0, 0u64);
        let mut sparse_wait: Time = 0;
        // 10 Mb/s: one 1500 B packet per 1.2 ms; the fat flow offers 2 per slot
        for slot in 0..20_000u64 {
            let now = slot * 1_200_000;
            let mut ctx = QdCtx { now, rng: &mut rng, dropped: &mut dropped, marked: 0 };
            for _ in 0..2 {
                uid += 1;
                if q.enqueue(pkt(1, uid, 1500, now), &mut ctx).is_err() {
                    drops_fat += 1;
                }
            }
            if slot % 50 == 0 {
                uid += 1;
                if q.enqueue(pkt(2, uid, 100, now), &mut ctx).is_err() {
                    drops_sparse += 1;
                }
            }
            if let Some(p) = q.dequeue(&mut ctx) {
                if p.flow == FlowId(2) {
                    sparse_wait = sparse_wait.max(now - p.enq_time);
                }
            }
        }
        assert!(dropped.is_empty(), "FQ-PIE drops only on arrival");
        assert_eq!(drops_sparse, 0);
        // half the fat flow's packets cannot be sent: PIE must drop them
        // early (the 10240-packet limit is never reached)
        assert!(drops_fat > 15_000, "{drops_fat}");
        assert!(q.len_pkts() < 1000, "{}", q.len_pkts());
        // at most one fat packet ahead of it (its queue may still sit on the
        // old list from its previous packet, as in Linux)
        assert!(sparse_wait <= 2_400_000, "sparse flow waited {sparse_wait} ns");
        let fat = pkt(1, 0, 1500, 0);
        assert!(q.prob_of(&fat) > 0.3, "{}", q.prob_of(&fat));
    }

    /// With `ecn`, ECN-capable arrivals are marked while prob ≤ ecn_prob.
    #[test]
    fn marks_ect_packets_at_low_probability() {
        let mut c = cfg();
        c.ecn = true;
        let mut q = FqPie::new(&c, 7);
        let mut rng = RngStream::new(1, 1);
        let mut dropped = Vec::new();
        let (mut marks, mut early) = (0, 0);
        for slot in 0..4_000u64 {
            let now = slot * 1_200_000;
            let mut ctx = QdCtx { now, rng: &mut rng, dropped: &mut dropped, marked: 0 };
            for k in 0..2 {
                let mut p = pkt(1, slot * 2 + k, 1500, now);
                p.ecn = Ecn::Ect0;
                if q.enqueue(p, &mut ctx) == Err(DropCause::Early) {
                    early += 1;
                }
            }
            marks += ctx.marked;
            q.dequeue(&mut ctx);
        }
        assert!(marks > 0, "no marks");
        // marking does not relieve the overload: prob climbs past 0.1,
        // then ECT packets are dropped
        assert!(early > 0, "no drops above ecn_prob");
    }
}
