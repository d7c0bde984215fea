//! PIE — Proportional Integral controller Enhanced.
//!
//! Source: RFC 8033 (R. Pan, P. Natarajan, F. Baker, G. White, 2017), §4
//! (random drop, drop-probability calculation, burst tolerance, ECN) and the
//! pseudo-code of §6 (`enqueue`, `drop_early` with de-randomisation,
//! `calculate_drop_prob`).
//!
//! Every `t_update` the drop probability is updated from the queueing delay:
//! `p = α·(qdelay − target) + β·(qdelay − qdelay_old)` (seconds), scaled down
//! while `drop_prob` is small (÷2048 below 10⁻⁶ … ÷2 below 0.1), capped at
//! +0.02 per update once `drop_prob ≥ 0.1`, `drop_prob += p`, decayed by 2%
//! when both delays are below target/2, clamped to [0, 1]. Arrivals are
//! dropped (or CE-marked when `ecn` and `drop_prob ≤ mark_ecn_threshold`)
//! with de-randomised probability `drop_prob`, except: while the burst
//! allowance (`max_burst`, refilled when the queue is calm) lasts; when
//! `qdelay_old < target/2` and `drop_prob < 0.2`; or when the backlog is at
//! most two mean packets. A full queue tail-drops.
//!
//! The queueing delay is measured with timestamps (RFC 8033 §5.2 allows it):
//! the sojourn time of the last packet dequeued, 0 once the queue is empty.
//! The periodic update runs lazily: at each enqueue/dequeue every update
//! period that has elapsed is applied in order (an empty queue contributes
//! qdelay = 0, so idle periods decay exactly as with a timer).
//!
//! Parameters: `limit` = 1000 packets, `target` = 15 ms, `t_update` = 15 ms,
//! `alpha` = 0.125 Hz, `beta` = 1.25 Hz, `max_burst` = 150 ms, `ecn` = false,
//! `mark_ecn_threshold` = 0.1, `mean_pktsize` = 1000 bytes, `derandomize` = true.

use super::{DropCause, Limit, QdCtx, QueueDisc};
use crate::engine::{to_secs, Time};
use crate::net::packet::{Ecn, Packet};
use crate::units::Dur;
use serde::{Deserialize, Serialize};
use super::fifo::Fifo;

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PieConfig {
    #[serde(default = "d_limit")]
    pub limit: Limit,
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
    #[serde(default)]
    pub ecn: bool,
    #[serde(default = "d_ecnth")]
    pub mark_ecn_threshold: f64,
    #[serde(default = "d_pkt")]
    pub mean_pktsize: u32,
    #[serde(default = "d_true")]
    pub derandomize: bool,
}

fn d_limit() -> Limit {
    Limit::Packets(1000)
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
fn d_ecnth() -> f64 {
    0.1
}
fn d_pkt() -> u32 {
    1000
}
fn d_true() -> bool {
    true
}

impl PieConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        self.limit
            .validate()
            .map_err(|m| ("limit".to_string(), m))?;
        if self.target.0 == 0 {
            return Err(("target".into(), "must be positive".into()));
        }
        if self.t_update.0 == 0 {
            return Err(("t_update".into(), "must be positive".into()));
        }
        if !(self.alpha >= 0.0 && self.alpha.is_finite()) {
            return Err((
                "alpha".into(),
                format!("must be a non-negative number, got {}", self.alpha),
            ));
        }
        if !(self.beta >= 0.0 && self.beta.is_finite()) {
            return Err((
                "beta".into(),
                format!("must be a non-negative number, got {}", self.beta),
            ));
        }
        if !(0.0..=1.0).contains(&self.mark_ecn_threshold) {
            return Err(("mark_ecn_threshold".into(), "must be in [0, 1]".into()));
        }
        if self.mean_pktsize == 0 {
            return Err(("mean_pktsize".into(), "must be positive".into()));
        }
        Ok(())
    }
}

pub struct Pie {
    c: PieConfig,
    q: Fifo,
    drop_prob: f64,
    accu_prob: f64,
    qdelay: Time,
    qdelay_old: Time,
    burst_allowance: Time,
    next_update: Time,
}

impl Pie {
    pub fn new(c: &PieConfig) -> Self {
        Pie {
            c: c.clone(),
            q: Fifo::with_capacity(1024),
            drop_prob: 0.0,
            accu_prob: 0.0,
            qdelay: 0,
            qdelay_old: 0,
            burst_allowance: c.max_burst.0,
            next_update: c.t_update.0,
        }
    }

    pub fn drop_prob(&self) -> f64 {
        self.drop_prob
    }

    /// RFC 8033 `calculate_drop_prob`, once.
    fn update(&mut self) {
        let target = self.c.target.0;
        let cur = self.qdelay;
        self.burst_allowance = self.burst_allowance.saturating_sub(self.c.t_update.0);
        let mut p = self.c.alpha * (to_secs(cur) - to_secs(target))
            + self.c.beta * (to_secs(cur) - to_secs(self.qdelay_old));
        let dp = self.drop_prob;
        p /= if dp < 1e-6 {
            2048.0
        } else if dp < 1e-5 {
            512.0
        } else if dp < 1e-4 {
            128.0
        } else if dp < 1e-3 {
            32.0
        } else if dp < 1e-2 {
            8.0
        } else if dp < 0.1 {
            2.0
        } else {
            1.0
        };
        if dp >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        self.drop_prob += p;
        if cur < target / 2 && self.qdelay_old < target / 2 {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        if self.drop_prob == 0.0 && cur < target / 2 && self.qdelay_old < target / 2 {
            self.burst_allowance = self.c.max_burst.0;
        }
        self.qdelay_old = cur;
    }

    fn catch_up(&mut self, now: Time) {
        while now >= self.next_update {
            self.update();
            self.next_update += self.c.t_update.0;
        }
    }

    /// RFC 8033 `drop_early`.
    fn drop_early(&mut self, ctx: &mut QdCtx) -> bool {
        let target = self.c.target.0;
        if (self.qdelay_old < target / 2 && self.drop_prob < 0.2)
            || self.q.bytes() <= 2 * self.c.mean_pktsize as u64
        {
            return false;
        }
        if !self.c.derandomize {
            return ctx.rng.uniform() < self.drop_prob;
        }
        if self.drop_prob == 0.0 {
            self.accu_prob = 0.0;
        }
        self.accu_prob += self.drop_prob;
        if self.accu_prob < 0.85 {
            return false;
        }
        if self.accu_prob >= 8.5 {
            return true;
        }
        if ctx.rng.uniform() < self.drop_prob {
            self.accu_prob = 0.0;
            return true;
        }
        false
    }
}

impl QueueDisc for Pie {
    fn kind(&self) -> &'static str {
        "pie"
    }

    fn enqueue(&mut self, mut pkt: Packet, ctx: &mut QdCtx) -> Result<(), DropCause> {
        self.catch_up(ctx.now);
        if self.q.would_exceed(&self.c.limit, pkt.size) {
            self.accu_prob = 0.0;
            return Err(DropCause::Overflow);
        }
        if self.burst_allowance == 0 && self.drop_early(ctx) {
            if self.c.ecn && pkt.ecn.capable() && self.drop_prob <= self.c.mark_ecn_threshold {
                pkt.ecn = Ecn::Ce;
                ctx.marked += 1;
            } else {
                self.accu_prob = 0.0;
                return Err(DropCause::Early);
            }
        }
        self.q.push_back(pkt);
        Ok(())
    }

    fn dequeue(&mut self, ctx: &mut QdCtx) -> Option<Packet> {
        self.catch_up(ctx.now);
        let p = self.q.pop_front();
        match &p {
            Some(p) => {
                self.qdelay = ctx.now - p.enq_time;
            }
            None => self.qdelay = 0,
        }
        if self.q.is_empty() && p.is_none() {
            self.qdelay = 0;
        }
        p
    }

    fn len_pkts(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
}

impl super::registry::Registered for PieConfig {
    const KIND: &'static str = "pie";
    const ABOUT: &'static str = "Proportional Integral controller Enhanced (RFC 8033)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("limit", "packets, or bytes with a unit", "> 0", "0", "buffer size"),
        crate::registry::param!("target", "time", "> 0", "\"0ms\"", "reference queueing delay QDELAY_REF"),
        crate::registry::param!("t_update", "time", "> 0", "\"0ms\"", "probability update period T_UPDATE"),
        crate::registry::param!("alpha", "1/s", "≥ 0", "-1.0", "gain on the delay error"),
        crate::registry::param!("beta", "1/s", "≥ 0", "-1.0", "gain on the delay trend"),
        crate::registry::param!("max_burst", "time", "≥ 0", "", "burst allowance MAX_BURST"),
        crate::registry::param!("ecn", "", "true/false", "", "mark ECN-capable packets while the probability is low"),
        crate::registry::param!("mark_ecn_threshold", "probability", "[0, 1]", "1.5", "above it ECN-capable packets are dropped too"),
        crate::registry::param!("mean_pktsize", "bytes", "≥ 1", "0", "packet size of the byte-mode scaling"),
        crate::registry::param!("derandomize", "", "true/false", "", "RFC 8033 §5.1 de-randomization"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        PieConfig::validate(self)
    }
}

impl super::registry::QueueKind for PieConfig {
    const FIFO: bool = true;
    fn build(&self, _: &mut super::PortCtx) -> Box<dyn QueueDisc> {
        Box::new(Pie::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStream;

    const MS: Time = 1_000_000;

    #[test]
    fn update_law_scales_and_caps() {
        let mut q = Pie::new(&toml::from_str("").unwrap());
        // qdelay 30 ms vs target 15 ms from drop_prob 0: p = 0.125·0.015 + 1.25·0.030 = 0.039375, ÷2048
        q.qdelay = 30 * MS;
        q.update();
        assert!(
            (q.drop_prob - 0.039375 / 2048.0).abs() < 1e-12,
            "{}",
            q.drop_prob
        );
        // above 0.1 the per-update increase is capped at 0.02
        q.drop_prob = 0.5;
        q.qdelay_old = 0;
        q.qdelay = 500 * MS;
        q.update();
        assert!((q.drop_prob - 0.52).abs() < 1e-12);
        // calm queue: 2% decay per update
        q.qdelay = 0;
        q.qdelay_old = 0;
        q.drop_prob = 0.5;
        q.update();
        let expect = (0.5 + 0.125 * (-0.015) / 1.0) * 0.98;
        assert!(
            (q.drop_prob - expect).abs() < 1e-12,
            "{} vs {expect}",
            q.drop_prob
        );
    }

    /// A CBR source at 1.5× the service rate: PIE must hold the queueing
    /// delay near its 15 ms reference.
    #[test]
    fn delay_converges_near_reference_under_overload() {
        let mut q = Pie::new(&toml::from_str("").unwrap());
        let (mut rng, mut dropped) = (RngStream::new(1, 2), Vec::new());
        let (mut ta, mut ts) = (0u64, 0u64);
        let mut delays = Vec::new();
        while ts < 60_000 * MS {
            if ta <= ts {
                let mut c = QdCtx {
                    now: ta,
                    rng: &mut rng,
                    dropped: &mut dropped,
                    marked: 0,
                };
                let _ = q.enqueue(
                    Packet {
                        size: 1000,
                        enq_time: ta,
                        ..Default::default()
                    },
                    &mut c,
                );
                ta += 2 * MS / 3; // 1500 pkt/s
            } else {
                let mut c = QdCtx {
                    now: ts,
                    rng: &mut rng,
                    dropped: &mut dropped,
                    marked: 0,
                };
                if let Some(p) = q.dequeue(&mut c) {
                    if ts > 20_000 * MS {
                        delays.push(to_secs(ts - p.enq_time));
                    }
                }
                ts += MS; // 1000 pkt/s
            }
        }
        let mean = delays.iter().sum::<f64>() / delays.len() as f64;
        assert!(
            (mean - 0.015).abs() < 0.005,
            "mean queueing delay {mean} s, reference 0.015 s"
        );
        // De-randomisation drops after the accumulated probability reaches
        // 0.85, so drop_prob settles above the dropped fraction (1/3 here):
        // with p = drop_prob the mean gap is ⌈0.85/p⌉ + (1 − p)/p packets.
        let p = q.drop_prob();
        let gap = (0.85 / p).ceil() + (1.0 - p) / p;
        assert!(
            (1.0 / gap - 1.0 / 3.0).abs() < 0.05,
            "drop_prob {p}: expected drop fraction {}",
            1.0 / gap
        );
    }
}
