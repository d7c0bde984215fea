//! BBR v3 — `cc = { kind = "bbr", variant = "v3" }`.
//!
//! Source: google/bbr branch `v3`, `net/ipv4/tcp_bbr.c` (`BBR_VERSION` 3,
//! read at commit 001a430b3ddbbc6d9173061a74d8b580c757b91b of
//! github.com/google/bbr), read with draft-ietf-ccwg-bbr (Cardwell, Swett, Beshay, "BBR Congestion
//! Control") where the two agree. Gains and thresholds are the source's
//! 8-bit fixed-point values (`BBR_UNIT` = 256): Startup pacing gain
//! 277/100 + 1/256 = 710/256, Startup and steady cwnd gain 2, Drain gain
//! 1000/2885 → 88/256, ProbeBW pacing gains UP 5/4, DOWN 91/100 → 232/256,
//! CRUISE and REFILL 1; loss threshold 2 % → 5/256, beta 30 % → 76/256,
//! ECN threshold 1/2, ECN alpha gain 1/16, ECN factor 1/3 → 85/256,
//! headroom 15 % → 38/256, ProbeRTT cwnd gain 1/2.
//!
//! - Model: `max_bw` is the max of two per-probe-cycle slots (`bw_hi`),
//!   the window advancing when a probe's feedback ends; `bw` =
//!   min(max_bw, `bw_lo`). `min_rtt` is refreshed from `probe_rtt_min`, the
//!   min RTT over 5 s (`bbr_probe_rtt_win_ms`), or taken whole after 10 s.
//! - Startup: pacing gain 2.77, cwnd gain 2; full bandwidth after 3
//!   rounds whose delivery-rate *sample* is under 1.25 × the last
//!   plateau, or on high loss (≥ 6 loss events in a recovery round with
//!   loss > 2 % of `tx_in_flight`) or 2 rounds of CE ratio ≥ 50 %, then
//!   `inflight_hi` = max(BDP budget, delivered in the last round).
//! - Drain at 88/256 until in-flight ≤ BDP budget, then ProbeBW.
//! - ProbeBW: DOWN (0.91) until in-flight ≤ min(BDP, `inflight_hi` less
//!   15 % headroom) → CRUISE (1.0, cwnd capped at that headroom level)
//!   until the probe time: 2–3 s of wall clock (`bbr_bw_probe_base_us` +
//!   random `bbr_bw_probe_rand_us`) or min(63, target in-flight)
//!   packet-timed rounds (Reno coexistence, 0–1 random rounds of head
//!   start) → REFILL (1.0, lower bounds reset) for one round → UP (1.25,
//!   cwnd gain 2.25) raising `inflight_hi` by 1, 2, 4 … segments per
//!   round's worth of ACKs while cwnd-limited, until the sample plateaus,
//!   or in-flight reaches the last too-high `inflight_hi`, or loss > 2 %
//!   / CE > 50 % of a probe sample: `inflight_hi` = max(`tx_in_flight`,
//!   (1 − 0.3) × target in-flight), then DOWN.
//! - Lower bounds (outside Startup, REFILL and UP), once per round with
//!   loss: `bw_lo` = max(`bw_latest`, 0.7 `bw_lo`), `inflight_lo` =
//!   max(`inflight_latest`, 0.7 `inflight_lo`); with ECE: `inflight_lo` ×=
//!   1 − α/3, α the EWMA (gain 1/16, from 1) of the per-round CE ratio.
//!   ECN logic runs only where `ecn = true` (Linux: the route's
//!   `TCP_ECN_LOW`) and min_rtt ≤ 5 ms (`bbr_ecn_max_rtt_us`).
//! - ProbeRTT when `probe_rtt_min` is 5 s old: cwnd = max(4, 0.5·BDP) for
//!   max(200 ms, one round), then back to CRUISE (or Startup).
//! - cwnd = BDP·gain + extra-acked, at least 3 TSO goals and 4, +2 in UP;
//!   grown by the segments ACKed (slow start below 2·init_cwnd), then
//!   bounded by `inflight_hi` (DOWN, REFILL, UP), its headroom level
//!   (CRUISE, ProbeRTT) and `inflight_lo`. There is no packet
//!   conservation: losses act through `inflight_lo`. A timeout: cwnd 1,
//!   full-bandwidth estimate reset, `inflight_lo` seeded with the cwnd
//!   before it (outside probing); on leaving the loss state cwnd is
//!   restored to the saved cwnd.
//! - Pacing = gain · bw · 0.99, never lowered before full bandwidth.
//!
//! Differences from the source, by the model: bandwidth in segments per
//! second (f64) and time in ns instead of fixed point, µs and jiffies;
//! in-flight is the sender's pipe and the EDT correction of
//! `bbr_packets_in_net_at_edt` is nil (the TSO goal of the next burst is
//! still added in UP); `tx_in_flight` is the segments outstanding when the
//! sample's segment left; the per-segment loss check of
//! `bbr_skb_marked_lost` is made on the ACK's sample (the newly lost
//! segments of an ACK mark the round lossy, as `bbr_note_loss`), as are
//! TLP-repaired losses (`bbr_run_loss_probe_recovery`) and undo
//! (`bbr_undo_cwnd`: no spurious-loss undo here); `tp->is_cwnd_limited` is
//! in-flight before the ACK ≥ cwnd; `get_random_u32_below` is SplitMix64
//! over a counter started at the flow's seed (from the scenario seed and
//! the flow id, `CongestionControl::seed`); `probe_rtt_min` takes an
//! expired-window sample whether or not its ACK was delayed
//! (`rs->is_ack_delayed` is not kept), and the latest-delivery filter is
//! advanced on TLP-retransmission ACKs too (`is_acking_tlp_retrans_seq`);
//! every ACK takes the slow path (`bbr_run_fast_path`, a CPU saving on
//! some app-limited ACKs that also skips their ACK-aggregation sample, is
//! not modelled), nor are PLB and idle restart.

use super::{CcState, CongestionControl, RateSample};
use crate::engine::Time;

/// A value of the source's 8-bit fixed point (`BBR_UNIT` = 256).
const fn fx(n: u32) -> f64 {
    n as f64 / 256.0
}

const STARTUP_PACING_GAIN: f64 = fx(256 * 277 / 100 + 1);
const STARTUP_CWND_GAIN: f64 = fx(256 * 2);
const DRAIN_GAIN: f64 = fx(256 * 1000 / 2885);
const CWND_GAIN: f64 = fx(256 * 2);
/// `bbr_pacing_gain[]`, indexed by [`Phase`].
const PACING_GAIN: [f64; 4] = [fx(256 * 5 / 4), fx(256 * 91 / 100), fx(256), fx(256)];
/// `bbr_bw_probe_cwnd_gain` = 1 quarter.
const BW_PROBE_CWND_GAIN: f64 = fx(256 / 4);
const PROBE_RTT_CWND_GAIN: f64 = fx(256 / 2);
const PACING_MARGIN: f64 = 0.01;
const CWND_MIN_TARGET: f64 = 4.0;
const FULL_BW_THRESH: f64 = fx(256 * 5 / 4);
const FULL_BW_CNT: u32 = 3;
const MIN_RTT_WIN: Time = 10_000_000_000;
const PROBE_RTT_WIN: Time = 5_000_000_000;
const PROBE_RTT_MODE: Time = 200_000_000;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET: u64 = 1 << 20;
const EXTRA_ACKED_MAX: Time = 100_000_000;
const ECN_MAX_RTT: Time = 5_000_000;
const BETA: f64 = fx(256 * 30 / 100);
/// The ECN quantities stay in the source's fixed point (α, the CE ratio
/// and the cut are 8-bit fractions): `bbr_ecn_alpha_gain`,
/// `bbr_ecn_factor`, `bbr_ecn_thresh`.
const ECN_ALPHA_GAIN: u32 = 256 / 16;
const ECN_FACTOR: u32 = 256 / 3;
const ECN_THRESH: u32 = 256 / 2;
/// One unit of the source's bandwidth fixed point (`BW_UNIT` = 2^24 per
/// packet per µs), in segments per second: `bw_lo`'s floor.
const BW_ONE: f64 = 1e6 / (1u64 << 24) as f64;
const ECN_REPROBE_GAIN: f64 = fx(256 / 2);
const LOSS_THRESH: f64 = fx(256 * 2 / 100);
const FULL_LOSS_CNT: u32 = 6;
const FULL_ECN_CNT: u32 = 2;
const INFLIGHT_HEADROOM: f64 = fx(256 * 15 / 100);
const BW_PROBE_MAX_ROUNDS: f64 = 63.0;
const BW_PROBE_RAND_ROUNDS: u64 = 2;
const BW_PROBE_BASE: Time = 2_000_000_000;
/// `bbr_bw_probe_rand_us`: 1 s, drawn in µs.
const BW_PROBE_RAND_US: u64 = 1_000_000;
/// `bbr_tso_rtt_shift`: the min_rtt allowance halves every 512 µs.
const TSO_RTT_SHIFT: u32 = 9;
/// `GSO_LEGACY_MAX_SIZE`.
const GSO_MAX_BYTES: f64 = 65536.0;
/// `MAX_TCP_HEADER` on x86-64 (`L1_CACHE_ALIGN(128 + MAX_HEADER)`).
const MAX_TCP_HEADER: f64 = 320.0;
/// `sysctl_tcp_min_tso_segs`.
const MIN_TSO_SEGS: f64 = 2.0;
/// "Unset" (`~0U`) for `inflight_hi`, `inflight_lo`, `bw_lo`.
const UNSET: f64 = f64::INFINITY;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// `bbr_pacing_gain_phase`: the ProbeBW phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Up = 0,
    Down = 1,
    Cruise = 2,
    Refill = 3,
}

/// `bbr_ack_phase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum CaState {
    Open,
    Recovery,
    Loss,
}

pub struct Bbr3 {
    ecn_ok: bool,
    initialized: bool,
    mode: Mode,
    phase: Phase,
    cwnd: f64,
    /// Segments per second (0: not set yet).
    pacing: f64,
    mss: f64,
    init_cwnd: f64,
    min_rtt: Time,
    min_rtt_stamp: Time,
    probe_rtt_min: Time,
    probe_rtt_min_stamp: Time,
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    next_rtt_delivered: u64,
    cycle_stamp: Time,
    prev_ca: CaState,
    loss_high: Option<u32>,
    round_start: bool,
    rtt_cnt: u64,
    pacing_gain: f64,
    cwnd_gain: f64,
    full_bw_reached: bool,
    full_bw_now: bool,
    full_bw_cnt: u32,
    full_bw: f64,
    has_seen_rtt: bool,
    prior_cwnd: f64,
    ack_epoch_stamp: Time,
    ack_epoch_acked: u64,
    extra_acked: [f64; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    startup_ecn_rounds: u32,
    loss_in_cycle: bool,
    ecn_in_cycle: bool,
    loss_round_delivered: u64,
    undo_bw_lo: f64,
    undo_inflight_lo: f64,
    undo_inflight_hi: f64,
    bw_latest: f64,
    bw_lo: f64,
    bw_hi: [f64; 2],
    inflight_latest: f64,
    inflight_lo: f64,
    inflight_hi: f64,
    bw_probe_up_cnt: f64,
    bw_probe_up_acks: f64,
    bw_probe_up_rounds: u32,
    probe_wait: Time,
    ecn_eligible: bool,
    /// `ecn_alpha`, 0..=256 (`BBR_UNIT` = 1).
    ecn_alpha: u32,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    rounds_since_probe: u32,
    loss_round_start: bool,
    loss_in_round: bool,
    ecn_in_round: bool,
    ack_phase: AckPhase,
    loss_events_in_round: u32,
    alpha_last_delivered: u64,
    alpha_last_delivered_ce: u64,
    app_limited_request: bool,
    seed: u64,
    /// Per-ACK context: the delivery-rate sample (`ctx->sample_bw`), the
    /// sender's state, the CA state.
    sample_bw: f64,
    now: Time,
    delivered: u64,
    ca: CaState,
    cwnd_limited: bool,
    /// Times ProbeRTT was entered; the round when Startup ended; times
    /// UP began (for tests and `stats`).
    pub probe_rtt_count: u32,
    pub startup_exit_round: Option<u64>,
    pub probe_up_count: u32,
}

impl Bbr3 {
    pub fn new(ecn_ok: bool) -> Bbr3 {
        Bbr3 {
            ecn_ok,
            initialized: false,
            mode: Mode::Startup,
            phase: Phase::Up,
            cwnd: 0.0,
            pacing: 0.0,
            mss: 0.0,
            init_cwnd: 10.0,
            min_rtt: Time::MAX,
            min_rtt_stamp: 0,
            probe_rtt_min: Time::MAX,
            probe_rtt_min_stamp: 0,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            next_rtt_delivered: 0,
            cycle_stamp: 0,
            prev_ca: CaState::Open,
            loss_high: None,
            round_start: false,
            rtt_cnt: 0,
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: STARTUP_CWND_GAIN,
            full_bw_reached: false,
            full_bw_now: false,
            full_bw_cnt: 0,
            full_bw: 0.0,
            has_seen_rtt: false,
            prior_cwnd: 0.0,
            ack_epoch_stamp: 0,
            ack_epoch_acked: 0,
            extra_acked: [0.0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            startup_ecn_rounds: 0,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            // ECN sampling starts after the first full flight is ACKed
            loss_round_delivered: 1,
            undo_bw_lo: 0.0,
            undo_inflight_lo: 0.0,
            undo_inflight_hi: 0.0,
            bw_latest: 0.0,
            bw_lo: UNSET,
            bw_hi: [0.0; 2],
            inflight_latest: 0.0,
            inflight_lo: UNSET,
            inflight_hi: UNSET,
            bw_probe_up_cnt: UNSET,
            bw_probe_up_acks: 0.0,
            bw_probe_up_rounds: 0,
            probe_wait: 0,
            ecn_eligible: false,
            ecn_alpha: 256,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            rounds_since_probe: 0,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            ack_phase: AckPhase::Init,
            loss_events_in_round: 0,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            app_limited_request: false,
            seed: 0x6a09_e667_f3bc_c908,
            sample_bw: 0.0,
            now: 0,
            delivered: 0,
            ca: CaState::Open,
            cwnd_limited: false,
            probe_rtt_count: 0,
            startup_exit_round: None,
            probe_up_count: 0,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    pub fn cwnd_gain(&self) -> f64 {
        self.cwnd_gain
    }

    /// `inflight_hi`, `inflight_lo` (None: unset).
    pub fn inflight_hi(&self) -> Option<f64> {
        (self.inflight_hi != UNSET).then_some(self.inflight_hi)
    }

    pub fn inflight_lo(&self) -> Option<f64> {
        (self.inflight_lo != UNSET).then_some(self.inflight_lo)
    }

    pub fn ecn_alpha(&self) -> f64 {
        fx(self.ecn_alpha)
    }

    pub fn min_rtt(&self) -> Option<Time> {
        (self.min_rtt != Time::MAX).then_some(self.min_rtt)
    }

    /// `bbr_max_bw`, `bbr_bw`: segments per second.
    pub fn max_bw(&self) -> f64 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    pub fn bw(&self) -> f64 {
        self.max_bw().min(self.bw_lo)
    }

    /// `get_random_u32_below(n)`: SplitMix64 over a counter started at the
    /// flow's seed (`CongestionControl::seed`).
    fn rand_below(&mut self, n: u64) -> u64 {
        self.seed = self.seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        crate::engine::splitmix64(self.seed) % n
    }

    /// `bbr_bdp`: ceil(bw · min_rtt · gain); init_cwnd before an RTT.
    fn bdp(&self, bw: f64, gain: f64) -> f64 {
        if self.min_rtt == Time::MAX {
            return self.init_cwnd;
        }
        (bw * self.min_rtt as f64 / 1e9 * gain - 1e-9)
            .ceil()
            .max(0.0)
    }

    /// `bbr_tso_segs_goal`: ~1 ms at the pacing rate plus 64 KB halved per
    /// 512 µs of min_rtt, under 64 KB, at least 2 segments.
    fn tso_segs_goal(&self) -> f64 {
        let mut bytes = self.pacing * self.mss / 1024.0;
        if self.min_rtt != Time::MAX {
            let r = (self.min_rtt / 1000) >> TSO_RTT_SHIFT;
            if r < 32 {
                bytes += (GSO_MAX_BYTES as u64 >> r) as f64;
            }
        }
        let bytes = bytes.min(GSO_MAX_BYTES - 1.0 - MAX_TCP_HEADER);
        (bytes / self.mss).floor().max(MIN_TSO_SEGS)
    }

    /// `bbr_quantization_budget`.
    fn quantization_budget(&self, cwnd: f64) -> f64 {
        let mut c = cwnd.max(3.0 * self.tso_segs_goal()).max(CWND_MIN_TARGET);
        if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
            c += 2.0;
        }
        c
    }

    /// `bbr_inflight`.
    fn inflight(&self, bw: f64, gain: f64) -> f64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt` with no EDT backlog.
    fn in_net(&self, inflight: f64) -> f64 {
        if self.pacing_gain > 1.0 {
            inflight + self.tso_segs_goal()
        } else {
            inflight
        }
    }

    /// `bbr_target_inflight`.
    fn target_inflight(&self) -> f64 {
        self.inflight(self.bw(), 1.0).min(self.cwnd)
    }

    fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw && matches!(self.phase, Phase::Refill | Phase::Up))
    }

    fn save_cwnd(&mut self) {
        if self.prev_ca < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    fn init_pacing_rate(&mut self, s: &CcState) {
        let rtt = match s.srtt {
            Some(r) => {
                self.has_seen_rtt = true;
                (r as f64).max(1e3)
            }
            None => 1e6,
        };
        self.pacing = STARTUP_PACING_GAIN * s.cwnd.max(1.0) / (rtt / 1e9) * (1.0 - PACING_MARGIN);
    }

    fn set_pacing_rate(&mut self, s: &CcState, bw: f64, gain: f64) {
        let rate = gain * bw * (1.0 - PACING_MARGIN);
        if !self.has_seen_rtt && s.srtt.is_some() {
            self.init_pacing_rate(s);
        }
        if self.full_bw_reached || rate > self.pacing {
            self.pacing = rate;
        }
    }

    fn ack_aggregation_cwnd(&self) -> f64 {
        let max_aggr = (self.bw() * EXTRA_ACKED_MAX as f64 / 1e9).floor();
        self.extra_acked[0].max(self.extra_acked[1]).min(max_aggr)
    }

    fn probe_rtt_cwnd(&self) -> f64 {
        self.bdp(self.bw(), PROBE_RTT_CWND_GAIN)
            .max(CWND_MIN_TARGET)
    }

    /// `bbr_set_cwnd`.
    fn set_cwnd(&mut self, acked: f64, bw: f64, gain: f64) {
        let mut cwnd = self.cwnd;
        if acked > 0.0 {
            let target = self.quantization_budget(self.bdp(bw, gain) + self.ack_aggregation_cwnd());
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || cwnd < 2.0 * self.init_cwnd {
                cwnd += acked;
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(self.probe_rtt_cwnd());
        }
        self.cwnd = cwnd;
    }

    /// `bbr_update_ack_aggregation`.
    fn update_ack_aggregation(&mut self, rs: &RateSample) {
        if rs.acked_sacked == 0 || rs.delivered.is_none() || rs.interval.is_none() {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            let thresh = if self.full_bw_reached {
                EXTRA_ACKED_WIN_RTTS
            } else {
                1
            };
            if self.extra_acked_win_rtts >= thresh {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0.0;
            }
        }
        let epoch = rs.delivered_time.saturating_sub(self.ack_epoch_stamp);
        let mut expected = (self.bw() * epoch as f64 / 1e9).floor();
        if self.ack_epoch_acked as f64 <= expected
            || self.ack_epoch_acked + rs.acked_sacked as u64 >= ACK_EPOCH_ACKED_RESET
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = rs.delivered_time;
            expected = 0.0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked as u64).min(0xfffff);
        let extra = (self.ack_epoch_acked as f64 - expected).min(self.cwnd);
        let i = self.extra_acked_win_idx;
        if extra > self.extra_acked[i] {
            self.extra_acked[i] = extra;
        }
    }

    fn check_probe_rtt_done(&mut self) {
        match self.probe_rtt_done {
            Some(t) if self.now > t => {}
            _ => return,
        }
        self.probe_rtt_min_stamp = self.now;
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        self.exit_probe_rtt();
    }

    /// `bbr_update_min_rtt`.
    fn update_min_rtt(&mut self, s: &CcState, rs: &RateSample) {
        let probe_rtt_expired = self.now > self.probe_rtt_min_stamp + PROBE_RTT_WIN;
        if let Some(r) = rs.rtt {
            if r < self.probe_rtt_min || probe_rtt_expired {
                self.probe_rtt_min = r;
                self.probe_rtt_min_stamp = self.now;
            }
        }
        let min_rtt_expired = self.now > self.min_rtt_stamp + MIN_RTT_WIN;
        if self.probe_rtt_min <= self.min_rtt || min_rtt_expired {
            self.min_rtt = self.probe_rtt_min;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        if probe_rtt_expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.probe_rtt_count += 1;
            self.save_cwnd();
            self.probe_rtt_done = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = self.delivered;
        }
        if self.mode == Mode::ProbeRtt {
            self.app_limited_request = true;
            if self.probe_rtt_done.is_none() && s.in_flight as f64 <= self.probe_rtt_cwnd() {
                self.probe_rtt_done = Some(self.now + PROBE_RTT_MODE);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = self.delivered;
            } else if self.probe_rtt_done.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done();
                }
            }
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (STARTUP_PACING_GAIN, STARTUP_CWND_GAIN),
            Mode::Drain => (DRAIN_GAIN, STARTUP_CWND_GAIN),
            Mode::ProbeBw => (
                PACING_GAIN[self.phase as usize],
                if self.phase == Phase::Up {
                    CWND_GAIN + BW_PROBE_CWND_GAIN
                } else {
                    CWND_GAIN
                },
            ),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    fn advance_max_bw_filter(&mut self) {
        if self.bw_hi[1] == 0.0 {
            return;
        }
        self.bw_hi[0] = self.bw_hi[1];
        self.bw_hi[1] = 0.0;
    }

    fn reset_full_bw(&mut self) {
        self.full_bw = 0.0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    fn has_elapsed_in_phase(&self, interval: Time) -> bool {
        self.now > self.cycle_stamp + interval
    }

    fn handle_queue_too_high_in_startup(&mut self) {
        self.full_bw_reached = true;
        let bdp = self.inflight(self.max_bw(), 1.0);
        self.inflight_hi = bdp.max(self.inflight_latest);
    }

    fn check_ecn_too_high_in_startup(&mut self, ce_ratio: u32) {
        if self.full_bw_reached || !self.ecn_eligible {
            return;
        }
        if ce_ratio >= ECN_THRESH {
            self.startup_ecn_rounds += 1;
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= FULL_ECN_CNT {
            self.handle_queue_too_high_in_startup();
        }
    }

    /// `bbr_update_ecn_alpha`: the CE ratio of the last round (8-bit
    /// fixed point), if used.
    fn update_ecn_alpha(&mut self, delivered_ce: u64) -> Option<u32> {
        if !self.ecn_eligible && self.ecn_ok && self.min_rtt <= ECN_MAX_RTT {
            self.ecn_eligible = true;
        }
        if !self.ecn_eligible {
            return None;
        }
        let delivered = self.delivered - self.alpha_last_delivered;
        let ce = delivered_ce - self.alpha_last_delivered_ce;
        if delivered == 0 {
            return None;
        }
        let ce_ratio = ((ce << 8) / delivered) as u32;
        let alpha =
            (((256 - ECN_ALPHA_GAIN) * self.ecn_alpha) >> 8) + ((ECN_ALPHA_GAIN * ce_ratio) >> 8);
        self.ecn_alpha = alpha.min(256);
        self.alpha_last_delivered = self.delivered;
        self.alpha_last_delivered_ce = delivered_ce;
        self.check_ecn_too_high_in_startup(ce_ratio);
        Some(ce_ratio)
    }

    fn raise_inflight_hi_slope(&mut self) {
        let growth = (1u64 << self.bw_probe_up_rounds) as f64;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = (self.cwnd / growth).floor().max(1.0);
    }

    fn probe_inflight_hi_upward(&mut self, rs: &RateSample) {
        if !self.cwnd_limited || self.cwnd < self.inflight_hi {
            return;
        }
        self.bw_probe_up_acks += rs.acked_sacked as f64;
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = (self.bw_probe_up_acks / self.bw_probe_up_cnt).floor();
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi += delta;
        }
        if self.round_start {
            self.raise_inflight_hi_slope();
        }
    }

    /// `bbr_is_inflight_too_high`: loss > 2 % of `tx_in_flight`, or CE >
    /// 50 % of the delivered (integer thresholds, as the source).
    pub fn is_inflight_too_high(&self, rs: &RateSample) -> bool {
        if rs.lost > 0 && rs.tx_in_flight > 0 {
            let thresh = (rs.tx_in_flight as f64 * LOSS_THRESH).floor();
            if rs.lost as f64 > thresh {
                return true;
            }
        }
        if let Some(d) = rs.delivered {
            if rs.delivered_ce > 0 && d > 0 && self.ecn_eligible {
                let thresh = (d * ECN_THRESH as u64) >> 8;
                if rs.delivered_ce > thresh {
                    return true;
                }
            }
        }
        false
    }

    fn inflight_with_headroom(&self) -> f64 {
        if self.inflight_hi == UNSET {
            return UNSET;
        }
        let headroom = (self.inflight_hi * INFLIGHT_HEADROOM).floor().max(1.0);
        (self.inflight_hi - headroom).max(CWND_MIN_TARGET)
    }

    fn bound_cwnd_for_inflight_model(&mut self) {
        let mut cap = UNSET;
        if self.mode == Mode::ProbeBw && self.phase != Phase::Cruise {
            cap = self.inflight_hi;
        } else if self.mode == Mode::ProbeRtt
            || (self.mode == Mode::ProbeBw && self.phase == Phase::Cruise)
        {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo).max(CWND_MIN_TARGET);
        self.cwnd = self.cwnd.min(cap);
    }

    fn init_lower_bounds(&mut self, init_bw: bool) {
        if init_bw && self.bw_lo == UNSET {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == UNSET {
            self.inflight_lo = self.cwnd;
        }
    }

    fn adapt_lower_bounds(&mut self) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = UNSET;
        if self.ecn_in_round {
            self.init_lower_bounds(false);
            // bbr_ecn_cut: 1 − α·ecn_factor, in 8-bit fixed point
            let cut = 256 - ((self.ecn_alpha * ECN_FACTOR) >> 8);
            ecn_inflight_lo = (self.inflight_lo * fx(cut)).floor();
        }
        if self.loss_in_round {
            self.init_lower_bounds(true);
            self.bw_lo = self.bw_latest.max(self.bw_lo * (1.0 - BETA));
            self.inflight_lo = self
                .inflight_latest
                .max((self.inflight_lo * (1.0 - BETA)).floor());
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.max(BW_ONE);
    }

    fn reset_lower_bounds(&mut self) {
        self.bw_lo = UNSET;
        self.inflight_lo = UNSET;
    }

    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0.0;
        self.inflight_latest = 0.0;
    }

    fn update_latest_delivery_signals(&mut self, rs: &RateSample) {
        self.loss_round_start = false;
        let (Some(d), Some(_)) = (rs.delivered, rs.interval) else {
            return;
        };
        if rs.acked_sacked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(self.sample_bw);
        self.inflight_latest = self.inflight_latest.max(d as f64);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = self.delivered;
            self.loss_round_start = true;
        }
    }

    fn advance_latest_delivery_signals(&mut self, rs: &RateSample) {
        if self.loss_round_start {
            self.bw_latest = self.sample_bw;
            self.inflight_latest = rs.delivered.unwrap_or(0) as f64;
        }
    }

    fn update_congestion_signals(&mut self, rs: &RateSample) {
        if rs.interval.is_none() || rs.delivered.is_none() || rs.acked_sacked == 0 {
            return;
        }
        let bw = self.sample_bw;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw_hi[1] = self.bw_hi[1].max(bw);
        }
        self.loss_in_round |= rs.losses > 0;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds();
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    fn is_reno_coexistence_probe_time(&self) -> bool {
        let rounds = BW_PROBE_MAX_ROUNDS.min(self.target_inflight());
        self.rounds_since_probe as f64 >= rounds
    }

    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = self.rand_below(BW_PROBE_RAND_ROUNDS) as u32;
        self.probe_wait = BW_PROBE_BASE + self.rand_below(BW_PROBE_RAND_US) * 1000;
    }

    fn start_bw_probe_refill(&mut self, bw_probe_up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = bw_probe_up_rounds;
        self.bw_probe_up_acks = 0.0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = self.delivered;
        self.phase = Phase::Refill;
    }

    fn start_bw_probe_up(&mut self) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = self.delivered;
        self.cycle_stamp = self.now;
        self.reset_full_bw();
        self.full_bw = self.sample_bw;
        self.phase = Phase::Up;
        self.probe_up_count += 1;
        self.raise_inflight_hi_slope();
    }

    fn start_bw_probe_down(&mut self) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = UNSET;
        self.pick_probe_wait();
        self.cycle_stamp = self.now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = self.delivered;
        self.phase = Phase::Down;
    }

    fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != UNSET {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.phase = Phase::Cruise;
    }

    /// `bbr_handle_inflight_too_high`: inflight_hi = max(tx_in_flight,
    /// (1 − beta) · target in-flight), once per probe.
    fn handle_inflight_too_high(&mut self, rs: &RateSample) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !rs.is_app_limited {
            self.inflight_hi =
                (rs.tx_in_flight as f64).max((self.target_inflight() * (1.0 - BETA)).floor());
        }
        if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
            self.start_bw_probe_down();
        }
    }

    /// `bbr_adapt_upper_bounds`: true when it decided a transition.
    fn adapt_upper_bounds(&mut self, rs: &RateSample) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !rs.is_app_limited {
                self.advance_max_bw_filter();
            }
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(0);
                return true;
            }
        }
        if self.is_inflight_too_high(rs) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(rs);
            }
        } else {
            if self.inflight_hi == UNSET {
                return false;
            }
            if rs.tx_in_flight as f64 > self.inflight_hi {
                self.inflight_hi = rs.tx_in_flight as f64;
            }
            if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
                self.probe_inflight_hi_upward(rs);
            }
        }
        false
    }

    fn check_time_to_probe_bw(&mut self) -> bool {
        if self.ecn_eligible && self.ecn_in_cycle && !self.loss_in_cycle && self.ca == CaState::Open
        {
            let v = (self.inflight_hi.min(u32::MAX as f64) * ECN_REPROBE_GAIN).floor() as u32;
            let n = if v == 0 { 0 } else { v.ilog2() };
            self.start_bw_probe_refill(n);
            return true;
        }
        if self.has_elapsed_in_phase(self.probe_wait) || self.is_reno_coexistence_probe_time() {
            self.start_bw_probe_refill(0);
            return true;
        }
        false
    }

    fn check_time_to_cruise(&self, inflight: f64, bw: f64) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(bw, 1.0)
    }

    /// `bbr_update_cycle_phase`.
    fn update_cycle_phase(&mut self, rs: &RateSample) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(rs) {
            return;
        }
        if self.mode != Mode::ProbeBw {
            return;
        }
        let inflight = self.in_net(rs.prior_in_flight as f64);
        let bw = self.max_bw();
        match self.phase {
            Phase::Cruise => {
                self.check_time_to_probe_bw();
            }
            Phase::Refill => {
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up();
                }
            }
            Phase::Up => {
                let mut done = false;
                if self.prev_probe_too_high && inflight >= self.inflight_hi {
                    self.stopped_risky_probe = true;
                    done = true;
                } else if self.cwnd_limited && self.cwnd >= self.inflight_hi {
                    self.reset_full_bw();
                    self.full_bw = self.sample_bw;
                } else if self.full_bw_now {
                    done = true;
                }
                if done {
                    self.prev_probe_too_high = false;
                    self.start_bw_probe_down();
                }
            }
            Phase::Down => {
                if self.check_time_to_probe_bw() {
                    return;
                }
                if self.check_time_to_cruise(inflight, bw) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }

    fn exit_probe_rtt(&mut self) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down();
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    fn check_loss_too_high_in_startup(&mut self, rs: &RateSample) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < 0xf {
            self.loss_events_in_round += 1;
        }
        if self.loss_round_start
            && self.ca == CaState::Recovery
            && self.loss_events_in_round >= FULL_LOSS_CNT
            && self.is_inflight_too_high(rs)
        {
            self.handle_queue_too_high_in_startup();
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_now || rs.is_app_limited {
            return;
        }
        if self.sample_bw >= self.full_bw * FULL_BW_THRESH {
            self.reset_full_bw();
            self.full_bw = self.sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= FULL_BW_CNT;
        self.full_bw_reached |= self.full_bw_now;
    }

    fn check_drain(&mut self, s: &mut CcState) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.startup_exit_round = Some(self.rtt_cnt);
            s.ssthresh = self.inflight(self.max_bw(), 1.0);
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain
            && self.in_net(s.in_flight as f64) <= self.inflight(self.max_bw(), 1.0)
        {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down();
        }
    }

    /// `bbr_note_loss`.
    fn note_loss(&mut self) {
        if !self.loss_in_round {
            self.loss_round_delivered = self.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn rate_based(&self) -> bool {
        true
    }

    fn on_ack(&mut self, _s: &mut CcState, _acked: u32) {}

    /// `bbr_ssthresh`: save cwnd and, for undo, the loss-adapted bounds.
    fn ssthresh(&mut self, s: &CcState) -> f64 {
        if self.cwnd == 0.0 {
            self.cwnd = s.cwnd;
        }
        self.save_cwnd();
        self.undo_bw_lo = self.bw_lo;
        self.undo_inflight_lo = self.inflight_lo;
        self.undo_inflight_hi = self.inflight_hi;
        s.ssthresh
    }

    /// `bbr_set_state(TCP_CA_Loss)`, then `tcp_enter_loss`'s cwnd of 1.
    fn on_timeout(&mut self, s: &CcState) {
        if self.cwnd == 0.0 {
            self.cwnd = s.cwnd;
        }
        self.prev_ca = CaState::Loss;
        self.reset_full_bw();
        if !self.is_probing_bandwidth() && self.inflight_lo == UNSET {
            self.inflight_lo = self.cwnd.max(self.prior_cwnd);
        }
        self.cwnd = 1.0;
        self.loss_high = Some(s.snd_nxt);
    }

    /// `bbr_main`.
    fn cong_control(&mut self, s: &mut CcState, rs: &RateSample) {
        self.now = s.now;
        self.delivered = rs.total_delivered;
        if !self.initialized {
            // bbr_init
            self.initialized = true;
            self.init_cwnd = s.cwnd.min(127.0);
            self.min_rtt_stamp = s.now;
            self.probe_rtt_min_stamp = s.now;
            self.ack_epoch_stamp = s.now;
            self.mss = s.mss as f64;
        }
        if self.cwnd == 0.0 {
            self.cwnd = s.cwnd;
        }
        if self.pacing == 0.0 {
            self.init_pacing_rate(s);
        }
        if let Some(h) = self.loss_high {
            if s.snd_una >= h {
                self.loss_high = None;
            }
        }
        self.ca = if self.loss_high.is_some() {
            CaState::Loss
        } else if rs.in_recovery {
            CaState::Recovery
        } else {
            CaState::Open
        };
        if self.prev_ca == CaState::Loss && self.ca != CaState::Loss {
            // bbr_exit_loss_recovery
            self.cwnd = self.cwnd.max(self.prior_cwnd);
        }
        // tcp_cwnd_validate's is_cwnd_limited, from the flight before it
        self.cwnd_limited = rs.prior_in_flight as f64 >= self.cwnd;
        // segments marked lost while processing this ACK
        if rs.losses > 0 {
            self.note_loss();
        }

        // bbr_update_round_start
        self.round_start = false;
        if rs.interval.is_some() && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = self.delivered;
            self.round_start = true;
            self.rtt_cnt += 1;
        }
        let delivered_ce = rs.total_delivered_ce;
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xff);
            self.update_ecn_alpha(delivered_ce);
        }
        self.ecn_in_round |= self.ecn_eligible && rs.is_ece;
        self.sample_bw = rs.rate().unwrap_or(0.0);
        self.update_latest_delivery_signals(rs);

        // bbr_update_model
        self.update_congestion_signals(rs);
        self.update_ack_aggregation(rs);
        self.check_loss_too_high_in_startup(rs);
        self.check_full_bw_reached(rs);
        self.check_drain(s);
        self.update_cycle_phase(rs);
        self.update_min_rtt(s, rs);

        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(s, bw, self.pacing_gain);
        self.set_cwnd(rs.acked_sacked as f64, bw, self.cwnd_gain);
        self.bound_cwnd_for_inflight_model();

        self.advance_latest_delivery_signals(rs);
        self.prev_ca = self.ca;
        self.loss_in_cycle |= rs.lost > 0;
        self.ecn_in_cycle |= rs.delivered_ce > 0;
        s.cwnd = self.cwnd;
    }

    fn pacing_rate(&self, s: &CcState) -> Option<f64> {
        if self.pacing > 0.0 {
            return Some(self.pacing);
        }
        let rtt = s.srtt.map_or(1e6, |r| (r as f64).max(1e3));
        Some(STARTUP_PACING_GAIN * s.cwnd.max(1.0) / (rtt / 1e9) * (1.0 - PACING_MARGIN))
    }

    fn wants_app_limited(&mut self) -> bool {
        std::mem::take(&mut self.app_limited_request)
    }

    fn seed(&mut self, seed: u64) {
        self.seed = seed;
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("bw_pkts_per_s", self.bw()),
            ("min_rtt_s", self.min_rtt().map_or(0.0, |m| m as f64 / 1e9)),
            ("rounds", self.rtt_cnt as f64),
            ("probe_rtt_count", self.probe_rtt_count as f64),
            (
                "startup_exit_round",
                self.startup_exit_round.map_or(-1.0, |r| r as f64),
            ),
            ("probe_up_count", self.probe_up_count as f64),
            ("inflight_hi", self.inflight_hi().unwrap_or(-1.0)),
            ("inflight_lo", self.inflight_lo().unwrap_or(-1.0)),
            ("ecn_alpha", fx(self.ecn_alpha)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scripted ACKs: one per round of `rtt`, each delivering 10 segments
    /// (1000 segments/s at 10 ms), `ce` of them CE-marked, `lost` newly lost.
    struct Driver {
        b: Bbr3,
        s: CcState,
        rtt: Time,
        delivered: u64,
        delivered_ce: u64,
    }

    impl Driver {
        fn new(ecn: bool, rtt: Time) -> Driver {
            Driver {
                b: Bbr3::new(ecn),
                s: CcState::with_window(10.0, 1e9, 1000),
                rtt,
                delivered: 0,
                delivered_ce: 0,
            }
        }

        fn ack(&mut self, ce: u64, lost: u32, tx_in_flight: u32) {
            self.s.now += self.rtt;
            let prior = self.delivered;
            self.delivered += 10;
            self.delivered_ce += ce;
            let in_flight = self.s.cwnd.min(10.0) as u32;
            let rs = RateSample {
                delivered: Some(10),
                interval: Some(self.rtt),
                acked_sacked: 10,
                losses: lost,
                lost: lost as u64,
                tx_in_flight,
                prior_delivered: prior,
                delivered_ce: ce,
                is_ece: ce > 0,
                prior_in_flight: in_flight,
                rtt: Some(self.rtt),
                total_delivered: self.delivered,
                total_delivered_ce: self.delivered_ce,
                delivered_time: self.s.now,
                ..RateSample::default()
            };
            self.s.in_flight = in_flight;
            self.b.cong_control(&mut self.s, &rs);
        }
    }

    #[test]
    fn startup_gains_and_exit_to_probe_bw() {
        let mut d = Driver::new(false, 10_000_000);
        d.ack(0, 0, 10);
        assert_eq!(d.b.mode(), Mode::Startup);
        assert_eq!(d.b.pacing_gain(), 710.0 / 256.0);
        assert_eq!(d.b.cwnd_gain(), 2.0);
        for _ in 0..9 {
            d.ack(0, 0, 10);
        }
        // round 1 sets full_bw; rounds 2, 3, 4 flat: full at round 4
        assert_eq!(d.b.startup_exit_round, Some(4));
        assert_eq!(d.b.mode(), Mode::ProbeBw);
        // DOWN drains to the BDP budget, then CRUISE at gain 1
        assert_eq!(d.b.phase(), Phase::Cruise);
        assert_eq!(d.b.pacing_gain(), 1.0);
        assert!((d.b.bw() - 1000.0).abs() < 1e-9);
    }

    /// A probe sample losing more than 2 % of `tx_in_flight` in UP:
    /// inflight_hi = max(tx_in_flight, (1 − 76/256) · target in-flight),
    /// then DOWN.
    #[test]
    fn loss_above_two_percent_in_up_cuts_inflight_hi() {
        let mut d = Driver::new(false, 10_000_000);
        for _ in 0..12 {
            d.ack(0, 0, 10);
        }
        assert_eq!(d.b.phase(), Phase::Cruise);
        // 2 % of 100 in flight (5/256 → 1 segment) is tolerated
        d.b.start_bw_probe_refill(0);
        d.ack(0, 0, 10);
        assert_eq!(d.b.phase(), Phase::Up);
        let rs_ok = RateSample {
            lost: 1,
            tx_in_flight: 100,
            ..RateSample::default()
        };
        assert!(!d.b.is_inflight_too_high(&rs_ok));
        let target = d.b.inflight(d.b.bw(), 1.0).min(d.b.cwnd);
        // BDP 10 + 2 in UP, cwnd above it
        assert_eq!(target, 12.0);
        d.ack(0, 1, 5);
        // 1 lost of 5 > floor(5 · 5/256) = 0
        assert_eq!(d.b.inflight_hi(), Some((12.0f64 * 180.0 / 256.0).floor()));
        assert_eq!(d.b.inflight_hi(), Some(8.0));
        assert_eq!(d.b.phase(), Phase::Down);
        // the cwnd is bounded by inflight_hi in DOWN
        assert!(d.s.cwnd <= 8.0, "cwnd {}", d.s.cwnd);
    }

    /// ECN: α is the EWMA (gain 1/16) of the per-round CE ratio, from 1;
    /// a probe sample with more than half CE-marked is too high; two
    /// Startup rounds with CE ratio ≥ 50 % end Startup.
    #[test]
    fn ecn_alpha_threshold_and_startup_exit() {
        let mut d = Driver::new(true, 2_000_000);
        d.ack(0, 0, 10);
        d.ack(0, 0, 10);
        // eligible from the second round (bbr_main updates α before
        // min_rtt), which saw no CE: α = 15/16
        let a = d.b.ecn_alpha();
        assert!((a - 15.0 / 16.0).abs() < 1e-12, "alpha {a}");
        let too_high = RateSample {
            delivered: Some(10),
            delivered_ce: 6,
            ..RateSample::default()
        };
        let at_half = RateSample {
            delivered_ce: 5,
            ..too_high
        };
        assert!(d.b.is_inflight_too_high(&too_high));
        assert!(!d.b.is_inflight_too_high(&at_half));
        assert_eq!(d.b.mode(), Mode::Startup);
        d.ack(10, 0, 10);
        assert_eq!(d.b.mode(), Mode::Startup, "one CE round");
        d.ack(10, 0, 10);
        assert_ne!(d.b.mode(), Mode::Startup, "two CE rounds end Startup");
        assert!(d.b.inflight_hi().is_some());
        // without the route flag, marks are ignored
        let mut d = Driver::new(false, 2_000_000);
        for _ in 0..3 {
            d.ack(10, 0, 10);
        }
        assert_eq!(d.b.mode(), Mode::Startup);
        assert_eq!(d.b.ecn_alpha(), 1.0);
    }

    /// ProbeRTT when the 5 s probe_rtt_min has expired, with cwnd =
    /// max(4, BDP/2), for max(200 ms, a round); then CRUISE.
    #[test]
    fn probe_rtt_every_five_seconds_at_half_bdp() {
        // 20 segments per round: BDP 20, half of it 10 > 4
        let mut d = Driver::new(false, 10_000_000);
        let mut entered = Vec::new();
        let mut cwnd_in = Vec::new();
        let mut last = Mode::Startup;
        for _ in 0..1200 {
            d.ack(0, 0, 10);
            if d.b.mode() == Mode::ProbeRtt {
                cwnd_in.push(d.s.cwnd);
                if last != Mode::ProbeRtt {
                    entered.push(d.s.now);
                }
            }
            last = d.b.mode();
        }
        assert!(entered.len() >= 2, "{entered:?}");
        // first at 5 s after the first ACK, then 5 s after the last exit
        assert!((entered[0] as f64 / 1e9 - 5.02).abs() < 0.02, "{entered:?}");
        let gap = (entered[1] - entered[0]) as f64 / 1e9;
        assert!((5.2..5.3).contains(&gap), "gap {gap}");
        // BDP 10 at 1000 segments/s and 10 ms: half is 5
        assert!(cwnd_in.iter().all(|&c| c == 5.0), "{cwnd_in:?}");
        assert_eq!(d.b.probe_rtt_count, entered.len() as u32);
    }
}
