//! BBR v1 — Bottleneck Bandwidth and Round-trip propagation time.
//!
//! Source: Linux 6.1 `net/ipv4/tcp_bbr.c` (BBR v1 as merged in 4.9, with
//! the extra-acked ACK-aggregation estimate of 5.1) and `lib/win_minmax.c`;
//! N. Cardwell, Y. Cheng, C. S. Gunn, S. H. Yeganeh, V. Jacobson, "BBR:
//! Congestion-Based Congestion Control", ACM Queue 14(5), 2016. The
//! delivery-rate samples come from `tcp::rate` (`tcp_rate.c`).
//!
//! - Model: `BtlBw` is a windowed max filter of delivery-rate samples over
//!   10 round trips (`bbr_bw_rtts` = CYCLE_LEN + 2; app-limited samples
//!   enter only if they raise it); `RTprop` (`min_rtt`) the minimum RTT
//!   over 10 s (`bbr_min_rtt_win_sec`). A round trip ends when a segment
//!   sent after the previous round's end is delivered (`next_rtt_delivered`).
//! - Startup: pacing and cwnd gain 2/ln 2 (`bbr_high_gain` = 2885/1000);
//!   full bandwidth is reached after 3 rounds (`bbr_full_bw_cnt`) without
//!   25 % growth (`bbr_full_bw_thresh`), app-limited rounds not counted.
//! - Drain: pacing gain 1/high_gain until in-flight ≤ 1 BDP.
//! - ProbeBW: pacing gain cycles through [5/4, 3/4, 1 × 6], each phase one
//!   min_rtt long, the 5/4 phase also until in-flight reaches 5/4 BDP (or a
//!   loss), the 3/4 phase ending early at 1 BDP; it starts at a random
//!   phase other than 3/4 (`CYCLE_LEN − 1 − prandom_u32_max(7)`, then one
//!   advance); cwnd gain 2.
//! - ProbeRTT: when min_rtt is 10 s old, cwnd 4 (`bbr_cwnd_min_target`)
//!   for max(200 ms, one round) once in-flight has fallen to 4; then
//!   min_rtt's stamp is renewed and cwnd restored.
//! - cwnd = BDP·cwnd_gain + extra-acked (the max over 10 rounds of data
//!   ACKed beyond the expected bw·epoch, capped at 100 ms of bw and at
//!   cwnd) + 3 TSO goals (`bbr_quantization_budget`, the goal being the
//!   segments of ~1 ms at the pacing rate, 2 at least, 1 below 1.2 Mbit/s),
//!   rounded up to even, +2 in the 5/4 phase; grown by at most the segments
//!   ACKed once full bandwidth is reached; never below 4.
//! - Loss: on entering fast recovery cwnd = in-flight + acked, then packet
//!   conservation (cwnd ≥ in-flight + acked) for one round; every ACK
//!   takes the newly lost segments off; on leaving recovery or the
//!   timeout's loss state cwnd is restored to at least the cwnd saved on
//!   entry (`bbr_save_cwnd`). A timeout sets cwnd to 1 (Linux
//!   `tcp_enter_loss`: in-flight + 1 with everything marked lost), resets
//!   the full-bandwidth count and starts a round.
//! - Long-term (policer) mode: from the first loss, intervals of 4–16
//!   rounds ending on a loss with loss rate ≥ 20 % (50/256) give an
//!   average bw; two consecutive ones within 1/8 or 4 kbit/s of each other
//!   are taken as a policer's rate: bw is their mean and the pacing gain 1
//!   for 48 rounds.
//! - Pacing rate = gain · bw · (1 − 1 %) (`bbr_pacing_margin_percent`),
//!   raised only until full bandwidth is reached (never lowered in
//!   Startup); before the first RTT sample, high_gain · init_cwnd / 1 ms.
//!
//! Differences from Linux, by the model: bandwidth is in segments per
//! second (f64) rather than Linux's fixed point (BW_UNIT = 2^24 per µs);
//! time in nanoseconds rather than µs and jiffies; in-flight is the
//! sender's RFC 6675 pipe (`bbr_packets_in_net_at_edt`'s EDT correction
//! is nil: segments leave at their paced time); the newly lost segments of
//! an ACK are those recovery retransmitted on it; `prandom_u32_max` (the
//! random start phase) is SplitMix64 over the flow's seed, drawn from the
//! scenario seed and the flow id (`CongestionControl::seed`), mixed with
//! the time and delivered count of the draw; the idle-restart event
//! (`CA_EVENT_TX_START`) is not modelled (bulk and single-shot transfers
//! never restart from idle).
//!
//! `variant = "ns3"`: ns-3 3.44's `TcpBbr` (`src/internet/model/
//! tcp-bbr.cc`, NITK's port of Linux v1), read beside Linux. Where it
//! differs, and what this variant does:
//!
//! - gains: `HighGain` 2.89 for Startup's pacing and cwnd and Drain's
//!   cwnd, Drain pacing 1/2.89 (Linux 2885/1000 and 1000/2885): followed;
//! - `InFlight`: gain · BDP in bytes, not rounded up, + 3 send quanta of
//!   *one segment* (`SetSendQuantum`), no rounding to even, +2 segments in
//!   the 5/4 phase; the initial window alone before an RTT sample (Linux
//!   adds 3 TSO goals of ~1 ms at the pacing rate and rounds to even):
//!   followed — at 10 Mbit/s this is 3 segments less than Linux's 6;
//! - `EnterProbeBW`: start phase `7 − (int) U[0, 6)`, then one advance,
//!   so never the 3/4 phase nor the cruise phase after it (Linux draws
//!   among 7): followed;
//! - `InitPacingRate`: the min RTT in whole milliseconds (≥ 1 ms), no
//!   pacing margin, and the bandwidth filter restarted with the sample
//!   init_cwnd / RTT: followed;
//! - `UpdateAckAggregation` counts bytes with the epoch in whole seconds
//!   and `AckEpochAckedResetThresh` = 4096 bytes, so extra-acked stays
//!   under ~3 segments (Linux: packets, µs, 2^20): followed;
//! - no long-term (policer) bandwidth mode: followed;
//! - a timeout (`CongestionStateSet(CA_LOSS)`) saves cwnd and starts a
//!   round, without Linux's reset of the full-bandwidth estimate:
//!   followed;
//! - entering recovery sets cwnd = in-flight + max(last ACKed/SACKed, 1
//!   segment) without restarting the round (Linux restarts it for its
//!   round of packet conservation): followed;
//! - min RTT from `tcb->m_lastRtt` with `<=` (Linux `rs->rtt_us` with
//!   `<`, ignoring delayed-ACK samples on expiry); rounds counted only on
//!   ACKs with a non-zero delivery rate: not modelled.

use super::{CcState, CongestionControl, RateSample};
use crate::engine::Time;
use serde::{Deserialize, Serialize};

/// Which BBR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum BbrVariant {
    /// BBR v1 as Linux 6.1 `tcp_bbr.c`.
    #[default]
    #[serde(rename = "v1")]
    V1,
    /// BBR v3 as google/bbr's v3 `tcp_bbr.c` (`bbr3.rs`).
    #[serde(rename = "v3")]
    V3,
    /// BBR v1 as ns-3 3.44's `TcpBbr` (`tcp-bbr.cc`), where it differs
    /// from Linux (this file's header lists the differences).
    #[serde(rename = "ns3")]
    Ns3,
}

/// `cc = { kind = "bbr", variant = "v1" }`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct BbrConfig {
    pub variant: BbrVariant,
    /// v3 only: the path is a shallow-threshold ECN one (Linux's route
    /// flag `TCP_ECN_LOW`), so v3 reacts to CE marks when min_rtt ≤ 5 ms.
    /// Needs `tcp.ecn = true` for the marks to be echoed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ecn: bool,
}

const HIGH_GAIN: f64 = 2885.0 / 1000.0;
/// ns-3 `TcpBbr::HighGain` (2.89); its Drain gain is 1/2.89.
const NS3_HIGH_GAIN: f64 = 2.89;
/// ns-3 `TcpBbr::AckEpochAckedResetThresh`: 4096 *bytes* (Linux: 2^20
/// packets).
const NS3_ACK_EPOCH_ACKED_RESET_BYTES: f64 = 4096.0;
const CWND_GAIN: f64 = 2.0;
const PACING_GAIN: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
const CYCLE_LEN: usize = 8;
/// `bbr_bw_rtts`: rounds of the bandwidth max filter.
const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
const MIN_RTT_WIN: Time = 10_000_000_000;
const PROBE_RTT_TIME: Time = 200_000_000;
const CWND_MIN_TARGET: f64 = 4.0;
const FULL_BW_THRESH: f64 = 1.25;
const FULL_BW_CNT: u32 = 3;
const PACING_MARGIN: f64 = 0.01;
const INIT_CWND: f64 = 10.0;
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: f64 = 50.0 / 256.0;
const LT_BW_RATIO: f64 = 1.0 / 8.0;
/// `bbr_lt_bw_diff`: 4 kbit/s, in bytes per second.
const LT_BW_DIFF_BYTES: f64 = 4000.0 / 8.0;
const LT_BW_MAX_RTTS: u32 = 48;
const EXTRA_ACKED_GAIN: f64 = 1.0;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET: u64 = 1 << 20;
const EXTRA_ACKED_MAX: Time = 100_000_000;
/// `bbr_min_tso_rate`: 1.2 Mbit/s, in bytes per second.
const MIN_TSO_RATE_BYTES: f64 = 1.2e6 / 8.0;
/// `GSO_MAX_SIZE`.
const GSO_MAX_BYTES: f64 = 65536.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// Linux `icsk_ca_state`, the part BBR reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum CaState {
    Open,
    Recovery,
    Loss,
}

/// `lib/win_minmax.c`: the best three samples of a sliding window.
#[derive(Clone, Copy, Debug, Default)]
struct MinMax {
    s: [(u64, f64); 3],
}

impl MinMax {
    fn reset(&mut self, t: u64, v: f64) -> f64 {
        self.s = [(t, v); 3];
        v
    }

    fn get(&self) -> f64 {
        self.s[0].1
    }

    /// `minmax_running_max`.
    fn running_max(&mut self, win: u64, t: u64, v: f64) -> f64 {
        if v >= self.s[0].1 || t - self.s[2].0 > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        self.subwin_update(win, (t, v))
    }

    fn subwin_update(&mut self, win: u64, val: (u64, f64)) -> f64 {
        let dt = val.0 - self.s[0].0;
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.0 - self.s[0].0 > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].1
    }
}

pub struct Bbr {
    /// `variant = "ns3"`: ns-3 3.44 `TcpBbr`'s rules where they differ.
    ns3: bool,
    mode: Mode,
    /// The cwnd BBR holds (Linux `snd_cwnd` under `cong_control`), segments.
    cwnd: f64,
    /// Pacing rate, segments per second (0: not set yet).
    pacing: f64,
    mss: f64,
    bw: MinMax,
    min_rtt: Option<Time>,
    min_rtt_stamp: Time,
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    packet_conservation: bool,
    prev_ca: CaState,
    /// After a timeout: the loss state lasts until snd_una passes this.
    loss_high: Option<u32>,
    prior_cwnd: f64,
    full_bw: f64,
    full_bw_cnt: u32,
    full_bw_reached: bool,
    cycle_idx: usize,
    cycle_stamp: Time,
    pacing_gain: f64,
    cwnd_gain: f64,
    has_seen_rtt: bool,
    // long-term (policer) sampling
    lt_is_sampling: bool,
    lt_use_bw: bool,
    lt_bw: f64,
    lt_rtt_cnt: u32,
    lt_last_delivered: u64,
    lt_last_lost: u64,
    lt_last_stamp: Time,
    // ACK aggregation
    ack_epoch_stamp: Time,
    ack_epoch_acked: u64,
    extra_acked: [f64; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    app_limited_request: bool,
    /// Times of entering each mode (for tests and `stats`).
    pub probe_rtt_count: u32,
    /// The round count when Startup ended (for tests).
    pub startup_exit_round: Option<u64>,
    seed: u64,
}

impl Bbr {
    pub fn new(c: &BbrConfig) -> Bbr {
        let ns3 = c.variant == BbrVariant::Ns3;
        let high_gain = if ns3 { NS3_HIGH_GAIN } else { HIGH_GAIN };
        Bbr {
            ns3,
            mode: Mode::Startup,
            cwnd: 0.0,
            pacing: 0.0,
            mss: 0.0,
            bw: MinMax::default(),
            min_rtt: None,
            min_rtt_stamp: 0,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            packet_conservation: false,
            prev_ca: CaState::Open,
            loss_high: None,
            prior_cwnd: 0.0,
            full_bw: 0.0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            cycle_idx: 0,
            cycle_stamp: 0,
            pacing_gain: high_gain,
            cwnd_gain: high_gain,
            has_seen_rtt: false,
            lt_is_sampling: false,
            lt_use_bw: false,
            lt_bw: 0.0,
            lt_rtt_cnt: 0,
            lt_last_delivered: 0,
            lt_last_lost: 0,
            lt_last_stamp: 0,
            ack_epoch_stamp: 0,
            ack_epoch_acked: 0,
            extra_acked: [0.0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            app_limited_request: false,
            probe_rtt_count: 0,
            startup_exit_round: None,
            seed: 0x9e37_79b9_7f4a_7c15,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Rounds counted so far.
    pub fn rounds(&self) -> u64 {
        self.rtt_cnt
    }

    /// The bandwidth estimate in segments per second (`bbr_bw`).
    pub fn bw(&self) -> f64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.bw.get()
        }
    }

    pub fn max_bw(&self) -> f64 {
        self.bw.get()
    }

    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    pub fn min_rtt(&self) -> Option<Time> {
        self.min_rtt
    }

    /// Startup's gains (2/ln 2: Linux 2.885, ns-3 2.89).
    fn high_gain(&self) -> f64 {
        if self.ns3 {
            NS3_HIGH_GAIN
        } else {
            HIGH_GAIN
        }
    }

    /// `bbr_bdp`: gain · bw · min_rtt, rounded up; 10 before an RTT.
    /// ns-3 (`TcpBbr::InFlight`, in bytes): not rounded.
    fn bdp(&self, bw: f64, gain: f64) -> f64 {
        match self.min_rtt {
            None => INIT_CWND,
            Some(m) if self.ns3 => bw * m as f64 / 1e9 * gain,
            Some(m) => (bw * m as f64 / 1e9 * gain - 1e-9).ceil().max(0.0),
        }
    }

    /// `bbr_tso_segs_goal`: segments of ~1 ms at the pacing rate
    /// (`sk_pacing_shift` = 10), at most 64 KB, at least 2 (1 below
    /// 1.2 Mbit/s), at most 127.
    fn tso_segs_goal(&self) -> f64 {
        let rate_bytes = self.pacing * self.mss;
        let min = if rate_bytes < MIN_TSO_RATE_BYTES {
            1.0
        } else {
            2.0
        };
        let bytes = (rate_bytes / 1024.0).min(GSO_MAX_BYTES);
        (bytes / self.mss).floor().max(min).min(127.0)
    }

    /// `bbr_quantization_budget`. ns-3: 3 send quanta of one segment
    /// (`m_sendQuantum` = `m_segmentSize`), no rounding to even; nothing
    /// added to the initial window before an RTT sample.
    fn quantization_budget(&self, cwnd: f64) -> f64 {
        if self.ns3 && self.min_rtt.is_none() {
            return cwnd;
        }
        let mut c = if self.ns3 {
            cwnd + 3.0
        } else {
            let c = cwnd + 3.0 * self.tso_segs_goal();
            ((c as u64 + 1) & !1) as f64
        };
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            c += 2.0;
        }
        c
    }

    /// `bbr_inflight`.
    fn inflight(&self, bw: f64, gain: f64) -> f64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// A deterministic `prandom_u32_max(n)`: SplitMix64 over the flow's
    /// seed, the time and the delivered count.
    fn rand_below(&mut self, n: u64, a: u64, b: u64) -> usize {
        let mut z = self.seed ^ a.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ b.rotate_left(17);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        self.seed = z;
        (z % n) as usize
    }

    fn reset_startup_mode(&mut self) {
        self.mode = Mode::Startup;
    }

    fn reset_probe_bw_mode(&mut self, now: Time, delivered: u64) {
        self.mode = Mode::ProbeBw;
        // Linux: prandom_u32_max(bbr_cycle_rand = 7), never the 3/4 phase;
        // ns-3 EnterProbeBW: (int) U[0, 6), never 3/4 nor the next one
        let n = if self.ns3 { 6 } else { 7 };
        self.cycle_idx = CYCLE_LEN - 1 - self.rand_below(n, now, delivered);
        self.advance_cycle_phase(now);
    }

    fn reset_mode(&mut self, now: Time, delivered: u64) {
        if !self.full_bw_reached {
            self.reset_startup_mode();
        } else {
            self.reset_probe_bw_mode(now, delivered);
        }
    }

    fn advance_cycle_phase(&mut self, now: Time) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp = now;
    }

    fn save_cwnd(&mut self) {
        if self.prev_ca < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    fn set_pacing_rate(&mut self, s: &CcState, bw: f64, gain: f64) {
        let rate = gain * bw * (1.0 - PACING_MARGIN);
        let rtt_seen = if self.ns3 { s.min_rtt } else { s.srtt };
        if !self.has_seen_rtt && rtt_seen.is_some() {
            self.init_pacing_rate(s);
        }
        if self.full_bw_reached || rate > self.pacing {
            self.pacing = rate;
        }
    }

    /// `bbr_init_pacing_rate_from_rtt`.
    fn init_pacing_rate(&mut self, s: &CcState) {
        if self.ns3 {
            // TcpBbr::InitPacingRate: min RTT in whole ms (≥ 1 ms, 1 ms
            // without one), no pacing margin; it also restarts the
            // bandwidth filter at init_cwnd / RTT
            let rtt_ms = match s.min_rtt {
                Some(r) => {
                    self.has_seen_rtt = true;
                    (r / 1_000_000).max(1)
                }
                None => 1,
            };
            let bw = s.cwnd.max(1.0) / (rtt_ms as f64 / 1e3);
            self.pacing = self.pacing_gain * bw;
            self.bw.reset(self.rtt_cnt, bw);
            return;
        }
        let rtt = match s.srtt {
            Some(r) => {
                self.has_seen_rtt = true;
                (r as f64).max(1e3)
            }
            None => 1e6,
        };
        let bw = s.cwnd.max(1.0) / (rtt / 1e9);
        self.pacing = HIGH_GAIN * bw * (1.0 - PACING_MARGIN);
    }

    fn is_next_cycle_phase(&self, now: Time, rs: &RateSample) -> bool {
        let full_length = self.min_rtt.is_some_and(|m| now - self.cycle_stamp > m);
        if self.pacing_gain == 1.0 {
            return full_length;
        }
        let inflight = rs.prior_in_flight as f64;
        let bw = self.max_bw();
        if self.pacing_gain > 1.0 {
            return full_length && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }
        full_length || inflight <= self.inflight(bw, 1.0)
    }

    fn reset_lt_interval(&mut self, rs: &RateSample) {
        self.lt_last_stamp = rs.delivered_time / 1_000_000;
        self.lt_last_delivered = rs.total_delivered;
        self.lt_last_lost = rs.total_lost;
        self.lt_rtt_cnt = 0;
    }

    fn reset_lt(&mut self, rs: &RateSample) {
        self.lt_bw = 0.0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_interval(rs);
    }

    fn lt_interval_done(&mut self, bw: f64, rs: &RateSample) {
        if self.lt_bw > 0.0 {
            let diff = (bw - self.lt_bw).abs();
            if diff <= LT_BW_RATIO * self.lt_bw || diff * self.mss <= LT_BW_DIFF_BYTES {
                self.lt_bw = (bw + self.lt_bw) / 2.0;
                self.lt_use_bw = true;
                self.pacing_gain = 1.0;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_interval(rs);
    }

    /// `bbr_lt_bw_sampling` (ns-3's TcpBbr has no long-term mode).
    fn lt_bw_sampling(&mut self, now: Time, rs: &RateSample) {
        if self.ns3 {
            return;
        }
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt(rs);
                    self.reset_probe_bw_mode(now, rs.total_delivered);
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_interval(rs);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt(rs);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt(rs);
            return;
        }
        if rs.losses == 0 {
            return;
        }
        let lost = rs.total_lost - self.lt_last_lost;
        let delivered = rs.total_delivered - self.lt_last_delivered;
        if delivered == 0 || (lost as f64) < LT_LOSS_THRESH * delivered as f64 {
            return;
        }
        let t_ms = (rs.delivered_time / 1_000_000).saturating_sub(self.lt_last_stamp);
        if t_ms < 1 {
            return;
        }
        let bw = delivered as f64 / (t_ms as f64 / 1e3);
        self.lt_interval_done(bw, rs);
    }

    /// `bbr_update_bw`.
    fn update_bw(&mut self, now: Time, rs: &RateSample) {
        self.round_start = false;
        let (Some(_), Some(_)) = (rs.delivered, rs.interval) else {
            return;
        };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = rs.total_delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(now, rs);
        let bw = rs.rate().unwrap_or(0.0);
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`.
    fn update_ack_aggregation(&mut self, now: Time, rs: &RateSample) {
        if rs.acked_sacked == 0 || rs.delivered.is_none() || rs.interval.is_none() {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0.0;
            }
        }
        if self.ns3 {
            self.update_ack_aggregation_ns3(now, rs);
            return;
        }
        let epoch = now.saturating_sub(self.ack_epoch_stamp);
        let mut expected = (self.bw() * epoch as f64 / 1e9).floor();
        if self.ack_epoch_acked as f64 <= expected
            || self.ack_epoch_acked + rs.acked_sacked as u64 >= ACK_EPOCH_ACKED_RESET
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = now;
            expected = 0.0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked as u64).min(0xfffff);
        let extra = (self.ack_epoch_acked as f64 - expected).min(self.cwnd);
        let i = self.extra_acked_win_idx;
        if extra > self.extra_acked[i] {
            self.extra_acked[i] = extra;
        }
    }

    /// ns-3 `TcpBbr::UpdateAckAggregation`, in bytes as ns-3 counts: the
    /// epoch's length is taken in whole seconds (`uint32_t epochProp`), so
    /// the expected amount is 0 for epochs under 1 s, and the epoch
    /// restarts once 4096 bytes have been ACKed in it: the extra-acked
    /// estimate stays under ~3 segments.
    fn update_ack_aggregation_ns3(&mut self, now: Time, rs: &RateSample) {
        let mss = self.mss;
        let acked = rs.acked_sacked as f64 * mss;
        let epoch_s = (now.saturating_sub(self.ack_epoch_stamp) / 1_000_000_000) as f64;
        let mut expected = (self.max_bw() * mss * epoch_s).floor();
        let epoch_acked = self.ack_epoch_acked as f64;
        if epoch_acked <= expected || epoch_acked + acked >= NS3_ACK_EPOCH_ACKED_RESET_BYTES {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = now;
            expected = 0.0;
        }
        self.ack_epoch_acked += acked as u64;
        let extra = (self.ack_epoch_acked as f64 - expected).min(self.cwnd * mss) / mss;
        let i = self.extra_acked_win_idx;
        if extra > self.extra_acked[i] {
            self.extra_acked[i] = extra;
        }
    }

    /// `bbr_ack_aggregation_cwnd`.
    fn ack_aggregation_cwnd(&self) -> f64 {
        if !self.full_bw_reached {
            return 0.0;
        }
        let max_aggr = (self.bw() * EXTRA_ACKED_MAX as f64 / 1e9).floor();
        let aggr = (EXTRA_ACKED_GAIN * self.extra_acked[0].max(self.extra_acked[1])).floor();
        aggr.min(max_aggr)
    }

    /// `bbr_check_full_bw_reached`.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        if self.max_bw() >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, s: &mut CcState, now: Time, rs: &RateSample) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.startup_exit_round = Some(self.rtt_cnt);
            s.ssthresh = self.inflight(self.max_bw(), 1.0);
        }
        if self.mode == Mode::Drain && s.in_flight as f64 <= self.inflight(self.max_bw(), 1.0) {
            self.reset_probe_bw_mode(now, rs.total_delivered);
        }
    }

    fn check_probe_rtt_done(&mut self, now: Time, delivered: u64) {
        match self.probe_rtt_done {
            Some(t) if now > t => {}
            _ => return,
        }
        self.min_rtt_stamp = now;
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        self.reset_mode(now, delivered);
    }

    /// `bbr_update_min_rtt`.
    fn update_min_rtt(&mut self, s: &CcState, now: Time, rs: &RateSample) {
        let expired = now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(r) = rs.rtt {
            if self.min_rtt.is_none_or(|m| r < m) || expired {
                self.min_rtt = Some(r);
                self.min_rtt_stamp = now;
            }
        }
        if expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.probe_rtt_count += 1;
            self.save_cwnd();
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            self.app_limited_request = true;
            if self.probe_rtt_done.is_none() && s.in_flight as f64 <= CWND_MIN_TARGET {
                self.probe_rtt_done = Some(now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = rs.total_delivered;
            } else if self.probe_rtt_done.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(now, rs.total_delivered);
                }
            }
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (self.high_gain(), self.high_gain()),
            // Linux bbr_drain_gain = 1000/2885; ns-3 1/HighGain
            Mode::Drain => (1.0 / self.high_gain(), self.high_gain()),
            Mode::ProbeBw => (
                if self.lt_use_bw {
                    1.0
                } else {
                    PACING_GAIN[self.cycle_idx]
                },
                CWND_GAIN,
            ),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: Some(cwnd) under packet
    /// conservation.
    fn recover_or_restore(&mut self, s: &CcState, rs: &RateSample, state: CaState) -> (f64, bool) {
        let acked = rs.acked_sacked as f64;
        let mut cwnd = self.cwnd;
        if rs.losses > 0 {
            cwnd = (cwnd - rs.losses as f64).max(1.0);
        }
        if state == CaState::Recovery && self.prev_ca != CaState::Recovery {
            self.packet_conservation = true;
            if self.ns3 {
                // CongestionStateSet(CA_RECOVERY): in flight + max(last
                // ACKed/SACKed, 1 segment); the round goes on
                cwnd = s.in_flight as f64 + acked.max(1.0);
            } else {
                self.next_rtt_delivered = rs.total_delivered;
                cwnd = s.in_flight as f64 + acked;
            }
        } else if self.prev_ca >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca = state;
        if self.packet_conservation {
            return (cwnd.max(s.in_flight as f64 + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`.
    fn set_cwnd(&mut self, s: &CcState, rs: &RateSample, bw: f64, gain: f64, state: CaState) {
        let acked = rs.acked_sacked as f64;
        let mut cwnd = self.cwnd;
        if acked > 0.0 {
            let (c, conserving) = self.recover_or_restore(s, rs, state);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target += self.ack_aggregation_cwnd();
                target = self.quantization_budget(target);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || rs.total_delivered < INIT_CWND as u64 {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(CWND_MIN_TARGET);
        }
        self.cwnd = cwnd;
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn rate_based(&self) -> bool {
        true
    }

    fn on_ack(&mut self, _s: &mut CcState, _acked: u32) {}

    /// `bbr_ssthresh`: save cwnd, leave ssthresh as it is.
    fn ssthresh(&mut self, s: &CcState) -> f64 {
        if self.cwnd == 0.0 {
            self.cwnd = s.cwnd;
        }
        self.save_cwnd();
        s.ssthresh
    }

    /// `tcp_enter_loss` (cwnd = in-flight + 1, all outstanding marked
    /// lost) and `bbr_set_state(TCP_CA_Loss)`.
    fn on_timeout(&mut self, s: &CcState) {
        self.cwnd = 1.0;
        self.loss_high = Some(s.snd_nxt);
        self.prev_ca = CaState::Loss;
        self.round_start = true;
        if self.ns3 {
            // CongestionStateSet(CA_LOSS): SaveCwnd (done by ssthresh)
            // and a round start only
            return;
        }
        self.full_bw = 0.0;
        let rs = RateSample {
            losses: 1,
            ..RateSample::default()
        };
        // (lt sampling with the totals it last saw)
        let rs = RateSample {
            total_delivered: self.lt_last_delivered,
            total_lost: self.lt_last_lost,
            delivered_time: self.lt_last_stamp * 1_000_000,
            ..rs
        };
        self.lt_bw_sampling(s.now, &rs);
    }

    /// `bbr_main`.
    fn cong_control(&mut self, s: &mut CcState, rs: &RateSample) {
        let now = s.now;
        if self.mss == 0.0 {
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
        let state = if self.loss_high.is_some() {
            CaState::Loss
        } else if rs.in_recovery {
            CaState::Recovery
        } else {
            CaState::Open
        };
        // bbr_update_model
        self.update_bw(now, rs);
        self.update_ack_aggregation(now, rs);
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(now, rs) {
            self.advance_cycle_phase(now);
        }
        self.check_full_bw_reached(rs);
        self.check_drain(s, now, rs);
        self.update_min_rtt(s, now, rs);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(s, bw, self.pacing_gain);
        self.set_cwnd(s, rs, bw, self.cwnd_gain, state);
        s.cwnd = self.cwnd;
    }

    fn pacing_rate(&self, s: &CcState) -> Option<f64> {
        if self.pacing > 0.0 {
            return Some(self.pacing);
        }
        // before the first ACK: bbr_init_pacing_rate_from_rtt
        if self.ns3 {
            let rtt_ms = s.min_rtt.map_or(1, |r| (r / 1_000_000).max(1));
            return Some(NS3_HIGH_GAIN * s.cwnd.max(1.0) / (rtt_ms as f64 / 1e3));
        }
        let rtt = s.srtt.map_or(1e6, |r| (r as f64).max(1e3));
        Some(HIGH_GAIN * s.cwnd.max(1.0) / (rtt / 1e9) * (1.0 - PACING_MARGIN))
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
            ("min_rtt_s", self.min_rtt.map_or(0.0, |m| m as f64 / 1e9)),
            ("rounds", self.rtt_cnt as f64),
            ("probe_rtt_count", self.probe_rtt_count as f64),
            (
                "startup_exit_round",
                self.startup_exit_round.map_or(-1.0, |r| r as f64),
            ),
        ]
    }
}

impl super::registry::Registered for BbrConfig {
    const KIND: &'static str = "bbr";
    const ABOUT: &'static str =
        "BBR v1 (Linux 6.1 tcp_bbr.c; Cardwell et al., ACM Queue 2016), v1 as ns-3 3.44 TcpBbr (variant ns3) or v3 (google/bbr v3 tcp_bbr.c): rate-based, paced; use with SACK (e.g. profile = \"linux-6.1\")";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!(
            "variant",
            "",
            "\"v1\" | \"v3\" | \"ns3\"",
            "\"v2\"",
            "BBR version: v1 (Linux 6.1 tcp_bbr.c), v3 (google/bbr v3 tcp_bbr.c) or ns3 (v1 as ns-3 3.44 TcpBbr)"
        ),
        crate::registry::param!(
            "ecn",
            "",
            "true | false",
            "\"yes\"",
            "v3: shallow-threshold ECN path (TCP_ECN_LOW): react to CE marks when min_rtt <= 5 ms"
        ),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        if self.ecn && self.variant != BbrVariant::V3 {
            let v = match self.variant {
                BbrVariant::Ns3 => "ns3",
                _ => "v1",
            };
            return Err((
                "ecn".into(),
                format!("applies to variant = \"v3\" only, got variant = \"{v}\""),
            ));
        }
        Ok(())
    }
}

impl super::registry::CcAlgorithm for BbrConfig {
    fn build(&self) -> Box<dyn CongestionControl> {
        match self.variant {
            BbrVariant::V1 | BbrVariant::Ns3 => Box::new(Bbr::new(self)),
            BbrVariant::V3 => Box::new(super::bbr3::Bbr3::new(self.ecn)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_filter_keeps_the_best_of_the_window() {
        let mut m = MinMax::default();
        m.reset(0, 0.0);
        for (t, v) in [(1, 10.0), (2, 8.0), (3, 9.0), (5, 7.0)] {
            m.running_max(BW_RTTS, t, v);
        }
        assert_eq!(m.get(), 10.0);
        // 10 rounds after the peak it has aged out; the next best is kept
        m.running_max(BW_RTTS, 12, 6.0);
        assert!(m.get() < 10.0 && m.get() >= 6.0, "{}", m.get());
        m.running_max(BW_RTTS, 30, 5.0);
        assert_eq!(m.get(), 5.0);
    }

    /// Scripted ACKs at a constant delivery rate: Startup ends after 3
    /// rounds without 25 % growth, then Drain, then ProbeBW at a phase
    /// other than 3/4.
    #[test]
    fn startup_exits_after_three_flat_rounds() {
        let mut b = Bbr::new(&BbrConfig::default());
        let mut s = CcState::with_window(10.0, 1e9, 1000);
        let rtt: Time = 10_000_000;
        let mut delivered = 0u64;
        let mut now = 0;
        // one ACK per round, rate 1000 segments/s, prior_delivered the
        // previous round's total
        for round in 0..10u64 {
            now += rtt;
            let prior = delivered;
            delivered += 10;
            let rs = RateSample {
                delivered: Some(10),
                interval: Some(rtt),
                acked_sacked: 10,
                prior_delivered: prior,
                prior_in_flight: 10,
                rtt: Some(rtt),
                total_delivered: delivered,
                delivered_time: now,
                ..RateSample::default()
            };
            s.now = now;
            s.in_flight = 10;
            b.cong_control(&mut s, &rs);
            if round < 3 {
                assert_eq!(b.mode(), Mode::Startup, "round {round}");
            }
        }
        // rounds 1: full_bw set; 2, 3, 4: no growth -> full at round 4
        assert_eq!(b.startup_exit_round, Some(4));
        assert_eq!(b.mode(), Mode::ProbeBw, "drained: in-flight 10 ≤ BDP budget");
        assert_ne!(b.pacing_gain(), 0.75);
        assert!((b.bw() - 1000.0).abs() < 1e-9);
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: entering recovery sets cwnd
    /// to in-flight + acked and conserves packets for a round (minus the
    /// losses); leaving it restores the cwnd saved by `ssthresh`.
    #[test]
    fn recovery_conserves_packets_then_restores_the_saved_cwnd() {
        let mut b = Bbr::new(&BbrConfig::default());
        let mut s = CcState::with_window(10.0, 1e9, 1000);
        let rtt: Time = 10_000_000;
        let mut delivered = 0u64;
        // `lag`: the acknowledged segment was sent that many deliveries ago
        let mut step = |b: &mut Bbr, s: &mut CcState, in_flight: u32, rec: bool, losses: u32, lag: u64| {
            let prior = delivered - lag;
            delivered += 2;
            s.now += rtt;
            s.in_flight = in_flight;
            let rs = RateSample {
                delivered: Some(2),
                interval: Some(rtt),
                acked_sacked: 2,
                losses,
                prior_delivered: prior,
                prior_in_flight: in_flight,
                rtt: Some(rtt),
                total_delivered: delivered,
                delivered_time: s.now,
                in_recovery: rec,
                ..RateSample::default()
            };
            b.cong_control(s, &rs);
            s.cwnd
        };
        for _ in 0..20 {
            step(&mut b, &mut s, 30, false, 0, 0);
        }
        let before = s.cwnd;
        // 2·BDP (2 segments) + 3 TSO goals of 2, even
        assert_eq!(before, 12.0);
        b.ssthresh(&s); // recovery begins: bbr_save_cwnd
        let c = step(&mut b, &mut s, 6, true, 1, 0);
        assert_eq!(c, 8.0, "in-flight 6 + 2 acked");
        // sent before recovery began: the round has not ended
        let c = step(&mut b, &mut s, 5, true, 0, 10);
        assert_eq!(c, 8.0, "conservation: max(cwnd, 5 + 2)");
        let c = step(&mut b, &mut s, 5, false, 0, 0);
        assert!(c >= before, "restored to the saved {before}, got {c}");
    }
}
