//! TCP Prague, the L4S congestion control.
//!
//! Source: L4STeam `linux`, `net/ipv4/tcp_prague.c` (module version 0.6) at
//! commit 02573a215581c91de68864be2c1b9af8c7098a08, with L4STeam
//! `udp_prague`'s `prague_cc` as the transport-free reference for the same
//! rules. Fixed-point arithmetic as the code's (α and the window in units
//! of 2⁻²⁰, RTTs in 128 µs units), so rounding follows it.
//!
//! - ECN: data carries ECT(1) (RFC 9331 §8); AccECN feedback is required
//!   (`TCP_CONG_NEEDS_ACCECN | TCP_CONG_NO_FALLBACK_RFC3168`). When the
//!   connection does not settle in AccECN mode (`tcp.ecn = false`,
//!   `tcp.ecn_feedback = "rfc3168"`, or a peer without AccECN), Prague
//!   turns ECN off and runs `prague_reno` (`prague_init` → `prague_release`):
//!   Reno growth per segment acknowledged (`tcp_reno_cong_avoid`),
//!   halving on loss (`tcp_reno_ssthresh`), Not-ECT data, no pacing.
//! - α (`prague_update_alpha`): once per round (`snd_una` past the
//!   round's `snd_nxt`), and once RTT-independent only when the target RTT
//!   has also passed since the last update, `α ← α − α/16 + F/16` with F the
//!   fraction of segments delivered CE-marked in the round (AccECN's
//!   counts); the state keeps 16·α at 2⁻²⁰ resolution so remainders carry
//!   over. α starts at 1 and is not updated before the first CE mark
//!   (`saw_ce`).
//! - Window (`prague_update_cwnd`, on every ACK): a fractional window
//!   `frac_cwnd`; each ACK adds `ai_ack_increase · (acked − CE-marked) /
//!   cwnd`, so the total increase per RTT follows (1 − p) — the
//!   "unsaturated marking" rule — and nothing during loss recovery or when
//!   not cwnd-limited; the integer window Linux sends with steps by one
//!   segment per ACK toward ⌈frac_cwnd⌉, and each step down sets ssthresh
//!   (leaving slow start). On the first CE-reporting ACK of a window
//!   (`prague_enter_cwr`, the sender's once-per-window rule):
//!   `frac_cwnd −= frac_cwnd·α/2`, skipped while RTT-independent if less
//!   than the target RTT passed since the last reduction. Loss
//!   (`prague_enter_loss`: fast retransmit or timeout) halves `frac_cwnd`
//!   and stops growth until recovery ends.
//! - RTT independence (`RTT_CONTROL_RATE`, the default
//!   `prague_rtt_scaling`): after `rtt_transition` = 500 rounds out of slow
//!   start, a flow with srtt below `rtt_target` = 25 ms grows by
//!   `(srtt/target)²` segment per RTT instead of 1, so flows of any RTT up
//!   to the target get about the same rate. The code compares srtt in
//!   128 µs units with `MAX_SCALED_RTT` in µs, so its 100 ms cap on the
//!   scaling is in effect 12.8 s; followed as coded.
//! - Pacing (`prague_update_pacing_rate`): `frac_cwnd / srtt`, × 2 while
//!   cwnd < ssthresh/2, at the MTU (the sender spaces each segment by its
//!   wire size); unpaced before the first RTT sample. TSO burst sizing is
//!   not modelled (one segment per send).
//! - Slow start: `tcp_slow_start` adds the segments acknowledged (less
//!   CE-marked ones) to the integer window. The code leaves `frac_cwnd`
//!   where it was during slow start; here `frac_cwnd` follows the integer
//!   window there, since otherwise the first adjustment after slow start
//!   would walk the window back to its initial value one segment per ACK.
//! - Not modelled: classic ECN detection (`prague_ecn_fallback`, off by
//!   default), the `scalable` and `additive` RTT heuristics, undo.
//!
//! Parameters: `rtt_target` (25 ms, `prague_rtt_target`), `rtt_transition`
//! (500 rounds, `prague_rtt_transition`), `rtt_scaling` ("rate" or "none").

use super::registry::EcnEcho;
use super::{reno_increase_segments, CcState, CongestionControl, EcnMode, RateSample};
use crate::engine::Time;
use crate::net::packet::{flags, Ecn, Packet};
use crate::units::Dur;
use serde::{Deserialize, Serialize};

const ALPHA_BITS: u32 = 20;
const MAX_ALPHA: u64 = 1 << ALPHA_BITS;
const CWND_UNIT: u32 = 20;
const ONE_CWND: u64 = 1 << CWND_UNIT;
/// EWMA gain g = 1/2⁴.
const SHIFT_G: u32 = 4;
const MIN_CWND: u32 = 2;
/// `MAX_SCALED_RTT` (100 ms in µs, compared with RTT units as coded).
const MAX_SCALED_RTT: u64 = 100_000;
/// `RTT_UNIT`: RTTs in units of 2⁷ µs.
const RTT_UNIT: u32 = 7;

/// `rtt_scaling`: which RTT-independence heuristic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RttScaling {
    /// `RTT_CONTROL_NONE`.
    None,
    /// `RTT_CONTROL_RATE` (the module's default).
    #[default]
    Rate,
}

/// `cc = { kind = "prague", rtt_target = "25ms" }`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct PragueConfig {
    /// Target RTT of the RTT-independence scaling.
    pub rtt_target: Dur,
    /// Rounds after slow start before the scaling applies.
    pub rtt_transition: u32,
    pub rtt_scaling: RttScaling,
}

impl Default for PragueConfig {
    fn default() -> Self {
        PragueConfig {
            rtt_target: Dur(25_000_000),
            rtt_transition: 500,
            rtt_scaling: RttScaling::Rate,
        }
    }
}

impl PragueConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        if self.rtt_target.0 < 128_000 || self.rtt_target.0 > 10_000_000_000 {
            return Err((
                "rtt_target".into(),
                format!(
                    "must be 128us..=10s (the code's 128 µs RTT unit), got {} ns",
                    self.rtt_target.0
                ),
            ));
        }
        Ok(())
    }
}

pub struct Prague {
    /// Target RTT in 128 µs units (`ca->rtt_target`).
    rtt_target: u64,
    rtt_transition: u32,
    rtt_indep: bool,
    /// 16·α at 2⁻²⁰ resolution (`upscaled_alpha`).
    upscaled_alpha: u64,
    /// Per-ACK increase per segment at cwnd 1, 2⁻²⁰ units.
    ai_ack_increase: u64,
    /// The fractional window, 2⁻²⁰ segments.
    frac_cwnd: u64,
    /// The window Linux sends with (`tp->snd_cwnd`) and its ssthresh.
    snd_cwnd: u32,
    ssthresh: u32,
    cwr_stamp: Option<Time>,
    alpha_stamp: Time,
    delivered: u64,
    delivered_ce: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
    next_seq: u32,
    round: u32,
    saw_ce: bool,
    in_loss: bool,
    /// Recovery from a loss ends when `snd_una` reaches this.
    loss_end: u32,
    /// A loss reduction happened in this event (ssthresh then timeout).
    loss_now: bool,
    /// CE-marked segments reported since the last `cong_control`.
    ce_pending: u32,
    /// The ACK being processed reports CE.
    ece_now: bool,
    /// Not in AccECN mode: `prague_reno`.
    reno: bool,
    reno_cwnd: f64,
    reduced: u64,
}

impl Prague {
    pub fn new(c: &PragueConfig) -> Self {
        Prague {
            rtt_target: (c.rtt_target.0 / 1000) >> RTT_UNIT,
            rtt_transition: c.rtt_transition,
            rtt_indep: c.rtt_scaling == RttScaling::Rate,
            upscaled_alpha: MAX_ALPHA << SHIFT_G,
            ai_ack_increase: ONE_CWND,
            frac_cwnd: 0,
            snd_cwnd: 0,
            ssthresh: u32::MAX,
            cwr_stamp: None,
            alpha_stamp: 0,
            delivered: 0,
            delivered_ce: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            next_seq: 0,
            round: 0,
            saw_ce: false,
            in_loss: false,
            loss_end: 0,
            loss_now: false,
            ce_pending: 0,
            ece_now: false,
            reno: false,
            reno_cwnd: 0.0,
            reduced: 0,
        }
    }

    /// α, as a fraction.
    pub fn alpha(&self) -> f64 {
        (self.upscaled_alpha >> SHIFT_G) as f64 / MAX_ALPHA as f64
    }

    /// The fractional window, segments.
    pub fn frac_cwnd(&self) -> f64 {
        self.frac_cwnd as f64 / ONE_CWND as f64
    }

    /// The flow runs `prague_reno` (no AccECN).
    pub fn is_reno(&self) -> bool {
        self.reno
    }

    fn init_window(&mut self, s: &CcState) {
        if self.snd_cwnd == 0 {
            self.snd_cwnd = (s.cwnd.floor() as u32).max(1);
            self.frac_cwnd = (self.snd_cwnd as u64) << CWND_UNIT;
            self.ssthresh = if s.ssthresh >= u32::MAX as f64 {
                u32::MAX
            } else {
                s.ssthresh as u32
            };
            self.reno_cwnd = s.cwnd;
            self.next_seq = s.snd_nxt;
        }
    }

    fn in_slow_start(&self) -> bool {
        self.snd_cwnd < self.ssthresh
    }

    fn is_rtt_indep(&self) -> bool {
        self.rtt_indep && !self.in_slow_start() && self.round >= self.rtt_transition
    }

    /// srtt in 128 µs units (`US2RTT(srtt_us >> 3)`).
    fn srtt_units(s: &CcState) -> u64 {
        s.srtt.map_or(0, |t| (t / 1000) >> RTT_UNIT)
    }

    fn cwnd_from_frac(&self) -> u32 {
        (((self.frac_cwnd + ONE_CWND - 1) >> CWND_UNIT) as u32).max(1)
    }

    /// `prague_ai_ack_increase` with `prague_rate_scaled_ai_ack_increase`.
    fn update_ai_ack_increase(&mut self, s: &CcState) {
        let rtt = Self::srtt_units(s);
        self.ai_ack_increase = if !self.rtt_indep
            || self.round < self.rtt_transition
            || rtt == 0
            || rtt > MAX_SCALED_RTT
            || rtt >= self.rtt_target
        {
            ONE_CWND
        } else {
            let div = self.rtt_target * self.rtt_target;
            (((rtt << CWND_UNIT) * rtt) + div / 2) / div
        };
    }

    /// `prague_new_round`.
    fn new_round(&mut self, s: &CcState) {
        self.next_seq = s.snd_nxt;
        self.old_delivered = self.delivered;
        self.old_delivered_ce = self.delivered_ce;
        if !self.in_slow_start() {
            self.round = self.round.wrapping_add(1);
            if self.round == 0 {
                self.round = self.rtt_transition;
            }
        }
        self.update_ai_ack_increase(s);
    }

    /// `prague_update_alpha`: the EWMA over the round's CE fraction.
    fn update_alpha(&mut self, s: &CcState) {
        if self.saw_ce {
            let mut ecn = self.delivered_ce - self.old_delivered_ce;
            if ecn > 0 {
                let acked = (self.delivered - self.old_delivered).max(1);
                ecn = (ecn << ALPHA_BITS) / acked;
            }
            let a = self.upscaled_alpha - (self.upscaled_alpha >> SHIFT_G) + ecn;
            self.alpha_stamp = s.now;
            self.upscaled_alpha = a.min(MAX_ALPHA << SHIFT_G);
        }
        self.new_round(s);
    }

    fn should_update_ewma(&self, s: &CcState) -> bool {
        let elapsed = s.snd_una >= self.next_seq;
        elapsed
            && (!self.is_rtt_indep()
                || s.now.saturating_sub(self.alpha_stamp) >= (self.rtt_target << RTT_UNIT) * 1000)
    }

    /// `prague_enter_cwr`: reduce by α/2, unbiased rounding.
    fn enter_cwr(&mut self, now: Time) {
        if self.is_rtt_indep() {
            if let Some(t) = self.cwr_stamp {
                if (self.rtt_target << RTT_UNIT) * 1000 > now.saturating_sub(t) {
                    return;
                }
            }
        }
        self.cwr_stamp = Some(now);
        let alpha = self.upscaled_alpha >> SHIFT_G;
        let red = ((alpha as u128 * self.frac_cwnd as u128 + MAX_ALPHA as u128) >> (ALPHA_BITS + 1)) as u64;
        self.frac_cwnd -= red.min(self.frac_cwnd);
        self.reduced += 1;
    }

    /// `prague_enter_loss`.
    fn enter_loss(&mut self, s: &CcState) {
        self.frac_cwnd -= self.frac_cwnd >> 1;
        self.in_loss = true;
        self.loss_end = s.snd_nxt;
        self.update_ai_ack_increase(s);
    }

    /// `prague_update_cwnd`.
    fn update_cwnd(&mut self, s: &CcState, rs: &RateSample, ce: u32) {
        let mut acked = rs.acked_sacked as i64;
        if ce > 0 {
            self.saw_ce = true;
            acked -= ce as i64;
        }
        let limited = if self.in_slow_start() {
            self.snd_cwnd < 2 * rs.prior_in_flight.max(1)
        } else {
            rs.prior_in_flight + 1 >= self.snd_cwnd
        };
        if acked > 0 && !self.in_loss && limited {
            let mut acked = acked as u64;
            if self.in_slow_start() {
                let grown = (self.snd_cwnd as u64 + acked).min(self.ssthresh as u64) as u32;
                acked -= (grown - self.snd_cwnd) as u64;
                self.snd_cwnd = grown;
                self.frac_cwnd = self.frac_cwnd.max((grown as u64) << CWND_UNIT);
                if acked == 0 {
                    self.update_ai_ack_increase(s);
                    return;
                }
            }
            let w = self.cwnd_from_frac() as u64;
            let inc = (acked * self.ai_ack_increase + w / 2) / w;
            self.frac_cwnd += inc.max(acked);
        }
        let target = self.cwnd_from_frac();
        if self.snd_cwnd > target && self.snd_cwnd > MIN_CWND {
            self.snd_cwnd -= 1;
            self.ssthresh = self.snd_cwnd;
            self.update_ai_ack_increase(s);
        } else if self.snd_cwnd < target {
            self.snd_cwnd += 1;
            self.update_ai_ack_increase(s);
        }
    }
}

impl CongestionControl for Prague {
    fn name(&self) -> &'static str {
        "prague"
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("alpha", self.alpha()),
            ("frac_cwnd", self.frac_cwnd()),
            ("rounds", self.round as f64),
            ("ai_ack_increase", self.ai_ack_increase as f64 / ONE_CWND as f64),
            ("cwr_reductions", self.reduced as f64),
            ("reno_fallback", self.reno as u8 as f64),
        ]
    }

    fn codepoint(&self) -> Ecn {
        Ecn::Ect1
    }

    fn ecn_mode(&mut self, mode: EcnMode) -> EcnMode {
        if mode == EcnMode::AccEcn {
            self.reno = false;
            mode
        } else {
            self.reno = true;
            EcnMode::Off
        }
    }

    fn rate_based(&self) -> bool {
        true
    }

    fn on_ce_delta(&mut self, delta: u32) {
        self.ce_pending += delta;
    }

    fn on_ack_packet(&mut self, s: &mut CcState, ack: &Packet) {
        self.init_window(s);
        self.ece_now = ack.has(flags::ECE) && !self.reno;
    }

    fn on_ack(&mut self, _s: &mut CcState, _acked: u32) {}

    fn ssthresh(&mut self, s: &CcState) -> f64 {
        self.init_window(s);
        if self.reno {
            // tcp_reno_ssthresh (the window then follows the sender's
            // recovery: no growth in fast recovery, slow start after a
            // timeout, as Linux's Loss state)
            self.reno_cwnd = (s.cwnd / 2.0).floor().max(2.0);
            self.ssthresh = self.reno_cwnd as u32;
            return self.reno_cwnd;
        }
        if std::mem::take(&mut self.ece_now) {
            self.enter_cwr(s.now);
        } else {
            self.enter_loss(s);
            self.loss_now = true;
        }
        // cwnd is Prague's own: it sets it in `cong_control` on this ACK
        self.snd_cwnd as f64
    }

    fn on_timeout(&mut self, s: &CcState) {
        self.init_window(s);
        self.ece_now = false;
        if self.reno {
            self.reno_cwnd = 1.0;
            return;
        }
        // CA_EVENT_LOSS, unless the ssthresh of this timeout did it
        if !std::mem::take(&mut self.loss_now) {
            self.enter_loss(s);
        }
        self.loss_end = s.snd_nxt.max(self.loss_end);
        self.snd_cwnd = 1;
    }

    fn on_recovery_exit(&mut self, s: &mut CcState) {
        if s.snd_una >= self.loss_end {
            self.in_loss = false;
        }
    }

    fn cong_control(&mut self, s: &mut CcState, rs: &RateSample) {
        self.init_window(s);
        self.loss_now = false;
        if self.in_loss && !rs.in_recovery && s.snd_una >= self.loss_end {
            self.in_loss = false; // back to TCP_CA_Open
        }
        if self.reno {
            if !rs.in_recovery && rs.acked_sacked > 0 {
                let mut st = s.clone();
                st.cwnd = self.reno_cwnd;
                st.ssthresh = self.ssthresh as f64;
                reno_increase_segments(&mut st, rs.acked_sacked);
                self.reno_cwnd = st.cwnd;
            }
            s.cwnd = self.reno_cwnd;
            s.ssthresh = self.ssthresh as f64;
            return;
        }
        let ce = std::mem::take(&mut self.ce_pending);
        self.delivered += rs.acked_sacked as u64;
        self.delivered_ce += ce as u64;
        self.update_cwnd(s, rs, ce);
        if self.should_update_ewma(s) {
            self.update_alpha(s);
        }
        s.cwnd = self.snd_cwnd as f64;
        s.ssthresh = self.ssthresh as f64;
    }

    fn pacing_rate(&self, s: &CcState) -> Option<f64> {
        if self.reno {
            return None;
        }
        let srtt = s.srtt.filter(|&t| t > 0)? as f64 / 1e9;
        let mut w = self.frac_cwnd();
        if self.snd_cwnd < self.ssthresh / 2 {
            w *= 2.0;
        }
        Some(w / srtt)
    }
}

impl super::registry::Registered for PragueConfig {
    const KIND: &'static str = "prague";
    const ABOUT: &'static str = "TCP Prague, the L4S congestion control (L4STeam linux tcp_prague.c); ECT(1), needs tcp.ecn = true and tcp.ecn_feedback = \"accecn\", else falls back to Reno without ECN";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("rtt_target", "time", "128us..=10s", "\"0ms\"", "RTT independence: flows below it grow as if their RTT were this"),
        crate::registry::param!("rtt_transition", "rounds", "≥ 0", "-1", "rounds after slow start before RTT independence applies"),
        crate::registry::param!("rtt_scaling", "", "\"rate\" | \"none\"", "\"scalable\"", "RTT-independence heuristic (RTT_CONTROL_RATE or none)"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        PragueConfig::validate(self)
    }
}

impl super::registry::CcAlgorithm for PragueConfig {
    const ECN_ECHO: EcnEcho = EcnEcho::Rfc3168;
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Prague::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rs(acked: u32, in_flight: u32) -> RateSample {
        RateSample {
            acked_sacked: acked,
            prior_in_flight: in_flight,
            ..Default::default()
        }
    }

    /// `prague_update_alpha` by hand: α starts at 1 and stays until the
    /// first CE; then per round α ← α − α/16 + F/16 with F the CE fraction
    /// of the segments delivered in the round, at 2⁻²⁰ resolution.
    #[test]
    fn alpha_matches_a_hand_computation() {
        let mut p = Prague::new(&PragueConfig::default());
        assert!(p.ecn_mode(EcnMode::AccEcn) == EcnMode::AccEcn);
        let mut s = CcState::with_window(10.0, 1e9, 1000);
        s.srtt = Some(20_000_000);
        s.snd_nxt = 10;
        let ack = Packet { flags: flags::ACK, ..Default::default() };
        p.on_ack_packet(&mut s, &ack);
        // rounds of 10 segments, each acknowledged by 5 ACKs of 2;
        // CE counts per round: 0, 3, 10, 0
        let mut hand = 1.0f64;
        for (r, marks) in [0u32, 3, 10, 0].into_iter().enumerate() {
            let mut left = marks;
            for k in 0..5 {
                s.snd_una = r as u32 * 10 + 2 * (k + 1);
                if k == 4 {
                    s.snd_nxt = s.snd_una + 10;
                }
                let ce = left.min(2);
                left -= ce;
                p.on_ce_delta(ce);
                p.cong_control(&mut s, &rs(2, 10));
            }
            if r >= 1 {
                // before the first CE, α is not updated (`saw_ce`)
                hand = hand - hand / 16.0 + marks as f64 / 10.0 / 16.0;
            }
            assert!((p.alpha() - hand).abs() < 1e-5, "round {r}: {} vs {hand}", p.alpha());
        }
        assert!((hand - 0.899_048).abs() < 1e-6, "{hand}");
    }

    /// `prague_enter_cwr`: frac_cwnd −= frac_cwnd·α/2; loss halves.
    #[test]
    fn reductions() {
        let mut p = Prague::new(&PragueConfig::default());
        p.ecn_mode(EcnMode::AccEcn);
        let mut s = CcState::with_window(40.0, 1e9, 1000);
        s.snd_nxt = 40;
        p.on_ack_packet(&mut s, &Packet { flags: flags::ACK | flags::ECE, ..Default::default() });
        p.ssthresh(&s);
        assert!((p.frac_cwnd() - 20.0).abs() < 1e-6, "α = 1 halves: {}", p.frac_cwnd());
        p.on_ack_packet(&mut s, &Packet { flags: flags::ACK, ..Default::default() });
        p.ssthresh(&s);
        assert!((p.frac_cwnd() - 10.0).abs() < 1e-6, "loss halves");
    }

    /// `RTT_CONTROL_RATE`: (rtt/target)² per RTT once RTT-independent.
    #[test]
    fn rtt_scaled_increase() {
        let mut p = Prague::new(&PragueConfig::default());
        p.round = 500;
        p.ssthresh = 10;
        p.snd_cwnd = 20;
        let mut s = CcState::with_window(20.0, 10.0, 1000);
        s.srtt = Some(10_000_000); // 78 units; target 195
        p.update_ai_ack_increase(&s);
        let want = (78.0f64 / 195.0).powi(2);
        assert!((p.ai_ack_increase as f64 / ONE_CWND as f64 - want).abs() < 1e-5);
        s.srtt = Some(40_000_000);
        p.update_ai_ack_increase(&s);
        assert_eq!(p.ai_ack_increase, ONE_CWND);
    }

    #[test]
    fn without_accecn_it_is_reno_without_ecn() {
        let mut p = Prague::new(&PragueConfig::default());
        assert_eq!(p.ecn_mode(EcnMode::Classic), EcnMode::Off);
        assert!(p.is_reno());
        assert_eq!(p.pacing_rate(&CcState::with_window(10.0, 1e9, 1000)), None);
    }
}
