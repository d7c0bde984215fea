//! MaxNet link: an explicit multi-bit congestion price over a DropTail FIFO.
//!
//! Sources:
//! - T. K. Phan, T. T. Tran, D. D. Nguyen, N. Thoai, "MaxNet and TCP
//!   Reno/RED on Mice Traffic" (MSOCP 2009), eq. (3), quoting
//!   M. Suchara, L. Andrew, R. Witt, K. Jacobsson, B. Wydrowski, S. Low,
//!   "Implementation of Provably Stable MaxNet", BROADNETS 2008 [SAW08]:
//!   `p_l(t + dt) = p_l(t) + dt · (y_l(t) − μ_l C_l) / C_l`;
//! - B. Wydrowski, M. Zukerman, IEEE Comm. Letters 6(11), 2002, and
//!   B. Wydrowski, L. L. H. Andrew, M. Zukerman, "MaxNet: A Congestion
//!   Control Architecture for Scalable Networks", IEEE Comm. Letters 7(10),
//!   2003 (abstracts; the full texts were not available): only the most
//!   severely bottlenecked link on the path controls the source, i.e. each
//!   packet carries the **maximum** price of the links on its path (a link
//!   writes `max(carried, own)`), with no per-flow state at the link;
//! - the MaxNet overview (netlab.caltech.edu/maxnet): "only 2 integer
//!   operations per packet on router fast-path (max & add)", no per-flow
//!   state;
//! - MaxStart [SAW08, as summarised in Phan et al. §3]: packets also
//!   carry the minimum spare capacity of the links on the path.
//!
//! What this discipline does:
//! - **Price** (eq. 3), applied once per `update_period` Δt with `y` the
//!   aggregate arrival rate measured over that period (every arriving
//!   packet's wire bytes, dropped arrivals included, as bit/s), `C` the
//!   link rate and `μ` the target utilisation:
//!   `p ← max(0, p + Δt · (y − μC)/C)`. The price therefore has the unit of
//!   time (seconds). The update runs lazily at each enqueue/dequeue for every
//!   period that has elapsed; idle periods (y = 0) are applied in closed form,
//!   `p ← max(0, p − k·Δt·μ)`, so the result is exactly that of a periodic
//!   timer.
//! - **Spare capacity** estimate `s = (μC − y)⁺` bit/s from the same
//!   measurement (`μC` for a link idle for a whole period) — the capacity a
//!   new flow may take without pushing the link past its target. The papers
//!   we could read do not define the estimate; measuring it against the
//!   target μC rather than C is our choice, so that MaxStart's first rate
//!   never eats the (1 − μ)C the paper keeps free for mice.
//! - **Stamping** on enqueue of every forward packet (data or SYN):
//!   `price ← max(price, p)`, `spare ← min(spare, s)`. Pure ACKs (and
//!   SYN-ACKs) are not stamped: in aqmlab they carry the receiver's *echo*
//!   of the forward price in the same two fields (a real MaxNet host echoes
//!   in a separate TCP option), which a reverse-path link must not alter.
//! - **Queue**: a DropTail FIFO of `limit`; an arrival that would exceed it
//!   is dropped (`Overflow`) — a MaxNet router still drops on overflow.
//!
//! Parameters:
//! - `limit` = 1000 packets (packets, or bytes with a unit), as DropTail;
//! - `mu` μ = 0.95 (target utilisation, Phan et al. §4.1), in (0, 1];
//! - `update_period` Δt = 10 ms (> 0). Neither source gives the period of
//!   the Linux qdisc; 10 ms is our choice: at the paper's 10 Mbit/s it spans
//!   ~8 full-size packets, and it adds at most Δt to the control loop's delay
//!   (see `tcp/cc/maxnet.rs` for the loop's stability condition).

use super::{DropCause, Limit, QdCtx, QueueDisc};
use crate::engine::{to_secs, Time};
use crate::net::ext::Ext;
use crate::net::packet::Packet;
use crate::units::Dur;
use serde::{Deserialize, Serialize};
use super::fifo::Fifo;

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MaxNetConfig {
    #[serde(default = "d_limit")]
    pub limit: Limit,
    /// Target utilisation μ, in (0, 1].
    #[serde(default = "d_mu")]
    pub mu: f64,
    /// Price update period Δt.
    #[serde(default = "d_period", deserialize_with = "de_period")]
    pub update_period: Dur,
}

/// `update_period` with the key in the message: inside a `kind`-tagged
/// queue table serde reports errors at the table, not at the key.
fn de_period<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Dur, D::Error> {
    use serde::de::Error;
    Dur::deserialize(d).map_err(|e| D::Error::custom(format!("`update_period`: {e}")))
}

fn d_limit() -> Limit {
    Limit::Packets(1000)
}
fn d_mu() -> f64 {
    0.95
}
fn d_period() -> Dur {
    Dur(10_000_000)
}

impl Default for MaxNetConfig {
    fn default() -> Self {
        MaxNetConfig {
            limit: d_limit(),
            mu: d_mu(),
            update_period: d_period(),
        }
    }
}

impl MaxNetConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        self.limit
            .validate()
            .map_err(|m| ("limit".to_string(), m))?;
        if !(self.mu > 0.0 && self.mu <= 1.0) {
            return Err((
                "mu".into(),
                format!("the target utilisation must be in (0, 1], got {}", self.mu),
            ));
        }
        if self.update_period.0 == 0 {
            return Err((
                "update_period".into(),
                "the price update period must be positive".into(),
            ));
        }
        Ok(())
    }
}

pub struct MaxNet {
    limit: Limit,
    mu: f64,
    /// Link capacity C, bit/s.
    c: f64,
    period: Time,
    q: Fifo,
    /// Congestion price p (seconds).
    price: f64,
    /// Spare capacity estimate (μC − y)⁺, bit/s.
    spare: f64,
    /// Arrival rate y measured over the last complete period, bit/s.
    y: f64,
    /// Wire bits arrived in the current period.
    bits: u64,
    /// End of the current period.
    next_update: Time,
    /// Price updates applied (periods elapsed).
    updates: u64,
}

impl MaxNet {
    /// A MaxNet port on a link of `rate_bps`.
    pub fn new(c: &MaxNetConfig, rate_bps: u64) -> Self {
        let cap_bps = rate_bps as f64;
        MaxNet {
            limit: c.limit,
            mu: c.mu,
            c: cap_bps,
            period: c.update_period.0,
            q: Fifo::new(),
            price: 0.0,
            spare: c.mu * cap_bps,
            y: 0.0,
            bits: 0,
            next_update: c.update_period.0,
            updates: 0,
        }
    }

    /// The current congestion price p, seconds (as of the last update).
    pub fn price(&self) -> f64 {
        self.price
    }

    /// The current spare-capacity estimate (μC − y)⁺, bit/s.
    pub fn spare(&self) -> f64 {
        self.spare
    }

    /// The arrival rate y of the last complete update period, bit/s.
    pub fn arrival_rate(&self) -> f64 {
        self.y
    }

    /// Price updates applied so far.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// Apply eq. (3) for every update period that ended at or before `now`.
    fn catch_up(&mut self, now: Time) {
        if now < self.next_update {
            return;
        }
        let dt = to_secs(self.period);
        // The period that holds the arrivals counted so far.
        self.y = self.bits as f64 / dt;
        self.price = (self.price + dt * (self.y - self.mu * self.c) / self.c).max(0.0);
        self.bits = 0;
        self.next_update += self.period;
        self.updates += 1;
        // Whole idle periods since then: y = 0 in each (closed form).
        if now >= self.next_update {
            let k = (now - self.next_update) / self.period + 1;
            self.y = 0.0;
            self.price = (self.price - k as f64 * dt * self.mu).max(0.0);
            self.next_update += k * self.period;
            self.updates += k;
        }
        self.spare = (self.mu * self.c - self.y).max(0.0);
    }
}

impl QueueDisc for MaxNet {
    /// The capacity C of the price law follows the rate from the next
    /// price update on.
    fn set_rate(&mut self, now: Time, rate_bps: u64) {
        // the periods that ended before the change use the old capacity
        self.catch_up(now);
        self.c = rate_bps as f64;
    }

    fn kind(&self) -> &'static str {
        "maxnet"
    }

    fn enqueue(&mut self, mut pkt: Packet, ctx: &mut QdCtx) -> Result<(), DropCause> {
        self.catch_up(ctx.now);
        self.bits += pkt.size as u64 * 8;
        if self.q.would_exceed(&self.limit, pkt.size) {
            return Err(DropCause::Overflow);
        }
        // Only forward packets of MaxNet sources carry the fields to stamp.
        if let (true, Ext::MaxNet(f)) = (pkt.is_forward(), &mut pkt.ext) {
            f.stamp(self.price as f32, self.spare as f32);
        }
        self.q.push_back(pkt);
        Ok(())
    }

    fn dequeue(&mut self, ctx: &mut QdCtx) -> Option<Packet> {
        self.catch_up(ctx.now);
        let p = self.q.pop_front()?;
        Some(p)
    }

    fn len_pkts(&self) -> usize {
        self.q.len()
    }

    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
}

impl super::registry::Registered for MaxNetConfig {
    const KIND: &'static str = "maxnet";
    const ABOUT: &'static str = "MaxNet link price over a tail-drop FIFO (Wydrowski et al. 2003; Suchara et al. 2008)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("limit", "packets, or bytes with a unit", "> 0", "0", "buffer size"),
        crate::registry::param!("mu", "fraction", "(0, 1]", "1.5", "target utilisation μ"),
        crate::registry::param!("update_period", "time", "> 0", "\"0ms\"", "price update period"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        MaxNetConfig::validate(self)
    }
}

impl super::registry::QueueKind for MaxNetConfig {
    const FIFO: bool = true;
    fn build(&self, port: &mut super::PortCtx) -> Box<dyn QueueDisc> {
        Box::new(MaxNet::new(self, port.rate_bps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStream;
    use crate::net::ext::{Class, MaxNetFields};
    use crate::net::packet::flags;

    const MS: Time = 1_000_000;

    fn data(size: u32) -> Packet {
        Packet {
            size,
            flags: flags::DATA,
            ext: Ext::MaxNet(MaxNetFields::UNSTAMPED),
            ..Default::default()
        }
    }

    fn fields(p: &Packet) -> (f32, f32) {
        let f = p.ext.maxnet().expect("MaxNet fields");
        (f.price(), f.spare())
    }

    fn q(rate: u64, mu: f64, period_ms: u64, limit: u32) -> MaxNet {
        MaxNet::new(
            &MaxNetConfig {
                limit: Limit::Packets(limit),
                mu,
                update_period: Dur(period_ms * MS),
            },
            rate,
        )
    }

    /// Offer `n` packets of `size` bytes evenly over [t0, t0 + span).
    fn offer(m: &mut MaxNet, t0: Time, span: Time, n: u64, size: u32) -> Vec<Packet> {
        let (mut r, mut d) = (RngStream::new(1, 1), vec![]);
        let mut out = vec![];
        for i in 0..n {
            let mut c = QdCtx {
                now: t0 + i * span / n,
                rng: &mut r,
                dropped: &mut d,
                marked: 0,
            };
            if m.enqueue(data(size), &mut c).is_ok() {
                out.push(m.dequeue(&mut c).unwrap());
            }
        }
        out
    }

    /// After a rate change (`set_rate`) the price law uses the new
    /// capacity: 12 Mbit/s offered for one period after C fell from 20 to
    /// 10 Mbit/s raises the price by Δt·(y − μC)/C with C = 10 Mbit/s.
    #[test]
    fn the_price_law_follows_a_rate_change() {
        let mut m = q(20_000_000, 0.95, 10, 1000);
        m.set_rate(5 * MS, 10_000_000);
        offer(&mut m, 10 * MS, 10 * MS, 12, 1250);
        offer(&mut m, 20 * MS, MS, 1, 1250);
        let p = 0.01 * (12e6 - 9.5e6) / 10e6;
        assert!((m.price() - p).abs() < 1e-12, "{}", m.price());
    }

    #[test]
    fn price_follows_eq3_period_by_period() {
        // C = 10 Mbit/s, μ = 0.95, Δt = 10 ms. 1250-byte packets (10 kbit).
        let mut m = q(10_000_000, 0.95, 10, 1000);
        // Period 1: 12 packets = 120 kbit in 10 ms → y = 12 Mbit/s.
        offer(&mut m, 0, 10 * MS, 12, 1250);
        // Period 2: 5 packets → y = 5 Mbit/s.
        offer(&mut m, 10 * MS, 10 * MS, 5, 1250);
        let p1 = 0.01 * (12e6 - 9.5e6) / 10e6; // 0.0025 s
        assert!((m.price() - p1).abs() < 1e-12, "{}", m.price());
        assert_eq!(m.arrival_rate(), 12e6);
        assert_eq!(m.spare(), 0.0, "(μC − y)⁺ with y > μC");
        // Third period starts at 20 ms: period 2 is applied at the first
        // event at or after 20 ms.
        offer(&mut m, 20 * MS, MS, 1, 1250);
        let p2 = (p1 + 0.01 * (5e6 - 9.5e6) / 10e6).max(0.0); // 0.0025 − 0.0045 → 0
        assert_eq!(m.price(), p2);
        assert_eq!(m.price(), 0.0, "clamped at zero");
        assert!((m.spare() - 4.5e6).abs() < 1e-6);
        assert_eq!(m.updates(), 2);
    }

    #[test]
    fn idle_periods_are_exact() {
        // Lazy catch-up over an idle gap equals stepping a timer period by
        // period with y = 0.
        let mut lazy = q(1_000_000, 0.9, 5, 1000);
        let mut step = q(1_000_000, 0.9, 5, 1000);
        // Load 4× capacity for 50 ms: the price climbs.
        offer(&mut lazy, 0, 50 * MS, 100, 250);
        offer(&mut step, 0, 50 * MS, 100, 250);
        // `step` gets an event in every idle period; `lazy` one at the end.
        let (mut r, mut d) = (RngStream::new(1, 1), vec![]);
        for k in 0..20u64 {
            let mut c = QdCtx {
                now: 50 * MS + k * 5 * MS,
                rng: &mut r,
                dropped: &mut d,
                marked: 0,
            };
            step.dequeue(&mut c);
        }
        let mut c = QdCtx {
            now: 50 * MS + 19 * 5 * MS,
            rng: &mut r,
            dropped: &mut d,
            marked: 0,
        };
        lazy.dequeue(&mut c);
        assert!(lazy.price() > 0.0);
        assert!((lazy.price() - step.price()).abs() < 1e-12);
        assert_eq!(lazy.updates(), step.updates());
        assert_eq!(lazy.arrival_rate(), 0.0);
        assert_eq!(lazy.spare(), 0.9e6);
    }

    #[test]
    fn stamps_max_price_and_min_spare_on_forward_packets_only() {
        let mut m = q(10_000_000, 0.95, 10, 1000);
        offer(&mut m, 0, 10 * MS, 12, 1250); // y = 12 Mbit/s
        let (mut r, mut d) = (RngStream::new(1, 1), vec![]);
        let mut c = QdCtx {
            now: 10 * MS,
            rng: &mut r,
            dropped: &mut d,
            marked: 0,
        };
        let own = 0.0025f32;
        // carried price lower: overwritten; higher: kept
        let mut lo = data(1000);
        lo.ext = Ext::MaxNet(MaxNetFields::new(0.001, 1e6));
        m.enqueue(lo, &mut c).unwrap();
        let mut hi = data(1000);
        hi.ext = Ext::MaxNet(MaxNetFields::new(0.5, f32::INFINITY));
        m.enqueue(hi, &mut c).unwrap();
        // a pure ACK carries an echo: untouched
        let ack = Packet {
            size: 40,
            flags: flags::ACK,
            ext: Ext::MaxNet(MaxNetFields::new(0.001, 7.0)),
            ..Default::default()
        };
        m.enqueue(ack, &mut c).unwrap();
        // packets without MaxNet's fields (another CC's, a RIO-tagged one)
        // pass unchanged
        for ext in [Ext::None, Ext::Rio(Class::In)] {
            let mut other = data(1000);
            other.ext = ext;
            m.enqueue(other, &mut c).unwrap();
        }
        let a = m.dequeue(&mut c).unwrap();
        assert!((fields(&a).0 - own).abs() < 1e-9);
        assert_eq!(fields(&a).1, 0.0, "min(1 Mbit/s, (μC − y)⁺ = 0)");
        let b = m.dequeue(&mut c).unwrap();
        assert_eq!(fields(&b).0, 0.5);
        let k = m.dequeue(&mut c).unwrap();
        assert_eq!(fields(&k), (0.001, 7.0));
        assert_eq!(m.dequeue(&mut c).unwrap().ext, Ext::None);
        assert_eq!(m.dequeue(&mut c).unwrap().ext, Ext::Rio(Class::In));
    }

    #[test]
    fn drops_on_overflow_and_counts_dropped_arrivals_in_y() {
        let mut m = q(10_000_000, 0.95, 10, 2);
        let (mut r, mut d) = (RngStream::new(1, 1), vec![]);
        let mut c = QdCtx {
            now: MS,
            rng: &mut r,
            dropped: &mut d,
            marked: 0,
        };
        assert!(m.enqueue(data(1250), &mut c).is_ok());
        assert!(m.enqueue(data(1250), &mut c).is_ok());
        assert_eq!(m.enqueue(data(1250), &mut c), Err(DropCause::Overflow));
        assert_eq!(m.len_pkts(), 2);
        assert_eq!(m.len_bytes(), 2500);
        c.now = 10 * MS;
        m.dequeue(&mut c);
        assert_eq!(m.arrival_rate(), 3.0 * 10_000.0 / 0.01, "offered load");
    }

    #[test]
    fn equilibrium_of_eq3_is_mu_c() {
        // The price is constant exactly when y = μC, rises above, falls below.
        for (pkts, dir) in [(95u64, 0.0), (120, 1.0), (50, -1.0)] {
            let mut m = q(10_000_000, 0.95, 100, 10_000);
            m.price = 1.0;
            // pkts × 10 kbit in 100 ms
            offer(&mut m, 0, 100 * MS, pkts, 1250);
            offer(&mut m, 100 * MS, MS, 1, 1250);
            let d = m.price() - 1.0;
            if dir == 0.0 {
                assert!(d.abs() < 1e-12, "{pkts}: Δp = {d}");
            } else {
                assert_eq!(d.signum(), dir, "{pkts}: Δp = {d}");
            }
        }
    }

    #[test]
    fn a_negative_period_names_the_key() {
        let e = toml::from_str::<MaxNetConfig>("update_period = \"-5ms\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("update_period") && e.contains("negative"), "{e}");
    }

    #[test]
    fn validation_names_the_key() {
        let mut c = MaxNetConfig {
            mu: 1.2,
            ..Default::default()
        };
        assert_eq!(c.validate().unwrap_err().0, "mu");
        c.mu = 0.0;
        assert_eq!(c.validate().unwrap_err().0, "mu");
        c.mu = 1.0;
        assert!(c.validate().is_ok());
        c.update_period = Dur(0);
        assert_eq!(c.validate().unwrap_err().0, "update_period");
    }
}
