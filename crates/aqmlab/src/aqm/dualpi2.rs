//! DualPI2 — the DualQ Coupled AQM with a PI² base controller, for L4S.
//!
//! Sources, one per `variant`:
//! - `linux` (default): Linux `net/sched/sch_dualpi2.c` (merged for 6.17;
//!   read at torvalds/linux's stable tree as mirrored by gregkh/linux commit
//!   2519003dd5fb6f89f10f031e3a97ecb7c9d1b816): `dualpi2_reset_default`,
//!   `calculate_probability`, `must_drop`, `dualpi2_classic_marking`,
//!   `dualpi2_scalable_marking`, `dequeue_packet` (the WRR credit),
//!   `do_step_aqm`, `dualpi2_enqueue_skb`;
//! - `l4steam`: the L4S team's out-of-tree qdisc, the one their published
//!   Prague results ran on (L4STeam/linux, `net/sched/sch_dualpi2.c`, read
//!   at commit e1ec6e7961d4de69d7b5487fc612e78899c2eb98): the `linux`
//!   code with its defaults, except that an L packet may be step-marked
//!   only if the L queue already held more than one packet when it arrived
//!   (`dualpi2_qdisc_enqueue`: `apply_step = qdisc_qlen(q->l_queue) > 1`),
//!   which is mainline's rule with `min_qlen_step = 2`; the qdisc has no
//!   such parameter (the key may still be written beside the preset).
//!   Mainline's default `min_qlen_step = 0` step-marks every L packet that
//!   waited over `step_thresh`, even one alone in the queue: at a few
//!   Mbit/s, where one packet's transmission takes longer than 1 ms, that
//!   is nearly every packet;
//! - `rfc`: RFC 9332 ("Dual-Queue Coupled AQM for L4S"), Appendix A.1:
//!   Figure 2 (defaults), Figure 3 (enqueue), Figures 4–5 (dequeue with the
//!   overload handling), Figure 6 (the PI² update), the `laqm` ramp;
//! - `ns3`: the unmerged ns-3 `DualQCoupledPi2QueueDisc` (NITK 2017, Tom
//!   Henderson's 2019 update to draft -10), read at
//!   AlexandruTabacaru/ns-3-dev-git-rp commit
//!   c194a48cea129e77185650bc1b9cb131dbfecc43,
//!   `src/traffic-control/model/dualq-coupled-pi2-queue-disc.cc`.
//!
//! Two FIFOs share one buffer: ECT(1) and CE packets go to the L queue,
//! not-ECT and ECT(0) to the C queue (Linux's default `ecn_mask`, the RFC's
//! Figure 3; the ns-3 code at that commit classifies by DSCP, here by ECN as
//! its later `DualPi2QueueDisc` does). Every `tupdate` the base probability
//! p′ follows the PI law `p′ += α·(qdelay − target) + β·(qdelay −
//! qdelay_old)`; the C queue signals with p_C = p′² (squared: two draws in
//! Linux), the L queue with p_CL = k·p′ coupled with its own native AQM.
//!
//! Where the variants differ (all are modelled):
//!
//! | | linux | rfc | ns3 |
//! |---|---|---|---|
//! | α, β, tupdate | 0.16 Hz, 3.2 Hz, 16 ms (fixed point: α·256 = 41, β·256 = 819, p′ a `u32`) | 0.15 Hz, 3 Hz, 15 ms (floating point) | as rfc |
//! | qdelay of the update | max of the two heads' sojourns | C head's sojourn | C head's sojourn |
//! | first update | at `tupdate` | at `tupdate` | at 0 |
//! | p′ bounds | [0, 1] (saturating `u32`); ≤ 1/k without `drop_overload` | clamped to [0, 1] | clamped to [0, 1] |
//! | where AQM acts | at dequeue (`drop_early` = false) or enqueue | at dequeue | at dequeue |
//! | L native AQM | step: mark when the sojourn > `step_thresh` (1 ms), if the L queue held ≥ `min_qlen_step` packets at enqueue | ramp: 0 below `step_thresh` (800 µs), linear to 1 over `ramp_range` (400 µs), only while more than one packet (Th_len) remains queued | step: probability 1 when the sojourn > `step_thresh` (475 µs) |
//! | L coupled signal | mark with k·p′ (the step applies after it, so p_L = max) | mark with p_L = max(laqm, k·p′) | mark with p_L = min(max(laqm, k·p′), 1) |
//! | random draws | `u32 ≤ p` (p′·2³² scale) | uniform < p | L: de-randomised `recur`; C: uniform < p |
//! | overload (k·p′ > 1) | C and L drop with p′² (L marks instead without `drop_overload`) | C drops with p_C ≥ p_Cmax = 1/k²; L drops with p_C, marks the rest | none |
//! | no signal below | 2 MTU backlog of both queues, after the dequeued packet left (PI² only; the step still marks) | — | 2 MTU in the C queue after the dequeued packet left (C only) |
//! | scheduler | WRR credit: C weight `c_weight` = 10 % of bytes while both queues are backlogged | WRR as linux (the RFC leaves the scheduler open) | time-shifted FIFO: L first unless the C head waited `tshift` (50 ms) longer |
//! | limit | 10 000 packets | link rate × 250 ms, bytes; refused when backlog + MTU > limit | 1 562 500 bytes (250 ms at 50 Mbit/s) |
//!
//! Linux's `2 MTU` rule, exactly: `must_drop` returns "neither drop nor
//! mark" while `sch->qstats.backlog < 2 * psched_mtu(dev)`, the bytes of
//! both queues after the packet being dequeued was taken off (or, with
//! `drop_early`, before the arriving packet is added). `psched_mtu` is the
//! device MTU plus its link-layer header (1514 on Ethernet); packet sizes
//! here carry no link-layer header, so `mtu` = 1500 plays its part.
//!
//! Not modelled: Linux's `memory_limit` (skb truesize accounting: with the
//! default 2 × MTU per packet it never binds before `limit`), `split_gso`
//! (no GSO aggregates here), `step_thresh` in packets, `ecn_mask` other than
//! L4S ECT, tc filters and `skb->priority` classification (DUALPI2_C_LLLL).
//! The RFC's Figure 2 derives α, β and tupdate from RTT_max = 100 ms; the
//! derived values are the defaults here.
//!
//! Per-queue counters (arrivals, drops, marks, departures, sojourn) of `l`
//! and `c` are reported as the queue's classes; `stats()` gives p′
//! (`p_base`), p_C, p_CL = min(k·p′, 1) and the p_L the last L departure
//! saw.

use super::fifo::Fifo;
use super::{DropCause, Limit, QdCtx, QueueClassCounts, QueueDisc};
use crate::engine::{to_secs, Time};
use crate::net::packet::{Ecn, Packet};
use crate::units::Dur;
use rand::RngCore;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Which reference the discipline follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DualPi2Variant {
    #[default]
    Linux,
    /// The L4S team's qdisc: `linux` with `min_qlen_step = 2`.
    L4steam,
    Rfc,
    Ns3,
}

impl DualPi2Variant {
    fn name(self) -> &'static str {
        match self {
            DualPi2Variant::Linux => "linux",
            DualPi2Variant::L4steam => "l4steam",
            DualPi2Variant::Rfc => "rfc",
            DualPi2Variant::Ns3 => "ns3",
        }
    }
}

/// The keys as written; [`DualPi2Config`] is this with the variant's
/// defaults filled in.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDualPi2 {
    #[serde(default)]
    variant: DualPi2Variant,
    #[serde(default)]
    limit: Option<Limit>,
    #[serde(default)]
    target: Option<Dur>,
    #[serde(default)]
    tupdate: Option<Dur>,
    #[serde(default)]
    alpha: Option<f64>,
    #[serde(default)]
    beta: Option<f64>,
    #[serde(default)]
    coupling: Option<f64>,
    #[serde(default)]
    step_thresh: Option<Dur>,
    #[serde(default)]
    ramp_range: Option<Dur>,
    #[serde(default)]
    c_weight: Option<u32>,
    #[serde(default)]
    tshift: Option<Dur>,
    #[serde(default)]
    drop_overload: Option<bool>,
    #[serde(default)]
    drop_early: Option<bool>,
    #[serde(default)]
    min_qlen_step: Option<u32>,
    #[serde(default)]
    mtu: Option<u32>,
}

/// DualPI2's parameters. A key that applies to the variant holds its value
/// (the variant's default when not given); a key that does not apply is
/// `None` unless given, which [`DualPi2Config::validate`] refuses. `limit`
/// is `None` for `rfc` by default: link rate × 250 ms.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(from = "RawDualPi2")]
pub struct DualPi2Config {
    pub variant: DualPi2Variant,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<Dur>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tupdate: Option<Dur>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// k.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coupling: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_thresh: Option<Dur>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ramp_range: Option<Dur>,
    /// C queue's WRR weight, percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub c_weight: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tshift: Option<Dur>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drop_overload: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drop_early: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_qlen_step: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
}

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

impl From<RawDualPi2> for DualPi2Config {
    fn from(r: RawDualPi2) -> Self {
        use DualPi2Variant::*;
        let v = r.variant;
        // l4steam runs the linux code with its own defaults
        let linux = matches!(v, Linux | L4steam);
        let or = |x: Option<Dur>, d: u64| Some(x.unwrap_or(Dur(d)));
        DualPi2Config {
            variant: v,
            limit: match v {
                Linux | L4steam => Some(r.limit.unwrap_or(Limit::Packets(10_000))),
                Rfc => r.limit,
                Ns3 => Some(r.limit.unwrap_or(Limit::Bytes(1_562_500))),
            },
            target: or(r.target, 15 * MS),
            tupdate: or(r.tupdate, if linux { 16 * MS } else { 15 * MS }),
            alpha: Some(r.alpha.unwrap_or(if linux { 0.16 } else { 0.15 })),
            beta: Some(r.beta.unwrap_or(if linux { 3.2 } else { 3.0 })),
            coupling: Some(r.coupling.unwrap_or(2.0)),
            step_thresh: or(
                r.step_thresh,
                match v {
                    Linux | L4steam => MS,
                    Rfc => 800 * US,
                    Ns3 => 475 * US,
                },
            ),
            ramp_range: if v == Rfc { or(r.ramp_range, 400 * US) } else { r.ramp_range },
            c_weight: if v == Ns3 { r.c_weight } else { Some(r.c_weight.unwrap_or(10)) },
            tshift: if v == Ns3 { or(r.tshift, 50 * MS) } else { r.tshift },
            drop_overload: if linux { Some(r.drop_overload.unwrap_or(true)) } else { r.drop_overload },
            drop_early: if linux { Some(r.drop_early.unwrap_or(false)) } else { r.drop_early },
            min_qlen_step: match v {
                Linux => Some(r.min_qlen_step.unwrap_or(0)),
                L4steam => Some(r.min_qlen_step.unwrap_or(2)),
                _ => r.min_qlen_step,
            },
            mtu: Some(r.mtu.unwrap_or(1500)),
        }
    }
}

impl Default for DualPi2Config {
    fn default() -> Self {
        DualPi2Config::of(DualPi2Variant::Linux)
    }
}

/// Linux's `ALPHA_BETA_MAX`: α and β travel over netlink in 1/256 Hz, at
/// most 2³¹ − 1 of them.
const ALPHA_BETA_MAX: f64 = ((1u64 << 31) - 1) as f64;

impl DualPi2Config {
    /// The defaults of `variant`.
    pub fn of(variant: DualPi2Variant) -> Self {
        RawDualPi2 {
            variant,
            limit: None,
            target: None,
            tupdate: None,
            alpha: None,
            beta: None,
            coupling: None,
            step_thresh: None,
            ramp_range: None,
            c_weight: None,
            tshift: None,
            drop_overload: None,
            drop_early: None,
            min_qlen_step: None,
            mtu: None,
        }
        .into()
    }

    pub fn validate(&self) -> Result<(), (String, String)> {
        use DualPi2Variant::*;
        let v = self.variant;
        let linux = matches!(v, Linux | L4steam);
        let only = |key: &str, set: bool, ok: bool, which: &str| {
            if set && !ok {
                Err((
                    key.to_string(),
                    format!("applies to variant {which} only (variant is \"{}\")", v.name()),
                ))
            } else {
                Ok(())
            }
        };
        only("ramp_range", self.ramp_range.is_some(), v == Rfc, "\"rfc\"")?;
        only("tshift", self.tshift.is_some(), v == Ns3, "\"ns3\"")?;
        only("c_weight", self.c_weight.is_some(), v != Ns3, "\"linux\", \"l4steam\" or \"rfc\"")?;
        for (k, set) in [
            ("drop_overload", self.drop_overload.is_some()),
            ("drop_early", self.drop_early.is_some()),
            ("min_qlen_step", self.min_qlen_step.is_some()),
        ] {
            only(k, set, linux, "\"linux\" or \"l4steam\"")?;
        }
        if let Some(l) = self.limit {
            l.validate().map_err(|m| ("limit".to_string(), m))?;
        }
        let pos = |k: &str, d: Option<Dur>| match d {
            Some(Dur(0)) => Err((k.to_string(), "must be positive".to_string())),
            _ => Ok(()),
        };
        pos("target", self.target)?;
        pos("tupdate", self.tupdate)?;
        pos("ramp_range", self.ramp_range)?;
        for (k, x) in [("alpha", self.alpha), ("beta", self.beta)] {
            let x = x.unwrap_or(0.0);
            if linux {
                // netlink carries round(x·256) in [1, 2³¹ − 1]
                let n = (x * 256.0).round();
                if !(1.0..=ALPHA_BETA_MAX).contains(&n) {
                    return Err((
                        k.into(),
                        format!("must be in [1/256, (2^31 - 1)/256] Hz for variant \"linux\", got {x}"),
                    ));
                }
            } else if !(x > 0.0 && x.is_finite()) {
                return Err((k.into(), format!("must be a positive number of Hz, got {x}")));
            }
        }
        let k = self.coupling.unwrap_or(2.0);
        if linux {
            if !((1.0..=255.0).contains(&k) && k.fract() == 0.0) {
                return Err((
                    "coupling".into(),
                    format!("must be an integer in [1, 255] for variant \"linux\" (a u8), got {k}"),
                ));
            }
        } else if !(k > 0.0 && k.is_finite()) {
            return Err(("coupling".into(), format!("must be positive, got {k}")));
        }
        if let Some(w) = self.c_weight {
            if w > 100 {
                return Err(("c_weight".into(), format!("must be a percentage in [0, 100], got {w}")));
            }
        }
        if self.mtu == Some(0) {
            return Err(("mtu".into(), "must be a positive number of bytes".into()));
        }
        Ok(())
    }
}

/// Linux's probability scale: p = `prob` / `MAX_PROB`.
const MAX_PROB: u32 = u32::MAX;

/// Linux's `dualpi2_scale_alpha_beta`: a gain in 1/256 Hz to the internal
/// unit (probability per 64 ns of delay).
fn linux_scale(param_256: u32) -> u32 {
    (((param_256 as u64 * MAX_PROB as u64) >> 2) / 1_000_000_000) as u32
}

/// One queue's counters.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    arrivals: u64,
    dropped: u64,
    marked: u64,
    dequeued: u64,
    sojourn_ns: u128,
    last_sojourn_ns: u64,
}

const L: usize = 0;
const C: usize = 1;

pub struct DualPi2 {
    c: DualPi2Config,
    v: DualPi2Variant,
    limit: Limit,
    target: Time,
    tupdate: Time,
    step_thresh: Time,
    k: f64,
    mtu: u64,
    q: [Fifo; 2],
    /// Linux: whether each queued L packet may be step-marked
    /// (`apply_step`, decided at enqueue).
    l_step: VecDeque<bool>,
    /// The time of the next PI² update.
    next_update: Time,
    last_qdelay: Time,
    /// p′ (rfc, ns3).
    prob: f64,
    /// p′ · `MAX_PROB` (linux).
    prob_fx: u32,
    alpha_fx: u32,
    beta_fx: u32,
    /// p_C and p_CL as of the last update (rfc, ns3).
    p_c: f64,
    p_cl: f64,
    /// p_L the last L departure saw.
    p_l: f64,
    /// WRR: credit (bytes·percent; ≤ 0 serves L) and its reset value.
    credit: i64,
    credit_init: i64,
    /// `recur` accumulators (rfc: unused; ns3: the L queue's).
    recur_l: f64,
    counts: [Counts; 2],
    step_marks: u64,
}

impl DualPi2 {
    /// `rate_bps` sizes the `rfc` variant's default limit (250 ms).
    pub fn new(c: &DualPi2Config, rate_bps: u64) -> Self {
        // the L4S team's qdisc is the linux code (its defaults differ)
        let v = match c.variant {
            DualPi2Variant::L4steam => DualPi2Variant::Linux,
            v => v,
        };
        let limit = c.limit.unwrap_or(Limit::Bytes((rate_bps / 32).max(1)));
        let mtu = c.mtu.unwrap_or(1500) as u64;
        let wc = c.c_weight.unwrap_or(10) as i64;
        let credit_init = mtu as i64 * (wc - (100 - wc));
        let tupdate = c.tupdate.unwrap_or(Dur(16 * MS)).0;
        let scale = |x: Option<f64>| linux_scale((x.unwrap_or(0.0) * 256.0).round() as u32);
        DualPi2 {
            c: c.clone(),
            v,
            limit,
            target: c.target.unwrap_or(Dur(15 * MS)).0,
            tupdate,
            step_thresh: c.step_thresh.unwrap_or(Dur(MS)).0,
            k: c.coupling.unwrap_or(2.0),
            mtu,
            q: [Fifo::new(), Fifo::new()],
            l_step: VecDeque::new(),
            next_update: if v == DualPi2Variant::Ns3 { 0 } else { tupdate },
            last_qdelay: 0,
            prob: 0.0,
            prob_fx: 0,
            alpha_fx: scale(c.alpha),
            beta_fx: scale(c.beta),
            p_c: 0.0,
            p_cl: 0.0,
            p_l: 0.0,
            credit: credit_init,
            credit_init,
            recur_l: 0.0,
            counts: [Counts::default(); 2],
            step_marks: 0,
        }
    }

    /// p′, the base probability.
    pub fn base_prob(&self) -> f64 {
        match self.v {
            DualPi2Variant::Linux => self.prob_fx as f64 / MAX_PROB as f64,
            _ => self.prob,
        }
    }

    /// p′ in Linux's fixed point (`pi2_prob`).
    pub fn base_prob_fx(&self) -> u32 {
        self.prob_fx
    }

    /// p_C = p′².
    pub fn p_c(&self) -> f64 {
        match self.v {
            DualPi2Variant::Linux => self.base_prob().powi(2),
            _ => self.p_c,
        }
    }

    /// The coupled L probability p_CL = k·p′, capped at 1.
    pub fn p_cl(&self) -> f64 {
        match self.v {
            DualPi2Variant::Linux => (self.k * self.base_prob()).min(1.0),
            _ => self.p_cl.min(1.0),
        }
    }

    /// The L marking probability the last L departure saw.
    pub fn p_l(&self) -> f64 {
        self.p_l
    }

    /// The WRR credit (Linux `c_protection_credit`, bytes × percent).
    pub fn credit(&self) -> i64 {
        self.credit
    }

    fn head_delay(&self, i: usize, now: Time) -> Time {
        self.q[i].front().map_or(0, |p| now.saturating_sub(p.enq_time))
    }

    /// One PI² update at `now` (Linux `calculate_probability`, RFC Figure 6,
    /// ns-3 `DualPi2Update`).
    pub fn update(&mut self, now: Time) {
        match self.v {
            DualPi2Variant::Linux | DualPi2Variant::L4steam => {
                let qdelay = self.head_delay(L, now).max(self.head_delay(C, now));
                let delta = (qdelay as i128 - self.target as i128) * self.alpha_fx as i128
                    + (qdelay as i128 - self.last_qdelay as i128) * self.beta_fx as i128;
                self.last_qdelay = qdelay;
                // __scale_delta: the magnitude over 2^6, then a saturating step
                let step = delta.unsigned_abs() >> 6;
                let p = self.prob_fx as u128;
                let new = if delta > 0 {
                    (p + step).min(MAX_PROB as u128)
                } else {
                    p.saturating_sub(step)
                } as u32;
                self.prob_fx = if self.c.drop_overload == Some(false) {
                    new.min(MAX_PROB / self.k as u32)
                } else {
                    new
                };
            }
            DualPi2Variant::Rfc | DualPi2Variant::Ns3 => {
                let curq = self.head_delay(C, now);
                let a = self.c.alpha.unwrap_or(0.15);
                let b = self.c.beta.unwrap_or(3.0);
                self.prob += a * (to_secs(curq) - to_secs(self.target))
                    + b * (to_secs(curq) - to_secs(self.last_qdelay));
                self.prob = self.prob.clamp(0.0, 1.0);
                self.p_cl = self.k * self.prob;
                if self.v == DualPi2Variant::Ns3 {
                    self.p_cl = self.p_cl.min(1.0);
                }
                self.p_c = self.prob * self.prob;
                self.last_qdelay = curq;
            }
        }
    }

    /// Run the updates due at or before `now`. An empty discipline at p′ = 0
    /// with a last delay of 0 stays there (every update would subtract
    /// α·target and floor at 0), so those updates are skipped at once.
    fn catch_up(&mut self, now: Time) {
        while self.next_update <= now {
            let idle = self.q[L].is_empty()
                && self.q[C].is_empty()
                && self.last_qdelay == 0
                && self.prob == 0.0
                && self.prob_fx == 0;
            if idle {
                let n = (now - self.next_update) / self.tupdate + 1;
                self.next_update += n * self.tupdate;
                self.p_c = 0.0;
                self.p_cl = 0.0;
                break;
            }
            let t = self.next_update;
            self.update(t);
            self.next_update += self.tupdate;
        }
    }

    fn backlog(&self) -> u64 {
        self.q[L].bytes() + self.q[C].bytes()
    }

    /// Linux `dualpi2_roll`: true with probability (prob + 1)/2³².
    fn roll(ctx: &mut QdCtx, prob: u32) -> bool {
        (ctx.rng.next_u64() >> 32) as u32 <= prob
    }

    /// Set CE on `pkt`, counting the mark if it was not CE already.
    fn mark(&mut self, pkt: &mut Packet, i: usize, ctx: &mut QdCtx) -> bool {
        if pkt.ecn == Ecn::Ce {
            return false;
        }
        pkt.ecn = Ecn::Ce;
        ctx.marked += 1;
        self.counts[i].marked += 1;
        true
    }

    /// Linux `must_drop`: true to drop `pkt` of queue `i`; may mark it.
    fn linux_must_drop(&mut self, pkt: &mut Packet, i: usize, ctx: &mut QdCtx) -> bool {
        if self.backlog() < 2 * self.mtu {
            return false;
        }
        let prob = self.prob_fx;
        let local_l = prob as u64 * self.k as u64;
        let overload = local_l > MAX_PROB as u64;
        if i == C {
            if Self::roll(ctx, prob) && Self::roll(ctx, prob) {
                if overload || pkt.ecn == Ecn::NotEct {
                    return true;
                }
                self.mark(pkt, i, ctx);
            }
            return false;
        }
        if overload {
            if self.c.drop_overload != Some(false) && Self::roll(ctx, prob) && Self::roll(ctx, prob) {
                return true;
            }
            self.mark(pkt, i, ctx);
        } else if Self::roll(ctx, local_l as u32) {
            self.mark(pkt, i, ctx);
        }
        false
    }

    /// The WRR choice (Linux `dequeue_packet`): the queue and the credit
    /// change if the packet is sent.
    fn pick_wrr(&mut self) -> Option<(usize, i64)> {
        let (l_len, c_len) = (self.q[L].len(), self.q[C].len());
        let wc = self.c.c_weight.unwrap_or(10) as i64;
        let (i, per_byte) = if l_len > 0 && (c_len == 0 || self.credit <= 0) {
            (L, if c_len > 0 { wc } else { 0 })
        } else if c_len > 0 {
            (C, if l_len > 0 { -(100 - wc) } else { 0 })
        } else {
            self.credit = self.credit_init;
            return None;
        };
        let size = self.q[i].front().map_or(0, |p| p.size as i64);
        Some((i, per_byte * size))
    }

    /// The time-shifted FIFO (ns-3 `Scheduler`): L unless the C head has
    /// waited `tshift` longer than the L head.
    fn pick_ts_fifo(&self, now: Time) -> Option<usize> {
        let shift = self.c.tshift.unwrap_or(Dur(50 * MS)).0;
        if !self.q[L].is_empty() && self.head_delay(L, now) + shift > self.head_delay(C, now) {
            Some(L)
        } else if !self.q[C].is_empty() {
            Some(C)
        } else {
            None
        }
    }

    fn pop(&mut self, i: usize) -> (Packet, bool) {
        let p = self.q[i].pop_front().expect("picked a non-empty queue");
        let step = if i == L { self.l_step.pop_front().unwrap_or(true) } else { false };
        (p, step)
    }

    fn depart(&mut self, p: &Packet, i: usize, now: Time) {
        let c = &mut self.counts[i];
        c.dequeued += 1;
        c.sojourn_ns += (now - p.enq_time) as u128;
        c.last_sojourn_ns = now - p.enq_time;
    }

    fn drop_dequeued(&mut self, p: Packet, i: usize, ctx: &mut QdCtx) {
        self.counts[i].dropped += 1;
        ctx.drop_packet(p, DropCause::Aqm);
    }

    fn dequeue_linux(&mut self, ctx: &mut QdCtx) -> Option<Packet> {
        loop {
            let (i, change) = self.pick_wrr()?;
            let (mut p, apply_step) = self.pop(i);
            if self.c.drop_early != Some(true) && self.linux_must_drop(&mut p, i, ctx) {
                self.drop_dequeued(p, i, ctx);
                continue;
            }
            if i == L {
                let step = apply_step && ctx.now - p.enq_time > self.step_thresh;
                self.p_l = if step { 1.0 } else { self.p_cl() };
                if step && self.mark(&mut p, i, ctx) {
                    self.step_marks += 1;
                }
            }
            self.credit += change;
            self.depart(&p, i, ctx.now);
            return Some(p);
        }
    }

    /// RFC 9332 `laqm`: the native L ramp.
    fn laqm(&self, sojourn: Time) -> f64 {
        let min_th = self.step_thresh;
        let range = self.c.ramp_range.unwrap_or(Dur(400 * US)).0;
        if sojourn >= min_th + range {
            1.0
        } else if sojourn > min_th {
            (sojourn - min_th) as f64 / range as f64
        } else {
            0.0
        }
    }

    fn dequeue_rfc(&mut self, ctx: &mut QdCtx) -> Option<Packet> {
        let p_cmax = (1.0 / (self.k * self.k)).min(1.0);
        loop {
            let (i, change) = self.pick_wrr()?;
            let (mut p, _) = self.pop(i);
            if i == L {
                if self.p_cl < 1.0 {
                    // Th_len = 1 packet: no native marking of a 1-packet queue
                    let native = if self.q[L].len() > 1 {
                        self.laqm(ctx.now - p.enq_time)
                    } else {
                        0.0
                    };
                    self.p_l = native.max(self.p_cl);
                    if ctx.rng.uniform() < self.p_l {
                        self.mark(&mut p, i, ctx);
                    }
                } else {
                    self.p_l = 1.0;
                    if ctx.rng.uniform() < self.p_c {
                        self.drop_dequeued(p, i, ctx);
                        continue;
                    }
                    if ctx.rng.uniform() < self.p_cl {
                        self.mark(&mut p, i, ctx);
                    }
                }
            } else if ctx.rng.uniform() < self.p_c {
                if p.ecn == Ecn::NotEct || self.p_c >= p_cmax {
                    self.drop_dequeued(p, i, ctx);
                    continue;
                }
                self.mark(&mut p, i, ctx);
            }
            self.credit += change;
            self.depart(&p, i, ctx.now);
            return Some(p);
        }
    }

    /// ns-3 `Recur` on the L queue's accumulator.
    fn recur_l(&mut self, likelihood: f64) -> bool {
        self.recur_l += likelihood;
        if self.recur_l > 1.0 {
            self.recur_l -= 1.0;
            return true;
        }
        false
    }

    fn dequeue_ns3(&mut self, ctx: &mut QdCtx) -> Option<Packet> {
        loop {
            let i = self.pick_ts_fifo(ctx.now)?;
            let (mut p, _) = self.pop(i);
            if i == L {
                let native = if ctx.now - p.enq_time > self.step_thresh { 1.0 } else { 0.0 };
                self.p_l = f64::max(native, self.p_cl).min(1.0);
                if self.recur_l(self.p_l) {
                    self.mark(&mut p, i, ctx);
                }
            } else if self.q[C].bytes() >= 2 * self.mtu && self.p_c > ctx.rng.uniform() {
                if p.ecn == Ecn::NotEct {
                    self.drop_dequeued(p, i, ctx);
                    continue;
                }
                self.mark(&mut p, i, ctx);
            }
            self.depart(&p, i, ctx.now);
            return Some(p);
        }
    }
}

impl QueueDisc for DualPi2 {
    fn kind(&self) -> &'static str {
        "dualpi2"
    }

    fn enqueue(&mut self, mut pkt: Packet, ctx: &mut QdCtx) -> Result<(), DropCause> {
        self.catch_up(ctx.now);
        let i = if matches!(pkt.ecn, Ecn::Ect1 | Ecn::Ce) { L } else { C };
        self.counts[i].arrivals += 1;
        let (pkts, bytes) = (self.q[L].len() + self.q[C].len(), self.backlog());
        let full = match (self.v, self.limit) {
            // RFC Figure 3: refuse when the backlog plus one MTU exceeds it
            // (a packet larger than the MTU counts its own size)
            (DualPi2Variant::Rfc, Limit::Bytes(b)) => bytes + self.mtu.max(pkt.size as u64) > b,
            (_, limit) => limit.exceeded_by(pkts, bytes, pkt.size),
        };
        if full {
            self.counts[i].dropped += 1;
            return Err(DropCause::Overflow);
        }
        if self.v == DualPi2Variant::Linux
            && self.c.drop_early == Some(true)
            && self.linux_must_drop(&mut pkt, i, ctx)
        {
            self.counts[i].dropped += 1;
            return Err(DropCause::Early);
        }
        if i == L {
            let min_qlen = self.c.min_qlen_step.unwrap_or(0) as usize;
            self.l_step.push_back(self.q[L].len() >= min_qlen);
        }
        self.q[i].push_back(pkt);
        Ok(())
    }

    fn dequeue(&mut self, ctx: &mut QdCtx) -> Option<Packet> {
        self.catch_up(ctx.now);
        match self.v {
            DualPi2Variant::Linux | DualPi2Variant::L4steam => self.dequeue_linux(ctx),
            DualPi2Variant::Rfc => self.dequeue_rfc(ctx),
            DualPi2Variant::Ns3 => self.dequeue_ns3(ctx),
        }
    }

    fn len_pkts(&self) -> usize {
        self.q[L].len() + self.q[C].len()
    }

    fn len_bytes(&self) -> u64 {
        self.backlog()
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("p_base", self.base_prob()),
            ("p_c", self.p_c()),
            ("p_cl", self.p_cl()),
            ("p_l", self.p_l),
            ("step_marks", self.step_marks as f64),
        ]
    }

    fn classes(&self) -> Vec<QueueClassCounts> {
        [("l", L), ("c", C)]
            .into_iter()
            .map(|(name, i)| {
                let c = self.counts[i];
                QueueClassCounts {
                    name,
                    arrivals: c.arrivals,
                    dropped: c.dropped,
                    marked: c.marked,
                    dequeued: c.dequeued,
                    sojourn_ns: c.sojourn_ns,
                    len_pkts: self.q[i].len() as u64,
                    len_bytes: self.q[i].bytes(),
                    last_sojourn_ns: c.last_sojourn_ns,
                }
            })
            .collect()
    }
}

impl super::registry::Registered for DualPi2Config {
    const KIND: &'static str = "dualpi2";
    const ABOUT: &'static str =
        "DualQ Coupled AQM with PI2 for L4S (RFC 9332 App. A; Linux sch_dualpi2.c; ns-3 DualQCoupledPi2QueueDisc)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("variant", "", "\"linux\", \"l4steam\", \"rfc\" or \"ns3\"", "\"bsd\"", "the reference followed: mainline Linux (default), the L4S team's qdisc (linux with min_qlen_step = 2), RFC 9332, ns-3 (defaults below are linux's)"),
        crate::registry::param!("limit", "packets, or bytes with a unit", "> 0", "0", "buffer of both queues (rfc: link rate × 250 ms; ns3: 1562500 B)"),
        crate::registry::param!("target", "time", "> 0", "\"0ms\"", "PI² queueing-delay target"),
        crate::registry::param!("tupdate", "time", "> 0", "\"0ms\"", "PI² update period (rfc, ns3: 15 ms)"),
        crate::registry::param!("alpha", "1/s", "> 0; linux: [1/256, (2^31-1)/256]", "-1.0", "integral gain α (rfc, ns3: 0.15)"),
        crate::registry::param!("beta", "1/s", "> 0; linux: [1/256, (2^31-1)/256]", "-1.0", "proportional gain β (rfc, ns3: 3)"),
        crate::registry::param!("coupling", "", "> 0; linux: integer 1..255", "0.0", "coupling factor k: p_CL = k·p′"),
        crate::registry::param!("step_thresh", "time", "≥ 0", "\"-1ms\"", "L native AQM threshold: linux step, rfc ramp start (800 µs), ns3 step (475 µs)"),
        crate::registry::param!("ramp_range", "time", "> 0; rfc only", "\"-1ms\"", "rfc: width of the L ramp (400 µs)"),
        crate::registry::param!("c_weight", "percent", "0..100; linux, l4steam, rfc", "101", "WRR weight of the C queue (c_protection)"),
        crate::registry::param!("tshift", "time", "≥ 0; ns3 only", "\"-1ms\"", "ns3: time shift of the FIFO scheduler (50 ms)"),
        crate::registry::param!("drop_overload", "", "true/false; linux, l4steam", "", "drop instead of marking when k·p′ > 1"),
        crate::registry::param!("drop_early", "", "true/false; linux, l4steam", "", "apply PI² at enqueue instead of dequeue"),
        crate::registry::param!("min_qlen_step", "packets", "≥ 0; linux, l4steam", "-1", "L packets queued at enqueue below which no step mark (linux 0, l4steam 2)"),
        crate::registry::param!("mtu", "bytes", "≥ 1", "0", "MTU of the 2-MTU rule, the WRR credit and the rfc limit"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        DualPi2Config::validate(self)
    }
}

impl super::registry::QueueKind for DualPi2Config {
    fn build(&self, port: &mut super::PortCtx) -> Box<dyn QueueDisc> {
        Box::new(DualPi2::new(self, port.rate_bps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStream;

    fn pkt(ecn: Ecn, t: Time) -> Packet {
        Packet {
            size: 1500,
            ecn,
            enq_time: t,
            ..Default::default()
        }
    }

    fn cfg(text: &str) -> DualPi2Config {
        let c: DualPi2Config = toml::from_str(text).unwrap();
        c.validate().unwrap();
        c
    }

    struct Env {
        rng: RngStream,
        dropped: Vec<(Packet, DropCause)>,
    }

    impl Env {
        fn new() -> Self {
            Env {
                rng: RngStream::new(7, 3),
                dropped: Vec::new(),
            }
        }
        fn ctx(&mut self, now: Time) -> QdCtx<'_> {
            QdCtx {
                now,
                rng: &mut self.rng,
                dropped: &mut self.dropped,
                marked: 0,
            }
        }
    }

    #[test]
    fn defaults_per_variant() {
        let l = DualPi2Config::default();
        assert_eq!(l.limit, Some(Limit::Packets(10_000)));
        assert_eq!((l.target, l.tupdate), (Some(Dur(15 * MS)), Some(Dur(16 * MS))));
        assert_eq!((l.alpha, l.beta, l.coupling), (Some(0.16), Some(3.2), Some(2.0)));
        assert_eq!((l.step_thresh, l.c_weight), (Some(Dur(MS)), Some(10)));
        assert_eq!((l.drop_overload, l.drop_early, l.min_qlen_step), (Some(true), Some(false), Some(0)));
        assert_eq!((l.ramp_range, l.tshift), (None, None));
        let r = DualPi2Config::of(DualPi2Variant::Rfc);
        assert_eq!((r.alpha, r.beta, r.tupdate), (Some(0.15), Some(3.0), Some(Dur(15 * MS))));
        assert_eq!((r.step_thresh, r.ramp_range, r.limit), (Some(Dur(800 * US)), Some(Dur(400 * US)), None));
        let n = DualPi2Config::of(DualPi2Variant::Ns3);
        assert_eq!((n.step_thresh, n.tshift, n.c_weight), (Some(Dur(475 * US)), Some(Dur(50 * MS)), None));
        assert_eq!(n.limit, Some(Limit::Bytes(1_562_500)));
        // the kernel's internal gains from 41/256 and 819/256 Hz
        let q = DualPi2::new(&l, 1_000_000);
        assert_eq!((q.alpha_fx, q.beta_fx), (linux_scale(41), linux_scale(819)));
        assert_eq!(linux_scale(41), 44);
        assert_eq!(linux_scale(819), 879);
        // the rfc default limit is 250 ms at the link rate, in bytes
        let q = DualPi2::new(&r, 50_000_000);
        assert_eq!(q.limit, Limit::Bytes(1_562_500));
    }

    /// `variant = "l4steam"` is `linux` with `min_qlen_step = 2`, every
    /// other parameter the same; written keys override the preset.
    #[test]
    fn l4steam_preset_is_linux_with_min_qlen_step_2() {
        let l = serde_json::to_value(DualPi2Config::of(DualPi2Variant::Linux)).unwrap();
        let t = serde_json::to_value(DualPi2Config::of(DualPi2Variant::L4steam)).unwrap();
        let (l, t) = (l.as_object().unwrap(), t.as_object().unwrap());
        let mut keys: Vec<&String> = l.keys().chain(t.keys()).collect();
        keys.sort();
        keys.dedup();
        let differ: Vec<&str> = (keys.into_iter())
            .filter(|k| l.get(*k) != t.get(*k))
            .map(|k| k.as_str())
            .collect();
        assert_eq!(differ, ["min_qlen_step", "variant"]);
        assert_eq!(t["min_qlen_step"], 2);
        assert_eq!(t["variant"], "l4steam");
        assert_eq!(l["min_qlen_step"], 0);
        let c = cfg("variant = \"l4steam\"\nmin_qlen_step = 0\ndrop_early = true");
        assert_eq!((c.min_qlen_step, c.drop_early), (Some(0), Some(true)));
        assert_eq!(cfg("").variant, DualPi2Variant::Linux, "the default stays mainline");
        let c: DualPi2Config = toml::from_str("variant = \"l4steam\"\nramp_range = \"1ms\"").unwrap();
        assert_eq!(c.validate().unwrap_err().0, "ramp_range");
    }

    /// At 4 Mbit/s a 1500-B packet takes 3 ms to send. An L packet that
    /// arrives while the one before it is being sent waits alone in the L
    /// queue longer than the 1 ms step: mainline marks it, the L4S team's
    /// qdisc does not (it step-marks only packets that found more than one
    /// packet queued). A standing queue of three is marked under both
    /// from its third packet; the first two only under mainline.
    #[test]
    fn a_single_queued_l_packet_is_not_step_marked_under_l4steam() {
        let marks = |variant: &str| -> Vec<bool> {
            let c = cfg(&format!("variant = \"{variant}\""));
            let mut q = DualPi2::new(&c, 4_000_000);
            let mut env = Env::new();
            let mut out = Vec::new();
            let tx = 3 * MS;
            // A at 0 goes at once; B arrives 0.1 ms later, alone
            q.enqueue(pkt(Ecn::Ect1, 0), &mut env.ctx(0)).unwrap();
            out.push(q.dequeue(&mut env.ctx(0)).unwrap().ecn == Ecn::Ce);
            q.enqueue(pkt(Ecn::Ect1, MS / 10), &mut env.ctx(MS / 10)).unwrap();
            out.push(q.dequeue(&mut env.ctx(tx)).unwrap().ecn == Ecn::Ce);
            // three arrive together while B is sent: queued 0, 1, 2 ahead
            for _ in 0..3 {
                q.enqueue(pkt(Ecn::Ect1, tx + MS / 10), &mut env.ctx(tx + MS / 10)).unwrap();
            }
            for k in 2..5 {
                out.push(q.dequeue(&mut env.ctx(k * tx)).unwrap().ecn == Ecn::Ce);
            }
            assert_eq!(q.p_cl(), 0.0, "{variant}: the PI² part is silent");
            out
        };
        assert_eq!(marks("linux"), [false, true, true, true, true]);
        assert_eq!(marks("l4steam"), [false, false, false, false, true]);
    }

    #[test]
    fn keys_of_other_variants_are_refused_by_name() {
        for (text, key) in [
            ("ramp_range = \"1ms\"", "ramp_range"),
            ("tshift = \"1ms\"", "tshift"),
            ("variant = \"ns3\"\nc_weight = 5", "c_weight"),
            ("variant = \"rfc\"\ndrop_early = true", "drop_early"),
            ("variant = \"ns3\"\nmin_qlen_step = 2", "min_qlen_step"),
            ("coupling = 1.5", "coupling"),
            ("alpha = 0.001", "alpha"),
            ("c_weight = 101", "c_weight"),
        ] {
            let c: DualPi2Config = toml::from_str(text).unwrap();
            assert_eq!(c.validate().unwrap_err().0, key, "{text}");
        }
    }

    /// RFC Figure 6 on a scripted C-queue trajectory: each update's p′ is
    /// p′ + α(q − target) + β(q − q_old), clamped to [0, 1]; p_C = p′²,
    /// p_CL = k·p′.
    #[test]
    fn rfc_pi2_update_follows_figure_6() {
        let c = DualPi2Config::of(DualPi2Variant::Rfc);
        let mut q = DualPi2::new(&c, 50_000_000);
        let mut env = Env::new();
        // a C packet whose enqueue time sets the head's sojourn at each update
        let delays_ms = [20.0, 35.0, 30.0, 10.0, 0.0, 50.0];
        let (mut p, mut prev) = (0.0f64, 0.0f64);
        for (n, d) in delays_ms.iter().enumerate() {
            let t = (n as u64 + 10) * 15 * MS;
            while q.dequeue(&mut env.ctx(t - 1)).is_some() {}
            let head = t - (*d * 1e6) as u64;
            q.q[C].push_back(pkt(Ecn::Ect0, head));
            q.catch_up(t);
            let cur = d / 1e3;
            p = (p + 0.15 * (cur - 0.015) + 3.0 * (cur - prev)).clamp(0.0, 1.0);
            prev = cur;
            assert!((q.base_prob() - p).abs() < 1e-12, "update {n}: {} vs {p}", q.base_prob());
            assert!((q.p_c - p * p).abs() < 1e-12);
            assert!((q.p_cl - 2.0 * p).abs() < 1e-12);
        }
        assert!(p > 0.0);
    }

    /// Linux `calculate_probability` in its own fixed point on the same kind
    /// of trajectory: the delay is the larger head sojourn, the step is
    /// (Δ·α + Δ'·β)/64 with the scaled gains; it tracks the floating-point
    /// law with α = 41/256, β = 819/256 Hz to within the rounding of the
    /// gains (0.3 %) and one unit per update.
    #[test]
    fn linux_pi2_update_in_fixed_point() {
        let c = DualPi2Config::default();
        let mut q = DualPi2::new(&c, 50_000_000);
        let mut env = Env::new();
        let delays = [(20, 0), (5, 40), (30, 10), (0, 0), (25, 26)]; // (C, L) ms
        let (mut fx, mut last) = (0i128, 0i128);
        let (mut p, mut prev) = (0.0f64, 0.0f64);
        for (n, (dc, dl)) in delays.iter().enumerate() {
            let t = (n as u64 + 10) * 16 * MS;
            while q.dequeue(&mut env.ctx(t - 1)).is_some() {}
            env.dropped.clear();
            if *dc > 0 {
                q.q[C].push_back(pkt(Ecn::Ect0, t - dc * MS));
            }
            if *dl > 0 {
                q.q[L].push_back(pkt(Ecn::Ect1, t - dl * MS));
                q.l_step.push_back(true);
            }
            q.catch_up(t);
            let qd = (*dc.max(dl) * MS) as i128;
            let delta = (qd - 15 * MS as i128) * 44 + (qd - last) * 879;
            last = qd;
            let step = delta.abs() >> 6;
            fx = if delta > 0 { (fx + step).min(u32::MAX as i128) } else { (fx - step).max(0) };
            assert_eq!(q.base_prob_fx() as i128, fx, "update {n}");
            let cur = qd as f64 / 1e9;
            p = (p + 41.0 / 256.0 * (cur - 0.015) + 819.0 / 256.0 * (cur - prev)).clamp(0.0, 1.0);
            prev = cur;
            assert!((q.base_prob() - p).abs() <= 0.003 * p + 1e-8, "update {n}: {} vs {p}", q.base_prob());
            assert!((q.p_c() - q.base_prob().powi(2)).abs() < 1e-15);
            assert!((q.p_cl() - (2.0 * q.base_prob()).min(1.0)).abs() < 1e-15);
        }
    }

    /// Coupling at a pinned p′: the C queue loses p′² of its ECT(0)-less
    /// packets, the L queue is marked with k·p′ (its sojourn kept under the
    /// step), and marks above the step are certain.
    #[test]
    fn linux_coupling_law_and_step() {
        let c = DualPi2Config::default();
        for p in [0.05f64, 0.2, 0.4] {
            let mut q = DualPi2::new(&c, 50_000_000);
            let mut env = Env::new();
            q.next_update = u64::MAX; // p′ pinned
            q.prob_fx = (p * MAX_PROB as f64) as u32;
            let (mut c_in, mut c_drop, mut l_in, mut l_mark) = (0u64, 0u64, 0u64, 0u64);
            for n in 0..200_000u64 {
                let t = n * 1000;
                // keep 4 packets of each queue standing; sojourn 0 < step
                while q.q[C].len() < 4 {
                    q.q[C].push_back(pkt(Ecn::NotEct, t));
                }
                while q.q[L].len() < 4 {
                    q.q[L].push_back(pkt(Ecn::Ect1, t));
                    q.l_step.push_back(true);
                }
                let before = env.dropped.len();
                let mut ctx = env.ctx(t);
                let out = q.dequeue(&mut ctx).unwrap();
                let marked = ctx.marked;
                if out.ecn == Ecn::Ect1 || out.ecn == Ecn::Ce {
                    l_in += 1;
                    l_mark += marked as u64;
                } else {
                    c_in += 1;
                }
                c_drop += (env.dropped.len() - before) as u64;
                c_in += (env.dropped.len() - before) as u64;
            }
            let (pc, pl) = (c_drop as f64 / c_in as f64, l_mark as f64 / l_in as f64);
            let se = |x: f64, n: u64| 4.0 * (x * (1.0 - x) / n as f64).sqrt() + 1e-4;
            assert!((pc - p * p).abs() < se(p * p, c_in), "p' {p}: C drop rate {pc}");
            assert!((pl - 2.0 * p).abs() < se(2.0 * p, l_in), "p' {p}: L mark rate {pl}");
        }
        // above the step every L packet is marked, whatever p′
        let mut q = DualPi2::new(&c, 50_000_000);
        let mut env = Env::new();
        q.next_update = u64::MAX;
        for _ in 0..10 {
            q.q[L].push_back(pkt(Ecn::Ect1, 0));
            q.l_step.push_back(true);
        }
        for _ in 0..10 {
            let out = q.dequeue(&mut env.ctx(MS + 1)).unwrap();
            assert_eq!(out.ecn, Ecn::Ce);
        }
        assert_eq!(q.step_marks, 10);
        assert_eq!(q.p_l(), 1.0);
    }

    /// The 2-MTU rule: with p′ = 1 nothing is dropped while the backlog left
    /// behind the dequeued packet is under 2 MTU.
    #[test]
    fn linux_no_signal_below_two_mtu() {
        let c = DualPi2Config::default();
        let mut q = DualPi2::new(&c, 50_000_000);
        let mut env = Env::new();
        q.next_update = u64::MAX;
        q.prob_fx = MAX_PROB;
        for _ in 0..3 {
            q.q[C].push_back(pkt(Ecn::NotEct, 0));
        }
        // 3 queued: the first leaves 3000 B = 2 MTU behind, so p′² = 1 drops it;
        // the second leaves 1500 B: sent; the third leaves 0: sent
        assert!(q.dequeue(&mut env.ctx(10)).is_some());
        assert_eq!(env.dropped.len(), 1);
        assert!(q.dequeue(&mut env.ctx(10)).is_some());
        assert!(q.dequeue(&mut env.ctx(10)).is_none());
        assert_eq!(env.dropped.len(), 1);
    }

    /// WRR under overload of both queues: the C queue gets its weight (10 %)
    /// of the bytes sent, the L queue the rest; with one queue empty the
    /// other gets everything.
    #[test]
    fn wrr_gives_the_c_queue_its_weight() {
        for (w, variant) in [(10u32, "linux"), (25, "linux"), (10, "rfc")] {
            let c = cfg(&format!("variant = \"{variant}\"\nc_weight = {w}"));
            let mut q = DualPi2::new(&c, 50_000_000);
            let mut env = Env::new();
            q.next_update = u64::MAX; // no AQM: p′ = 0
            let (mut sent_c, mut total) = (0u64, 0u64);
            for n in 0..100_000u64 {
                let t = n;
                while q.q[C].len() < 8 {
                    q.q[C].push_back(pkt(Ecn::Ect0, t));
                }
                while q.q[L].len() < 8 {
                    q.q[L].push_back(pkt(Ecn::Ect1, t));
                    q.l_step.push_back(false);
                }
                let p = q.dequeue(&mut env.ctx(t)).unwrap();
                total += 1;
                if p.ecn == Ecn::Ect0 {
                    sent_c += 1;
                }
            }
            let share = sent_c as f64 / total as f64;
            assert!((share - w as f64 / 100.0).abs() < 0.001, "{variant} c_weight {w}: C share {share}");
        }
    }

    /// ns-3's time-shifted FIFO: L goes first unless the C head has waited
    /// more than `tshift` longer.
    #[test]
    fn ns3_time_shifted_fifo() {
        let c = DualPi2Config::of(DualPi2Variant::Ns3);
        let mut q = DualPi2::new(&c, 50_000_000);
        let mut env = Env::new();
        q.next_update = u64::MAX;
        q.q[C].push_back(pkt(Ecn::NotEct, 0));
        q.q[L].push_back(pkt(Ecn::Ect1, 40 * MS));
        q.l_step.push_back(true);
        // at 60 ms: C waited 60, L 20: 20 + 50 > 60, L first
        assert_eq!(q.dequeue(&mut env.ctx(60 * MS)).unwrap().enq_time, 40 * MS);
        q.q[L].push_back(pkt(Ecn::Ect1, 60 * MS));
        q.l_step.push_back(true);
        // at 61 ms: C waited 61, L 1 ms: 51 < 61, C first
        assert_eq!(q.dequeue(&mut env.ctx(61 * MS)).unwrap().enq_time, 0);
    }

    /// The per-queue counters add up and the p's are exposed.
    #[test]
    fn classes_and_stats() {
        let c = DualPi2Config::default();
        let mut q = DualPi2::new(&c, 50_000_000);
        let mut env = Env::new();
        for n in 0..6 {
            let e = if n % 3 == 0 { Ecn::Ect1 } else { Ecn::NotEct };
            q.enqueue(pkt(e, n * MS), &mut env.ctx(n * MS)).unwrap();
        }
        while q.dequeue(&mut env.ctx(10 * MS)).is_some() {}
        let cl = q.classes();
        assert_eq!((cl[0].name, cl[0].arrivals, cl[0].dequeued), ("l", 2, 2));
        assert_eq!((cl[1].name, cl[1].arrivals, cl[1].dequeued), ("c", 4, 4));
        // two L packets waited 10 and 7 ms: both above the 1 ms step
        assert_eq!((cl[0].marked, cl[0].sojourn_ns), (2, 17 * MS as u128));
        let names: Vec<_> = q.stats().iter().map(|s| s.0).collect();
        assert_eq!(names, ["p_base", "p_c", "p_cl", "p_l", "step_marks"]);
    }
}
