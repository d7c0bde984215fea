//! HighSpeed TCP — S. Floyd, "HighSpeed TCP for Large Congestion Windows",
//! RFC 3649, 2003.
//!
//! - §5 response function: for `w > Low_Window`,
//!   `w = Low_Window·(p/Low_P)^S` with
//!   `S = (log High_Window − log Low_Window)/(log High_P − log Low_P)`,
//!   so the loss rate at window w is `p(w) = Low_P·(w/Low_Window)^(1/S)`;
//!   Low_P is Standard TCP's loss rate at Low_Window from its response
//!   function `w = 1.2/sqrt(p)` (§1): `Low_P = (1.2/Low_Window)²` ≈ 10⁻³.
//!   With the defaults this is `w = 0.12/p^0.835`, i.e. `p(w) ≈ 0.078/w^1.2`.
//! - §5 decrease: `b(w) = (High_Decrease − 0.5)·(log w − log Low_Window)/
//!   (log High_Window − log Low_Window) + 0.5` (extrapolated above
//!   High_Window as the RFC's table does, floored at 0.01 far outside the
//!   design range); increase: `a(w) = w²·p(w)·2·b(w)/(2 − b(w))`.
//! - For `w ≤ Low_Window` Standard TCP: a = 1, b = 0.5.
//! - Congestion avoidance: `cwnd += a(cwnd)/cwnd` per ACK; on a congestion
//!   event `ssthresh = max((1 − b(cwnd))·cwnd, 2)` (Linux
//!   `tcp_highspeed.c` uses cwnd, not FlightSize); slow start +1 per ACK
//!   while `cwnd ≤ ssthresh`. RFC 3742 limited slow start is not applied.
//!   A timeout during fast recovery reduces from the un-inflated window
//!   `min(cwnd, ssthresh)` (see [`super::reduction_view`]).
//! - Appendix B's table (a(w) = 1…73 at w = 38…89053, used by Linux) is
//!   these formulas computed with the rounded `p(w) = 0.078/w^1.2`; the
//!   exact formulas here differ from it by at most 5 % in a(w) and 0.005 in
//!   b(w) (unit test below).
//!
//! Parameters (defaults): `low_window` 38 segments, `high_window` 83000
//! segments, `high_p` 10⁻⁷, `high_decrease` 0.1.
//!
//! ssthresh quantity: `cwnd` (RFC 3649 §5 decreases the window w; Linux
//! `hstcp_ssthresh` uses `snd_cwnd`), un-inflated: NewReno's recovery
//! inflation is removed by `reduction_view`; SACK recovery (PRR) never
//! inflates `cwnd`.

use super::{slow_start_segments, CcState, CongestionControl, LossEpisode};
use serde::{Deserialize, Serialize};

/// `cc = { kind = "highspeed", ... }`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct HighSpeedConfig {
    /// Low_Window, segments. Default 38.
    pub low_window: f64,
    /// High_Window, segments. Default 83000.
    pub high_window: f64,
    /// High_P, loss rate at High_Window. Default 1e-7.
    pub high_p: f64,
    /// High_Decrease, b(High_Window). Default 0.1.
    pub high_decrease: f64,
}

impl Default for HighSpeedConfig {
    fn default() -> Self {
        HighSpeedConfig {
            low_window: 38.0,
            high_window: 83000.0,
            high_p: 1e-7,
            high_decrease: 0.1,
        }
    }
}

impl HighSpeedConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        if !(self.low_window >= 2.0 && self.low_window.is_finite()) {
            return Err(("low_window".into(), "must be at least 2".into()));
        }
        if !(self.high_window > self.low_window && self.high_window.is_finite()) {
            return Err(("high_window".into(), "must exceed low_window".into()));
        }
        if !(self.high_p > 0.0 && self.high_p < self.low_p()) {
            return Err((
                "high_p".into(),
                format!(
                    "must be in (0, {:.3e}), the Standard TCP loss rate at low_window",
                    self.low_p()
                ),
            ));
        }
        if !(self.high_decrease > 0.0 && self.high_decrease <= 0.5) {
            return Err(("high_decrease".into(), "must be in (0, 0.5]".into()));
        }
        Ok(())
    }

    /// Low_P = (1.2/Low_Window)².
    pub fn low_p(&self) -> f64 {
        (1.2 / self.low_window).powi(2)
    }

    /// p(w), the loss rate of the response function at window `w`.
    pub fn p(&self, w: f64) -> f64 {
        let lp = self.low_p();
        let s = (self.high_window.ln() - self.low_window.ln()) / (self.high_p.ln() - lp.ln());
        lp * (w / self.low_window).powf(1.0 / s)
    }

    /// b(w), the decrease factor.
    pub fn b(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 0.5;
        }
        let f = (w.ln() - self.low_window.ln()) / (self.high_window.ln() - self.low_window.ln());
        ((self.high_decrease - 0.5) * f + 0.5).max(0.01)
    }

    /// a(w), the increase per RTT, segments.
    pub fn a(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 1.0;
        }
        let b = self.b(w);
        (w * w * self.p(w) * 2.0 * b / (2.0 - b)).max(1.0)
    }
}

pub struct HighSpeed {
    p: HighSpeedConfig,
    /// Inside a loss episode (see `reduction_view`).
    episode: LossEpisode,
    /// [`CongestionControl::count_segments`].
    count_segments: bool,
}

impl HighSpeed {
    pub fn new(p: &HighSpeedConfig) -> Self {
        HighSpeed {
            p: p.clone(),
            episode: LossEpisode::default(),
            count_segments: false,
        }
    }
}

impl CongestionControl for HighSpeed {
    fn name(&self) -> &'static str {
        "highspeed"
    }

    fn on_ack(&mut self, s: &mut CcState, acked: u32) {
        self.episode.end();
        if self.count_segments && s.cwnd < s.ssthresh {
            // hstcp_cong_avoid: tcp_slow_start(tp, acked); its congestion
            // avoidance counts ACKs (snd_cwnd_cnt += ai + 1)
            slow_start_segments(s, acked.max(1));
        } else if !self.count_segments && s.cwnd <= s.ssthresh {
            s.cwnd += 1.0;
        } else {
            s.cwnd += self.p.a(s.cwnd) / s.cwnd;
        }
    }

    fn count_segments(&mut self, on: bool) {
        self.count_segments = on;
    }

    fn ssthresh(&mut self, s: &CcState) -> f64 {
        let s = self.episode.reduce_from(s);
        ((1.0 - self.p.b(s.cwnd)) * s.cwnd).max(2.0)
    }

    fn on_recovery_exit(&mut self, _s: &mut CcState) {
        self.episode.end();
    }
}

impl super::registry::Registered for HighSpeedConfig {
    const KIND: &'static str = "highspeed";
    const ABOUT: &'static str = "HighSpeed TCP (RFC 3649)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("low_window", "segments", "≥ 2", "1.0", "below it, Reno"),
        crate::registry::param!("high_window", "segments", "> low_window", "1.0", "window of the high_p point"),
        crate::registry::param!("high_p", "probability", "(0, loss rate at low_window)", "0.0", "loss rate at high_window"),
        crate::registry::param!("high_decrease", "factor", "(0, 0.5]", "0.9", "decrease at high_window"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        HighSpeedConfig::validate(self)
    }
}

impl super::registry::CcAlgorithm for HighSpeedConfig {
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(HighSpeed::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 3649 Appendix B: w at which a(w) = 1, 2, 3, … and b(w) there.
    /// (The same table, with b scaled by 256, is Linux's hstcp_aimd_vals.)
    const TABLE: [(f64, f64); 72] = [
        (38.0, 0.50),
        (118.0, 0.44),
        (221.0, 0.41),
        (347.0, 0.38),
        (495.0, 0.37),
        (663.0, 0.35),
        (851.0, 0.34),
        (1058.0, 0.33),
        (1284.0, 0.32),
        (1529.0, 0.31),
        (1793.0, 0.30),
        (2076.0, 0.29),
        (2378.0, 0.28),
        (2699.0, 0.28),
        (3039.0, 0.27),
        (3399.0, 0.27),
        (3778.0, 0.26),
        (4177.0, 0.26),
        (4596.0, 0.25),
        (5036.0, 0.25),
        (5497.0, 0.24),
        (5979.0, 0.24),
        (6483.0, 0.23),
        (7009.0, 0.23),
        (7558.0, 0.22),
        (8130.0, 0.22),
        (8726.0, 0.22),
        (9346.0, 0.21),
        (9991.0, 0.21),
        (10661.0, 0.21),
        (11358.0, 0.20),
        (12082.0, 0.20),
        (12834.0, 0.20),
        (13614.0, 0.19),
        (14424.0, 0.19),
        (15265.0, 0.19),
        (16137.0, 0.19),
        (17042.0, 0.18),
        (17981.0, 0.18),
        (18955.0, 0.18),
        (19965.0, 0.17),
        (21013.0, 0.17),
        (22101.0, 0.17),
        (23230.0, 0.17),
        (24402.0, 0.16),
        (25618.0, 0.16),
        (26881.0, 0.16),
        (28193.0, 0.16),
        (29557.0, 0.15),
        (30975.0, 0.15),
        (32450.0, 0.15),
        (33986.0, 0.15),
        (35586.0, 0.14),
        (37253.0, 0.14),
        (38992.0, 0.14),
        (40808.0, 0.14),
        (42707.0, 0.13),
        (44694.0, 0.13),
        (46776.0, 0.13),
        (48961.0, 0.13),
        (51258.0, 0.13),
        (53677.0, 0.12),
        (56230.0, 0.12),
        (58932.0, 0.12),
        (61799.0, 0.12),
        (64851.0, 0.11),
        (68113.0, 0.11),
        (71617.0, 0.11),
        (75401.0, 0.10),
        (79517.0, 0.10),
        (84035.0, 0.10),
        (89053.0, 0.10),
    ];

    #[test]
    fn a_and_b_match_rfc3649_table() {
        let c = HighSpeedConfig::default();
        for (i, &(w, b)) in TABLE.iter().enumerate() {
            let a_tab = (i + 1) as f64;
            let a = c.a(w);
            assert!(
                (a / a_tab - 1.0).abs() <= 0.05,
                "w {w}: a {a:.3} vs table {a_tab}"
            );
            assert!(
                (c.b(w) - b).abs() <= 0.005 + 1e-9,
                "w {w}: b {:.4} vs table {b}",
                c.b(w)
            );
        }
    }

    #[test]
    fn named_points() {
        let c = HighSpeedConfig::default();
        assert_eq!((c.a(38.0), c.b(38.0)), (1.0, 0.5));
        assert!((c.a(1058.0) - 8.0).abs() < 0.5, "{}", c.a(1058.0));
        assert!((c.b(1058.0) - 0.33).abs() < 0.005);
        // at High_Window p = High_P: a = 83000²·1e-7·0.2/1.9 = 72.5
        assert!((c.p(83000.0) - 1e-7).abs() < 1e-12);
        assert!((c.a(83000.0) - 72.516).abs() < 0.01, "{}", c.a(83000.0));
        assert!((c.b(83000.0) - 0.1).abs() < 1e-12);
        assert!(c.b(89053.0) < 0.1); // extrapolated, as the table's 0.10 (24/256)
                                     // the response-function exponent S = 0.835 (w = 0.12/p^0.835)
        let s = (83000f64.ln() - 38f64.ln()) / (1e-7f64.ln() - c.low_p().ln());
        assert!((s + 0.835).abs() < 0.001, "{s}");
    }

    #[test]
    fn ssthresh_and_increase() {
        let mut h = HighSpeed::new(&HighSpeedConfig::default());
        let mut s = CcState::with_window(1058.0, 10.0, 1000);
        let th = h.ssthresh(&s);
        assert!((th - 1058.0 * (1.0 - h.p.b(1058.0))).abs() < 1e-9);
        let w0 = s.cwnd;
        for _ in 0..1058 {
            h.on_ack(&mut s, 1);
        }
        assert!((s.cwnd - w0 - h.p.a(w0)).abs() < 0.1, "{}", s.cwnd - w0);
    }
}
