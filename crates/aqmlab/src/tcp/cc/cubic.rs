//! CUBIC congestion control, four pinned variants.
//!
//! **`variant = "rfc9438"` (default)** — L. Xu, S. Ha, I. Rhee, V. Goel,
//! L. Eggert, "CUBIC for Fast and Long-Distance Networks", RFC 9438, 2023:
//! - §4.2 eq. (1): `W_cubic(t) = C·(t − K)³ + W_max`; eq. (2):
//!   `K = cbrt((W_max − cwnd_epoch)/C)`; `t` is the time since the start of
//!   the current congestion-avoidance stage (the first ACK in congestion
//!   avoidance after a reduction), so growth depends on time, not on the
//!   RTT; on every ACK `target = W_cubic(t + RTT)` (RTT = SRTT) clamped to
//!   `[cwnd, 1.5·cwnd]`.
//! - §4.3 Reno-friendly region, eq. (4): `W_est += α_cubic·segments_acked/cwnd`
//!   with `α_cubic = 3(1 − β)/(1 + β)`, switching to 1 once `W_est ≥
//!   cwnd_prior`; if `W_cubic(t) < W_est` then `cwnd = W_est`.
//! - §4.4/§4.5 concave and convex regions: `cwnd += (target − cwnd)/cwnd` per
//!   acknowledged segment (the ACK's `acked` count, as Linux and ns-3 do).
//! - §4.6 multiplicative decrease: `ssthresh = max(FlightSize·β, 2)`,
//!   `cwnd_prior = cwnd`; §4.7 fast convergence: `W_max = cwnd·(1 + β)/2` if
//!   `cwnd < W_max` else `W_max = cwnd`.
//! - A timeout during fast recovery reduces from the un-inflated window
//!   `min(cwnd, ssthresh)` (see [`super::reduction_view`]; both variants).
//! - §4.8 after a timeout, the next congestion-avoidance stage uses `K = 0`
//!   and `W_max = W_est = cwnd` at its start; the same rule is used for the
//!   first stage of a connection that leaves slow start without a loss.
//! - §4.10 slow start: the sender's standard slow start (+1 segment per
//!   ACK), or HyStart++ (RFC 9406) with `hystart = true`: rounds delimited by
//!   `SND.NXT`, `MIN_RTT_THRESH` 4 ms, `MAX_RTT_THRESH` 16 ms,
//!   `MIN_RTT_DIVISOR` 8, `N_RTT_SAMPLE` 8, `CSS_GROWTH_DIVISOR` 4,
//!   `CSS_ROUNDS` 5; used only in the initial slow start (RFC 9406 §4.3);
//!   growth per ACK is the sender's (+1, CSS +1/4) rather than `min(N, L·SMSS)`.
//!
//! Constants: `C = 0.4` segments/s³ (`c`), `β_cubic = 0.7` (`beta`), fast
//! convergence on, Reno-friendly region on (`tcp_friendliness`), HyStart++
//! off (`hystart = false`; Linux turns HyStart on, but the paper reproduced
//! here ran without it).
//!
//! **`variant = "linux-2.6.22"`** — CUBIC v2.1 as ported to ns-2.35's
//! tcp-linux (`tcp/linux/src/tcp_cubic.c`, "Modified Linux module source code
//! from linux-2.6.22.6"; Rhee & Xu, "CUBIC: A New TCP-Friendly High-Speed TCP
//! Variant", PFLDnet 2005), emulated in its integer arithmetic:
//! - `beta = 819` (/1024 ≈ 0.8: `ssthresh = max(cwnd·819/1024, 2)`),
//!   `bic_scale = 41` (`C = 410/1024 ≈ 0.4`), `max_increment = 16`,
//!   `fast_convergence = 1`, `tcp_friendliness = 1`, no HyStart;
//! - integer `cwnd` incremented by one after `cnt` ACKs (`snd_cwnd_cnt`);
//!   `bictcp_update`: epoch at the first congestion-avoidance ACK after a
//!   reduction, `K = cbrt(cube_factor·(W_last_max − cwnd))` in 2⁻¹⁰ s (exact
//!   cube root here, Linux uses a table and one Newton step, ~0.2 % error),
//!   `t` offset by `delay_min`, `cnt = cwnd/(target − cwnd)` or `100·cwnd`,
//!   at most `max_increment` segments per 100 ms above the origin,
//!   **`cnt = 50` while no loss has been seen** (`loss_cwnd == 0`), the
//!   Reno estimate `tcp_cwnd` (one segment per `cwnd·beta_scale/8` ACKs,
//!   `beta_scale = 8(1024 + β)/3/(1024 − β)`), the recomputation skipped if
//!   `cwnd` is unchanged within `HZ/32` = 31 ms;
//! - the delayed-ACK ratio estimator `delayed_ack` (`ACK_RATIO_SHIFT 4`,
//!   `ratio = (15·ratio + acked)/16`, outside recovery) divides `cnt`;
//! - `delay_min` from per-ACK RTT samples, ignored within 1 s of the epoch
//!   start; `timestamps = true` assumes the ns-2 agent ran with
//!   `timestamps_ true` — with `false`, ns-2 gives CUBIC no samples, so
//!   `delay_min` stays 0 and neither the `max_increment` clamp nor the time
//!   offset applies;
//! - a timeout (TCP_CA_Loss) resets all state (`bictcp_reset`), so
//!   `cnt = 50` applies again until the next loss;
//! - slow start while `cwnd ≤ ssthresh` (+1 per ACK, `tcp_slow_start`
//!   without ABC). Not modelled: `tcp_is_cwnd_limited` (bulk senders are
//!   always window-limited) and undo.
//!
//! **`variant = "linux"`** — today's Linux `net/ipv4/tcp_cubic.c` (CUBIC
//! v2.3; Ha, Rhee, Xu, "CUBIC: A New TCP-Friendly High-Speed TCP Variant",
//! ACM SIGOPS OSR 2008; HyStart: Ha & Rhee, "Taming the Elephants: New TCP
//! Slow Start", 2008), with `tcp_slow_start` and `tcp_cong_avoid_ai` from
//! `net/ipv4/tcp_cong.c`, in the kernel's integer arithmetic:
//! - `beta = 717` (/1024), `bic_scale = 41`, `fast_convergence = 1`,
//!   `tcp_friendliness = 1`; `ssthresh = max(⌊cwnd·717/1024⌋, 2)` from the
//!   window (`snd_cwnd`), not the flight size, as Linux does;
//! - `bictcp_update`: `K = cubic_root(cube_factor·(W_max − cwnd))` with the
//!   kernel's table-and-Newton [`cubic_root`], `t` in 2⁻¹⁰ s from jiffies
//!   (HZ = 1000) plus `usecs_to_jiffies(delay_min)`, `cnt = cwnd/(target −
//!   cwnd)` or `100·cwnd`, **`cnt ≤ 20` while `last_max_cwnd == 0`** (growth
//!   of at least 5 % per RTT before the first loss), the Reno estimate
//!   `tcp_cwnd` (`beta_scale = 15`), `cnt ≥ 2`; recomputed at most once per
//!   jiffy and skipped within `HZ/32` if cwnd is unchanged;
//! - growth: `tcp_cong_avoid_ai(cnt, acked)` (credits counted in segments
//!   acknowledged); slow start while `cwnd < ssthresh` by `tcp_slow_start`:
//!   **cwnd += segments acknowledged** (a delayed ACK for two adds two),
//!   capped at ssthresh, the rest of the ACK going to congestion avoidance;
//! - HyStart (`hystart = 1`, both detectors, `hystart_low_window = 16`,
//!   `hystart_ack_delta_us = 2000`, `HYSTART_MIN_SAMPLES = 8`, delay
//!   threshold `clamp(delay_min/8, 4 ms, 16 ms)`): from `cubictcp_acked`
//!   on every RTT sample while `cwnd < ssthresh` and `cwnd ≥ 16`; rounds
//!   end when `snd_una` passes the `snd_nxt` recorded at the round start;
//!   ACK train: ACKs ≤ 2 ms apart for longer than `delay_min/2` since the
//!   round started; delay: the round's minimum RTT over 8 samples above
//!   `delay_min + threshold`; either sets `ssthresh = cwnd`, once per
//!   connection (until a timeout resets it). `hystart_ack_delay` (the
//!   TSO/GRO cushion of up to 1 ms) is 0: no TSO/GRO is modelled; the
//!   `delay_min/2` halving applies because `sk_pacing_status` is NONE;
//! - `delay_min` from per-ACK RTT samples, ignored for 1 s after an epoch
//!   starts ("right after fast recovery");
//! - a timeout (`TCP_CA_Loss`) runs `bictcp_reset` and
//!   `bictcp_hystart_reset` (W_max, delay_min and HyStart's `found` clear).
//!   Not modelled: `tcp_is_cwnd_limited` (bulk senders are window
//!   limited), the idle restart (`CA_EVENT_TX_START`) and undo.
//!
//! **`variant = "ns3"`** — ns-3 3.44 `TcpCubic` (`src/internet/model/
//! tcp-cubic.cc`), the Linux port ns-3 runs by default, with its own
//! HyStart thresholds, double-precision cubic function and W_max kept after
//! a timeout; see [`CubicNs3`] for every difference from `linux`.

use super::{CcState, CongestionControl, LossEpisode};
use crate::engine::{to_secs, Time, NS_PER_SEC};
use serde::{Deserialize, Serialize};

/// Which CUBIC.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub enum CubicVariant {
    /// RFC 9438 (β = 0.7, Reno-friendly region with α switching to 1).
    #[default]
    #[serde(rename = "rfc9438")]
    Rfc9438,
    /// ns-2.35 tcp-linux / Linux 2.6.22 CUBIC v2.1 (β = 819/1024).
    #[serde(rename = "linux-2.6.22")]
    Linux2622,
    /// Today's Linux `tcp_cubic.c` (v2.3: β = 717/1024, HyStart, the
    /// 20-ACK `cnt` cap before the first loss, byte-counting slow start).
    #[serde(rename = "linux")]
    Linux,
    /// ns-3 3.44 `TcpCubic` (Linux-derived, with its own HyStart
    /// thresholds and double-precision cubic function).
    #[serde(rename = "ns3")]
    Ns3,
}

/// HyStart's detectors (`hystart_detect` in Linux `tcp_cubic.c`).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub enum HystartDetect {
    /// `HYSTART_ACK_TRAIN | HYSTART_DELAY` (Linux's default, 3).
    #[default]
    #[serde(rename = "both")]
    Both,
    /// `HYSTART_ACK_TRAIN` only (1).
    #[serde(rename = "ack-train")]
    AckTrain,
    /// `HYSTART_DELAY` only (2).
    #[serde(rename = "delay")]
    Delay,
}

/// `cc = { kind = "cubic", ... }`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct CubicConfig {
    /// `"rfc9438"`, `"linux-2.6.22"`, `"linux"` or `"ns3"`. Unset: the
    /// variant of the flow's `tcp.profile` (`ns2-2.35`: `linux-2.6.22`,
    /// `ns3-3.44`: `ns3`, `linux-6.1`: `linux`), `rfc9438` without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<CubicVariant>,
    /// Multiplicative decrease factor β (window kept after a loss).
    /// Default 0.7 (rfc9438), 819/1024 (linux-2.6.22) or 717/1024 (linux);
    /// the Linux variants round it to /1024.
    pub beta: Option<f64>,
    /// Cubic scaling constant C, segments/s³. Default 0.4 (rfc9438) or
    /// `bic_scale`·10/1024 = 410/1024 (both Linux variants, `bic_scale = 41`).
    pub c: Option<f64>,
    /// RFC 9438 §4.7 / `fast_convergence`. Default true.
    pub fast_convergence: bool,
    /// RFC 9438 §4.3 Reno-friendly region / `tcp_friendliness`. Default true.
    pub tcp_friendliness: bool,
    /// rfc9438: HyStart++ (RFC 9406) in the initial slow start, default
    /// false. linux: HyStart (ACK train and delay), default true.
    /// linux-2.6.22 has none (true is an error).
    pub hystart: Option<bool>,
    /// linux only: which HyStart detectors run (`"both"`, `"ack-train"`,
    /// `"delay"`). Default `"both"`.
    pub hystart_detect: Option<HystartDetect>,
    /// linux only: `hystart_low_window`, segments. Default 16.
    pub hystart_low_window: Option<u32>,
    /// linux only: `hystart_ack_delta_us`, microseconds. Default 2000.
    pub hystart_ack_delta_us: Option<u32>,
    /// linux-2.6.22 only: `max_increment`, segments per 100 ms. Default 16.
    pub max_increment: u32,
    /// linux-2.6.22 only: RTT samples reach CUBIC (ns-2 `timestamps_ true`).
    /// Default true.
    pub timestamps: bool,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            variant: None,
            beta: None,
            c: None,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: None,
            hystart_detect: None,
            hystart_low_window: None,
            hystart_ack_delta_us: None,
            max_increment: 16,
            timestamps: true,
        }
    }
}

/// RFC 9438 §4.6: β_cubic.
pub const BETA_RFC9438: f64 = 0.7;
/// RFC 9438 §5: C.
pub const C_RFC9438: f64 = 0.4;
/// ns-2.35 tcp_cubic.c `beta = 819` (/1024).
pub const BETA_LINUX_2622: u32 = 819;
/// ns-2.35 tcp_cubic.c `bic_scale = 41`.
pub const BIC_SCALE_LINUX_2622: u32 = 41;
/// Linux tcp_cubic.c (v2.3) `beta = 717` (/1024).
pub const BETA_LINUX: u32 = 717;
/// Linux tcp_cubic.c `bic_scale = 41`.
pub const BIC_SCALE_LINUX: u32 = 41;
/// Linux tcp_cubic.c `hystart_low_window = 16`.
pub const HYSTART_LOW_WINDOW: u32 = 16;
/// Linux tcp_cubic.c `hystart_ack_delta_us = 2000`.
pub const HYSTART_ACK_DELTA_US: u32 = 2000;

impl CubicConfig {
    /// The variant in effect: the one named, else `rfc9438` (a profile
    /// fills an unset variant in before the sender is built, see
    /// `tcp::profile`).
    pub fn variant(&self) -> CubicVariant {
        self.variant.unwrap_or_default()
    }

    /// β in effect.
    pub fn beta(&self) -> f64 {
        self.beta.unwrap_or(match self.variant() {
            CubicVariant::Rfc9438 => BETA_RFC9438,
            CubicVariant::Linux2622 => BETA_LINUX_2622 as f64 / 1024.0,
            CubicVariant::Linux => BETA_LINUX as f64 / 1024.0,
            CubicVariant::Ns3 => BETA_RFC9438,
        })
    }

    /// C in effect (segments/s³).
    pub fn c(&self) -> f64 {
        self.c.unwrap_or(match self.variant() {
            CubicVariant::Rfc9438 => C_RFC9438,
            CubicVariant::Linux2622 => BIC_SCALE_LINUX_2622 as f64 * 10.0 / 1024.0,
            CubicVariant::Linux => BIC_SCALE_LINUX as f64 * 10.0 / 1024.0,
            CubicVariant::Ns3 => C_RFC9438,
        })
    }

    /// Whether the variant's slow-start exit (HyStart++ or HyStart) runs.
    pub fn hystart(&self) -> bool {
        self.hystart.unwrap_or(matches!(
            self.variant(),
            CubicVariant::Linux | CubicVariant::Ns3
        ))
    }

    pub fn validate(&self) -> Result<(), (String, String)> {
        if let Some(b) = self.beta {
            if !(b > 0.0 && b < 1.0) {
                return Err(("beta".into(), format!("must be in (0, 1), got {b}")));
            }
        }
        if let Some(c) = self.c {
            if !(c > 0.0 && c.is_finite()) {
                return Err(("c".into(), format!("must be positive, got {c}")));
            }
        }
        if self.max_increment == 0 {
            return Err(("max_increment".into(), "must be at least 1".into()));
        }
        if self.hystart == Some(true) && self.variant == Some(CubicVariant::Linux2622) {
            return Err((
                "hystart".into(),
                "the linux-2.6.22 CUBIC (ns-2.35 tcp-linux) has no HyStart; use variant = \"rfc9438\" for HyStart++ or \"linux\" for Linux's HyStart".into(),
            ));
        }
        if !matches!(
            self.variant,
            Some(CubicVariant::Linux | CubicVariant::Ns3)
        ) {
            for (key, set) in [
                ("hystart_detect", self.hystart_detect.is_some()),
                ("hystart_low_window", self.hystart_low_window.is_some()),
                ("hystart_ack_delta_us", self.hystart_ack_delta_us.is_some()),
            ] {
                if set {
                    return Err((
                        key.into(),
                        "applies to variant = \"linux\" or \"ns3\" only (HyStart); name the variant beside it".into(),
                    ));
                }
            }
        }
        if self.hystart_low_window == Some(0) {
            return Err(("hystart_low_window".into(), "must be at least 1".into()));
        }
        Ok(())
    }
}

/// RFC 9438 eq. (1): `W_cubic(t) = C·(t − K)³ + W_max`, segments.
pub fn w_cubic(c: f64, k: f64, w_max: f64, t: f64) -> f64 {
    c * (t - k).powi(3) + w_max
}

/// RFC 9438 eq. (2): `K = cbrt((W_max − cwnd_epoch)/C)`, seconds.
pub fn k_of(c: f64, w_max: f64, cwnd_epoch: f64) -> f64 {
    ((w_max - cwnd_epoch) / c).cbrt()
}

/// Builds the variant a config names.
pub struct Cubic;

impl Cubic {
    pub fn build(cfg: &CubicConfig) -> Box<dyn CongestionControl> {
        match cfg.variant() {
            CubicVariant::Rfc9438 => Box::new(CubicRfc9438::new(cfg)),
            CubicVariant::Linux2622 => Box::new(CubicLinux2622::new(cfg)),
            CubicVariant::Linux => Box::new(CubicLinux::new(cfg)),
            CubicVariant::Ns3 => Box::new(CubicNs3::new(cfg)),
        }
    }
}

// ---------------------------------------------------------------- RFC 9438

/// One congestion-avoidance stage.
#[derive(Clone, Copy, Debug)]
struct Epoch {
    start: Time,
    k: f64,
    w_max: f64,
    w_est: f64,
}

/// CUBIC per RFC 9438.
pub struct CubicRfc9438 {
    beta: f64,
    c: f64,
    fast_convergence: bool,
    tcp_friendliness: bool,
    /// W_max after the last reduction; `None` before the first congestion
    /// event and after a timeout (§4.8).
    w_max: Option<f64>,
    /// cwnd just before the last reduction (§4.3).
    cwnd_prior: Option<f64>,
    epoch: Option<Epoch>,
    hystart: Option<HyStartPP>,
    /// Inside a loss episode (see `reduction_view`).
    episode: LossEpisode,
}

impl CubicRfc9438 {
    pub fn new(cfg: &CubicConfig) -> Self {
        CubicRfc9438 {
            beta: cfg.beta(),
            c: cfg.c(),
            fast_convergence: cfg.fast_convergence,
            tcp_friendliness: cfg.tcp_friendliness,
            w_max: None,
            cwnd_prior: None,
            epoch: None,
            hystart: cfg.hystart().then(HyStartPP::default),
            episode: LossEpisode::default(),
        }
    }

    /// W_max of the running epoch (or of the next one), segments.
    pub fn w_max(&self) -> Option<f64> {
        self.epoch.map(|e| e.w_max).or(self.w_max)
    }

    /// K of the running epoch, seconds.
    pub fn k(&self) -> Option<f64> {
        self.epoch.map(|e| e.k)
    }

    /// Start of the running congestion-avoidance epoch.
    pub fn epoch_start(&self) -> Option<Time> {
        self.epoch.map(|e| e.start)
    }

    /// Whether HyStart++ is in Conservative Slow Start.
    pub fn in_css(&self) -> bool {
        self.hystart.as_ref().is_some_and(|h| h.active && h.in_css)
    }

    fn congestion_avoidance(&mut self, s: &mut CcState, acked: u32) {
        let acked = acked.max(1) as f64;
        if self.epoch.is_none() {
            let cwnd = s.cwnd;
            let (w_max, k) = match self.w_max {
                Some(w) => (w, k_of(self.c, w, cwnd)),
                None => (cwnd, 0.0),
            };
            if self.cwnd_prior.is_none() {
                self.cwnd_prior = Some(cwnd);
            }
            self.epoch = Some(Epoch {
                start: s.now,
                k,
                w_max,
                w_est: cwnd,
            });
        }
        let prior = self.cwnd_prior.unwrap_or(0.0);
        let ep = self.epoch.as_mut().expect("epoch set above");
        let t = to_secs(s.now.saturating_sub(ep.start));
        if self.tcp_friendliness {
            let alpha = if ep.w_est >= prior {
                1.0
            } else {
                3.0 * (1.0 - self.beta) / (1.0 + self.beta)
            };
            ep.w_est += alpha * acked / s.cwnd;
            if w_cubic(self.c, ep.k, ep.w_max, t) < ep.w_est {
                // Reno-friendly region (§4.3).
                s.cwnd = s.cwnd.max(ep.w_est);
                return;
            }
        }
        let rtt = s.srtt.map(to_secs).unwrap_or(0.0);
        let target = w_cubic(self.c, ep.k, ep.w_max, t + rtt).clamp(s.cwnd, 1.5 * s.cwnd);
        s.cwnd += (target - s.cwnd) / s.cwnd * acked;
    }
}

impl CongestionControl for CubicRfc9438 {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_rtt(&mut self, s: &CcState, rtt: Time, _acked: u32) {
        if let Some(h) = self.hystart.as_mut() {
            h.on_rtt(s, rtt);
        }
    }

    fn on_ack(&mut self, s: &mut CcState, acked: u32) {
        self.episode.end();
        if s.cwnd < s.ssthresh {
            match self.hystart.as_mut() {
                Some(h) if h.active => h.on_ack(s),
                _ => s.cwnd += 1.0,
            }
            return;
        }
        self.congestion_avoidance(s, acked);
    }

    fn ssthresh(&mut self, s: &CcState) -> f64 {
        let view = self.episode.reduce_from(s);
        let s = &view;
        if let Some(h) = self.hystart.as_mut() {
            h.active = false; // RFC 9406 §4.3: initial slow start only
        }
        let cwnd = s.cwnd;
        let w_max = match self.w_max {
            Some(prev) if self.fast_convergence && cwnd < prev => cwnd * (1.0 + self.beta) / 2.0,
            _ => cwnd,
        };
        self.w_max = Some(w_max);
        self.cwnd_prior = Some(cwnd);
        self.epoch = None;
        (s.in_flight as f64 * self.beta).max(2.0)
    }

    fn on_recovery_exit(&mut self, _s: &mut CcState) {
        self.episode.end();
    }

    fn on_timeout(&mut self, _s: &CcState) {
        // §4.8: next stage starts with K = 0, W_max = cwnd at its start.
        self.w_max = None;
        self.epoch = None;
    }
}

// ------------------------------------------------------------- HyStart++

/// RFC 9406 §4.2 constants.
const HS_MIN_RTT_THRESH: Time = 4_000_000;
const HS_MAX_RTT_THRESH: Time = 16_000_000;
const HS_MIN_RTT_DIVISOR: Time = 8;
const HS_N_RTT_SAMPLE: u32 = 8;
const HS_CSS_GROWTH_DIVISOR: f64 = 4.0;
const HS_CSS_ROUNDS: u32 = 5;

/// HyStart++ state (RFC 9406 §4.2).
#[derive(Debug)]
struct HyStartPP {
    /// Still in the initial slow start (SS or CSS).
    active: bool,
    in_css: bool,
    window_end: Option<u32>,
    last_round_min_rtt: Option<Time>,
    current_round_min_rtt: Option<Time>,
    rtt_sample_count: u32,
    css_baseline_min_rtt: Option<Time>,
    css_rounds: u32,
}

impl Default for HyStartPP {
    fn default() -> Self {
        HyStartPP {
            active: true,
            in_css: false,
            window_end: None,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_sample_count: 0,
            css_baseline_min_rtt: None,
            css_rounds: 0,
        }
    }
}

impl HyStartPP {
    fn new_round_if_due(&mut self, s: &CcState) {
        let due = match self.window_end {
            None => true,
            // the round ends with the ACK that passes windowEnd
            Some(we) => s.snd_una > we,
        };
        if due {
            if self.window_end.is_some() && self.in_css {
                self.css_rounds += 1;
            }
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = None;
            self.rtt_sample_count = 0;
            self.window_end = Some(s.snd_nxt);
        }
    }

    fn on_rtt(&mut self, s: &CcState, rtt: Time) {
        if !self.active {
            return;
        }
        self.new_round_if_due(s);
        self.current_round_min_rtt = Some(self.current_round_min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.rtt_sample_count += 1;
    }

    /// One ACK in the initial slow start.
    fn on_ack(&mut self, s: &mut CcState) {
        self.new_round_if_due(s);
        if self.in_css && self.css_rounds >= HS_CSS_ROUNDS {
            // Enter congestion avoidance.
            s.ssthresh = s.cwnd;
            self.active = false;
            return;
        }
        s.cwnd += if self.in_css {
            1.0 / HS_CSS_GROWTH_DIVISOR
        } else {
            1.0
        };
        if self.rtt_sample_count < HS_N_RTT_SAMPLE {
            return;
        }
        let (Some(cur), Some(last)) = (self.current_round_min_rtt, self.last_round_min_rtt) else {
            return;
        };
        if !self.in_css {
            let thresh = (last / HS_MIN_RTT_DIVISOR).clamp(HS_MIN_RTT_THRESH, HS_MAX_RTT_THRESH);
            if cur >= last + thresh {
                self.in_css = true;
                self.css_baseline_min_rtt = Some(cur);
                self.css_rounds = 0;
            }
        } else if self.css_baseline_min_rtt.is_some_and(|b| cur < b) {
            // Spurious exit: resume slow start.
            self.in_css = false;
            self.css_baseline_min_rtt = None;
        }
    }
}

// ------------------------------------------------------- Linux 2.6.22 / ns-2

const BICTCP_BETA_SCALE: u64 = 1024;
const BICTCP_HZ: u32 = 10;
const ACK_RATIO_SHIFT: u32 = 4;
/// ns-2 tcp-linux jiffy: 1 ms (`JIFFY_RATIO` 1000).
const JIFFY: Time = 1_000_000;
/// `HZ/32` jiffies.
const UPDATE_HOLD: Time = (1000 / 32) * JIFFY;

/// CUBIC v2.1 from Linux 2.6.22 as run by ns-2.35 tcp-linux.
pub struct CubicLinux2622 {
    beta: u64,
    cube_rtt_scale: u64,
    cube_factor: u64,
    beta_scale: u64,
    fast_convergence: bool,
    tcp_friendliness: bool,
    max_increment: u64,
    timestamps: bool,
    // struct bictcp
    cnt: u32,
    last_max_cwnd: u32,
    loss_cwnd: u32,
    last_cwnd: u32,
    last_time: Time,
    bic_origin_point: u32,
    bic_k: u64,
    /// Minimum RTT, ns (0: none).
    delay_min: Time,
    epoch_start: Option<Time>,
    ack_cnt: u32,
    tcp_cwnd: u32,
    delayed_ack: u32,
    // tcp_sock
    snd_cwnd_cnt: u32,
    last_rtt: Option<Time>,
    /// Inside a loss episode (see `reduction_view`).
    episode: LossEpisode,
}

impl CubicLinux2622 {
    pub fn new(cfg: &CubicConfig) -> Self {
        let beta = (cfg.beta() * 1024.0).round().clamp(1.0, 1023.0) as u64;
        let bic_scale = (cfg.c() * 1024.0 / 10.0).round().max(1.0) as u64;
        CubicLinux2622 {
            beta,
            cube_rtt_scale: bic_scale * 10,
            cube_factor: (1u64 << (10 + 3 * BICTCP_HZ)) / (bic_scale * 10),
            beta_scale: 8 * (BICTCP_BETA_SCALE + beta) / 3 / (BICTCP_BETA_SCALE - beta),
            fast_convergence: cfg.fast_convergence,
            tcp_friendliness: cfg.tcp_friendliness,
            max_increment: cfg.max_increment as u64,
            timestamps: cfg.timestamps,
            cnt: 0,
            last_max_cwnd: 0,
            loss_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
            snd_cwnd_cnt: 0,
            last_rtt: None,
            episode: LossEpisode::default(),
        }
    }

    /// `bictcp_reset`.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.loss_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.bic_origin_point = 0;
        self.bic_k = 0;
        self.delay_min = 0;
        self.epoch_start = None;
        self.delayed_ack = 2 << ACK_RATIO_SHIFT;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
    }

    /// `cnt` (ACKs per +1 segment) in effect; for tests.
    pub fn cnt(&self) -> u32 {
        self.cnt
    }

    /// `last_max_cwnd` (W_max), segments.
    pub fn last_max_cwnd(&self) -> u32 {
        self.last_max_cwnd
    }

    /// `bictcp_update`.
    fn update(&mut self, cwnd: u32, now: Time) {
        self.ack_cnt += 1;
        if self.last_cwnd == cwnd && now.saturating_sub(self.last_time) <= UPDATE_HOLD {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = now;
        if self.epoch_start.is_none() {
            self.epoch_start = Some(now);
            self.ack_cnt = 1;
            self.tcp_cwnd = cwnd;
            if self.last_max_cwnd <= cwnd {
                self.bic_k = 0;
                self.bic_origin_point = cwnd;
            } else {
                let x = self.cube_factor as f64 * (self.last_max_cwnd - cwnd) as f64;
                self.bic_k = x.cbrt() as u64;
                self.bic_origin_point = self.last_max_cwnd;
            }
        }
        let epoch = self.epoch_start.expect("set above");
        // t in 2^-10 s, offset by the minimum delay.
        let elapsed = (now + self.delay_min).saturating_sub(epoch);
        let t = ((elapsed as u128) << BICTCP_HZ) / NS_PER_SEC as u128;
        let t = t as u64;
        let offs = t.abs_diff(self.bic_k) as u128;
        let delta = ((self.cube_rtt_scale as u128 * offs * offs * offs) >> (10 + 3 * BICTCP_HZ))
            .min(u32::MAX as u128) as u32;
        let bic_target = if t < self.bic_k {
            self.bic_origin_point.saturating_sub(delta)
        } else {
            self.bic_origin_point.saturating_add(delta)
        };
        self.cnt = if bic_target > cwnd {
            cwnd / (bic_target - cwnd)
        } else {
            100u32.saturating_mul(cwnd)
        };
        if self.delay_min > 0 {
            // max increment = Smax · rtt / 0.1 s
            let min_cnt = (cwnd as u128 * (NS_PER_SEC as u128 / 10))
                / (self.max_increment as u128 * self.delay_min as u128);
            let min_cnt = min_cnt.min(u32::MAX as u128) as u32;
            if self.cnt < min_cnt && t >= self.bic_k {
                self.cnt = min_cnt;
            }
        }
        if self.loss_cwnd == 0 {
            self.cnt = 50; // slow start and low utilisation
        }
        if self.tcp_friendliness {
            let d = ((cwnd as u64 * self.beta_scale) >> 3).max(1) as u32;
            while self.ack_cnt > d {
                self.ack_cnt -= d;
                self.tcp_cwnd += 1;
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                if self.cnt > max_cnt {
                    self.cnt = max_cnt;
                }
            }
        }
        self.cnt = (((self.cnt as u64) << ACK_RATIO_SHIFT) / self.delayed_ack.max(1) as u64) as u32;
        if self.cnt == 0 {
            self.cnt = 1;
        }
    }

    /// `measure_delay`.
    fn measure_delay(&mut self, now: Time) {
        if !self.timestamps {
            return;
        }
        let Some(delay) = self.last_rtt else { return };
        // Discard samples right after fast recovery (epoch_start 0 = none).
        if now.saturating_sub(self.epoch_start.unwrap_or(0)) < NS_PER_SEC {
            return;
        }
        let delay = delay.max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
    }
}

impl CongestionControl for CubicLinux2622 {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_rtt(&mut self, _s: &CcState, rtt: Time, _acked: u32) {
        self.last_rtt = Some(rtt);
    }

    fn on_ack(&mut self, s: &mut CcState, acked: u32) {
        self.episode.end();
        // bictcp_acked (pkts_acked, TCP_CA_Open only): delayed-ACK ratio.
        if acked > 0 {
            let d = self.delayed_ack as i64 + acked as i64
                - (self.delayed_ack >> ACK_RATIO_SHIFT) as i64;
            self.delayed_ack = d.max(1) as u32;
        }
        self.measure_delay(s.now);
        let cwnd = s.cwnd.floor().max(1.0) as u32;
        if cwnd as f64 <= s.ssthresh {
            s.cwnd = cwnd as f64 + 1.0;
            return;
        }
        self.update(cwnd, s.now);
        if self.snd_cwnd_cnt >= self.cnt {
            s.cwnd = cwnd as f64 + 1.0;
            self.snd_cwnd_cnt = 0;
        } else {
            s.cwnd = cwnd as f64;
            self.snd_cwnd_cnt += 1;
        }
    }

    fn ssthresh(&mut self, s: &CcState) -> f64 {
        let view = self.episode.reduce_from(s);
        let s = &view;
        let cwnd = s.cwnd.floor().max(1.0) as u32;
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.fast_convergence {
            ((cwnd as u64 * (BICTCP_BETA_SCALE + self.beta)) / (2 * BICTCP_BETA_SCALE)) as u32
        } else {
            cwnd
        };
        self.loss_cwnd = cwnd;
        self.snd_cwnd_cnt = 0;
        ((cwnd as u64 * self.beta / BICTCP_BETA_SCALE).max(2)) as f64
    }

    fn on_recovery_exit(&mut self, _s: &mut CcState) {
        self.episode.end();
    }

    fn on_timeout(&mut self, _s: &CcState) {
        // bictcp_state(TCP_CA_Loss)
        self.reset();
        self.snd_cwnd_cnt = 0;
    }
}

// ------------------------------------------------------------ Linux (today)

/// Linux `HZ` assumed for `tcp_jiffies32` (CONFIG_HZ=1000).
const LINUX_HZ: u64 = 1000;
/// `HYSTART_MIN_SAMPLES`.
const HYSTART_MIN_SAMPLES: u32 = 8;
/// `HYSTART_DELAY_MIN`, µs.
const HYSTART_DELAY_MIN_US: u32 = 4000;
/// `HYSTART_DELAY_MAX`, µs.
const HYSTART_DELAY_MAX_US: u32 = 16000;

/// Linux `cubic_root`: cube root of `a` by a 64-entry table of the leading
/// bits followed by one Newton-Raphson step (average error ≈ 0.195 %).
pub fn cubic_root(a: u64) -> u32 {
    // v[x] = cbrt(x << 18) − 1, refined by hand (Willy Tarreau); for x in
    // [0, 63], cbrt(x) = (v[x] + 10) >> 6.
    const V: [u8; 64] = [
        0, 54, 54, 54, 118, 118, 118, 118, //
        123, 129, 134, 138, 143, 147, 151, 156, //
        157, 161, 164, 168, 170, 173, 176, 179, //
        181, 185, 187, 190, 192, 194, 197, 199, //
        200, 202, 204, 206, 209, 211, 213, 215, //
        217, 219, 221, 222, 224, 225, 227, 229, //
        231, 232, 234, 236, 237, 239, 240, 242, //
        244, 245, 246, 248, 250, 251, 252, 254, //
    ];
    // fls64: 1-based index of the most significant set bit, 0 for 0.
    let b = 64 - a.leading_zeros();
    if b < 7 {
        return (V[a as usize] as u32 + 35) >> 6;
    }
    let b = ((b * 84) >> 8) - 1;
    let shift = (a >> (b * 3)) as usize;
    let x = ((V[shift] as u32 + 10) << b) >> 6;
    // x_{k+1} = (2·x_k + a/x_k²)/3, with x_k(x_k − 1) for x_k² and 341/1024
    // for 1/3, in u32 as the kernel does.
    let d = (a / (x as u64 * (x as u64 - 1))) as u32;
    let x = (2 * x).wrapping_add(d);
    ((x as u64 * 341) >> 10) as u32
}

/// `usecs_to_jiffies` for HZ = 1000: rounds up.
fn usecs_to_jiffies(us: u32) -> u64 {
    (us as u64).div_ceil(1_000_000 / LINUX_HZ)
}

/// CUBIC v2.3 as in today's Linux `net/ipv4/tcp_cubic.c`, in its integer
/// arithmetic (windows in segments, `tcp_jiffies32` at HZ = 1000, the
/// HyStart clock in µs).
pub struct CubicLinux {
    beta: u32,
    cube_rtt_scale: u32,
    cube_factor: u64,
    beta_scale: u32,
    fast_convergence: bool,
    tcp_friendliness: bool,
    hystart: bool,
    detect: HystartDetect,
    hystart_low_window: u32,
    hystart_ack_delta_us: u32,
    // struct bictcp
    cnt: u32,
    last_max_cwnd: u32,
    last_cwnd: u32,
    /// jiffies
    last_time: u64,
    bic_origin_point: u32,
    /// 2⁻¹⁰ s
    bic_k: u32,
    /// µs (0: none)
    delay_min: u32,
    /// jiffies (`None` = 0 in the kernel: no epoch)
    epoch_start: Option<u64>,
    ack_cnt: u32,
    tcp_cwnd: u32,
    sample_cnt: u32,
    found: bool,
    /// µs
    round_start: u64,
    end_seq: u32,
    /// µs
    last_ack: u64,
    /// µs
    curr_rtt: u32,
    // tcp_sock
    snd_cwnd_cnt: u32,
    /// HyStart set `snd_ssthresh = snd_cwnd` in `pkts_acked` (on_rtt, which
    /// cannot write the sender's state); applied at the same ACK's
    /// `cong_avoid` (on_ack), before any growth.
    pending_ssthresh: Option<u32>,
    /// Inside a loss episode (see `reduction_view`).
    episode: LossEpisode,
}

impl CubicLinux {
    pub fn new(cfg: &CubicConfig) -> Self {
        let beta = (cfg.beta() * 1024.0).round().clamp(1.0, 1023.0) as u32;
        let bic_scale = (cfg.c() * 1024.0 / 10.0).round().max(1.0) as u32;
        let cube_rtt_scale = bic_scale * 10;
        CubicLinux {
            beta,
            cube_rtt_scale,
            // 1024·c/rtt scaled: 2^(10 + 3·BICTCP_HZ) / (bic_scale·10)
            cube_factor: (1u64 << (10 + 3 * BICTCP_HZ)) / cube_rtt_scale as u64,
            // 8·(1024 + β)/3/(1024 − β): ACKs per +1 of the Reno estimate ×8
            beta_scale: 8 * (BICTCP_BETA_SCALE as u32 + beta)
                / 3
                / (BICTCP_BETA_SCALE as u32 - beta),
            fast_convergence: cfg.fast_convergence,
            tcp_friendliness: cfg.tcp_friendliness,
            hystart: cfg.hystart(),
            detect: cfg.hystart_detect.unwrap_or_default(),
            hystart_low_window: cfg.hystart_low_window.unwrap_or(HYSTART_LOW_WINDOW),
            hystart_ack_delta_us: cfg.hystart_ack_delta_us.unwrap_or(HYSTART_ACK_DELTA_US),
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            sample_cnt: 0,
            found: false,
            round_start: 0,
            end_seq: 0,
            last_ack: 0,
            curr_rtt: u32::MAX,
            snd_cwnd_cnt: 0,
            pending_ssthresh: None,
            episode: LossEpisode::default(),
        }
    }

    /// `cnt` (ACKs per +1 segment) in effect.
    pub fn cnt(&self) -> u32 {
        self.cnt
    }

    /// `last_max_cwnd` (W_max), segments.
    pub fn last_max_cwnd(&self) -> u32 {
        self.last_max_cwnd
    }

    /// `bic_K`, 2⁻¹⁰ s.
    pub fn bic_k(&self) -> u32 {
        self.bic_k
    }

    /// `delay_min`, µs.
    pub fn delay_min_us(&self) -> u32 {
        self.delay_min
    }

    /// HyStart found the slow-start exit (`ca->found`).
    pub fn hystart_found(&self) -> bool {
        self.found
    }

    fn jiffies(now: Time) -> u64 {
        now / (NS_PER_SEC / LINUX_HZ)
    }

    /// `bictcp_reset`.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.bic_origin_point = 0;
        self.bic_k = 0;
        self.delay_min = 0;
        self.epoch_start = None;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.found = false;
    }

    /// `bictcp_hystart_reset`.
    fn hystart_reset(&mut self, s: &CcState) {
        let now_us = s.now / 1000;
        self.round_start = now_us;
        self.last_ack = now_us;
        self.end_seq = s.snd_nxt;
        self.curr_rtt = u32::MAX;
        self.sample_cnt = 0;
    }

    /// `bictcp_update(ca, cwnd, acked)`.
    fn update(&mut self, cwnd: u32, acked: u32, now: Time) {
        let jiffies = Self::jiffies(now);
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        if self.last_cwnd == cwnd && jiffies.saturating_sub(self.last_time) <= LINUX_HZ / 32 {
            return;
        }
        // At most one cnt computation per jiffy; a reduction clears the
        // epoch and forces one.
        if !(self.epoch_start.is_some() && jiffies == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = jiffies;
            if self.epoch_start.is_none() {
                self.epoch_start = Some(jiffies);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.bic_k = 0;
                    self.bic_origin_point = cwnd;
                } else {
                    // K = cbrt((W_max − cwnd)·2^40/(410)) in 2⁻¹⁰ s
                    self.bic_k = cubic_root(
                        self.cube_factor
                            .wrapping_mul((self.last_max_cwnd - cwnd) as u64),
                    );
                    self.bic_origin_point = self.last_max_cwnd;
                }
            }
            let epoch = self.epoch_start.expect("set above");
            let t = jiffies.saturating_sub(epoch) + usecs_to_jiffies(self.delay_min);
            let t = (t << BICTCP_HZ) / LINUX_HZ;
            let k = self.bic_k as u64;
            let offs = t.abs_diff(k);
            // c/rtt·(t − K)³, wrapping in u64 as the kernel's expression does
            let delta = ((self.cube_rtt_scale as u64)
                .wrapping_mul(offs)
                .wrapping_mul(offs)
                .wrapping_mul(offs)
                >> (10 + 3 * BICTCP_HZ)) as u32;
            let bic_target = if t < k {
                self.bic_origin_point.wrapping_sub(delta)
            } else {
                self.bic_origin_point.wrapping_add(delta)
            };
            self.cnt = if bic_target > cwnd {
                cwnd / (bic_target - cwnd)
            } else {
                100u32.wrapping_mul(cwnd) // very small increment
            };
            // Before the first loss the bandwidth is unknown: grow at least
            // 5 % per RTT.
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        if self.tcp_friendliness {
            let d = ((cwnd as u64 * self.beta_scale as u64) >> 3).max(1) as u32;
            while self.ack_cnt > d {
                self.ack_cnt -= d;
                self.tcp_cwnd += 1;
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                if self.cnt > max_cnt {
                    self.cnt = max_cnt;
                }
            }
        }
        // at most +1 segment per 2 ACKed: 1.5× per RTT
        self.cnt = self.cnt.max(2);
    }

    /// `hystart_update(sk, delay)`; returns true when the exit is found.
    fn hystart_update(&mut self, s: &CcState, delay: u32) -> bool {
        if s.snd_una > self.end_seq {
            self.hystart_reset(s);
        }
        let mut found = false;
        if matches!(self.detect, HystartDetect::Both | HystartDetect::AckTrain) {
            let now = s.now / 1000;
            if now.saturating_sub(self.last_ack) <= self.hystart_ack_delta_us as u64 {
                self.last_ack = now;
                // delay_min + hystart_ack_delay(sk), halved without pacing;
                // hystart_ack_delay (the TSO/GRO cushion) is 0 here.
                let threshold = (self.delay_min >> 1) as u64;
                if now.saturating_sub(self.round_start) > threshold {
                    found = true;
                }
            }
        }
        if matches!(self.detect, HystartDetect::Both | HystartDetect::Delay) {
            if self.curr_rtt > delay {
                self.curr_rtt = delay;
            }
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh =
                    (self.delay_min >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
                if self.curr_rtt as u64 > self.delay_min as u64 + thresh as u64 {
                    found = true;
                }
            }
        }
        found
    }
}

impl CongestionControl for CubicLinux {
    fn name(&self) -> &'static str {
        "cubic"
    }

    /// `cubictcp_acked`.
    fn on_rtt(&mut self, s: &CcState, rtt: Time, _acked: u32) {
        // Discard delay samples right after fast recovery.
        if let Some(epoch) = self.epoch_start {
            if Self::jiffies(s.now).saturating_sub(epoch) < LINUX_HZ {
                return;
            }
        }
        let delay = ((rtt / 1000).min(u32::MAX as u64) as u32).max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        let cwnd = s.cwnd.floor().max(1.0) as u32;
        let ssthresh = self.pending_ssthresh.map_or(s.ssthresh, |t| t as f64);
        if !self.found
            && (cwnd as f64) < ssthresh
            && self.hystart
            && cwnd >= self.hystart_low_window
            && self.hystart_update(s, delay)
        {
            self.found = true;
            self.pending_ssthresh = Some(cwnd);
        }
    }

    /// `cubictcp_cong_avoid` with `tcp_slow_start` and `tcp_cong_avoid_ai`.
    fn on_ack(&mut self, s: &mut CcState, acked: u32) {
        self.episode.end();
        if let Some(th) = self.pending_ssthresh.take() {
            s.ssthresh = th as f64;
        }
        let mut cwnd = s.cwnd.floor().max(1.0) as u32;
        let mut acked = acked.max(1);
        if (cwnd as f64) < s.ssthresh {
            // tcp_slow_start: byte counting, capped at ssthresh; the rest
            // of the ACK goes to congestion avoidance.
            let ssthresh = s.ssthresh.min(u32::MAX as f64) as u32;
            let new = cwnd.saturating_add(acked).min(ssthresh);
            acked -= new - cwnd;
            cwnd = new;
            s.cwnd = cwnd as f64;
            if acked == 0 {
                return;
            }
        }
        self.update(cwnd, acked, s.now);
        // tcp_cong_avoid_ai(tp, cnt, acked)
        let w = self.cnt.max(1);
        if self.snd_cwnd_cnt >= w {
            self.snd_cwnd_cnt = 0;
            cwnd += 1;
        }
        self.snd_cwnd_cnt += acked;
        if self.snd_cwnd_cnt >= w {
            let delta = self.snd_cwnd_cnt / w;
            self.snd_cwnd_cnt -= delta * w;
            cwnd += delta;
        }
        s.cwnd = cwnd as f64;
    }

    /// `cubictcp_recalc_ssthresh`, from `snd_cwnd` (Linux does not inflate
    /// it during recovery; see `reduction_view` for the inflated sender).
    fn ssthresh(&mut self, s: &CcState) -> f64 {
        let view = self.episode.reduce_from(s);
        self.pending_ssthresh = None;
        let cwnd = view.cwnd.floor().max(1.0) as u32;
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.fast_convergence {
            ((cwnd as u64 * (BICTCP_BETA_SCALE + self.beta as u64)) / (2 * BICTCP_BETA_SCALE))
                as u32
        } else {
            cwnd
        };
        ((cwnd as u64 * self.beta as u64 / BICTCP_BETA_SCALE).max(2)) as f64
    }

    fn on_recovery_exit(&mut self, _s: &mut CcState) {
        self.episode.end();
    }

    /// `cubictcp_state(TCP_CA_Loss)`: `bictcp_reset` and
    /// `bictcp_hystart_reset`.
    fn on_timeout(&mut self, s: &CcState) {
        self.reset();
        self.hystart_reset(s);
        self.pending_ssthresh = None;
        self.snd_cwnd_cnt = 0;
    }
}

// ------------------------------------------------------------- ns-3 3.44

/// ns-3 `TcpCubic::HyStartDelayMin`, µs.
const NS3_HYSTART_DELAY_MIN_US: u64 = 4000;
/// ns-3 `TcpCubic::HyStartDelayMax`, µs.
const NS3_HYSTART_DELAY_MAX_US: u64 = 1_000_000;
/// ns-3 `TcpCubic::CubicDelta`: delay samples discarded this long after an
/// epoch starts.
const NS3_CUBIC_DELTA: Time = 10_000_000;
/// ns-3 `TcpCubic::CntClamp`.
const NS3_CNT_CLAMP: u32 = 20;

/// CUBIC as ns-3 3.44 codes it (`src/internet/model/tcp-cubic.cc`), a port
/// of Linux `tcp_cubic.c` that differs from it in ways that move results:
/// - HyStart: the ACK train ends slow start once a round lasts longer than
///   `delay_min` (Linux: `delay_min/2`); the delay detector's threshold is
///   `clamp(delay_min, 4 ms, 1000 ms)` (Linux: `clamp(delay_min/8, 4 ms,
///   16 ms)`), so the RTT must about double; it runs while `cwnd ≤
///   ssthresh` and `cwnd ≥ HyStartLowWindow` (16); a round ends when an ACK
///   passes the highest sequence sent at its start;
/// - slow start: `cwnd += segmentsAcked` (byte counting) with no cap at
///   ssthresh and nothing carried into congestion avoidance;
/// - `Update`: `K = ((W_max − cwnd)/C)^(1/3)` and `t = now + delay_min −
///   epoch` in double-precision seconds, `delta = C·|t − K|³` truncated to
///   an integer, `cnt = cwnd/(target − cwnd)` or `100·cwnd`, `cnt ≤
///   CntClamp (20)` while `W_max == 0`, the Reno estimate with
///   `scale = ⌊8(1024 + 1024β)/3/(1024 − 1024β)⌋`, `max(cnt, 2)`; no
///   once-per-jiffy or HZ/32 hold; at most +1 segment per ACK
///   (`m_cWndCnt ≥ cnt` → `cwnd += 1`, `m_cWndCnt −= cnt`);
/// - `GetSsThresh`: `max(⌊cwnd·β⌋, 2)` from cwnd; fast convergence
///   `W_max = ⌊cwnd(1 + β)/2⌋`; `β = 0.7`, `C = 0.4` (doubles);
/// - the delay samples are SRTTs: `TcpSocketBase` calls `PktsAcked` with
///   `m_tcb->m_srtt` (the estimate after this ACK's sample), so `delay_min`
///   is the smallest SRTT and HyStart's delay detector compares SRTTs
///   (Linux: the ACK's own RTT sample);
/// - delay samples are discarded for `CubicDelta` = 10 ms after an epoch
///   starts (Linux: 1 s);
/// - a timeout (`CA_LOSS`, `CubicReset`) clears the origin, K, the Reno
///   estimate, `delay_min` and HyStart's `found`, but **keeps W_max**
///   (Linux clears it).
pub struct CubicNs3 {
    beta: f64,
    c: f64,
    fast_convergence: bool,
    tcp_friendliness: bool,
    hystart: bool,
    detect: HystartDetect,
    low_window: u32,
    ack_delta: Time,
    cwnd_cnt: u32,
    last_max_cwnd: u32,
    bic_origin_point: u32,
    bic_k: f64,
    delay_min: Option<Time>,
    epoch_start: Option<Time>,
    found: bool,
    round_start: Time,
    end_seq: u32,
    last_ack: Time,
    curr_rtt: Option<Time>,
    sample_cnt: u32,
    ack_cnt: u32,
    tcp_cwnd: u32,
    cnt: u32,
    pending_ssthresh: Option<u32>,
    episode: LossEpisode,
}

impl CubicNs3 {
    pub fn new(cfg: &CubicConfig) -> Self {
        CubicNs3 {
            beta: cfg.beta(),
            c: cfg.c(),
            fast_convergence: cfg.fast_convergence,
            tcp_friendliness: cfg.tcp_friendliness,
            hystart: cfg.hystart(),
            detect: cfg.hystart_detect.unwrap_or_default(),
            low_window: cfg.hystart_low_window.unwrap_or(HYSTART_LOW_WINDOW),
            ack_delta: cfg.hystart_ack_delta_us.unwrap_or(HYSTART_ACK_DELTA_US) as Time * 1000,
            cwnd_cnt: 0,
            last_max_cwnd: 0,
            bic_origin_point: 0,
            bic_k: 0.0,
            delay_min: None,
            epoch_start: None,
            found: false,
            round_start: 0,
            end_seq: 0,
            last_ack: 0,
            curr_rtt: None,
            sample_cnt: 0,
            ack_cnt: 0,
            tcp_cwnd: 0,
            cnt: 0,
            pending_ssthresh: None,
            episode: LossEpisode::default(),
        }
    }

    /// `cnt` last computed by `Update`.
    pub fn cnt(&self) -> u32 {
        self.cnt
    }

    /// `m_lastMaxCwnd`, segments.
    pub fn last_max_cwnd(&self) -> u32 {
        self.last_max_cwnd
    }

    /// HyStart found the slow-start exit (`m_found`).
    pub fn hystart_found(&self) -> bool {
        self.found
    }

    /// `HystartReset`.
    fn hystart_reset(&mut self, s: &CcState) {
        self.round_start = s.now;
        self.last_ack = s.now;
        self.end_seq = s.snd_nxt;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// `TcpCubic::Update`.
    fn update(&mut self, seg_cwnd: u32, acked: u32, now: Time) -> u32 {
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        if self.epoch_start.is_none() {
            self.epoch_start = Some(now);
            self.ack_cnt = acked;
            self.tcp_cwnd = seg_cwnd;
            if self.last_max_cwnd <= seg_cwnd {
                self.bic_k = 0.0;
                self.bic_origin_point = seg_cwnd;
            } else {
                self.bic_k = ((self.last_max_cwnd - seg_cwnd) as f64 / self.c).powf(1.0 / 3.0);
                self.bic_origin_point = self.last_max_cwnd;
            }
        }
        let epoch = self.epoch_start.expect("set above");
        let t = crate::engine::to_secs((now + self.delay_min.unwrap_or(0)).saturating_sub(epoch));
        let offs = (t - self.bic_k).abs();
        let delta = (self.c * offs.powi(3)) as u32;
        let target = if t < self.bic_k {
            self.bic_origin_point.wrapping_sub(delta)
        } else {
            self.bic_origin_point.wrapping_add(delta)
        };
        let mut cnt = if target > seg_cwnd {
            seg_cwnd / (target - seg_cwnd)
        } else {
            100u32.wrapping_mul(seg_cwnd)
        };
        if self.last_max_cwnd == 0 && cnt > NS3_CNT_CLAMP {
            cnt = NS3_CNT_CLAMP;
        }
        if self.tcp_friendliness {
            let scale =
                (8.0 * (1024.0 + self.beta * 1024.0) / 3.0 / (1024.0 - self.beta * 1024.0)) as u32;
            let d = ((seg_cwnd as u64 * scale as u64) >> 3).max(1) as u32;
            while self.ack_cnt > d {
                self.ack_cnt -= d;
                self.tcp_cwnd += 1;
            }
            if self.tcp_cwnd > seg_cwnd {
                let max_cnt = seg_cwnd / (self.tcp_cwnd - seg_cwnd);
                cnt = cnt.min(max_cnt);
            }
        }
        self.cnt = cnt.max(2);
        self.cnt
    }
}

impl CongestionControl for CubicNs3 {
    fn name(&self) -> &'static str {
        "cubic"
    }

    /// `TcpCubic::PktsAcked` and `HystartUpdate`. ns-3's `TcpSocketBase`
    /// passes the smoothed RTT (`m_tcb->m_srtt`, updated from this ACK's
    /// sample first), not the ACK's own sample, so `delay_min` is the
    /// smallest SRTT and HyStart's round minimum is taken over SRTTs.
    fn on_rtt(&mut self, s: &CcState, sample: Time, _acked: u32) {
        let rtt = s.srtt.unwrap_or(sample);
        if let Some(e) = self.epoch_start {
            if s.now.saturating_sub(e) < NS3_CUBIC_DELTA {
                return;
            }
        }
        if self.delay_min.is_none_or(|d| d > rtt) {
            self.delay_min = Some(rtt);
        }
        let cwnd = s.cwnd.floor().max(1.0) as u32;
        let ssthresh = self.pending_ssthresh.map_or(s.ssthresh, |t| t as f64);
        if !(self.hystart && cwnd as f64 <= ssthresh && cwnd >= self.low_window) || self.found {
            return;
        }
        let delay_min = self.delay_min.expect("set above");
        let now = s.now;
        if now.saturating_sub(self.last_ack) <= self.ack_delta {
            self.last_ack = now;
            if now.saturating_sub(self.round_start) > delay_min
                && matches!(self.detect, HystartDetect::Both | HystartDetect::AckTrain)
            {
                self.found = true;
            }
        }
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            if self.curr_rtt.is_none_or(|c| c > rtt) {
                self.curr_rtt = Some(rtt);
            }
            self.sample_cnt += 1;
        } else {
            let thresh =
                (delay_min / 1000).clamp(NS3_HYSTART_DELAY_MIN_US, NS3_HYSTART_DELAY_MAX_US) * 1000;
            if self.curr_rtt.is_some_and(|c| c > delay_min + thresh)
                && matches!(self.detect, HystartDetect::Both | HystartDetect::Delay)
            {
                self.found = true;
            }
        }
        if self.found {
            self.pending_ssthresh = Some(cwnd);
        }
    }

    /// `TcpCubic::IncreaseWindow`.
    fn on_ack(&mut self, s: &mut CcState, acked: u32) {
        self.episode.end();
        if let Some(th) = self.pending_ssthresh.take() {
            s.ssthresh = th as f64;
        }
        let mut cwnd = s.cwnd.floor().max(1.0) as u32;
        let mut acked = acked.max(1);
        if (cwnd as f64) < s.ssthresh {
            if self.hystart && s.snd_una > self.end_seq {
                self.hystart_reset(s);
            }
            cwnd += acked;
            acked = 0;
        }
        if cwnd as f64 >= s.ssthresh && acked > 0 {
            self.cwnd_cnt += acked;
            let cnt = self.update(cwnd, acked, s.now);
            if self.cwnd_cnt >= cnt {
                cwnd += 1;
                self.cwnd_cnt -= cnt;
            }
        }
        s.cwnd = cwnd as f64;
    }

    /// `TcpCubic::GetSsThresh`.
    fn ssthresh(&mut self, s: &CcState) -> f64 {
        let view = self.episode.reduce_from(s);
        self.pending_ssthresh = None;
        let cwnd = view.cwnd.floor().max(1.0) as u32;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.fast_convergence {
            (cwnd as f64 * (1.0 + self.beta) / 2.0) as u32
        } else {
            cwnd
        };
        self.epoch_start = None;
        ((cwnd as f64 * self.beta) as u32).max(2) as f64
    }

    fn on_recovery_exit(&mut self, _s: &mut CcState) {
        self.episode.end();
    }

    /// `CongestionStateSet(CA_LOSS)`: `CubicReset` and `HystartReset`.
    fn on_timeout(&mut self, s: &CcState) {
        self.bic_origin_point = 0;
        self.bic_k = 0.0;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.delay_min = None;
        self.found = false;
        self.pending_ssthresh = None;
        self.hystart_reset(s);
    }
}

impl super::registry::Registered for CubicConfig {
    const KIND: &'static str = "cubic";
    const ABOUT: &'static str = "CUBIC (RFC 9438; variant \"linux-2.6.22\": ns-2.35 tcp-linux CUBIC v2.1; \"linux\": today's Linux tcp_cubic.c; \"ns3\": ns-3 3.44 TcpCubic)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("variant", "", "\"rfc9438\", \"linux-2.6.22\", \"linux\" or \"ns3\"", "\"bsd\"", "which CUBIC"),
        crate::registry::param!("beta", "factor", "(0, 1); default 0.7 (rfc9438, ns3), 0.8 (linux-2.6.22) or 717/1024 (linux)", "1.5", "multiplicative decrease β"),
        crate::registry::param!("c", "segments/s³", "> 0; default 0.4", "0.0", "cubic scaling constant C"),
        crate::registry::param!("fast_convergence", "", "true/false", "", "release bandwidth faster after a reduction"),
        crate::registry::param!("tcp_friendliness", "", "true/false", "", "Reno-friendly region"),
        crate::registry::param!("hystart", "", "true/false; default false (rfc9438: HyStart++), true (linux, ns3: HyStart); none in linux-2.6.22", "", "slow-start exit"),
        crate::registry::param!("hystart_detect", "", "\"both\", \"ack-train\" or \"delay\" (linux, ns3)", "\"rtt\"", "HyStart detectors"),
        crate::registry::param!("hystart_low_window", "segments", "≥ 1; default 16 (linux, ns3)", "0", "HyStart runs from this window"),
        crate::registry::param!("hystart_ack_delta_us", "µs", "default 2000 (linux, ns3)", "", "ACK spacing still counted as a train"),
        crate::registry::param!("max_increment", "segments", "≥ 1", "0", "cap on growth per RTT"),
        crate::registry::param!("timestamps", "", "true/false", "", "RTT from timestamps"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        CubicConfig::validate(self)
    }
}

impl super::registry::CcAlgorithm for CubicConfig {
    fn build(&self) -> Box<dyn CongestionControl> {
        Cubic::build(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::secs;

    fn st(cwnd: f64, ssthresh: f64) -> CcState {
        let mut s = CcState::with_window(cwnd, ssthresh, 1000);
        s.srtt = Some(secs(0.1));
        s
    }

    /// Drive one "RTT round": `cwnd` ACKs of one segment each, spread over
    /// `rtt`, the clock advancing.
    fn round(cc: &mut dyn CongestionControl, s: &mut CcState, rtt: Time) {
        let n = s.cwnd.floor().max(1.0) as u64;
        for _ in 0..n {
            s.now += rtt / n;
            s.in_flight = s.cwnd as u32;
            cc.on_rtt(s, rtt, 1);
            cc.on_ack(s, 1);
        }
    }

    #[test]
    fn k_and_w_cubic_match_rfc_eq_1_2() {
        // W_max = 1000, β = 0.7: cwnd_epoch = 700, K = cbrt(300/0.4) = 9.0856 s.
        let k = k_of(0.4, 1000.0, 700.0);
        assert!((k - 750f64.cbrt()).abs() < 1e-12);
        assert!((k - 9.0856).abs() < 1e-4, "{k}");
        assert!((w_cubic(0.4, k, 1000.0, 0.0) - 700.0).abs() < 1e-9);
        assert!((w_cubic(0.4, k, 1000.0, k) - 1000.0).abs() < 1e-9);
        // convex beyond K: W(K + 2) = 1000 + 0.4·8
        assert!((w_cubic(0.4, k, 1000.0, k + 2.0) - 1003.2).abs() < 1e-9);
    }

    #[test]
    fn rfc_reduction_beta_and_fast_convergence() {
        let cfg = CubicConfig::default();
        let mut cc = CubicRfc9438::new(&cfg);
        let mut s = st(1000.0, 500.0);
        s.in_flight = 1000;
        assert!((cc.ssthresh(&s) - 700.0).abs() < 1e-9);
        assert_eq!(cc.w_max(), Some(1000.0));
        // a second loss below W_max: fast convergence, W_max = cwnd(1+β)/2
        cc.on_recovery_exit(&mut s);
        s.cwnd = 900.0;
        s.in_flight = 900;
        assert!((cc.ssthresh(&s) - 630.0).abs() < 1e-9);
        assert!((cc.w_max().unwrap() - 900.0 * 1.7 / 2.0).abs() < 1e-9);
        // without fast convergence W_max = cwnd
        let mut cc = CubicRfc9438::new(&CubicConfig {
            fast_convergence: false,
            ..cfg
        });
        s.cwnd = 1000.0;
        cc.ssthresh(&s);
        cc.on_recovery_exit(&mut s);
        s.cwnd = 900.0;
        cc.ssthresh(&s);
        assert_eq!(cc.w_max(), Some(900.0));
    }

    #[test]
    fn timeout_during_recovery_reduces_from_uninflated_window() {
        let mut cc = CubicRfc9438::new(&CubicConfig::default());
        let mut s = st(1000.0, 1e9);
        s.in_flight = 1000;
        s.ssthresh = cc.ssthresh(&s); // 700
                                      // fast recovery inflated cwnd and flight to 1500
        s.cwnd = 1500.0;
        s.in_flight = 1500;
        let th = cc.ssthresh(&s); // RTO: from min(cwnd, ssthresh) = 700
        assert!((th - 490.0).abs() < 1e-9, "{th}");
        assert_eq!(cc.w_max(), Some(700.0 * 1.7 / 2.0));
    }

    #[test]
    fn rfc_window_tracks_w_cubic_and_reaches_w_max_at_k() {
        // W_max = 1000 segments, RTT 100 ms: the cubic region governs (the
        // Reno estimate grows 0.53 segment per RTT).
        let cfg = CubicConfig::default();
        let mut cc = CubicRfc9438::new(&cfg);
        let mut s = st(1000.0, 1e9);
        s.in_flight = 1000;
        s.ssthresh = cc.ssthresh(&s);
        s.cwnd = s.ssthresh; // recovery exit
        let rtt = secs(0.1);
        s.srtt = Some(rtt);
        round(&mut cc, &mut s, rtt);
        let start = cc.epoch_start().unwrap();
        let k = cc.k().unwrap();
        assert!((k - 750f64.cbrt()).abs() < 1e-9);
        let mut worst = 0f64;
        let mut at_k = None;
        while to_secs(s.now - start) < k + 3.0 {
            round(&mut cc, &mut s, rtt);
            let t = to_secs(s.now - start);
            let w = w_cubic(0.4, k, 1000.0, t);
            worst = worst.max((s.cwnd - w).abs());
            if at_k.is_none() && t >= k {
                at_k = Some(s.cwnd);
            }
        }
        // cwnd += (W(t + RTT) − cwnd)/cwnd per ACK is a first-order lag of
        // one RTT behind W(t + RTT), i.e. cwnd(t) ≈ W(t).
        assert!(worst < 1.0, "max |cwnd − W_cubic(t)| = {worst:.3} segments");
        let at_k = at_k.unwrap();
        assert!((at_k - 1000.0).abs() < 1.0, "cwnd at t = K: {at_k:.2}");
    }

    #[test]
    fn rfc_reno_friendly_region_at_small_window() {
        // Small window, short RTT (small BDP): W_cubic grows slower than
        // Reno's estimate, the Reno-friendly region governs.
        let mut cc = CubicRfc9438::new(&CubicConfig::default());
        let mut s = st(20.0, 1e9);
        s.in_flight = 20;
        s.ssthresh = cc.ssthresh(&s);
        s.cwnd = s.ssthresh; // 14
        let rtt = secs(0.01);
        s.srtt = Some(rtt);
        let c0 = s.cwnd;
        for _ in 0..10 {
            round(&mut cc, &mut s, rtt);
        }
        // α_cubic = 3·0.3/1.7 = 0.529 per RTT while W_est < cwnd_prior (20)
        let alpha = 3.0 * 0.3 / 1.7;
        let grown = s.cwnd - c0;
        assert!(
            (grown - 10.0 * alpha).abs() < 0.5,
            "grew {grown:.3} in 10 RTTs, Reno-friendly estimate {:.3}",
            10.0 * alpha
        );
        // W_cubic alone would have grown far less in these 0.1 s
        let k = k_of(0.4, 20.0, 14.0);
        let wc = w_cubic(0.4, k, 20.0, 0.1 + 0.01) - 14.0;
        assert!(wc < 0.5 * grown, "W_cubic growth {wc:.3}");
    }

    #[test]
    fn rfc_timeout_restarts_with_k_zero() {
        let mut cc = CubicRfc9438::new(&CubicConfig::default());
        let mut s = st(100.0, 1e9);
        s.in_flight = 100;
        s.ssthresh = cc.ssthresh(&s);
        cc.on_timeout(&s);
        s.cwnd = 70.0;
        cc.on_ack(&mut s, 1);
        assert_eq!(cc.k(), Some(0.0));
        assert_eq!(cc.w_max(), Some(70.0));
    }

    #[test]
    fn hystart_enters_css_on_rtt_increase_then_ca() {
        let cfg = CubicConfig {
            hystart: Some(true),
            ..Default::default()
        };
        let mut cc = CubicRfc9438::new(&cfg);
        let mut s = st(10.0, 1e9);
        let mut rtt = secs(0.05);
        let mut seq = 0u32;
        // rounds: snd_una advances by cwnd each round
        for r in 0..20 {
            if r >= 3 {
                rtt += secs(0.02); // queue builds: +20 ms per round
            }
            let n = s.cwnd.floor() as u32;
            s.snd_nxt = seq + n;
            for _ in 0..n {
                seq += 1;
                s.snd_una = seq;
                s.now += rtt / n as u64;
                cc.on_rtt(&s, rtt, 1);
                cc.on_ack(&mut s, 1);
            }
            if s.ssthresh < 1e9 {
                break;
            }
        }
        // CSS was entered at the first round with +20 ms (> 50/8 = 6.25 ms)
        // and CA after CSS_ROUNDS = 5 rounds of +25 % growth.
        assert!(s.ssthresh < 1e9, "still in slow start, cwnd {}", s.cwnd);
        assert!(!cc.in_css());
        // without HyStart++ cwnd would be 10·2^r; CSS grows 25 % per round
        assert!(
            s.ssthresh > 80.0 && s.ssthresh < 400.0,
            "cwnd at CSS exit {}",
            s.ssthresh
        );
    }

    #[test]
    fn linux_constants_and_beta() {
        let cfg = CubicConfig {
            variant: Some(CubicVariant::Linux2622),
            ..Default::default()
        };
        let mut cc = CubicLinux2622::new(&cfg);
        let mut s0 = st(1.0, 1e9);
        assert_eq!(cc.beta, 819);
        assert_eq!(cc.cube_rtt_scale, 410);
        assert_eq!(cc.beta_scale, 23);
        assert_eq!(cc.cube_factor, (1u64 << 40) / 410);
        let s = st(1000.0, 1e9);
        assert_eq!(cc.ssthresh(&s), 799.0); // 1000·819/1024 = 799.8 → 799
        assert_eq!(cc.last_max_cwnd(), 1000);
        cc.on_recovery_exit(&mut s0);
        let s = st(900.0, 1e9);
        assert_eq!(cc.ssthresh(&s), 719.0);
        // fast convergence: 900·(1024+819)/2048 = 809.9 → 809
        assert_eq!(cc.last_max_cwnd(), 809);
    }

    #[test]
    fn linux_cnt_is_50_before_first_loss_and_cubic_after() {
        let cfg = CubicConfig {
            variant: Some(CubicVariant::Linux2622),
            timestamps: false,
            ..Default::default()
        };
        let mut cc = CubicLinux2622::new(&cfg);
        let mut s = st(100.0, 50.0);
        s.now = secs(1.0);
        cc.on_ack(&mut s, 2);
        // cnt = 50 · 16 / delayed_ack(32 + 2 − 2 = 32) = 25
        assert_eq!(cc.cnt(), 25);
        // after a loss at 100: K = cbrt(2^40/410 · 20) in 2^-10 s ≈ 3.68 s
        s.cwnd = 100.0;
        s.ssthresh = cc.ssthresh(&s); // 79
        s.cwnd = s.ssthresh + 1.0; // 80 > ssthresh: congestion avoidance
        cc.on_ack(&mut s, 2);
        let k = cc.bic_k as f64 / 1024.0;
        assert!(
            (k - (20.0f64 / (410.0 / 1024.0)).cbrt()).abs() < 0.01,
            "K {k}"
        );
        // t = 0: delta = ⌊410·K³/2⁴⁰⌋ = 19 (K truncated), target = 100 − 19
        // = 81, cnt = 80/(81 − 80) = 80, halved by the delayed-ACK ratio 2
        assert_eq!(cc.cnt(), 40);
    }

    #[test]
    fn validation_messages() {
        let c = CubicConfig {
            variant: Some(CubicVariant::Linux2622),
            hystart: Some(true),
            ..Default::default()
        };
        let (k, m) = c.validate().unwrap_err();
        assert_eq!(k, "hystart");
        assert!(m.contains("no HyStart"), "{m}");
        let c = CubicConfig {
            beta: Some(1.2),
            ..Default::default()
        };
        assert_eq!(c.validate().unwrap_err().0, "beta");
    }
    // ------------------------------------------------ variant = "linux"

    fn linux() -> CubicLinux {
        CubicLinux::new(&CubicConfig {
            variant: Some(CubicVariant::Linux),
            ..Default::default()
        })
    }

    /// Linux `cubic_root` (table + one Newton step), values traced by hand
    /// through the kernel's integer steps, and its error bound on the
    /// inputs CUBIC feeds it (`cube_factor·(W_max − cwnd)`).
    #[test]
    fn linux_cubic_root_matches_kernel_arithmetic() {
        // a < 64: table only, (v[a] + 35) >> 6
        for (a, r) in [(0, 0), (1, 1), (8, 2), (27, 3), (63, 4)] {
            assert_eq!(cubic_root(a), r, "cubic_root({a})");
        }
        // exact cubes survive the Newton step
        assert_eq!(cubic_root(1000), 10);
        assert_eq!(cubic_root(1_000_000), 100);
        let cf = (1u64 << 40) / 410;
        assert_eq!(cf, 2_681_735_677);
        // K for W_max − cwnd = 1, 20, 283, 300 segments (2⁻¹⁰ s)
        assert_eq!(cubic_root(cf), 1388); // exact 1389.33
        assert_eq!(cubic_root(cf * 20), 3770); // exact 3771.22
        assert_eq!(cubic_root(cf * 283), 9125); // exact 9121.53
        assert_eq!(cubic_root(cf * 300), 9294); // exact 9300.63
        let mut worst = 0f64;
        for d in 1..20_000u64 {
            let a = cf * d;
            let exact = (a as f64).cbrt();
            worst = worst.max((cubic_root(a) as f64 - exact).abs() / exact);
        }
        // the kernel's comment: average error ≈ 0.195 %
        assert!(worst < 0.002, "worst relative error {worst}");
    }

    /// `bictcp_update` for W_max = 1000, cwnd = 717 (β = 717/1024 after a
    /// loss at 1000), delay_min = 100 ms: K = 9125/1024 s; t includes
    /// delay_min (102/1024 s at the epoch start); target and cnt as the
    /// kernel computes them.
    #[test]
    fn linux_bictcp_update_matches_kernel_arithmetic() {
        let mut cc = linux();
        cc.last_max_cwnd = 1000;
        cc.delay_min = 100_000;
        let t0 = secs(10.0);
        cc.update(717, 1, t0);
        assert_eq!(cc.bic_k(), 9125);
        // t = 102: offs = 9023, delta = 410·9023³ >> 40 = 273, target 727,
        // cnt = 717/(727 − 717) = 71
        assert_eq!(cc.cnt(), 71);
        // 2 s later (epoch unchanged): t = 2150, delta 126, target 874,
        // cnt = 717/157 = 4
        cc.update(717, 1, t0 + secs(2.0));
        assert_eq!(cc.cnt(), 4);
        // 6 s later: target 992, cnt 2 (717/275 = 2, and cnt ≥ 2 anyway)
        cc.update(717, 1, t0 + secs(6.0));
        assert_eq!(cc.cnt(), 2);
        // within HZ/32 of the last update with cwnd unchanged: no update
        cc.cnt = 1234;
        cc.update(717, 1, t0 + secs(6.0) + 20_000_000);
        assert_eq!(cc.cnt(), 1234);
    }

    #[test]
    fn linux_beta_717_and_fast_convergence() {
        let mut cc = linux();
        let mut s = st(1000.0, 1e9);
        // ⌊1000·717/1024⌋ = 700
        assert_eq!(cc.ssthresh(&s), 700.0);
        assert_eq!(cc.last_max_cwnd(), 1000);
        cc.on_recovery_exit(&mut s);
        let s = st(900.0, 1e9);
        // ⌊900·717/1024⌋ = 630; fast convergence ⌊900·1741/2048⌋ = 765
        assert_eq!(cc.ssthresh(&s), 630.0);
        assert_eq!(cc.last_max_cwnd(), 765);
        let mut cc = CubicLinux::new(&CubicConfig {
            variant: Some(CubicVariant::Linux),
            fast_convergence: false,
            ..Default::default()
        });
        cc.ssthresh(&st(1000.0, 1e9));
        cc.on_recovery_exit(&mut st(1.0, 1.0));
        cc.ssthresh(&st(900.0, 1e9));
        assert_eq!(cc.last_max_cwnd(), 900);
    }

    /// Before the first loss (`last_max_cwnd == 0`) `cnt` is capped at 20:
    /// cwnd grows 5 % per RTT even where the cubic curve is flat; after a
    /// loss the same state gives `cnt = 100·cwnd`.
    #[test]
    fn linux_cnt_capped_at_20_before_first_loss() {
        let mut cc = linux();
        let mut s = st(100.0, 50.0);
        s.now = secs(1.0);
        let rtt = secs(0.1);
        round(&mut cc, &mut s, rtt);
        assert_eq!(cc.cnt(), 20);
        // 100 ACKs of one segment at cnt = 20: +5 segments in the RTT
        assert!((s.cwnd - 105.0).abs() <= 1.0, "cwnd {}", s.cwnd);
        let c0 = s.cwnd;
        for _ in 0..10 {
            round(&mut cc, &mut s, rtt);
        }
        let per_rtt = (s.cwnd / c0).powf(0.1) - 1.0;
        assert!(
            (per_rtt - 0.05).abs() < 0.005,
            "growth {:.2} %/RTT",
            per_rtt * 100.0
        );
        // after a loss at this window, with cwnd back at W_max: no cap
        let w = s.cwnd.floor();
        let mut s2 = st(w, 1e9);
        s2.now = s.now;
        s2.ssthresh = cc.ssthresh(&s2);
        cc.on_recovery_exit(&mut s2);
        s2.cwnd = w; // at W_max: K = 0, target ≈ cwnd
        s2.now += secs(2.0);
        cc.on_ack(&mut s2, 1);
        assert_eq!(cc.cnt(), 100 * w as u32);
        // a timeout resets the state: the cap is back
        cc.on_timeout(&s2);
        assert_eq!(cc.last_max_cwnd(), 0);
        s2.ssthresh = 10.0;
        s2.now += secs(2.0);
        cc.on_ack(&mut s2, 1);
        assert_eq!(cc.cnt(), 20);
    }

    /// Linux `tcp_slow_start`: cwnd grows by the segments an ACK covers
    /// (a delayed ACK for 2 segments adds 2), capped at ssthresh, and the
    /// rest of the ACK goes to congestion avoidance.
    #[test]
    fn linux_slow_start_counts_acked_segments() {
        let mut cc = CubicLinux::new(&CubicConfig {
            variant: Some(CubicVariant::Linux),
            hystart: Some(false),
            ..Default::default()
        });
        let mut s = st(10.0, 1e9);
        for _ in 0..5 {
            cc.on_ack(&mut s, 2);
        }
        assert_eq!(s.cwnd, 20.0, "5 delayed ACKs of 2 segments double 10");
        let mut s = st(30.0, 31.0);
        cc.on_ack(&mut s, 2);
        assert_eq!(s.cwnd, 31.0);
        assert_eq!(cc.snd_cwnd_cnt, 1, "one segment credited to CA");
    }

    /// One HyStart round: ACKs of one segment each, `gap` apart, RTT
    /// `rtt(i)` for the i-th; returns the ACK index at which HyStart set
    /// ssthresh, if it did.
    fn hystart_round(
        cc: &mut CubicLinux,
        s: &mut CcState,
        n: u32,
        gap: Time,
        rtt: impl Fn(u32) -> Time,
    ) -> Option<u32> {
        s.snd_nxt = s.snd_una + n;
        for i in 0..n {
            s.now += gap;
            s.snd_una += 1;
            cc.on_rtt(s, rtt(i), 1);
            cc.on_ack(s, 1);
            if s.ssthresh < 1e9 {
                return Some(i);
            }
        }
        None
    }

    /// HyStart ACK train: ACKs closer than `hystart_ack_delta_us` (2 ms)
    /// that keep coming for more than delay_min/2 after the round started
    /// end slow start (ssthresh = cwnd); spaced 3 ms apart they do not.
    #[test]
    fn linux_hystart_exits_on_ack_train() {
        let mut cc = linux();
        let mut s = st(16.0, 1e9);
        s.now = secs(1.0);
        let rtt = secs(0.04);
        // ACKs 1 ms apart; the round starts at the first ACK (t0), the
        // train exceeds 20 ms at the 21st ACK after it (index 21).
        let at = hystart_round(&mut cc, &mut s, 500, 1_000_000, |_| rtt);
        assert_eq!(at, Some(21));
        assert!(cc.hystart_found());
        assert_eq!(s.ssthresh, 16.0 + 21.0, "ssthresh = cwnd at the exit");
        // ACKs 3 ms apart never form a train
        let mut cc = linux();
        let mut s = st(16.0, 1e9);
        s.now = secs(1.0);
        assert_eq!(
            hystart_round(&mut cc, &mut s, 300, 3_000_000, |_| rtt),
            None
        );
        assert!(!cc.hystart_found());
        // below hystart_low_window (16) HyStart does not run
        let mut cc = linux();
        let mut s = st(4.0, 1e9);
        s.now = secs(1.0);
        assert_eq!(hystart_round(&mut cc, &mut s, 10, 1_000_000, |_| rtt), None);
    }

    /// HyStart delay: after 8 samples in a round, a round minimum above
    /// delay_min + clamp(delay_min/8, 4 ms, 16 ms) ends slow start.
    /// delay_min = 40 ms: threshold 5 ms; +6 ms exits at the 9th sample,
    /// +4 ms does not.
    #[test]
    fn linux_hystart_exits_on_delay_increase() {
        for (extra_ms, exits) in [(6, true), (4, false)] {
            let mut cc = linux();
            let mut s = st(20.0, 1e9);
            s.now = secs(1.0);
            let gap = 5_000_000; // 5 ms: no ACK train
            let base = secs(0.04);
            assert_eq!(hystart_round(&mut cc, &mut s, 20, gap, |_| base), None);
            assert_eq!(cc.delay_min_us(), 40_000);
            let up = base + extra_ms * 1_000_000;
            let at = hystart_round(&mut cc, &mut s, 40, gap, |_| up);
            if exits {
                assert_eq!(at, Some(8), "exit at the 9th sample of the round");
            } else {
                assert_eq!(at, None);
            }
        }
        // delay_min = 200 ms: threshold clamped to 16 ms (not 25 ms)
        let mut cc = linux();
        let mut s = st(20.0, 1e9);
        s.now = secs(1.0);
        let base = secs(0.2);
        hystart_round(&mut cc, &mut s, 20, 5_000_000, |_| base);
        let at = hystart_round(&mut cc, &mut s, 40, 5_000_000, |_| base + 17_000_000);
        assert_eq!(at, Some(8));
    }

    #[test]
    fn linux_validation_of_hystart_keys() {
        let c = CubicConfig {
            hystart_low_window: Some(8),
            ..Default::default()
        };
        assert_eq!(c.validate().unwrap_err().0, "hystart_low_window");
        let c = CubicConfig {
            variant: Some(CubicVariant::Linux),
            hystart_low_window: Some(0),
            ..Default::default()
        };
        assert_eq!(c.validate().unwrap_err().0, "hystart_low_window");
        assert!(CubicConfig {
            variant: Some(CubicVariant::Linux),
            ..Default::default()
        }
        .hystart());
        assert!(!CubicConfig::default().hystart());
    }
    // -------------------------------------------------- variant = "ns3"

    fn ns3() -> CubicNs3 {
        CubicNs3::new(&CubicConfig {
            variant: Some(CubicVariant::Ns3),
            ..Default::default()
        })
    }

    /// ns-3's HyStart ACK train ends slow start only once a round lasts
    /// longer than delay_min (40 ms; Linux: delay_min/2 = 20 ms).
    #[test]
    fn ns3_hystart_ack_train_waits_a_full_delay_min() {
        let mut cc = ns3();
        let mut s = st(16.0, 1e9);
        s.now = secs(1.0);
        let rtt = secs(0.04);
        let mut at = None;
        s.snd_nxt = 1000;
        for i in 0..200u32 {
            s.now += 1_000_000;
            s.snd_una += 1;
            s.srtt = Some(rtt);
            cc.on_rtt(&s, rtt, 1);
            cc.on_ack(&mut s, 1);
            if s.ssthresh < 1e9 {
                at = Some(i);
                break;
            }
        }
        // the round starts at the first ACK (reset in IncreaseWindow after
        // that ACK's PktsAcked): exit at the ACK 41 ms after it
        assert_eq!(at, Some(41));
        assert!(cc.hystart_found());
    }

    /// ns-3's delay detector needs the round's RTT above delay_min +
    /// clamp(delay_min, 4 ms, 1 s): +39 ms on 40 ms does not exit, +41 ms
    /// does (Linux exits at +6 ms).
    #[test]
    fn ns3_hystart_delay_threshold_is_delay_min() {
        for (extra_ms, exits) in [(39u64, false), (41, true)] {
            let mut cc = ns3();
            let mut s = st(20.0, 1e9);
            s.now = secs(1.0);
            let mut seq_end = 0;
            let mut exit = None;
            for round in 0..3 {
                seq_end += 20;
                s.snd_nxt = seq_end;
                let rtt = if round == 0 {
                    secs(0.04)
                } else {
                    secs(0.04) + extra_ms * 1_000_000
                };
                for i in 0..20 {
                    s.now += 5_000_000;
                    s.snd_una += 1;
                    s.srtt = Some(rtt);
                    cc.on_rtt(&s, rtt, 1);
                    cc.on_ack(&mut s, 1);
                    if s.ssthresh < 1e9 && exit.is_none() {
                        exit = Some((round, i));
                    }
                }
            }
            assert_eq!(exit.is_some(), exits, "+{extra_ms} ms: {exit:?}");
        }
    }

    /// ns-3 feeds HyStart and delay_min with the SRTT, not the ACK's own
    /// sample: samples 50 ms above a steady 40-ms SRTT do not end slow
    /// start, and delay_min is the smallest SRTT.
    #[test]
    fn ns3_hystart_reads_srtt_not_the_sample() {
        // four rounds of 20 ACKs 5 ms apart; samples 40 ms in the first
        // round, 90 ms after; the SRTT a steady 40 ms or the sample itself
        let drive = |srtt_is_sample: bool| {
            let mut cc = ns3();
            let mut s = st(20.0, 1e9);
            s.now = secs(1.0);
            let mut seq_end = 0;
            for round in 0..4 {
                seq_end += 20;
                s.snd_nxt = seq_end;
                for _ in 0..20 {
                    s.now += 5_000_000;
                    s.snd_una += 1;
                    let sample = if round == 0 { secs(0.04) } else { secs(0.09) };
                    s.srtt = Some(if srtt_is_sample { sample } else { secs(0.04) });
                    cc.on_rtt(&s, sample, 1);
                    cc.on_ack(&mut s, 1);
                }
            }
            cc
        };
        assert!(!drive(false).hystart_found(), "a +50 ms sample alone must not exit");
        // the same run fed with the samples as SRTT exits
        assert!(drive(true).hystart_found());
    }

    /// ns-3 `GetSsThresh` (β = 0.7 as a double) and `Update` arithmetic:
    /// W_max 1000, cwnd 700, delay_min 100 ms: K = (300/0.4)^(1/3) s.
    #[test]
    fn ns3_ssthresh_and_update_arithmetic() {
        let mut cc = ns3();
        assert_eq!(cc.ssthresh(&st(1000.0, 1e9)), 700.0);
        assert_eq!(cc.last_max_cwnd(), 1000);
        cc.on_recovery_exit(&mut st(1.0, 1.0));
        // fast convergence: ⌊900·1.7/2⌋ = 765
        assert_eq!(cc.ssthresh(&st(900.0, 1e9)), 630.0);
        assert_eq!(cc.last_max_cwnd(), 765);
        let mut cc = ns3();
        cc.last_max_cwnd = 1000;
        cc.delay_min = Some(secs(0.1));
        let t0 = secs(10.0);
        // t = 0.1 s, K = 9.0856 s: delta = ⌊0.4·8.9856³⌋ = 290, target
        // 710, cnt = 700/10 = 70
        assert_eq!(cc.update(700, 1, t0), 70);
        assert!((cc.bic_k - 750f64.cbrt()).abs() < 1e-12);
        // before any loss (W_max = 0): cnt ≤ 20
        let mut cc = ns3();
        assert_eq!(cc.update(100, 1, t0), 20);
    }

    /// A timeout keeps ns-3's W_max (Linux clears it).
    #[test]
    fn ns3_timeout_keeps_w_max() {
        let mut cc = ns3();
        let s = st(500.0, 1e9);
        cc.ssthresh(&s);
        cc.on_timeout(&s);
        assert_eq!(cc.last_max_cwnd(), 500);
        let mut cc = linux();
        cc.ssthresh(&s);
        cc.on_timeout(&s);
        assert_eq!(cc.last_max_cwnd(), 0);
    }
}
