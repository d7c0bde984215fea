//! SACK loss recovery (RFC 6675) with PRR (RFC 6937) and the receiver's
//! SACK blocks (RFC 2018), tested on the sender and receiver themselves.
//!
//! The harness joins one `Sender` and one `Receiver` by a path of one
//! bottleneck (rate `R`, FIFO without limit) and a one-way delay `d` each
//! way; ACKs are not serialised. Chosen segments are dropped on their first
//! transmission only, so what is measured is how the sender repairs a known
//! loss pattern.

use aqmlab::engine::{Time, TimerAction};
use aqmlab::net::packet::{flags, Packet};
use aqmlab::net::{FlowId, NodeId};
use aqmlab::tcp::cc::CcKind;
use aqmlab::tcp::{Receiver, RecoveryKind, RtoRestart, Sender, TcpCtx, TcpParams, TimerKind};
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashSet};

const MS: Time = 1_000_000;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Data(usize),
    Ack(usize),
    /// 0: retransmission timer, 1: pacing timer.
    SndTimer(u8),
    RcvTimer,
}

struct Path {
    s: Sender,
    r: Receiver,
    now: Time,
    heap: BinaryHeap<Reverse<(Time, u64, Ev)>>,
    pkts: Vec<Packet>,
    order: u64,
    link_free: Time,
    tx: Time,
    delay: Time,
    drop_once: HashSet<u32>,
    dropped: HashSet<u32>,
    /// Segments whose first retransmission is dropped too.
    drop_retx: HashSet<u32>,
    /// Every data transmission: (time, seq, was a retransmission).
    log: Vec<(Time, u32, bool)>,
    seen: HashSet<u32>,
}

impl Path {
    fn new(
        p: TcpParams,
        cc: CcKind,
        tx: Time,
        delay: Time,
        drop: &[u32],
        bytes: Option<u64>,
    ) -> Path {
        let s = Sender::new(
            p.clone(),
            cc.build(),
            FlowId(0),
            NodeId(0),
            NodeId(1),
            bytes,
        );
        let r = Receiver::new(&p, FlowId(0), NodeId(1), NodeId(0));
        let mut path = Path {
            s,
            r,
            now: 0,
            heap: BinaryHeap::new(),
            pkts: vec![],
            order: 0,
            link_free: 0,
            tx,
            delay,
            drop_once: drop.iter().copied().collect(),
            dropped: HashSet::new(),
            drop_retx: HashSet::new(),
            log: vec![],
            seen: HashSet::new(),
        };
        let mut out = vec![];
        let mut timers = vec![];
        path.s.start(&mut TcpCtx {
            now: 0,
            out: &mut out,
            timers: &mut timers,
        });
        path.flush(out, timers, true);
        path
    }

    fn push(&mut self, t: Time, e: Ev) {
        self.order += 1;
        self.heap.push(Reverse((t, self.order, e)));
    }

    fn flush(&mut self, out: Vec<Packet>, timers: Vec<(Time, TimerKind)>, from_sender: bool) {
        for (t, k) in timers {
            let e = match (from_sender, k) {
                (true, TimerKind::Pace) => Ev::SndTimer(1),
                (true, _) => Ev::SndTimer(0),
                (false, _) => Ev::RcvTimer,
            };
            self.push(t, e);
        }
        for p in out {
            if from_sender {
                let retx = !self.seen.insert(p.seq);
                self.log.push((self.now, p.seq, retx));
                if !retx && self.drop_once.contains(&p.seq) && self.dropped.insert(p.seq) {
                    continue;
                }
                if retx && self.drop_retx.remove(&p.seq) {
                    continue;
                }
                let dep = self.now.max(self.link_free) + self.tx;
                self.link_free = dep;
                self.pkts.push(p);
                self.push(dep + self.delay, Ev::Data(self.pkts.len() - 1));
            } else {
                self.pkts.push(p);
                self.push(self.now + self.delay, Ev::Ack(self.pkts.len() - 1));
            }
        }
    }

    fn run_until(&mut self, end: Time, stop: impl Fn(&Sender) -> bool) {
        while let Some(Reverse((t, _, e))) = self.heap.pop() {
            if t > end || stop(&self.s) {
                break;
            }
            self.now = t;
            let mut out = vec![];
            let mut timers = vec![];
            let mut ctx = TcpCtx {
                now: t,
                out: &mut out,
                timers: &mut timers,
            };
            let from_sender = match e {
                Ev::Data(i) => {
                    let p = self.pkts[i];
                    self.r.on_packet(&p, &mut ctx);
                    false
                }
                Ev::Ack(i) => {
                    let p = self.pkts[i];
                    self.s.on_ack(&p, &mut ctx);
                    true
                }
                Ev::SndTimer(1) => {
                    match self.s.pace_timer.on_event(t) {
                        (true, _) => self.s.on_pace(&mut ctx),
                        (false, TimerAction::Schedule(t2)) => {
                            ctx.timers.push((t2, TimerKind::Pace))
                        }
                        _ => {}
                    }
                    true
                }
                Ev::SndTimer(_) => {
                    match self.s.rto_timer.on_event(t) {
                        (true, _) => self.s.on_rto(&mut ctx),
                        (false, TimerAction::Schedule(t2)) => ctx.timers.push((t2, TimerKind::Rto)),
                        _ => {}
                    }
                    true
                }
                Ev::RcvTimer => {
                    match self.r.delack_timer.on_event(t) {
                        (true, _) => self.r.on_delack(&mut ctx),
                        (false, TimerAction::Schedule(t2)) => {
                            ctx.timers.push((t2, TimerKind::DelAck))
                        }
                        _ => {}
                    }
                    false
                }
            };
            self.flush(out, timers, from_sender);
        }
    }
}

fn params(sack: bool) -> TcpParams {
    let mut p = TcpParams {
        init_cwnd: 1000.0,
        init_ssthresh: 1000.0,
        max_window: 100_000,
        delayed_ack: false,
        min_rto: 200 * MS,
        ..TcpParams::default()
    };
    if sack {
        p.sack = true;
        p.recovery = Some(RecoveryKind::Sack);
        p.prr = true;
    }
    p
}

/// Recovery of 50 losses spread over one 1000-segment window: the time from
/// the fast retransmit to the ACK that covers the whole window, in RTTs.
fn burst(sack: bool) -> (f64, u64, u64, f64) {
    burst_with(sack, false)
}

fn burst_with(sack: bool, rack: bool) -> (f64, u64, u64, f64) {
    // 1000 segments per 100 ms RTT: 100 µs per segment, 50 ms each way.
    let tx = 100_000;
    let delay = 50 * MS;
    let rtt = 2 * delay + tx;
    let drops: Vec<u32> = (0..50).map(|k| 100 + 17 * k).collect();
    let mut p = params(sack);
    p.rack = rack;
    let mut path = Path::new(
        p,
        CcKind::NewReno(Default::default()),
        tx,
        delay,
        &drops,
        None,
    );
    // run until every dropped segment is acknowledged
    let last = *drops.last().unwrap();
    path.run_until(60_000 * MS, |s| s.snd_una > last + 1);
    let first_retx = path
        .log
        .iter()
        .find(|&&(_, _, r)| r)
        .map(|&(t, _, _)| t)
        .expect("a retransmission");
    let span = (path.now - first_retx) as f64 / rtt as f64;
    (
        span,
        path.s.counters().timeouts,
        path.s.counters().retransmits,
        path.s.cc_state.cwnd,
    )
}

/// The case: a 1000-segment window loses 50 segments in one RTT.
/// With SACK + PRR every hole is resent in the first recovery round and the
/// window is repaired within about two RTTs, no timeout, each lost segment
/// resent exactly once; NewReno repairs one hole per RTT and needs tens of
/// RTTs (or the timer).
#[test]
fn fifty_losses_in_a_1000_segment_window() {
    let (span, to, retx, cwnd) = burst(true);
    println!(
        "SACK+PRR: repaired in {span:.2} RTT, {to} timeouts, {retx} retransmissions, cwnd {cwnd}"
    );
    assert_eq!(to, 0, "no timeout with SACK");
    assert_eq!(retx, 50, "each lost segment resent once");
    assert!(span <= 2.2, "SACK recovery took {span:.2} RTTs");
    let (span_nr, to_nr, retx_nr, _) = burst(false);
    println!("NewReno: repaired in {span_nr:.2} RTT, {to_nr} timeouts, {retx_nr} retransmissions");
    assert!(
        span_nr >= 10.0 * span || to_nr > 0,
        "NewReno {span_nr:.2} RTT, {to_nr} timeouts"
    );
}

/// RFC 6675 §5.1 / Linux `tcp_timeout_mark_lost`: after a timeout with SACK
/// only the segments the receiver does not hold are resent, lowest first,
/// under the slow-start window; without SACK the sender goes back to
/// `snd_una` and resends what the receiver already has.
#[test]
fn after_a_timeout_only_holes_are_resent() {
    let run = |sack: bool| {
        let mut p = params(sack);
        p.init_cwnd = 20.0;
        // no fast recovery: only the timer can repair
        p.dupack_threshold = 1000;
        // segments 5, 10 and 11 lost; 20 segments in one window
        let mut path = Path::new(
            p,
            CcKind::NewReno(Default::default()),
            100_000,
            10 * MS,
            &[5, 10, 11],
            Some(20_000),
        );
        path.run_until(10_000 * MS, |s| s.completion_time.is_some());
        assert!(path.s.completion_time.is_some());
        let resent: BTreeSet<u32> = path.log.iter().filter(|e| e.2).map(|e| e.1).collect();
        (
            resent,
            path.s.counters().retransmits,
            path.s.counters().timeouts,
        )
    };
    let (resent, n, to) = run(true);
    assert_eq!(to, 1);
    assert_eq!(resent, BTreeSet::from([5, 10, 11]), "SACK: only the holes");
    assert_eq!(n, 3);
    let (resent_nr, n_nr, to_nr) = run(false);
    println!("go-back-N resent {resent_nr:?} ({n_nr} retransmissions, {to_nr} timeouts)");
    assert!(
        resent_nr.is_superset(&BTreeSet::from([5, 10, 11])) && resent_nr.contains(&12) && n_nr > 3,
        "NewReno goes back N and resends 12, which the receiver holds"
    );
}

/// [`sack_ack_at`] at 10 ms.
fn sack_ack(s: &mut Sender, a: u32, blocks: &[(u32, u32)]) -> Vec<u32> {
    sack_ack_at(s, 10 * MS, a, blocks)
}

fn started(p: TcpParams, segs: u64) -> (Sender, Vec<u32>) {
    let mut out = vec![];
    let mut timers = vec![];
    let mut s = Sender::new(
        p,
        CcKind::NewReno(Default::default()).build(),
        FlowId(0),
        NodeId(0),
        NodeId(1),
        Some(segs * 1000),
    );
    s.start(&mut TcpCtx {
        now: 0,
        out: &mut out,
        timers: &mut timers,
    });
    let seqs = out.iter().map(|p| p.seq).collect();
    (s, seqs)
}

/// RFC 6675 §4 NextSeg rules (1) and (2): segments deemed lost (IsLost:
/// DupThresh SACKed segments above) go before any new data, lowest first;
/// then new data. PRR sets how many go per ACK.
#[test]
fn nextseg_lost_before_new_data() {
    let mut p = params(true);
    p.init_cwnd = 20.0;
    let (mut s, first) = started(p, 100);
    assert_eq!(first, (0..20).collect::<Vec<_>>());
    // 0 and 1 arrive (slow start: 20, 21 and 22 go out), 2 and 3 are lost,
    // 4.. arrive and are SACKed one per ACK.
    assert_eq!(sack_ack(&mut s, 2, &[]), vec![20, 21, 22]);
    let mut sent = vec![];
    for k in 4..22u32 {
        sent.extend(sack_ack(&mut s, 2, &[(4, k + 1)]));
    }
    assert!(s.in_recovery);
    assert_eq!(&sent[..2], &[2, 3], "rule (1) first: {sent:?}");
    assert!(
        sent[2..].iter().all(|&q| q >= 23),
        "then rule (2): new data {sent:?}"
    );
    assert_eq!(s.counters().fast_retransmits, 1);
    assert_eq!(s.counters().retransmits, 2);
}

/// RFC 6675 §4 NextSeg rule (4): at the end of a transfer, with no new
/// data and no hole below the highest SACKed segment, one rescue
/// retransmission of the highest un-SACKed segment goes once HighACK has
/// passed RescueRxt — a tail loss repaired without the timer.
#[test]
fn nextseg_rescue_retransmission() {
    let mut p = params(true);
    p.init_cwnd = 22.0;
    let (mut s, first) = started(p, 22);
    assert_eq!(first.len(), 22);
    // 2 and the last segment 21 are lost; 3..21 are SACKed
    let mut sent = vec![];
    sack_ack(&mut s, 2, &[]);
    for k in 3..21u32 {
        sent.extend(sack_ack(&mut s, 2, &[(3, k + 1)]));
    }
    assert!(s.in_recovery);
    assert_eq!(
        sent,
        vec![2],
        "only the lost segment; 21 is not deemed lost"
    );
    // the retransmission of 2 arrives: partial ACK up to the tail hole
    let r = sack_ack(&mut s, 21, &[]);
    assert_eq!(r, vec![21], "rule (4): rescue retransmission of 21");
    // no second rescue in the same recovery
    assert!(sack_ack(&mut s, 21, &[]).is_empty());
    assert_eq!(s.counters().timeouts, 0);
}

/// RFC 2018 §4: the first block holds the segment that triggered the ACK;
/// the others repeat the most recently reported blocks; at most 4 blocks
/// (3 with timestamps); the option's bytes count in the ACK's size.
#[test]
fn receiver_sack_block_order() {
    for ts in [false, true] {
        let p = TcpParams {
            sack: true,
            timestamps: ts,
            delayed_ack: false,
            ..TcpParams::default()
        };
        let mut r = Receiver::new(&p, FlowId(0), NodeId(1), NodeId(0));
        let deliver = |r: &mut Receiver, seq: u32| {
            let mut out = vec![];
            let mut timers = vec![];
            let pk = Packet {
                seq,
                payload: 1000,
                size: 1040,
                flags: flags::DATA,
                ..Default::default()
            };
            r.on_packet(
                &pk,
                &mut TcpCtx {
                    now: 0,
                    out: &mut out,
                    timers: &mut timers,
                },
            );
            out[0]
        };
        let mut last = deliver(&mut r, 0);
        assert_eq!(last.nsack, 0);
        for seq in [2, 4, 6, 8, 10] {
            last = deliver(&mut r, seq);
        }
        let max = if ts { 3 } else { 4 };
        let want: Vec<(u32, u32)> = vec![(10, 11), (8, 9), (6, 7), (4, 5)]
            .into_iter()
            .take(max)
            .collect();
        assert_eq!(last.sack_blocks(), &want[..], "most recent first");
        let opt = if ts { 12 } else { 0 };
        assert_eq!(last.size, 40 + opt + 4 + 8 * max as u32);
        // 5 joins 4 and 6 into one block, reported first; the rest follow
        last = deliver(&mut r, 5);
        assert_eq!(last.sack_blocks()[0], (4, 7));
        assert_eq!(last.sack_blocks()[1], (10, 11));
        assert_eq!(last.sack_blocks()[2], (8, 9));
        // 1 fills the first gap: ACK 3, the block (2,3) is gone
        last = deliver(&mut r, 1);
        assert_eq!(last.ack, 3);
        assert!(
            last.sack_blocks().iter().all(|b| b.0 > 3),
            "{:?}",
            last.sack_blocks()
        );
        assert_eq!(last.sack_blocks()[0], (4, 7));
    }
}

/// Pacing (Linux `tcp_update_pacing_rate`): in congestion avoidance the
/// rate is 1.2·cwnd·mss/srtt, so a window W (10 growing to ~28 segments
/// over 2 s) over a 100 ms RTT leaves one segment every 1040 B /
/// (1.2·1000 B·W/0.1 s) (≥ 3.1 ms) instead of back to back, and the paced
/// sender acknowledges within 5 % as much data.
#[test]
fn pacing_spaces_segments_at_linux_rate() {
    let run = |pacing: bool| {
        let mut p = params(false);
        p.init_cwnd = 10.0;
        p.init_ssthresh = 10.0;
        p.pacing = pacing;
        let mut path = Path::new(
            p,
            CcKind::NewReno(Default::default()),
            1_000,
            50 * MS,
            &[],
            None,
        );
        path.run_until(2_000 * MS, |_| false);
        let times: Vec<Time> = path
            .log
            .iter()
            .filter(|e| e.0 >= 150 * MS)
            .map(|e| e.0)
            .collect();
        let min_gap = times.windows(2).map(|w| w[1] - w[0]).min().unwrap();
        (min_gap, path.s.snd_una, path.s.cc_state.cwnd)
    };
    let (gap_paced, acked_paced, cwnd) = run(true);
    let (gap_unpaced, acked_unpaced, _) = run(false);
    println!(
        "min gap paced {gap_paced} ns (cwnd {cwnd:.1}), unpaced {gap_unpaced} ns; acked {acked_paced} vs {acked_unpaced}"
    );
    let expect = 1040.0 / (1.2 * 1000.0 * cwnd.ceil() / 0.1) * 1e9;
    assert!(
        gap_paced as f64 >= 0.95 * expect,
        "paced gap {gap_paced} ns < {expect:.0} ns"
    );
    assert!(
        gap_unpaced < 10_000,
        "unpaced: back to back ({gap_unpaced} ns)"
    );
    assert!(acked_paced as f64 >= 0.95 * acked_unpaced as f64);
}

/// RACK (RFC 8985) on the same 50-loss window: losses are marked by time
/// rather than DupThresh; the repair takes as long (about 2 RTTs), with no
/// timeout and no spurious retransmission.
#[test]
fn rack_repairs_the_burst_too() {
    let (span, to, retx, _) = burst_with(true, true);
    println!("SACK+PRR+RACK: repaired in {span:.2} RTT, {to} timeouts, {retx} retransmissions");
    assert_eq!(to, 0);
    assert_eq!(retx, 50);
    assert!(span <= 2.3, "{span:.2} RTT");
}

/// RFC 8985 §2/§6: a lost retransmission is found by RACK (a segment sent
/// after it was delivered) and resent without the timer; RFC 6675 alone
/// cannot see it and waits for the RTO.
#[test]
fn rack_recovers_a_lost_retransmission_without_timeout() {
    let run = |rack: bool| {
        let mut p = params(true);
        p.init_cwnd = 100.0;
        p.init_ssthresh = 100.0;
        p.rack = rack;
        let mut path = Path::new(
            p,
            CcKind::NewReno(Default::default()),
            100_000,
            50 * MS,
            &[10],
            None,
        );
        path.drop_retx.insert(10);
        path.run_until(5_000 * MS, |s| s.snd_una > 400);
        let resent10 = path.log.iter().filter(|e| e.1 == 10 && e.2).count();
        (path.s.counters().timeouts, resent10, path.s.snd_una)
    };
    let (to_rack, n_rack, una_rack) = run(true);
    let (to_plain, n_plain, una_plain) = run(false);
    println!("RACK: {to_rack} timeouts, 10 resent {n_rack}x; RFC 6675: {to_plain} timeouts, {n_plain}x; una {una_rack} vs {una_plain}");
    assert_eq!(to_rack, 0, "RACK: no timeout");
    assert_eq!(n_rack, 2, "the lost retransmission is resent once more");
    assert_eq!(to_plain, 1, "RFC 6675 alone needs the RTO");
}

fn rto(s: &mut Sender, now: Time) -> Vec<u32> {
    let mut out = vec![];
    let mut timers = vec![];
    s.on_rto(&mut TcpCtx {
        now,
        out: &mut out,
        timers: &mut timers,
    });
    out.iter().map(|p| p.seq).collect()
}

fn cubic_ns3() -> CcKind {
    CcKind::from_value(toml::Value::Table(toml::toml! {
        kind = "cubic"
        variant = "ns3"
    }))
    .expect("cubic ns3")
}

/// After a timeout with SACK the window grows by what an ACK newly
/// delivers, not by how far the cumulative ACK moves (ns-3 `TcpRateOps`
/// `currentDelivered`, Linux `tcp_cong_avoid(sk, ack, delivered)`): when
/// the retransmission of the only hole arrives, the cumulative ACK jumps
/// over 99 segments the receiver already held and SACKed; slow start adds
/// one segment for the one newly delivered, so two segments leave, not a
/// burst of a hundred.
#[test]
fn after_a_timeout_growth_counts_newly_delivered_segments() {
    let mut p = params(true);
    p.init_cwnd = 100.0;
    p.init_ssthresh = 1e9;
    p.dupack_threshold = 1000; // only the timer repairs
    let mut out = vec![];
    let mut timers = vec![];
    let mut s = Sender::new(
        p,
        cubic_ns3().build(),
        FlowId(0),
        NodeId(0),
        NodeId(1),
        Some(1000 * 1000),
    );
    s.start(&mut TcpCtx {
        now: 0,
        out: &mut out,
        timers: &mut timers,
    });
    assert_eq!(out.len(), 100);
    // segment 0 lost, 1..99 SACKed
    assert!(sack_ack(&mut s, 0, &[(1, 100)]).is_empty());
    assert_eq!(rto(&mut s, 1000 * MS), vec![0], "the hole, under cwnd 1");
    assert_eq!(s.cc_state.cwnd, 1.0);
    let sent = sack_ack(&mut s, 100, &[]);
    assert_eq!(s.snd_una, 100);
    assert_eq!(
        s.cc_state.cwnd, 2.0,
        "one newly delivered segment: cwnd 1 -> 2"
    );
    assert_eq!(sent, vec![100, 101], "two new segments, not a burst");
}

/// RFC 5681 §3.1: a second timeout before the first one's recovery ends
/// (the retransmitted segment is lost again) keeps ssthresh — as Linux
/// `tcp_enter_loss` and ns-3 `ReTxTimeout` do — and doubles the RTO
/// (RFC 6298 §5.5). Without the rule ssthresh would fall to 2 (half the
/// one segment in flight).
#[test]
fn a_repeated_timeout_keeps_ssthresh_and_backs_off() {
    let mut p = params(true);
    p.init_cwnd = 100.0;
    p.init_ssthresh = 1e9;
    p.dupack_threshold = 1000;
    let (mut s, first) = started(p, 1000);
    assert_eq!(first.len(), 100);
    // 0..50 lost, 50..100 SACKed: pipe 50 at the first timeout
    assert!(sack_ack(&mut s, 0, &[(50, 100)]).is_empty());
    let rto0 = s.rto();
    assert_eq!(rto(&mut s, 1000 * MS), vec![0]);
    assert_eq!(s.cc_state.ssthresh, 25.0, "NewReno: half of pipe 50");
    assert_eq!(s.rto(), 2 * rto0);
    // the retransmission of 0 is lost too: the timer fires again
    assert_eq!(rto(&mut s, 3000 * MS), vec![0]);
    assert_eq!(s.cc_state.ssthresh, 25.0, "held on the repeated timeout");
    assert_eq!(s.cc_state.cwnd, 1.0);
    assert_eq!(s.rto(), 4 * rto0, "backed off twice");
    assert_eq!(s.counters().timeouts, 2);
    assert_eq!(s.counters().retransmits, 2);
}

/// RFC 3042 §2 (Limited Transmit, without SACK): on each of the first two
/// duplicate ACKs one new segment goes if outstanding data stays at most
/// cwnd + 2 segments; cwnd is not changed; the third duplicate ACK is the
/// fast retransmit. Without the option the first two send nothing.
#[test]
fn limited_transmit_rfc3042_first_two_dupacks() {
    let run = |lt: bool| {
        let mut p = params(false);
        p.init_cwnd = 10.0;
        p.limited_transmit = lt;
        let (mut s, first) = started(p, 100);
        assert_eq!(first, (0..10).collect::<Vec<_>>());
        // segment 0 is lost: 1, 2, 3 arrive and each gives a duplicate ACK
        let d1 = sack_ack(&mut s, 0, &[]);
        let cw1 = s.cc_state.cwnd;
        let d2 = sack_ack(&mut s, 0, &[]);
        let cw2 = s.cc_state.cwnd;
        let d3 = sack_ack(&mut s, 0, &[]);
        (d1, d2, d3, cw1, cw2, s.in_recovery)
    };
    let (d1, d2, d3, cw1, cw2, rec) = run(true);
    assert_eq!((d1, d2), (vec![10], vec![11]), "one new segment per dupack");
    assert_eq!((cw1, cw2), (10.0, 10.0), "cwnd MUST NOT be changed");
    assert!(rec);
    assert_eq!(d3, vec![0], "third dupack: fast retransmit only");
    let (d1, d2, d3, _, _, _) = run(false);
    assert!(d1.is_empty() && d2.is_empty());
    assert_eq!(d3, vec![0]);
}

/// RFC 6675 §5 step (3) (Limited Transmit with SACK): before DupThresh,
/// new data goes while cwnd − pipe ≥ 1 — one new segment for every segment
/// the receiver SACKs, however many duplicate ACKs that takes (here
/// DupThresh 5 and an ACK that SACKs two segments at once).
#[test]
fn limited_transmit_with_sack_follows_pipe() {
    let mut p = params(true);
    p.init_cwnd = 10.0;
    p.dupack_threshold = 5;
    p.limited_transmit = true;
    let (mut s, _) = started(p, 100);
    assert_eq!(sack_ack(&mut s, 0, &[(1, 2)]), vec![10]);
    assert_eq!(
        sack_ack(&mut s, 0, &[(1, 4)]),
        vec![11, 12],
        "two SACKed: two new"
    );
    assert_eq!(sack_ack(&mut s, 0, &[(1, 5)]), vec![13]);
    assert!(!s.in_recovery, "IsLost(0) needs 5 SACKed above");
    assert_eq!(s.cc_state.cwnd, 10.0);
    assert_eq!(s.snd_max - s.snd_una - s.counters().retransmits as u32, 14);
    // without the option nothing new goes before recovery
    let mut p = params(true);
    p.init_cwnd = 10.0;
    p.dupack_threshold = 5;
    let (mut s, _) = started(p, 100);
    assert!(sack_ack(&mut s, 0, &[(1, 4)]).is_empty());
}

fn tlp_params(tlp: bool) -> TcpParams {
    let mut p = params(true);
    p.rack = true;
    p.tlp = tlp;
    p
}

/// RFC 8985 §7 (Tail Loss Probe): the last three segments of a transfer
/// are lost, so no ACK can start recovery. Without TLP only the RTO
/// (200 ms here) repairs them. With TLP a probe — the highest segment,
/// since no new data is left (§7.3) — leaves 2·SRTT after the last ACK;
/// its SACK lets RACK mark the other two lost and fast recovery repairs
/// them, with no timeout. The window is reduced once (§7.4.2: without
/// D-SACK a retransmitted probe counts as a loss; here recovery reduces).
#[test]
fn tail_loss_probe_repairs_a_tail_loss_without_timeout() {
    let run = |tlp: bool| {
        let mut p = tlp_params(tlp);
        p.init_cwnd = 20.0;
        let mut path = Path::new(
            p,
            CcKind::NewReno(Default::default()),
            100_000,
            10 * MS,
            &[17, 18, 19],
            Some(20_000),
        );
        path.run_until(10_000 * MS, |s| s.completion_time.is_some());
        let done = path.s.completion_time.expect("transfer completes");
        let probe = path.log.iter().find(|e| e.2).map(|e| (e.0, e.1));
        (
            path.s.counters().timeouts,
            path.s.counters().loss_probes,
            done,
            probe,
            path.s.srtt(),
        )
    };
    let (to, probes, done, probe, srtt) = run(true);
    let (probe_t, probe_seq) = probe.expect("a retransmission");
    let srtt = srtt.expect("an RTT sample");
    println!("TLP: {to} timeouts, {probes} probes, probe of {probe_seq} at {probe_t} ns (SRTT {srtt}), done at {done}");
    assert_eq!(to, 0, "the probe repairs the tail");
    assert_eq!(probes, 1);
    assert_eq!(probe_seq, 19, "§7.3: the highest segment sent");
    // the last ACK (for 16) arrives about one RTT (~20.2 ms) after the
    // window left; the probe 2·SRTT later
    assert!(
        probe_t >= 20 * MS + 2 * (srtt - MS) && probe_t <= 22 * MS + 2 * (srtt + MS),
        "probe at {probe_t}, SRTT {srtt}"
    );
    let (to_n, probes_n, done_n, _, _) = run(false);
    println!("no TLP: {to_n} timeouts, done at {done_n}");
    assert_eq!((to_n, probes_n), (1, 0), "without TLP the RTO repairs");
    assert!(done < done_n, "TLP finishes earlier: {done} vs {done_n}");
    assert!(done < 200 * MS, "before the 200 ms minimum RTO would fire");
}

/// RFC 8985 §7.2: PTO = 2·SRTT, plus WCDelAckT (200 ms) when one segment
/// is outstanding; the earlier of PTO and RTO is armed; no probe while
/// anything is SACKed.
#[test]
fn pto_follows_rfc8985_section_7_2() {
    let mut p = tlp_params(true);
    p.init_cwnd = 1.0;
    p.min_rto = 1000 * MS;
    let (mut s, first) = started(p.clone(), 10);
    assert_eq!(first, vec![0]);
    // the first ACK at 10 ms: SRTT 10 ms; cwnd 2: segments 1 and 2 leave
    assert_eq!(sack_ack(&mut s, 1, &[]), vec![1, 2]);
    assert_eq!(s.srtt(), Some(10 * MS));
    assert_eq!(s.rto_timer.deadline(), Some(10 * MS + 20 * MS), "2·SRTT");
    // a SACK (segment 2 arrived, 1 not): no probe, the RTO guards
    sack_ack(&mut s, 1, &[(2, 3)]);
    assert_eq!(s.rto_timer.deadline(), Some(10 * MS + 1000 * MS));
    // one segment outstanding: 2·SRTT + 200 ms
    let (mut s, _) = started(p.clone(), 2);
    assert_eq!(sack_ack(&mut s, 1, &[]), vec![1]);
    assert_eq!(s.rto_timer.deadline(), Some(10 * MS + 220 * MS));
    // the RTO is earlier than the PTO: the RTO is armed
    let mut q = p;
    q.min_rto = 200 * MS;
    let (mut s, _) = started(q, 2);
    sack_ack(&mut s, 1, &[]);
    assert_eq!(s.rto_timer.deadline(), Some(10 * MS + 200 * MS));
    // the probe fires: new data if there is any (beyond cwnd), else the
    // highest segment
    let mut p = tlp_params(true);
    p.init_cwnd = 1.0;
    p.min_rto = 1000 * MS;
    let (mut s, _) = started(p, 10);
    sack_ack(&mut s, 1, &[]);
    assert_eq!(
        rto(&mut s, 30 * MS),
        vec![3],
        "new data, cwnd 2 notwithstanding"
    );
    assert_eq!(s.counters().timeouts, 0);
    assert_eq!(s.counters().loss_probes, 1);
    assert_eq!(
        s.rto_timer.deadline(),
        Some(30 * MS + 1000 * MS),
        "one probe per episode: then the RTO"
    );
}

/// `tlp` without `rack` makes no sense (RFC 8985 §7 relies on RACK to mark
/// what the probe reveals): an error that names the key.
#[test]
fn tlp_needs_rack() {
    let mut p = params(true);
    p.tlp = true;
    let (key, msg) = p.validate().expect_err("tlp without rack");
    assert_eq!(key, "tlp");
    assert!(msg.contains("rack = true"), "{msg}");
    p.rack = true;
    assert!(p.validate().is_ok());
}

fn sack_ack_at(s: &mut Sender, now: Time, a: u32, blocks: &[(u32, u32)]) -> Vec<u32> {
    let mut pk = Packet {
        ack: a,
        flags: flags::ACK,
        ..Default::default()
    };
    for (i, b) in blocks.iter().enumerate() {
        pk.sack[i] = *b;
    }
    pk.nsack = blocks.len() as u8;
    let mut out = vec![];
    let mut timers = vec![];
    s.on_ack(
        &pk,
        &mut TcpCtx {
            now,
            out: &mut out,
            timers: &mut timers,
        },
    );
    out.iter().map(|p| p.seq).collect()
}

/// The retransmission-timer deadlines after the entry into SACK recovery
/// and after two partial ACKs, with `tcp.rto_restart` as given: segments
/// 2, 5 and 8 of 20 are lost; three SACKed duplicate ACKs start recovery at
/// 20 ms, partial ACKs of 5 and 8 arrive at 40 and 60 ms.
fn recovery_timer_deadlines(restart: Option<RtoRestart>) -> [Time; 3] {
    let mut p = params(true);
    p.init_cwnd = 20.0;
    p.init_ssthresh = 20.0;
    p.max_window = 20;
    p.rto_restart = restart;
    let (mut s, first) = started(p, 100);
    assert_eq!(first, (0..20).collect::<Vec<_>>());
    sack_ack_at(&mut s, 10 * MS, 2, &[]);
    let at_new_ack = s.rto_timer.deadline().unwrap();
    for (k, b) in [(3, 4), (3, 5), (3, 5)].iter().enumerate() {
        let blocks: &[(u32, u32)] = if k < 2 { &[*b] } else { &[(3, 5), (6, 7)] };
        sack_ack_at(&mut s, 20 * MS, 2, blocks);
    }
    assert!(s.in_recovery);
    assert_eq!(s.counters().fast_retransmits, 1);
    let at_entry = s.rto_timer.deadline().unwrap();
    assert_eq!(at_entry, at_new_ack, "duplicate ACKs do not restart it");
    sack_ack_at(&mut s, 40 * MS, 5, &[(6, 8), (9, 12)]);
    assert!(s.in_recovery, "5 is below RecoveryPoint: a partial ACK");
    let first = s.rto_timer.deadline().unwrap();
    sack_ack_at(&mut s, 60 * MS, 8, &[(9, 14)]);
    assert!(s.in_recovery, "8 is below RecoveryPoint: a partial ACK");
    let second = s.rto_timer.deadline().unwrap();
    [at_entry, first, second]
}

/// `tcp.rto_restart`: which partial ACKs in SACK recovery restart the
/// retransmission timer. RFC 6298 §5.3 / Linux `tcp_rearm_rto`: every ACK
/// of new data (the SACK scheme's own rule). ns-3 3.44
/// `TcpSocketBase::ProcessAck`: `NewAck (ackNumber, m_isFirstPartialAck)`
/// only the first partial ACK of the episode; the timer set then expires
/// whatever later partial ACKs arrive.
#[test]
fn rto_restart_every_ack_or_first_partial_ack() {
    let [entry, first, second] = recovery_timer_deadlines(None);
    assert!(first > entry && second > first, "default: every ACK");
    assert_eq!(
        recovery_timer_deadlines(Some(RtoRestart::EveryAck)),
        [entry, first, second]
    );
    let [e2, f2, s2] = recovery_timer_deadlines(Some(RtoRestart::FirstPartialAck));
    assert_eq!(e2, entry);
    assert_eq!(f2, first, "the first partial ACK restarts it");
    assert_eq!(s2, f2, "a later partial ACK does not");
    // the next recovery restarts it on its own first partial ACK again
}

/// The profiles: ns-3 3.44 restarts on the first partial ACK only, Linux
/// on every ACK of new data, ns-2 keeps the scheme's rule.
#[test]
fn rto_restart_by_profile() {
    use aqmlab::tcp::{Profile, TcpOptions};
    let of = |profile: Profile| {
        let mut p = TcpParams::default();
        p.apply(&TcpOptions {
            profile: Some(profile),
            ..Default::default()
        });
        p.rto_restart
    };
    assert_eq!(of(Profile::Ns3), Some(RtoRestart::FirstPartialAck));
    assert_eq!(of(Profile::Linux), Some(RtoRestart::EveryAck));
    assert_eq!(of(Profile::Ns2), None);
}

/// `tcp.sack_variant = "ns3"` (ns-3 3.44 `TcpPrrRecovery::DoRecovery`
/// and `TcpSocketBase::ProcessAck` as coded), 1000 segments outstanding,
/// segments 0 and 500 lost, NewReno (ssthresh 498 segments): over the 499
/// SACKed duplicate ACKs the proportional part of ns-3's PRR, computed as a
/// 32-bit product `m_prrDelivered * m_ssThresh`, wraps after 4 segments
/// delivered and lets 4 segments go (the fast retransmit and 3 new ones)
/// where RFC 6937 sends one per two delivered (248). The partial ACK of 500
/// then sends one new segment outside the window (`DoRetransmit ()`: the
/// new head 500 was not retransmitted; NextSeg finds nothing lost below the
/// highest SACK, so new data): cwnd 503 against 504 outstanding after it.
#[test]
fn ns3_prr_wraps_and_partial_ack_sends_outside_cwnd() {
    use aqmlab::tcp::SackVariant;
    let run = |v: Option<SackVariant>| {
        let mut p = params(true);
        p.sack_variant = v;
        let (mut s, first) = started(p, 5000);
        assert_eq!(first.len(), 1000);
        let mut sent = 0;
        for e in 2..=500 {
            sent += sack_ack(&mut s, 0, &[(1, e)]).len();
        }
        assert!(s.in_recovery);
        let snd_max = s.snd_max;
        let out = sack_ack(&mut s, 500, &[]);
        assert!(s.in_recovery, "500 is below RecoveryPoint: a partial ACK");
        (sent, snd_max, out, s.cc_state.cwnd, s.snd_max - s.snd_una)
    };
    let (sent, snd_max, out, cwnd, flight) = run(Some(SackVariant::Ns3));
    assert_eq!(sent, 4, "fast retransmit + 3: the wrapped product");
    assert_eq!(snd_max, 1003);
    assert_eq!(out, vec![1003], "DoRetransmit: new data");
    assert_eq!((cwnd, flight), (503.0, 504), "one segment beyond cwnd");
    let (sent, snd_max, out, cwnd, flight) = run(None);
    assert_eq!(sent, 248, "RFC 6937: ⌈delivered · 498/999⌉");
    assert_eq!(out, vec![snd_max], "PRR's own share");
    assert_eq!(cwnd, flight as f64, "RFC PRR stays within cwnd");
}

/// ns-3 3.44 `TcpTxBuffer::NextSeg` rule 1 after a timeout: `SetSentListLost`
/// marks every un-SACKed segment lost, but rule 1 takes only lost segments
/// below the highest SACKed one (`m_sackSeen && startSeq <
/// m_highestSack.second`), so new data goes before the lost segments above
/// it. 20 segments out, 2 lost, 3 and 4 SACKed (slow start sends more),
/// then the RTO; the ACK of
/// the retransmitted 2 SACKs 6: RFC 6675 §5.1 (Linux) resends 5 and 7,
/// ns-3 resends 5 and sends new segment 20.
#[test]
fn ns3_after_timeout_resends_only_below_highest_sack() {
    use aqmlab::tcp::SackVariant;
    let run = |v: Option<SackVariant>| {
        let mut p = params(true);
        p.init_cwnd = 20.0;
        p.sack_variant = v;
        let (mut s, first) = started(p, 100);
        assert_eq!(first.len(), 20);
        sack_ack(&mut s, 2, &[(3, 5)]);
        let snd_max = s.snd_max;
        let r1 = rto(&mut s, 300 * MS);
        let r2 = sack_ack(&mut s, 5, &[(6, 7)]);
        (snd_max, r1, r2)
    };
    let (m, r1, r2) = run(Some(SackVariant::Ns3));
    assert_eq!(r1, vec![2]);
    assert_eq!(r2, vec![5, m], "5 is below the highest SACK, 7 is not");
    let (_, r1, r2) = run(None);
    assert_eq!(r1, vec![2]);
    assert_eq!(r2, vec![5, 7]);
}

/// `sack_variant`: the `ns3-3.44` profile sets `"ns3"`, the others leave the
/// RFC recovery; `rack = true` beside `ns3-3.44` falls back to the RFC
/// recovery (ns-3 3.44 has no RACK); written with RACK, or without
/// `recovery = "sack"`, `"ns3"` is an error that names the key.
#[test]
fn sack_variant_by_profile_and_its_errors() {
    use aqmlab::tcp::{Profile, SackVariant, TcpOptions};
    let of = |o: TcpOptions| {
        let mut p = TcpParams::default();
        p.apply(&o);
        p
    };
    let ns3 = |o: TcpOptions| {
        of(TcpOptions {
            profile: Some(Profile::Ns3),
            ..o
        })
    };
    assert_eq!(
        ns3(TcpOptions::default()).sack_variant,
        Some(SackVariant::Ns3)
    );
    for pr in [Profile::Linux, Profile::Ns2] {
        let p = of(TcpOptions {
            profile: Some(pr),
            ..Default::default()
        });
        assert_eq!(p.sack_variant, None);
    }
    let p = ns3(TcpOptions {
        rack: Some(true),
        ..Default::default()
    });
    assert_eq!(p.sack_variant, None);
    assert!(p.validate().is_ok());
    let p = ns3(TcpOptions {
        rack: Some(true),
        sack_variant: Some(SackVariant::Ns3),
        ..Default::default()
    });
    let (key, msg) = p.validate().expect_err("ns3 with rack");
    assert_eq!(key, "sack_variant");
    assert!(msg.contains("no RACK"), "{msg}");
    let p = ns3(TcpOptions {
        recovery: Some(RecoveryKind::NewReno),
        ..Default::default()
    });
    assert!(p.validate().is_ok(), "the profile's variant is not written");
    let p = ns3(TcpOptions {
        recovery: Some(RecoveryKind::NewReno),
        sack_variant: Some(SackVariant::Ns3),
        ..Default::default()
    });
    let (key, msg) = p.validate().expect_err("ns3 with newreno");
    assert_eq!(key, "sack_variant");
    assert!(msg.contains("recovery = \"sack\""), "{msg}");
}

/// The window growth an ACK gives counts the segments it newly delivers:
/// a cumulative ACK that covers segments SACKed earlier does not count them
/// again (ns-3 `TcpSocketBase` passes `currentDelivered`, the bytes newly
/// ACKed or SACKed, to the congestion control; Linux `tcp_ack` passes
/// `tp->delivered − prior_delivered`).
///
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
    let cc = CcKind::Cubic(aqmlab::tcp::cc::cubic::CubicConfig {
        variant: Some(aqmlab::tcp::cc::cubic::CubicVariant::Ns3),
        hystart: Some(false),
        ..Default::default()
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
        sack_ack_at(&mut s, 50 * MS, 0, &[(1, k)]);
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
    sack_ack_at(&mut s, 1050 * MS, 10, &[]);
    assert_eq!(s.cc_state.cwnd, 2.0, "one segment delivered, one added");
}

/// ns-3 3.44 `TcpSocketBase::ProcessAck` with SACK: `isDupack =
/// scoreboardUpdated`, so an ACK that advances snd.una and newly SACKs is a
/// duplicate ACK all the same: `DupAck` counts it (`CA_OPEN` →
/// `CA_DISORDER`) and, in `CA_DISORDER`, `IncreaseWindow` is not called.
/// Slow start with 10 segments out, 3 lost: the ACK of 1 grows cwnd to 11;
/// the ACK of 3 SACKing 4 advances snd.una and SACKs — ns-3 keeps cwnd 11
/// and sends 2 (one delivered, one SACKed), the RFC sender takes it as a
/// new ACK, grows to 12 (NewReno's slow start) and sends 3. Both enter recovery on the ACK
/// that SACKs 6 (`IsLost (HighACK + 1)`: 4, 5, 6 above 3), ns-3 (DupAcks
/// 3) from a smaller window than the RFC sender (DupAcks 2).
#[test]
fn ns3_an_ack_that_newly_sacks_is_a_duplicate_ack() {
    use aqmlab::tcp::SackVariant;
    let run = |v: Option<SackVariant>| {
        let mut p = params(true);
        p.init_cwnd = 10.0;
        p.init_ssthresh = f64::INFINITY;
        p.sack_variant = v;
        let (mut s, first) = started(p, 1000);
        assert_eq!(first, (0..10).collect::<Vec<_>>());
        sack_ack(&mut s, 1, &[]);
        assert_eq!(s.cc_state.cwnd, 11.0);
        let out = sack_ack(&mut s, 3, &[(4, 5)]);
        let after_first = (s.cc_state.cwnd, out.len(), s.in_recovery);
        sack_ack(&mut s, 3, &[(4, 6)]);
        assert!(!s.in_recovery);
        sack_ack(&mut s, 3, &[(4, 7)]);
        (after_first, s.in_recovery, s.cc_state.ssthresh)
    };
    let (first, rec, ssthresh) = run(Some(SackVariant::Ns3));
    assert_eq!(first, (11.0, 2, false), "no growth: a duplicate ACK");
    assert!(rec);
    let (first, rec, ssthresh_rfc) = run(None);
    assert_eq!(first, (12.0, 3, false), "a new ACK: slow start grows");
    assert!(rec);
    assert!(ssthresh_rfc > ssthresh, "{ssthresh_rfc} vs {ssthresh}");
}
