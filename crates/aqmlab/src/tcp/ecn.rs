//! ECN as a layer: the codepoint a sender puts on its data, the feedback
//! scheme (`tcp.ecn_feedback`), its negotiation in the handshake, and the
//! Accurate ECN counters.
//!
//! Sources: RFC 3168 §5–6 (ECT(0), ECE/CWR feedback, the SYN with ECE and
//! CWR, the SYN-ACK with ECE); RFC 9331 §8 (an L4S sender marks its packets
//! ECT(1)); RFC 9768, "More Accurate Explicit Congestion Notification
//! (AccECN) Feedback in TCP": §3.1 (negotiation: the AE, CWR and ECE bits of
//! the SYN and SYN-ACK, Tables 1 and 2, the fallbacks to RFC 3168 or to no
//! ECN), §3.2.2 (the receiver's CE packet counter r.cep, initialised to 5,
//! and the 3-bit ACE field = r.cep mod 8 on every ACK, AE the most
//! significant bit), §3.2.2.5.1 (change- and increment-triggered ACKs) and
//! §3.2.2.5.2 with Appendix A.2 (the sender's safety rule when ACE may have
//! wrapped), as Linux `tcp_input.c` `__tcp_accecn_process` applies it.
//!
//! Modelled: the handshake codes, r.cep/s.cep and ACE on every ACK,
//! ACE-wrap safety, change- and increment-triggered ACKs. Not modelled:
//! the AccECN TCP option and its byte counters (r.e0b, r.e1b, r.ceb), the
//! third-ACK encoding of the SYN-ACK's IP-ECN field, and the mangling
//! checks on the first ACE value; the receiver's ACKs are Not-ECT.

use crate::net::packet::{flags, Ecn};
use serde::{Deserialize, Serialize};

/// `tcp.ecn_feedback`: which feedback a sender asks for (with
/// `tcp.ecn = true`) and a receiver supports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EcnFeedback {
    /// RFC 3168: ECE from a CE segment until CWR (or per packet for DCTCP).
    #[default]
    Rfc3168,
    /// RFC 9768 Accurate ECN: the ACE counter on every ACK.
    Accecn,
}

impl EcnFeedback {
    pub const NAMES: &'static [&'static str] = &["rfc3168", "accecn"];
}

/// The feedback mode a connection ends up in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcnMode {
    /// Not ECN-capable: data is Not-ECT, ECE is ignored.
    #[default]
    Off,
    /// RFC 3168 ECE/CWR feedback.
    Classic,
    /// RFC 9768 ACE feedback.
    AccEcn,
}

impl EcnMode {
    /// The mode the keys ask for, before (or without) a handshake.
    pub fn requested(ecn: bool, fb: EcnFeedback) -> EcnMode {
        match (ecn, fb) {
            (false, _) => EcnMode::Off,
            (true, EcnFeedback::Rfc3168) => EcnMode::Classic,
            (true, EcnFeedback::Accecn) => EcnMode::AccEcn,
        }
    }
}

/// r.cep and s.cep start at 5 (RFC 9768 §3.2.2.1), so that a middlebox
/// that zeroes the flags cannot pass for "no CE".
pub const CEP_INIT: u32 = 5;

/// The (AE, CWR, ECE) bits of `f` as a number 0..=7, AE the most
/// significant (RFC 9768 §3.2.2: the ACE field).
pub fn ace_of(f: u8) -> u32 {
    (f & flags::AE != 0) as u32 * 4
        + (f & flags::CWR != 0) as u32 * 2
        + (f & flags::ECE != 0) as u32
}

/// The flags that carry the 3-bit value `v` in AE, CWR and ECE.
pub fn ace_flags(v: u32) -> u8 {
    let mut f = 0;
    if v & 4 != 0 {
        f |= flags::AE;
    }
    if v & 2 != 0 {
        f |= flags::CWR;
    }
    if v & 1 != 0 {
        f |= flags::ECE;
    }
    f
}

/// The ECN bits of a SYN (RFC 3168 §6.1.1: ECE and CWR; RFC 9768 §3.1.1,
/// Table 1: AE, CWR and ECE for AccECN).
pub fn syn_flags(mode: EcnMode) -> u8 {
    match mode {
        EcnMode::Off => 0,
        EcnMode::Classic => flags::CWR | flags::ECE,
        EcnMode::AccEcn => flags::AE | flags::CWR | flags::ECE,
    }
}

/// The server's side of the handshake: given what it supports and the
/// SYN's flags and IP-ECN field, the ECN bits of its SYN-ACK and the mode it
/// enters (RFC 9768 §3.1.1, Table 2; RFC 3168 §6.1.1).
pub fn answer_syn(supports: EcnMode, syn: u8, syn_ip: Ecn) -> (u8, EcnMode) {
    let asks_ecn = syn & flags::CWR != 0 && syn & flags::ECE != 0;
    let asks_acc = asks_ecn && syn & flags::AE != 0;
    match supports {
        EcnMode::Off => (0, EcnMode::Off),
        _ if !asks_ecn => (0, EcnMode::Off),
        EcnMode::AccEcn if asks_acc => {
            // Table 2: the SYN-ACK reflects the SYN's IP-ECN codepoint
            let f = match syn_ip {
                Ecn::NotEct => flags::CWR,
                Ecn::Ect1 => flags::CWR | flags::ECE,
                Ecn::Ect0 => flags::AE,
                Ecn::Ce => flags::AE | flags::CWR,
            };
            (f, EcnMode::AccEcn)
        }
        // an RFC 3168 server, or an AccECN server asked for RFC 3168
        _ => (flags::ECE, EcnMode::Classic),
    }
}

/// The client's side: the mode a SYN-ACK's (AE, CWR, ECE) puts it in,
/// given the mode it asked for (RFC 9768 §3.1.2, Table 2: 000 no ECN,
/// 001 and 101 RFC 3168, 111 a broken reflector so no ECN, any other
/// AccECN; an RFC 3168 client reads ECE without CWR as RFC 3168).
pub fn client_mode(asked: EcnMode, synack: u8) -> EcnMode {
    let v = ace_of(synack);
    match asked {
        EcnMode::Off => EcnMode::Off,
        EcnMode::Classic => {
            if v & 3 == 1 {
                EcnMode::Classic
            } else {
                EcnMode::Off
            }
        }
        EcnMode::AccEcn => match v {
            0 | 7 => EcnMode::Off,
            1 | 5 => EcnMode::Classic,
            _ => EcnMode::AccEcn,
        },
    }
}

/// The sender's count of CE packets an ACK reports (RFC 9768 §3.2.2.5.2,
/// Appendix A.2): the ACE delta `(ace − s.cep) mod 8`, and when the ACK
/// newly delivers more than 7 packets (ACE may have wrapped) the largest
/// count not above `delivered` that is congruent to the delta mod 8 (the
/// conservative assumption, as Linux `__tcp_accecn_process`).
pub fn ce_delta(s_cep: u32, ace: u32, delivered: u32) -> u32 {
    let d = ace.wrapping_sub(s_cep) & 7;
    if delivered <= 7 {
        d
    } else {
        delivered - ((delivered - d) & 7)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ace_round_trips() {
        for v in 0..8 {
            assert_eq!(ace_of(ace_flags(v)), v);
        }
        assert_eq!(ace_flags(5), flags::AE | flags::ECE);
    }

    /// RFC 9768 §3.1: each handshake case ends in the stated mode, on
    /// both sides.
    #[test]
    fn negotiation_cases() {
        let acc = syn_flags(EcnMode::AccEcn);
        // both AccECN: Table 2's code for a Not-ECT SYN is 010
        let (f, server) = answer_syn(EcnMode::AccEcn, acc, Ecn::NotEct);
        assert_eq!((ace_of(f), server), (0b010, EcnMode::AccEcn));
        assert_eq!(client_mode(EcnMode::AccEcn, f), EcnMode::AccEcn);
        for (ip, code) in [(Ecn::Ect1, 0b011), (Ecn::Ect0, 0b100), (Ecn::Ce, 0b110)] {
            let (f, _) = answer_syn(EcnMode::AccEcn, acc, ip);
            assert_eq!(ace_of(f), code, "{ip:?}");
            assert_eq!(client_mode(EcnMode::AccEcn, f), EcnMode::AccEcn);
        }
        // server RFC 3168 only: SYN-ACK 001, both classic
        let (f, server) = answer_syn(EcnMode::Classic, acc, Ecn::NotEct);
        assert_eq!((ace_of(f), server), (0b001, EcnMode::Classic));
        assert_eq!(client_mode(EcnMode::AccEcn, f), EcnMode::Classic);
        // server without ECN: 000, no ECN
        let (f, server) = answer_syn(EcnMode::Off, acc, Ecn::NotEct);
        assert_eq!((f, server), (0, EcnMode::Off));
        assert_eq!(client_mode(EcnMode::AccEcn, f), EcnMode::Off);
        // an AccECN server asked for RFC 3168 answers as RFC 3168
        let (f, server) = answer_syn(EcnMode::AccEcn, syn_flags(EcnMode::Classic), Ecn::NotEct);
        assert_eq!((ace_of(f), server), (0b001, EcnMode::Classic));
        assert_eq!(client_mode(EcnMode::Classic, f), EcnMode::Classic);
        // a client without ECN gets none
        assert_eq!(
            answer_syn(EcnMode::AccEcn, 0, Ecn::NotEct),
            (0, EcnMode::Off)
        );
        // a reflector (111) and the historic nonce code (101)
        assert_eq!(client_mode(EcnMode::AccEcn, ace_flags(7)), EcnMode::Off);
        assert_eq!(client_mode(EcnMode::AccEcn, ace_flags(5)), EcnMode::Classic);
    }

    /// RFC 9768 §3.2.2.5.2: with 9 CE packets between two ACKs, ACE alone
    /// reads 1 (9 mod 8); an ACK that delivers 9 packets is taken as 9
    /// CE, one that delivers 10 as 9 (conservative), one that delivers
    /// at most 7 as the ACE delta.
    #[test]
    fn ace_wrap_safety() {
        let s = CEP_INIT;
        let ace = (CEP_INIT + 9) & 7;
        assert_eq!(ace.wrapping_sub(s) & 7, 1, "ACE alone is ambiguous");
        assert_eq!(ce_delta(s, ace, 9), 9);
        assert_eq!(ce_delta(s, ace, 10), 9);
        assert_eq!(ce_delta(s, ace, 16), 9);
        assert_eq!(ce_delta(s, ace, 17), 17);
        assert_eq!(ce_delta(s, ace, 2), 1);
        // no CE, 8 packets delivered: 0 or 8 — the rule assumes 8
        assert_eq!(ce_delta(s, s, 8), 8);
        assert_eq!(ce_delta(s, s, 7), 0);
        // wrap of the 3-bit field itself: 7 → 2 is 3 packets
        assert_eq!(ce_delta(7, 2, 3), 3);
    }

    use crate::net::packet::{FlowId, NodeId, Packet};
    use crate::tcp::cc::CcConfig;
    use crate::tcp::receiver::Receiver;
    use crate::tcp::sender::Sender;
    use crate::tcp::{TcpCtx, TcpParams};

    fn params(ecn: bool, fb: EcnFeedback) -> TcpParams {
        TcpParams {
            ecn,
            ecn_feedback: fb,
            handshake: true,
            delayed_ack: false,
            ..TcpParams::default()
        }
    }

    fn cc(name: &str) -> CcConfig {
        CcConfig::from_value(toml::Value::String(name.into())).unwrap()
    }

    /// A sender and a receiver built from different keys run the
    /// handshake; returns the modes and the codepoint of the first data.
    fn handshake(client: &TcpParams, server: &TcpParams, cc_name: &str) -> (EcnMode, EcnMode, Ecn) {
        let c = cc(cc_name);
        let mut snd = Sender::new(
            client.clone(),
            c.build(),
            FlowId(0),
            NodeId(0),
            NodeId(1),
            None,
        );
        let mut rcv =
            Receiver::new(server, FlowId(0), NodeId(1), NodeId(0)).with_echo(c.ecn_echo());
        let (mut out, mut timers) = (Vec::new(), Vec::new());
        snd.start(&mut TcpCtx {
            now: 0,
            out: &mut out,
            timers: &mut timers,
        });
        let syn = out.pop().unwrap();
        let mut back = Vec::new();
        rcv.on_packet(
            &syn,
            &mut TcpCtx {
                now: 1,
                out: &mut back,
                timers: &mut timers,
            },
        );
        let synack = back.pop().unwrap();
        snd.on_ack(
            &synack,
            &mut TcpCtx {
                now: 2,
                out: &mut out,
                timers: &mut timers,
            },
        );
        (snd.ecn_mode(), rcv.ecn_mode, out[0].ecn)
    }

    /// RFC 9768 §3.1 end to end: both AccECN; server RFC 3168 only;
    /// server without ECN; and the codepoints the data then carries.
    #[test]
    fn handshake_end_to_end() {
        let acc = params(true, EcnFeedback::Accecn);
        let classic = params(true, EcnFeedback::Rfc3168);
        let none = params(false, EcnFeedback::Rfc3168);
        assert_eq!(
            handshake(&acc, &acc, "newreno"),
            (EcnMode::AccEcn, EcnMode::AccEcn, Ecn::Ect0)
        );
        assert_eq!(
            handshake(&acc, &classic, "newreno"),
            (EcnMode::Classic, EcnMode::Classic, Ecn::Ect0)
        );
        assert_eq!(
            handshake(&acc, &none, "newreno"),
            (EcnMode::Off, EcnMode::Off, Ecn::NotEct)
        );
        // L4S senders: Prague ECT(1) with AccECN; without it Prague turns
        // ECN off (Reno, Not-ECT), as L4STeam's prague_init
        assert_eq!(
            handshake(&acc, &acc, "prague"),
            (EcnMode::AccEcn, EcnMode::AccEcn, Ecn::Ect1)
        );
        assert_eq!(
            handshake(&acc, &classic, "prague"),
            (EcnMode::Off, EcnMode::Classic, Ecn::NotEct)
        );
        let dctcp1 = CcConfig::from_value(
            toml::toml! { kind = "dctcp"
            ect1 = true }
            .into(),
        )
        .unwrap();
        let mut snd = Sender::new(
            acc.clone(),
            dctcp1.build(),
            FlowId(0),
            NodeId(0),
            NodeId(1),
            None,
        );
        let (mut out, mut timers) = (Vec::new(), Vec::new());
        snd.start(&mut TcpCtx {
            now: 0,
            out: &mut out,
            timers: &mut timers,
        });
        let synack = Packet {
            flags: flags::SYN | flags::ACK | flags::CWR,
            ack: 0,
            ..Default::default()
        };
        snd.on_ack(
            &synack,
            &mut TcpCtx {
                now: 1,
                out: &mut out,
                timers: &mut timers,
            },
        );
        assert_eq!(out[1].ecn, Ecn::Ect1, "dctcp ect1 = true sends ECT(1)");
    }

    /// The receiver's counter and ACE on a scripted sequence: r.cep counts
    /// CE segments from 5, every ACK carries r.cep mod 8, and the sender's
    /// s.cep follows it; 9 CE segments covered by one ACK (delayed ACKs
    /// suppressed by hand) are recovered by the safety rule.
    #[test]
    fn receiver_counts_and_sender_follows() {
        let p = TcpParams {
            delayed_ack: true,
            delack_count: 2,
            ..params(true, EcnFeedback::Accecn)
        };
        let mut rcv = Receiver::new(&p, FlowId(0), NodeId(1), NodeId(0));
        assert_eq!(rcv.ecn_mode, EcnMode::AccEcn);
        let (mut acks, mut timers) = (Vec::new(), Vec::new());
        let marks = [false, false, true, true, true, false, true, false];
        for (i, &ce) in marks.iter().enumerate() {
            let seg = Packet {
                seq: i as u32,
                flags: flags::DATA,
                ecn: if ce { Ecn::Ce } else { Ecn::Ect0 },
                ..Default::default()
            };
            rcv.on_packet(
                &seg,
                &mut TcpCtx {
                    now: i as u64,
                    out: &mut acks,
                    timers: &mut timers,
                },
            );
        }
        assert_eq!(rcv.r_cep, CEP_INIT + 4);
        let got: Vec<(u32, u32)> = acks.iter().map(|a| (a.ack, ace_of(a.flags))).collect();
        // 0,1 delayed; 2 CE after non-CE: at once; 3,4: 2 CE since the
        // last ACK (increment-triggered at 4); 5 pends; 6 CE after non-CE:
        // at once (covering 5); 7 pends on the timer
        assert_eq!(got, [(2, 5), (3, 6), (5, 0), (7, 1)]);
        let mut s_cep = CEP_INIT;
        let mut una = 0;
        let mut total = 0;
        for &(ack, ace) in &got {
            let d = ce_delta(s_cep, ace, ack - una);
            s_cep += d;
            total += d;
            una = ack;
        }
        assert_eq!(total, 4, "every CE segment reported once");
        // 9 CE segments acknowledged by one ACK: ACE moves by 1 only
        let ace = (s_cep + 9) & 7;
        assert_eq!(ce_delta(s_cep, ace, 9), 9);
    }
}
