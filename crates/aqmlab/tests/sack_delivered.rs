//! The window growth an ACK gives counts the segments it newly delivers:
//! a cumulative ACK that covers segments SACKed earlier does not count them
//! again (ns-3 `TcpSocketBase` passes `currentDelivered`, the bytes newly
//! ACKed or SACKed, to the congestion control; Linux `tcp_ack` passes
//! `tp->delivered − prior_delivered`).

use aqmlab::engine::Time;
use aqmlab::net::packet::{flags, Packet};
use aqmlab::net::{FlowId, NodeId};
use aqmlab::tcp::cc::cubic::{CubicConfig, CubicVariant};
use aqmlab::tcp::cc::CcKind;
use aqmlab::tcp::{RecoveryKind, Sender, TcpCtx, TcpParams};

const MS: Time = 1_000_000;

fn ack(s: &mut Sender, now: Time, a: u32, blocks: &[(u32, u32)]) {
    let mut pk = Packet {
        ack: a,
        flags: flags::ACK,
        ..Default::default()
    };
    for (i, b) in blocks.iter().enumerate() {
        pk.sack[i] = *b;
    }
    pk.nsack = blocks.len() as u8;
    let (mut out, mut timers) = (vec![], vec![]);
    s.on_ack(
        &pk,
        &mut TcpCtx {
            now,
            out: &mut out,
            timers: &mut timers,
        },
    );
}

/// Ten segments sent, the first lost, the other nine SACKed (no fast
/// recovery: DupThresh is out of reach), then a timeout: the ACK of the
/// retransmission covers ten segments but delivers one, so the slow start
/// after the timeout grows cwnd from 1 to 2 (ns-3's TcpCubic adds the
/// segments acknowledged in slow start without a cap). Counting all ten
/// gave 11 and, on large windows, a window of every segment SACKed during
/// the timeout (the 622-Mbit/s RED collapse of the ns-3 kit).
#[test]
fn cumulative_ack_over_sacked_segments_grows_by_delivered_only() {
    let p = TcpParams {
        init_cwnd: 10.0,
        max_window: 1000,
        delayed_ack: false,
        sack: true,
        recovery: Some(RecoveryKind::Sack),
        prr: true,
        dupack_threshold: 1000,
        ..TcpParams::default()
    };
    let cc = CcKind::Cubic(CubicConfig {
        variant: Some(CubicVariant::Ns3),
        hystart: Some(false),
        ..CubicConfig::default()
    });
    let mut s = Sender::new(p, cc.build(), FlowId(0), NodeId(0), NodeId(1), None);
    let (mut out, mut timers) = (vec![], vec![]);
    s.start(&mut TcpCtx {
        now: 0,
        out: &mut out,
        timers: &mut timers,
    });
    assert_eq!(out.len(), 10);
    for k in 2..=10 {
        ack(&mut s, 50 * MS, 0, &[(1, k)]);
    }
    assert_eq!(
        s.cc_state.cwnd, 10.0,
        "SACKed dupACKs do not grow the window"
    );
    out.clear();
    s.on_rto(&mut TcpCtx {
        now: 1000 * MS,
        out: &mut out,
        timers: &mut timers,
    });
    assert_eq!(s.cc_state.cwnd, 1.0);
    assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), [0]);
    assert!(s.cc_state.ssthresh > 2.0, "slow start after the timeout");
    ack(&mut s, 1050 * MS, 10, &[]);
    assert_eq!(s.cc_state.cwnd, 2.0, "one segment delivered, one added");
}
