//! Result collection: the figures of every logical process merged in global
//! link and flow order into one [`RunResult`], the same whatever the
//! partition.

use super::endpoint::Flow;
use super::ids::{LinkId, LpId};
use super::Simulation;
use crate::aqm::QueueClassCounts;
use crate::engine::{to_secs, Time};
use crate::metrics::{
    jain, ClassResult, Conservation, CwndTrace, FlowResult, LinkResult, QueueResult, QueueSeries,
    RequestResult, RunResult, ThroughputSeries, WorkloadResult,
};
use crate::net::link::ClassCounters;
use crate::net::packet::NodeId;
use std::collections::BTreeMap;

/// A flow's two halves: the record that ran its sender and the one that ran
/// its receiver (the same record unless the flow crosses processes).
pub(super) struct Halves<'a> {
    pub snd: &'a Flow,
    pub rcv: &'a Flow,
}

impl Simulation {
    /// Every flow's halves, by global id.
    pub(super) fn halves(&self) -> Vec<Halves<'_>> {
        let n = self
            .lps
            .iter()
            .map(|lp| lp.next_flow.ix())
            .max()
            .unwrap_or(0);
        let mut snd: Vec<Option<&Flow>> = vec![None; n];
        let mut rcv: Vec<Option<&Flow>> = vec![None; n];
        for lp in &self.lps {
            for f in &lp.flows {
                let (s, d) = f.transport.ep_ref().nodes();
                if self.node_lp[s.ix()] == lp.id {
                    snd[f.id.ix()] = Some(f);
                }
                if self.node_lp[d.ix()] == lp.id {
                    rcv[f.id.ix()] = Some(f);
                }
            }
        }
        snd.into_iter()
            .zip(rcv)
            .map(|(s, r)| Halves {
                snd: s.expect("every flow has a sender"),
                rcv: r.expect("every flow has a receiver"),
            })
            .collect()
    }

    fn flow_result(&self, h: &Halves, drops: u64, end: Time) -> FlowResult {
        let (s, r) = (h.snd, h.rcv);
        let name = |n: NodeId| self.shared.node_names[n.ix()].clone();
        let (src, dst) = s.transport.ep_ref().nodes();
        let mut res = FlowResult {
            id: s.id.0,
            group: s.group.clone(),
            src: name(src),
            dst: name(dst),
            cc: s.cc.to_string(),
            start_s: to_secs(s.start),
            bytes_acked: 0,
            segments_delivered: 0,
            goodput_bps: 0.0,
            segments_sent: 0,
            retransmits: 0,
            timeouts: 0,
            fast_retransmits: 0,
            ecn_reductions: 0,
            drops,
            completion_s: None,
            final_cwnd: 0.0,
            srtt_s: None,
            mean_owd_s: (r.owd_n > 0).then(|| r.owd_sum as f64 / r.owd_n as f64 / 1e9),
            max_owd_s: (r.owd_n > 0).then(|| to_secs(r.owd_max.max(r.owd_max_before))),
        };
        r.transport.ep_ref().report_receiver(&mut res);
        let stop = s.transport.ep_ref().report_sender(&mut res, end);
        if let Some(snd) = s.transport.sender() {
            res.completion_s = snd.completion_time.map(|t| to_secs(t - s.start));
        }
        let dur = stop.saturating_sub(s.start);
        if s.started && dur > 0 {
            res.goodput_bps = res.bytes_acked as f64 * 8.0 / to_secs(dur);
        }
        res
    }

    /// The link results and queue results, in global link order.
    fn collect_links(&self, end: Time) -> (Vec<QueueResult>, Vec<LinkResult>) {
        let mut queues = Vec::with_capacity(self.n_links);
        let mut links = Vec::with_capacity(self.n_links);
        for gi in 0..self.n_links {
            let (near, far) = self.link_places(LinkId(gi as u32));
            let lost = {
                let lp = &self.lps[far.ix()];
                lp.links[lp.link_ix[gi] as usize].link.lost
            };
            let lp = &self.lps[near.ix()];
            let l = &lp.links[lp.link_ix[gi] as usize].link;
            queues.push(queue_result(l, end));
            links.push(LinkResult {
                link: l.name.clone(),
                from: self.shared.node_names[l.from.ix()].clone(),
                to: self.shared.node_names[l.to.ix()].clone(),
                rate_bps: match &l.varying {
                    None => l.rate_bps,
                    Some(v) => v.rate_at(0),
                },
                delay_s: to_secs(l.delay),
                tx_packets: l.tx_pkts,
                tx_bytes: l.tx_bytes,
                utilization: match &l.varying {
                    None => utilisation(l.busy_ns, end),
                    Some(v) => share(v.started_bytes, v.offered_bytes(end)),
                },
                lost,
                busy_ns: l.busy_ns,
                offered: (l.varying.as_ref()).map(|v| (v.started_bytes, v.offered_bytes(end))),
            });
        }
        (queues, links)
    }

    /// (near, far) processes of a link.
    pub(super) fn link_places(&self, id: LinkId) -> (LpId, LpId) {
        let lp = self
            .lps
            .iter()
            .find(|lp| lp.link_ix[id.ix()] != super::ids::ABSENT)
            .expect("every link is held");
        let sl = &lp.links[lp.link_ix[id.ix()] as usize];
        (sl.tx_lp, sl.rx_lp)
    }

    fn collect_series(&self) -> Vec<QueueSeries> {
        let mut all: Vec<(LinkId, QueueSeries)> = Vec::new();
        for lp in &self.lps {
            for (k, (li, v)) in lp.series.iter().enumerate() {
                let sl = &lp.links[li.ix()];
                all.push((
                    sl.id,
                    QueueSeries {
                        link: sl.link.name.clone(),
                        samples: v.clone(),
                        classes: lp.class_series.get(k).cloned().unwrap_or_default(),
                    },
                ));
            }
        }
        all.sort_by_key(|(id, _)| *id);
        all.into_iter().map(|(_, s)| s).collect()
    }

    fn collect_cwnd(&self) -> Vec<CwndTrace> {
        let mut all: Vec<CwndTrace> = Vec::new();
        for lp in &self.lps {
            for (lf, v) in &lp.cwnd {
                let f = &lp.flows[lf.ix()];
                all.push(CwndTrace {
                    flow: f.id.0,
                    group: f.group.clone(),
                    cc: f.cc.to_string(),
                    samples: v.clone(),
                });
            }
        }
        all.sort_by_key(|t| t.flow);
        all
    }

    /// The requests, and the workloads' summaries over the requests opened
    /// at or after `from`.
    pub(super) fn collect_workloads(
        &self,
        hv: &[Halves],
        from: Time,
    ) -> (Vec<RequestResult>, Vec<WorkloadResult>) {
        let lp = &self.lps[self.workload_lp.ix()];
        let mut requests = Vec::new();
        let mut workloads = Vec::new();
        for (wi, w) in lp.workloads.iter().enumerate() {
            let mut rts = Vec::new();
            let (mut completed, mut connections) = (0, 0);
            for (item, fl) in lp.wl_flows[wi].iter().enumerate() {
                let (Some(&first), Some(&last)) = (fl.first(), fl.last()) else {
                    if from == 0 {
                        connections += 1;
                    }
                    continue;
                };
                let (ff, lf) = (&hv[first.ix()], &hv[last.ix()]);
                let counted = ff.snd.start >= from;
                connections += counted as u32;
                let sent = ff.snd.transport.sender().and_then(|s| s.first_data_at);
                let bytes = lf.snd.transport.sender().map_or(0, |s| s.total_bytes());
                let (first_rx, rx_done) = (lf.rcv.first_rx, lf.rcv.rx_done);
                let rt = sent.zip(first_rx).map(|(a, b)| to_secs(b - a));
                if counted && rx_done.is_some() {
                    completed += 1;
                }
                if let Some(x) = rt.filter(|_| counted) {
                    rts.push(x);
                }
                requests.push(RequestResult {
                    workload: w.name().to_string(),
                    id: item as u32,
                    bytes,
                    open_s: to_secs(ff.snd.start),
                    request_s: sent.map(to_secs),
                    response_time_s: rt,
                    completion_s: sent.zip(rx_done).map(|(a, b)| to_secs(b - a)),
                    total_s: rx_done.map(|b| to_secs(b - ff.snd.start)),
                });
            }
            rts.sort_by(|a, b| a.total_cmp(b));
            workloads.push(WorkloadResult {
                name: w.name().to_string(),
                kind: w.kind().into(),
                connections,
                completed,
                mean_response_time_s: (!rts.is_empty())
                    .then(|| rts.iter().sum::<f64>() / rts.len() as f64),
                p50_response_time_s: quantile(&rts, 0.5),
                p90_response_time_s: quantile(&rts, 0.9),
                max_response_time_s: rts.last().copied(),
            });
        }
        (requests, workloads)
    }

    /// Events run: every process's own events, and each sampler instant
    /// once (every process holding a sampler runs it at the same instants).
    pub fn events(&self) -> u64 {
        let own: u64 = (self.lps.iter())
            .map(|lp| lp.popped() - lp.sampler_events - lp.cwnd_events)
            .sum();
        let s = self.lps.iter().map(|lp| lp.sampler_events).max();
        let c = self.lps.iter().map(|lp| lp.cwnd_events).max();
        own + s.unwrap_or(0) + c.unwrap_or(0)
    }

    /// The packet-conservation ledger at the current time.
    pub fn conservation(&self) -> Conservation {
        let mut c = Conservation {
            sent: 0,
            delivered: 0,
            dropped: 0,
            in_flight: 0,
            dropped_no_route: 0,
        };
        let (mut cut_out, mut cut_in) = (0, 0);
        for lp in &self.lps {
            c.sent += lp.ledger.sent;
            c.delivered += lp.ledger.delivered;
            c.dropped += lp.ledger.dropped;
            c.dropped_no_route += lp.no_route;
            c.in_flight += lp.in_flight();
            cut_out += lp.ledger.cut_out;
            cut_in += lp.ledger.cut_in;
        }
        // messages handed to another process but not yet accepted there
        c.in_flight += cut_out - cut_in;
        c
    }

    /// The results at `end` (now) over the whole run. Each port's packets
    /// that bypassed its empty queue are first folded into its statistics
    /// ([`crate::net::port_stats::PortStats::fold_bypassed`]), so that collection
    /// borrows the delay histograms instead of copying them.
    pub(super) fn collect(&mut self, end: Time, wall: f64) -> RunResult {
        for lp in self.lps.iter_mut() {
            for sl in lp.links.iter_mut() {
                sl.link.port.stats.fold_bypassed();
            }
        }
        let (queues, links) = self.collect_links(end);
        let hv = self.halves();
        let mut drops = vec![0u64; hv.len()];
        for lp in &self.lps {
            for (d, n) in drops.iter_mut().zip(&lp.flow_drops) {
                *d += n;
            }
        }
        let flows: Vec<FlowResult> = (hv.iter().zip(&drops))
            .map(|(h, &d)| self.flow_result(h, d, end))
            .collect();
        let (requests, workloads) = self.collect_workloads(&hv, 0);
        let bin_s = to_secs(self.shared.tput_bin);
        let throughput = (hv.iter())
            .filter_map(|h| {
                h.rcv.tput.as_ref().map(|v| ThroughputSeries {
                    flow: h.rcv.id.0,
                    group: h.rcv.group.clone(),
                    bin_s,
                    bytes: v.clone(),
                })
            })
            .collect();
        let cc_stats = crate::metrics::cc_stats(
            hv.iter()
                .map(|h| h.snd.transport.sender().map(|s| s.cc.as_ref())),
        );
        drop(hv);
        RunResult {
            cc_stats,
            throughput,
            requests,
            workloads,
            cwnd: self.collect_cwnd(),
            scenario: self.name.clone(),
            seed: self.seed,
            sim_seconds: to_secs(end),
            wall_seconds: wall,
            timings: Default::default(),
            events: self.events(),
            fairness: fairness(&flows),
            flows,
            queues,
            links,
            conservation: self.conservation(),
            series: self.collect_series(),
            parallel: self.parallel_report(),
            warmup_s: None,
            event_log: self.collect_log(),
            table_format: self.table_format,
            warnings: self.warnings.clone(),
        }
    }
}

/// Busy time over an interval, both ns: at most 1 (a transmission's time is
/// booked when it starts, so the last one may reach past the interval's
/// end), exactly 0 when nothing was sent.
/// `used / offered`, at most 1; 0 when nothing was offered or used.
pub(super) fn share(used: u64, offered: u64) -> f64 {
    if used == 0 || offered == 0 {
        0.0
    } else {
        (used as f64 / offered as f64).min(1.0)
    }
}

pub(super) fn utilisation(busy: u64, span: Time) -> f64 {
    if busy == 0 || span == 0 {
        0.0
    } else {
        (busy as f64 / span as f64).min(1.0)
    }
}

/// Jain's index over the goodputs of each flow group.
pub(super) fn fairness(flows: &[FlowResult]) -> BTreeMap<String, f64> {
    let mut groups: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for f in flows {
        groups
            .entry(f.group.clone())
            .or_default()
            .push(f.goodput_bps);
    }
    groups.into_iter().map(|(g, v)| (g, jain(&v))).collect()
}

fn queue_result(l: &crate::net::link::Link, end: Time) -> QueueResult {
    let c = l.port.stats.counters();
    let h = l.port.stats.sojourn();
    let h = &*h;
    let [p50, p99] = if c.dequeued == 0 {
        [0.0; 2]
    } else {
        h.quantiles([0.5, 0.99]).map(to_secs)
    };
    let mut r = QueueResult {
        link: l.name.clone(),
        kind: l.port.disc.kind().to_string(),
        arrivals: c.arrivals,
        enqueued: c.enqueued,
        dequeued: c.dequeued,
        dropped: c.dropped(),
        dropped_early: c.dropped_early,
        dropped_forced: c.dropped_forced,
        dropped_overflow: c.dropped_overflow,
        dropped_aqm: c.dropped_aqm,
        dropped_link_down: c.dropped_link_down,
        marked: c.marked,
        mean_len_pkts: 0.0,
        mean_len_bytes: 0.0,
        mean_delay_s: l.port.stats.mean_sojourn_ns() / 1e9,
        p50_delay_s: p50,
        p99_delay_s: p99,
        max_delay_s: if c.dequeued == 0 {
            0.0
        } else {
            to_secs(h.max())
        },
        classes: class_results(&l.port.stats.by_class(), l.port.disc.classes()),
        stats: crate::metrics::queue_stats(&*l.port.disc, l.port.classifier()),
    };
    r.mean_len_pkts = l.port.mean_len_pkts(end);
    r.mean_len_bytes = l.port.mean_len_bytes(end);
    r
}

/// The `q`-quantile of sorted values (nearest rank).
fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    Some(sorted[i])
}

/// Per-class counts of a port, when a classifier tagged any packet, then
/// the discipline's own queues ([`crate::aqm::QueueDisc::classes`]).
fn class_results(by: &[ClassCounters; 3], own: Vec<QueueClassCounts>) -> Vec<ClassResult> {
    let mut v = Vec::new();
    if by[1].arrivals + by[2].arrivals > 0 {
        v.extend(
            ["default", "in", "out"]
                .iter()
                .zip(by)
                .filter(|(_, c)| c.arrivals > 0)
                .map(|(name, c)| ClassResult {
                    class: name.to_string(),
                    arrivals: c.arrivals,
                    dropped: c.dropped,
                    marked: c.marked,
                    dequeued: None,
                    mean_delay_s: None,
                    sojourn_ns: 0,
                }),
        );
    }
    v.extend(own.into_iter().map(|c| ClassResult {
        class: c.name.to_string(),
        arrivals: c.arrivals,
        dropped: c.dropped,
        marked: c.marked,
        dequeued: Some(c.dequeued),
        mean_delay_s: Some(mean_delay_s(c.sojourn_ns, c.dequeued)),
        sojourn_ns: c.sojourn_ns,
    }));
    v
}

/// Mean queueing delay in seconds of `n` packets whose delays sum to
/// `sum_ns` (0 for none).
pub(crate) fn mean_delay_s(sum_ns: u128, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        sum_ns as f64 / n as f64 / 1e9
    }
}
