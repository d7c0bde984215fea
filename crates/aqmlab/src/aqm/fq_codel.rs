//! FQ-CoDel — flow queueing with CoDel in each queue.
//!
//! Source: RFC 8290 (T. Høiland-Jørgensen, P. McKenney, D. Täht, J. Gettys,
//! E. Dumazet, 2018) §4 (enqueue, dequeue, new/old flow lists, DRR with a byte
//! quantum) and Linux `net/sched/sch_fq_codel.c` (`fq_codel_enqueue`,
//! `fq_codel_dequeue`, `fq_codel_drop`).
//!
//! - Packets are hashed on (flow, src, dst) with a per-run perturbation drawn
//!   from the queue's random stream into `flows` buckets.
//! - A bucket that becomes active joins the tail of the new-flows list with
//!   `deficit = quantum`. Dequeue serves the head of new-flows if any, else of
//!   old-flows; a bucket whose deficit is exhausted gets `quantum` more and
//!   moves to the tail of old-flows; a new bucket that empties moves to
//!   old-flows (if old-flows is non-empty), an old bucket that empties leaves
//!   the lists. Each bucket runs its own CoDel state machine
//!   ([`super::codel::codel_dequeue`]); the "backlog ≤ MTU" exemption uses
//!   the whole queue's backlog, as in Linux.
//! - When the shared `limit` is exceeded, packets are dropped from the *head*
//!   of the bucket with the largest byte backlog (the fattest flow) until
//!   half of its backlog or `drop_batch` packets are gone (Linux
//!   `fq_codel_drop`). Cost O(flows) per overflow event, O(1) otherwise.
//!
//! Parameters: `limit` = 10240 packets, `flows` = 1024, `quantum` = 1514 bytes
//! (Linux: device MTU + link header), `target` = 5 ms, `interval` = 100 ms,
//! `mtu` = 1500, `ecn` = true (Linux and ns-3 default), `drop_batch` = 64,
//! `variant` = `"linux"`/`"ns2"` (CoDel re-entry rule, see `codel.rs`).

use super::codel::{
    codel_dequeue, d_interval, d_mtu, d_target, validate_codel, CodelParams, CodelSource,
    CodelVariant, CodelVars,
};
use super::{DropCause, Limit, QdCtx, QueueDisc};
use crate::net::packet::Packet;
use crate::scenario::units::Dur;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FqCodelConfig {
    #[serde(default = "d_limit")]
    pub limit: Limit,
    #[serde(default = "d_flows")]
    pub flows: u32,
    #[serde(default = "d_quantum")]
    pub quantum: u32,
    #[serde(default = "d_target")]
    pub target: Dur,
    #[serde(default = "d_interval")]
    pub interval: Dur,
    #[serde(default = "d_mtu")]
    pub mtu: u32,
    #[serde(default = "d_true")]
    pub ecn: bool,
    #[serde(default = "d_batch")]
    pub drop_batch: u32,
    #[serde(default)]
    pub variant: CodelVariant,
}

fn d_limit() -> Limit {
    Limit::Packets(10240)
}
fn d_flows() -> u32 {
    1024
}
fn d_quantum() -> u32 {
    1514
}
fn d_true() -> bool {
    true
}
fn d_batch() -> u32 {
    64
}

impl FqCodelConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        self.limit
            .validate()
            .map_err(|m| ("limit".to_string(), m))?;
        if self.flows == 0 || self.flows > 65536 {
            return Err((
                "flows".into(),
                format!("must be in 1..=65536, got {}", self.flows),
            ));
        }
        if self.quantum == 0 {
            return Err((
                "quantum".into(),
                "must be a positive number of bytes".into(),
            ));
        }
        if self.drop_batch == 0 {
            return Err(("drop_batch".into(), "must be at least 1".into()));
        }
        validate_codel(self.target, self.interval, self.mtu)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

struct Bucket {
    q: VecDeque<Packet>,
    bytes: u64,
    deficit: i64,
    list: List,
    cv: CodelVars,
}

/// A bucket seen by CoDel: pops from the bucket, backlog of the whole queue.
struct View<'a> {
    b: &'a mut Bucket,
    total_bytes: &'a mut u64,
    total_pkts: &'a mut usize,
}

impl CodelSource for View<'_> {
    fn pop(&mut self) -> Option<Packet> {
        let p = self.b.q.pop_front()?;
        self.b.bytes -= p.size as u64;
        *self.total_bytes -= p.size as u64;
        *self.total_pkts -= 1;
        Some(p)
    }
    fn backlog(&self) -> u64 {
        *self.total_bytes
    }
}

pub struct FqCodel {
    limit: Limit,
    quantum: i64,
    drop_batch: u32,
    p: CodelParams,
    buckets: Vec<Bucket>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    perturb: u64,
    bytes: u64,
    pkts: usize,
}

/// Bucket index of a packet: a 64-bit mix of (flow, src, dst, perturbation).
pub fn bucket_of(p: &Packet, perturb: u64, n: u32) -> u32 {
    let mut z = (p.flow as u64) ^ ((p.src as u64) << 32) ^ ((p.dst as u64) << 48) ^ perturb;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    ((z as u128 * n as u128) >> 64) as u32
}

impl FqCodel {
    pub fn new(c: &FqCodelConfig, perturb: u64) -> Self {
        let p = CodelParams {
            target: c.target.0,
            interval: c.interval.0,
            mtu: c.mtu,
            ecn: c.ecn,
            variant: c.variant,
        };
        FqCodel {
            limit: c.limit,
            quantum: c.quantum as i64,
            drop_batch: c.drop_batch,
            p,
            buckets: (0..c.flows)
                .map(|_| Bucket {
                    q: VecDeque::new(),
                    bytes: 0,
                    deficit: 0,
                    list: List::None,
                    cv: CodelVars::new(),
                })
                .collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            perturb,
            bytes: 0,
            pkts: 0,
        }
    }

    /// Drop from the head of the fattest bucket; returns its index.
    fn drop_from_fattest(&mut self, ctx: &mut QdCtx) -> u32 {
        let (idx, _) = self
            .buckets
            .iter()
            .enumerate()
            .max_by_key(|(i, b)| (b.bytes, std::cmp::Reverse(*i)))
            .expect("at least one bucket");
        let b = &mut self.buckets[idx];
        let threshold = b.bytes / 2;
        let mut dropped_bytes = 0;
        let mut n = 0;
        while let Some(p) = b.q.pop_front() {
            b.bytes -= p.size as u64;
            self.bytes -= p.size as u64;
            self.pkts -= 1;
            dropped_bytes += p.size as u64;
            n += 1;
            ctx.drop_packet(p, DropCause::Overflow);
            if dropped_bytes >= threshold || n >= self.drop_batch {
                break;
            }
        }
        idx as u32
    }
}

impl QueueDisc for FqCodel {
    fn kind(&self) -> &'static str {
        "fq_codel"
    }

    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdCtx) -> Result<(), DropCause> {
        let idx = bucket_of(&pkt, self.perturb, self.buckets.len() as u32);
        let b = &mut self.buckets[idx as usize];
        b.bytes += pkt.size as u64;
        b.q.push_back(pkt);
        self.bytes += pkt.size as u64;
        self.pkts += 1;
        if b.list == List::None {
            b.list = List::New;
            b.deficit = self.quantum;
            self.new_flows.push_back(idx);
        }
        // One batch always suffices for a packet limit (as in Linux); a byte
        // limit needs more when a batch frees fewer bytes than arrived.
        while match self.limit {
            Limit::Packets(n) => self.pkts > n as usize,
            Limit::Bytes(n) => self.bytes > n,
        } {
            self.drop_from_fattest(ctx);
        }
        Ok(())
    }

    fn dequeue(&mut self, ctx: &mut QdCtx) -> Option<Packet> {
        loop {
            let from_new = !self.new_flows.is_empty();
            let idx = if from_new {
                *self.new_flows.front()?
            } else {
                *self.old_flows.front()?
            };
            let b = &mut self.buckets[idx as usize];
            if b.deficit <= 0 {
                b.deficit += self.quantum;
                b.list = List::Old;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(idx);
                continue;
            }
            let mut view = View {
                b,
                total_bytes: &mut self.bytes,
                total_pkts: &mut self.pkts,
            };
            let mut cv = std::mem::take(&mut view.b.cv);
            let got = codel_dequeue(&mut cv, &self.p, &mut view, ctx);
            let b = &mut self.buckets[idx as usize];
            b.cv = cv;
            match got {
                Some(p) => {
                    b.deficit -= p.size as i64;
                    return Some(p);
                }
                None => {
                    if from_new {
                        self.new_flows.pop_front();
                        if !self.old_flows.is_empty() {
                            b.list = List::Old;
                            self.old_flows.push_back(idx);
                        } else {
                            b.list = List::None;
                        }
                    } else {
                        self.old_flows.pop_front();
                        b.list = List::None;
                    }
                }
            }
        }
    }

    fn len_pkts(&self) -> usize {
        self.pkts
    }
    fn len_bytes(&self) -> u64 {
        self.bytes
    }
}

impl super::registry::Registered for FqCodelConfig {
    const KIND: &'static str = "fq_codel";
    const ABOUT: &'static str = "flow-queue CoDel (RFC 8290; Linux sch_fq_codel)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::param!("limit", "packets, or bytes with a unit", "> 0", "0", "buffer size over all flow queues"),
        crate::param!("flows", "queues", "1 to 65536", "0", "number of flow queues (hash buckets)"),
        crate::param!("quantum", "bytes", "≥ 1", "0", "DRR quantum per round"),
        crate::param!("target", "time", "> 0, ≤ interval", "\"0ms\"", "CoDel target per queue"),
        crate::param!("interval", "time", "> 0", "\"0ms\"", "CoDel interval per queue"),
        crate::param!("mtu", "bytes", "≥ 1", "0", "CoDel's one-MTU floor"),
        crate::param!("ecn", "", "true/false", "", "mark ECN-capable packets instead of dropping"),
        crate::param!("drop_batch", "packets", "≥ 1", "0", "packets dropped from the fattest queue on overflow"),
        crate::param!("variant", "", "\"linux\" or \"ns2\"", "\"bsd\"", "CoDel control-law details"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        FqCodelConfig::validate(self)
    }
}

impl super::registry::QueueKind for FqCodelConfig {
    fn build(&self, port: &mut super::PortCtx) -> Box<dyn QueueDisc> {
        use rand::RngCore;
        Box::new(FqCodel::new(self, port.rng.next_u64()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStream;

    fn cfg() -> FqCodelConfig {
        toml::from_str("").unwrap()
    }

    #[test]
    fn defaults_match_linux() {
        let c = cfg();
        assert_eq!(c.limit, Limit::Packets(10240));
        assert_eq!(
            (c.flows, c.quantum, c.ecn, c.drop_batch),
            (1024, 1514, true, 64)
        );
        assert_eq!((c.target.0, c.interval.0), (5_000_000, 100_000_000));
    }

    #[test]
    fn drr_shares_bytes_between_backlogged_flows() {
        let mut q = FqCodel::new(&cfg(), 7);
        let (mut rng, mut dropped) = (RngStream::new(0, 0), Vec::new());
        let mut c = QdCtx {
            now: 0,
            rng: &mut rng,
            dropped: &mut dropped,
            marked: 0,
        };
        // flow 1 sends 1500-byte packets, flow 2 sends 300-byte packets
        for i in 0..200 {
            q.enqueue(
                Packet {
                    uid: i,
                    flow: 1,
                    size: 1500,
                    ..Default::default()
                },
                &mut c,
            )
            .unwrap();
            for j in 0..5 {
                q.enqueue(
                    Packet {
                        uid: 1000 + 5 * i + j,
                        flow: 2,
                        size: 300,
                        ..Default::default()
                    },
                    &mut c,
                )
                .unwrap();
            }
        }
        let mut bytes = [0u64; 3];
        for _ in 0..300 {
            let p = q.dequeue(&mut c).unwrap();
            bytes[p.flow as usize] += p.size as u64;
        }
        let ratio = bytes[1] as f64 / bytes[2] as f64;
        assert!((ratio - 1.0).abs() < 0.1, "byte shares {bytes:?}");
    }

    #[test]
    fn overflow_drops_from_the_fattest_flow() {
        let c = FqCodelConfig {
            limit: Limit::Packets(100),
            ..cfg()
        };
        let mut q = FqCodel::new(&c, 1);
        let (mut rng, mut dropped) = (RngStream::new(0, 0), Vec::new());
        let mut cx = QdCtx {
            now: 0,
            rng: &mut rng,
            dropped: &mut dropped,
            marked: 0,
        };
        for i in 0..10 {
            q.enqueue(
                Packet {
                    uid: i,
                    flow: 9,
                    size: 100,
                    ..Default::default()
                },
                &mut cx,
            )
            .unwrap();
        }
        for i in 0..200 {
            q.enqueue(
                Packet {
                    uid: 100 + i,
                    flow: 3,
                    size: 1000,
                    ..Default::default()
                },
                &mut cx,
            )
            .unwrap();
        }
        assert!(q.len_pkts() <= 100);
        assert!(
            dropped.iter().all(|(p, _)| p.flow == 3),
            "only the fat flow loses packets"
        );
        assert!(!dropped.is_empty());
    }

    #[test]
    fn new_flow_is_served_before_old_backlog() {
        let mut q = FqCodel::new(&cfg(), 3);
        let (mut rng, mut dropped) = (RngStream::new(0, 0), Vec::new());
        let mut c = QdCtx {
            now: 0,
            rng: &mut rng,
            dropped: &mut dropped,
            marked: 0,
        };
        for i in 0..50 {
            q.enqueue(
                Packet {
                    uid: i,
                    flow: 1,
                    size: 1500,
                    ..Default::default()
                },
                &mut c,
            )
            .unwrap();
        }
        for _ in 0..3 {
            q.dequeue(&mut c); // flow 1 exhausts its first quantum and becomes old
        }
        q.enqueue(
            Packet {
                uid: 999,
                flow: 2,
                size: 100,
                ..Default::default()
            },
            &mut c,
        )
        .unwrap();
        assert_eq!(q.dequeue(&mut c).unwrap().uid, 999);
    }
}
