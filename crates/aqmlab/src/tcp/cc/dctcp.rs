//! DCTCP — Data Center TCP.
//!
//! Sources: RFC 8257 (S. Bensley et al., 2017) §3.2 (receiver: ECE on
//! exactly the ACKs of CE-marked packets — [`EcnEcho::PerPacket`], done by
//! the receiver), §3.3 (sender: α estimation per window of data, window
//! reduction), §3.4 (loss handled as conventional TCP); M. Alizadeh et al.,
//! "Data Center TCP (DCTCP)", SIGCOMM 2010, §3.1 eq. (1)–(2); Linux
//! `net/ipv4/tcp_dctcp.c` (`dctcp_update_alpha`, `dctcp_ssthresh`,
//! `dctcp_react_to_loss`).
//!
//! - Per ACK (RFC 8257 §3.3 steps 1–3): the segments newly acknowledged are
//!   added to `bytes_acked`, and to `bytes_marked` when the ACK carries ECE.
//! - When `SND.UNA` reaches `window_end` (a window of data is acknowledged,
//!   steps 4–9): `M = bytes_marked / bytes_acked`,
//!   `α ← (1 − g)·α + g·M`, `window_end = SND.NXT`, counters reset.
//! - On ECE (the sender reacts at most once per window of data, RFC 3168
//!   §6.1.2, as for every algorithm): `ssthresh = cwnd·(1 − α/2)`, at least 2
//!   segments (step 10–11; Linux `dctcp_ssthresh`).
//! - On loss (fast retransmit or timeout): `ssthresh = max(FlightSize/2, 2)`
//!   as Reno (RFC 8257 §3.4; Linux `dctcp_react_to_loss`).
//! - Window growth is Linux's Reno, per segment acknowledged
//!   (`dctcp_cong_avoid` = `tcp_reno_cong_avoid(sk, ack, acked)`; ns-3
//!   `TcpDctcp` derives from `TcpLinuxReno`): slow start adds the segments
//!   an ACK covers, congestion avoidance 1/cwnd per segment, so with
//!   delayed ACKs the window grows as fast as with an ACK per segment and
//!   the marked fraction does not depend on the ACK ratio
//!   ([`super::reno_increase_segments`]).
//!
//! Counting in segments instead of bytes gives the same `M` for full-sized
//! segments. ECN must be on (`tcp.ecn = true`) for data to be ECN-capable.
//! With AccECN feedback (`tcp.ecn_feedback = "accecn"`) the marked
//! segments of an ACK are the CE count its ACE field reports (at most the
//! segments it acknowledges), as Linux `dctcp_update_alpha` reads
//! `tp->delivered_ce`.
//!
//! Parameters: `g` = 1/16 (RFC 8257 §4.2), `alpha_init` = 1 (Linux
//! `dctcp_alpha_on_init`; RFC 8257 §3.3 leaves it to the implementation),
//! `ect1` = false: data carries ECT(0); `true` sends ECT(1), the L4S
//! identifier (RFC 9331 §8), as ns-3 `TcpDctcp` with `UseEct0 = false` and
//! Linux DCTCP over an L4S AQM.

use super::registry::EcnEcho;
use super::{reno_increase_segments, reno_ssthresh, CcState, CongestionControl};
use crate::net::packet::{flags, Ecn, Packet};
use serde::{Deserialize, Serialize};

/// `cc = { kind = "dctcp", g = 0.0625 }`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct DctcpConfig {
    /// Weight of a new sample in α's moving average.
    pub g: f64,
    /// α before the first window is measured.
    pub alpha_init: f64,
    /// Send ECT(1) (L4S) instead of ECT(0).
    pub ect1: bool,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig {
            g: 1.0 / 16.0,
            alpha_init: 1.0,
            ect1: false,
        }
    }
}

impl DctcpConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(("g".into(), format!("must be in (0, 1], got {}", self.g)));
        }
        if !(0.0..=1.0).contains(&self.alpha_init) {
            return Err((
                "alpha_init".into(),
                format!("must be in [0, 1], got {}", self.alpha_init),
            ));
        }
        Ok(())
    }
}

pub struct Dctcp {
    g: f64,
    alpha: f64,
    /// `DCTCP.WindowEnd`, a segment number; `None` until the first ACK.
    window_end: Option<u32>,
    bytes_acked: u64,
    bytes_marked: u64,
    /// The ACK being processed carries ECE and has not yet caused a
    /// reduction: the next `ssthresh` is DCTCP's, any other is a loss.
    ece_now: bool,
    ect1: bool,
    /// AccECN: the CE count of the ACK being processed.
    ce_delta: Option<u32>,
}

impl Dctcp {
    pub fn new(c: &DctcpConfig) -> Self {
        Dctcp {
            g: c.g,
            alpha: c.alpha_init,
            window_end: None,
            bytes_acked: 0,
            bytes_marked: 0,
            ece_now: false,
            ect1: c.ect1,
            ce_delta: None,
        }
    }

    /// The current estimate α of the fraction of marked data.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    /// The final α estimate.
    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![("alpha", self.alpha)]
    }

    fn on_ack_packet(&mut self, s: &mut CcState, ack: &Packet) {
        let ece = ack.has(flags::ECE);
        self.ece_now = ece;
        if ack.has(flags::SYN) {
            return;
        }
        let end = *self.window_end.get_or_insert(s.snd_nxt);
        let acked = ack.ack.saturating_sub(s.snd_una).min(s.snd_nxt.saturating_sub(s.snd_una));
        self.bytes_acked += acked as u64;
        self.bytes_marked += match self.ce_delta.take() {
            Some(d) => d.min(acked) as u64,
            None if ece => acked as u64,
            None => 0,
        };
        let una = s.snd_una.max(ack.ack.min(s.snd_nxt));
        if una >= end {
            // a window of data is acknowledged (Linux: !before(snd_una, next_seq))
            if self.bytes_acked > 0 {
                let m = self.bytes_marked as f64 / self.bytes_acked as f64;
                self.alpha = (1.0 - self.g) * self.alpha + self.g * m;
            }
            self.window_end = Some(s.snd_nxt);
            self.bytes_acked = 0;
            self.bytes_marked = 0;
        }
    }

    fn on_ack(&mut self, s: &mut CcState, acked: u32) {
        reno_increase_segments(s, acked);
    }

    fn codepoint(&self) -> Ecn {
        if self.ect1 {
            Ecn::Ect1
        } else {
            Ecn::Ect0
        }
    }

    fn on_ce_delta(&mut self, delta: u32) {
        self.ce_delta = Some(delta);
    }

    fn ssthresh(&mut self, s: &CcState) -> f64 {
        if std::mem::take(&mut self.ece_now) {
            (s.cwnd * (1.0 - self.alpha / 2.0)).max(2.0)
        } else {
            reno_ssthresh(s)
        }
    }

    fn on_timeout(&mut self, _s: &CcState) {
        self.ece_now = false;
    }
}

impl super::registry::Registered for DctcpConfig {
    const KIND: &'static str = "dctcp";
    const ABOUT: &'static str =
        "Data Center TCP (RFC 8257; Alizadeh et al., SIGCOMM 2010; Linux tcp_dctcp.c); needs tcp.ecn = true";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("g", "weight", "(0, 1]", "0.0", "weight of the newest window's marked fraction in α"),
        crate::registry::param!("alpha_init", "fraction", "[0, 1]", "1.5", "α before the first window is measured"),
        crate::registry::param!("ect1", "", "true/false", "", "send ECT(1), the L4S identifier (RFC 9331), instead of ECT(0)"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        DctcpConfig::validate(self)
    }
}

impl super::registry::CcAlgorithm for DctcpConfig {
    const ECN_ECHO: EcnEcho = EcnEcho::PerPacket;
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Dctcp::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{FlowId, NodeId};
    use crate::tcp::receiver::Receiver;
    use crate::tcp::{TcpCtx, TcpParams};

    fn ack(n: u32, ece: bool) -> Packet {
        Packet {
            ack: n,
            flags: flags::ACK | if ece { flags::ECE } else { 0 },
            ..Default::default()
        }
    }

    /// RFC 8257 §3.3: α is updated once per window of data from the fraction
    /// of its bytes that were ECE-acknowledged; α ← (1 − g)α + gM.
    #[test]
    fn alpha_is_a_moving_average_of_the_marked_fraction_per_window() {
        let mut d = Dctcp::new(&DctcpConfig::default());
        let mut s = CcState::with_window(10.0, 5.0, 1000);
        s.snd_nxt = 10;
        // window 1: segments 0..10, 3 of them acknowledged with ECE
        for i in 1..=10 {
            if i == 10 {
                s.snd_nxt = 20; // the sender has sent the next window
            }
            d.on_ack_packet(&mut s, &ack(i, i <= 3));
            s.snd_una = i;
            if i < 10 {
                assert_eq!(d.alpha(), 1.0, "no update inside the window");
            }
        }
        let a1 = 15.0 / 16.0 + 0.3 / 16.0;
        assert!((d.alpha() - a1).abs() < 1e-12, "{} vs {a1}", d.alpha());
        // window 2 (segments 10..20): no marks
        for i in 11..=20 {
            if i == 20 {
                s.snd_nxt = 30;
            }
            d.on_ack_packet(&mut s, &ack(i, false));
            s.snd_una = i;
        }
        let a2 = a1 * 15.0 / 16.0;
        assert!((d.alpha() - a2).abs() < 1e-12, "{} vs {a2}", d.alpha());
        // window 3 (segments 20..30), delayed ACKs covering 2 segments each
        for (k, i) in (22..=30).step_by(2).enumerate() {
            d.on_ack_packet(&mut s, &ack(i, k % 2 == 0));
            s.snd_una = i;
        }
        // 3 of 5 ACKs carried ECE: 6 of 10 segments
        let a3 = a2 * 15.0 / 16.0 + 0.6 / 16.0;
        assert!((d.alpha() - a3).abs() < 1e-12, "{} vs {a3}", d.alpha());
    }

    /// RFC 8257 §3.3 step 10–11 on ECE; §3.4 Reno halving on loss.
    #[test]
    fn ece_cuts_by_half_alpha_and_loss_halves() {
        let mut d = Dctcp::new(&DctcpConfig {
            alpha_init: 0.2,
            ..Default::default()
        });
        let mut s = CcState::with_window(50.0, 100.0, 1000);
        s.snd_nxt = 50;
        s.in_flight = 50;
        d.on_ack_packet(&mut s, &ack(1, true));
        assert!((d.ssthresh(&s) - 45.0).abs() < 1e-12, "50·(1 − 0.1)");
        // a second reduction in the same ACK (a loss) is Reno's
        assert_eq!(d.ssthresh(&s), 25.0);
        d.on_ack_packet(&mut s, &ack(1, false));
        assert_eq!(d.ssthresh(&s), 25.0, "a loss without ECE halves");
        let mut small = CcState::with_window(2.0, 1.0, 1000);
        small.snd_nxt = 2;
        d.on_ack_packet(&mut small, &ack(0, true));
        assert_eq!(d.ssthresh(&small), 2.0, "at least 2 segments");
    }

    /// RFC 8257 §3.2 with delayed ACKs (every 2nd segment): ECE on exactly
    /// the ACKs that cover CE segments, an immediate ACK at each change of
    /// CE state, CWR ignored.
    #[test]
    fn receiver_echoes_each_ce_state_precisely() {
        let p = TcpParams {
            delayed_ack: true,
            delack_count: 2,
            ..TcpParams::default()
        };
        let mut r = Receiver::new(&p, FlowId(0), NodeId(1), NodeId(0)).with_echo(EcnEcho::PerPacket);
        let (mut out, mut timers) = (Vec::new(), Vec::new());
        let marks = [false, false, true, true, true, false, false, true, false, false];
        for (i, &ce) in marks.iter().enumerate() {
            let seg = Packet {
                seq: i as u32,
                flags: flags::DATA | if i == 4 { flags::CWR } else { 0 },
                ecn: if ce {
                    crate::net::packet::Ecn::Ce
                } else {
                    crate::net::packet::Ecn::Ect0
                },
                ..Default::default()
            };
            let mut ctx = TcpCtx { now: i as u64, out: &mut out, timers: &mut timers };
            r.on_packet(&seg, &mut ctx);
        }
        let acks: Vec<(u32, bool)> = out.iter().map(|a| (a.ack, a.has(flags::ECE))).collect();
        assert_eq!(
            acks,
            [
                (2, false), // 0, 1: a delayed ACK for two
                (3, true),  // 2: CE starts, immediate
                (5, true),  // 3, 4 (CWR ignored)
                (6, false), // 5: CE ends, immediate
                (7, false), // 6 pending → sent at once before the change
                (8, true),  // 7: CE, immediate
                (9, false), // 8: CE ends, immediate
            ]
        );
        // every CE segment is covered by an ECE ACK and no other
        let mut prev = 0;
        for (a, e) in acks {
            for seg in prev..a {
                assert_eq!(marks[seg as usize], e, "segment {seg}");
            }
            prev = a;
        }
    }
}
