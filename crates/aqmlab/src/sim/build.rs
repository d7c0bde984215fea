//! Building a simulation from a validated scenario: the topology (built
//! once, shared with validation), the links, the flows and their start
//! times, the samplers and the workloads, distributed over the logical
//! processes of a partition (one process for a sequential run).

use super::endpoint::{segments, Flow, TcpPair, Transport};
use super::event::{owner, Event};
use super::forward::SimLink;
use super::ids::{LinkId, LocalFlow, LocalLink, LpId};
use super::lane::NO_LANE;
use super::lp::LogicalProcess;
use super::{Shared, Simulation};
use crate::aqm::{DropTail, QueueSpec};
use crate::engine::{stream_id, stream_id_of, RngStream, TieBreak, Time};
use crate::net::link::{Disc, Link, Port, TxState};
use crate::net::packet::{FlowId, NodeId};
use crate::scenario::paths::{Simplex, Topology};
use crate::scenario::Scenario;
use crate::tcp::{Receiver, Sender, TimerKind};
use crate::traffic::Cbr;
use std::collections::VecDeque;

/// Build link direction `sl` of `sc.links[li]` (the topology holds
/// `[[links]]` entry `li` as its directions `2·li` and `2·li + 1`). Deterministic: a cut link is built in both of
/// its processes, and the two copies start identical.
fn build_link(
    sc: &Scenario,
    li: usize,
    sl: &Simplex,
    seed: u64,
    names: &[String],
    is_router: &[bool],
) -> Link {
    let (from, to, l) = (sl.from, sl.to, sl.spec);
    let (rate, loss, cl) = if sl.ab {
        (l.rate.0, l.loss_ab, l.classifier_ab.as_ref())
    } else {
        (
            l.rate_ba.unwrap_or(l.rate).0,
            l.loss_ba,
            l.classifier_ba.as_ref(),
        )
    };
    // `a->b`, built by hand: `format!` took 36 of build_link's 59 ms on a
    // 10⁵-host star
    let (a, b) = (&names[from.ix()], &names[to.ix()]);
    let mut name = String::with_capacity(a.len() + 2 + b.len());
    name.push_str(a);
    name.push_str("->");
    name.push_str(b);
    // a link that changes or follows a trace: its model, the rate its
    // queue discipline is built with (the first rate of its schedule, a
    // trace's mean) and the highest loss it has (so that its packets take
    // the lossy path)
    let varying = sc.link_schedule(li, sl.ab).map(|pts| {
        let trace = l.traces[usize::from(!sl.ab)].clone();
        let once = l.trace_once;
        Box::new(crate::net::link_model::Varying::new(pts, trace, once))
    });
    let (rate, loss) = match &varying {
        None => (rate, loss),
        Some(v) => (v.rate_at(0), v.max_loss()),
    };
    let mut qrng = RngStream::new(seed, stream_id_of(&["queue:", &name]));
    // DropTail is held in the port (it draws nothing from the stream)
    let disc = match sl.queue() {
        None => Disc::DropTail(DropTail::new(&Default::default())),
        Some(QueueSpec::DropTail(c)) => Disc::DropTail(DropTail::new(c)),
        Some(spec) => Disc::Boxed(spec.build(rate, l.delay.0, &mut qrng)),
    };
    let mut port = Port::new(disc, qrng);
    port.set_classifier(cl.map(crate::net::classifier::Classifier::new));
    if varying.as_ref().is_some_and(|v| v.traced()) {
        port.set_traced();
    }
    Link {
        loss_rng: RngStream::new(seed, stream_id_of(&["loss:", &name])),
        name,
        from,
        to,
        rate_bps: if varying.is_some() { 0 } else { rate },
        varying,
        delay: l.delay.0,
        loss,
        port,
        tx_state: TxState::Idle,
        stale: 0,
        stale_at: Vec::new(),
        tx_size: 0,
        tx: None,
        pipe: VecDeque::new(),
        monitored: l.monitor.unwrap_or(is_router[from.ix()]),
        busy_ns: 0,
        tx_bytes: 0,
        tx_pkts: 0,
        lost: 0,
    }
}

/// A flow of the scenario's `[[flows]]`, before it is placed.
struct FlowPlan {
    group: usize,
    src: NodeId,
    dst: NodeId,
    start: Time,
}

/// Every flow of the scenario with its start time, in id order. Start
/// spreads are drawn from one stream per group name (host patterns give
/// one group several entries), in id order, whatever the partition.
fn plan_flows(sc: &Scenario, ids: &impl Fn(&str) -> NodeId, seed: u64) -> Vec<FlowPlan> {
    let mut rngs: rustc_hash::FxHashMap<&str, RngStream> = Default::default();
    let mut plans = Vec::new();
    for (gi, g) in sc.flows.iter().enumerate() {
        let rng = rngs
            .entry(g.group.as_str())
            .or_insert_with(|| RngStream::new(seed, stream_id(&format!("flows:{}", g.group))));
        for _ in 0..g.count {
            let spread = if g.start_spread.0 > 0 {
                rng.below(g.start_spread.0)
            } else {
                0
            };
            plans.push(FlowPlan {
                group: gi,
                src: ids(&g.src),
                dst: ids(&g.dst),
                start: g.start.0 + spread,
            });
        }
    }
    plans
}

/// The record of flow `fid` as one process holds it.
fn build_flow(
    sc: &Scenario,
    fid: FlowId,
    fp: &FlowPlan,
    p: &std::sync::Arc<crate::tcp::TcpParams>,
) -> Flow {
    let g = &sc.flows[fp.group];
    let (s, d) = (fp.src, fp.dst);
    let t = match &g.cbr {
        Some(c) => Transport::Cbr(Cbr::new(c, fid, s, d, g.size.map(|x| x.0)).with_dscp(g.dscp)),
        None => Transport::Tcp(TcpPair {
            snd: Sender::new(
                p.clone(),
                g.cc.build_for(p.profile),
                fid,
                s,
                d,
                g.size.map(|x| x.0),
            ),
            rcv: Receiver::new(p, fid, d, s)
                .with_echo(g.cc.ecn_echo())
                .with_ext_echo(g.cc.ext_echo()),
        }),
    };
    let total = g.size.map(|x| segments(x.0, p.mss));
    let cc = if g.cbr.is_some() { "cbr" } else { g.cc.name() };
    Flow::new(fid, g.group.clone(), cc, t, fp.start, total)
}

/// The one or two processes of an element between `a` and `b`.
fn places(node_lp: &[LpId], a: NodeId, b: NodeId) -> impl Iterator<Item = LpId> {
    let (x, y) = (node_lp[a.ix()], node_lp[b.ix()]);
    std::iter::once(x).chain((y != x).then_some(y))
}

impl Simulation {
    /// Build a simulation of a validated scenario with the given seed, run
    /// sequentially (one logical process).
    pub fn new(sc: &Scenario, seed: u64) -> Simulation {
        Self::build(sc, seed, |t| (vec![LpId(0); t.names.len()], 1))
    }

    /// Build a simulation to run on up to `threads` threads: partitioned
    /// automatically ([`super::partition`]), or sequential with a note
    /// ([`Simulation::parallel_note`]) when partitioning does not pay.
    /// The results are the same whatever `threads` is.
    pub fn with_threads(sc: &Scenario, seed: u64, threads: usize) -> Simulation {
        let mut note = None;
        let mut plan = None;
        let mut sim = Self::build(sc, seed, |t| {
            let one = (vec![LpId(0); t.names.len()], 1);
            if threads <= 1 {
                return one;
            }
            if !sc.output.pcap.is_empty() {
                note = Some("packet capture (output.pcap) runs sequentially".to_string());
                return one;
            }
            match super::partition::plan(sc, t, threads) {
                Ok(p) => {
                    let r = (p.node_lp.clone(), p.parts);
                    plan = Some(p);
                    r
                }
                Err(e) => {
                    note = Some(e);
                    one
                }
            }
        });
        sim.threads = threads.max(1);
        sim.note = note;
        sim.plan = plan;
        sim
    }

    /// Build with node `n` in logical process `part(n)` (for tests of
    /// arbitrary partitions). Fails when a cut link has no delay, or when
    /// the hosts of the workloads are not all in one process.
    pub fn with_partition(
        sc: &Scenario,
        seed: u64,
        part: impl Fn(&str) -> u16,
    ) -> Result<Simulation, String> {
        let mut plan = None;
        let sim = Self::build(sc, seed, |t| {
            let node_lp: Vec<LpId> = t.names.iter().map(|n| LpId(part(n))).collect();
            let parts = node_lp.iter().map(|l| l.ix() + 1).max().unwrap_or(1);
            let (la, cut_links) = super::partition::lookahead(t, &node_lp);
            plan = Some(super::partition::Plan {
                node_lp: node_lp.clone(),
                parts,
                // no cut link: nothing to wait for
                lookahead: la.unwrap_or(Time::MAX),
                weights: vec![0.0; parts],
                cut_links,
            });
            (node_lp, parts)
        });
        let mut sim = sim;
        let wl_lps: std::collections::BTreeSet<u16> = (sc.workloads.iter())
            .flat_map(|w| w.hosts())
            .map(|(_, h)| part(h))
            .collect();
        if wl_lps.len() > 1 {
            return Err("the workloads' hosts must share one process".into());
        }
        match plan {
            Some(p) if p.cut_links > 0 && p.lookahead == 0 => {
                Err("a cut link has no delay: no lookahead".into())
            }
            p => {
                sim.threads = p.as_ref().map_or(1, |p| p.parts);
                sim.plan = p.filter(|p| p.cut_links > 0 || p.parts > 1);
                Ok(sim)
            }
        }
    }

    /// Build with the partition `choose` returns for the topology: the
    /// process of every node and the number of processes.
    fn build(
        sc: &Scenario,
        seed: u64,
        choose: impl FnOnce(&Topology) -> (Vec<LpId>, usize),
    ) -> Simulation {
        let clock = crate::metrics::PhaseClock::start();
        let topo = Topology::build(sc, seed);
        let warnings = crate::scenario::warnings::warnings(sc, &topo);
        let node_names: Vec<String> = topo.names.iter().map(|n| n.to_string()).collect();
        let (node_lp, n_lps) = choose(&topo);
        let id = |n: &str| *topo.ids.get(n).expect("validated node");
        let plans = plan_flows(sc, &id, seed);
        let (n_links, n_flows) = (topo.links.len(), plans.len());
        let mut lps: Vec<LogicalProcess> = (0..n_lps)
            .map(|i| LogicalProcess::new(LpId(i as u16), n_links, n_flows))
            .collect();
        // Each process's link records in one buffer of the right size: they
        // are cache-line aligned, and an aligned buffer grown by doubling
        // is copied at every step (0.1 CPU-s of set-up for 10⁵ hosts).
        let mut held = vec![0usize; n_lps];
        for sl in &topo.links {
            for lp in places(&node_lp, sl.from, sl.to) {
                held[lp.ix()] += 1;
            }
        }
        for (lp, n) in lps.iter_mut().zip(held) {
            lp.links.reserve_exact(n);
        }
        for (gi, sl) in topo.links.iter().enumerate() {
            let (tx_lp, rx_lp) = (node_lp[sl.from.ix()], node_lp[sl.to.ix()]);
            for lp in places(&node_lp, sl.from, sl.to) {
                let lp = &mut lps[lp.ix()];
                lp.link_ix[gi] = lp.links.len() as u32;
                lp.links.push(SimLink {
                    link: build_link(sc, gi / 2, sl, seed, &node_names, &topo.is_router),
                    id: LinkId(gi as u32),
                    tx_lp,
                    rx_lp,
                    tx_seq: 0,
                    rx_seq: 0,
                    lane: NO_LANE,
                });
            }
        }
        let down: Vec<bool> = (0..sc.links.len())
            .map(|i| sc.link_may_go_down(i))
            .collect();
        for lp in &mut lps {
            lp.links_identity = (lp.link_ix.iter().enumerate()).all(|(i, &x)| x as usize == i);
            let ends: Vec<_> = (lp.links.iter())
                .map(|sl| (sl.tx_lp, sl.rx_lp, sl.link.delay))
                .collect();
            let (lanes, n) = super::lane::assign(&ends, lp.id);
            for (sl, lane) in lp.links.iter_mut().zip(lanes) {
                // a link whose delay may change, or that may go down (its
                // packets are then taken out), keeps its own pipe
                sl.lane = if sl.link.varying.is_some() || down[sl.id.ix() / 2] {
                    NO_LANE
                } else {
                    lane
                };
            }
            lp.lanes = super::lane::Lanes::new(n);
        }
        // groups with the same `tcp` keys share one resolved record: a
        // pattern (`src = "h*"`) expands into a group per host, and 10⁵
        // records would each be a cold line behind every sender event
        let mut params: Vec<std::sync::Arc<crate::tcp::TcpParams>> =
            Vec::with_capacity(sc.flows.len());
        for gi in 0..sc.flows.len() {
            let p = match gi.checked_sub(1) {
                Some(prev)
                    if sc.flows[prev].tcp == sc.flows[gi].tcp
                        && sc.flows[prev].dscp == sc.flows[gi].dscp =>
                {
                    params[prev].clone()
                }
                _ => std::sync::Arc::new(crate::tcp::TcpParams {
                    cc_seed: seed,
                    ..sc.tcp_params(gi)
                }),
            };
            params.push(p);
        }
        // each process's flow records in one buffer, on huge pages where
        // the kernel allows (see `engine::huge_pages`)
        let mut held = vec![0usize; n_lps];
        for fp in &plans {
            for lp in places(&node_lp, fp.src, fp.dst) {
                held[lp.ix()] += 1;
            }
        }
        for (lp, &n) in lps.iter_mut().zip(&held) {
            lp.flows.reserve_exact(n);
            crate::engine::huge_pages(&lp.flows);
        }
        let tput_bin = sc.output.throughput_bin.map_or(0, |d| d.0);
        let bins = sc.duration.0.checked_div(tput_bin);
        for (fid, fp) in plans.iter().enumerate() {
            let fid = FlowId(fid as u32);
            for lp in places(&node_lp, fp.src, fp.dst) {
                let lp = &mut lps[lp.ix()];
                let lf = LocalFlow(lp.flows.len() as u32);
                let mut f = build_flow(sc, fid, fp, &params[fp.group]);
                if lp.id == node_lp[fp.dst.ix()] {
                    f.tput = bins.map(|n| vec![0; n as usize + 1]);
                }
                if lp.id == node_lp[fp.src.ix()] {
                    // the sender's first hop, as its first send would
                    // look it up
                    f.snd_link = topo.routes.next_link(fp.src, fp.dst, fid);
                    let tie = f.tie(TimerKind::Start);
                    let ev = Event::Timer(lf, TimerKind::Start);
                    lp.events.schedule_timer(fp.start, tie, ev);
                }
                lp.flow_ix.set(fid, lf);
                lp.flows.push(f);
            }
        }
        for lp in lps.iter_mut() {
            lp.flow_ix.seal();
        }
        let mut fid = 0usize;
        for g in &sc.flows {
            for _ in 0..g.count {
                if g.trace_cwnd && g.cbr.is_none() {
                    let lp = &mut lps[node_lp[plans[fid].src.ix()].ix()];
                    let lf = LocalFlow(lp.flow_ix.get(FlowId(fid as u32)));
                    lp.cwnd.push((lf, Vec::new()));
                }
                fid += 1;
            }
        }
        for lp in lps.iter_mut() {
            if !lp.cwnd.is_empty() {
                let tie = TieBreak {
                    owner: owner::CWND,
                    seq: 0,
                };
                lp.events.schedule(0, tie, Event::CwndSample);
            }
            let id = lp.id;
            lp.series = (lp.links.iter().enumerate())
                .filter(|(_, sl)| sl.link.monitored && sl.tx_lp == id)
                .map(|(i, _)| (LocalLink(i as u32), Vec::new()))
                .collect();
            if !lp.series.is_empty() {
                let tie = TieBreak {
                    owner: owner::SAMPLE,
                    seq: 0,
                };
                lp.events.schedule(0, tie, Event::Sample);
            }
        }
        let workload_lp = Self::place_workloads(sc, seed, &node_lp, &topo.ids, &mut lps);
        let graph = super::actions::graph(sc, &topo, seed);
        let mut groups: Vec<Vec<FlowId>> = vec![Vec::new(); sc.flows.len()];
        for (fid, fp) in plans.iter().enumerate() {
            groups[fp.group].push(FlowId(fid as u32));
        }
        let actions = super::actions::plan(sc, &groups);
        let shared = Shared {
            routes: topo.routes,
            // only workloads look nodes up by name (10⁵ names otherwise)
            node_ids: if sc.workloads.is_empty() {
                Default::default()
            } else {
                topo.ids.iter().map(|(n, i)| (n.to_string(), *i)).collect()
            },
            node_names,
            end: sc.duration.0,
            sample_interval: sc.output.sample_interval.0,
            cwnd_interval: sc
                .output
                .cwnd_interval
                .unwrap_or(sc.output.sample_interval)
                .0,
            tput_bin,
        };
        let mut sim = Simulation {
            name: sc.name.clone(),
            seed,
            now: 0,
            shared,
            lps,
            node_lp,
            n_links,
            workload_lp,
            threads: 1,
            note: None,
            plan: None,
            windows: 0,
            stats: Vec::new(),
            warmup: sc.output.warmup.map(|d| d.0).filter(|&w| w > 0),
            warm: None,
            marks: 0,
            log_cap: None,
            table_format: Default::default(),
            actions,
            next_action: 0,
            graph,
            setup: Default::default(),
            warnings,
        };
        sim.attach_logs(sc);
        sim.setup = clock.stop();
        sim
    }

    /// The workloads run in the process of their hosts (the partition keeps
    /// every workload host in one process).
    fn place_workloads(
        sc: &Scenario,
        seed: u64,
        node_lp: &[LpId],
        ids: &rustc_hash::FxHashMap<&str, NodeId>,
        lps: &mut [LogicalProcess],
    ) -> LpId {
        let at = (sc.workloads.iter())
            .flat_map(|w| w.hosts())
            .filter_map(|(_, h)| ids.get(h))
            .map(|&n| node_lp[n.ix()])
            .next()
            .unwrap_or(LpId(0));
        let lp = &mut lps[at.ix()];
        lp.workloads = sc
            .workloads
            .iter()
            .map(|w| w.build(&sc.tcp, seed))
            .collect();
        for (wi, w) in lp.workloads.iter().enumerate() {
            if let Some(t) = w.first_arrival() {
                let tie = TieBreak {
                    owner: owner::workload(wi as u32),
                    seq: 0,
                };
                lp.events.schedule(t, tie, Event::Workload(wi as u32));
            }
        }
        lp.wl_flows = vec![Vec::new(); lp.workloads.len()];
        lp.wl_seq = vec![0; lp.workloads.len()];
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The groups a pattern expands into share one resolved TCP record; a
    /// group with other `tcp` keys gets its own.
    #[test]
    fn groups_with_the_same_tcp_keys_share_their_parameters() {
        let text = "name = \"s\"\nduration = \"1s\"\n[topology]\nkind = \"star\"\nhosts = 3\naccess_rate = \"1Gbps\"\naccess_delay = \"1ms\"\nbottleneck_rate = \"100Mbps\"\nbottleneck_delay = \"10ms\"\n[[flows]]\ngroup = \"g\"\nsrc = \"h*\"\ndst = \"sink\"\n[[flows]]\ngroup = \"k\"\nsrc = \"h0\"\ndst = \"sink\"\ntcp = { mss = 500 }\n";
        let sc = Scenario::from_toml(text, "s.toml").unwrap();
        let sim = Simulation::new(&sc, 1);
        let params: Vec<_> = (sim.lps[0].flows.iter())
            .map(|f| f.transport.sender().unwrap().params.clone())
            .collect();
        assert_eq!(params.len(), 4);
        assert!(std::sync::Arc::ptr_eq(&params[0], &params[1]));
        assert!(std::sync::Arc::ptr_eq(&params[0], &params[2]));
        assert!(!std::sync::Arc::ptr_eq(&params[0], &params[3]));
        assert_eq!((params[0].mss, params[3].mss), (1000, 500));
    }
}
