//! Edge classifier of RIO-PS: tag packets short (`Class::In`) or long
//! (`Class::Out`) by how many packets their flow has sent. The tag is the
//! packet's extension slot (`Ext::Rio`, `net/ext.rs`), which RIO and the
//! port's per-class counters read.
//!
//! Source: L. Guo and I. Matta, "The War Between Mice and Elephants",
//! ICNP 2001 (slides, "Edge Router – Packet
//! classification"): a counter per flow; a packet is short while its flow's
//! count is ≤ `L_t`, long afterwards; entries idle for `T_u` are removed;
//! every `T_c`, `L_t` is adjusted to keep the ratio of active short to long
//! flows near the target `SLR`. The slides give only that goal; the rule
//! used here is ours:
//!
//! **Adjustment rule (multiplicative feedback on the observed ratio).** At
//! each adjustment instant, with `n_s` the active entries whose count is
//! ≤ `L_t` and `n_l` those above it, the observed ratio is
//! `r = (n_s + ½)/(n_l + ½)` (the ½ keeps it finite with no long flow), and
//! `L_t ← clamp(L_t · (SLR / r)^gain, min_threshold, max_threshold)`.
//! Why: `r` grows monotonically with `L_t`; for heavy-tailed flow sizes
//! (bounded Pareto, shape α) the fraction of flows above `L` falls like
//! `L^−α`, so `log r ≈ α·log L + const` and a step in `log L_t` proportional
//! to `log(SLR/r)` is an integral controller in the log domain, whose error
//! shrinks by `(1 − α·gain)` per step (stable for `gain < 2/α`). Being
//! closed-loop, it settles where the ratio *observed with the threshold in
//! force* equals SLR on (geometric) average — not merely the ratio of a
//! snapshot just after the change, which flows then outgrow. A flow's
//! count is not re-evaluated when `L_t` changes: a packet's class depends
//! on its flow's count and the `L_t` at the packet's arrival.
//!
//! Periodic work runs lazily on packet arrivals (as `aqm/pie.rs` does): the
//! table is swept for idle entries every `T_u` and `L_t` adjusted every
//! `T_c`, at the first arrival at or after each due time. An entry found
//! idle for ≥ `T_u` at lookup is restarted (count 0) even before a sweep
//! removes it, so the timing of sweeps does not change tags.
//!
//! Flows are identified by the simulator's flow id (one TCP connection; in
//! a real router, the 5-tuple). Every packet entering the port counts (SYN
//! and retransmissions included); packets of both directions are tagged if
//! both traverse the port.
//!
//! **Plain RIO** (a fixed rule) is `adapt = false`: `L_t` stays at
//! `threshold`.
//!
//! Parameters (scenario `classifier_ab = { … }` / `classifier_ba` on a link):
//! - `threshold` = 20 packets: the initial (or, with `adapt = false`, fixed) `L_t`;
//! - `adapt` = true: adjust `L_t` every `t_c`;
//! - `slr` = 3: target ratio of active short to long flows, > 0;
//! - `t_u` = 1 s: idle time after which a flow entry is removed;
//! - `t_c` = 10 s: adjustment period;
//! - `gain` = 0.5: exponent of the feedback step, in (0, 2];
//! - `min_threshold` = 1, `max_threshold` = 1 000 000 packets: bounds on `L_t`.

use crate::engine::Time;
use crate::net::ext::{Class, Ext};
use crate::net::packet::{FlowId, Packet};
use crate::units::Dur;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClassifierSpec {
    #[serde(default = "d_threshold")]
    pub threshold: f64,
    #[serde(default = "d_true")]
    pub adapt: bool,
    #[serde(default = "d_slr")]
    pub slr: f64,
    #[serde(default = "d_tu")]
    pub t_u: Dur,
    #[serde(default = "d_tc")]
    pub t_c: Dur,
    #[serde(default = "d_gain")]
    pub gain: f64,
    #[serde(default = "d_min_th")]
    pub min_threshold: f64,
    #[serde(default = "d_max_th")]
    pub max_threshold: f64,
}

fn d_threshold() -> f64 {
    20.0
}
fn d_true() -> bool {
    true
}
fn d_slr() -> f64 {
    3.0
}
fn d_tu() -> Dur {
    Dur(1_000_000_000)
}
fn d_tc() -> Dur {
    Dur(10_000_000_000)
}
fn d_gain() -> f64 {
    0.5
}
fn d_min_th() -> f64 {
    1.0
}
fn d_max_th() -> f64 {
    1e6
}

impl Default for ClassifierSpec {
    fn default() -> Self {
        ClassifierSpec {
            threshold: d_threshold(),
            adapt: true,
            slr: d_slr(),
            t_u: d_tu(),
            t_c: d_tc(),
            gain: d_gain(),
            min_threshold: d_min_th(),
            max_threshold: d_max_th(),
        }
    }
}

impl ClassifierSpec {
    /// A fixed-threshold classifier (plain RIO tagging).
    pub fn fixed(threshold: f64) -> Self {
        ClassifierSpec {
            threshold,
            adapt: false,
            ..Default::default()
        }
    }

    pub fn validate(&self) -> Result<(), (String, String)> {
        let e = |k: &str, m: String| Err((k.to_string(), m));
        if !(self.min_threshold >= 0.0 && self.min_threshold.is_finite()) {
            return e(
                "min_threshold",
                "must be a non-negative packet count".into(),
            );
        }
        if !(self.max_threshold >= self.min_threshold && self.max_threshold.is_finite()) {
            return e(
                "max_threshold",
                format!("must be at least min_threshold ({})", self.min_threshold),
            );
        }
        if !(self.threshold >= 0.0 && self.threshold.is_finite()) {
            return e(
                "threshold",
                format!(
                    "must be a non-negative packet count, got {}",
                    self.threshold
                ),
            );
        }
        if !(self.slr > 0.0 && self.slr.is_finite()) {
            return e("slr", format!("must be positive, got {}", self.slr));
        }
        if self.t_u.0 == 0 {
            return e("t_u", "must be positive".into());
        }
        if self.t_c.0 == 0 {
            return e("t_c", "must be positive".into());
        }
        if !(self.gain > 0.0 && self.gain <= 2.0) {
            return e("gain", format!("must be in (0, 2], got {}", self.gain));
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    count: u64,
    last: Time,
}

/// One `L_t` adjustment: the state observed just before it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Adjustment {
    pub time: Time,
    /// Active flows with count ≤ `L_t` (short) and above (long).
    pub n_short: u32,
    pub n_long: u32,
    /// `L_t` in force before and after the adjustment.
    pub threshold_before: f64,
    pub threshold_after: f64,
}

/// Packet counters of a classifier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ClassifierCounters {
    pub tagged_in: u64,
    pub tagged_out: u64,
    /// Entries removed for idleness.
    pub expired: u64,
}

pub struct Classifier {
    spec: ClassifierSpec,
    threshold: f64,
    table: HashMap<FlowId, Entry>,
    next_sweep: Time,
    next_adjust: Time,
    pub counters: ClassifierCounters,
    /// Every adjustment made (one per `t_c`; empty when `adapt = false`).
    pub history: Vec<Adjustment>,
}

impl Classifier {
    pub fn new(spec: &ClassifierSpec) -> Self {
        Classifier {
            spec: spec.clone(),
            threshold: spec.threshold.clamp(spec.min_threshold, spec.max_threshold),
            table: HashMap::new(),
            next_sweep: spec.t_u.0,
            next_adjust: spec.t_c.0,
            counters: ClassifierCounters::default(),
            history: Vec::new(),
        }
    }

    /// The current threshold `L_t`, packets.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// Active (short, long) flow entries under the current `L_t`.
    pub fn active(&self) -> (u32, u32) {
        let mut s = 0;
        let mut l = 0;
        for e in self.table.values() {
            if e.count as f64 <= self.threshold {
                s += 1;
            } else {
                l += 1;
            }
        }
        (s, l)
    }

    /// Entries in the flow table.
    pub fn table_len(&self) -> usize {
        self.table.len()
    }

    /// Its counters and final threshold, for the queue's `stats` in
    /// `summary.json`.
    pub fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("tagged_in", self.counters.tagged_in as f64),
            ("tagged_out", self.counters.tagged_out as f64),
            ("expired", self.counters.expired as f64),
            ("adjustments", self.history.len() as f64),
            ("threshold", self.threshold),
        ]
    }

    /// Classify and tag `pkt` arriving at `now`.
    pub fn tag(&mut self, pkt: &mut Packet, now: Time) {
        self.tick(now);
        let t_u = self.spec.t_u.0;
        let e = self.table.entry(pkt.flow).or_insert(Entry {
            count: 0,
            last: now,
        });
        if now.saturating_sub(e.last) >= t_u {
            e.count = 0;
        }
        e.count += 1;
        e.last = now;
        if e.count as f64 <= self.threshold {
            pkt.ext = Ext::Rio(Class::In);
            self.counters.tagged_in += 1;
        } else {
            pkt.ext = Ext::Rio(Class::Out);
            self.counters.tagged_out += 1;
        }
    }

    /// The periodic work due by `now` (run lazily from [`Classifier::tag`]).
    fn tick(&mut self, now: Time) {
        if now >= self.next_sweep {
            let t_u = self.spec.t_u.0;
            let before = self.table.len();
            self.table.retain(|_, e| now.saturating_sub(e.last) < t_u);
            self.counters.expired += (before - self.table.len()) as u64;
            self.next_sweep = now + t_u;
        }
        if now >= self.next_adjust {
            let (n_s, n_l) = self.active();
            let before = self.threshold;
            if self.spec.adapt {
                let r = (n_s as f64 + 0.5) / (n_l as f64 + 0.5);
                let f = (self.spec.slr / r).powf(self.spec.gain);
                self.threshold =
                    (before * f).clamp(self.spec.min_threshold, self.spec.max_threshold);
                self.history.push(Adjustment {
                    time: now,
                    n_short: n_s,
                    n_long: n_l,
                    threshold_before: before,
                    threshold_after: self.threshold,
                });
            }
            // next due instant on the T_c grid after now
            let tc = self.spec.t_c.0;
            self.next_adjust = (now / tc + 1) * tc;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::secs;

    fn pkt(flow: u32) -> Packet {
        Packet {
            flow: FlowId(flow),
            ..Default::default()
        }
    }

    #[test]
    fn first_lt_packets_are_in() {
        let mut c = Classifier::new(&ClassifierSpec::fixed(3.0));
        let classes: Vec<Class> = (0..5)
            .map(|i| {
                let mut p = pkt(7);
                c.tag(&mut p, i * 1000);
                p.ext.class()
            })
            .collect();
        assert_eq!(
            classes,
            [Class::In, Class::In, Class::In, Class::Out, Class::Out]
        );
        assert_eq!(c.counters.tagged_in, 3);
        assert_eq!(c.counters.tagged_out, 2);
    }

    #[test]
    fn idle_entries_expire_and_restart() {
        let mut c = Classifier::new(&ClassifierSpec::fixed(2.0));
        for i in 0..3 {
            let mut p = pkt(1);
            c.tag(&mut p, i);
        }
        // idle for 1 s (= T_u): the flow starts over as short
        let mut p = pkt(1);
        c.tag(&mut p, secs(1.0) + 2);
        assert_eq!(p.ext.class(), Class::In);
        // another flow arriving after a further T_u sweeps flow 1 away
        let mut q = pkt(2);
        c.tag(&mut q, secs(2.5));
        assert_eq!(c.table_len(), 1);
        assert!(c.counters.expired >= 1);
    }

    #[test]
    fn fixed_threshold_never_adapts() {
        let mut c = Classifier::new(&ClassifierSpec::fixed(5.0));
        for i in 0..100u64 {
            let mut p = pkt((i % 3) as u32);
            c.tag(&mut p, secs(i as f64));
        }
        assert_eq!(c.threshold(), 5.0);
        assert!(c.history.is_empty());
    }

    #[test]
    fn raises_threshold_when_too_few_short() {
        // 4 flows each sending 1 packet per 10 ms: all long under L_t = 2
        let mut c = Classifier::new(&ClassifierSpec {
            threshold: 2.0,
            ..Default::default()
        });
        let mut t = 0;
        while t <= secs(10.5) {
            for f in 0..4 {
                let mut p = pkt(f);
                c.tag(&mut p, t);
            }
            t += 10_000_000;
        }
        let a = c.history[0];
        assert_eq!((a.n_short, a.n_long), (0, 4));
        // r = 0.5/4.5 → factor (3/0.111)^0.5 = 5.196
        assert!((a.threshold_after / 2.0 - (27.0f64).sqrt()).abs() < 1e-9);
    }

    #[test]
    fn validate_rejects_bad_values() {
        let s = ClassifierSpec {
            slr: 0.0,
            ..Default::default()
        };
        assert_eq!(s.validate().unwrap_err().0, "slr");
        let s = ClassifierSpec {
            gain: 3.0,
            ..Default::default()
        };
        assert_eq!(s.validate().unwrap_err().0, "gain");
        assert!(ClassifierSpec::default().validate().is_ok());
    }
}
