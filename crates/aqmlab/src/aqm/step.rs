//! Step marking: a FIFO that ECN-marks every packet above a fixed threshold
//! K, as data-centre switches are configured for DCTCP.
//!
//! Sources: M. Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, §3.1
//! ("a packet is marked with the CE codepoint if the queue occupancy is
//! greater than K upon its arrival"); RFC 8257 §3.1 (the switch marks when
//! the instantaneous queue length exceeds a threshold); the sojourn-time
//! form is Linux `sch_fq_codel`'s `ce_threshold` (mark at dequeue when the
//! packet's sojourn time exceeds the threshold).
//!
//! Exactly one threshold is given:
//! - `k`: queue length, packets (`k = 20`) or bytes (`k = "30KB"`). An
//!   ECN-capable arrival is marked CE when the queue already holds more than
//!   K (packets or bytes, not counting the arrival).
//! - `k_sojourn`: time. An ECN-capable packet is marked CE at dequeue when it
//!   waited longer than K.
//!
//! Packets that are not ECN-capable are never marked and never dropped early
//! (as `ce_threshold`); any packet is tail-dropped when the queue is at
//! `limit`.
//!
//! Parameters: `limit` = 1000 packets; `k` or `k_sojourn` (required, one of
//! them).

use super::{DropCause, Limit, QdCtx, QueueDisc};
use crate::net::packet::{Ecn, Packet};
use crate::units::Dur;
use serde::{Deserialize, Serialize};
use super::fifo::Fifo;

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StepConfig {
    #[serde(default = "d_limit")]
    pub limit: Limit,
    /// Length threshold (packets or bytes).
    #[serde(default)]
    pub k: Option<Limit>,
    /// Sojourn-time threshold.
    #[serde(default)]
    pub k_sojourn: Option<Dur>,
}

fn d_limit() -> Limit {
    Limit::Packets(1000)
}

impl StepConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        self.limit.validate().map_err(|m| ("limit".to_string(), m))?;
        match (self.k, self.k_sojourn) {
            (Some(_), Some(_)) => Err(("k_sojourn".into(), "give either k or k_sojourn, not both".into())),
            (None, None) => Err((
                "k".into(),
                "required: a length threshold (k = 20, k = \"30KB\") or k_sojourn = \"1ms\"".into(),
            )),
            (Some(k), None) => k.validate().map_err(|m| ("k".to_string(), m)),
            (None, Some(d)) if d.0 == 0 => Err(("k_sojourn".into(), "must be positive".into())),
            (None, Some(_)) => Ok(()),
        }
    }
}

pub struct Step {
    limit: Limit,
    k: Option<Limit>,
    k_sojourn: Option<SojournStep>,
    q: Fifo,
}

impl Step {
    pub fn new(c: &StepConfig) -> Self {
        Step {
            limit: c.limit,
            k: c.k,
            k_sojourn: c.k_sojourn.map(|d| SojournStep {
                threshold: d.0,
                selector: CeSelector::Ect,
            }),
            q: Fifo::new(),
        }
    }
}

/// Mark an ECN-capable packet CE (a packet already CE counts again, as
/// Linux's `INET_ECN_set_ce` reports it marked); a Not-ECT packet is left
/// alone.
pub(crate) fn mark(p: &mut Packet, ctx: &mut QdCtx) {
    if p.ecn.capable() {
        p.ecn = Ecn::Ce;
        ctx.marked += 1;
    }
}

/// Which packets a sojourn-time step marks.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CeSelector {
    /// Every ECN-capable packet (Linux `ce_threshold` alone).
    #[default]
    Ect,
    /// Only packets whose ECN field has its low bit set, ECT(1) and CE:
    /// Linux `ce_threshold_selector 0x1/0x1`, the L4S identifier of RFC 9331.
    Ect1,
}

impl CeSelector {
    fn selects(self, ecn: Ecn) -> bool {
        match self {
            CeSelector::Ect => ecn.capable(),
            CeSelector::Ect1 => matches!(ecn, Ecn::Ect1 | Ecn::Ce),
        }
    }
}

/// The sojourn-time step: mark, at dequeue, a selected packet that waited
/// longer than `threshold` (strictly, as Linux `codel_time_after`). Used
/// by `step` (`k_sojourn`) and by CoDel/FQ-CoDel's `ce_threshold`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SojournStep {
    pub threshold: u64,
    pub selector: CeSelector,
}

impl SojournStep {
    /// Is `p` one this step applies to?
    pub fn selects(&self, p: &Packet) -> bool {
        self.selector.selects(p.ecn)
    }
    /// Mark `p` if it is selected and waited longer than the threshold;
    /// true if it was marked.
    pub fn apply(&self, p: &mut Packet, ctx: &mut QdCtx) -> bool {
        if self.selects(p) && ctx.now.saturating_sub(p.enq_time) > self.threshold {
            mark(p, ctx);
            true
        } else {
            false
        }
    }
}

impl QueueDisc for Step {
    fn kind(&self) -> &'static str {
        "step"
    }

    fn enqueue(&mut self, mut pkt: Packet, ctx: &mut QdCtx) -> Result<(), DropCause> {
        if self.q.would_exceed(&self.limit, pkt.size) {
            return Err(DropCause::Overflow);
        }
        let above = match self.k {
            Some(Limit::Packets(k)) => self.q.len() > k as usize,
            Some(Limit::Bytes(k)) => self.q.bytes() > k,
            None => false,
        };
        if above {
            mark(&mut pkt, ctx);
        }
        self.q.push_back(pkt);
        Ok(())
    }

    fn dequeue(&mut self, ctx: &mut QdCtx) -> Option<Packet> {
        let mut p = self.q.pop_front()?;
        if let Some(k) = self.k_sojourn {
            k.apply(&mut p, ctx);
        }
        Some(p)
    }

    fn len_pkts(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
}

impl super::registry::Registered for StepConfig {
    const KIND: &'static str = "step";
    const ABOUT: &'static str =
        "step marking: ECN-mark every packet above a threshold K (DCTCP, SIGCOMM 2010 §3.1; RFC 8257 §3.1)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("limit", "packets, or bytes with a unit", "> 0", "0", "buffer size (tail drop)"),
        crate::registry::param!(required = "20", "k", "packets, or bytes with a unit", "> 0; this or k_sojourn", "0", "mark arrivals while more than k is queued"),
        crate::registry::param!("k_sojourn", "time", "> 0; this or k", "\"0ms\"", "mark at dequeue packets that waited longer"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        StepConfig::validate(self)
    }
}

impl super::registry::QueueKind for StepConfig {
    const FIFO: bool = true;
    fn build(&self, _: &mut super::PortCtx) -> Box<dyn QueueDisc> {
        Box::new(Step::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStream;

    fn pkt(uid: u64, ect: bool, now: u64) -> Packet {
        Packet {
            uid,
            size: 1000,
            enq_time: now,
            ecn: if ect { Ecn::Ect0 } else { Ecn::NotEct },
            flags: crate::net::packet::flags::DATA,
            ..Default::default()
        }
    }

    #[test]
    fn length_threshold_marks_every_ect_arrival_above_k() {
        let c: StepConfig = toml::from_str("k = 3\nlimit = 8").unwrap();
        c.validate().unwrap();
        let mut q = Step::new(&c);
        let mut rng = RngStream::new(1, 1);
        let mut dropped = Vec::new();
        let mut ctx = QdCtx { now: 0, rng: &mut rng, dropped: &mut dropped, marked: 0 };
        for i in 0..10 {
            let r = q.enqueue(pkt(i, i != 6, 0), &mut ctx);
            assert_eq!(r.is_err(), i >= 8, "{i}");
        }
        // arrivals 0..=3 find ≤ 3 queued; 4, 5, 7 find more and are ECT
        assert_eq!(ctx.marked, 3);
        let out: Vec<Ecn> = (0..8).map(|_| q.dequeue(&mut ctx).unwrap().ecn).collect();
        assert_eq!(&out[..4], &[Ecn::Ect0; 4]);
        assert_eq!(out[4], Ecn::Ce);
        assert_eq!(out[5], Ecn::Ce);
        assert_eq!(out[6], Ecn::NotEct, "a non-ECT packet is neither marked nor dropped");
        assert_eq!(out[7], Ecn::Ce);
    }

    #[test]
    fn byte_threshold() {
        let c: StepConfig = toml::from_str("k = \"2500B\"").unwrap();
        let mut q = Step::new(&c);
        let mut rng = RngStream::new(1, 1);
        let mut dropped = Vec::new();
        let mut ctx = QdCtx { now: 0, rng: &mut rng, dropped: &mut dropped, marked: 0 };
        for i in 0..5 {
            q.enqueue(pkt(i, true, 0), &mut ctx).unwrap();
        }
        // 0, 1000, 2000 B queued: no mark; 3000, 4000 B: mark
        assert_eq!(ctx.marked, 2);
    }

    #[test]
    fn sojourn_threshold_marks_at_dequeue() {
        let c: StepConfig = toml::from_str("k_sojourn = \"1ms\"").unwrap();
        c.validate().unwrap();
        let mut q = Step::new(&c);
        let mut rng = RngStream::new(1, 1);
        let mut dropped = Vec::new();
        let mut ctx = QdCtx { now: 0, rng: &mut rng, dropped: &mut dropped, marked: 0 };
        for i in 0..3 {
            q.enqueue(pkt(i, true, 0), &mut ctx).unwrap();
        }
        assert_eq!(ctx.marked, 0);
        ctx.now = 1_000_000;
        assert_eq!(q.dequeue(&mut ctx).unwrap().ecn, Ecn::Ect0, "exactly K is not above K");
        ctx.now = 1_000_001;
        assert_eq!(q.dequeue(&mut ctx).unwrap().ecn, Ecn::Ce);
        assert_eq!(ctx.marked, 1);
    }

    #[test]
    fn exactly_one_threshold() {
        let both: StepConfig = toml::from_str("k = 3\nk_sojourn = \"1ms\"").unwrap();
        assert_eq!(both.validate().unwrap_err().0, "k_sojourn");
        let none: StepConfig = toml::from_str("").unwrap();
        assert_eq!(none.validate().unwrap_err().0, "k");
    }
}
