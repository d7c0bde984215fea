//! RIO — RED with In and Out, and its RIO-PS use (In = short-flow packets).
//!
//! Sources: D. Clark and W. Fang, "Explicit Allocation of Best-Effort Packet
//! Delivery Service", IEEE/ACM ToN 6(4), 1998 (RIO); L. Guo and I. Matta,
//! "The War Between Mice and Elephants", ICNP 2001 (RIO-PS, slides
//! "Core Router – RIO-PS" and the parameter
//! table); cross-checked with ns-2.35 `queue/rio.cc`.
//!
//! One FIFO holds all packets (no reordering). On every arrival both
//! averages are updated with the RED estimator ([`super::red`], ns-2
//! `estimator`, including the idle decay when the link was idle):
//! `avg_in` over the number of In packets queued (weight `short.w_q`) and
//! `avg_total` over all packets queued (weight `long.w_q`). An In packet is
//! then judged by RED on `avg_in` with the `short` parameters; an Out packet
//! (and an untagged `Class::Default` one) on `avg_total` with the `long`
//! parameters. Each class keeps its own RED `count` for the spacing of drops
//! ([`super::red::spaced_probability`], with `wait`). With `gentle`, the
//! probability rises from `max_p` to 1 between `max_th` and `2·max_th`;
//! above that (or above `max_th` without gentle) the packet is dropped
//! (forced). With `ecn`, an early drop of an ECN-capable packet becomes a CE
//! mark. A packet that would exceed `limit` is dropped (overflow).
//!
//! Unlike ns-2's `rio.cc` (whose header says it does not update the average
//! when an Out packet arrives — a known, unrepaired bug in ns-2.35), both
//! averages are updated on **every** arrival, whatever its class.
//!
//! Parameters (thresholds in packets; `B` = the buffer `limit` in packets, a
//! byte limit counting packets of `mean_pktsize`):
//! - `limit` (required): packets or bytes;
//! - `short = { min_th, max_th, max_p, w_q }`: default the paper's
//!   (0.15·B, 0.35·B, 1/20, 1/512);
//! - `long = { … }`: default (0.15·B, 0.5·B, 1/10, 1/512);
//! - `gentle` = false, `wait` = false, `ecn` = false (the paper runs all three on);
//! - `mean_pktsize` = 500 bytes: the idle decay's packet size and the unit
//!   of `B` for a byte limit.

use super::red::{estimate, IdleClock, RedDrop, RedVerdict};
use super::{DropCause, Limit, QdCtx, QueueDisc};
use crate::engine::Time;
use crate::net::ext::Class;
use crate::net::packet::{Ecn, Packet};
use serde::{Deserialize, Serialize};
use super::fifo::Fifo;

/// One class's RED parameters; absent values take the class default.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RioClassConfig {
    /// Packets (default a fraction of the buffer).
    #[serde(default)]
    pub min_th: Option<f64>,
    #[serde(default)]
    pub max_th: Option<f64>,
    #[serde(default)]
    pub max_p: Option<f64>,
    #[serde(default)]
    pub w_q: Option<f64>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RioConfig {
    pub limit: Limit,
    /// In (short-flow) packets.
    #[serde(default, alias = "in")]
    pub short: RioClassConfig,
    /// Out (long-flow) packets.
    #[serde(default, alias = "out")]
    pub long: RioClassConfig,
    #[serde(default)]
    pub gentle: bool,
    #[serde(default)]
    pub wait: bool,
    #[serde(default)]
    pub ecn: bool,
    #[serde(default = "d_mean_pktsize")]
    pub mean_pktsize: u32,
}

fn d_mean_pktsize() -> u32 {
    500
}

/// Resolved RED parameters of one class, in packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RioClassParams {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
}

impl RioConfig {
    /// The paper's configuration for a buffer of `limit` packets, with
    /// ECN, wait and gentle on.
    pub fn paper(limit: u32) -> Self {
        RioConfig {
            limit: Limit::Packets(limit),
            short: RioClassConfig::default(),
            long: RioClassConfig::default(),
            gentle: true,
            wait: true,
            ecn: true,
            mean_pktsize: d_mean_pktsize(),
        }
    }

    /// The buffer `B` in packets.
    pub fn buffer_pkts(&self) -> f64 {
        match self.limit {
            Limit::Packets(n) => n as f64,
            Limit::Bytes(b) => b as f64 / self.mean_pktsize.max(1) as f64,
        }
    }

    /// (short, long) parameters with the defaults filled in.
    pub fn resolve(&self) -> (RioClassParams, RioClassParams) {
        let b = self.buffer_pkts();
        let r = |c: &RioClassConfig, min: f64, max: f64, p: f64| RioClassParams {
            min_th: c.min_th.unwrap_or(min * b),
            max_th: c.max_th.unwrap_or(max * b),
            max_p: c.max_p.unwrap_or(p),
            w_q: c.w_q.unwrap_or(1.0 / 512.0),
        };
        (
            r(&self.short, 0.15, 0.35, 1.0 / 20.0),
            r(&self.long, 0.15, 0.5, 1.0 / 10.0),
        )
    }

    pub fn validate(&self) -> Result<(), (String, String)> {
        self.limit
            .validate()
            .map_err(|m| ("limit".to_string(), m))?;
        if self.mean_pktsize == 0 {
            return Err((
                "mean_pktsize".into(),
                "must be a positive number of bytes".into(),
            ));
        }
        let (s, l) = self.resolve();
        for (k, p) in [("short", s), ("long", l)] {
            let e = |f: &str, m: String| Err((format!("{k}.{f}"), m));
            if !(p.min_th >= 0.0 && p.min_th.is_finite()) {
                return e("min_th", format!("must be non-negative, got {}", p.min_th));
            }
            if !(p.max_th > p.min_th && p.max_th.is_finite()) {
                return e(
                    "max_th",
                    format!(
                        "must be greater than min_th ({}), got {}",
                        p.min_th, p.max_th
                    ),
                );
            }
            if !(p.max_p > 0.0 && p.max_p <= 1.0) {
                return e("max_p", format!("must be in (0, 1], got {}", p.max_p));
            }
            if !(p.w_q > 0.0 && p.w_q <= 1.0) {
                return e("w_q", format!("must be in (0, 1], got {}", p.w_q));
            }
        }
        Ok(())
    }
}

/// Per-class arrival and congestion-signal counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RioClassStats {
    pub arrivals: u64,
    pub early: u64,
    pub marked: u64,
    pub forced: u64,
    pub overflow: u64,
}

impl RioClassStats {
    /// Fraction of arrivals dropped or marked.
    pub fn signal_rate(&self) -> f64 {
        if self.arrivals == 0 {
            0.0
        } else {
            (self.early + self.marked + self.forced + self.overflow) as f64 / self.arrivals as f64
        }
    }
}

struct ClassState {
    p: RioClassParams,
    drop: RedDrop,
    stats: RioClassStats,
}

pub struct Rio {
    c: RioConfig,
    q: Fifo,
    in_len: usize,
    avg_in: f64,
    avg_total: f64,
    short: ClassState,
    long: ClassState,
    idle: IdleClock,
}

impl Rio {
    pub fn new(c: &RioConfig, rate_bps: u64) -> Self {
        let (s, l) = c.resolve();
        let st = |p: RioClassParams| ClassState {
            p,
            drop: RedDrop {
                min_th: p.min_th,
                max_th: p.max_th,
                max_p: p.max_p,
                gentle: c.gentle,
                wait: c.wait,
                byte_unit: None,
                count: -1,
                count_bytes: 0,
            },
            stats: RioClassStats::default(),
        };
        Rio {
            c: c.clone(),
            q: Fifo::new(),
            in_len: 0,
            avg_in: 0.0,
            avg_total: 0.0,
            short: st(s),
            long: st(l),
            idle: IdleClock::new(rate_bps, c.mean_pktsize),
        }
    }

    /// Averages (In backlog, total backlog), packets.
    pub fn averages(&self) -> (f64, f64) {
        (self.avg_in, self.avg_total)
    }

    /// In packets queued.
    pub fn in_len(&self) -> usize {
        self.in_len
    }

    /// (short/In, long/Out) statistics.
    pub fn stats(&self) -> (RioClassStats, RioClassStats) {
        (self.short.stats, self.long.stats)
    }

    /// (short, long) resolved parameters.
    pub fn params(&self) -> (RioClassParams, RioClassParams) {
        (self.short.p, self.long.p)
    }

    /// Both averages, one idle period: every arrival updates both.
    fn update_avgs(&mut self, now: Time) {
        let idle = self.idle.arrival(now);
        let (ws, wl) = (self.short.p.w_q, self.long.p.w_q);
        self.avg_in = estimate(self.avg_in, ws, self.in_len as f64, idle);
        self.avg_total = estimate(self.avg_total, wl, self.q.len() as f64, idle);
    }
}

impl QueueDisc for Rio {
    /// The idle-time decay follows the rate.
    fn set_rate(&mut self, now: Time, rate_bps: u64) {
        self.idle.set_rate(now, rate_bps);
    }

    fn kind(&self) -> &'static str {
        "rio"
    }

    fn enqueue(&mut self, mut pkt: Packet, ctx: &mut QdCtx) -> Result<(), DropCause> {
        self.update_avgs(ctx.now);
        let is_in = pkt.ext.class() == Class::In;
        let (st, avg) = if is_in {
            (&mut self.short, self.avg_in)
        } else {
            (&mut self.long, self.avg_total)
        };
        st.stats.arrivals += 1;
        let u = ctx.rng.uniform();
        let mut marked = false;
        match st.drop.judge(avg, pkt.size, || u) {
            RedVerdict::Forced => {
                st.stats.forced += 1;
                return Err(DropCause::Forced);
            }
            RedVerdict::Signal if self.c.ecn && pkt.ecn.capable() => {
                pkt.ecn = Ecn::Ce;
                marked = true;
            }
            RedVerdict::Signal => {
                st.stats.early += 1;
                return Err(DropCause::Early);
            }
            RedVerdict::Accept => {}
        }
        if self.q.would_exceed(&self.c.limit, pkt.size) {
            st.stats.overflow += 1;
            return Err(DropCause::Overflow);
        }
        if marked {
            st.stats.marked += 1;
            ctx.marked += 1;
        }
        self.in_len += is_in as usize;
        self.q.push_back(pkt);
        Ok(())
    }

    fn dequeue(&mut self, ctx: &mut QdCtx) -> Option<Packet> {
        let p = self.q.pop_front();
        match &p {
            Some(p) if p.ext.class() == Class::In => self.in_len -= 1,
            Some(_) => {}
            None => self.idle.went_idle(ctx.now),
        }
        p
    }

    fn len_pkts(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
    /// The total average (the one long packets are judged by), packets.
    fn avg_len(&self) -> Option<f64> {
        Some(self.avg_total)
    }
    /// Each class's arrivals and signals (`short.*` = In, `long.*` = Out).
    fn stats(&self) -> Vec<(&'static str, f64)> {
        let (s, l) = (self.short.stats, self.long.stats);
        vec![
            ("short.arrivals", s.arrivals as f64),
            ("short.early", s.early as f64),
            ("short.marked", s.marked as f64),
            ("short.forced", s.forced as f64),
            ("short.overflow", s.overflow as f64),
            ("long.arrivals", l.arrivals as f64),
            ("long.early", l.early as f64),
            ("long.marked", l.marked as f64),
            ("long.forced", l.forced as f64),
            ("long.overflow", l.overflow as f64),
        ]
    }
}

impl super::registry::Registered for RioConfig {
    const KIND: &'static str = "rio";
    const ABOUT: &'static str = "RED with In and Out (Clark & Fang 1998; RIO-PS, Guo & Matta 2001)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!(required = "100", "limit", "packets, or bytes with a unit", "> 0", "0", "buffer size"),
        crate::registry::param!("short", "", "table { min_th, max_th, max_p, w_q }", "{ max_p = 1.5 }", "RED parameters of In (short-flow) packets; default (0.15·B, 0.35·B, 1/20, 1/512)"),
        crate::registry::param!("long", "", "table { min_th, max_th, max_p, w_q }", "{ w_q = 0.0 }", "RED parameters of Out packets; default (0.15·B, 0.5·B, 1/10, 1/512)"),
        crate::registry::param!("gentle", "", "true/false", "", "gentle RED above max_th"),
        crate::registry::param!("wait", "", "true/false", "", "space drops by waiting"),
        crate::registry::param!("ecn", "", "true/false", "", "mark instead of dropping early"),
        crate::registry::param!("mean_pktsize", "bytes", "≥ 1", "0", "idle-decay packet size, unit of B for a byte limit"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        RioConfig::validate(self)
    }
}

impl super::registry::QueueKind for RioConfig {
    const FIFO: bool = true;
    fn build(&self, port: &mut super::PortCtx) -> Box<dyn QueueDisc> {
        Box::new(Rio::new(self, port.rate_bps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStream;

    fn pkt(uid: u64, class: Class) -> Packet {
        Packet {
            uid,
            size: 500,
            ext: crate::net::ext::Ext::Rio(class),
            ecn: Ecn::Ect0,
            ..Default::default()
        }
    }

    #[test]
    fn paper_defaults_resolve() {
        let (s, l) = RioConfig::paper(500).resolve();
        assert_eq!((s.min_th, s.max_th, s.max_p), (75.0, 175.0, 0.05));
        assert_eq!((l.min_th, l.max_th, l.max_p), (75.0, 250.0, 0.1));
        assert_eq!(s.w_q, 1.0 / 512.0);
        assert!(RioConfig::paper(500).validate().is_ok());
    }

    #[test]
    fn averages_update_on_every_arrival() {
        // w_q = 1: averages equal the instantaneous backlogs seen on arrival
        let mut c = RioConfig::paper(100);
        c.short.w_q = Some(1.0);
        c.long.w_q = Some(1.0);
        let mut r = Rio::new(&c, 1_000_000);
        let (mut rng, mut d) = (RngStream::new(1, 1), vec![]);
        let mut ctx = QdCtx {
            now: 0,
            rng: &mut rng,
            dropped: &mut d,
            marked: 0,
        };
        r.enqueue(pkt(0, Class::In), &mut ctx).unwrap();
        r.enqueue(pkt(1, Class::Out), &mut ctx).unwrap();
        // the Out arrival updated both averages (q_in = 1, q = 1)
        assert_eq!(r.averages(), (1.0, 1.0));
        r.enqueue(pkt(2, Class::Out), &mut ctx).unwrap();
        assert_eq!(r.averages(), (1.0, 2.0));
        assert_eq!(r.in_len(), 1);
        let p = r.dequeue(&mut ctx).unwrap();
        assert_eq!(p.uid, 0);
        assert_eq!(r.in_len(), 0);
    }

    #[test]
    fn in_judged_on_in_average_out_on_total() {
        // w_q = 1, ECN on (early signals become marks, packets stay):
        // Out packets are forced once the total average reaches
        // 2·max_th_long = 50; an In packet is then still accepted because
        // the In average is 0 < min_th_short.
        let mut c = RioConfig::paper(1000);
        c.short.w_q = Some(1.0);
        c.long.w_q = Some(1.0);
        c.short.min_th = Some(15.0);
        c.short.max_th = Some(35.0);
        c.long.min_th = Some(15.0);
        c.long.max_th = Some(25.0);
        let mut r = Rio::new(&c, 1_000_000);
        let (mut rng, mut d) = (RngStream::new(1, 1), vec![]);
        let mut ctx = QdCtx {
            now: 0,
            rng: &mut rng,
            dropped: &mut d,
            marked: 0,
        };
        let accepted = (0..60)
            .filter(|&i| r.enqueue(pkt(i, Class::Out), &mut ctx).is_ok())
            .count();
        assert_eq!(accepted, 50);
        assert!(ctx.marked > 0);
        assert_eq!(
            r.enqueue(pkt(100, Class::Out), &mut ctx),
            Err(DropCause::Forced)
        );
        assert!(r.enqueue(pkt(101, Class::In), &mut ctx).is_ok());
        assert_eq!(r.stats().0.arrivals, 1);
        assert_eq!(r.stats().0.signal_rate(), 0.0);
        assert_eq!(r.stats().1.forced, 11);
    }

    #[test]
    fn overflow_at_limit() {
        let mut c = RioConfig::paper(2);
        c.long.min_th = Some(10.0);
        c.long.max_th = Some(20.0);
        let mut r = Rio::new(&c, 1_000_000);
        let (mut rng, mut d) = (RngStream::new(1, 1), vec![]);
        let mut ctx = QdCtx {
            now: 0,
            rng: &mut rng,
            dropped: &mut d,
            marked: 0,
        };
        r.enqueue(pkt(0, Class::Out), &mut ctx).unwrap();
        r.enqueue(pkt(1, Class::Default), &mut ctx).unwrap();
        assert_eq!(
            r.enqueue(pkt(2, Class::Out), &mut ctx),
            Err(DropCause::Overflow)
        );
        assert_eq!(r.stats().1.overflow, 1);
        assert_eq!(ctx.marked, 0);
    }

    #[test]
    fn validate_names_the_key() {
        let mut c = RioConfig::paper(100);
        c.short.max_th = Some(1.0);
        assert_eq!(c.validate().unwrap_err().0, "short.max_th");
        let mut c = RioConfig::paper(100);
        c.long.max_p = Some(2.0);
        assert_eq!(c.validate().unwrap_err().0, "long.max_p");
    }
}
