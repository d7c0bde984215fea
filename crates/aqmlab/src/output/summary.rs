//! `summary.json`: a summary whose size does not grow with the number of
//! flows and links. It holds the run's metadata, totals, per-group
//! aggregates, the distribution of each per-flow figure (quantiles, mean,
//! Jain's index), and the per-queue records of the monitored queues (at
//! most [`MAX_QUEUES`]); every per-flow, per-link and per-queue record lives
//! in the tables (`flows.csv`, `links.csv`, `classes.csv`, `cc_stats.csv`).
//! The moved keys and their new places are listed in
//! `docs/src/reference/outputs-columnar.md`.

use crate::metrics::{
    jain, Conservation, FlowResult, ParallelReport, QueueResult, RunResult, WorkloadResult,
};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Most monitored queues listed in `summary.json` (in link order); the
/// others are counted in `totals.queues_unlisted` and are in `links.csv`.
/// A queue record with classes is under 1 kB, so the list stays far below
/// 1 MB.
pub const MAX_QUEUES: usize = 256;

/// Most flow groups listed in `groups` and `fairness` (the first in name
/// order); the others are counted in `totals.groups_unlisted`, and their
/// flows are in `flows.csv` (its `group` column). A group's record is
/// about 200 B, so the lists stay far below 1 MB.
pub const MAX_GROUPS: usize = 1000;

/// Distribution of one per-flow figure over the flows that have it.
/// Quantiles interpolate linearly between order statistics (Hyndman and
/// Fan, "Sample Quantiles in Statistical Packages", 1996, definition 7;
/// numpy's and pandas' default).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Distribution {
    /// Flows with a value (flows without one, e.g. no RTT sample, are left out).
    pub count: usize,
    pub mean: f64,
    pub min: f64,
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
    /// Jain's fairness index over the values.
    pub jain: f64,
}

/// Quantile `q` in [0, 1] of sorted, non-empty `xs` (definition 7).
fn quantile(xs: &[f64], q: f64) -> f64 {
    let h = (xs.len() - 1) as f64 * q;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    xs[lo] + (h - lo as f64) * (xs[hi] - xs[lo])
}

impl Distribution {
    /// `None` for no values. Non-finite values are left out.
    pub fn of(mut xs: Vec<f64>) -> Option<Distribution> {
        xs.retain(|x| x.is_finite());
        if xs.is_empty() {
            return None;
        }
        xs.sort_by(f64::total_cmp);
        Some(Distribution {
            count: xs.len(),
            mean: xs.iter().sum::<f64>() / xs.len() as f64,
            min: xs[0],
            p10: quantile(&xs, 0.10),
            p50: quantile(&xs, 0.50),
            p90: quantile(&xs, 0.90),
            p99: quantile(&xs, 0.99),
            max: xs[xs.len() - 1],
            jain: jain(&xs),
        })
    }
}

/// Counts and sums over the whole run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Totals {
    pub flows: usize,
    pub links: usize,
    /// Monitored queues (those with a time series in `queues.csv`).
    pub queues_monitored: usize,
    /// Monitored queues beyond [`MAX_QUEUES`], not listed in `queues`.
    pub queues_unlisted: usize,
    /// Flow groups.
    pub groups: usize,
    /// Flow groups beyond [`MAX_GROUPS`], not listed in `groups` and
    /// `fairness`.
    pub groups_unlisted: usize,
    pub bytes_acked: u64,
    pub segments_sent: u64,
    pub segments_delivered: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub ecn_reductions: u64,
    /// Flows that completed (finite transfers).
    pub flows_completed: usize,
    /// Sum of the flows' goodputs, bit/s.
    pub goodput_bps: f64,
    pub queue_arrivals: u64,
    pub queue_dropped: u64,
    pub queue_marked: u64,
    pub link_tx_packets: u64,
    pub link_lost: u64,
}

/// Aggregates over one flow group.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Group {
    pub flows: usize,
    /// Sum of the flows' goodputs, bit/s (summed in flow order).
    pub goodput_bps: f64,
    pub mean_goodput_bps: f64,
    /// Jain's index over the group's goodputs (as `fairness`).
    pub jain: f64,
    pub bytes_acked: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub drops: u64,
    pub flows_completed: usize,
}

/// What `summary.json` holds.
#[derive(Serialize)]
pub struct Summary<'a> {
    pub scenario: &'a str,
    pub seed: u64,
    pub sim_seconds: f64,
    pub wall_seconds: f64,
    /// Wall and CPU time of set-up, loop, collection and writing
    /// (measurements, like `wall_seconds`).
    pub timings: crate::metrics::Timings,
    pub events: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup_s: Option<f64>,
    pub totals: Totals,
    /// The first [`MAX_GROUPS`] flow groups by name.
    pub groups: BTreeMap<&'a str, Group>,
    /// Jain's index over the goodputs of each flow group (those of
    /// `groups`).
    pub fairness: BTreeMap<&'a str, f64>,
    /// Distribution of each per-flow figure of `flows.csv`.
    pub flow_figures: BTreeMap<&'static str, Distribution>,
    /// Per-queue records of the monitored queues, in link order.
    pub queues: Vec<&'a QueueResult>,
    pub workloads: &'a [WorkloadResult],
    pub conservation: &'a Conservation,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel: Option<&'a ParallelReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_log: Option<LogSummary>,
    /// What the scenario asks for that the run did not do as its names say,
    /// one record (`cause`, `key`, `message`) per cause and key; empty
    /// when there is none.
    pub warnings: &'a [crate::scenario::warnings::Warning],
}

/// What the event log holds (`[output] log`).
#[derive(Clone, Debug, Serialize)]
pub struct LogSummary {
    /// The log's file.
    pub file: &'static str,
    /// Events written.
    pub events: usize,
    /// Events not written because a port reached `log_max_events`; the
    /// log is then complete only up to that port's last written event.
    pub lost: u64,
    pub max_events_per_port: u64,
}

/// Reads one figure of a flow (`None`: the flow has none).
type Figure = fn(&FlowResult) -> Option<f64>;

/// The per-flow figures summarised in `flow_figures`.
const FLOW_FIGURES: [(&str, Figure); 9] = [
    ("goodput_bps", |f| Some(f.goodput_bps)),
    ("bytes_acked", |f| Some(f.bytes_acked as f64)),
    ("retransmits", |f| Some(f.retransmits as f64)),
    ("drops", |f| Some(f.drops as f64)),
    ("final_cwnd", |f| Some(f.final_cwnd)),
    ("srtt_s", |f| f.srtt_s),
    ("mean_owd_s", |f| f.mean_owd_s),
    ("max_owd_s", |f| f.max_owd_s),
    ("completion_s", |f| f.completion_s),
];

impl<'a> Summary<'a> {
    pub fn of(r: &'a RunResult) -> Summary<'a> {
        let monitored: BTreeSet<&str> = r.series.iter().map(|s| s.link.as_str()).collect();
        let mon: Vec<&QueueResult> = r
            .queues
            .iter()
            .filter(|q| monitored.contains(q.link.as_str()))
            .collect();
        let mut t = Totals {
            flows: r.flows.len(),
            links: r.links.len(),
            queues_monitored: mon.len(),
            queues_unlisted: mon.len().saturating_sub(MAX_QUEUES),
            ..Totals::default()
        };
        let mut groups: BTreeMap<&str, Group> = BTreeMap::new();
        let mut goodputs: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for f in &r.flows {
            t.bytes_acked += f.bytes_acked;
            t.segments_sent += f.segments_sent;
            t.segments_delivered += f.segments_delivered;
            t.retransmits += f.retransmits;
            t.timeouts += f.timeouts;
            t.ecn_reductions += f.ecn_reductions;
            t.goodput_bps += f.goodput_bps;
            t.flows_completed += f.completion_s.is_some() as usize;
            let g = groups.entry(&f.group).or_default();
            g.flows += 1;
            g.goodput_bps += f.goodput_bps;
            g.bytes_acked += f.bytes_acked;
            g.retransmits += f.retransmits;
            g.timeouts += f.timeouts;
            g.drops += f.drops;
            g.flows_completed += f.completion_s.is_some() as usize;
            goodputs.entry(&f.group).or_default().push(f.goodput_bps);
        }
        t.groups = groups.len();
        t.groups_unlisted = groups.len().saturating_sub(MAX_GROUPS);
        if let Some(first_unlisted) = groups.keys().nth(MAX_GROUPS).copied() {
            groups.split_off(first_unlisted);
        }
        for (name, g) in groups.iter_mut() {
            g.mean_goodput_bps = g.goodput_bps / g.flows as f64;
            g.jain = jain(&goodputs[name]);
        }
        let fairness = (r.fairness.iter())
            .filter(|(g, _)| groups.contains_key(g.as_str()))
            .map(|(g, &j)| (g.as_str(), j))
            .collect();
        for q in &r.queues {
            t.queue_arrivals += q.arrivals;
            t.queue_dropped += q.dropped;
            t.queue_marked += q.marked;
        }
        for l in &r.links {
            t.link_tx_packets += l.tx_packets;
            t.link_lost += l.lost;
        }
        let flow_figures = FLOW_FIGURES
            .iter()
            .filter_map(|(k, get)| {
                Distribution::of(r.flows.iter().filter_map(get).collect()).map(|d| (*k, d))
            })
            .collect();
        Summary {
            scenario: &r.scenario,
            seed: r.seed,
            sim_seconds: r.sim_seconds,
            wall_seconds: r.wall_seconds,
            timings: r.timings,
            events: r.events,
            warmup_s: r.warmup_s,
            totals: t,
            groups,
            fairness,
            flow_figures,
            queues: mon.into_iter().take(MAX_QUEUES).collect(),
            workloads: &r.workloads,
            conservation: &r.conservation,
            parallel: r.parallel.as_ref(),
            event_log: r.event_log.as_ref().map(|l| LogSummary {
                file: super::event_log::file_name(l),
                events: l.records.len(),
                lost: l.lost,
                max_events_per_port: l.cap,
            }),
            warnings: &r.warnings,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_follow_definition_7() {
        let d = Distribution::of(vec![4.0, 1.0, 3.0, 2.0, f64::NAN]).unwrap();
        assert_eq!(d.count, 4);
        assert_eq!((d.min, d.max, d.mean), (1.0, 4.0, 2.5));
        assert_eq!(d.p50, 2.5);
        assert!((d.p10 - 1.3).abs() < 1e-12, "{}", d.p10);
        assert!((d.p90 - 3.7).abs() < 1e-12, "{}", d.p90);
        assert!((d.jain - 100.0 / 120.0).abs() < 1e-12);
        assert!(Distribution::of(vec![]).is_none());
    }
}
