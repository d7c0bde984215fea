//! RED — Random Early Detection.
//!
//! Source: S. Floyd and V. Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1(4), 1993, Fig. 2 (the algorithm) and
//! §7 (count-based spacing); details cross-checked with ns-2.35
//! `queue/red.cc` (`estimator`, `calculate_p_new`, `modify_p`), from which
//! the `gentle` curve and the `wait` variant of the spacing rule come.
//!
//! On each arrival, with `q` the instantaneous queue (packets, before the
//! arrival):
//! - average: if the link went idle at `q_time`, first decay
//!   `avg ← (1 − w_q)^m · avg` with `m = (now − q_time) · C / (8 · mean_pktsize)`
//!   (the number of small packets the link could have sent while idle), then
//!   `avg ← (1 − w_q) · avg + w_q · q` (ns-2 `estimator`);
//! - `avg < min_th`: accept, `count ← −1`;
//! - `min_th ≤ avg < max_th`: `count ← count + 1`,
//!   `p_b = max_p · (avg − min_th)/(max_th − min_th)`,
//!   `p_a = p_b / (1 − count·p_b)` (1 once `count·p_b ≥ 1`); with probability
//!   `p_a` drop (or mark, see `ecn`) and `count ← 0`;
//! - `gentle` and `max_th ≤ avg < 2·max_th`: as above with
//!   `p_b = max_p + (1 − max_p)(avg − max_th)/max_th`;
//! - otherwise (`avg ≥ max_th`, or `≥ 2·max_th` if gentle): forced drop,
//!   `count ← 0`;
//! - a packet that would exceed `limit` is dropped (overflow), whatever `avg`.
//!
//! With `wait = true` (ns-2 `wait_`), `p_a = 0` while `count·p_b < 1`,
//! `p_b/(2 − count·p_b)` while `count·p_b < 2`, else 1.
//!
//! Parameters (thresholds in packets):
//! - `limit` (required): hard buffer limit, packets or bytes;
//! - `min_th`, `max_th` (required), `min_th < max_th`;
//! - `max_p` = 0.1 (ns-2 `linterm_ = 10`), in (0, 1];
//! - `w_q` = 0.002, in (0, 1];
//! - `gentle` = false; `wait` = false;
//! - `ecn` = false: when true, an early drop of an ECN-capable packet becomes a
//!   CE mark (RFC 3168 §5); forced and overflow drops stay drops;
//! - `mean_pktsize` = 500 bytes (ns-2/ns-3 default): the idle decay and, in
//!   byte mode, the unit of the thresholds;
//! - `bytes` = false: byte mode (ns-2 `bytes_`/`queue_in_bytes_`): the average
//!   is over bytes, `min_th`/`max_th` count packets of `mean_pktsize` bytes,
//!   `count` is `count_bytes / mean_pktsize` (integer division) and the
//!   spaced probability is scaled by `size / mean_pktsize`; a `limit` given
//!   in packets then means `limit · mean_pktsize` bytes, as in ns-2;
//! - `auto` = false: ns-2.35's automatic configuration
//!   (`REDQueue::initialize_params`) for whichever of `min_th`, `max_th`,
//!   `w_q` is not given: `min_th = max(5, target_delay · ptc / 2)`,
//!   `max_th = 3 · min_th`, `w_q = 1 − exp(−1 / (10 · max(0.1, 3 · (d + 1/ptc)) · ptc))`
//!   with `ptc = C / (8 · mean_pktsize)` and `d` the link's delay (ns-2's
//!   `q_weight_ = -1` rule); `target_delay` = 5 ms.
//!
//! Differences from ns-2's RED left as FJ93 has them: `count` restarts at −1
//! below `min_th` (ns-2 sets it to 1 without dropping on the first arrival
//! above `min_th`), and early drops need no `qlen > 1`.
//!
//! `variant = "ns3"`: the drop decision as ns-3 3.44 `RedQueueDisc::
//! DoEnqueue` codes it (a port of ns-2's `REDQueue::enque`): `count` grows
//! on every arrival; an arrival is judged only when `avg ≥ min_th` and the
//! queue held more than one packet (`nQueued > 1`), otherwise the
//! first-crossing flag is cleared (`m_old = 0`); the first arrival judged
//! after that sets `count = 1` and the flag and is accepted untested; a
//! forced drop (`avg ≥ max_th`, `2·max_th` if gentle) leaves `count` as it
//! is (ns-3 resets it only with `Ns1Compat`, where ns-2 resets it unless
//! `ns1_compat_`); an early drop sets it to 0. The average, `p_b` and the
//! spacing are those above.

use super::{DropCause, Limit, QdCtx, QueueDisc};
use crate::engine::{Time, NS_PER_SEC};
use crate::net::packet::{Ecn, Packet};
use serde::{Deserialize, Serialize};
use super::fifo::Fifo;

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    pub limit: Limit,
    /// Packets (of `mean_pktsize` bytes in byte mode); 0 with `auto` = automatic.
    #[serde(default)]
    pub min_th: f64,
    /// Packets (of `mean_pktsize` bytes in byte mode); 0 with `auto` = automatic.
    #[serde(default)]
    pub max_th: f64,
    #[serde(default = "d_max_p")]
    pub max_p: f64,
    /// Default 0.002, or automatic with `auto`.
    #[serde(default)]
    pub w_q: Option<f64>,
    #[serde(default)]
    pub gentle: bool,
    #[serde(default)]
    pub wait: bool,
    #[serde(default)]
    pub ecn: bool,
    #[serde(default = "d_mean_pktsize")]
    pub mean_pktsize: u32,
    #[serde(default)]
    pub bytes: bool,
    #[serde(default)]
    pub auto: bool,
    #[serde(default = "d_target_delay")]
    pub target_delay: crate::units::Dur,
    /// The count rule: FJ93 (default) or ns-3 3.44's `RedQueueDisc`.
    #[serde(default)]
    pub variant: RedVariant,
}

/// Which rule keeps RED's `count` (see the module's note).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RedVariant {
    /// Floyd & Jacobson 1993, Fig. 2.
    #[default]
    Fj93,
    /// ns-3 3.44 `RedQueueDisc::DoEnqueue`.
    Ns3,
}

fn d_max_p() -> f64 {
    0.1
}
fn d_mean_pktsize() -> u32 {
    500
}
fn d_target_delay() -> crate::units::Dur {
    crate::units::Dur(5_000_000)
}

/// RED's thresholds and weight after automatic configuration, in the units
/// the queue is measured in (packets, or bytes in byte mode).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedParams {
    pub min_th: f64,
    pub max_th: f64,
    pub w_q: f64,
}

impl RedConfig {
    /// A config with the given thresholds and ns-2 defaults elsewhere.
    pub fn new(limit: Limit, min_th: f64, max_th: f64, max_p: f64, w_q: f64) -> Self {
        RedConfig {
            limit,
            min_th,
            max_th,
            max_p,
            w_q: Some(w_q),
            gentle: false,
            wait: false,
            ecn: false,
            mean_pktsize: d_mean_pktsize(),
            bytes: false,
            auto: false,
            target_delay: d_target_delay(),
            variant: RedVariant::Fj93,
        }
    }

    /// Thresholds (in queue units) and weight for a link of `rate_bps` and
    /// one-way delay `delay`.
    pub fn resolve(&self, rate_bps: u64, delay: Time) -> RedParams {
        let ptc = rate_bps as f64 / (8.0 * self.mean_pktsize as f64);
        let mut min_th = self.min_th;
        let mut max_th = self.max_th;
        if self.auto && min_th == 0.0 {
            min_th = (self.target_delay.secs() * ptc / 2.0).max(5.0);
        }
        if self.auto && max_th == 0.0 {
            max_th = 3.0 * min_th;
        }
        let w_q = match self.w_q {
            Some(w) => w,
            None if self.auto => {
                let rtt = (3.0 * (crate::engine::to_secs(delay) + 1.0 / ptc)).max(0.1);
                1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
            }
            None => 0.002,
        };
        let unit = if self.bytes {
            self.mean_pktsize as f64
        } else {
            1.0
        };
        RedParams {
            min_th: min_th * unit,
            max_th: max_th * unit,
            w_q,
        }
    }

    pub fn validate(&self) -> Result<(), (String, String)> {
        let e = |k: &str, m: String| Err((k.to_string(), m));
        self.limit
            .validate()
            .map_err(|m| ("limit".to_string(), m))?;
        if !(self.min_th >= 0.0 && self.min_th.is_finite()) {
            return e(
                "min_th",
                format!(
                    "must be a non-negative number of packets, got {}",
                    self.min_th
                ),
            );
        }
        if !self.auto && self.min_th == 0.0 && self.max_th == 0.0 {
            return e(
                "max_th",
                "min_th and max_th are required (packets), or set auto = true for ns-2's automatic thresholds".into(),
            );
        }
        let max_given = !(self.auto && self.max_th == 0.0);
        let min_auto = self.auto && self.min_th == 0.0;
        if max_given && !min_auto && !(self.max_th > self.min_th && self.max_th.is_finite()) {
            return e(
                "max_th",
                format!(
                    "must be greater than min_th ({}), got {}",
                    self.min_th, self.max_th
                ),
            );
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return e("max_p", format!("must be in (0, 1], got {}", self.max_p));
        }
        if let Some(w) = self.w_q {
            if !(w > 0.0 && w <= 1.0) {
                return e("w_q", format!("must be in (0, 1], got {w}"));
            }
        }
        if self.mean_pktsize == 0 {
            return e("mean_pktsize", "must be a positive number of bytes".into());
        }
        if self.auto && self.target_delay.0 == 0 {
            return e("target_delay", "must be positive".into());
        }
        Ok(())
    }
}

pub struct Red {
    c: RedConfig,
    /// Thresholds and weight in queue units (packets, or bytes in byte mode).
    p: RedParams,
    /// The hard limit (a packet limit becomes bytes in byte mode, as ns-2).
    limit: Limit,
    q: Fifo,
    avg: f64,
    idle: IdleClock,
    /// The drop decision; its `max_p` changes only with Adaptive RED.
    drop: RedDrop,
    adapt: Option<super::ared::Adaptation>,
    /// ns-3 `m_old`: the average has been at or above `min_th` with more
    /// than one packet queued since it last was not (`variant = "ns3"`).
    old: bool,
}

impl Red {
    /// RED for a link of `rate_bps` with one-way propagation delay `delay`
    /// (the delay matters only for `auto`).
    pub fn new(c: &RedConfig, rate_bps: u64, delay: Time) -> Self {
        let limit = match (c.bytes, c.limit) {
            (true, Limit::Packets(n)) => Limit::Bytes(n as u64 * c.mean_pktsize as u64),
            (_, l) => l,
        };
        let p = c.resolve(rate_bps, delay);
        Red {
            c: c.clone(),
            p,
            limit,
            q: Fifo::new(),
            avg: 0.0,
            idle: IdleClock::new(rate_bps, c.mean_pktsize),
            drop: RedDrop {
                min_th: p.min_th,
                max_th: p.max_th,
                max_p: c.max_p,
                gentle: c.gentle,
                wait: c.wait,
                byte_unit: c.bytes.then_some(c.mean_pktsize),
                count: if c.variant == RedVariant::Ns3 { 0 } else { -1 },
                count_bytes: 0,
            },
            adapt: None,
            old: false,
        }
    }

    /// RED whose `max_p` adapts (Adaptive RED, `ared.rs`).
    pub fn adaptive(c: &RedConfig, rate_bps: u64, delay: Time, a: super::ared::Adaptation) -> Self {
        let mut r = Red::new(c, rate_bps, delay);
        r.adapt = Some(a);
        r
    }

    /// The current `max_p`.
    pub fn max_p(&self) -> f64 {
        self.drop.max_p
    }

    /// The resolved thresholds and weight.
    pub fn params(&self) -> RedParams {
        self.p
    }

    /// The early-drop probability `p_a` for the current `avg` and `count`
    /// (after `count` has been incremented for this arrival), for a packet of
    /// `size` bytes (which matters only in byte mode).
    pub fn drop_probability_for(&self, size: u32) -> f64 {
        self.drop.probability(self.avg, size)
    }

    /// [`Red::drop_probability_for`] in packet mode.
    pub fn drop_probability(&self) -> f64 {
        self.drop_probability_for(self.c.mean_pktsize)
    }

    /// The average queue, in the queue's units (packets, or bytes in byte mode).
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// Update the average for an arrival at `now` (ns-2 `estimator`).
    fn update_avg(&mut self, now: Time) {
        let q = if self.c.bytes {
            self.q.bytes() as f64
        } else {
            self.q.len() as f64
        };
        self.avg = estimate(self.avg, self.p.w_q, q, self.idle.arrival(now));
    }
}

/// The link-idle clock of RED's estimator (ns-2 `idletime_`, `ptc`): when a
/// dequeue finds the queue empty the link goes idle, and the next arrival
/// decays the average as if `m` small packets had left an empty queue.
pub struct IdleClock {
    since: Option<Time>,
    /// Packets per nanosecond the link could send of `mean_pktsize` (ns-2 `ptc`).
    ptc_per_ns: f64,
    /// Packets the link could have sent in the idle period before the
    /// last rate change (0 on a link whose rate never changes).
    credit: f64,
    mean_pktsize: u32,
}

impl IdleClock {
    /// Idle from time 0, for a link of `rate_bps` and packets of `mean_pktsize` bytes.
    pub fn new(rate_bps: u64, mean_pktsize: u32) -> Self {
        IdleClock {
            since: Some(0),
            ptc_per_ns: rate_bps as f64 / (8.0 * mean_pktsize as f64) / NS_PER_SEC as f64,
            credit: 0.0,
            mean_pktsize,
        }
    }

    /// The link's rate is `rate_bps` from `now` on: an idle period that
    /// straddles the change counts its part before `now` at the old rate
    /// and the rest at the new one.
    pub fn set_rate(&mut self, now: Time, rate_bps: u64) {
        if let Some(t0) = self.since {
            self.credit += (now.saturating_sub(t0)) as f64 * self.ptc_per_ns;
            self.since = Some(now.max(t0));
        }
        self.ptc_per_ns = rate_bps as f64 / (8.0 * self.mean_pktsize as f64) / NS_PER_SEC as f64;
    }

    #[cfg(test)]
    fn clone_count(&self, now: Time) -> f64 {
        let t0 = self.since.expect("idle");
        (self.credit + (now - t0) as f64 * self.ptc_per_ns).floor()
    }

    /// The link found the queue empty at `now` (an idle period starts unless one has).
    pub fn went_idle(&mut self, now: Time) {
        if self.since.is_none() {
            self.since = Some(now);
        }
    }

    /// An arrival at `now` ends the idle period: the number `m` of small
    /// packets the link could have sent meanwhile, or `None` if it was busy.
    pub fn arrival(&mut self, now: Time) -> Option<f64> {
        let t0 = self.since.take()?;
        let credit = std::mem::take(&mut self.credit);
        Some((credit + (now - t0) as f64 * self.ptc_per_ns).floor())
    }
}

/// RED's average (ns-2 `estimator`): after an idle period of `idle` small
/// packets `avg ← (1 − w)^m · avg`, then `avg ← (1 − w) · avg + w · q`.
pub fn estimate(avg: f64, w: f64, q: f64, idle: Option<f64>) -> f64 {
    let mut avg = avg;
    if let Some(m) = idle {
        avg *= (1.0 - w).powf(m);
    }
    (1.0 - w) * avg + w * q
}

/// What RED decides for one arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedVerdict {
    Accept,
    /// Early drop, or a CE mark where ECN allows.
    Signal,
    Forced,
}

/// RED's drop decision for one class of traffic (FJ93 Fig. 2 with §7's
/// count-based spacing, ns-2 `calculate_p_new`/`modify_p`): thresholds in
/// the units the average is in, and the `count` since the last early drop.
/// RED and ARED keep one; RIO one per class.
#[derive(Clone, Copy, Debug)]
pub struct RedDrop {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub gentle: bool,
    pub wait: bool,
    /// Byte mode: the packet size that counts as one (`mean_pktsize`).
    pub byte_unit: Option<u32>,
    pub count: i64,
    pub count_bytes: u64,
}

impl RedDrop {
    /// Judge an arrival of `size` bytes against the average `avg`. `uniform`
    /// is drawn only where an early drop is possible.
    pub fn judge(&mut self, avg: f64, size: u32, uniform: impl FnOnce() -> f64) -> RedVerdict {
        let forced_at = if self.gentle {
            2.0 * self.max_th
        } else {
            self.max_th
        };
        if avg >= forced_at {
            self.count = 0;
            self.count_bytes = 0;
            return RedVerdict::Forced;
        }
        if avg < self.min_th {
            self.count = -1;
            self.count_bytes = 0;
            return RedVerdict::Accept;
        }
        self.count += 1;
        self.count_bytes += size as u64;
        self.draw(avg, size, uniform)
    }

    /// The early-drop draw both rule sets end with: signal with
    /// probability `p_a` and restart the count, or accept.
    fn draw(&mut self, avg: f64, size: u32, uniform: impl FnOnce() -> f64) -> RedVerdict {
        if uniform() < self.probability(avg, size) {
            self.count = 0;
            self.count_bytes = 0;
            RedVerdict::Signal
        } else {
            RedVerdict::Accept
        }
    }

    /// ns-3 3.44 `RedQueueDisc::DoEnqueue`'s decision for an arrival of
    /// `size` bytes that found `qlen` packets queued; `old` is `m_old`.
    pub fn judge_ns3(
        &mut self,
        avg: f64,
        size: u32,
        qlen: usize,
        old: &mut bool,
        uniform: impl FnOnce() -> f64,
    ) -> RedVerdict {
        self.count = self.count.saturating_add(1);
        self.count_bytes += size as u64;
        if !(avg >= self.min_th && qlen > 1) {
            *old = false;
            return RedVerdict::Accept;
        }
        let forced_at = if self.gentle {
            2.0 * self.max_th
        } else {
            self.max_th
        };
        if avg >= forced_at {
            return RedVerdict::Forced;
        }
        if !*old {
            self.count = 1;
            self.count_bytes = size as u64;
            *old = true;
            return RedVerdict::Accept;
        }
        self.draw(avg, size, uniform)
    }

    /// The early-drop probability `p_a` for the average `avg` and the
    /// current `count`, for a packet of `size` bytes (byte mode only).
    pub fn probability(&self, avg: f64, size: u32) -> f64 {
        let (min_th, max_th, max_p) = (self.min_th, self.max_th, self.max_p);
        let pb = if avg < max_th {
            max_p * (avg - min_th) / (max_th - min_th)
        } else {
            max_p + (1.0 - max_p) * (avg - max_th) / max_th
        };
        match self.byte_unit {
            Some(unit) => {
                let count = (self.count_bytes / unit as u64) as f64;
                let p = spaced_probability(pb.min(1.0), count, self.wait);
                if p < 1.0 {
                    (p * size as f64 / unit as f64).min(1.0)
                } else {
                    p
                }
            }
            None => spaced_probability(pb, self.count as f64, self.wait),
        }
    }
}

/// Count-based spacing of early drops (FJ93 §7; ns-2 `modify_p`).
pub fn spaced_probability(pb: f64, count: f64, wait: bool) -> f64 {
    let cp = count * pb;
    if wait {
        if cp < 1.0 {
            0.0
        } else if cp < 2.0 {
            pb / (2.0 - cp)
        } else {
            1.0
        }
    } else if cp < 1.0 {
        pb / (1.0 - cp)
    } else {
        1.0
    }
}

impl QueueDisc for Red {
    /// The idle-time decay follows the rate; thresholds and weight
    /// resolved automatically (`auto`) keep the initial rate's.
    fn set_rate(&mut self, now: Time, rate_bps: u64) {
        self.idle.set_rate(now, rate_bps);
    }

    fn kind(&self) -> &'static str {
        if self.adapt.is_some() {
            "ared"
        } else {
            "red"
        }
    }

    fn enqueue(&mut self, mut pkt: Packet, ctx: &mut QdCtx) -> Result<(), DropCause> {
        self.update_avg(ctx.now);
        if let Some(a) = &mut self.adapt {
            self.drop.max_p = a.update(
                ctx.now,
                self.avg,
                self.p.min_th,
                self.p.max_th,
                self.drop.max_p,
            );
        }
        let rng = &mut ctx.rng;
        let qbefore = self.q.len();
        let verdict = match self.c.variant {
            RedVariant::Fj93 => self.drop.judge(self.avg, pkt.size, || rng.uniform()),
            RedVariant::Ns3 => self.drop.judge_ns3(
                self.avg,
                pkt.size,
                qbefore,
                &mut self.old,
                || rng.uniform(),
            ),
        };
        match verdict {
            RedVerdict::Forced => return Err(DropCause::Forced),
            RedVerdict::Signal if self.c.ecn && pkt.ecn.capable() => {
                pkt.ecn = Ecn::Ce;
                ctx.marked += 1;
            }
            RedVerdict::Signal => return Err(DropCause::Early),
            RedVerdict::Accept => {}
        }
        if self.q.would_exceed(&self.limit, pkt.size) {
            if ctx.marked > 0 {
                ctx.marked -= 1; // the mark never left the router
            }
            return Err(DropCause::Overflow);
        }
        self.q.push_back(pkt);
        Ok(())
    }

    fn dequeue(&mut self, ctx: &mut QdCtx) -> Option<Packet> {
        let p = self.q.pop_front();
        if p.is_none() {
            self.idle.went_idle(ctx.now);
        }
        p
    }

    fn len_pkts(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
    /// The average in packets (in byte mode: packets of `mean_pktsize`).
    fn avg_len(&self) -> Option<f64> {
        Some(if self.c.bytes {
            self.avg / self.c.mean_pktsize as f64
        } else {
            self.avg
        })
    }
}

impl super::registry::Registered for RedConfig {
    const KIND: &'static str = "red";
    const ABOUT: &'static str = "Random Early Detection (Floyd & Jacobson 1993; ns-2 red.cc; auto: Floyd's 2001 guidelines)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!(required = "100", "limit", "packets, or bytes with a unit", "> 0", "0", "buffer size"),
        crate::registry::param!(required = "5.0", "min_th", "packets (or mean_pktsize bytes)", "≥ 0; 0 with auto = automatic", "-1.0", "lower threshold of the average queue"),
        crate::registry::param!(required = "15.0", "max_th", "packets (or mean_pktsize bytes)", "> min_th; 0 with auto = automatic", "", "upper threshold of the average queue"),
        crate::registry::param!("max_p", "probability", "(0, 1]", "1.5", "marking probability at max_th"),
        crate::registry::param!("w_q", "weight", "(0, 1]; default 0.002, automatic with auto", "0.0", "EWMA weight of the average queue"),
        crate::registry::param!("gentle", "", "true/false", "", "probability rises from max_p to 1 between max_th and 2·max_th"),
        crate::registry::param!("wait", "", "true/false", "", "space drops by waiting (ns-2 wait_)"),
        crate::registry::param!("ecn", "", "true/false", "", "mark ECN-capable packets instead of dropping early"),
        crate::registry::param!("mean_pktsize", "bytes", "≥ 1", "0", "packet size for the idle decay and byte mode"),
        crate::registry::param!("bytes", "", "true/false", "", "measure the queue in bytes"),
        crate::registry::param!("auto", "", "true/false", "", "set thresholds and w_q from the link rate and target_delay"),
        crate::registry::param!("target_delay", "time", "> 0 (with auto)", "", "queueing delay the automatic thresholds aim at"),
        crate::registry::param!("variant", "", "\"fj93\" or \"ns3\"", "\"ns2\"", "count rule: Floyd & Jacobson, or ns-3 3.44 RedQueueDisc"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        RedConfig::validate(self)
    }
}

impl super::registry::QueueKind for RedConfig {
    const FIFO: bool = true;
    fn build(&self, port: &mut super::PortCtx) -> Box<dyn QueueDisc> {
        Box::new(Red::new(self, port.rate_bps, port.delay))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStream;

    fn pkt(uid: u64) -> Packet {
        Packet {
            uid,
            size: 1000,
            ..Default::default()
        }
    }

    /// The idle clock counts an idle period at the rate in force in each
    /// part of it: 1 s at 10 Mbit/s then 1 s at 1 Mbit/s with 500-byte
    /// packets is 2500 + 250 small packets (5000 at a constant 10 Mbit/s).
    #[test]
    fn the_idle_decay_follows_a_rate_change() {
        let s = 1_000_000_000;
        let mut c = IdleClock::new(10_000_000, 500);
        assert_eq!(c.clone_count(2 * s), 5000.0);
        c.set_rate(s, 1_000_000);
        assert_eq!(c.arrival(2 * s), Some(2750.0));
        // busy: nothing; a later idle period runs at the new rate only
        assert_eq!(c.arrival(3 * s), None);
        c.went_idle(3 * s);
        assert_eq!(c.arrival(4 * s), Some(250.0));
    }

    #[test]
    fn ewma_follows_wq() {
        let mut r = Red::new(
            &RedConfig::new(Limit::Packets(100), 5.0, 15.0, 0.1, 0.5),
            1_000_000,
            0,
        );
        let (mut rng, mut d) = (RngStream::new(0, 0), vec![]);
        let mut c = QdCtx {
            now: 0,
            rng: &mut rng,
            dropped: &mut d,
            marked: 0,
        };
        // queue empty at t=0 → one regular update with q=0
        r.enqueue(pkt(0), &mut c).unwrap();
        assert_eq!(r.avg(), 0.0);
        r.enqueue(pkt(1), &mut c).unwrap(); // q = 1
        assert!((r.avg() - 0.5).abs() < 1e-12);
        r.enqueue(pkt(2), &mut c).unwrap(); // q = 2: 0.5*0.5 + 0.5*2
        assert!((r.avg() - 1.25).abs() < 1e-12);
    }

    #[test]
    fn idle_decay_counts_small_packets_the_link_could_send() {
        // 8 Mbit/s, mean_pktsize 500 B → 2000 packets/s; 10 ms idle → m = 20.
        let cfg = RedConfig::new(Limit::Packets(100), 5.0, 15.0, 0.1, 0.1);
        let mut r = Red::new(&cfg, 8_000_000, 0);
        let (mut rng, mut d) = (RngStream::new(0, 0), vec![]);
        let mut c = QdCtx {
            now: 0,
            rng: &mut rng,
            dropped: &mut d,
            marked: 0,
        };
        r.avg = 10.0;
        r.idle.since = None;
        assert!(r.dequeue(&mut c).is_none()); // link finds the queue empty at t=0
        c.now = 10_000_000;
        r.enqueue(pkt(0), &mut c).unwrap();
        let expect = 10.0 * 0.9f64.powi(20) * 0.9;
        assert!((r.avg() - expect).abs() < 1e-9, "{} vs {}", r.avg(), expect);
    }

    #[test]
    fn spacing_formula() {
        assert_eq!(spaced_probability(0.1, 0.0, false), 0.1);
        assert!((spaced_probability(0.1, 5.0, false) - 0.2).abs() < 1e-12);
        assert_eq!(spaced_probability(0.1, 10.0, false), 1.0);
        assert_eq!(spaced_probability(0.1, 5.0, true), 0.0);
        assert!((spaced_probability(0.1, 15.0, true) - 0.2).abs() < 1e-12);
    }

    #[test]
    fn forced_and_overflow_drops() {
        let cfg = RedConfig::new(Limit::Packets(4), 1.0, 2.0, 0.1, 1.0);
        let mut r = Red::new(&cfg, 1_000_000, 0);
        let (mut rng, mut d) = (RngStream::new(0, 0), vec![]);
        let mut c = QdCtx {
            now: 0,
            rng: &mut rng,
            dropped: &mut d,
            marked: 0,
        };
        r.enqueue(pkt(0), &mut c).unwrap(); // avg 0
        let _ = r.enqueue(pkt(1), &mut c); // avg 1 (maybe early)
                                           // with w_q = 1, avg = q; push until q ≥ 2 → forced
        let mut saw_forced = false;
        for i in 2..10 {
            if r.enqueue(pkt(i), &mut c) == Err(DropCause::Forced) {
                saw_forced = true;
            }
        }
        assert!(saw_forced);
        assert!(r.len_pkts() <= 4);
    }

    #[test]
    fn ecn_marks_capable_packets_instead_of_early_drop() {
        let mut cfg = RedConfig::new(Limit::Packets(1000), 0.0, 1000.0, 1.0, 1.0);
        cfg.ecn = true;
        let mut r = Red::new(&cfg, 1_000_000, 0);
        let (mut rng, mut d) = (RngStream::new(0, 0), vec![]);
        let mut c = QdCtx {
            now: 0,
            rng: &mut rng,
            dropped: &mut d,
            marked: 0,
        };
        let mut marks = 0;
        for i in 0..500 {
            let mut p = pkt(i);
            p.ecn = Ecn::Ect0;
            c.marked = 0;
            assert!(r.enqueue(p, &mut c).is_ok(), "ECT packet dropped early");
            marks += c.marked;
        }
        assert!(marks > 0);
        // a non-ECT packet is dropped, not marked
        let mut drops = 0;
        for i in 0..200 {
            c.marked = 0;
            if r.enqueue(pkt(1000 + i), &mut c).is_err() {
                drops += 1;
            }
            assert_eq!(c.marked, 0);
        }
        let ce = std::iter::from_fn(|| r.dequeue(&mut c))
            .filter(|p| p.ecn == Ecn::Ce)
            .count();
        assert_eq!(ce as u32, marks);
        assert!(drops > 0);
    }

    #[test]
    fn ns2_auto_configuration() {
        // ns-2.35 defaults on a 622 Mbit/s, 24 ms link (the high-speed paper's
        // bottleneck): ptc = 155 500 packets/s of 500 B.
        let c: RedConfig =
            toml::from_str("limit = 30000\nauto = true\nbytes = true\ngentle = true").unwrap();
        c.validate().unwrap();
        let p = c.resolve(622_000_000, 24_000_000);
        assert!((p.min_th - 388.75 * 500.0).abs() < 1e-6, "{p:?}");
        assert!((p.max_th - 3.0 * 388.75 * 500.0).abs() < 1e-6);
        let w = 1.0 - (-1.0f64 / (10.0 * 0.1 * 155_500.0)).exp();
        assert!(
            (p.w_q - w).abs() < 1e-15 && (p.w_q - 6.43e-6).abs() < 1e-8,
            "{}",
            p.w_q
        );
        // slow link: min_th floors at 5 packets; long delay lengthens the RTT
        let c: RedConfig = toml::from_str("limit = 50\nauto = true").unwrap();
        let p = c.resolve(1_000_000, 200_000_000);
        assert_eq!((p.min_th, p.max_th), (5.0, 15.0));
        let ptc: f64 = 1e6 / 4000.0;
        let rtt = 3.0 * (0.2 + 1.0 / ptc);
        assert!((p.w_q - (1.0 - (-1.0 / (10.0 * rtt * ptc)).exp())).abs() < 1e-15);
        // explicit values win over auto
        let c: RedConfig =
            toml::from_str("limit = 50\nauto = true\nmin_th = 7\nw_q = 0.01").unwrap();
        let p = c.resolve(1_000_000, 0);
        assert_eq!((p.min_th, p.max_th, p.w_q), (7.0, 21.0, 0.01));
    }

    /// ns-3 3.44 `RedQueueDisc::DoEnqueue` (`variant = "ns3"`), rule by
    /// rule: `m_count++` on every arrival; nothing is judged unless `m_qAvg
    /// ≥ m_minTh && nQueued > 1` (and `m_old` is cleared); the first judged
    /// arrival sets `m_count = 1`, `m_old = 1` and is accepted without a
    /// draw; `DropEarly` resets the count; a forced drop does not (no
    /// `Ns1Compat`). FJ93 (`judge`) resets the count on a forced drop.
    #[test]
    fn ns3_redqueuedisc_count_rules() {
        let mut d = RedDrop {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            gentle: false,
            wait: false,
            byte_unit: None,
            count: 0,
            count_bytes: 0,
        };
        let mut old = false;
        let never = || -> f64 { panic!("no draw expected") };
        // below min_th: counted, not judged
        assert_eq!(d.judge_ns3(4.0, 1000, 10, &mut old, never), RedVerdict::Accept);
        assert_eq!((d.count, old), (1, false));
        // above min_th with one packet queued: not judged either
        assert_eq!(d.judge_ns3(10.0, 1000, 1, &mut old, never), RedVerdict::Accept);
        assert_eq!((d.count, old), (2, false));
        // the first judged arrival: count = 1, old set, accepted, no draw
        assert_eq!(d.judge_ns3(10.0, 1000, 2, &mut old, never), RedVerdict::Accept);
        assert_eq!((d.count, old), (1, true));
        // then judged with count 2: p_b = 0.05, p_a = 0.05 / (1 − 0.1)
        let pa = 0.05 / 0.9;
        assert!((d.probability(10.0, 1000) - 0.05 / 0.95).abs() < 1e-12);
        assert_eq!(d.judge_ns3(10.0, 1000, 2, &mut old, || pa + 1e-9), RedVerdict::Accept);
        assert_eq!(d.count, 2);
        assert_eq!(d.judge_ns3(10.0, 1000, 2, &mut old, || 0.0), RedVerdict::Signal);
        assert_eq!(d.count, 0);
        // forced (avg ≥ max_th): the count goes on
        for k in 1..=3 {
            assert_eq!(d.judge_ns3(20.0, 1000, 50, &mut old, never), RedVerdict::Forced);
            assert_eq!(d.count, k);
        }
        assert!(old, "a forced drop keeps m_old");
        // back below max_th: judged at once with the grown count (count 4:
        // p_a = 0.05 / (1 − 0.2))
        assert_eq!(d.judge_ns3(10.0, 1000, 50, &mut old, || 0.05 / 0.8 - 1e-9), RedVerdict::Signal);
        // FJ93 resets the count on a forced drop
        d.count = 7;
        assert_eq!(d.judge(20.0, 1000, never), RedVerdict::Forced);
        assert_eq!(d.count, 0);
        // the key parses
        let c: RedConfig =
            toml::from_str("limit = 50\nmin_th = 5\nmax_th = 15\nvariant = \"ns3\"").unwrap();
        assert_eq!(c.variant, RedVariant::Ns3);
        assert!(toml::from_str::<RedConfig>("limit = 50\nmin_th = 5\nmax_th = 15\nvariant = \"ns2\"").is_err());
    }

    #[test]
    fn thresholds_required_without_auto() {
        let c: RedConfig = toml::from_str("limit = 50").unwrap();
        let (k, m) = c.validate().unwrap_err();
        assert_eq!(k, "max_th");
        assert!(m.contains("auto = true"), "{m}");
    }

    #[test]
    fn byte_mode_scales_by_packet_size_and_limit_in_mean_packets() {
        let mut c = RedConfig::new(Limit::Packets(10), 0.0, 4.0, 0.5, 1.0);
        c.bytes = true;
        let mut r = Red::new(&c, 1_000_000, 0);
        let (mut rng, mut d) = (RngStream::new(0, 0), vec![]);
        let mut cx = QdCtx {
            now: 0,
            rng: &mut rng,
            dropped: &mut d,
            marked: 0,
        };
        // limit 10 packets of 500 B = 5000 bytes
        assert_eq!(r.limit, Limit::Bytes(5000));
        // one 1000-byte packet queued; avg (w_q = 1) = 1000 bytes = 2 mean packets
        r.enqueue(
            Packet {
                size: 1000,
                ..Default::default()
            },
            &mut cx,
        )
        .unwrap();
        r.update_avg(0);
        r.drop.count = 0;
        r.drop.count_bytes = 0;
        // p_b = 0.5 · 1000/2000 = 0.25; count 0 → p_a = 0.25, × 1000/500 = 0.5
        assert!((r.drop_probability_for(1000) - 0.5).abs() < 1e-12);
        assert!((r.drop_probability_for(250) - 0.125).abs() < 1e-12);
        assert_eq!(r.avg_len(), Some(2.0));
    }
}
