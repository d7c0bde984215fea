//! Property tests for the queue disciplines (DropTail, RED) driven through the
//! `QueueDisc` trait with arbitrary sequences of arrivals, departures and
//! idle periods, arbitrary packet sizes, and packet or byte limits.
//!
//! Properties, checked after every operation against a reference FIFO:
//! - conservation: every packet offered is accepted or dropped, and every
//!   accepted packet is dequeued or still queued; these disciplines never
//!   drop a packet they already queued (`ctx.dropped` stays empty);
//! - the queue never exceeds its limit (packets or bytes);
//! - FIFO: packets leave in arrival order (uids strictly increase among the
//!   dequeued packets and equal the reference FIFO's head);
//! - `len_pkts`/`len_bytes` equal the count and the byte sum of the queued
//!   packets;
//! - drop causes are consistent: an overflow drop happens only when the
//!   packet does not fit, DropTail drops only by overflow and accepts every
//!   packet that fits; RED's forced drops happen only with `avg` at or above
//!   the forced threshold and early drops only in [min_th, forced threshold);
//!   RED's `avg` stays within [0, largest queue length seen].

use aqmlab::aqm::{DropCause, DropTail, DropTailConfig, Limit, QdCtx, QueueDisc, Red, RedConfig};
use aqmlab::engine::RngStream;
use aqmlab::net::packet::{Ecn, Packet};
use proptest::prelude::*;
use std::collections::VecDeque;

#[derive(Clone, Debug)]
enum Op {
    /// Offer a packet of this size (ECN-capable or not).
    Enq(u32, bool),
    Deq,
    /// Let time pass (exercises RED's idle decay).
    Advance(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1u32..=3000, any::<bool>()).prop_map(|(s, e)| Op::Enq(s, e)),
        3 => Just(Op::Deq),
        1 => (0u64..20_000_000).prop_map(Op::Advance),
    ]
}

fn limit() -> impl Strategy<Value = Limit> {
    prop_oneof![
        (1u32..60).prop_map(Limit::Packets),
        (1u64..60_000).prop_map(Limit::Bytes),
    ]
}

fn red_config() -> impl Strategy<Value = RedConfig> {
    (
        limit(),
        0.0f64..20.0,
        0.5f64..30.0,
        0.001f64..=1.0,
        0.001f64..=1.0,
        any::<(bool, bool, bool)>(),
        100u32..1500,
    )
        .prop_map(
            |(limit, min_th, span, max_p, w_q, (gentle, wait, ecn), mean_pktsize)| {
                let mut c = RedConfig::new(limit, min_th, min_th + span, max_p, w_q);
                c.gentle = gentle;
                c.wait = wait;
                c.ecn = ecn;
                c.mean_pktsize = mean_pktsize;
                c
            },
        )
}

/// What a discipline-specific checker needs to know about one arrival.
struct Arrival<'a> {
    result: Result<(), DropCause>,
    /// Queue length (packets, bytes) just before the arrival.
    before: (usize, u64),
    size: u32,
    limit: Limit,
    qd: &'a dyn QueueDisc,
}

/// Run `ops` against `qd`, checking the generic properties; `on_arrival`
/// checks the discipline-specific ones.
fn exercise(
    qd: &mut dyn QueueDisc,
    limit: Limit,
    ops: &[Op],
    seed: u64,
    mut on_arrival: impl FnMut(&Arrival) -> Result<(), TestCaseError>,
) -> Result<(), TestCaseError> {
    let mut rng = RngStream::new(seed, 1);
    let mut dropped: Vec<(Packet, DropCause)> = Vec::new();
    let mut model: VecDeque<(u64, u32)> = VecDeque::new();
    let (mut offered, mut accepted, mut rejected, mut dequeued) = (0u64, 0u64, 0u64, 0u64);
    let mut last_uid: Option<u64> = None;
    let mut now = 0u64;
    let mut uid = 0u64;
    for op in ops {
        let mut ctx = QdCtx {
            now,
            rng: &mut rng,
            dropped: &mut dropped,
            marked: 0,
        };
        match *op {
            Op::Enq(size, ect) => {
                uid += 1;
                offered += 1;
                let before = (qd.len_pkts(), qd.len_bytes());
                let pkt = Packet {
                    uid,
                    size,
                    payload: size.saturating_sub(40),
                    ecn: if ect { Ecn::Ect0 } else { Ecn::NotEct },
                    ..Default::default()
                };
                let result = qd.enqueue(pkt, &mut ctx);
                prop_assert!(ctx.marked <= 1);
                match result {
                    Ok(()) => {
                        accepted += 1;
                        model.push_back((uid, size));
                    }
                    Err(_) => {
                        rejected += 1;
                        prop_assert_eq!(ctx.marked, 0, "a dropped packet counted as marked");
                    }
                }
                on_arrival(&Arrival {
                    result,
                    before,
                    size,
                    limit,
                    qd: &*qd,
                })?;
            }
            Op::Deq => match qd.dequeue(&mut ctx) {
                Some(p) => {
                    dequeued += 1;
                    let (u, s) = model.pop_front().ok_or_else(|| {
                        TestCaseError::fail("dequeued from a queue the model says is empty")
                    })?;
                    prop_assert_eq!(p.uid, u, "FIFO order");
                    prop_assert_eq!(p.size, s);
                    if let Some(l) = last_uid {
                        prop_assert!(p.uid > l, "uids not increasing: {} after {}", p.uid, l);
                    }
                    last_uid = Some(p.uid);
                }
                None => prop_assert!(
                    model.is_empty(),
                    "dequeue returned None with packets queued"
                ),
            },
            Op::Advance(dt) => now += dt,
        }
        prop_assert!(dropped.is_empty(), "queued packets dropped");
        // conservation
        prop_assert_eq!(offered, accepted + rejected);
        prop_assert_eq!(accepted, dequeued + model.len() as u64);
        // lengths
        prop_assert_eq!(qd.len_pkts(), model.len());
        let bytes: u64 = model.iter().map(|&(_, s)| s as u64).sum();
        prop_assert_eq!(qd.len_bytes(), bytes);
        // limit
        match limit {
            Limit::Packets(n) => prop_assert!(qd.len_pkts() <= n as usize),
            Limit::Bytes(b) => prop_assert!(qd.len_bytes() <= b),
        }
    }
    // drain: everything still queued comes out, in order
    let mut ctx = QdCtx {
        now,
        rng: &mut rng,
        dropped: &mut dropped,
        marked: 0,
    };
    while let Some(p) = qd.dequeue(&mut ctx) {
        let (u, _) = model.pop_front().expect("model has it");
        prop_assert_eq!(p.uid, u);
        dequeued += 1;
    }
    prop_assert!(model.is_empty());
    prop_assert_eq!(accepted, dequeued);
    prop_assert_eq!(qd.len_bytes(), 0);
    Ok(())
}

fn fits(a: &Arrival) -> bool {
    !a.limit.exceeded_by(a.before.0, a.before.1, a.size)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn droptail_properties(lim in limit(), ops in prop::collection::vec(op(), 0..400), seed in any::<u64>()) {
        let mut q = DropTail::new(&DropTailConfig { limit: lim });
        exercise(&mut q, lim, &ops, seed, |a| {
            match a.result {
                Ok(()) => prop_assert!(fits(a), "accepted a packet that does not fit"),
                Err(c) => {
                    prop_assert_eq!(c, DropCause::Overflow);
                    prop_assert!(!fits(a), "dropped a packet that fits");
                }
            }
            prop_assert_eq!(a.qd.avg_len(), None);
            Ok(())
        })?;
    }

    #[test]
    fn red_properties(
        c in red_config(),
        rate in 1_000_000u64..1_000_000_000,
        ops in prop::collection::vec(op(), 0..400),
        seed in any::<u64>(),
    ) {
        let mut q = Red::new(&c, rate, 0);
        let forced_at = if c.gentle { 2.0 * c.max_th } else { c.max_th };
        let mut max_len = 0usize;
        exercise(&mut q, c.limit, &ops, seed, |a| {
            // `avg` after this arrival includes the queue length it saw.
            max_len = max_len.max(a.before.0);
            let avg = a.qd.avg_len().expect("RED has an average");
            prop_assert!(avg.is_finite() && avg >= 0.0, "avg {}", avg);
            prop_assert!(avg <= max_len as f64 + 1e-9, "avg {} > max length {}", avg, max_len);
            match a.result {
                Ok(()) => prop_assert!(fits(a), "accepted a packet that does not fit"),
                Err(DropCause::Overflow) => prop_assert!(!fits(a), "overflow drop of a packet that fits"),
                Err(DropCause::Forced) => prop_assert!(avg >= forced_at, "forced drop at avg {}", avg),
                Err(DropCause::Early) => prop_assert!(
                    avg >= c.min_th && avg < forced_at,
                    "early drop at avg {} outside [{}, {})", avg, c.min_th, forced_at
                ),
                Err(other) => {
                    return Err(TestCaseError::fail(format!("RED dropped with cause {other:?}")))
                }
            }
            Ok(())
        })?;
    }
}
