//! FQ-CoDel — flow queueing with CoDel in each queue.
//!
//! Source: RFC 8290 (T. Høiland-Jørgensen, P. McKenney, D. Täht, J. Gettys,
//! E. Dumazet, 2018) §4 (enqueue, dequeue, new/old flow lists, DRR with a byte
//! quantum) and Linux `net/sched/sch_fq_codel.c` (`fq_codel_enqueue`,
//! `fq_codel_dequeue`, `fq_codel_drop`).
//!
//! - Packets are hashed on (flow, src, dst) with a per-run perturbation drawn
//!   from the queue's random stream into `flows` buckets.
//! - Flow queueing ([`super::flow_queues`], shared with FQ-PIE): a bucket
//!   that becomes active joins the tail of the new-flows list with
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
//! L4S modes, off by default: `ce_threshold`, `ce_threshold_selector`,
//! `use_l4s` (Linux `sch_fq_codel` `ce_threshold` and
//! `ce_threshold_selector/mask`; ns-3 `FqCoDelQueueDisc` `CeThreshold` and
//! `UseL4s`), run by each bucket's CoDel: see `codel.rs`.
//!
//! Parameters: `limit` = 10240 packets, `flows` = 1024, `quantum` = 1514 bytes
//! (Linux: device MTU + link header), `target` = 5 ms, `interval` = 100 ms,
//! `mtu` = 1500, `ecn` = true (Linux and ns-3 default), `drop_batch` = 64,
//! `variant` = `"linux"`/`"ns2"` (CoDel re-entry rule, see `codel.rs`).

use super::codel::{
    codel_dequeue, d_interval, d_mtu, d_target, validate_codel, CeKeys, CodelParams, CodelSource,
    CodelVariant, CodelVars, CE_THRESHOLD_PARAMS,
};
use super::step::CeSelector;
use super::flow_queues::FlowQueues;
pub use super::flow_queues::bucket_of;
use super::{DropCause, Limit, QdCtx, QueueDisc};
use crate::net::packet::Packet;
use crate::units::Dur;
use serde::{Deserialize, Serialize};

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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ce_threshold: Option<Dur>,
    #[serde(default)]
    pub ce_threshold_selector: CeSelector,
    #[serde(default)]
    pub use_l4s: bool,
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
        validate_codel(self.target, self.interval, self.mtu)?;
        self.ce_keys().validate()
    }
    pub fn ce_keys(&self) -> CeKeys {
        CeKeys {
            ce_threshold: self.ce_threshold,
            ce_threshold_selector: self.ce_threshold_selector,
            use_l4s: self.use_l4s,
        }
    }
}

/// A flow queue seen by CoDel: pops from the queue, backlog of the whole
/// discipline (Linux passes `sch->qstats.backlog`).
struct View<'a> {
    fq: &'a mut FlowQueues<CodelVars>,
    idx: u32,
}

impl CodelSource for View<'_> {
    fn pop(&mut self) -> Option<Packet> {
        self.fq.pop(self.idx)
    }
    fn backlog(&self) -> u64 {
        self.fq.bytes
    }
}

pub struct FqCodel {
    limit: Limit,
    drop_batch: u32,
    p: CodelParams,
    fq: FlowQueues<CodelVars>,
}

impl FqCodel {
    pub fn new(c: &FqCodelConfig, perturb: u64) -> Self {
        let p = CodelParams {
            target: c.target.0,
            interval: c.interval.0,
            mtu: c.mtu,
            ecn: c.ecn,
            variant: c.variant,
            ce: c.ce_keys().step(),
            use_l4s: c.use_l4s,
        };
        FqCodel {
            limit: c.limit,
            drop_batch: c.drop_batch,
            p,
            fq: FlowQueues::new(c.flows, c.quantum, perturb, CodelVars::new),
        }
    }

    /// Drop from the head of the fattest queue until half its backlog or
    /// `drop_batch` packets are gone (`fq_codel_drop`); returns its index.
    fn drop_from_fattest(&mut self, ctx: &mut QdCtx) -> u32 {
        let idx = self.fq.fattest();
        let threshold = self.fq.flows[idx as usize].bytes / 2;
        let mut dropped_bytes = 0;
        let mut n = 0;
        while let Some(p) = self.fq.pop(idx) {
            dropped_bytes += p.size as u64;
            n += 1;
            ctx.drop_packet(p, DropCause::Overflow);
            if dropped_bytes >= threshold || n >= self.drop_batch {
                break;
            }
        }
        idx
    }
}

impl QueueDisc for FqCodel {
    fn kind(&self) -> &'static str {
        "fq_codel"
    }

    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdCtx) -> Result<(), DropCause> {
        let idx = self.fq.index_of(&pkt);
        self.fq.push(idx, pkt);
        // One batch always suffices for a packet limit (as in Linux); a byte
        // limit needs more when a batch frees fewer bytes than arrived.
        while match self.limit {
            Limit::Packets(n) => self.fq.pkts > n as usize,
            Limit::Bytes(n) => self.fq.bytes > n,
        } {
            self.drop_from_fattest(ctx);
        }
        Ok(())
    }

    fn dequeue(&mut self, ctx: &mut QdCtx) -> Option<Packet> {
        loop {
            let (idx, from_new) = self.fq.next_flow()?;
            let mut cv = std::mem::take(&mut self.fq.flows[idx as usize].state);
            let got = codel_dequeue(
                &mut cv,
                &self.p,
                &mut View {
                    fq: &mut self.fq,
                    idx,
                },
                ctx,
            );
            self.fq.flows[idx as usize].state = cv;
            match got {
                Some(p) => {
                    self.fq.charge(idx, p.size);
                    return Some(p);
                }
                None => self.fq.retire(idx, from_new),
            }
        }
    }

    fn len_pkts(&self) -> usize {
        self.fq.pkts
    }
    fn len_bytes(&self) -> u64 {
        self.fq.bytes
    }
}

impl super::registry::Registered for FqCodelConfig {
    const KIND: &'static str = "fq_codel";
    const ABOUT: &'static str = "flow-queue CoDel (RFC 8290; Linux sch_fq_codel)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("limit", "packets, or bytes with a unit", "> 0", "0", "buffer size over all flow queues"),
        crate::registry::param!("flows", "queues", "1 to 65536", "0", "number of flow queues (hash buckets)"),
        crate::registry::param!("quantum", "bytes", "≥ 1", "0", "DRR quantum per round"),
        crate::registry::param!("target", "time", "> 0, ≤ interval", "\"0ms\"", "CoDel target per queue"),
        crate::registry::param!("interval", "time", "> 0", "\"0ms\"", "CoDel interval per queue"),
        crate::registry::param!("mtu", "bytes", "≥ 1", "0", "CoDel's one-MTU floor"),
        crate::registry::param!("ecn", "", "true/false", "", "mark ECN-capable packets instead of dropping"),
        crate::registry::param!("drop_batch", "packets", "≥ 1", "0", "packets dropped from the fattest queue on overflow"),
        crate::registry::param!("variant", "", "\"linux\" or \"ns2\"", "\"bsd\"", "CoDel control-law details"),
        CE_THRESHOLD_PARAMS[0],
        CE_THRESHOLD_PARAMS[1],
        CE_THRESHOLD_PARAMS[2],
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
    use crate::net::packet::FlowId;
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
                    flow: FlowId(1),
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
                        flow: FlowId(2),
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
            bytes[p.flow.ix()] += p.size as u64;
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
                    flow: FlowId(9),
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
                    flow: FlowId(3),
                    size: 1000,
                    ..Default::default()
                },
                &mut cx,
            )
            .unwrap();
        }
        assert!(q.len_pkts() <= 100);
        assert!(
            dropped.iter().all(|(p, _)| p.flow == FlowId(3)),
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
                    flow: FlowId(1),
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
                flow: FlowId(2),
                size: 100,
                ..Default::default()
            },
            &mut c,
        )
        .unwrap();
        assert_eq!(q.dequeue(&mut c).unwrap().uid, 999);
    }
}
