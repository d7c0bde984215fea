//! `tcp.profile` and the TCP option keys: a profile sets every default as
//! its stack does, explicit keys override it at any level, nonsense
//! combinations are errors naming the key, and timestamps give an RTT
//! sample on every ACK (RFC 7323 §4).

use aqmlab::engine::Time;
use aqmlab::net::packet::{flags, Packet};
use aqmlab::net::{FlowId, NodeId, OptTime};
use aqmlab::tcp::cc::cubic::CubicVariant;
use aqmlab::tcp::cc::CcKind;
use aqmlab::tcp::{Profile, RecoveryKind, Sender, TcpCtx, TcpParams};
use aqmlab::Scenario;

const MS: Time = 1_000_000;

fn scenario(tcp: &str, flow_tcp: &str) -> Result<Scenario, String> {
    let text = format!(
        r#"
name = "p"
duration = "1s"
[nodes]
hosts = ["a", "b"]
[tcp]
{tcp}
[[links]]
a = "a"
b = "b"
rate = "10Mbps"
delay = "10ms"
queue = {{ kind = "droptail", limit = 100 }}
[[flows]]
group = "f"
src = "a"
dst = "b"
cc = "newreno"
{flow_tcp}
"#
    );
    Scenario::from_toml(&text, "p.toml").map_err(|e| e.to_string())
}

#[test]
fn no_profile_keeps_todays_defaults() {
    let p = scenario("", "").unwrap().tcp_params(0);
    let d = TcpParams::default();
    assert_eq!(p.init_cwnd, 2.0);
    assert!(!p.sack && !p.timestamps && !p.prr && p.recovery.is_none());
    assert_eq!(
        (p.min_rto, p.initial_rto, p.header_bytes),
        (d.min_rto, d.initial_rto, 40)
    );
}

#[test]
fn profiles_set_their_stacks_defaults() {
    let ns3 = scenario("profile = \"ns3-3.44\"", "")
        .unwrap()
        .tcp_params(0);
    assert_eq!(ns3.profile, Some(Profile::Ns3));
    assert_eq!(ns3.init_cwnd, 10.0);
    assert_eq!(ns3.min_rto, 1000 * MS);
    assert_eq!(ns3.granularity, MS);
    assert_eq!(
        (ns3.delayed_ack, ns3.delack_count, ns3.delack_timeout),
        (true, 2, 200 * MS)
    );
    assert!(ns3.sack && ns3.timestamps && ns3.prr);
    assert_eq!(ns3.recovery, Some(RecoveryKind::Sack));
    let linux = scenario("profile = \"linux-6.1\"", "")
        .unwrap()
        .tcp_params(0);
    assert_eq!(
        (linux.init_cwnd, linux.min_rto, linux.max_rto),
        (10.0, 200 * MS, 120_000 * MS)
    );
    assert_eq!(linux.granularity, 200 * MS, "rttvar floored at tcp_rto_min");
    assert_eq!(linux.delack_timeout, 40 * MS);
    assert!(linux.rack && !ns3.rack);
    assert_eq!(Profile::Linux.cubic_variant(), CubicVariant::Linux);
    let ns2 = scenario("profile = \"ns2-2.35\"", "")
        .unwrap()
        .tcp_params(0);
    assert_eq!(
        (ns2.init_cwnd, ns2.initial_rto, ns2.granularity),
        (2.0, 3000 * MS, 10 * MS)
    );
    assert!(!ns2.sack && !ns2.delayed_ack);
    assert_eq!(ns2.recovery, Some(RecoveryKind::NewReno));
}

#[test]
fn explicit_keys_override_a_profile_at_any_level() {
    // key beside the profile
    let p = scenario("profile = \"ns3-3.44\"\ninit_cwnd = 4", "")
        .unwrap()
        .tcp_params(0);
    assert_eq!(p.init_cwnd, 4.0);
    assert!(p.sack);
    // global key, profile named in the flow: the global key still wins
    let p = scenario("min_rto = \"300ms\"", "tcp = { profile = \"linux-6.1\" }")
        .unwrap()
        .tcp_params(0);
    assert_eq!(p.min_rto, 300 * MS);
    assert_eq!(p.init_cwnd, 10.0);
    // flow key over a global profile
    let p = scenario(
        "profile = \"linux-6.1\"",
        "tcp = { sack = false, rack = false, recovery = \"newreno\" }",
    )
    .unwrap()
    .tcp_params(0);
    assert!(!p.sack && p.timestamps);
    assert_eq!(p.recovery, Some(RecoveryKind::NewReno));
    // the profile's TLP follows RACK off; written explicitly it is an error
    assert!(!p.tlp);
    let e = scenario(
        "profile = \"linux-6.1\"",
        "tcp = { rack = false, tlp = true }",
    )
    .expect_err("tlp without rack");
    assert!(e.contains("tlp") && e.contains("rack = true"), "{e}");
}

#[test]
fn nonsense_combinations_name_the_key() {
    let e = scenario("recovery = \"sack\"", "").unwrap_err();
    assert!(
        e.contains("tcp.recovery") && e.contains("sack = true"),
        "{e}"
    );
    let e = scenario("rack = true", "").unwrap_err();
    assert!(e.contains("tcp.rack") && e.contains("sack = true"), "{e}");
    let e = scenario("rack = true\nsack = true", "").unwrap_err();
    assert!(e.contains("tcp.rack") && e.contains("recovery"), "{e}");
    let e = scenario(
        "profile = \"linux-6.1\"",
        "tcp = { sack = false, rack = false }",
    )
    .unwrap_err();
    assert!(e.contains("flows[0].tcp.recovery"), "{e}");
    let e = scenario("profile = \"ns-3\"", "").unwrap_err();
    assert!(e.contains("tcp.profile") && e.contains("ns3-3.44"), "{e}");
}

/// A NewReno sender of flow 0 from node 0 to node 1 with parameters `p`.
fn newreno_sender(p: TcpParams) -> Sender {
    Sender::new(
        p,
        CcKind::NewReno(Default::default()).build(),
        FlowId(0),
        NodeId(0),
        NodeId(1),
        None,
    )
}

/// RFC 7323 §4.1: with timestamps every ACK of new data gives an RTT
/// sample from its echo, also when it acknowledges a retransmission (no
/// Karn ambiguity); without timestamps that ACK gives none.
#[test]
fn timestamps_sample_every_ack_even_after_retransmission() {
    for ts in [true, false] {
        let p = TcpParams {
            init_cwnd: 4.0,
            timestamps: ts,
            delayed_ack: false,
            ..TcpParams::default()
        };
        let mut s = newreno_sender(p);
        let mut out = vec![];
        let mut timers = vec![];
        s.start(&mut TcpCtx {
            now: 0,
            out: &mut out,
            timers: &mut timers,
        });
        assert_eq!(out[0].size, 1000 + 40 + if ts { 12 } else { 0 });
        // the timer fires: segment 0 is resent at t = 1 s
        out.clear();
        s.on_rto(&mut TcpCtx {
            now: 1000 * MS,
            out: &mut out,
            timers: &mut timers,
        });
        let resent_at = out[0].sent_time;
        assert_eq!(resent_at, 1000 * MS);
        // its ACK arrives 80 ms later, echoing the retransmission's TSval
        let ack = Packet {
            ack: 4,
            flags: flags::ACK,
            ts_ecr: OptTime::new(ts.then_some(resent_at)),
            ..Default::default()
        };
        s.on_ack(
            &ack,
            &mut TcpCtx {
                now: 1080 * MS,
                out: &mut out,
                timers: &mut timers,
            },
        );
        if ts {
            assert_eq!(s.srtt(), Some(80 * MS));
        } else {
            assert_eq!(s.srtt(), None, "Karn: no sample without timestamps");
        }
    }
}

/// ns-3's receiver ACKs the first data segment after the handshake at once
/// (`TcpSocketBase`: `m_delAckCount = m_delAckMaxCount` on ESTABLISHED),
/// then every second segment; the `ns3-3.44` profile sets it, the others
/// do not.
#[test]
fn ns3_profile_acks_the_first_data_segment_at_once() {
    use aqmlab::tcp::Receiver;
    let acks_after = |profile: &str, segs: u32| {
        let p = scenario(&format!("profile = \"{profile}\""), "")
            .unwrap()
            .tcp_params(0);
        let mut r = Receiver::new(&p, FlowId(0), NodeId(1), NodeId(0));
        let (mut out, mut timers) = (vec![], vec![]);
        let mut ctx = TcpCtx {
            now: 0,
            out: &mut out,
            timers: &mut timers,
        };
        r.on_packet(
            &Packet {
                flags: flags::SYN,
                ..Default::default()
            },
            &mut ctx,
        );
        let syn_acks = r.acks_sent;
        let mut counts = vec![];
        for seq in 0..segs {
            r.on_packet(
                &Packet {
                    seq,
                    size: 1000,
                    ..Default::default()
                },
                &mut ctx,
            );
            counts.push(r.acks_sent - syn_acks);
        }
        counts
    };
    // ns-3: ACK after segments 1, 3, 5 (2n − 1 per slow-start round)
    assert_eq!(acks_after("ns3-3.44", 5), [1, 1, 2, 2, 3]);
    // Linux profile (no quick-ACK mode modelled): every second segment
    assert_eq!(acks_after("linux-6.1", 5), [0, 1, 1, 2, 2]);
    let p = scenario("profile = \"ns3-3.44\"\nack_first_segment = false", "")
        .unwrap()
        .tcp_params(0);
    assert!(
        !p.ack_first_segment,
        "an explicit key overrides the profile"
    );
}

/// ns-3 3.44 `TcpSocketBase::SendEmptyPacket`: a SYN is resent after
/// `m_cnTimeout · 2^k` (`TcpSocket::ConnTimeout` 3 s), not after the
/// initial RTO (1 s, `RttEstimator::InitialEstimation`); `syn_rto` carries
/// it in the `ns3-3.44` profile and falls back to `initial_rto` elsewhere.
#[test]
fn ns3_profile_resends_a_lost_syn_after_conn_timeout() {
    let syn_timers = |tcp: &str| {
        let p = scenario(tcp, "").unwrap().tcp_params(0);
        let mut s = newreno_sender(p);
        let (mut out, mut timers) = (vec![], vec![]);
        s.start(&mut TcpCtx {
            now: 0,
            out: &mut out,
            timers: &mut timers,
        });
        assert!(out.len() == 1 && out[0].has(flags::SYN));
        let first = s.rto();
        assert_eq!(timers.last().map(|t| t.0), Some(first));
        out.clear();
        s.on_rto(&mut TcpCtx {
            now: first,
            out: &mut out,
            timers: &mut timers,
        });
        assert!(out.len() == 1 && out[0].has(flags::SYN), "the SYN again");
        (first, s.rto())
    };
    assert_eq!(
        syn_timers("profile = \"ns3-3.44\"\nhandshake = true"),
        (3000 * MS, 6000 * MS),
        "ConnTimeout, then doubled"
    );
    assert_eq!(
        syn_timers("profile = \"ns3-3.44\"\nhandshake = true\nsyn_rto = \"2s\""),
        (2000 * MS, 4000 * MS)
    );
    assert_eq!(syn_timers("handshake = true"), (1000 * MS, 2000 * MS));
    assert_eq!(
        syn_timers("profile = \"ns2-2.35\"\nhandshake = true"),
        (3000 * MS, 6000 * MS)
    );
}
