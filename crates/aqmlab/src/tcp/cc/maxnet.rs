//! MaxNet source: the rate follows the explicit price echoed in ACKs through
//! a demand function; MaxStart replaces slow start.
//!
//! Sources and what was (not) available to us:
//! - B. Wydrowski, M. Zukerman, "MaxNet: a congestion control architecture
//!   for maxmin fairness", IEEE Comm. Letters 6(11), 2002 (abstract): only the
//!   most congested link on the path (the **maximum** price) controls the
//!   source rate; sources with homogeneous demand functions get a max-min
//!   fair allocation.
//! - B. Wydrowski, L. L. H. Andrew, M. Zukerman, "MaxNet: A Congestion
//!   Control Architecture for Scalable Networks", IEEE Comm. Letters 7(10),
//!   2003 (abstract and introduction only): stable for arbitrary delays,
//!   numbers of sources, capacities and topologies; "unlike existing
//!   proposals, MaxNet does not need to estimate the number of bottleneck
//!   links on the end-to-end path". The link law we use is eq. (3) of
//!   Phan et al., "MaxNet and TCP Reno/RED on Mice Traffic" (quoting SAW08), in `aqm/maxnet.rs`.
//! - M. Suchara, L. Andrew, R. Witt, K. Jacobsson, B. Wydrowski, S. Low,
//!   "Implementation of Provably Stable MaxNet", BROADNETS 2008 [SAW08]
//!   (abstract; summarised in Phan et al. §2.2–3): rate fairness,
//!   **MaxStart**, a 24-bit price covering 32 bit/s … 1 Pbit/s "with a
//!   0.001% rate accuracy".
//! - The full texts of the two letters and of SAW08 could not be retrieved.
//!   The exact demand function and gain below are therefore **our choice**,
//!   justified here, not copied.
//!
//! Equations implemented:
//! - (S1) demand law: `x = D(q) = X_max · exp(−κ · q)` bit/s, with `q` the
//!   price echoed by the receiver (the maximum over the path of the link
//!   prices of eq. 3, in seconds), `κ` the source gain (1/s) and `X_max` the
//!   rate at zero price. Why exponential: a constant relative rate accuracy
//!   over a fixed range of rates from a fixed-width price (SAW08's 24 bits
//!   for 32 bit/s … 1 Pbit/s at 0.001 %) means the price is a logarithm of
//!   the rate, i.e. an exponential demand function — the form of the
//!   "scalable" sources of Paganini, Doyle and Low (CDC 2001),
//!   `x = x_max·exp(−α q /(M τ))`, which the 2003 letter says MaxNet makes
//!   scalable without knowing the number of bottlenecks M. We use a gain `κ`
//!   that does not depend on the source's RTT, so that every source has the
//!   same demand function: that is what gives SAW08's *rate* fairness (and
//!   the max-min allocation of the 2002 letter); the price of that choice is
//!   that stability depends on the RTT (next point).
//! - Stability (our derivation for this law, to choose κ): one link, N
//!   sources at `x_i = D(q)`, price `ṗ = (y − μC)/C`, round-trip delay τ.
//!   Linearising, `δx_i = −κ x_i δq`, so the loop gain is
//!   `L(s) = κ (Σx_i / C) e^{−sτ}/s = κ μ e^{−sτ}/s`, which is stable iff
//!   `κ μ τ < π/2` (integrator with delay), independent of N and C. MaxNet
//!   decouples the links (each source is controlled by one link: Wydrowski,
//!   Andrew, Mareels, Networking 2004), so the condition holds per link with
//!   τ the largest RTT, plus the link's update period, among the sources it
//!   controls. Default κ = 10 s⁻¹: stable for τ < π/(2·10·0.95) ≈ 165 ms;
//!   at the paper's 20 ms (+10 ms update) the phase margin is ≈ 74° and the
//!   rates settle with time constant 1/(κμ) ≈ 105 ms.
//! - (S2) window: `w = x · RTT₀ / (8 · (MSS + H))` segments, at least 2,
//!   with RTT₀ the smallest RTT sample (propagation + transmission, like
//!   FAST TCP's baseRTT) and H the TCP/IP header, learned from the size of
//!   the pure ACKs (exactly one header). With an empty path queue the
//!   window-limited rate `w/RTT` is `x` bit/s on the wire (the link's `y`
//!   counts wire bytes); a queue of delay d lowers it to `x·RTT₀/(RTT₀+d)`,
//!   so a transient queue drains and the price integrator restores `y =
//!   μC`. Our choice, from measurements: with the *smoothed* RTT instead
//!   (`w = x·SRTT`, which keeps the rate at `x` whatever the queue), the
//!   queueing delay is neutral — any standing queue, on a MaxNet link or on
//!   a non-MaxNet host queue, keeps the windows that sustain it (in aqmlab a
//!   100 Mbit/s MaxNet link fed by 100 Mbit/s hosts kept the whole queue at
//!   the host and the flows oscillated). The window is recomputed on every
//!   ACK of new data outside loss recovery and when recovery ends. The
//!   sender uses ⌊cwnd⌋ segments, a large error at small windows (w = 1.99
//!   sends 1 segment), so the fractional part is emulated by sigma-delta
//!   modulation once per RTT (⌊w⌋ + 1 for one RTT whenever the accumulated
//!   fractions reach one); per-ACK dithering measured a larger standing
//!   queue (0.9 vs 0.45 packets, four flows at 100 Mbit/s).
//! - (S3) MaxStart [SAW08]: on the first ACK (the SYN-ACK when the
//!   connection has a handshake) the source learns the minimum spare
//!   capacity `s` of the links on its path (the second explicit field,
//!   stamped by every MaxNet link as `min(carried, (μC − y)⁺)`) and the
//!   price; its rate then starts at `r0 = min(s, D(q))` and ramps linearly
//!   to the advertised rate `D(q)` over `ramp_rtts` = 2 RTTs:
//!   `x(t) = r0 + (D(q(t)) − r0) · min(1, (t − t0)/(2·RTT))`, with RTT the
//!   first per-ACK RTT sample (that of the first ACK of new data). Before
//!   the first ACK the sender's `init_cwnd` applies, as in TCP. The window
//!   never goes below 2 segments ([`MIN_WINDOW`]), so a start at a spare
//!   capacity near zero still gets ACKs from a delayed-ACK receiver. The
//!   sender has no pacing, so each window increase leaves as a burst at the
//!   host's rate: on an idle path the first window, `s·RTT` (e.g. 160
//!   packets at 95 Mbit/s and 20 ms), arrives at the router at once. Without
//!   MaxStart (`maxstart = false`) the rate is `D(q)` from the first ACK.
//! - Loss: TCP's recovery and RTO stay in the sender (`tcp/sender.rs`). The
//!   rate is set by the price, not by loss (MaxNet decouples the two), so a
//!   congestion event returns the current rate window as `ssthresh` (no
//!   multiplicative decrease); after an RTO the sender's loss window of one
//!   segment holds until the next ACK of new data, which restores the rate
//!   window.
//!
//! Parameters (`cc = { kind = "maxnet", ... }`): `gain` κ = 10 s⁻¹ (> 0);
//! `max_rate` X_max = "1Gbps" (> 0; the rate a source sends at when no link
//! on its path has a price — in practice its interface rate; the paper's
//! testbed pins 100 Mbit/s); `maxstart` = true; `ramp_rtts` = 2 (> 0).
//!
//! ssthresh quantity: none of the flight or window — the echoed price sets
//! the window (no multiplicative decrease), so recovery inflation and SACKed
//! data do not enter it.

use super::{CcState, CongestionControl, Recovery};
use crate::engine::{to_secs, Time};
use crate::net::ext::{Ext, ExtEcho, MaxNetFields};
use crate::net::packet::Packet;
use crate::units::Rate;
use serde::{Deserialize, Serialize};

/// The smallest window, segments. With one segment in flight a receiver
/// that acknowledges every second segment waits for its delayed-ACK timer
/// (200 ms by default), which stalls a flow that MaxStart starts at a spare
/// capacity near zero; TCP's congestion window never goes below two either
/// (RFC 5681 eq. 4).
pub const MIN_WINDOW: f64 = 2.0;

/// `cc = { kind = "maxnet", ... }`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct MaxNetSourceConfig {
    /// Source gain κ of the demand function, 1/s.
    pub gain: f64,
    /// Rate at zero price, X_max.
    pub max_rate: Rate,
    /// Start with MaxStart (true) or at D(q) directly.
    pub maxstart: bool,
    /// Length of the MaxStart ramp, RTTs.
    pub ramp_rtts: f64,
}

impl Default for MaxNetSourceConfig {
    fn default() -> Self {
        MaxNetSourceConfig {
            gain: 10.0,
            max_rate: Rate(1_000_000_000),
            maxstart: true,
            ramp_rtts: 2.0,
        }
    }
}

impl MaxNetSourceConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        if !(self.gain > 0.0 && self.gain.is_finite()) {
            return Err((
                "gain".into(),
                format!("must be a positive number (1/s), got {}", self.gain),
            ));
        }
        if self.max_rate.0 == 0 {
            return Err(("max_rate".into(), "must be positive".into()));
        }
        if !(self.ramp_rtts > 0.0 && self.ramp_rtts.is_finite()) {
            return Err((
                "ramp_rtts".into(),
                format!("must be a positive number of RTTs, got {}", self.ramp_rtts),
            ));
        }
        Ok(())
    }
}

/// The MaxStart ramp in progress.
#[derive(Clone, Copy, Debug)]
struct Ramp {
    t0: Time,
    r0: f64,
    /// Length in seconds, fixed by the first RTT estimate.
    len: Option<f64>,
}

pub struct MaxNetSource {
    c: MaxNetSourceConfig,
    /// Last echoed price q (seconds); None before the first ACK.
    price: Option<f64>,
    /// Last echoed spare capacity, bit/s (∞ when no link stamped it).
    spare: f64,
    /// Header bytes per segment, learned from pure ACKs.
    header: Option<u32>,
    /// Smoothed per-ACK RTT, seconds.
    rtt: Option<f64>,
    ramp: Option<Ramp>,
    started: bool,
    /// Sigma-delta accumulator of the window's fractional part.
    frac_acc: f64,
    /// Whether the current RTT uses ⌊w⌋ + 1.
    extra: bool,
    /// The next dithering decision is due when `snd_una` reaches this.
    dither_until: u32,
}

impl MaxNetSource {
    pub fn new(c: &MaxNetSourceConfig) -> Self {
        MaxNetSource {
            c: c.clone(),
            price: None,
            spare: f64::INFINITY,
            header: None,
            rtt: None,
            ramp: None,
            started: false,
            frac_acc: 0.0,
            extra: false,
            dither_until: 0,
        }
    }

    /// (S1) the demand function D(q), bit/s.
    pub fn demand(&self, q: f64) -> f64 {
        self.c.max_rate.0 as f64 * (-self.c.gain * q.max(0.0)).exp()
    }

    /// The advertised rate D(q) for the last echoed price, if any.
    pub fn advertised_rate(&self) -> Option<f64> {
        self.price.map(|q| self.demand(q))
    }

    /// (S1) + (S3): the rate the source sends at, at time `now`, bit/s.
    pub fn rate(&mut self, now: Time) -> Option<f64> {
        let d = self.advertised_rate()?;
        if let Some(r) = self.ramp.as_mut() {
            if r.len.is_none() {
                r.len = self.rtt.map(|x| x * self.c.ramp_rtts);
            }
            match r.len {
                None => return Some(r.r0.min(d)),
                Some(len) => {
                    let f = to_secs(now.saturating_sub(r.t0)) / len;
                    if f < 1.0 {
                        return Some(r.r0 + (d - r.r0) * f);
                    }
                    self.ramp = None;
                }
            }
        }
        Some(d)
    }

    /// Whether the MaxStart ramp is still running.
    pub fn ramping(&self) -> bool {
        self.ramp.is_some()
    }

    /// (S2) the window for rate `x`, segments.
    fn window_for(&self, x: f64, s: &CcState) -> Option<f64> {
        let rtt = s
            .min_rtt
            .map(to_secs)
            .or(self.rtt)
            .or(s.srtt.map(to_secs))?;
        let bits = 8.0 * (s.mss + self.header.unwrap_or(40)) as f64;
        Some((x * rtt / bits).max(MIN_WINDOW))
    }

    /// The sender uses ⌊cwnd⌋ segments. Emulate a fractional window by
    /// sigma-delta modulation once per RTT: at the first ACK at or beyond
    /// the `snd_nxt` recorded at the previous decision, add the fractional
    /// part of `w` to an accumulator; use ⌊w⌋ + 1 for the next RTT when it
    /// reaches one (and subtract one), else ⌊w⌋. The mean window is `w`,
    /// and at most one extra segment per RTT is sent.
    fn dither(&mut self, w: f64, s: &CcState) -> f64 {
        if s.snd_una >= self.dither_until {
            self.frac_acc += w.fract();
            self.extra = self.frac_acc >= 1.0;
            if self.extra {
                self.frac_acc -= 1.0;
            }
            self.dither_until = s.snd_nxt.max(s.snd_una + 1);
        }
        w.floor() + if self.extra { 1.0 } else { 0.0 }
    }

    /// The window (S2) for the current rate, if price and RTT are known.
    fn window(&mut self, s: &CcState) -> Option<f64> {
        let x = self.rate(s.now)?;
        self.window_for(x, s)
    }
}

impl CongestionControl for MaxNetSource {
    fn name(&self) -> &'static str {
        "maxnet"
    }

    fn on_ack_packet(&mut self, s: &mut CcState, ack: &Packet) {
        if ack.payload == 0 {
            self.header = Some(ack.size);
        }
        // The fields the receiver echoed (EXT_ECHO); an ACK without them
        // (none echoed yet) reads as unstamped: price 0, spare unset.
        let f = ack.ext.maxnet().unwrap_or(MaxNetFields::UNSTAMPED);
        let q = f.price() as f64;
        self.price = Some(q);
        if f.spare().is_finite() {
            self.spare = f.spare() as f64;
        }
        if !self.started {
            self.started = true;
            if self.c.maxstart {
                // (S3): start at the path's minimum spare capacity (never
                // above the advertised rate); no ramp without the field.
                let r0 = self.spare.min(self.demand(q));
                self.ramp = Some(Ramp {
                    t0: s.now,
                    r0,
                    len: None,
                });
            }
        }
    }

    fn on_rtt(&mut self, _s: &CcState, rtt: Time, _acked: u32) {
        let r = to_secs(rtt);
        self.rtt = Some(match self.rtt {
            None => r,
            Some(a) => a + (r - a) / 8.0,
        });
    }

    fn on_ack(&mut self, s: &mut CcState, _acked: u32) {
        if let Some(w) = self.window(s) {
            s.cwnd = self.dither(w, s);
        }
    }

    fn ssthresh(&mut self, s: &CcState) -> f64 {
        // No multiplicative decrease: the price sets the rate.
        self.window(s).unwrap_or(s.cwnd).max(2.0)
    }

    fn on_recovery_exit(&mut self, s: &mut CcState) {
        if let Some(w) = self.window(s) {
            s.cwnd = self.dither(w, s);
        }
    }

    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }

    /// Segments carry MaxNet's fields, unstamped; each MaxNet link on the
    /// path stamps them.
    fn ext(&self) -> Ext {
        Ext::MaxNet(MaxNetFields::UNSTAMPED)
    }
}

impl super::registry::Registered for MaxNetSourceConfig {
    const KIND: &'static str = "maxnet";
    const ABOUT: &'static str = "MaxNet source: explicit price, demand law, MaxStart (Wydrowski et al. 2003; Suchara et al. 2008)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("gain", "", "> 0", "0.0", "demand-law gain"),
        crate::registry::param!("max_rate", "bit/s", "> 0", "", "rate at zero price"),
        crate::registry::param!("maxstart", "", "true/false", "", "MaxStart instead of slow start"),
        crate::registry::param!("ramp_rtts", "RTTs", "> 0", "0.0", "MaxStart ramp length"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        MaxNetSourceConfig::validate(self)
    }
}

impl super::registry::CcAlgorithm for MaxNetSourceConfig {
    /// The receiver returns the fields of the last segment it received.
    const EXT_ECHO: ExtEcho = ExtEcho::LastForward;
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(MaxNetSource::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::flags;

    const MS: Time = 1_000_000;

    fn ack(price: f32, spare: f32) -> Packet {
        Packet {
            size: 40,
            flags: flags::ACK,
            ext: Ext::MaxNet(MaxNetFields::new(price, spare)),
            ..Default::default()
        }
    }

    fn src(maxstart: bool) -> MaxNetSource {
        MaxNetSource::new(&MaxNetSourceConfig {
            gain: 10.0,
            max_rate: Rate(100_000_000),
            maxstart,
            ramp_rtts: 2.0,
        })
    }

    /// The pair through the packet's extension slot: the source's segments
    /// carry unstamped fields, a link stamps them, the receiver (with the
    /// source's echo rule) returns them in every ACK, the source reads the
    /// price; with another CC's rule the ACKs carry nothing.
    #[test]
    fn fields_travel_source_link_receiver_source() {
        use super::super::registry::CcAlgorithm;
        use crate::net::packet::{FlowId, NodeId};
        use crate::tcp::{Receiver, TcpCtx, TcpParams};
        let mut m = src(false);
        let mut seg = Packet {
            flags: flags::DATA,
            size: 1500,
            payload: 1460,
            ext: m.ext(),
            ..Default::default()
        };
        assert_eq!(seg.ext, Ext::MaxNet(MaxNetFields::UNSTAMPED));
        if let Ext::MaxNet(f) = &mut seg.ext {
            f.stamp(0.2, 3e6);
            f.stamp(0.1, 5e6);
        }
        let p = TcpParams {
            delayed_ack: false,
            ..TcpParams::default()
        };
        let acks = |echo: ExtEcho| {
            let mut r =
                Receiver::new(&p, FlowId(0), NodeId(1), NodeId(0)).with_ext_echo(echo);
            let (mut out, mut timers) = (Vec::new(), Vec::new());
            let mut ctx = TcpCtx {
                now: 0,
                out: &mut out,
                timers: &mut timers,
            };
            r.on_packet(&seg, &mut ctx);
            out
        };
        let echoed = acks(MaxNetSourceConfig::EXT_ECHO);
        assert_eq!(echoed.len(), 1);
        assert_eq!(echoed[0].ext, Ext::MaxNet(MaxNetFields::new(0.2, 3e6)));
        let mut s = CcState::with_window(2.0, 1e9, 1460);
        m.on_ack_packet(&mut s, &echoed[0]);
        assert_eq!(m.advertised_rate(), Some(m.demand(0.2f32 as f64)));
        // another CC's receiver echoes nothing; the source reads price 0
        let plain = acks(crate::tcp::cc::reno::RenoConfig::EXT_ECHO);
        assert_eq!(plain[0].ext, Ext::None);
        let mut m2 = src(false);
        m2.on_ack_packet(&mut s, &plain[0]);
        assert_eq!(m2.advertised_rate(), Some(100e6));
    }

    #[test]
    fn demand_law_is_exponential_in_the_price() {
        let m = src(false);
        assert_eq!(m.demand(0.0), 100e6);
        // D(q) = X_max e^{−κ q}: every 1/κ = 0.1 s of price divides by e
        assert!((m.demand(0.1) - 100e6 / std::f64::consts::E).abs() < 1e-3);
        assert!((m.demand(0.3) / m.demand(0.2) - (-1.0f64).exp()).abs() < 1e-12);
        // the price that gives 9.5 Mbit/s
        let q = (100.0f64 / 9.5).ln() / 10.0;
        assert!((m.demand(q) - 9.5e6).abs() < 1e-3);
        // homogeneous sources: same price, same rate (rate fairness)
        assert_eq!(src(true).demand(q), m.demand(q));
    }

    #[test]
    fn window_is_rate_times_min_rtt_over_packet_bits() {
        let mut m = src(false);
        let mut s = CcState::with_window(2.0, 1e9, 1460);
        s.now = 30 * MS;
        let q = (100.0f64 / 12.0).ln() / 10.0; // D(q) = 12 Mbit/s
        m.on_ack_packet(&mut s, &ack(q as f32, 1e6));
        s.min_rtt = Some(20 * MS);
        m.on_rtt(&s, 20 * MS, 1);
        // 12e6 · 0.020 / (8 · (1460 + 40)) = 20 segments (f32 price rounding)
        let w = m.window(&s).unwrap();
        assert!((w - 20.0).abs() < 1e-3, "{w}");
        m.on_ack(&mut s, 1);
        assert!(
            s.cwnd == w.floor() || s.cwnd == w.floor() + 1.0,
            "{}",
            s.cwnd
        );
        // a larger (queued) sample does not change RTT₀
        m.on_rtt(&s, 36 * MS, 1);
        assert!((m.window(&s).unwrap() - w).abs() < 1e-9);
        // the header comes from the ACKs: 60-byte headers → 1520 B packets
        let mut big = ack(q as f32, 1e6);
        big.size = 60;
        m.on_ack_packet(&mut s, &big);
        assert!((m.window(&s).unwrap() - w * 1500.0 / 1520.0).abs() < 1e-3);
        // a high price still leaves two segments
        m.on_ack_packet(&mut s, &ack(10.0, 1e6));
        s.snd_una = 100;
        m.on_ack(&mut s, 1);
        assert_eq!(s.cwnd, MIN_WINDOW);
    }

    #[test]
    fn maxstart_ramps_linearly_from_spare_to_advertised_over_two_rtts() {
        let mut m = src(true);
        let mut s = CcState::with_window(2.0, 1e9, 1460);
        let q = (100.0f64 / 8.0).ln() / 10.0; // D(q) = 8 Mbit/s
        s.now = 100 * MS;
        m.on_ack_packet(&mut s, &ack(q as f32, 2e6)); // spare 2 Mbit/s
        m.on_rtt(&s, 20 * MS, 1); // ramp length 2 × 20 ms
        let at = |m: &mut MaxNetSource, ms: u64| m.rate(ms * MS).unwrap();
        assert!((at(&mut m, 100) - 2e6).abs() < 1.0, "starts at the spare");
        assert!(
            (at(&mut m, 110) - 3.5e6).abs() < 1.0,
            "a quarter of the way"
        );
        assert!(
            (at(&mut m, 120) - 5e6).abs() < 1.0,
            "half way after one RTT"
        );
        assert!(m.ramping());
        assert!(
            (at(&mut m, 140) - 8e6).abs() < 1.0,
            "advertised after 2 RTTs"
        );
        assert!(!m.ramping());
        assert!((at(&mut m, 500) - 8e6).abs() < 1.0);
        // the window follows: 5 Mbit/s · 20 ms / 12 kbit = 8.33 segments
        let mut m = src(true);
        s.now = 100 * MS;
        m.on_ack_packet(&mut s, &ack(q as f32, 2e6));
        m.on_rtt(&s, 20 * MS, 1);
        s.now = 120 * MS;
        let w = m.window(&s).unwrap();
        assert!((w - 5e6 * 0.02 / 12_000.0).abs() < 1e-3, "{w}");
    }

    #[test]
    fn maxstart_never_starts_above_the_advertised_rate() {
        // An idle path: spare = μC = 9.5 Mbit/s, but the price already
        // advertises 4 Mbit/s: start at 4, no ramp up.
        let mut m = src(true);
        let mut s = CcState::with_window(2.0, 1e9, 1460);
        let q = (100.0f64 / 4.0).ln() / 10.0;
        m.on_ack_packet(&mut s, &ack(q as f32, 9.5e6));
        m.on_rtt(&s, 20 * MS, 1);
        assert!((m.rate(0).unwrap() - 4e6).abs() < 1.0);
        assert!((m.rate(30 * MS).unwrap() - 4e6).abs() < 1.0);
    }

    #[test]
    fn no_maxstart_jumps_to_the_advertised_rate() {
        let mut m = src(false);
        let mut s = CcState::with_window(2.0, 1e9, 1460);
        m.on_ack_packet(&mut s, &ack(0.0, 0.0));
        m.on_rtt(&s, 20 * MS, 1);
        assert_eq!(m.rate(0), Some(100e6));
        assert!(!m.ramping());
    }

    #[test]
    fn fractional_windows_are_dithered_once_per_rtt() {
        // w = 2.25: the window is 3 one RTT in four, else 2.
        let mut m = src(false);
        let mut s = CcState::with_window(2.0, 1e9, 1460);
        let mut used = vec![];
        for rtt in 0..8u32 {
            // one RTT: two ACKs; the decision is taken at the first
            s.snd_una = rtt * 10;
            s.snd_nxt = rtt * 10 + 10;
            used.push(m.dither(2.25, &s));
            s.snd_una += 5;
            assert_eq!(
                m.dither(2.25, &s),
                *used.last().unwrap(),
                "fixed within the RTT"
            );
        }
        assert_eq!(used, [2.0, 2.0, 2.0, 3.0, 2.0, 2.0, 2.0, 3.0]);
        assert_eq!(used.iter().sum::<f64>() / 8.0, 2.25);
    }

    #[test]
    fn loss_does_not_cut_the_rate() {
        let mut m = src(false);
        let mut s = CcState::with_window(2.0, 1e9, 1460);
        let q = (100.0f64 / 12.3).ln() / 10.0; // 20.5 segments at 20 ms
        m.on_ack_packet(&mut s, &ack(q as f32, 0.0));
        s.min_rtt = Some(20 * MS);
        m.on_rtt(&s, 20 * MS, 1);
        let w = m.window(&s).unwrap();
        s.in_flight = 40;
        assert!((m.ssthresh(&s) - w).abs() < 1e-9, "ssthresh = rate window");
        s.cwnd = 1.0; // what the sender does on an RTO
        m.on_ack(&mut s, 1);
        assert!(
            s.cwnd == w.floor() || s.cwnd == w.floor() + 1.0,
            "the next ACK restores it"
        );
        s.cwnd = 10.0; // recovery ends with cwnd = ssthresh; the rate window again
        m.on_recovery_exit(&mut s);
        assert!(s.cwnd == w.floor() || s.cwnd == w.floor() + 1.0);
    }

    #[test]
    fn validation_names_the_key() {
        let mut c = MaxNetSourceConfig::default();
        assert!(c.validate().is_ok());
        c.gain = 0.0;
        assert_eq!(c.validate().unwrap_err().0, "gain");
        c.gain = 1.0;
        c.ramp_rtts = -1.0;
        assert_eq!(c.validate().unwrap_err().0, "ramp_rtts");
        c.ramp_rtts = 2.0;
        c.max_rate = Rate(0);
        assert_eq!(c.validate().unwrap_err().0, "max_rate");
    }
}
