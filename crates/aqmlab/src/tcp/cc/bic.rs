//! BIC TCP — L. Xu, K. Harfoush, I. Rhee, "Binary Increase Congestion
//! Control for Fast, Long Distance Networks", IEEE INFOCOM 2004, §III
//! (binary search increase, additive increase, max probing, fast
//! convergence), with Linux `net/ipv4/tcp_bic.c`'s constants (the ns-2.35
//! tcp-linux copy from 2.6.22), computed in floating point.
//!
//! Per-RTT increase `inc(cwnd)` in congestion avoidance, applied as
//! `cwnd += inc·acked/cwnd` per ACK (Linux scales its ACK counter by the
//! measured segments per ACK, so growth is per acknowledged segment):
//! - `cwnd ≤ low_window`: 1 (Reno);
//! - below W_max, binary search towards W_max: `dist = (W_max − cwnd)/B`;
//!   `inc = S_max` if `dist > S_max` (additive increase), `S_min` if
//!   `dist ≤ 1`, else `dist`. Recomputed per ACK (as Linux does), the
//!   distance decays by e^(−1/B) per RTT, so W_max is reached in
//!   ≈ B·ln(d₀/B) RTTs — logarithmic, like the paper's per-RTT "jump to the
//!   midpoint" (B = 2, log₂(d₀/S_min) RTTs);
//! - at or above W_max, max probing: `S_min` within B of W_max, then
//!   `(cwnd − W_max)/(B − 1)` (slow start), then `S_max` (linear);
//! - before the first loss at least `cwnd/20` (5 % per RTT, Linux
//!   `cnt ≤ 20` while `loss_cwnd == 0`).
//!
//! `S_min = B/smooth_part` (Linux: 4/20 = 0.2 segment per RTT; the paper's
//! S_min is 0.01). On a congestion event, fast convergence: `W_max =
//! cwnd·(1 + β)/2` if `cwnd < W_max`, else `W_max = cwnd`; `ssthresh =
//! max(cwnd·β, 2)` (`max(cwnd/2, 2)` at or below `low_window`). A timeout
//! resets W_max and the loss flag (`bictcp_reset`). Slow start +1 per ACK
//! while `cwnd ≤ ssthresh`. A timeout during fast recovery reduces from the
//! un-inflated window `min(cwnd, ssthresh)` (see [`super::reduction_view`]).
//!
//! Parameters (defaults): `beta` β = 819/1024 ≈ 0.8 (window kept after a
//! loss), `max_increment` S_max = 16 segments/RTT, `low_window` 14
//! segments, `fast_convergence` true, `search_divisor` B = 4 (Linux
//! `BICTCP_B`), `smooth_part` 20.
//!
//! ssthresh quantity: `cwnd` (Linux `bictcp_recalc_ssthresh` uses
//! `snd_cwnd`), un-inflated: NewReno's recovery inflation is removed by
//! `reduction_view`; SACK recovery (PRR) never inflates `cwnd`.
//!
//! **`variant = "ns3"`** — ns-3 3.44 `TcpBic` (`src/internet/model/
//! tcp-bic.cc`; its attribute defaults are Beta 0.8 and SmoothPart 5, set
//! them with `beta` and `smooth_part`), where it differs from `linux`:
//! - fast convergence sets `W_max = ⌊β·cwnd⌋` (Linux `cwnd·(1 + β)/2`);
//!   `W_max` and the increase use the window in whole segments, with
//!   ns-3's integer divisions (`dist = ⌊(W_max − cwnd)/B⌋`, `cnt`);
//! - the increase is counted, not spread: the acknowledged segments add to
//!   a counter, and once it exceeds `cnt` (the segments per one-segment
//!   step) cwnd grows by one segment and the counter restarts at 0, the
//!   remainder lost;
//! - slow start adds one segment per ACK, the ACK's other segments go to
//!   the counter once cwnd reaches ssthresh;
//! - the 5 %-per-RTT floor before the first loss holds while `W_max` = 0;
//! - a timeout keeps `W_max` (ns-3 has no `bictcp_reset`; its `GetSsThresh`
//!   runs on every reduction); below `low_window` ssthresh is
//!   `max(FlightSize/2, 2)`.
//!
//! `max_increment`, `low_window`, `search_divisor` and `smooth_part` are
//! integers in ns-3; with `variant = "ns3"` they must be whole numbers.

use super::{slow_start_segments, CcState, CongestionControl, LossEpisode};
use serde::{Deserialize, Serialize};

/// Which BIC.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub enum BicVariant {
    /// Linux `tcp_bic.c` (the default).
    #[default]
    #[serde(rename = "linux")]
    Linux,
    /// ns-3 3.44 `TcpBic`.
    #[serde(rename = "ns3")]
    Ns3,
}

/// `cc = { kind = "bic", ... }`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct BicConfig {
    /// Window kept after a loss. Default 819/1024.
    pub beta: f64,
    /// S_max, segments per RTT. Default 16.
    pub max_increment: f64,
    /// Below this window BIC is Reno. Default 14.
    pub low_window: f64,
    /// Default true.
    pub fast_convergence: bool,
    /// B: each RTT closes 1/B of the distance to W_max. Default 4.
    pub search_divisor: f64,
    /// S_min = B/smooth_part. Default 20.
    pub smooth_part: f64,
    /// `linux` (default) or `ns3`.
    pub variant: BicVariant,
}

impl Default for BicConfig {
    fn default() -> Self {
        BicConfig {
            beta: 819.0 / 1024.0,
            max_increment: 16.0,
            low_window: 14.0,
            fast_convergence: true,
            search_divisor: 4.0,
            smooth_part: 20.0,
            variant: BicVariant::Linux,
        }
    }
}

impl BicConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(("beta".into(), "must be in (0, 1)".into()));
        }
        if !(self.max_increment >= 1.0 && self.max_increment.is_finite()) {
            return Err(("max_increment".into(), "must be at least 1".into()));
        }
        if !(self.low_window >= 0.0 && self.low_window.is_finite()) {
            return Err(("low_window".into(), "must be non-negative".into()));
        }
        if !(self.search_divisor >= 2.0 && self.search_divisor.is_finite()) {
            return Err(("search_divisor".into(), "must be at least 2".into()));
        }
        if !(self.smooth_part > 0.0 && self.smooth_part.is_finite()) {
            return Err(("smooth_part".into(), "must be positive".into()));
        }
        if self.variant == BicVariant::Ns3 {
            for (k, v) in [
                ("max_increment", self.max_increment),
                ("low_window", self.low_window),
                ("search_divisor", self.search_divisor),
                ("smooth_part", self.smooth_part),
            ] {
                if v.fract() != 0.0 || v > 1e6 {
                    return Err((
                        k.into(),
                        format!("must be a whole number up to 10^6 with variant = \"ns3\" (ns-3's TcpBic attribute is an integer), got {v}"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// S_min, segments per RTT.
    pub fn s_min(&self) -> f64 {
        self.search_divisor / self.smooth_part
    }
}

pub struct Bic {
    p: BicConfig,
    w_max: f64,
    loss_cwnd: f64,
    /// Inside a loss episode (see `reduction_view`).
    episode: LossEpisode,
    /// [`CongestionControl::count_segments`].
    count_segments: bool,
    /// `ns3`: segments acknowledged since the last one-segment increase
    /// (`m_cWndCnt`).
    cwnd_cnt: u64,
}

impl Bic {
    pub fn new(p: &BicConfig) -> Self {
        Bic {
            p: p.clone(),
            w_max: 0.0,
            loss_cwnd: 0.0,
            episode: LossEpisode::default(),
            count_segments: false,
            cwnd_cnt: 0,
        }
    }

    /// `ns3`: the segments to acknowledge per one-segment increase at
    /// window `cwnd` (`TcpBic::Update`, in its integer arithmetic).
    pub fn ns3_cnt(&self, cwnd: f64) -> u64 {
        let p = &self.p;
        let (seg, w_max) = (cwnd.floor().max(0.0) as u64, self.w_max as u64);
        let (b, max_incr, smooth) = (
            p.search_divisor as u64,
            p.max_increment as u64,
            p.smooth_part as u64,
        );
        if seg < p.low_window as u64 {
            return seg;
        }
        let mut cnt = if seg < w_max {
            let dist = ((w_max - seg) / b) as f64;
            if dist > max_incr as f64 {
                seg / max_incr
            } else if dist <= 1.0 {
                seg * smooth / b
            } else {
                (seg as f64 / dist) as u64
            }
        } else if seg < w_max + b {
            seg * smooth / b
        } else if seg < w_max + max_incr * (b - 1) {
            seg * (b - 1) / (seg - w_max)
        } else {
            seg / max_incr
        };
        if w_max == 0 {
            cnt = cnt.min(20);
        }
        cnt.max(1)
    }

    /// W_max (`last_max_cwnd`), segments.
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// The per-RTT increase at window `cwnd` (`bictcp_update`).
    pub fn increase(&self, cwnd: f64) -> f64 {
        let p = &self.p;
        let b = p.search_divisor;
        let inc = if cwnd <= p.low_window {
            1.0
        } else if cwnd < self.w_max {
            let dist = (self.w_max - cwnd) / b;
            if dist > p.max_increment {
                p.max_increment
            } else if dist <= 1.0 {
                p.s_min()
            } else {
                dist
            }
        } else if cwnd < self.w_max + b {
            p.s_min()
        } else if cwnd < self.w_max + p.max_increment * (b - 1.0) {
            (cwnd - self.w_max) / (b - 1.0)
        } else {
            p.max_increment
        };
        if self.loss_cwnd == 0.0 {
            inc.max(cwnd / 20.0)
        } else {
            inc
        }
    }
}

impl CongestionControl for Bic {
    fn name(&self) -> &'static str {
        "bic"
    }

    fn on_ack(&mut self, s: &mut CcState, acked: u32) {
        self.episode.end();
        if self.p.variant == BicVariant::Ns3 {
            // TcpBic::IncreaseWindow
            let mut acked = acked.max(1);
            if s.cwnd < s.ssthresh {
                s.cwnd += 1.0;
                acked -= 1;
            }
            if s.cwnd >= s.ssthresh && acked > 0 {
                self.cwnd_cnt += acked as u64;
                if self.cwnd_cnt > self.ns3_cnt(s.cwnd) {
                    s.cwnd += 1.0;
                    self.cwnd_cnt = 0;
                }
            }
        } else if self.count_segments {
            // bictcp_cong_avoid: tcp_slow_start, the rest to
            // tcp_cong_avoid_ai(tp, cnt, acked)
            let mut acked = acked.max(1);
            if s.cwnd < s.ssthresh {
                acked = slow_start_segments(s, acked);
                if acked == 0 {
                    return;
                }
            }
            s.cwnd += self.increase(s.cwnd) * acked as f64 / s.cwnd;
        } else if s.cwnd <= s.ssthresh {
            s.cwnd += 1.0;
        } else {
            s.cwnd += self.increase(s.cwnd) * acked.max(1) as f64 / s.cwnd;
        }
    }

    fn count_segments(&mut self, on: bool) {
        self.count_segments = on;
    }

    fn ssthresh(&mut self, s: &CcState) -> f64 {
        let s = self.episode.reduce_from(s);
        let cwnd = s.cwnd;
        if self.p.variant == BicVariant::Ns3 {
            // TcpBic::GetSsThresh
            let seg = cwnd.floor();
            self.w_max = if seg < self.w_max && self.p.fast_convergence {
                (self.p.beta * seg).floor()
            } else {
                seg
            };
            return if seg < self.p.low_window {
                (s.in_flight as f64 / 2.0).max(2.0)
            } else {
                (seg * self.p.beta).max(2.0)
            };
        }
        self.w_max = if cwnd < self.w_max && self.p.fast_convergence {
            cwnd * (1.0 + self.p.beta) / 2.0
        } else {
            cwnd
        };
        self.loss_cwnd = cwnd;
        if cwnd <= self.p.low_window {
            (cwnd / 2.0).max(2.0)
        } else {
            (cwnd * self.p.beta).max(2.0)
        }
    }

    fn on_recovery_exit(&mut self, _s: &mut CcState) {
        self.episode.end();
    }

    fn on_timeout(&mut self, _s: &CcState) {
        if self.p.variant == BicVariant::Linux {
            self.w_max = 0.0;
            self.loss_cwnd = 0.0;
        }
    }
}

impl super::registry::Registered for BicConfig {
    const KIND: &'static str = "bic";
    const ABOUT: &'static str =
        "BIC TCP (Xu, Harfoush, Rhee 2004; Linux tcp_bic.c; variant \"ns3\": ns-3 3.44 TcpBic)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("beta", "factor", "(0, 1)", "1.5", "multiplicative decrease"),
        crate::registry::param!("max_increment", "segments", "≥ 1", "0.5", "largest increase per RTT S_max"),
        crate::registry::param!("low_window", "segments", "≥ 0", "-1.0", "below it, Reno"),
        crate::registry::param!("fast_convergence", "", "true/false", "", "lower W_max after a reduction"),
        crate::registry::param!("search_divisor", "", "≥ 2", "1.0", "binary-search divisor"),
        crate::registry::param!("smooth_part", "", "> 0", "0.0", "smoothing near W_max"),
        crate::registry::param!("variant", "", "\"linux\" or \"ns3\"", "\"bsd\"", "which BIC (ns3: ns-3 3.44 TcpBic)"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        BicConfig::validate(self)
    }
}

impl super::registry::CcAlgorithm for BicConfig {
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Bic::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// From β·W_max, one RTT = cwnd single-segment ACKs: the distance to
    /// W_max when the binary search starts, and the RTTs it then takes to
    /// come within B (one S_min step) of W_max.
    fn binary_phase(cfg: &BicConfig, w_max: f64) -> (f64, u32) {
        let mut cc = Bic::new(cfg);
        let mut s = CcState::with_window(w_max, 1.0, 1000);
        s.ssthresh = cc.ssthresh(&s);
        s.cwnd = s.ssthresh;
        let b = cfg.search_divisor;
        let mut d0 = None;
        let mut rtts = 0;
        while s.cwnd < w_max - b {
            if d0.is_none() && (w_max - s.cwnd) / b <= cfg.max_increment {
                d0 = Some(w_max - s.cwnd);
            }
            let n = s.cwnd.floor() as u32;
            let w0 = s.cwnd;
            for _ in 0..n {
                cc.on_ack(&mut s, 1);
            }
            assert!(s.cwnd > w0);
            if d0.is_some() {
                rtts += 1;
            }
            assert!(rtts < 10_000);
        }
        (d0.expect("binary phase reached"), rtts)
    }

    #[test]
    fn binary_search_takes_log_steps() {
        for (b, w_max) in [(2.0, 1000.0), (2.0, 100.0), (4.0, 1000.0), (4.0, 300.0)] {
            let cfg = BicConfig {
                search_divisor: b,
                ..Default::default()
            };
            let (d0, rtts) = binary_phase(&cfg, w_max);
            // The increase is recomputed on every ACK (as Linux does), so
            // the distance decays continuously, dd/dt = −d/(B·RTT): a factor
            // e^(−1/B) per RTT (the paper's per-RTT midpoint jump with B = 2
            // would give 1/2). RTTs until d < B: ⌈B·ln(d0/B)⌉ — logarithmic
            // in the distance, B·ln 2 RTTs per halving.
            let expect = (b * (d0 / b).ln()).ceil();
            assert!(
                (rtts as f64 - expect).abs() <= 1.0,
                "B={b} W_max={w_max}: {rtts} binary-search RTTs from distance {d0:.1}, expected {expect}"
            );
        }
    }

    #[test]
    fn ssthresh_beta_and_fast_convergence() {
        let mut cc = Bic::new(&BicConfig::default());
        let mut s = CcState::with_window(1000.0, 1e9, 1000);
        assert!((cc.ssthresh(&s) - 799.8046875).abs() < 1e-9);
        assert_eq!(cc.w_max(), 1000.0);
        cc.on_recovery_exit(&mut s);
        let s = CcState::with_window(900.0, 1e9, 1000);
        cc.ssthresh(&s);
        assert!((cc.w_max() - 900.0 * (1.0 + 819.0 / 1024.0) / 2.0).abs() < 1e-9);
        let mut s = CcState::with_window(10.0, 1e9, 1000);
        cc.on_recovery_exit(&mut s);
        assert_eq!(cc.ssthresh(&s), 5.0);
    }

    #[test]
    fn increase_regions() {
        let mut cc = Bic::new(&BicConfig::default());
        cc.w_max = 1000.0;
        cc.loss_cwnd = 1000.0;
        assert_eq!(cc.increase(10.0), 1.0);
        assert_eq!(cc.increase(800.0), 16.0); // dist 50 > 16
        assert_eq!(cc.increase(960.0), 10.0); // dist 10
        assert_eq!(cc.increase(998.0), 0.2); // dist 0.5 ≤ 1: S_min
        assert_eq!(cc.increase(1002.0), 0.2);
        assert_eq!(cc.increase(1030.0), 10.0); // (1030 − 1000)/3
        assert_eq!(cc.increase(1100.0), 16.0);
    }

    fn ns3() -> BicConfig {
        BicConfig {
            beta: 0.8,
            smooth_part: 5.0,
            variant: BicVariant::Ns3,
            ..Default::default()
        }
    }

    /// ns-3 `TcpBic::GetSsThresh`: W_max = ⌊β·cwnd⌋ under fast
    /// convergence (Linux: cwnd·(1 + β)/2), ssthresh = β·⌊cwnd⌋; a timeout
    /// keeps W_max.
    #[test]
    fn ns3_fast_convergence_and_timeout() {
        let mut cc = Bic::new(&ns3());
        let s = CcState::with_window(1000.7, 1e9, 1000);
        assert!((cc.ssthresh(&s) - 800.0).abs() < 1e-9);
        assert_eq!(cc.w_max(), 1000.0);
        let mut s = CcState::with_window(903.0, 1e9, 1000);
        cc.on_recovery_exit(&mut s);
        assert!((cc.ssthresh(&s) - 722.4).abs() < 1e-9);
        assert_eq!(cc.w_max(), 722.0); // ⌊0.8·903⌋
        cc.on_timeout(&s);
        assert_eq!(cc.w_max(), 722.0);
        // below low_window: half the flight size, at least 2
        let mut s = CcState::with_window(10.0, 1e9, 1000);
        s.in_flight = 9;
        cc.on_recovery_exit(&mut s);
        assert_eq!(cc.ssthresh(&s), 4.5);
    }

    /// ns-3 `TcpBic::Update`'s `cnt` in each region, integer arithmetic.
    #[test]
    fn ns3_cnt_regions() {
        let mut cc = Bic::new(&ns3());
        assert_eq!(cc.ns3_cnt(10.0), 10); // below LowWnd: Reno
        assert_eq!(cc.ns3_cnt(700.0), 20); // W_max 0: at most 20
        cc.w_max = 1000.0;
        assert_eq!(cc.ns3_cnt(800.0), 50); // dist 50 > 16: cwnd/16
        assert_eq!(cc.ns3_cnt(960.0), 96); // dist 10: cwnd/dist
        assert_eq!(cc.ns3_cnt(998.5), 1247); // dist ⌊2/4⌋ = 0: 998·5/4
        assert_eq!(cc.ns3_cnt(1002.0), 1252); // within B above: 1002·5/4
        assert_eq!(cc.ns3_cnt(1030.0), 103); // 1030·3/30
        assert_eq!(cc.ns3_cnt(1100.0), 68); // 1100/16
    }

    /// ns-3 `TcpBic::IncreaseWindow`: one segment once the counter exceeds
    /// `cnt`, the remainder dropped; slow start +1 per ACK.
    #[test]
    fn ns3_counted_increase() {
        let mut cc = Bic::new(&ns3());
        cc.w_max = 1000.0;
        let mut s = CcState::with_window(960.0, 900.0, 1000);
        // cnt 96: 48 ACKs of 2 segments give 96, not > 96; the 49th adds one
        for _ in 0..48 {
            cc.on_ack(&mut s, 2);
        }
        assert_eq!(s.cwnd, 960.0);
        cc.on_ack(&mut s, 2);
        assert_eq!(s.cwnd, 961.0);
        assert_eq!(cc.cwnd_cnt, 0);
        // slow start: +1 per ACK whatever it acknowledges
        let mut s = CcState::with_window(20.0, 100.0, 1000);
        cc.on_ack(&mut s, 2);
        assert_eq!(s.cwnd, 21.0);
    }
}
