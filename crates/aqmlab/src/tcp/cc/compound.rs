//! Compound TCP, two pinned variants.
//!
//! **`variant = "paper"` (default)** — K. Tan, J. Song, Q. Zhang,
//! M. Sridharan, "A Compound TCP Approach for High-speed and Long Distance
//! Networks", IEEE INFOCOM 2006 (MSR-TR-2005-86), §3:
//! - the send window is `win = cwnd + dwnd`; `st.cwnd` holds `win`, the
//!   loss-based `cwnd` and the delay-based `dwnd` are kept here;
//! - `cwnd` is Reno's: +1 per ACK in slow start (while `win < ssthresh`; dwnd
//!   stays frozen, the delay component acts in congestion avoidance only),
//!   `+1/win` per ACK in congestion avoidance;
//! - once per RTT (when the ACK passes the `SND.NXT` recorded one RTT
//!   earlier), Vegas' estimate of the packets queued by this flow:
//!   `diff = W·(1 − baseRTT/RTT)`, W the segments sent in that RTT, RTT the
//!   smallest sample in it, baseRTT the smallest ever (eq. (3));
//! - eq. (6): `dwnd += (α·win^k − 1)⁺` if `diff < γ`, else
//!   `dwnd = (dwnd − ζ·diff)⁺`;
//! - on loss (3rd duplicate ACK or ECN): `cwnd ← cwnd/2`,
//!   `dwnd ← (win·(1 − β) − cwnd/2)⁺`, so `ssthresh = win_new = cwnd/2 +
//!   dwnd`; on a timeout `win = 1`, `dwnd = 0`. A timeout during fast
//!   recovery reduces from the un-inflated window `min(win, ssthresh)` (see
//!   [`super::reduction_view`]; both variants).
//!
//! Constants (defaults): `alpha` α = 1/8, `beta` β = 1/2, `k` = 3/4,
//! `gamma` γ = 30 packets, `zeta` ζ = 1.
//!
//! **`variant = "ns2"`** — ns-2.35 tcp-linux `tcp/linux/src/tcp_compound.c`
//! (Castellani & Hemminger's Linux module, 2.6.18–2.6.22), emulated in its
//! integer arithmetic:
//! - **loss response is `tcp_reno_ssthresh`**: the total window is halved
//!   (`ssthresh = max(win/2, 2)`); dwnd is not cut by the paper's rule, only
//!   clamped at the next ACK: if `cwnd + dwnd > win` then `cwnd = win − dwnd`,
//!   or `cwnd = win, dwnd = 0` if either part exceeds `win` — after a halving
//!   that is every case but `cwnd = dwnd`, so in effect dwnd is reset and the
//!   loss-based part takes the halved window. (If dwnd does survive, `cwnd`
//!   slow-starts, +1 per ACK, while `cwnd ≤ ssthresh`, as in the module.)
//! - `cwnd` +1 every `win` ACKs in congestion avoidance (`snd_cwnd_cnt`);
//! - the once-per-RTT step runs only when more than 2 RTT samples arrived in
//!   the RTT (`cntRTT > 2`), in microseconds + 1 (`vrtt`), and compares in
//!   fixed point with one fractional bit (`V_PARAM_SHIFT 1`): `diff2 =
//!   2W − ⌊2W·baseRTT/RTT⌋`, grow if `diff2 < 2γ` by
//!   `⌊⌊W^k⌋·α⌋ − 1` (`qroot(W³) >> 3`, k = 3/4, α = 1/8; nothing if that is
//!   ≤ 0), else `dwnd = ⌊(2·dwnd − ζ·diff2)/2⌋⁺` (`TCP_COMPOUND_BETA` acts as
//!   ζ = 1); the update also runs in slow start; `beta` is unused;
//! - RTT samples on every ACK, i.e. the ns-2 agent with `timestamps_ true`
//!   (without timestamps ns-2 feeds one sample per RTT and `cntRTT > 2`
//!   never holds, so dwnd stays 0).
//!
//! ssthresh quantity: the send window `cwnd + dwnd` (the paper's `win`,
//! ns-2's `cwnd_`), un-inflated: NewReno's recovery inflation is removed by
//! `reduction_view`; SACK recovery (PRR) never inflates it.

use super::{CcState, LossEpisode, CongestionControl};
use crate::engine::Time;
use serde::{Deserialize, Serialize};

/// Which Compound TCP.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CompoundVariant {
    /// Tan et al. 2006 as published.
    #[default]
    Paper,
    /// ns-2.35 tcp-linux `tcp_compound.c`.
    Ns2,
}

/// `cc = { kind = "compound", ... }`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct CompoundConfig {
    /// `"paper"` (default) or `"ns2"`.
    pub variant: CompoundVariant,
    /// α of the dwnd increase α·win^k. Default 1/8.
    pub alpha: f64,
    /// β of the loss response (paper only). Default 1/2.
    pub beta: f64,
    /// Exponent k of the dwnd increase. Default 3/4.
    pub k: f64,
    /// γ, packets: queue estimate above which dwnd shrinks. Default 30.
    pub gamma: f64,
    /// ζ: dwnd shrinks by ζ·diff. Default 1.
    pub zeta: f64,
}

impl Default for CompoundConfig {
    fn default() -> Self {
        CompoundConfig {
            variant: CompoundVariant::Paper,
            alpha: 0.125,
            beta: 0.5,
            k: 0.75,
            gamma: 30.0,
            zeta: 1.0,
        }
    }
}

impl CompoundConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        let pos = |k: &str, v: f64| {
            if v > 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err((k.to_string(), format!("must be positive, got {v}")))
            }
        };
        pos("alpha", self.alpha)?;
        pos("k", self.k)?;
        pos("gamma", self.gamma)?;
        pos("zeta", self.zeta)?;
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err((
                "beta".into(),
                format!("must be in (0, 1), got {}", self.beta),
            ));
        }
        if self.k >= 1.0 {
            return Err(("k".into(), "must be below 1".into()));
        }
        Ok(())
    }
}

pub struct Compound {
    p: CompoundConfig,
    /// Loss-based window, segments.
    cwnd: f64,
    /// Delay-based window, segments.
    dwnd: f64,
    /// ns2: ACK counter of the loss-based increase.
    snd_cwnd_cnt: u32,
    started: bool,
    beg_snd_nxt: u32,
    beg_snd_una: u32,
    cnt_rtt: u32,
    min_rtt: Option<Time>,
    base_rtt: Option<Time>,
    /// Inside a loss episode (see `reduction_view`).
    episode: LossEpisode,
}

impl Compound {
    pub fn new(p: &CompoundConfig) -> Self {
        Compound {
            p: p.clone(),
            cwnd: 0.0,
            dwnd: 0.0,
            snd_cwnd_cnt: 0,
            started: false,
            beg_snd_nxt: 0,
            beg_snd_una: 0,
            cnt_rtt: 0,
            min_rtt: None,
            base_rtt: None,
            episode: LossEpisode::default(),
        }
    }

    /// The delay-based window dwnd, segments.
    pub fn dwnd(&self) -> f64 {
        self.dwnd
    }

    /// The loss-based window cwnd, segments.
    pub fn loss_window(&self) -> f64 {
        self.cwnd
    }

    /// Bring the components in line with a total window the sender changed
    /// (recovery exit, ECN, timeout, start): the ns-2 module's rule.
    fn reconcile(&mut self, total: f64) {
        let sum = self.cwnd + self.dwnd;
        if sum > total + 1e-9 {
            if self.cwnd > total || self.dwnd > total {
                self.cwnd = total;
                self.dwnd = 0.0;
            } else {
                self.cwnd = total - self.dwnd;
            }
        } else if total > sum + 1e-9 {
            self.cwnd = total - self.dwnd;
        }
    }

    /// Start a new Vegas round (`cvegas_enable`).
    fn vegas_enable(&mut self, s: &CcState) {
        self.beg_snd_nxt = s.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = None;
    }

    fn paper_ack(&mut self, s: &mut CcState) {
        let win = s.cwnd;
        let in_ca = win >= s.ssthresh;
        if in_ca {
            self.cwnd += 1.0 / win;
        } else {
            self.cwnd += 1.0;
        }
        if s.snd_una > self.beg_snd_nxt {
            let old_wnd = (self.beg_snd_nxt - self.beg_snd_una) as f64;
            self.beg_snd_una = self.beg_snd_nxt;
            self.beg_snd_nxt = s.snd_nxt;
            if let (true, Some(rtt), Some(base), true) =
                (in_ca, self.min_rtt, self.base_rtt, self.cnt_rtt > 0)
            {
                let diff = old_wnd * (1.0 - base as f64 / rtt as f64);
                if diff < self.p.gamma {
                    self.dwnd += (self.p.alpha * win.powf(self.p.k) - 1.0).max(0.0);
                } else {
                    self.dwnd = (self.dwnd - self.p.zeta * diff).max(0.0);
                }
            }
            self.cnt_rtt = 0;
            self.min_rtt = None;
        }
        s.cwnd = self.cwnd + self.dwnd;
    }

    fn ns2_ack(&mut self, s: &mut CcState) {
        let snd_cwnd = s.cwnd.floor().max(1.0) as u32;
        let mut inc = false;
        if self.cwnd <= s.ssthresh {
            inc = true;
        } else if self.snd_cwnd_cnt < snd_cwnd {
            self.snd_cwnd_cnt += 1;
        }
        if self.snd_cwnd_cnt >= snd_cwnd {
            inc = true;
            self.snd_cwnd_cnt = 0;
        }
        if inc {
            self.cwnd += 1.0;
        }
        if s.snd_una > self.beg_snd_nxt {
            let old_wnd = (self.beg_snd_nxt - self.beg_snd_una) as u64;
            self.beg_snd_una = self.beg_snd_nxt;
            self.beg_snd_nxt = s.snd_nxt;
            if self.cnt_rtt > 2 {
                if let (Some(rtt), Some(base)) = (self.min_rtt, self.base_rtt) {
                    let us = |t: Time| t / 1000 + 1;
                    let (rtt, brtt) = (us(rtt), us(base));
                    let target = ((old_wnd * brtt) << 1) / rtt;
                    let diff = (old_wnd << 1).saturating_sub(target);
                    let dwnd = self.dwnd as u64;
                    let gamma2 = (self.p.gamma * 2.0).floor() as u64;
                    self.dwnd = if diff < gamma2 {
                        let root = ((old_wnd as f64).powf(self.p.k) + 1e-9).floor();
                        let x = (root * self.p.alpha + 1e-9).floor();
                        dwnd as f64 + if x > 1.0 { x - 1.0 } else { 0.0 }
                    } else {
                        let cut = self.p.zeta * diff as f64;
                        if ((dwnd << 1) as f64) < cut {
                            0.0
                        } else {
                            (((dwnd << 1) as f64 - cut) / 2.0).floor()
                        }
                    };
                }
            }
            self.cnt_rtt = 0;
            self.min_rtt = None;
        }
        s.cwnd = self.cwnd + self.dwnd;
    }
}

impl CongestionControl for Compound {
    fn name(&self) -> &'static str {
        "compound"
    }

    fn on_rtt(&mut self, _s: &CcState, rtt: Time, _acked: u32) {
        let rtt = rtt.max(1);
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.cnt_rtt += 1;
    }

    fn on_ack(&mut self, s: &mut CcState, _acked: u32) {
        self.episode.end();
        if !self.started {
            // tcp_compound_init: the first round ends at today's SND.NXT.
            self.started = true;
            self.vegas_enable(s);
        }
        match self.p.variant {
            CompoundVariant::Paper => {
                self.reconcile(s.cwnd);
                self.paper_ack(s);
            }
            CompoundVariant::Ns2 => {
                self.reconcile(s.cwnd.floor().max(1.0));
                self.ns2_ack(s);
            }
        }
    }

    fn ssthresh(&mut self, s: &CcState) -> f64 {
        let view = self.episode.reduce_from(s);
        let s = &view;
        match self.p.variant {
            CompoundVariant::Paper => {
                self.reconcile(s.cwnd);
                let win = s.cwnd;
                let c = self.cwnd / 2.0;
                let d = (win * (1.0 - self.p.beta) - c).max(0.0);
                self.cwnd = c;
                self.dwnd = d;
                (c + d).max(2.0)
            }
            CompoundVariant::Ns2 => {
                self.snd_cwnd_cnt = 0;
                ((s.cwnd.floor() as u64 >> 1).max(2)) as f64
            }
        }
    }

    fn on_recovery_exit(&mut self, s: &mut CcState) {
        self.episode.end();
        self.vegas_enable(s);
    }

    fn on_timeout(&mut self, s: &CcState) {
        if self.p.variant == CompoundVariant::Paper {
            self.cwnd = 1.0;
            self.dwnd = 0.0;
        }
        self.snd_cwnd_cnt = 0;
        self.vegas_enable(s);
    }
}

impl super::registry::Registered for CompoundConfig {
    const KIND: &'static str = "compound";
    const ABOUT: &'static str = "Compound TCP (Tan, Song, Zhang, Sridharan 2006; variant \"ns2\": ns-2.35 tcp_compound.c)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("variant", "", "\"paper\" or \"ns2\"", "\"bsd\"", "which Compound"),
        crate::registry::param!("alpha", "", "> 0", "0.0", "delay-window increase factor α"),
        crate::registry::param!("beta", "factor", "(0, 1)", "1.5", "delay-window decrease β"),
        crate::registry::param!("k", "exponent", "(0, 1)", "1.5", "increase exponent k"),
        crate::registry::param!("gamma", "packets", "> 0", "0.0", "queue threshold γ"),
        crate::registry::param!("zeta", "", "> 0", "0.0", "delay-window decrease ζ"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        CompoundConfig::validate(self)
    }
}

impl super::registry::CcAlgorithm for CompoundConfig {
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Compound::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::secs;

    /// One RTT round of `win` single-segment ACKs with the given RTT.
    fn round(cc: &mut Compound, s: &mut CcState, rtt: Time) {
        let n = s.cwnd.floor().max(1.0) as u32;
        let start = s.snd_una;
        s.snd_nxt = start + n;
        for i in 0..n {
            s.snd_una = start + i + 1;
            s.now += rtt / n as u64;
            cc.on_rtt(s, rtt, 1);
            cc.on_ack(s, 1);
        }
    }

    fn ca_state(win: f64) -> CcState {
        let mut s = CcState::with_window(win, win - 1.0, 1000);
        s.snd_nxt = win as u32;
        s
    }

    #[test]
    fn paper_dwnd_grows_by_alpha_win_k_minus_one_without_queue() {
        let mut cc = Compound::new(&CompoundConfig::default());
        let mut s = ca_state(100.0);
        let base = secs(0.1);
        round(&mut cc, &mut s, base); // first round: baseline
        let w0 = s.cwnd;
        let d0 = cc.dwnd();
        round(&mut cc, &mut s, base);
        let dd = cc.dwnd() - d0;
        let expect = 0.125 * w0.powf(0.75) - 1.0;
        assert!(
            (dd - expect).abs() < 0.05 * expect + 0.1,
            "dwnd +{dd:.3}, expected α·win^k − 1 = {expect:.3} at win {w0:.1}"
        );
        // super-linear: the per-RTT increase grows with the window
        let mut incs = Vec::new();
        for _ in 0..10 {
            let w = s.cwnd;
            round(&mut cc, &mut s, base);
            incs.push(s.cwnd - w);
        }
        assert!(incs.windows(2).all(|p| p[1] > p[0]), "{incs:?}");
        assert!(incs[0] > 1.5, "{incs:?}");
    }

    #[test]
    fn paper_dwnd_shrinks_by_diff_above_gamma() {
        let mut cc = Compound::new(&CompoundConfig::default());
        let mut s = ca_state(200.0);
        round(&mut cc, &mut s, secs(0.1));
        for _ in 0..3 {
            round(&mut cc, &mut s, secs(0.1));
        }
        let d0 = cc.dwnd();
        assert!(d0 > 10.0, "dwnd {d0}");
        // RTT 0.125 s against base 0.1: diff = W·0.2 ≥ γ for W ≥ 150
        let w = s.cwnd.floor();
        round(&mut cc, &mut s, secs(0.125)); // samples of this round
        round(&mut cc, &mut s, secs(0.125)); // decision on the previous one
        let diff = w * 0.2;
        let d1 = cc.dwnd();
        assert!(d1 < d0, "dwnd {d0} → {d1}");
        assert!(diff > 30.0);
    }

    #[test]
    fn paper_loss_rule() {
        let mut cc = Compound::new(&CompoundConfig::default());
        let mut s = ca_state(100.0);
        cc.reconcile(100.0);
        cc.cwnd = 60.0;
        cc.dwnd = 40.0;
        let th = cc.ssthresh(&s);
        // cwnd 30, dwnd = 100·0.5 − 30 = 20, win 50
        assert_eq!((cc.loss_window(), cc.dwnd(), th), (30.0, 20.0, 50.0));
        // dwnd floor at 0 when the loss-based part dominates
        cc.on_recovery_exit(&mut s);
        s.cwnd = 100.0;
        cc.cwnd = 100.0;
        cc.dwnd = 0.0;
        assert_eq!(cc.ssthresh(&s), 50.0);
        assert_eq!(cc.dwnd(), 0.0);
    }

    #[test]
    fn ns2_halves_total_and_clamps_dwnd() {
        let cfg = CompoundConfig {
            variant: CompoundVariant::Ns2,
            ..Default::default()
        };
        let mut cc = Compound::new(&cfg);
        let mut s = ca_state(100.0);
        cc.cwnd = 70.0;
        cc.dwnd = 30.0;
        assert_eq!(cc.ssthresh(&s), 50.0);
        // dwnd untouched by ssthresh; clamped at the next ACK: the loss
        // part (70) exceeds the new window (50), so dwnd = 0, cwnd = 50,
        // and since cwnd ≤ ssthresh the module slow-starts it (+1)
        assert_eq!(cc.dwnd(), 30.0);
        s.cwnd = 50.0;
        s.ssthresh = 50.0;
        cc.on_ack(&mut s, 1);
        assert_eq!((cc.loss_window(), cc.dwnd()), (51.0, 0.0));
        // dwnd survives only if neither part exceeds the halved window:
        // cwnd = dwnd = 50 → cwnd = 100/2 − 50 = 0, then slow start (+1)
        cc.cwnd = 50.0;
        cc.dwnd = 50.0;
        s.cwnd = 100.0;
        s.ssthresh = cc.ssthresh(&s);
        s.cwnd = s.ssthresh;
        cc.on_ack(&mut s, 1);
        assert_eq!((cc.loss_window(), cc.dwnd(), s.cwnd), (1.0, 50.0, 51.0));
    }

    #[test]
    fn ns2_fixed_point_growth_and_cnt_rtt_guard() {
        let cfg = CompoundConfig {
            variant: CompoundVariant::Ns2,
            ..Default::default()
        };
        let mut cc = Compound::new(&cfg);
        let mut s = ca_state(256.0);
        round(&mut cc, &mut s, secs(0.1));
        let d0 = cc.dwnd();
        round(&mut cc, &mut s, secs(0.1));
        // old_wnd = 256 (first round): qroot(256³) = 64, >>3 = 8, +7
        assert_eq!(cc.dwnd() - d0, 7.0);
        // A round with only 2 ACKs (2 RTT samples): its first ACK closes the
        // previous round, the next round's first ACK must leave dwnd alone.
        let n = s.cwnd.floor() as u32;
        let start = s.snd_una;
        s.snd_nxt = start + n;
        for seg in [n / 2, n] {
            s.snd_una = start + seg;
            s.now += secs(0.05);
            cc.on_rtt(&s, secs(0.1), 1);
            cc.on_ack(&mut s, 1);
        }
        let d1 = cc.dwnd();
        round(&mut cc, &mut s, secs(0.1));
        assert_eq!(cc.dwnd(), d1, "cntRTT ≤ 2 must not update dwnd");
    }
}
