//! sfqCoDel — stochastic flow queueing with CoDel per bin, the ns-2 variant
//! used by the high-speed TCP paper (`codel-highspeed-tcp.txt`).
//!
//! Source: K. Nichols (Pollere), `queue/sfqcodel.cc` for ns-2.35 (2012),
//! read in the hbatmit/ns2.35 history; its own header lists how it differs
//! from Linux FQ-CoDel. It is **not** an FQ-CoDel configuration: the
//! behaviours differ in every point below, so it is its own kind.
//!
//! | | FQ-CoDel (RFC 8290, `fq_codel`) | sfqCoDel (this file) |
//! |---|---|---|
//! | bins | 1024 | 256 (`pollere-256`) or up to 1024 (`pollere-1024`) |
//! | scheduler | byte DRR, quantum 1514, new-flows list strictly first | one circular schedule, **packet-by-packet** round robin (`quantum = 0`); a newly active bin is inserted after the other new bins, before the old ones |
//! | empty bin | leaves (old) or moves to old-flows (new) | stays on the schedule for one more cycle |
//! | overflow | head drop from the fattest flow (bytes, batch) | `pollere-256`: tail drop of the arrival; `pollere-1024`: drop from the tail of the fullest bin (packets) |
//! | CoDel re-entry | `count − lastcount` | `count − 2` if `count > 2` and `now − drop_next < 8·interval`, else 1 |
//! | first-above time | `now + interval` | `now + interval/√count` if `count > 1` and `now − drop_next < 8·interval` |
//! | count increment | before each drop | after a drop that keeps the bin in the dropping state |
//! | backlog exemption | total backlog ≤ MTU | total backlog ≤ largest packet seen (from 256 B) |
//!
//! Variants (`variant`): `pollere-256` (default; the first Pollere release,
//! 256 bins, packet round robin, tail drop) and `pollere-1024` (the later
//! Pollere/CableLabs release: 1024 bins, optional byte `quantum`, drop from
//! the fullest bin). `bins` and `quantum` may be set explicitly; with
//! `quantum > 0` a bin keeps the turn until it has sent `quantum` bytes (DRR).
//! The hash is a 64-bit mix of (flow, src, dst) with a per-run perturbation
//! (the original used Jenkins' `jhash_3words` on addresses and ports).
//!
//! Parameters: `limit` = 1000 packets, `target` = 5 ms, `interval` = 100 ms,
//! `ecn` = false (the original has no ECN), `variant`, `bins`, `quantum`.

use super::codel::{
    codel_dequeue, d_interval, d_target, validate_codel, CodelParams, CodelSource, CodelVariant,
    CodelVars,
};
use super::flow_queues::bucket_of;
use super::{DropCause, Limit, QdCtx, QueueDisc};
use crate::net::packet::Packet;
use crate::units::Dur;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
pub enum SfqVariant {
    #[default]
    #[serde(rename = "pollere-256")]
    Pollere256,
    #[serde(rename = "pollere-1024")]
    Pollere1024,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SfqCodelConfig {
    #[serde(default = "d_limit")]
    pub limit: Limit,
    #[serde(default = "d_target")]
    pub target: Dur,
    #[serde(default = "d_interval")]
    pub interval: Dur,
    #[serde(default)]
    pub ecn: bool,
    #[serde(default)]
    pub variant: SfqVariant,
    /// Number of bins (default by variant: 256 or 1024).
    #[serde(default)]
    pub bins: Option<u32>,
    /// DRR quantum in bytes; 0 = packet-by-packet round robin (default).
    #[serde(default)]
    pub quantum: u32,
}

fn d_limit() -> Limit {
    Limit::Packets(1000)
}

impl SfqCodelConfig {
    pub fn bins(&self) -> u32 {
        self.bins.unwrap_or(match self.variant {
            SfqVariant::Pollere256 => 256,
            SfqVariant::Pollere1024 => 1024,
        })
    }
    pub fn validate(&self) -> Result<(), (String, String)> {
        self.limit
            .validate()
            .map_err(|m| ("limit".to_string(), m))?;
        let max = match self.variant {
            SfqVariant::Pollere256 => 256,
            SfqVariant::Pollere1024 => 1024,
        };
        if self.bins() == 0 || self.bins() > max {
            return Err((
                "bins".into(),
                format!("must be in 1..={max} for this variant, got {}", self.bins()),
            ));
        }
        validate_codel(self.target, self.interval, 1)
    }
}

struct Bin {
    q: VecDeque<Packet>,
    on_sched: bool,
    newflag: bool,
    deficit: i64,
    cv: CodelVars,
}

/// A bin seen by CoDel: pops update the queue's totals and its largest
/// packet (ns-2 `dodeque`).
struct BinView<'a> {
    q: &'a mut VecDeque<Packet>,
    pkts: &'a mut usize,
    bytes: &'a mut u64,
    maxpacket: &'a mut u32,
}

impl CodelSource for BinView<'_> {
    fn pop(&mut self) -> Option<Packet> {
        let p = self.q.pop_front()?;
        *self.pkts -= 1;
        *self.bytes -= p.size as u64;
        Some(p)
    }
    fn backlog(&self) -> u64 {
        *self.bytes
    }
    fn max_packet(&mut self, size: u32) -> u32 {
        *self.maxpacket = (*self.maxpacket).max(size);
        *self.maxpacket
    }
}

pub struct SfqCodel {
    limit: Limit,
    p: CodelParams,
    variant: SfqVariant,
    quantum: i64,
    bins: Vec<Bin>,
    /// The circular schedule; the front is `binsched_`.
    sched: VecDeque<u32>,
    perturb: u64,
    pkts: usize,
    bytes: u64,
    maxpacket: u32,
}

impl SfqCodel {
    pub fn new(c: &SfqCodelConfig, perturb: u64) -> Self {
        SfqCodel {
            limit: c.limit,
            p: CodelParams {
                target: c.target.0,
                interval: c.interval.0,
                mtu: 0, // the exemption uses the largest packet seen
                ecn: c.ecn,
                variant: CodelVariant::SfqPollere,
                ce: None,
                use_l4s: false,
            },
            variant: c.variant,
            quantum: c.quantum as i64,
            bins: (0..c.bins())
                .map(|_| Bin {
                    q: VecDeque::new(),
                    on_sched: false,
                    newflag: false,
                    deficit: 0,
                    cv: CodelVars::new(),
                })
                .collect(),
            sched: VecDeque::new(),
            perturb,
            pkts: 0,
            bytes: 0,
            maxpacket: 256,
        }
    }

    /// Insert a newly active bin after the other new bins, before the old
    /// ones (ns-2 `enque`, including its end-of-ring rule).
    fn schedule(&mut self, i: u32) {
        let b = &mut self.bins[i as usize];
        b.newflag = true;
        b.on_sched = true;
        b.deficit = self.quantum;
        if self.sched.is_empty() {
            self.sched.push_back(i);
            return;
        }
        let n = self.sched.len();
        let mut k = 0;
        while self.bins[self.sched[k] as usize].newflag {
            if k + 1 == n {
                break;
            }
            k += 1;
        }
        if k + 1 == n {
            self.sched.push_back(i); // after b, at the end of the ring
        } else {
            self.sched.insert(k, i); // in front of b
        }
    }

    /// Remove empty bins from the front of the schedule (ns-2 `readybin` /
    /// `removebin`); returns the ready bin.
    fn ready_bin(&mut self) -> Option<u32> {
        while let Some(&f) = self.sched.front() {
            if self.bins[f as usize].q.is_empty() {
                self.bins[f as usize].on_sched = false;
                self.sched.pop_front();
            } else {
                return Some(f);
            }
        }
        None
    }
}

impl QueueDisc for SfqCodel {
    fn kind(&self) -> &'static str {
        "sfq_codel"
    }

    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdCtx) -> Result<(), DropCause> {
        let full = self.limit.exceeded_by(self.pkts, self.bytes, pkt.size);
        if full && self.variant == SfqVariant::Pollere256 {
            return Err(DropCause::Overflow);
        }
        let i = bucket_of(&pkt, self.perturb, self.bins.len() as u32);
        self.pkts += 1;
        self.bytes += pkt.size as u64;
        self.bins[i as usize].q.push_back(pkt);
        if !self.bins[i as usize].on_sched {
            self.schedule(i);
        }
        // pollere-1024: drop from the tail of the fullest bin (packets); once
        // for a packet limit, as often as needed to get within a byte limit.
        while full
            && match self.limit {
                Limit::Packets(n) => self.pkts > n as usize,
                Limit::Bytes(b) => self.bytes > b,
            }
        {
            let (f, _) = self
                .bins
                .iter()
                .enumerate()
                .max_by_key(|(k, b)| (b.q.len(), std::cmp::Reverse(*k)))
                .expect("bins");
            let p = self.bins[f].q.pop_back().expect("fullest bin has packets");
            self.pkts -= 1;
            self.bytes -= p.size as u64;
            ctx.drop_packet(p, DropCause::Overflow);
        }
        Ok(())
    }

    fn dequeue(&mut self, ctx: &mut QdCtx) -> Option<Packet> {
        loop {
            let i = self.ready_bin()?;
            let b = &mut self.bins[i as usize];
            b.newflag = false;
            let mut cv = std::mem::take(&mut b.cv);
            let got = codel_dequeue(
                &mut cv,
                &self.p,
                &mut BinView {
                    q: &mut b.q,
                    pkts: &mut self.pkts,
                    bytes: &mut self.bytes,
                    maxpacket: &mut self.maxpacket,
                },
                ctx,
            );
            self.bins[i as usize].cv = cv;
            if let Some(p) = got {
                // advance the schedule (packet round robin, or DRR by quantum)
                if self.sched.front() == Some(&i) {
                    let b = &mut self.bins[i as usize];
                    b.deficit -= p.size as i64;
                    if self.quantum == 0 || b.deficit <= 0 {
                        b.deficit += self.quantum;
                        self.sched.rotate_left(1);
                    }
                }
                return Some(p);
            }
            // the bin emptied: the next ready_bin takes it off the schedule
        }
    }

    fn len_pkts(&self) -> usize {
        self.pkts
    }
    fn len_bytes(&self) -> u64 {
        self.bytes
    }
}

impl super::registry::Registered for SfqCodelConfig {
    const KIND: &'static str = "sfq_codel";
    const ABOUT: &'static str = "stochastic flow queueing with CoDel per bin (ns-2 Pollere sfqcodel.cc)";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!("limit", "packets, or bytes with a unit", "> 0", "0", "buffer size over all bins"),
        crate::registry::param!("target", "time", "> 0, ≤ interval", "\"0ms\"", "CoDel target per bin"),
        crate::registry::param!("interval", "time", "> 0", "\"0ms\"", "CoDel interval per bin"),
        crate::registry::param!("ecn", "", "true/false", "", "mark ECN-capable packets instead of dropping"),
        crate::registry::param!("variant", "", "\"pollere256\" or \"pollere1024\"", "\"x\"", "which Pollere script's bins"),
        crate::registry::param!("bins", "bins", "1 to the variant's bin count", "0", "number of bins (default: the variant's)"),
        crate::registry::param!("quantum", "bytes", "≥ 0; 0 = one MTU", "", "DRR quantum per round"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        SfqCodelConfig::validate(self)
    }
}

impl super::registry::QueueKind for SfqCodelConfig {
    fn build(&self, port: &mut super::PortCtx) -> Box<dyn QueueDisc> {
        use rand::RngCore;
        Box::new(SfqCodel::new(self, port.rng.next_u64()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::FlowId;
    use crate::engine::RngStream;

    fn cfg() -> SfqCodelConfig {
        toml::from_str("").unwrap()
    }

    fn ctx<'a>(rng: &'a mut RngStream, d: &'a mut Vec<(Packet, DropCause)>) -> QdCtx<'a> {
        QdCtx {
            now: 0,
            rng,
            dropped: d,
            marked: 0,
        }
    }

    #[test]
    fn packet_round_robin_alternates_flows_whatever_their_sizes() {
        let mut q = SfqCodel::new(&cfg(), 11);
        let (mut r, mut d) = (RngStream::new(0, 0), vec![]);
        let mut c = ctx(&mut r, &mut d);
        for i in 0..10 {
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
            q.enqueue(
                Packet {
                    uid: 100 + i,
                    flow: FlowId(2),
                    size: 100,
                    ..Default::default()
                },
                &mut c,
            )
            .unwrap();
        }
        let flows: Vec<u32> = (0..20).map(|_| q.dequeue(&mut c).unwrap().flow.0).collect();
        assert_eq!(flows.iter().filter(|&&f| f == 1).count(), 10);
        for w in flows.windows(2) {
            assert_ne!(w[0], w[1], "packet-by-packet round robin: {flows:?}");
        }
    }

    #[test]
    fn pollere_256_tail_drops_the_arrival() {
        let c = SfqCodelConfig {
            limit: Limit::Packets(5),
            ..cfg()
        };
        let mut q = SfqCodel::new(&c, 1);
        let (mut r, mut d) = (RngStream::new(0, 0), vec![]);
        let mut cx = ctx(&mut r, &mut d);
        for i in 0..5 {
            q.enqueue(
                Packet {
                    uid: i,
                    flow: FlowId(1),
                    size: 100,
                    ..Default::default()
                },
                &mut cx,
            )
            .unwrap();
        }
        assert_eq!(
            q.enqueue(
                Packet {
                    uid: 9,
                    flow: FlowId(2),
                    size: 100,
                    ..Default::default()
                },
                &mut cx
            ),
            Err(DropCause::Overflow)
        );
    }

    #[test]
    fn pollere_1024_drops_from_the_fullest_bin() {
        let c = SfqCodelConfig {
            limit: Limit::Packets(5),
            variant: SfqVariant::Pollere1024,
            ..cfg()
        };
        let mut q = SfqCodel::new(&c, 1);
        let (mut r, mut d) = (RngStream::new(0, 0), vec![]);
        let mut cx = ctx(&mut r, &mut d);
        for i in 0..5 {
            q.enqueue(
                Packet {
                    uid: i,
                    flow: FlowId(1),
                    size: 100,
                    ..Default::default()
                },
                &mut cx,
            )
            .unwrap();
        }
        q.enqueue(
            Packet {
                uid: 9,
                flow: FlowId(2),
                size: 100,
                ..Default::default()
            },
            &mut cx,
        )
        .unwrap();
        assert_eq!(q.len_pkts(), 5);
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].0.flow, d[0].0.uid), (FlowId(1), 4), "tail of the fullest bin");
    }

    #[test]
    fn new_bin_goes_after_new_bins_before_old_ones() {
        let mut q = SfqCodel::new(&cfg(), 5);
        let (mut r, mut d) = (RngStream::new(0, 0), vec![]);
        let mut c = ctx(&mut r, &mut d);
        for i in 0..4 {
            q.enqueue(
                Packet {
                    uid: i,
                    flow: FlowId(1),
                    size: 100,
                    ..Default::default()
                },
                &mut c,
            )
            .unwrap();
            q.enqueue(
                Packet {
                    uid: 10 + i,
                    flow: FlowId(2),
                    size: 100,
                    ..Default::default()
                },
                &mut c,
            )
            .unwrap();
        }
        q.dequeue(&mut c); // flow 1's bin served: now old
        q.dequeue(&mut c); // flow 2's bin served: now old
        q.enqueue(
            Packet {
                uid: 99,
                flow: FlowId(3),
                size: 100,
                ..Default::default()
            },
            &mut c,
        )
        .unwrap();
        assert_eq!(q.dequeue(&mut c).unwrap().flow, FlowId(3));
    }
}
