//! Validation of ECN end to end (RFC 3168; issue 3).
//!
//! Part 1 runs the simulator on a dumbbell (senders → `r1`, 100 Mbit/s 2 ms;
//! bottleneck `r1 → r2` 10 Mbit/s 20 ms with the AQM under test; `r2 → d`
//! 100 Mbit/s 2 ms; base RTT 48 ms) and checks, for RED (plain and gentle),
//! CoDel, FQ-CoDel, sfqCoDel and PIE:
//! - ECN-capable New Reno flows through an ECN AQM at moderate load lose no
//!   packet at all (no early, AQM, forced or overflow drop, no retransmission),
//!   the queue counts marks and the senders count window reductions;
//! - a window is reduced at most once per window of data: with one flow,
//!   reductions ≤ marks, and when every marked window holds a single mark
//!   (RED with `wait`, marks ≥ 1/max_p = 100 packets apart, window capped at
//!   90 segments) reductions = marks exactly; with dense marking reductions
//!   are far fewer than marks and at most one per base RTT;
//! - non-ECT flows through an ECN AQM are dropped, never marked; ECN flows
//!   through an AQM with `ecn = false` are dropped, never marked.
//!
//! Part 2 drives one `Sender` and one `Receiver` directly through a small
//! model network (a FIFO bottleneck that CE-marks ECT packets above a queue
//! threshold and at random, and tail-drops above a limit) and checks every
//! ACK and every data segment against RFC 3168 §6.1.2–6.1.3 (see
//! [`EcnAudit`]).

use aqmlab::engine::{RngStream, Time, TimerAction};
use aqmlab::metrics::RunResult;
use aqmlab::net::packet::{flags, Ecn, Packet};
use aqmlab::net::{FlowId, NodeId};
use aqmlab::scenario::units::Dur;
use aqmlab::tcp::cc::CcConfig;
use aqmlab::tcp::{Receiver, Sender, TcpCtx, TcpParams, TimerKind};
use aqmlab::{Scenario, Simulation};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

const BOTTLENECK: &str = "r1->r2";
const BASE_RTT: f64 = 0.048;

fn dumbbell(queue: &str, flows: &str, tcp: &str) -> String {
    format!(
        r#"
name = "validation-ecn"
duration = "1s"
[nodes]
hosts = ["s1", "s2", "d"]
routers = ["r1", "r2"]
[tcp]
{tcp}
[[links]]
a = "s1"
b = "r1"
rate = "100Mbps"
delay = "2ms"
[[links]]
a = "s2"
b = "r1"
rate = "100Mbps"
delay = "2ms"
[[links]]
a = "r1"
b = "r2"
rate = "10Mbps"
delay = "20ms"
queue_ab = {queue}
[[links]]
a = "r2"
b = "d"
rate = "100Mbps"
delay = "2ms"
{flows}
"#
    )
}

fn group(name: &str, src: &str, n: u32, tcp: &str) -> String {
    format!(
        r#"
[[flows]]
group = "{name}"
src = "{src}"
dst = "d"
count = {n}
start_spread = "1s"
tcp = {{ {tcp} }}
"#
    )
}

fn run(text: &str, secs: f64) -> RunResult {
    let mut sc = Scenario::from_toml(text, "validation_ecn.toml").expect("valid scenario");
    sc.duration = Dur((secs * 1e9).round() as u64);
    Simulation::new(&sc, 1).run()
}

/// RED with thresholds the load never pushes `avg` past: min_th 10,
/// max_th 100 (forced region never reached), limit 1000 (never full).
const RED_ECN: &str =
    "{ kind = \"red\", limit = 1000, min_th = 10, max_th = 100, max_p = 0.1, ecn = true }";
const RED_ECN_GENTLE: &str = "{ kind = \"red\", limit = 1000, min_th = 10, max_th = 100, max_p = 0.1, ecn = true, gentle = true }";

/// The ECN AQMs and the `[tcp]` options their load uses. PIE drops even
/// ECN-capable packets while `drop_prob` exceeds `mark_ecn_threshold` = 0.1
/// (RFC 8033 §5.1), which the unbounded slow-start overshoot of four flows
/// causes; `init_ssthresh = 40` keeps the start-up moderate (see
/// `pie_drops_ect_packets_above_the_mark_threshold`).
const ECN_AQMS: &[(&str, &str, &str)] = &[
    ("red", RED_ECN, "ecn = true"),
    ("red gentle", RED_ECN_GENTLE, "ecn = true"),
    ("codel", "{ kind = \"codel\", ecn = true }", "ecn = true"),
    (
        "codel ns2",
        "{ kind = \"codel\", ecn = true, variant = \"ns2\" }",
        "ecn = true",
    ),
    ("fq_codel", "{ kind = \"fq_codel\" }", "ecn = true"),
    (
        "sfq_codel",
        "{ kind = \"sfq_codel\", ecn = true }",
        "ecn = true",
    ),
    (
        "pie",
        "{ kind = \"pie\", ecn = true }",
        "ecn = true\ninit_ssthresh = 40",
    ),
];

/// Four ECN-capable New Reno flows through each ECN AQM for 60 s: no packet
/// is lost anywhere (every drop counter is 0, no retransmission or timeout),
/// marks are counted at the queue, every flow reduced its window, and the
/// total number of reductions is at most the number of marks (a reduction
/// needs a fresh CE: the receiver stops echoing once it sees CWR) and each
/// flow's at most one per base RTT.
#[test]
fn ecn_flows_through_ecn_aqms_are_marked_not_dropped() {
    let secs = 60.0;
    for &(name, queue, tcp) in ECN_AQMS {
        let r = run(&dumbbell(queue, &group("ecn", "s1", 4, ""), tcp), secs);
        let q = r.queue(BOTTLENECK).unwrap();
        let reductions: u64 = r.flows.iter().map(|f| f.ecn_reductions).sum();
        println!(
            "{name}: marked {}, reductions {reductions} ({:?}), dropped (early {}, forced {}, overflow {}, aqm {}), \
             mean delay {:.2} ms, utilisation {:.3}",
            q.marked,
            r.flows.iter().map(|f| f.ecn_reductions).collect::<Vec<_>>(),
            q.dropped_early,
            q.dropped_forced,
            q.dropped_overflow,
            q.dropped_aqm,
            q.mean_delay_s * 1e3,
            r.link(BOTTLENECK).unwrap().utilization
        );
        assert_eq!(q.dropped_early, 0, "{name}: early drops");
        assert_eq!(q.dropped_aqm, 0, "{name}: AQM drops");
        assert_eq!(q.dropped_forced, 0, "{name}: forced drops");
        assert_eq!(q.dropped_overflow, 0, "{name}: overflow drops");
        assert_eq!(r.conservation.dropped, 0, "{name}: drops elsewhere");
        assert!(q.marked > 0, "{name}: no marks");
        for f in &r.flows {
            assert_eq!(
                (f.drops, f.retransmits, f.timeouts),
                (0, 0, 0),
                "{name}: flow {}",
                f.id
            );
            assert!(f.ecn_reductions > 0, "{name}: flow {} never reduced", f.id);
            assert!(
                (f.ecn_reductions as f64) <= secs / BASE_RTT,
                "{name}: flow {} reduced {} times in {} RTTs",
                f.id,
                f.ecn_reductions,
                secs / BASE_RTT
            );
        }
        assert!(
            reductions <= q.marked,
            "{name}: {reductions} reductions for {} marks",
            q.marked
        );
    }
}

/// One ECN flow through RED with `wait = true` and max_p = 0.01: RED marks
/// only after `count · p_b ≥ 1`, i.e. at least 1/p_b ≥ 100 arrivals after the
/// previous mark, and with one flow every arrival is this flow's. The
/// window is capped at 90 segments (`max_window`), so the data outstanding
/// when a reduction happens — the "window" it covers (RFC 3168 §6.1.2) —
/// ends fewer than 100 segments after the marked one: every marked window
/// holds exactly one mark, and the flow must reduce exactly once per mark.
/// (Measured: 15 marks, 15 reductions in 60 s.)
#[test]
fn one_reduction_per_marked_window_when_marks_are_a_window_apart() {
    let q = "{ kind = \"red\", limit = 1000, min_th = 5, max_th = 60, max_p = 0.01, wait = true, ecn = true }";
    let r = run(
        &dumbbell(q, &group("one", "s1", 1, ""), "ecn = true\nmax_window = 90"),
        60.0,
    );
    let qr = r.queue(BOTTLENECK).unwrap();
    let f = &r.flows[0];
    println!(
        "sparse marks: marked {}, reductions {}, drops {}",
        qr.marked, f.ecn_reductions, qr.dropped
    );
    assert_eq!(qr.dropped, 0);
    assert!(qr.marked >= 5, "too few marks to test: {}", qr.marked);
    assert_eq!(
        f.ecn_reductions, qr.marked,
        "one reduction per marked window"
    );
}

/// One ECN flow through RED with max_p = 1 (no `wait`): marks come several
/// per window, and the sender must ignore all but the first of each window,
/// so reductions are far fewer than marks (measured 20 for 141 marks),
/// and two reductions are at least one RTT apart (≤ 60 s / 48 ms).
#[test]
fn dense_marks_reduce_once_per_window_not_once_per_mark() {
    let q = "{ kind = \"red\", limit = 1000, min_th = 5, max_th = 60, max_p = 1.0, ecn = true }";
    for tcp in ["ecn = true", "ecn = true\nmax_window = 90"] {
        let r = run(&dumbbell(q, &group("one", "s1", 1, ""), tcp), 60.0);
        let qr = r.queue(BOTTLENECK).unwrap();
        let f = &r.flows[0];
        println!(
            "dense marks ({tcp:?}): marked {}, reductions {}, drops {}",
            qr.marked, f.ecn_reductions, qr.dropped
        );
        assert_eq!(qr.dropped, 0);
        assert!(f.ecn_reductions > 0);
        assert!(
            (f.ecn_reductions as f64) < 0.5 * qr.marked as f64,
            "{} reductions for {} marks",
            f.ecn_reductions,
            qr.marked
        );
        assert!(f.ecn_reductions as f64 <= 60.0 / BASE_RTT);
    }
}

/// Non-ECT flows through ECN AQMs are dropped, not marked.
#[test]
fn non_ect_flows_through_ecn_aqms_are_dropped() {
    for &(name, queue, _) in ECN_AQMS {
        let r = run(&dumbbell(queue, &group("plain", "s1", 4, ""), ""), 30.0);
        let q = r.queue(BOTTLENECK).unwrap();
        println!(
            "{name} with non-ECT flows: marked {}, dropped early {} aqm {} forced {} overflow {}",
            q.marked, q.dropped_early, q.dropped_aqm, q.dropped_forced, q.dropped_overflow
        );
        assert_eq!(q.marked, 0, "{name} marked a non-ECT packet");
        assert!(q.dropped_early + q.dropped_aqm > 0, "{name}: no AQM drops");
        assert!(r.flows.iter().all(|f| f.ecn_reductions == 0));
        assert!(r.flows.iter().map(|f| f.fast_retransmits).sum::<u64>() > 0);
    }
}

/// ECN-capable flows through AQMs with `ecn = false` are dropped, not marked.
#[test]
fn ecn_flows_through_non_ecn_aqms_are_dropped() {
    let aqms = [
        (
            "red",
            "{ kind = \"red\", limit = 1000, min_th = 10, max_th = 100, max_p = 0.1 }",
        ),
        ("codel", "{ kind = \"codel\" }"),
        ("fq_codel", "{ kind = \"fq_codel\", ecn = false }"),
        ("sfq_codel", "{ kind = \"sfq_codel\" }"),
        ("pie", "{ kind = \"pie\" }"),
    ];
    for (name, queue) in aqms {
        let r = run(
            &dumbbell(queue, &group("ecn", "s1", 4, ""), "ecn = true"),
            30.0,
        );
        let q = r.queue(BOTTLENECK).unwrap();
        println!(
            "{name} (ecn = false) with ECN flows: marked {}, dropped early {} aqm {}",
            q.marked, q.dropped_early, q.dropped_aqm
        );
        assert_eq!(q.marked, 0, "{name} marked although ecn = false");
        assert!(q.dropped_early + q.dropped_aqm > 0, "{name}: no AQM drops");
        assert!(r.flows.iter().all(|f| f.ecn_reductions == 0));
        assert!(r.flows.iter().map(|f| f.fast_retransmits).sum::<u64>() > 0);
    }
}

/// ECN and non-ECN flows sharing one ECN RED queue: the ECN group loses
/// nothing and reduces on marks; the plain group is dropped and never
/// reduces on ECN. The queue counts both marks and early drops.
#[test]
fn mixed_ect_and_non_ect_flows_share_an_ecn_red_queue() {
    let flows = group("ecn", "s1", 3, "ecn = true") + &group("plain", "s2", 3, "ecn = false");
    let r = run(&dumbbell(RED_ECN, &flows, ""), 60.0);
    let q = r.queue(BOTTLENECK).unwrap();
    let drops = |g: &str| r.group(g).map(|f| f.drops).sum::<u64>();
    let red = |g: &str| r.group(g).map(|f| f.ecn_reductions).sum::<u64>();
    println!(
        "mixed: marked {}, early drops {}; ecn group drops {} reductions {}; plain group drops {} reductions {}",
        q.marked,
        q.dropped_early,
        drops("ecn"),
        red("ecn"),
        drops("plain"),
        red("plain")
    );
    assert_eq!((q.dropped_forced, q.dropped_overflow), (0, 0));
    assert!(q.marked > 0 && q.dropped_early > 0);
    assert_eq!(drops("ecn"), 0);
    assert!(r
        .group("ecn")
        .all(|f| f.ecn_reductions > 0 && f.retransmits == 0));
    assert_eq!(drops("plain"), q.dropped_early);
    assert_eq!(red("plain"), 0);
    assert!(red("ecn") <= q.marked);
}

/// PIE marks ECT packets only while `drop_prob ≤ mark_ecn_threshold` (0.1)
/// and drops them above it (RFC 8033 §5.1). Four ECN flows with an unbounded
/// slow start overshoot the 150 ms burst allowance and push drop_prob past
/// 0.1 at start-up, so PIE drops there; once the flows are in congestion
/// avoidance (after 10 s) it only marks.
#[test]
fn pie_drops_ect_packets_above_the_mark_threshold() {
    let text = dumbbell(
        "{ kind = \"pie\", ecn = true }",
        &group("ecn", "s1", 4, ""),
        "ecn = true",
    );
    let (a, b) = (run(&text, 10.0), run(&text, 60.0));
    let (qa, qb) = (a.queue(BOTTLENECK).unwrap(), b.queue(BOTTLENECK).unwrap());
    println!(
        "pie start-up: early drops {} marks {} by 10 s; {} drops and {} marks in 10–60 s",
        qa.dropped_early,
        qa.marked,
        qb.dropped_early - qa.dropped_early,
        qb.marked - qa.marked
    );
    assert!(
        qa.dropped_early > 0,
        "start-up drops expected above the threshold"
    );
    assert_eq!(qb.dropped_early, qa.dropped_early, "drops after start-up");
    assert!(qb.marked > qa.marked);
    // with mark_ecn_threshold = 1 PIE always marks ECT packets
    let text = dumbbell(
        "{ kind = \"pie\", ecn = true, mark_ecn_threshold = 1.0 }",
        &group("ecn", "s1", 4, ""),
        "ecn = true",
    );
    let r = run(&text, 60.0);
    let q = r.queue(BOTTLENECK).unwrap();
    println!(
        "pie mark_ecn_threshold = 1: early drops {}, overflow {}, marks {}",
        q.dropped_early, q.dropped_overflow, q.marked
    );
    assert_eq!(q.dropped_early, 0);
}

// ---------------------------------------------------------------------------
// Part 2: one sender and one receiver through a model bottleneck
// ---------------------------------------------------------------------------

/// A FIFO bottleneck of `service` per packet, one-way propagation `delay`
/// each way (ACKs are not queued). A data packet arriving to find at least
/// `mark_above` packets queued, or with probability `mark_p`, is CE-marked if
/// it is ECT; one arriving to find `drop_above` packets queued, or with
/// probability `drop_p`, is dropped.
struct Model {
    service: Time,
    delay: Time,
    mark_above: usize,
    mark_p: f64,
    drop_above: usize,
    drop_p: f64,
    secs: f64,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// Data packet `idx` reaches the receiver.
    Data(usize),
    /// ACK `idx` reaches the sender.
    Ack(usize),
    SenderRto,
    ReceiverDelAck,
}

/// What the audit saw.
#[derive(Debug, Default)]
struct EcnAudit {
    data_sent: u64,
    marks: u64,
    drops: u64,
    ece_acks: u64,
    ecn_reductions: u64,
    loss_reductions: u64,
    /// Fast retransmits of a segment from a window already reduced.
    same_window_losses: u64,
    cwr_sent: u64,
    violations: Vec<String>,
}

/// Run the model and check, on every packet:
/// - data: ECT(0) on new segments, not-ECT on retransmissions (§6.1.5); CWR
///   exactly on the first new segment sent after each window reduction,
///   whatever caused it — ECN echo, fast retransmit or timeout (§6.1.2) —
///   and on no other segment;
/// - receiver: ECE on every ACK sent after a CE segment arrived until a
///   segment with CWR arrives (§6.1.3);
/// - sender: a reduction on an ECE ACK only outside loss recovery and only if
///   the ACK covers data sent after the previous reduction (ECN or loss),
///   i.e. `ack − 1 > guard` with `guard` the highest segment sent at that
///   reduction ("at most once per window of data", §6.1.2); conversely every
///   ECE ACK that meets those conditions must cause a reduction (once per
///   *marked* window, not less); a fast retransmit of a segment sent before
///   the previous reduction must not reduce the window again; the reduction
///   sets ssthresh to max(FlightSize/2, 2) and cwnd to ssthresh.
fn audit(m: &Model, seed: u64) -> EcnAudit {
    let p = TcpParams {
        ecn: true,
        ..TcpParams::default()
    };
    let mut snd = Sender::new(
        p.clone(),
        CcConfig::default().build(),
        FlowId(0),
        NodeId(0),
        NodeId(1),
        None,
    );
    let mut rcv = Receiver::new(&p, FlowId(0), NodeId(1), NodeId(0));
    let mut rng = RngStream::new(seed, 77);
    let mut pkts: Vec<Packet> = Vec::new();
    let mut evq: BinaryHeap<Reverse<(Time, u64, Ev)>> = BinaryHeap::new();
    let mut tie = 0u64;
    let mut departures: VecDeque<Time> = VecDeque::new();
    let mut free_at: Time = 0;
    let end = (m.secs * 1e9) as Time;
    let mut out: Vec<Packet> = Vec::new();
    let mut timers: Vec<(Time, TimerKind)> = Vec::new();
    let mut a = EcnAudit::default();
    // receiver-side expectation and sender-side bookkeeping
    let mut expect_ece = false;
    let mut ce_unacked = false;
    let mut guard: i64 = -1;
    let mut cwr_due = false;
    let mut max_seq_sent: i64 = -1;
    let mut now: Time = 0;

    macro_rules! ctx {
        () => {
            TcpCtx {
                now,
                out: &mut out,
                timers: &mut timers,
            }
        };
    }
    // Send what the sender produced through the bottleneck.
    macro_rules! flush_sender {
        () => {
            for (t, k) in timers.drain(..) {
                tie += 1;
                evq.push(Reverse((
                    t,
                    tie,
                    if k == TimerKind::Rto {
                        Ev::SenderRto
                    } else {
                        Ev::ReceiverDelAck
                    },
                )));
            }
            for mut d in out.drain(..) {
                a.data_sent += 1;
                let new = d.seq as i64 > max_seq_sent;
                if new {
                    max_seq_sent = d.seq as i64;
                    if d.ecn != Ecn::Ect0 {
                        a.violations
                            .push(format!("new segment {} not ECT(0)", d.seq));
                    }
                    if d.has(flags::CWR) {
                        a.cwr_sent += 1;
                    }
                    if cwr_due != d.has(flags::CWR) {
                        a.violations.push(format!(
                            "segment {} at {now}: CWR {} but a reduction {} pending",
                            d.seq,
                            d.has(flags::CWR),
                            if cwr_due { "is" } else { "is not" }
                        ));
                    }
                    cwr_due = false;
                } else {
                    if d.ecn != Ecn::NotEct {
                        a.violations
                            .push(format!("retransmission {} is ECT", d.seq));
                    }
                    if d.has(flags::CWR) {
                        a.violations
                            .push(format!("retransmission {} carries CWR", d.seq));
                    }
                }
                while departures.front().is_some_and(|&t| t <= now) {
                    departures.pop_front();
                }
                let qlen = departures.len();
                if qlen >= m.drop_above || rng.chance(m.drop_p) {
                    a.drops += 1;
                    continue;
                }
                if d.ecn.capable() && (qlen >= m.mark_above || rng.chance(m.mark_p)) {
                    d.ecn = Ecn::Ce;
                    a.marks += 1;
                }
                free_at = free_at.max(now) + m.service;
                departures.push_back(free_at);
                pkts.push(d);
                tie += 1;
                evq.push(Reverse((free_at + m.delay, tie, Ev::Data(pkts.len() - 1))));
            }
        };
    }
    macro_rules! flush_receiver {
        () => {
            for (t, _) in timers.drain(..) {
                tie += 1;
                evq.push(Reverse((t, tie, Ev::ReceiverDelAck)));
            }
            for ack in out.drain(..) {
                if ack.has(flags::ECE) {
                    a.ece_acks += 1;
                }
                // §6.1.3: ECE from a CE segment until CWR, and on the
                // (delayed) ACK that acknowledges a CE segment.
                let want = expect_ece || ce_unacked;
                ce_unacked = false;
                if ack.has(flags::ECE) != want {
                    a.violations.push(format!(
                        "ACK {} at {now}: ECE {} expected {}",
                        ack.ack,
                        ack.has(flags::ECE),
                        want
                    ));
                }
                pkts.push(ack);
                tie += 1;
                evq.push(Reverse((now + m.delay, tie, Ev::Ack(pkts.len() - 1))));
            }
        };
    }

    snd.start(&mut ctx!());
    flush_sender!();
    while let Some(Reverse((t, _, ev))) = evq.pop() {
        if t > end {
            break;
        }
        now = t;
        match ev {
            Ev::Data(i) => {
                let d = pkts[i];
                if d.has(flags::CWR) {
                    expect_ece = false;
                }
                if d.ecn == Ecn::Ce {
                    expect_ece = true;
                    ce_unacked = true;
                }
                rcv.on_packet(&d, &mut ctx!());
                flush_receiver!();
            }
            Ev::ReceiverDelAck => {
                match rcv.delack_timer.on_event(now) {
                    (true, _) => rcv.on_delack(&mut ctx!()),
                    (false, TimerAction::Schedule(t)) => timers.push((t, TimerKind::DelAck)),
                    _ => {}
                }
                flush_receiver!();
            }
            Ev::Ack(i) => {
                let ack = pkts[i];
                let (una, max, rec) = (snd.snd_una, snd.snd_max, snd.in_recovery);
                let (ecn0, fr0) = (
                    snd.counters().ecn_reductions,
                    snd.counters().fast_retransmits,
                );
                let ss0 = snd.cc_state.ssthresh;
                let flight = (max - una) as f64;
                snd.on_ack(&ack, &mut ctx!());
                let ecn_red = snd.counters().ecn_reductions - ecn0;
                let fr = snd.counters().fast_retransmits - fr0;
                let eligible = ack.has(flags::ECE) && !rec && (ack.ack as i64 - 1) > guard;
                if ecn_red > 1 || (ecn_red == 1 && !eligible) {
                    a.violations.push(format!(
                        "ECN reduction at {now} on ACK {} (ECE {}, in recovery {rec}, guard {guard})",
                        ack.ack,
                        ack.has(flags::ECE)
                    ));
                }
                if ecn_red == 0 && eligible {
                    a.violations.push(format!(
                        "ECE ACK {} at {now} for a new window (guard {guard}) ignored",
                        ack.ack
                    ));
                }
                if ecn_red == 1 {
                    a.ecn_reductions += 1;
                    let expect = (flight / 2.0).max(2.0);
                    if (snd.cc_state.ssthresh - expect).abs() > 1e-9 {
                        a.violations.push(format!(
                            "ECN reduction: ssthresh {} expected {expect}",
                            snd.cc_state.ssthresh
                        ));
                    }
                    guard = max as i64 - 1;
                    cwr_due = true;
                }
                if fr == 1 {
                    // The lost segment is `una`; a loss from a window already
                    // reduced must not reduce it again.
                    if (una as i64) <= guard {
                        a.same_window_losses += 1;
                        if snd.cc_state.ssthresh != ss0 {
                            a.violations.push(format!(
                                "fast retransmit of {una} at {now} reduced again within the window of the reduction at guard {guard}"
                            ));
                        }
                    } else {
                        let expect = (flight / 2.0).max(2.0);
                        if (snd.cc_state.ssthresh - expect).abs() > 1e-9 {
                            a.violations.push(format!(
                                "fast retransmit: ssthresh {} expected {expect}",
                                snd.cc_state.ssthresh
                            ));
                        }
                        a.loss_reductions += 1;
                        guard = max as i64 - 1;
                        cwr_due = true;
                    }
                }
                flush_sender!();
            }
            Ev::SenderRto => {
                let max = snd.snd_max;
                let to0 = snd.counters().timeouts;
                match snd.rto_timer.on_event(now) {
                    (true, _) => snd.on_rto(&mut ctx!()),
                    (false, TimerAction::Schedule(t)) => timers.push((t, TimerKind::Rto)),
                    _ => {}
                }
                if snd.counters().timeouts > to0 {
                    a.loss_reductions += 1;
                    guard = max as i64 - 1;
                    cwr_due = true;
                }
                flush_sender!();
            }
        }
    }
    a
}

fn check_audit(what: &str, a: &EcnAudit) {
    println!(
        "{what}: {} data sent, {} marks, {} drops, {} ECE ACKs, {} ECN reductions, {} loss reductions \
         ({} same-window losses), {} CWR, {} violations",
        a.data_sent,
        a.marks,
        a.drops,
        a.ece_acks,
        a.ecn_reductions,
        a.loss_reductions,
        a.same_window_losses,
        a.cwr_sent,
        a.violations.len()
    );
    for v in a.violations.iter().take(10) {
        println!("  {v}");
    }
    assert!(
        a.violations.is_empty(),
        "{what}: {} RFC 3168 violations",
        a.violations.len()
    );
}

/// ECN only (no loss): step marking above 20 queued packets plus 1 % random
/// marks; 1 ms per packet, 10 ms each way. Every ACK and segment obeys
/// RFC 3168, many marks collapse into few reductions, and each reduction is
/// announced by exactly one CWR.
#[test]
fn sender_and_receiver_follow_rfc3168_without_loss() {
    for seed in 1..=3 {
        let m = Model {
            service: 1_000_000,
            delay: 10_000_000,
            mark_above: 20,
            mark_p: 0.01,
            drop_above: usize::MAX,
            drop_p: 0.0,
            secs: 60.0,
        };
        let a = audit(&m, seed);
        check_audit(&format!("ECN only, seed {seed}"), &a);
        assert_eq!(a.drops, 0);
        assert!(a.marks > 100 && a.ecn_reductions > 20);
        assert!(a.ecn_reductions < a.marks);
        assert_eq!(a.cwr_sent, a.ecn_reductions, "one CWR per reduction");
    }
}

/// ECN marks and losses together (mark above 10 queued packets or with
/// probability 0.5 %; drop above 25 queued or with probability 0.2 %): besides the rules above, a loss
/// reduction is announced with CWR (RFC 3168 §6.1.2: "reduces its
/// congestion window for any reason (because of a retransmit timeout, a Fast
/// Retransmit, or in response to an ECN Notification)"), and an ECN echo or
/// a loss from a window already reduced for the other signal does not
/// reduce it again ("reduced only once in response to a series of dropped
/// and/or CE packets from a single window of data").
#[test]
fn sender_reduces_once_per_window_for_marks_and_losses_together() {
    for seed in 1..=3 {
        let m = Model {
            service: 1_000_000,
            delay: 10_000_000,
            mark_above: 10,
            mark_p: 0.005,
            drop_above: 25,
            drop_p: 0.002,
            secs: 60.0,
        };
        let a = audit(&m, seed);
        check_audit(&format!("ECN + loss, seed {seed}"), &a);
        assert!(a.drops > 0 && a.marks > 0 && a.ecn_reductions > 0 && a.loss_reductions > 0);
    }
}
