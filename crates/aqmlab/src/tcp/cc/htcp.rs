//! H-TCP — D. Leith, R. Shorten, "H-TCP: TCP for high-speed and
//! long-distance networks", PFLDnet 2004; D. Leith, "H-TCP: TCP Congestion
//! Control for High Bandwidth-Delay Product Paths", draft-leith-tcp-htcp-06
//! (2008); Linux `net/ipv4/tcp_htcp.c` (the ns-2.35 tcp-linux copy from
//! 2.6.22 has the same constants).
//!
//! - Increase: `cwnd += α/cwnd` per acknowledged segment in congestion
//!   avoidance (Linux counts `pkts_acked`), with Δ the time since the last
//!   congestion event (reset when a reduction happens and again when fast
//!   recovery ends, as Linux's `htcp_state`):
//!   `α_raw(Δ) = 1` for Δ ≤ Δ_L, else `1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)²`
//!   (Δ in seconds, Leith & Shorten eq. (4));
//!   RTT scaling (`rtt_scaling`, on as in Linux): `α_raw ← max(1,
//!   α_raw·clamp(RTT_min/RTT_ref, 0.1, 2))` with RTT_ref = 100 ms (Linux
//!   clamps `(HZ<<3)/(10·minRTT)` to [0.5, 10]·8 and floors the result at 1);
//!   adaptive-backoff fairness: `α = 2(1 − β)·α_raw`.
//!   Computed in floating point on every ACK (Linux: integer `factor`,
//!   updated when cwnd grows by one segment).
//! - Decrease (adaptive backoff): `ssthresh = max(cwnd·β, 2)` with
//!   `β = RTT_min/RTT_max` clamped to [β_min, β_max] = [0.5, 0.8] (Linux
//!   `BETA_MAX` = 102/128 = 0.797), used only from the second congestion
//!   event on (`modeswitch`) and only if RTT_min > 10 ms; otherwise β = 0.5.
//!   RTT_min and RTT_max are taken, as in Linux `measure_rtt`, from the
//!   smoothed RTT in congestion avoidance; RTT_max grows only by samples
//!   within 20 ms of it, only after a first loss and more than 3 RTT_min
//!   after the last event, and fades after each event:
//!   `RTT_max = RTT_min + 0.95(RTT_max − RTT_min)`.
//! - Throughput switch (`bandwidth_switch`, on as in Linux): the achieved
//!   throughput B is measured about once per RTT (`B ← (3B + B_now)/4`,
//!   restarted 3 RTT_min after an event), and at an event, if its maximum
//!   changed by more than `throughput_threshold` = 20 % since the previous
//!   event (`!between(5·maxB, 4·old_maxB, 6·old_maxB)`), β = 0.5 and the
//!   mode switch restarts.
//! - Slow start: +1 segment per ACK while `cwnd ≤ ssthresh`.
//! - A timeout during fast recovery reduces from the un-inflated window
//!   `min(cwnd, ssthresh)` (see [`super::reduction_view`]).
//!
//! Parameters (defaults): `delta_l` 1 s, `beta_min` 0.5, `beta_max` 0.8,
//! `adaptive_backoff` true, `rtt_scaling` true, `rtt_ref` 100 ms,
//! `bandwidth_switch` true, `throughput_threshold` 0.2.
//!
//! ssthresh quantity: `cwnd` (Linux `htcp_recalc_ssthresh` uses
//! `snd_cwnd`), un-inflated: NewReno's recovery inflation is removed by
//! `reduction_view`; SACK recovery (PRR) never inflates `cwnd`.

use super::{slow_start_segments, CcState, CongestionControl, LossEpisode};
use crate::engine::{to_secs, Time, NS_PER_SEC};
use crate::units::Dur;
use serde::{Deserialize, Serialize};

/// `cc = { kind = "htcp", ... }`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct HtcpConfig {
    /// Δ_L: low-speed period after a congestion event. Default 1 s.
    pub delta_l: Dur,
    /// Lower clamp of β. Default 0.5.
    pub beta_min: f64,
    /// Upper clamp of β. Default 0.8.
    pub beta_max: f64,
    /// β = RTT_min/RTT_max (else β = β_min always). Default true.
    pub adaptive_backoff: bool,
    /// Scale α by RTT_min/RTT_ref. Default true (Linux `use_rtt_scaling`).
    pub rtt_scaling: bool,
    /// RTT_ref of the RTT scaling. Default 100 ms.
    pub rtt_ref: Dur,
    /// β = β_min when throughput changed by more than
    /// `throughput_threshold`. Default true (Linux `use_bandwidth_switch`).
    pub bandwidth_switch: bool,
    /// Relative throughput change that resets β. Default 0.2.
    pub throughput_threshold: f64,
}

impl Default for HtcpConfig {
    fn default() -> Self {
        HtcpConfig {
            delta_l: Dur(NS_PER_SEC),
            beta_min: 0.5,
            beta_max: 0.8,
            adaptive_backoff: true,
            rtt_scaling: true,
            rtt_ref: Dur(100_000_000),
            bandwidth_switch: true,
            throughput_threshold: 0.2,
        }
    }
}

impl HtcpConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        if !(self.beta_min > 0.0 && self.beta_min < 1.0) {
            return Err(("beta_min".into(), "must be in (0, 1)".into()));
        }
        if !(self.beta_max >= self.beta_min && self.beta_max < 1.0) {
            return Err(("beta_max".into(), "must be in [beta_min, 1)".into()));
        }
        if self.rtt_ref.0 == 0 {
            return Err(("rtt_ref".into(), "must be positive".into()));
        }
        if !(self.throughput_threshold >= 0.0 && self.throughput_threshold.is_finite()) {
            return Err((
                "throughput_threshold".into(),
                "must be a non-negative fraction".into(),
            ));
        }
        Ok(())
    }
}

/// Leith & Shorten eq. (4): the increase factor before RTT scaling and the
/// 2(1 − β) adjustment; `delta` and `delta_l` in seconds.
pub fn alpha_raw(delta: f64, delta_l: f64) -> f64 {
    if delta > delta_l {
        let d = delta - delta_l;
        1.0 + 10.0 * d + (d / 2.0).powi(2)
    } else {
        1.0
    }
}

/// RTT_min above which adaptive backoff is used (Linux: 10 ms).
const ADAPTIVE_MIN_RTT: Time = 10_000_000;
/// RTT_max only grows by samples within this of it (Linux: 20 ms).
const MAX_RTT_STEP: Time = 20_000_000;

pub struct Htcp {
    p: HtcpConfig,
    alpha: f64,
    beta: f64,
    modeswitch: bool,
    min_rtt: Option<Time>,
    max_rtt: Time,
    last_cong: Time,
    // achieved-throughput estimate, packets/s
    packetcount: u64,
    lasttime: Time,
    bi: f64,
    max_b: f64,
    old_max_b: f64,
    /// Inside a loss episode (see `reduction_view`).
    episode: LossEpisode,
    /// [`CongestionControl::count_segments`].
    count_segments: bool,
}

impl Htcp {
    pub fn new(p: &HtcpConfig) -> Self {
        Htcp {
            p: p.clone(),
            alpha: 1.0,
            beta: p.beta_min,
            modeswitch: false,
            min_rtt: None,
            max_rtt: 0,
            last_cong: 0,
            packetcount: 0,
            lasttime: 0,
            bi: 0.0,
            max_b: 0.0,
            old_max_b: 0.0,
            episode: LossEpisode::default(),
            count_segments: false,
        }
    }

    /// α in effect (segments per RTT).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// β in effect.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// (RTT_min, RTT_max) as measured.
    pub fn rtt_min_max(&self) -> (Option<Time>, Time) {
        (self.min_rtt, self.max_rtt)
    }

    /// Congestion events (in units of RTT_min) since the last event.
    fn ccount(&self, now: Time) -> u64 {
        match self.min_rtt {
            Some(m) if m > 0 => now.saturating_sub(self.last_cong) / m,
            _ => 0,
        }
    }

    /// `htcp_alpha_update`.
    pub fn alpha_update(&mut self, now: Time) {
        let delta = to_secs(now.saturating_sub(self.last_cong));
        let mut factor = alpha_raw(delta, to_secs(self.p.delta_l.0));
        if self.p.rtt_scaling {
            if let Some(m) = self.min_rtt {
                let scale = (m as f64 / self.p.rtt_ref.0 as f64).clamp(0.1, 2.0);
                factor = (factor * scale).max(1.0);
            }
        }
        self.alpha = 2.0 * factor * (1.0 - self.beta);
    }

    /// `htcp_beta_update`.
    fn beta_update(&mut self) {
        if !self.p.adaptive_backoff {
            self.beta = self.p.beta_min;
            return;
        }
        if self.p.bandwidth_switch {
            let max_b = self.max_b;
            let old = self.old_max_b;
            self.old_max_b = max_b;
            let r = self.p.throughput_threshold;
            if !(max_b >= (1.0 - r) * old && max_b <= (1.0 + r) * old) {
                self.beta = self.p.beta_min;
                self.modeswitch = false;
                return;
            }
        }
        match self.min_rtt {
            Some(min) if self.modeswitch && min > ADAPTIVE_MIN_RTT && self.max_rtt > 0 => {
                self.beta =
                    (min as f64 / self.max_rtt as f64).clamp(self.p.beta_min, self.p.beta_max);
            }
            _ => {
                self.beta = self.p.beta_min;
                self.modeswitch = true;
            }
        }
    }

    /// `measure_rtt` (congestion avoidance, outside recovery).
    fn measure_rtt(&mut self, s: &CcState) {
        let Some(srtt) = s.srtt else { return };
        if self.min_rtt.is_none_or(|m| m > srtt) {
            self.min_rtt = Some(srtt);
        }
        let min = self.min_rtt.unwrap_or(srtt);
        if s.ssthresh < 65535.0 && self.ccount(s.now) > 3 {
            if self.max_rtt < min {
                self.max_rtt = min;
            }
            if self.max_rtt < srtt && srtt <= self.max_rtt + MAX_RTT_STEP {
                self.max_rtt = srtt;
            }
        }
    }

    /// `measure_achieved_throughput` (outside recovery).
    fn measure_throughput(&mut self, s: &CcState, acked: u32) {
        if !self.p.bandwidth_switch {
            return;
        }
        self.packetcount += acked as u64;
        let Some(min) = self.min_rtt else { return };
        let need = s.cwnd - self.alpha.floor().max(1.0);
        let dt = s.now.saturating_sub(self.lasttime);
        if self.packetcount as f64 >= need && dt >= min && min > 0 {
            let cur = self.packetcount as f64 / to_secs(dt);
            if self.ccount(s.now) <= 3 {
                self.bi = cur;
                self.max_b = cur;
            } else {
                self.bi = (3.0 * self.bi + cur) / 4.0;
                if self.bi > self.max_b {
                    self.max_b = self.bi;
                }
            }
            self.packetcount = 0;
            self.lasttime = s.now;
        }
    }

    fn congestion_reset(&mut self, now: Time) {
        self.last_cong = now;
        self.packetcount = 0;
        self.lasttime = now;
    }
}

impl CongestionControl for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }

    fn on_ack(&mut self, s: &mut CcState, acked: u32) {
        self.episode.end();
        self.measure_throughput(s, acked);
        if self.count_segments && s.cwnd < s.ssthresh {
            // htcp_cong_avoid: tcp_slow_start(tp, acked)
            slow_start_segments(s, acked.max(1));
            return;
        }
        if !self.count_segments && s.cwnd <= s.ssthresh {
            s.cwnd += 1.0;
            return;
        }
        self.measure_rtt(s);
        self.alpha_update(s.now);
        s.cwnd += self.alpha * acked.max(1) as f64 / s.cwnd;
    }

    fn count_segments(&mut self, on: bool) {
        self.count_segments = on;
    }

    fn ssthresh(&mut self, s: &CcState) -> f64 {
        let view = self.episode.reduce_from(s);
        let s = &view;
        // htcp_param_update
        self.beta_update();
        self.alpha_update(s.now);
        if let Some(min) = self.min_rtt {
            if self.max_rtt > min {
                self.max_rtt = min + (self.max_rtt - min) * 95 / 100;
            }
        }
        self.congestion_reset(s.now);
        (s.cwnd * self.beta).max(2.0)
    }

    fn on_recovery_exit(&mut self, s: &mut CcState) {
        self.episode.end();
        // htcp_state(TCP_CA_Open)
        self.congestion_reset(s.now);
    }

    fn on_timeout(&mut self, s: &CcState) {
        self.congestion_reset(s.now);
    }
}

impl super::registry::Registered for HtcpConfig {
    const KIND: &'static str = "htcp";
    const ABOUT: &'static str = "H-TCP (Leith & Shorten 2004; draft-leith-tcp-htcp-06; Linux tcp_htcp.c)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("delta_l", "time", "≥ 0", "", "low-speed period after a reduction Δ_L"),
        crate::registry::param!("beta_min", "factor", "(0, 1)", "1.5", "lower bound of the adaptive backoff"),
        crate::registry::param!("beta_max", "factor", "[beta_min, 1)", "1.5", "upper bound of the adaptive backoff"),
        crate::registry::param!("adaptive_backoff", "", "true/false", "", "β from RTT_min/RTT_max"),
        crate::registry::param!("rtt_scaling", "", "true/false", "", "scale the increase by RTT/rtt_ref"),
        crate::registry::param!("rtt_ref", "time", "> 0", "\"0ms\"", "reference RTT of the scaling"),
        crate::registry::param!("bandwidth_switch", "", "true/false", "", "reset β to beta_min on a throughput change"),
        crate::registry::param!("throughput_threshold", "fraction", "≥ 0", "-1.0", "relative throughput change that resets β"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        HtcpConfig::validate(self)
    }
}

impl super::registry::CcAlgorithm for HtcpConfig {
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Htcp::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::secs;

    #[test]
    fn alpha_raw_formula() {
        assert_eq!(alpha_raw(0.5, 1.0), 1.0);
        assert_eq!(alpha_raw(1.0, 1.0), 1.0);
        // Δ = 3 s: 1 + 10·2 + 1² = 22
        assert!((alpha_raw(3.0, 1.0) - 22.0).abs() < 1e-12);
        // Δ = 11 s: 1 + 100 + 25 = 126
        assert!((alpha_raw(11.0, 1.0) - 126.0).abs() < 1e-12);
    }

    #[test]
    fn alpha_scaled_by_rtt_and_beta() {
        let mut h = Htcp::new(&HtcpConfig::default());
        h.min_rtt = Some(secs(0.2)); // scale 2
        h.beta = 0.5;
        h.last_cong = 0;
        h.alpha_update(secs(3.0));
        assert!((h.alpha() - 2.0 * 0.5 * 44.0).abs() < 1e-9, "{}", h.alpha());
        // RTT scaling never takes the factor below 1
        h.min_rtt = Some(secs(0.02));
        h.alpha_update(secs(0.5));
        assert!((h.alpha() - 1.0).abs() < 1e-12);
        // β = 0.8 → α = 0.4·factor
        h.beta = 0.8;
        h.min_rtt = Some(secs(0.1));
        h.alpha_update(secs(3.0));
        assert!((h.alpha() - 0.4 * 22.0).abs() < 1e-9);
    }

    #[test]
    fn beta_follows_rtt_ratio_after_modeswitch() {
        let cfg = HtcpConfig {
            bandwidth_switch: false,
            ..Default::default()
        };
        let mut h = Htcp::new(&cfg);
        h.min_rtt = Some(secs(0.05));
        h.max_rtt = secs(0.08);
        let mut s = CcState::with_window(100.0, 1e9, 1000);
        // each event ends its recovery before the next
        let mut event = |h: &mut Htcp| {
            let th = h.ssthresh(&s);
            h.on_recovery_exit(&mut s);
            th
        };
        // first event: β_min, mode switch armed
        assert_eq!(event(&mut h), 50.0);
        assert!(h.modeswitch);
        h.max_rtt = secs(0.08);
        let th = event(&mut h);
        assert!((h.beta() - 0.625).abs() < 1e-9, "β {}", h.beta());
        assert!((th - 62.5).abs() < 1e-9);
        // clamps
        h.max_rtt = secs(0.2);
        event(&mut h);
        assert_eq!(h.beta(), 0.5);
        h.max_rtt = secs(0.055);
        event(&mut h);
        assert_eq!(h.beta(), 0.8);
        // RTT_max fades towards RTT_min after each event
        h.max_rtt = secs(0.15);
        event(&mut h);
        assert_eq!(h.max_rtt, secs(0.05) + secs(0.1) * 95 / 100);
    }

    #[test]
    fn throughput_change_forces_half() {
        let mut h = Htcp::new(&HtcpConfig::default());
        h.min_rtt = Some(secs(0.05));
        h.max_rtt = secs(0.06);
        h.modeswitch = true;
        h.old_max_b = 1000.0;
        h.max_b = 1100.0; // +10 %: adaptive
        let mut s = CcState::with_window(100.0, 1e9, 1000);
        h.ssthresh(&s);
        assert!((h.beta() - 0.05 / 0.06).abs() < 1e-9 || h.beta() == 0.8);
        h.on_recovery_exit(&mut s);
        h.max_b = 1500.0; // +36 % against 1100
        h.ssthresh(&s);
        assert_eq!(h.beta(), 0.5);
        assert!(!h.modeswitch);
    }
}
