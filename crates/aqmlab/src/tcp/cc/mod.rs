//! The congestion-control trait and the registry of algorithms.
//!
//! Congestion control decides how the window grows and how far it shrinks;
//! loss detection and recovery (duplicate ACKs, fast retransmit and
//! recovery, SACK, PRR) are the recovery layer's (`tcp::recovery`) and the
//! RTO the sender's (`tcp::sender`), as in Linux's `tcp_congestion_ops`
//! and ns-3's `TcpCongestionOps`/`TcpRecoveryOps`. Any algorithm runs with
//! any recovery (`tcp.recovery`); [`CongestionControl::recovery`] is only
//! the default. Windows are in segments (f64), as in ns-2's TCP agents.
//!
//! The quantity each algorithm reduces from (its file says why):
//! `reno`, `newreno`, `cubic` (`rfc9438`): FlightSize, `CcState::in_flight`
//! — outstanding segments, or with SACK recovery the RFC 6675 pipe (SACKed
//! and lost segments excluded); `cubic` (`linux-2.6.22`, `linux`), `htcp`,
//! `bic`, `highspeed`, `vegas`, `compound`: `cwnd` as Linux, never the
//! window inflated by NewReno recovery (`reduction_view`); `maxnet`: the
//! price.
//!
//! To add an algorithm: write one file here with its config (implementing
//! [`registry::CcAlgorithm`]) and its [`CongestionControl`], then add one
//! line to the `cc_kinds!` list below (the one registration point).
//!
//! | `cc` | file | source |
//! |---|---|---|
//! | `reno` | `reno.rs` | RFC 5681 |
//! | `newreno` | `newreno.rs` | RFC 5681 + RFC 6582 |
//! | `cubic` | `cubic.rs` | RFC 9438; `variant = "linux-2.6.22"`: ns-2.35 tcp-linux CUBIC v2.1; `variant = "linux"`: today's Linux `tcp_cubic.c` v2.3 with HyStart; `variant = "ns3"`: ns-3 3.44 `TcpCubic` |
//! | `htcp` | `htcp.rs` | Leith & Shorten 2004, draft-leith-tcp-htcp-06, Linux `tcp_htcp.c` |
//! | `compound` | `compound.rs` | Tan, Song, Zhang, Sridharan 2006; `variant = "ns2"`: ns-2.35 `tcp_compound.c` |
//! | `vegas` | `vegas.rs` | Brakmo & Peterson 1995, Linux `tcp_vegas.c` |
//! | `highspeed` | `highspeed.rs` | RFC 3649 |
//! | `bic` | `bic.rs` | Xu, Harfoush, Rhee 2004, Linux `tcp_bic.c` |
//! | `maxnet` | `maxnet.rs` | MaxNet source law + MaxStart (Wydrowski et al. 2003; Suchara et al. 2008) |
//! | `dctcp` | `dctcp.rs` | RFC 8257; Alizadeh et al., SIGCOMM 2010; Linux `tcp_dctcp.c` |
//! | `prague` | `prague.rs` | L4STeam `linux` `tcp_prague.c` (commit 02573a2), rate-based (`cong_control`, `pacing_rate`); ECT(1), AccECN |
//! | `bbr` | `bbr.rs`, `bbr3.rs` | BBR v1, Linux 6.1 `tcp_bbr.c` (rate-based: `rate_based`, `cong_control`, `pacing_rate`); `variant = "v3"`: google/bbr v3 `tcp_bbr.c` |
//!
//! Windows are in segments; "per ACK" below means per ACK that acknowledges
//! new data outside recovery (the sender's `on_ack`), and `acked` is the
//! number of segments that ACK covers (2 with delayed ACKs).
//!
//! Per ACK or per segment acknowledged ([`CongestionControl::count_segments`], set
//! by `profile = "linux-6.1"`): each stack's rule, as its source counts.
//! Slow start (SS) "per segment" is Linux 6.1 `tcp_slow_start(tp, acked)`
//! (up to ssthresh, the rest of the ACK to congestion avoidance where the
//! algorithm passes it on); congestion avoidance (CA) "per segment" is
//! `tcp_cong_avoid_ai(tp, w, acked)`. ns-3 3.44's `TcpNewReno` counts
//! ACKs: `SlowStart` adds one segment per ACK whatever `segmentsAcked` is
//! (the rest is returned and, below ssthresh, dropped) and
//! `CongestionAvoidance` adds one `MSS²/cwnd` per ACK; ns-2's agents and
//! RFC 5681 count ACKs too, so those profiles (and no profile, which the
//! reproductions run) keep the per-ACK rule.
//!
//! | `cc` | no profile, `ns2-2.35`, `ns3-3.44` | `linux-6.1` |
//! |---|---|---|
//! | `reno`, `newreno` | SS +1, CA +1/cwnd per ACK | per segment (`tcp_reno_cong_avoid`) |
//! | `vegas` (Reno fallback before 3 RTT samples) | per ACK | per segment (`tcp_reno_cong_avoid`) |
//! | `bic` | SS +1 per ACK; CA per segment | SS and CA per segment (`bictcp_cong_avoid`) |
//! | `highspeed` | SS +1, CA a(w)/w per ACK (RFC 3649) | SS per segment; CA per ACK (`hstcp_cong_avoid` counts ACKs) |
//! | `htcp` | SS +1 per ACK; CA per segment | SS per segment; CA per segment (`htcp_cong_avoid` with `pkts_acked`) |
//! | `cubic` | the variant's own rule (`cubic.rs`); the profile picks the variant | `linux`: per segment |
//! | `dctcp` | per segment under every profile (Linux `tcp_dctcp` and ns-3 `TcpDctcp`, a `TcpLinuxReno`, both count segments) | per segment |
//! | `compound`, `maxnet` | their papers' / ns-2's rule | the same (no Linux source) |
//! | `bbr` | its own cwnd (`bbr_set_cwnd` adds the segments ACKed) | the same |

pub mod bbr3;
pub mod registry;

// The registry: one line per algorithm (module, config type, enum variant).
// The config implements `registry::CcAlgorithm` in its own file.
registry::cc_kinds! {
    reno::RenoConfig => Reno,
    newreno::NewRenoConfig => NewReno,
    cubic::CubicConfig => Cubic,
    htcp::HtcpConfig => Htcp,
    compound::CompoundConfig => Compound,
    vegas::VegasConfig => Vegas,
    highspeed::HighSpeedConfig => HighSpeed,
    bic::BicConfig => Bic,
    maxnet::MaxNetSourceConfig => MaxNet,
    dctcp::DctcpConfig => Dctcp,
    bbr::BbrConfig => Bbr,
    prague::PragueConfig => Prague,
}

use crate::engine::Time;
use crate::net::ext::Ext;
use crate::net::packet::{Ecn, Packet};
pub use crate::tcp::ecn::EcnMode;
pub use crate::tcp::rate::RateSample;
use serde::Deserialize;

pub use registry::CcAlgorithm;

/// The sender state a congestion controller may read and change.
#[derive(Clone, Debug)]
pub struct CcState {
    pub now: Time,
    /// Congestion window, segments.
    pub cwnd: f64,
    /// Slow-start threshold, segments.
    pub ssthresh: f64,
    /// FlightSize (RFC 5681 eq. 4): segments sent and not yet cumulatively
    /// acknowledged; with SACK recovery, less those SACKed or presumed lost
    /// (plus lost ones retransmitted): the RFC 6675 pipe.
    pub in_flight: u32,
    /// Smoothed RTT, if a sample exists.
    pub srtt: Option<Time>,
    /// Smallest RTT sample seen.
    pub min_rtt: Option<Time>,
    /// Bytes of payload per full segment.
    pub mss: u32,
    /// First unacknowledged segment.
    pub snd_una: u32,
    /// One past the highest segment sent (Linux `snd_nxt`).
    pub snd_nxt: u32,
    /// The latest per-ACK RTT sample (see [`CongestionControl::on_rtt`]).
    pub last_rtt: Option<Time>,
}

impl CcState {
    /// A state with the given window and threshold, everything else empty
    /// (for tests and fluid models).
    pub fn with_window(cwnd: f64, ssthresh: f64, mss: u32) -> CcState {
        CcState {
            now: 0,
            cwnd,
            ssthresh,
            in_flight: 0,
            srtt: None,
            min_rtt: None,
            mss,
            snd_una: 0,
            snd_nxt: 0,
            last_rtt: None,
        }
    }
}

/// How the sender recovers from a loss detected by duplicate ACKs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// RFC 5681 Reno: leave fast recovery on the first ACK of new data.
    Reno,
    /// RFC 6582 NewReno: stay in recovery until all data outstanding at the
    /// loss is acknowledged; retransmit on each partial ACK.
    NewReno,
}

pub trait CongestionControl: Send {
    /// The `cc` name, as written in scenarios.
    fn name(&self) -> &'static str;

    /// New data was acknowledged outside loss recovery: grow the window.
    /// `acked` is the number of segments newly acknowledged by this ACK.
    fn on_ack(&mut self, s: &mut CcState, acked: u32);

    /// A congestion event (third duplicate ACK, ECN echo, or timeout):
    /// return the new slow-start threshold in segments.
    fn ssthresh(&mut self, s: &CcState) -> f64;

    /// A retransmission timeout happened (after `ssthresh` was taken); the
    /// sender then sets `cwnd` to the loss window.
    fn on_timeout(&mut self, _s: &CcState) {}

    /// An RTT sample, taken on every ACK that acknowledges new data none of
    /// which was retransmitted (Karn), from the send time of the newest
    /// segment it acknowledges — Linux's `pkts_acked(sk, num_acked, rtt_us)`.
    /// Called before [`CongestionControl::on_ack`], in and out of recovery.
    /// (The RFC 6298 RTO estimator times one segment per RTT on its own.)
    fn on_rtt(&mut self, _s: &CcState, _rtt: Time, _acked: u32) {}

    /// Fast recovery ended; the sender has set `cwnd = ssthresh`.
    fn on_recovery_exit(&mut self, _s: &mut CcState) {}

    /// Every ACK the sender receives, before any other processing (for
    /// algorithms that read explicit signals carried in the ACK).
    fn on_ack_packet(&mut self, _s: &mut CcState, _ack: &Packet) {}

    /// The extension slot the sender puts on this algorithm's SYN and data
    /// segments (`net/ext.rs`): `Ext::None`, or the unstamped fields of a
    /// protocol whose links write into the packet (MaxNet). What the
    /// receiver echoes back is the config's `CcAlgorithm::EXT_ECHO`.
    fn ext(&self) -> Ext {
        Ext::None
    }

    /// The IP-ECN codepoint of this controller's data segments when ECN
    /// is on: ECT(0) for classic senders (RFC 3168), ECT(1) for L4S
    /// senders (RFC 9331 §8).
    fn codepoint(&self) -> Ecn {
        Ecn::Ect0
    }

    /// The ECN feedback mode the connection settled (`tcp/ecn.rs`; at
    /// construction without a handshake, on the SYN-ACK with one): return
    /// the mode to use. Prague refuses all but AccECN and falls back to
    /// Reno without ECN, as L4STeam's `prague_init` does.
    fn ecn_mode(&mut self, mode: EcnMode) -> EcnMode {
        mode
    }

    /// In AccECN mode, before [`CongestionControl::on_ack_packet`]: the
    /// CE-marked packets this ACK reports (RFC 9768 ACE delta; the
    /// ACK's ECE is then set iff it is positive).
    fn on_ce_delta(&mut self, _delta: u32) {}

    /// Named statistics of the controller's own state (e.g. DCTCP's α),
    /// reported in `summary.json` under `cc_stats`. Read once, when the
    /// run's results are collected.
    fn stats(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }

    /// The controller is rate-based (Linux `cong_control`): the sender
    /// keeps per-segment delivery state (`tcp::rate`), hands it a
    /// [`RateSample`] on every ACK through
    /// [`CongestionControl::cong_control`], and paces at
    /// [`CongestionControl::pacing_rate`]. Such a controller owns cwnd:
    /// what it sets in `cong_control` holds for the sending that follows
    /// the ACK; recovery still decides what to retransmit. Read once, when
    /// the sender is built.
    fn rate_based(&self) -> bool {
        false
    }

    /// Every ACK (new or duplicate) of a [`CongestionControl::rate_based`]
    /// controller, after loss recovery has processed it and before new data
    /// is sent (Linux `tcp_cong_control` → `cong_control(sk, rs)`): set
    /// `s.cwnd`. `on_ack` is not called for such a controller.
    fn cong_control(&mut self, _s: &mut CcState, _rs: &RateSample) {}

    /// Pacing rate in full-sized segments per second, for a
    /// [`CongestionControl::rate_based`] controller (`sk_pacing_rate`
    /// over the segment's size; the sender spaces segments by their size
    /// on the wire).
    fn pacing_rate(&self, _s: &CcState) -> Option<f64> {
        None
    }

    /// The controller asks to mark the sender application-limited (BBR's
    /// ProbeRTT sets `tp->app_limited`); read after `cong_control`.
    fn wants_app_limited(&mut self) -> bool {
        false
    }

    /// The flow's own random seed, derived from the run's seed and the
    /// flow id (`TcpParams::cc_seed`), given once when the sender is
    /// built. Controllers that draw random numbers (BBR's ProbeBW phases)
    /// seed their generator from it, so a run is reproducible from its
    /// scenario seed and two flows draw different sequences.
    fn seed(&mut self, _seed: u64) {}

    /// Window growth counts the segments an ACK covers, as Linux does
    /// (`tcp_slow_start(tp, acked)`, `tcp_cong_avoid_ai(tp, w, acked)`):
    /// called once by the sender, `true` under `profile = "linux-6.1"`.
    /// Otherwise growth is per ACK, as RFC 5681, ns-2 and ns-3's
    /// `TcpNewReno` (`SlowStart` adds one segment per ACK whatever
    /// `segmentsAcked` is). The table in this file's header says which
    /// algorithm follows it. (The flag lives in the controller, not in
    /// [`CcState`], whose size is part of the sender's hot cache lines.)
    fn count_segments(&mut self, _on: bool) {}

    /// The loss-recovery scheme used with this algorithm when the scenario
    /// does not set `tcp.recovery`.
    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }
}

impl Default for CcConfig {
    fn default() -> Self {
        CcConfig::NewReno(newreno::NewRenoConfig {})
    }
}

/// `cc` as written in a scenario (the older name of [`CcConfig`]).
pub type CcKind = CcConfig;

/// Deserialize `cc` from a name or a table (what `CcConfig`'s own
/// `Deserialize` does; kept for `deserialize_with` attributes).
pub fn deserialize_cc<'de, D: serde::Deserializer<'de>>(d: D) -> Result<CcConfig, D::Error> {
    CcConfig::deserialize(d)
}

/// RFC 5681 §3.1 window growth shared by Reno-family algorithms: slow start
/// adds one segment per ACK while `cwnd < ssthresh` (eq. 2 with N ≥ SMSS);
/// congestion avoidance adds `1/cwnd` segment per ACK (eq. 3). Growth is per
/// ACK, not per segment acknowledged, as in RFC 5681 and ns-2.
pub fn reno_increase(s: &mut CcState) {
    if s.cwnd < s.ssthresh {
        s.cwnd += 1.0;
    } else {
        s.cwnd += 1.0 / s.cwnd;
    }
}

/// Linux 6.1 `tcp_slow_start(tp, acked)`: grow by the segments acked up
/// to ssthresh; return what is left for congestion avoidance.
pub fn slow_start_segments(s: &mut CcState, acked: u32) -> u32 {
    let grown = (s.cwnd + acked as f64).min(s.ssthresh.max(s.cwnd));
    let used = (grown - s.cwnd).ceil().min(acked as f64) as u32;
    s.cwnd = grown;
    acked - used
}

/// Reno-family growth under the stack's counting rule
/// ([`CongestionControl::count_segments`]).
pub fn reno_grow(s: &mut CcState, acked: u32, count_segments: bool) {
    if count_segments {
        reno_increase_segments(s, acked.max(1));
    } else {
        reno_increase(s);
    }
}

/// Linux `tcp_reno_cong_avoid(sk, ack, acked)` (also ns-3
/// `TcpLinuxReno`): growth per segment acknowledged, not per ACK. Slow
/// start adds `acked` segments up to ssthresh (`tcp_slow_start`), and what
/// is left grows the window by `1/cwnd` per segment (`tcp_cong_avoid_ai`
/// with `w = cwnd`, in fractional segments). With an ACK per segment it is
/// [`reno_increase`]; with delayed ACKs it grows twice as fast.
pub fn reno_increase_segments(s: &mut CcState, acked: u32) {
    let mut acked = acked as f64;
    if s.cwnd < s.ssthresh {
        let grown = (s.cwnd + acked).min(s.ssthresh.max(s.cwnd));
        acked -= grown - s.cwnd;
        s.cwnd = grown;
        if acked <= 0.0 {
            return;
        }
    }
    s.cwnd += acked / s.cwnd;
}

/// The state a reduction should start from. The sender inflates `cwnd` by
/// one segment per duplicate ACK during fast recovery (RFC 5681 §3.2) and
/// sends new data on it, so `cwnd` and `in_flight` can reach several times
/// the window in use before the loss. A second reduction inside the same
/// loss episode — a retransmission timeout during fast recovery, or a
/// repeated timeout — then reduces from the un-inflated window
/// `min(cwnd, ssthresh)` (and flight), which is what Linux and ns-2.35
/// tcp-linux, which do not inflate `snd_cwnd`, hold at that moment.
/// `in_episode`: a reduction happened and no new data has been
/// acknowledged outside recovery since.
pub fn reduction_view(s: &CcState, in_episode: bool) -> CcState {
    let mut v = s.clone();
    if in_episode {
        v.cwnd = v.cwnd.min(v.ssthresh);
        v.in_flight = v.in_flight.min(v.ssthresh.max(0.0).floor() as u32);
    }
    v
}

/// The loss-episode bookkeeping behind [`reduction_view`], one per
/// controller: a reduction starts (or continues) an episode; new data
/// acknowledged outside recovery, or the end of recovery, ends it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LossEpisode {
    active: bool,
}

impl LossEpisode {
    /// The state a reduction starts from (the un-inflated window inside an
    /// episode); the episode is active afterwards.
    pub fn reduce_from(&mut self, s: &CcState) -> CcState {
        let v = reduction_view(s, self.active);
        self.active = true;
        v
    }

    /// New data acknowledged outside recovery, or recovery ended.
    pub fn end(&mut self) {
        self.active = false;
    }
}

/// RFC 5681 eq. (4): `ssthresh = max(FlightSize / 2, 2·SMSS)`.
pub fn reno_ssthresh(s: &CcState) -> f64 {
    (s.in_flight as f64 / 2.0).max(2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(cwnd: f64, ssthresh: f64) -> CcState {
        CcState {
            now: 0,
            cwnd,
            ssthresh,
            in_flight: 0,
            srtt: None,
            min_rtt: None,
            mss: 1000,
            snd_una: 0,
            snd_nxt: 0,
            last_rtt: None,
        }
    }

    #[test]
    fn slow_start_doubles_per_rtt_and_ca_adds_one() {
        let mut s = st(1.0, 100.0);
        // one RTT of slow start with an ACK per segment: cwnd doubles
        for _ in 0..4 {
            let acks = s.cwnd as u32;
            for _ in 0..acks {
                reno_increase(&mut s);
            }
        }
        assert_eq!(s.cwnd, 16.0);
        // congestion avoidance: one RTT of cwnd ACKs adds about one segment
        let mut s = st(10.0, 5.0);
        for _ in 0..10 {
            reno_increase(&mut s);
        }
        assert!((s.cwnd - 10.95).abs() < 0.01, "{}", s.cwnd);
    }

    #[test]
    fn per_segment_growth_counts_segments_acked() {
        // slow start: a delayed ACK of 2 segments adds 2, capped at ssthresh
        let mut s = st(10.0, 11.0);
        reno_increase_segments(&mut s, 2);
        // 1 segment to reach ssthresh, the other in congestion avoidance
        assert!((s.cwnd - (11.0 + 1.0 / 11.0)).abs() < 1e-12, "{}", s.cwnd);
        // congestion avoidance: one RTT of cwnd/2 delayed ACKs adds ~1
        let mut s = st(20.0, 5.0);
        for _ in 0..10 {
            reno_increase_segments(&mut s, 2);
        }
        assert!((s.cwnd - 20.0 - 1.0).abs() < 0.03, "{}", s.cwnd);
    }

    /// The profile rule: with `count_segments` (linux-6.1) a delayed ACK
    /// of 2 segments in slow start adds 2 for every Linux-derived
    /// algorithm; without it (no profile, ns-2, ns-3) it adds 1.
    #[test]
    fn slow_start_counts_segments_only_under_the_linux_rule() {
        for kind in ["reno", "newreno", "bic", "highspeed", "htcp"] {
            let t: T = toml::from_str(&format!("cc = \"{kind}\"")).unwrap();
            for (count, want) in [(false, 11.0), (true, 12.0)] {
                let mut cc = t.cc.build();
                cc.count_segments(count);
                let mut s = st(10.0, 100.0);
                cc.on_ack(&mut s, 2);
                assert_eq!(s.cwnd, want, "{kind}, count_segments {count}");
            }
        }
        // congestion avoidance: Reno per segment adds 2/cwnd per delayed
        // ACK under the Linux rule, 1/cwnd otherwise
        let t: T = toml::from_str("cc = \"newreno\"").unwrap();
        for (count, want) in [(false, 20.05), (true, 20.1)] {
            let mut cc = t.cc.build();
            cc.count_segments(count);
            let mut s = st(20.0, 5.0);
            cc.on_ack(&mut s, 2);
            assert!((s.cwnd - want).abs() < 1e-12, "{count}: {}", s.cwnd);
        }
        // the ACK that crosses ssthresh: 1 segment to reach it, the other
        // in congestion avoidance (tcp_slow_start's leftover)
        let mut s = st(10.0, 11.0);
        assert_eq!(slow_start_segments(&mut s, 2), 1);
        assert_eq!(s.cwnd, 11.0);
    }

    #[test]
    fn ssthresh_is_half_flight_min_two() {
        let mut s = st(10.0, 5.0);
        s.in_flight = 20;
        assert_eq!(reno_ssthresh(&s), 10.0);
        s.in_flight = 3;
        assert_eq!(reno_ssthresh(&s), 2.0);
    }

    #[derive(Deserialize)]
    struct T {
        #[serde(deserialize_with = "deserialize_cc")]
        cc: CcConfig,
    }

    #[test]
    fn names_round_trip() {
        for n in CcConfig::NAMES {
            let t: T = toml::from_str(&format!("cc = \"{n}\"")).unwrap();
            assert_eq!(t.cc.name(), *n);
            assert_eq!(t.cc.build().name(), *n);
            let t: T = toml::from_str(&format!("cc = {{ kind = \"{n}\" }}")).unwrap();
            assert_eq!(t.cc.name(), *n);
        }
    }

    #[test]
    fn unknown_names_and_keys_are_errors() {
        let e = toml::from_str::<T>("cc = \"cubicle\"")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("unknown congestion control `cubicle`") && e.contains("`newreno`"),
            "{e}"
        );
        let e = toml::from_str::<T>("cc = { kind = \"reno\", beta = 0.5 }")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("beta"), "{e}");
        let e = toml::from_str::<T>("cc = 3").err().unwrap().to_string();
        assert!(e.contains("congestion control name"), "{e}");
    }

    #[test]
    fn a_second_reduction_in_one_episode_starts_from_the_uninflated_window() {
        let mut s = st(40.0, 10.0);
        s.in_flight = 35;
        let mut e = LossEpisode::default();
        let first = e.reduce_from(&s);
        assert_eq!(
            (first.cwnd, first.in_flight),
            (40.0, 35),
            "first reduction: as is"
        );
        let second = e.reduce_from(&s);
        assert_eq!(
            (second.cwnd, second.in_flight),
            (10.0, 10),
            "inside the episode"
        );
        e.end();
        let after = e.reduce_from(&s);
        assert_eq!((after.cwnd, after.in_flight), (40.0, 35), "a new episode");
    }
}
