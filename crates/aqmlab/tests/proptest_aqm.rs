//! Property tests for every queue discipline in the registry
//! (`QueueSpec::registry()`), built the way a scenario builds them: a small TOML table with random parameters is
//! deserialized into a [`QueueSpec`], validated, and built. Each case drives
//! the discipline through the `QueueDisc` trait with a random sequence of
//! arrivals (several flows, random sizes, ECT or not), departures and
//! time steps, and checks after every operation:
//!
//! - conservation, exactly: every packet offered is accepted or rejected
//!   (`Err` on enqueue), and every accepted packet is dequeued, dropped later
//!   (reported through `QdCtx::dropped`, e.g. CoDel's dequeue drops or
//!   FQ-CoDel's drop from the fattest flow) or still queued; a packet is
//!   reported at most once and only if it was queued;
//! - the queue never exceeds its limit (packets or bytes) after an operation;
//! - `len_pkts`/`len_bytes` equal the number and byte sum of the packets a
//!   reference model says are queued; `dequeue` returns `None` only when the
//!   model is empty;
//! - order: FIFO disciplines (droptail, red, ared, codel, pie, markmax)
//!   dequeue the oldest queued packet (smallest uid), and CoDel drops only
//!   older packets than the one it returns; flow-queueing disciplines
//!   (fq_codel, sfq_codel) dequeue the oldest queued packet of its flow;
//! - ECN: a mark reported through `QdCtx::marked` during an accepted
//!   enqueue is on the arrival, during a dequeue on the returned packet;
//!   only ECT packets are marked, at most once, only with `ecn` on; every
//!   packet leaves with exactly the codepoint this implies (so the marks
//!   reported equal the CE packets out plus those still queued); a packet's
//!   other fields (size, flow, sequence, enqueue time) are untouched.
//!   MarkMax marks a queued packet of another flow on arrival, so for it only
//!   "CE only on ECT, only with `ecn`, marks ≥ CE packets out" is checked.
//!
//! At the end the queue is drained and must empty with conservation intact.

use aqmlab::aqm::{DropCause, Limit, QdCtx, QueueDisc, QueueSpec};
use aqmlab::engine::RngStream;
use aqmlab::net::packet::{Ecn, FlowId, NodeId, Packet};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug)]
enum Op {
    Enq {
        flow: u32,
        size: u32,
        ect: bool,
    },
    Deq,
    /// Let time pass, nanoseconds.
    Advance(u64),
}

fn op() -> impl Strategy<Value = Op> {
    let size = prop_oneof![
        6 => 40u32..=1500,
        1 => 1u32..=3000,
    ];
    prop_oneof![
        5 => (0u32..6, size, any::<bool>()).prop_map(|(flow, size, ect)| Op::Enq { flow, size, ect }),
        3 => Just(Op::Deq),
        1 => (0u64..50_000_000).prop_map(Op::Advance),
    ]
}

/// A generated configuration: the TOML table, its limit, whether it marks.
#[derive(Clone, Debug)]
struct Cfg {
    toml: String,
    limit: Limit,
    ecn: bool,
}

fn limit() -> impl Strategy<Value = (String, Limit)> {
    prop_oneof![
        (1u32..80).prop_map(|n| (format!("limit = {n}"), Limit::Packets(n))),
        (1u32..80).prop_map(|n| (format!("limit = \"{n}p\""), Limit::Packets(n))),
        (1u64..60_000).prop_map(|b| (format!("limit = \"{b}B\""), Limit::Bytes(b))),
    ]
}

/// `target` and `interval` of the CoDel family, as duration strings.
fn codel_times() -> impl Strategy<Value = (String, String)> {
    (100u64..20_000, 0u64..300_000)
        .prop_map(|(t, extra)| (format!("{t}us"), format!("{}us", t + extra)))
}

fn red_keys() -> impl Strategy<Value = String> {
    (
        0.0f64..20.0,
        0.5f64..30.0,
        0.001f64..=1.0,
        0.001f64..=1.0,
        any::<(bool, bool)>(),
        100u32..1500,
    )
        .prop_map(|(min_th, span, max_p, w_q, (gentle, wait), mps)| {
            format!(
                "min_th = {min_th:?}\nmax_th = {:?}\nmax_p = {max_p:?}\nw_q = {w_q:?}\n\
                 gentle = {gentle}\nwait = {wait}\nmean_pktsize = {mps}",
                min_th + span
            )
        })
}

/// A random configuration of `kind`: a generator written for the kind where
/// there is one, else [`generic_config`] from the registry's parameter list.
fn config(kind: &'static str) -> BoxedStrategy<Cfg> {
    let with = move |body: String, (lt, limit): (String, Limit), ecn: bool| Cfg {
        toml: format!("kind = \"{kind}\"\n{lt}\n{body}"),
        limit,
        ecn,
    };
    match kind {
        "droptail" => limit()
            .prop_map(move |l| with(String::new(), l, false))
            .boxed(),
        "red" => (limit(), red_keys(), any::<bool>())
            .prop_map(move |(l, red, ecn)| with(format!("{red}\necn = {ecn}"), l, ecn))
            .boxed(),
        "ared" => (
            limit(),
            red_keys(),
            any::<bool>(),
            (1u64..1_000_000, 0.001f64..0.5, 0.5f64..0.99, 0.1f64..=1.0, 0.01f64..0.99),
        )
            .prop_map(move |(l, red, ecn, (iv, alpha, beta, top, bfrac))| {
                with(
                    format!(
                        "{red}\necn = {ecn}\ninterval = \"{iv}us\"\nalpha = {alpha:?}\nbeta = {beta:?}\n\
                         top = {top:?}\nbottom = {:?}",
                        top * bfrac
                    ),
                    l,
                    ecn,
                )
            })
            .boxed(),
        "codel" => (limit(), codel_times(), 64u32..3000, any::<bool>(), any::<bool>())
            .prop_map(move |(l, (t, i), mtu, ecn, ns2)| {
                let v = if ns2 { "ns2" } else { "linux" };
                with(
                    format!("target = \"{t}\"\ninterval = \"{i}\"\nmtu = {mtu}\necn = {ecn}\nvariant = \"{v}\""),
                    l,
                    ecn,
                )
            })
            .boxed(),
        "fq_codel" => (
            limit(),
            codel_times(),
            (prop_oneof![3 => 1u32..16, 1 => Just(1024u32)], 1u32..3000, 1u32..64, 64u32..3000),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(move |(l, (t, i), (flows, quantum, batch, mtu), ecn, ns2)| {
                let v = if ns2 { "ns2" } else { "linux" };
                with(
                    format!(
                        "target = \"{t}\"\ninterval = \"{i}\"\nflows = {flows}\nquantum = {quantum}\n\
                         drop_batch = {batch}\nmtu = {mtu}\necn = {ecn}\nvariant = \"{v}\""
                    ),
                    l,
                    ecn,
                )
            })
            .boxed(),
        "sfq_codel" => (
            limit(),
            codel_times(),
            any::<bool>(),
            any::<bool>(),
            prop::option::of(1u32..=256),
            prop_oneof![1 => Just(0u32), 1 => 1u32..3000],
        )
            .prop_map(move |(l, (t, i), ecn, v1024, bins, quantum)| {
                let v = if v1024 { "pollere-1024" } else { "pollere-256" };
                let bins = bins.map_or(String::new(), |b| format!("\nbins = {b}"));
                with(
                    format!(
                        "target = \"{t}\"\ninterval = \"{i}\"\necn = {ecn}\nvariant = \"{v}\"\nquantum = {quantum}{bins}"
                    ),
                    l,
                    ecn,
                )
            })
            .boxed(),
        "pie" => (
            limit(),
            (1u64..30_000, 1u64..30_000, 0u64..200_000),
            (0.0f64..0.5, 0.0f64..3.0, 0.0f64..=1.0),
            any::<(bool, bool)>(),
            100u32..1500,
        )
            .prop_map(move |(l, (target, tu, burst), (alpha, beta, th), (ecn, derand), mps)| {
                with(
                    format!(
                        "target = \"{target}us\"\nt_update = \"{tu}us\"\nmax_burst = \"{burst}us\"\n\
                         alpha = {alpha:?}\nbeta = {beta:?}\nmark_ecn_threshold = {th:?}\n\
                         ecn = {ecn}\nderandomize = {derand}\nmean_pktsize = {mps}"
                    ),
                    l,
                    ecn,
                )
            })
            .boxed(),
        "markmax" => (
            (0.5f64..40.0, 0.0f64..0.99, 0.01f64..1.0),
            prop_oneof![
                (0u32..30).prop_map(Some),
                Just(None),
            ],
            1u64..60_000,
            any::<(bool, bool)>(),
        )
            .prop_map(move |((theta, lo, hi), extra, bytes, (ecn, by_pkts))| {
                let (lo, hi) = (theta * lo, theta * (1.0 + hi));
                // a packet limit must hold θ_h packets
                let l = match extra {
                    Some(x) => {
                        let n = hi.ceil() as u32 + x;
                        (format!("limit = {n}"), Limit::Packets(n))
                    }
                    None => (format!("limit = \"{bytes}B\""), Limit::Bytes(bytes)),
                };
                let unit = if by_pkts { "packets" } else { "bytes" };
                with(
                    format!(
                        "theta = {theta:?}\ntheta_low = {lo:?}\ntheta_high = {hi:?}\n\
                         backlog = \"{unit}\"\necn = {ecn}"
                    ),
                    l,
                    ecn,
                )
            })
            .boxed(),
        "maxnet" => (limit(), 0.01f64..=1.0, 1u64..200_000)
            .prop_map(move |(l, mu, us)| with(format!("mu = {mu:?}\nupdate_period = \"{us}us\""), l, false))
            .boxed(),
        "rio" => (limit(), any::<(bool, bool, bool)>())
            .prop_map(move |(l, (gentle, wait, ecn))| {
                with(format!("gentle = {gentle}\nwait = {wait}\necn = {ecn}"), l, ecn)
            })
            .boxed(),
        "dualpi2" => (limit(), 0usize..3, any::<(bool, bool)>(), 1u64..20_000)
            .prop_map(move |(l, v, (overload, early), tu)| {
                let v = ["linux", "rfc", "ns3"][v];
                let linux = if v == "linux" {
                    format!("drop_overload = {overload}\ndrop_early = {early}\n")
                } else {
                    String::new()
                };
                with(format!("variant = \"{v}\"\ntupdate = \"{tu}us\"\n{linux}"), l, true)
            })
            .boxed(),
        "cobalt" => (
            limit(),
            codel_times(),
            any::<(bool, bool)>(),
            prop_oneof![Just(None), (1u64..20_000).prop_map(Some)],
            prop_oneof![Just("\"off\"".to_string()), (1u64..1000).prop_map(|m| format!("\"{m}ms\""))],
        )
            .prop_map(move |(l, (t, i), (ecn, l4s), ce, blue)| {
                let mut body = format!(
                    "target = \"{t}\"\ninterval = \"{i}\"\necn = {ecn}\nblue_threshold = {blue}"
                );
                if let Some(us) = ce {
                    body.push_str(&format!("\nce_threshold = \"{us}us\"\nuse_l4s = {l4s}"));
                }
                // the step marks ECN-capable packets whatever `ecn` says,
                // as Linux's ce_threshold and ns-3's UseL4s do
                with(body, l, ecn || ce.is_some())
            })
            .boxed(),
        "cake" => (
            1u64..60_000,
            0usize..8,
            0usize..3,
            0usize..3,
            (-64i32..=256, 0u32..=256),
        )
            .prop_map(move |(b, mode, ds, af, (oh, mpu))| {
                let modes = [
                    "none", "srchost", "dsthost", "hosts", "flows", "dual-srchost",
                    "dual-dsthost", "triple-isolate",
                ];
                let dss = ["besteffort", "diffserv3", "diffserv4"];
                let afs = ["false", "true", "\"aggressive\""];
                Cfg {
                    toml: format!(
                        "kind = \"cake\"\nmemlimit = \"{b}B\"\nflow_mode = \"{}\"\n\
                         diffserv = \"{}\"\nack_filter = {}\noverhead = {oh}\nmpu = {mpu}",
                        modes[mode], dss[ds], afs[af]
                    ),
                    limit: Limit::Bytes(b),
                    // CAKE's COBALT always marks ECN-capable packets
                    ecn: true,
                }
            })
            .boxed(),
        other => generic_config(other),
    }
}

/// A configuration of a registered kind from its catalogue: a random
/// `limit` (if it has one), every boolean parameter random, the required
/// keys at their examples, everything else at its default. Marks are
/// allowed when `ecn` is on or the kind has no `ecn` switch.
fn generic_config(kind: &'static str) -> BoxedStrategy<Cfg> {
    let info = QueueSpec::registry()
        .into_iter()
        .find(|k| k.kind == kind)
        .expect("a registered kind");
    let bools: Vec<&'static str> = info
        .catalogue()
        .into_iter()
        .filter(|(_, ty, _)| ty == "bool")
        .map(|(p, _, _)| p.name)
        .collect();
    let has_limit = info.params.iter().any(|p| p.name == "limit");
    let n = bools.len();
    (limit(), prop::collection::vec(any::<bool>(), n))
        .prop_map(move |((lt, limit), flags)| {
            let mut t = info.required_example();
            t.remove("limit");
            let mut text = format!("kind = \"{kind}\"\n{}", toml::to_string(&t).expect("toml"));
            let limit = if has_limit {
                text.push_str(&format!("{lt}\n"));
                limit
            } else {
                Limit::Packets(u32::MAX)
            };
            // a kind without an `ecn` switch may mark (e.g. step marking)
            let mut ecn = !bools.contains(&"ecn");
            for (name, on) in bools.iter().zip(flags) {
                text.push_str(&format!("{name} = {on}\n"));
                ecn |= *name == "ecn" && on;
            }
            Cfg {
                toml: text,
                limit,
                ecn,
            }
        })
        .boxed()
}

/// What the model knows of a queued packet.
#[derive(Clone, Copy)]
struct Queued {
    flow: u32,
    size: u32,
    ect: bool,
    enq_time: u64,
    /// Marked CE on arrival (RED, PIE mark at enqueue).
    ce: bool,
}

struct Model {
    queued: BTreeMap<u64, Queued>,
    /// Queued packets by order lane ([`Model::lane`]).
    per_flow: BTreeMap<u32, BTreeSet<u64>>,
    bytes: u64,
    /// The kind queues ECT(1) apart from the rest (DualPI2's L and C
    /// queues): a flow's order holds within each of its codepoints' queues.
    split_l4s: bool,
}

impl Model {
    /// The lane whose packets must leave in order: the flow, or with
    /// `split_l4s` the flow's L or C queue.
    fn lane(&self, flow: u32, ect: bool) -> u32 {
        if self.split_l4s {
            flow * 2 + u32::from(ect && ect_of(flow) == Ecn::Ect1)
        } else {
            flow
        }
    }

    fn remove(&mut self, uid: u64) -> Result<Queued, TestCaseError> {
        let q = self
            .queued
            .remove(&uid)
            .ok_or_else(|| TestCaseError::fail(format!("packet {uid} left but is not queued")))?;
        let lane = self.lane(q.flow, q.ect);
        self.per_flow.get_mut(&lane).expect("flow set").remove(&uid);
        self.bytes -= q.size as u64;
        Ok(q)
    }
}

#[derive(Default)]
struct Tally {
    offered: u64,
    accepted: u64,
    rejected: u64,
    dequeued: u64,
    dropped_later: u64,
    marks_reported: u64,
    ce_out: u64,
}

/// The ECN-capable codepoint of a flow's packets: ECT(1) (L4S) for odd
/// flows, ECT(0) for even ones, so that DualPI2's L queue is exercised and
/// a flow's packets stay in one of its queues.
fn ect_of(flow: u32) -> Ecn {
    if flow % 2 == 1 {
        Ecn::Ect1
    } else {
        Ecn::Ect0
    }
}

/// Check one packet that left the queue (dequeued or dropped).
/// `marked_now`: the call that released it reported a mark; `anywhere`: see
/// [`QueueSpec::marks_queued`].
fn check_left(
    p: &Packet,
    q: Queued,
    marked_now: bool,
    anywhere: bool,
    t: &mut Tally,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(p.size, q.size);
    prop_assert_eq!(p.flow.0, q.flow);
    prop_assert_eq!(p.enq_time, q.enq_time);
    prop_assert_eq!(p.seq, p.uid as u32);
    let expect = if q.ce || marked_now {
        prop_assert!(q.ect, "packet {} was not ECT but was marked", p.uid);
        Ecn::Ce
    } else if q.ect {
        ect_of(q.flow)
    } else {
        Ecn::NotEct
    };
    if !(anywhere && q.ect && p.ecn == Ecn::Ce) {
        prop_assert_eq!(
            p.ecn,
            expect,
            "packet {} left with the wrong codepoint",
            p.uid
        );
    }
    if p.ecn == Ecn::Ce {
        t.ce_out += 1;
    }
    Ok(())
}

fn exercise(kind: &str, cfg: &Cfg, ops: &[Op], seed: u64) -> Result<Tally, TestCaseError> {
    let spec: QueueSpec =
        toml::from_str(&cfg.toml).map_err(|e| TestCaseError::fail(format!("{e}\n{}", cfg.toml)))?;
    prop_assert_eq!(spec.kind(), kind);
    if let Err((k, m)) = spec.validate() {
        return Err(TestCaseError::fail(format!(
            "generated config invalid: {k}: {m}\n{}",
            cfg.toml
        )));
    }
    let mut rng = RngStream::new(seed, 1);
    let mut qd: Box<dyn QueueDisc> = spec.build(10_000_000, 20_000_000, &mut rng);
    prop_assert_eq!(qd.kind(), kind);
    let fifo = QueueSpec::is_fifo(kind);
    let anywhere = QueueSpec::marks_queued(kind);
    let mut m = Model {
        queued: BTreeMap::new(),
        per_flow: BTreeMap::new(),
        bytes: 0,
        split_l4s: kind == "dualpi2",
    };
    let mut t = Tally::default();
    let mut dropped: Vec<(Packet, DropCause)> = Vec::new();
    let mut now = 0u64;
    let mut uid = 0u64;
    let drain = ops
        .iter()
        .cloned()
        .chain(std::iter::repeat_n(Op::Deq, 200_000));
    let mut draining = 0usize;
    for (i, op) in drain.enumerate() {
        if i >= ops.len() {
            // drain: stop once empty
            if m.queued.is_empty() && qd.len_pkts() == 0 {
                break;
            }
            draining += 1;
        }
        let mut ctx = QdCtx {
            now,
            rng: &mut rng,
            dropped: &mut dropped,
            marked: 0,
        };
        let mut out: Option<Packet> = None;
        match op {
            Op::Enq { flow, size, ect } => {
                uid += 1;
                t.offered += 1;
                let pkt = Packet {
                    uid,
                    flow: FlowId(flow),
                    src: NodeId(flow),
                    dst: NodeId(100 + flow),
                    size,
                    payload: size,
                    seq: uid as u32,
                    enq_time: now,
                    ecn: if ect { ect_of(flow) } else { Ecn::NotEct },
                    ..Default::default()
                };
                match qd.enqueue(pkt, &mut ctx) {
                    Ok(()) => {
                        t.accepted += 1;
                        // a mark during an accepted enqueue is the arrival's
                        prop_assert!(anywhere || ctx.marked <= 1);
                        let ce = !anywhere && ctx.marked == 1;
                        prop_assert!(!ce || ect, "marked a non-ECT arrival");
                        m.queued.insert(
                            uid,
                            Queued {
                                flow,
                                size,
                                ect,
                                enq_time: now,
                                ce,
                            },
                        );
                        let lane = m.lane(flow, ect);
                        m.per_flow.entry(lane).or_default().insert(uid);
                        m.bytes += size as u64;
                    }
                    Err(_) => {
                        t.rejected += 1;
                        prop_assert!(
                            anywhere || ctx.marked == 0,
                            "a rejected arrival counted as marked"
                        );
                    }
                }
            }
            Op::Deq => out = qd.dequeue(&mut ctx),
            Op::Advance(dt) => now += dt,
        }
        let marked = ctx.marked as u64;
        t.marks_reported += marked;
        // packets dropped from the queue during this call: never marked here
        let mut dropped_uids = Vec::new();
        for (p, _cause) in dropped.drain(..) {
            let q = m.remove(p.uid)?;
            check_left(&p, q, false, anywhere, &mut t)?;
            t.dropped_later += 1;
            dropped_uids.push(p.uid);
        }
        if matches!(op, Op::Deq) {
            // a mark during a dequeue is the returned packet's
            prop_assert!(marked <= 1 && (marked == 0 || out.is_some()));
        }
        match out {
            Some(p) => {
                let q = m.remove(p.uid)?;
                prop_assert!(!(q.ce && marked == 1), "packet {} marked twice", p.uid);
                let lane = m.lane(p.flow.0, q.ect);
                check_left(&p, q, marked == 1, anywhere, &mut t)?;
                t.dequeued += 1;
                if fifo {
                    if let Some((&oldest, _)) = m.queued.iter().next() {
                        prop_assert!(
                            p.uid < oldest,
                            "FIFO: dequeued {} while {} is queued",
                            p.uid,
                            oldest
                        );
                    }
                    for d in &dropped_uids {
                        prop_assert!(*d < p.uid, "dropped {} newer than dequeued {}", d, p.uid);
                    }
                } else if let Some(&oldest) = m.per_flow[&lane].iter().next() {
                    prop_assert!(
                        p.uid < oldest,
                        "per-flow order: flow {} dequeued {} while {} is queued",
                        p.flow,
                        p.uid,
                        oldest
                    );
                }
            }
            None if matches!(op, Op::Deq) => prop_assert!(
                m.queued.is_empty(),
                "dequeue returned None with {} packets queued",
                m.queued.len()
            ),
            None => {}
        }
        // conservation, exactly
        prop_assert_eq!(t.offered, t.accepted + t.rejected);
        prop_assert_eq!(
            t.accepted,
            t.dequeued + t.dropped_later + m.queued.len() as u64
        );
        // lengths
        prop_assert_eq!(qd.len_pkts(), m.queued.len());
        prop_assert_eq!(qd.len_bytes(), m.bytes);
        // limit
        match cfg.limit {
            Limit::Packets(n) => prop_assert!(
                qd.len_pkts() <= n as usize,
                "{} packets queued, limit {}",
                qd.len_pkts(),
                n
            ),
            Limit::Bytes(b) => prop_assert!(
                qd.len_bytes() <= b,
                "{} bytes queued, limit {} B",
                qd.len_bytes(),
                b
            ),
        }
        // ECN: every reported mark is on a packet that left CE or is still
        // queued marked
        let ce_queued = m.queued.values().filter(|q| q.ce).count() as u64;
        if anywhere {
            prop_assert!(t.marks_reported >= t.ce_out, "fewer marks than CE packets");
        } else {
            prop_assert_eq!(
                t.marks_reported,
                t.ce_out + ce_queued,
                "marks reported vs CE packets"
            );
        }
        if !cfg.ecn {
            prop_assert_eq!(t.marks_reported, 0, "marked with ecn = false");
        }
    }
    prop_assert!(draining < 200_000, "the queue did not drain");
    prop_assert!(m.queued.is_empty());
    prop_assert_eq!(t.accepted, t.dequeued + t.dropped_later);
    Ok(t)
}

fn case(kind: &'static str) -> impl Strategy<Value = (Cfg, Vec<Op>, u64)> {
    (
        config(kind),
        prop::collection::vec(op(), 0..500),
        any::<u64>(),
    )
}

/// Every registered kind has a configuration generator whose tables parse,
/// and passes the properties on a smaller batch of random cases (so a kind
/// added to the registry is tested without an edit here).
#[test]
fn every_registered_queue_kind_is_covered() {
    let mut runner = TestRunner::deterministic();
    for info in QueueSpec::registry() {
        let kind = info.kind;
        let strat = config(kind);
        for _ in 0..16 {
            let cfg = strat.new_tree(&mut runner).expect("tree").current();
            let q = QueueSpec::from_value(toml::from_str(&cfg.toml).expect("toml"));
            assert!(q.is_ok(), "{kind}: {} → {q:?}", cfg.toml);
        }
        run_kind_cases(kind, 128);
    }
}

/// Run 1024 random cases of `kind`, then check that they exercised the
/// discipline: arrivals rejected, packets dropped from the queue and marks,
/// where the discipline can do them (summed over all cases).
fn run_kind(kind: &'static str) {
    run_kind_cases(kind, 1024);
}

fn run_kind_cases(kind: &'static str, cases: u32) {
    let sum = std::cell::RefCell::new(Tally::default());
    let mut runner = TestRunner::new(ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let result = runner.run(&case(kind), |(cfg, ops, seed)| {
        let t = exercise(kind, &cfg, &ops, seed)?;
        let mut s = sum.borrow_mut();
        s.offered += t.offered;
        s.rejected += t.rejected;
        s.dequeued += t.dequeued;
        s.dropped_later += t.dropped_later;
        s.marks_reported += t.marks_reported;
        Ok(())
    });
    if let Err(e) = result {
        panic!("{kind}: {e}");
    }
    let s = sum.into_inner();
    println!(
        "{kind}: {} offered, {} rejected on arrival, {} dequeued, {} dropped from the queue, {} marked",
        s.offered, s.rejected, s.dequeued, s.dropped_later, s.marks_reported
    );
    let (rejects, drops_later, marks) = match kind {
        "droptail" | "maxnet" => (true, false, false),
        "rio" => (true, false, true),
        "red" | "ared" | "pie" => (true, false, true),
        "codel" | "cobalt" => (true, true, true),
        "step" => (true, false, true),
        "fq_codel" => (false, true, true),
        "sfq_codel" | "markmax" => (true, true, true),
        "dualpi2" => (true, true, true),
        // a kind without expectations here: the properties alone
        _ => (false, false, false),
    };
    assert!(
        s.rejected > 0 || !rejects,
        "{kind}: no arrival was rejected"
    );
    assert!(
        s.dropped_later > 0 || !drops_later,
        "{kind}: nothing dropped from the queue"
    );
    assert!(s.marks_reported > 0 || !marks, "{kind}: nothing marked");
    if !drops_later && QueueSpec::is_fifo(kind) {
        assert_eq!(s.dropped_later, 0, "{kind} dropped queued packets");
    }
    if kind == "fq_codel" {
        assert_eq!(s.rejected, 0, "fq_codel accepts every arrival");
    }
}

#[test]
fn droptail_conserves_and_keeps_order() {
    run_kind("droptail");
}

#[test]
fn red_conserves_and_keeps_order() {
    run_kind("red");
}

#[test]
fn ared_conserves_and_keeps_order() {
    run_kind("ared");
}

#[test]
fn codel_conserves_and_keeps_order() {
    run_kind("codel");
}

#[test]
fn fq_codel_conserves_and_keeps_flow_order() {
    run_kind("fq_codel");
}

#[test]
fn sfq_codel_conserves_and_keeps_flow_order() {
    run_kind("sfq_codel");
}

#[test]
fn pie_conserves_and_keeps_order() {
    run_kind("pie");
}

#[test]
fn markmax_conserves_and_keeps_order() {
    run_kind("markmax");
}

#[test]
fn maxnet_conserves_and_keeps_order() {
    run_kind("maxnet");
}

#[test]
fn rio_conserves_and_keeps_order() {
    run_kind("rio");
}

#[test]
fn dualpi2_conserves_and_keeps_flow_order() {
    run_kind("dualpi2");
}
