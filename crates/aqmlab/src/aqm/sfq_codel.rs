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

use super::codel::{control_law, d_interval, d_target, validate_codel};
use super::fq_codel::bucket_of;
use super::{DropCause, Limit, QdCtx, QueueDisc};
use crate::engine::Time;
use crate::net::packet::{Ecn, Packet};
use crate::scenario::units::Dur;
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

#[derive(Default)]
struct Bin {
    q: VecDeque<Packet>,
    on_sched: bool,
    newflag: bool,
    deficit: i64,
    // CoDel state
    count: u32,
    dropping: bool,
    first_above_time: Time,
    drop_next: Time,
}

pub struct SfqCodel {
    limit: Limit,
    target: Time,
    interval: Time,
    ecn: bool,
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
            target: c.target.0,
            interval: c.interval.0,
            ecn: c.ecn,
            variant: c.variant,
            quantum: c.quantum as i64,
            bins: (0..c.bins()).map(|_| Bin::default()).collect(),
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

    /// ns-2 `dodeque`: pop the bin's head and decide whether it may be dropped.
    fn dodeque(&mut self, i: u32, now: Time) -> (Option<Packet>, bool) {
        let b = &mut self.bins[i as usize];
        let Some(p) = b.q.pop_front() else {
            return (None, false);
        };
        self.pkts -= 1;
        self.bytes -= p.size as u64;
        self.maxpacket = self.maxpacket.max(p.size);
        let sojourn = now - p.enq_time;
        let mut ok = false;
        if sojourn < self.target || self.bytes <= self.maxpacket as u64 {
            b.first_above_time = 0;
        } else if b.first_above_time == 0 {
            b.first_above_time =
                if (now as i128 - b.drop_next as i128) < 8 * self.interval as i128 && b.count > 1 {
                    control_law(now, self.interval, b.count)
                } else {
                    now + self.interval
                };
        } else if now >= b.first_above_time {
            ok = true;
        }
        (Some(p), ok)
    }

    /// Drop or, with ECN, mark; returns the packet if it was marked.
    fn drop_or_mark(&mut self, mut p: Packet, ctx: &mut QdCtx) -> Option<Packet> {
        if self.ecn && p.ecn.capable() {
            p.ecn = Ecn::Ce;
            ctx.marked += 1;
            Some(p)
        } else {
            ctx.drop_packet(p, DropCause::Aqm);
            None
        }
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
        let now = ctx.now;
        loop {
            let i = self.ready_bin()?;
            self.bins[i as usize].newflag = false;
            let (mut p, mut ok) = self.dodeque(i, now);
            let interval = self.interval;
            if self.bins[i as usize].dropping {
                if !ok {
                    self.bins[i as usize].dropping = false;
                }
                while now >= self.bins[i as usize].drop_next && self.bins[i as usize].dropping {
                    let cur = p.take().expect("packet in dropping state");
                    if let Some(marked) = self.drop_or_mark(cur, ctx) {
                        let b = &mut self.bins[i as usize];
                        b.count += 1;
                        b.drop_next = control_law(b.drop_next, interval, b.count);
                        p = Some(marked);
                        break;
                    }
                    (p, ok) = self.dodeque(i, now);
                    if p.is_none() {
                        self.ready_bin();
                    }
                    let b = &mut self.bins[i as usize];
                    if !ok {
                        b.dropping = false;
                    } else {
                        b.count += 1;
                        b.drop_next = control_law(b.drop_next, interval, b.count);
                    }
                }
            } else if ok {
                let cur = p.take().expect("packet");
                match self.drop_or_mark(cur, ctx) {
                    Some(m) => p = Some(m),
                    None => {
                        (p, _) = self.dodeque(i, now);
                        if p.is_none() {
                            self.ready_bin();
                        }
                    }
                }
                let b = &mut self.bins[i as usize];
                b.dropping = true;
                b.count =
                    if b.count > 2 && (now as i128 - b.drop_next as i128) < 8 * interval as i128 {
                        b.count - 2
                    } else {
                        1
                    };
                b.drop_next = control_law(now, interval, b.count);
            }
            if let Some(p) = p {
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
        crate::param!("limit", "packets, or bytes with a unit", "> 0", "0", "buffer size over all bins"),
        crate::param!("target", "time", "> 0, ≤ interval", "\"0ms\"", "CoDel target per bin"),
        crate::param!("interval", "time", "> 0", "\"0ms\"", "CoDel interval per bin"),
        crate::param!("ecn", "", "true/false", "", "mark ECN-capable packets instead of dropping"),
        crate::param!("variant", "", "\"pollere256\" or \"pollere1024\"", "\"x\"", "which Pollere script's bins"),
        crate::param!("bins", "bins", "1 to the variant's bin count", "0", "number of bins (default: the variant's)"),
        crate::param!("quantum", "bytes", "≥ 0; 0 = one MTU", "", "DRR quantum per round"),
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
                    flow: 1,
                    size: 1500,
                    ..Default::default()
                },
                &mut c,
            )
            .unwrap();
            q.enqueue(
                Packet {
                    uid: 100 + i,
                    flow: 2,
                    size: 100,
                    ..Default::default()
                },
                &mut c,
            )
            .unwrap();
        }
        let flows: Vec<u32> = (0..20).map(|_| q.dequeue(&mut c).unwrap().flow).collect();
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
                    flow: 1,
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
                    flow: 2,
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
                    flow: 1,
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
                flow: 2,
                size: 100,
                ..Default::default()
            },
            &mut cx,
        )
        .unwrap();
        assert_eq!(q.len_pkts(), 5);
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].0.flow, d[0].0.uid), (1, 4), "tail of the fullest bin");
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
                    flow: 1,
                    size: 100,
                    ..Default::default()
                },
                &mut c,
            )
            .unwrap();
            q.enqueue(
                Packet {
                    uid: 10 + i,
                    flow: 2,
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
                flow: 3,
                size: 100,
                ..Default::default()
            },
            &mut c,
        )
        .unwrap();
        assert_eq!(q.dequeue(&mut c).unwrap().flow, 3);
    }
}
