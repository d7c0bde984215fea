//! TCP Vegas — L. S. Brakmo, L. L. Peterson, "TCP Vegas: End to End
//! Congestion Avoidance on a Global Internet", IEEE JSAC 13(8), 1995, §3.2
//! (congestion avoidance) and §3.3 (modified slow start), as implemented in
//! Linux `net/ipv4/tcp_vegas.c` (the ns-2.35 tcp-linux copy from 2.6.22).
//!
//! Once per RTT (when the ACK passes the `SND.NXT` recorded one RTT
//! earlier), with W the segments sent in that RTT, RTT the smallest sample
//! in it (min-filtering delayed ACKs) and baseRTT the smallest ever:
//! `Expected = W/baseRTT`, `Actual = W/RTT`, `diff = (Expected −
//! Actual)·baseRTT = W(1 − baseRTT/RTT)` — the segments this flow keeps
//! queued.
//! - Congestion avoidance: `diff < α` → cwnd + 1; `diff > β` → cwnd − 1;
//!   else unchanged (Linux moves cwnd one segment towards the RTT-old
//!   cwnd ± 1).
//! - Slow start (`cwnd ≤ ssthresh`): +1 per ACK (every RTT, Linux's change
//!   from the paper's every other RTT); once `diff > γ`, leave slow start:
//!   `ssthresh = 2`, `cwnd = min(cwnd, ⌊W·baseRTT/RTT⌋ + 1)`.
//! - With 2 or fewer RTT samples in the RTT, one Reno step instead.
//! - Loss: Reno's `ssthresh = max(⌊cwnd/2⌋, 2)` (Linux `tcp_reno_ssthresh`;
//!   the paper's own loss changes are not modelled); `cwnd ≥ 2` always. A
//!   timeout during fast recovery halves the un-inflated window
//!   `min(cwnd, ssthresh)` (see [`super::reduction_view`]).
//!
//! Parameters (defaults, packets): `alpha` α = 2, `beta` β = 4, `gamma`
//! γ = 1 (Linux: 2, 4, 1; Brakmo & Peterson's experiments used α = 1,
//! β = 3).
//!
//! ssthresh quantity: `cwnd` (Linux `tcp_vegas` falls back to
//! `tcp_reno_ssthresh`, `snd_cwnd/2`), un-inflated: NewReno's recovery
//! inflation is removed by `reduction_view`; SACK recovery (PRR) never
//! inflates `cwnd`.

use super::{reno_grow, CcState, LossEpisode, CongestionControl};
use crate::engine::Time;
use serde::{Deserialize, Serialize};

/// `cc = { kind = "vegas", ... }`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct VegasConfig {
    /// Lower bound of queued packets. Default 2.
    pub alpha: f64,
    /// Upper bound of queued packets. Default 4.
    pub beta: f64,
    /// Slow-start exit threshold, packets. Default 1.
    pub gamma: f64,
}

impl Default for VegasConfig {
    fn default() -> Self {
        VegasConfig {
            alpha: 2.0,
            beta: 4.0,
            gamma: 1.0,
        }
    }
}

impl VegasConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        if !(self.alpha >= 0.0 && self.alpha.is_finite()) {
            return Err(("alpha".into(), "must be a non-negative number".into()));
        }
        if !(self.beta >= self.alpha && self.beta.is_finite()) {
            return Err(("beta".into(), "must be at least alpha".into()));
        }
        if !(self.gamma >= 0.0 && self.gamma.is_finite()) {
            return Err(("gamma".into(), "must be a non-negative number".into()));
        }
        Ok(())
    }
}

pub struct Vegas {
    p: VegasConfig,
    started: bool,
    beg_snd_nxt: u32,
    beg_snd_una: u32,
    beg_snd_cwnd: f64,
    cnt_rtt: u32,
    min_rtt: Option<Time>,
    base_rtt: Option<Time>,
    /// Inside a loss episode (see `reduction_view`).
    episode: LossEpisode,
    /// [`CongestionControl::count_segments`].
    count_segments: bool,
}

impl Vegas {
    pub fn new(p: &VegasConfig) -> Self {
        Vegas {
            p: p.clone(),
            started: false,
            beg_snd_nxt: 0,
            beg_snd_una: 0,
            beg_snd_cwnd: 0.0,
            cnt_rtt: 0,
            min_rtt: None,
            base_rtt: None,
            episode: LossEpisode::default(),
            count_segments: false,
        }
    }

    /// baseRTT, the smallest RTT sample.
    pub fn base_rtt(&self) -> Option<Time> {
        self.base_rtt
    }

    fn enable(&mut self, s: &CcState) {
        self.beg_snd_nxt = s.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = None;
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn on_rtt(&mut self, _s: &CcState, rtt: Time, _acked: u32) {
        let rtt = rtt.max(1);
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.cnt_rtt += 1;
    }

    fn on_ack(&mut self, s: &mut CcState, acked: u32) {
        self.episode.end();
        if !self.started {
            self.started = true;
            self.enable(s);
            self.beg_snd_cwnd = s.cwnd;
        }
        if s.snd_una > self.beg_snd_nxt {
            let old_wnd = (self.beg_snd_nxt - self.beg_snd_una) as f64;
            let old_snd_cwnd = self.beg_snd_cwnd;
            self.beg_snd_una = self.beg_snd_nxt;
            self.beg_snd_nxt = s.snd_nxt;
            self.beg_snd_cwnd = s.cwnd;
            match (self.cnt_rtt > 2, self.min_rtt, self.base_rtt) {
                (true, Some(rtt), Some(base)) => {
                    let target = old_wnd * base as f64 / rtt as f64;
                    let diff = old_wnd - target;
                    if s.cwnd <= s.ssthresh {
                        if diff > self.p.gamma {
                            s.ssthresh = 2.0;
                            s.cwnd = s.cwnd.min(target.floor() + 1.0);
                        }
                        s.cwnd += 1.0;
                    } else {
                        let next = if diff > self.p.beta {
                            old_snd_cwnd - 1.0
                        } else if diff < self.p.alpha {
                            old_snd_cwnd + 1.0
                        } else {
                            old_snd_cwnd
                        };
                        if next > s.cwnd {
                            s.cwnd += 1.0;
                        } else if next < s.cwnd {
                            s.cwnd -= 1.0;
                        }
                    }
                    s.cwnd = s.cwnd.max(2.0);
                }
                _ => reno_grow(s, acked, self.count_segments),
            }
            self.cnt_rtt = 0;
            self.min_rtt = None;
        } else if s.cwnd <= s.ssthresh {
            s.cwnd += 1.0;
        }
    }

    fn count_segments(&mut self, on: bool) {
        self.count_segments = on;
    }

    fn ssthresh(&mut self, s: &CcState) -> f64 {
        let s = self.episode.reduce_from(s);
        (s.cwnd / 2.0).floor().max(2.0)
    }

    fn on_recovery_exit(&mut self, s: &mut CcState) {
        self.episode.end();
        self.enable(s);
    }

    fn on_timeout(&mut self, s: &CcState) {
        self.enable(s);
    }
}

impl super::registry::Registered for VegasConfig {
    const KIND: &'static str = "vegas";
    const ABOUT: &'static str = "TCP Vegas (Brakmo & Peterson 1995; Linux tcp_vegas.c)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("alpha", "packets", "≥ 0", "-1.0", "grow while fewer than alpha packets are queued"),
        crate::registry::param!("beta", "packets", "≥ alpha", "-1.0", "shrink while more than beta packets are queued"),
        crate::registry::param!("gamma", "packets", "≥ 0", "-1.0", "leave slow start above gamma queued packets"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        VegasConfig::validate(self)
    }
}

impl super::registry::CcAlgorithm for VegasConfig {
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Vegas::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::secs;

    /// A fluid path: capacity `mu` packets/s, base RTT `d`; one RTT round.
    fn round(cc: &mut Vegas, s: &mut CcState, mu: f64, d: f64) {
        let w = s.cwnd.floor().max(1.0);
        let q = (w - mu * d).max(0.0);
        let rtt = secs(d + q / mu);
        let n = w as u32;
        let start = s.snd_una;
        s.snd_nxt = start + n;
        for i in 0..n {
            s.snd_una = start + i + 1;
            s.now += rtt / n as u64;
            cc.on_rtt(s, rtt, 1);
            cc.on_ack(s, 1);
        }
    }

    #[test]
    fn converges_to_alpha_beta_queue() {
        let mut cc = Vegas::new(&VegasConfig::default());
        let mut s = CcState::with_window(2.0, 1e9, 1000);
        let (mu, d) = (1000.0, 0.1); // BDP 100 packets
        for _ in 0..400 {
            round(&mut cc, &mut s, mu, d);
        }
        let q = s.cwnd.floor() - mu * d;
        assert!((2.0..=4.0 + 1.0).contains(&q), "queue {q}, cwnd {}", s.cwnd);
        assert!(s.ssthresh == 2.0, "left slow start");
    }

    #[test]
    fn loss_halves() {
        let mut cc = Vegas::new(&VegasConfig::default());
        let s = CcState::with_window(41.0, 1e9, 1000);
        assert_eq!(cc.ssthresh(&s), 20.0);
    }
}
