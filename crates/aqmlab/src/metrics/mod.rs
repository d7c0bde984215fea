//! Results of a run: per-flow, per-queue and per-link records, fairness, the
//! queue time series, and the packet-conservation ledger.

pub mod invariants;

use serde::Serialize;
use std::collections::BTreeMap;

/// Jain's fairness index `(Σx)² / (n·Σx²)` (R. Jain, D. Chiu, W. Hawe, DEC
/// TR-301, 1984). 1 when all equal, 1/n when one takes everything. Returns 1
/// for an empty set or all zeros.
pub fn jain(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if n == 0.0 || s2 == 0.0 {
        1.0
    } else {
        s * s / (n * s2)
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct FlowResult {
    pub id: u32,
    pub group: String,
    pub src: String,
    pub dst: String,
    pub cc: String,
    pub start_s: f64,
    /// Payload bytes cumulatively acknowledged at the sender.
    pub bytes_acked: u64,
    /// Distinct data segments delivered in order to the receiver.
    pub segments_delivered: u64,
    /// Goodput, bit/s: `bytes_acked · 8` over the flow's life in the
    /// measured interval (see `docs/src/reference/metrics.md`): from its
    /// start (or the window's start, for a flow that started before it) to
    /// its completion (or the interval's end), and never less than the
    /// interval's length for a flow that was sending when the window
    /// opened, so that bytes in flight at that instant cannot inflate it.
    pub goodput_bps: f64,
    pub segments_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub ecn_reductions: u64,
    /// Packets of this flow (data and ACKs) dropped in the network.
    pub drops: u64,
    /// Flow completion time as the sender sees it: from the flow's start
    /// (its SYN, with a handshake) to the ACK of its last byte (sized
    /// flows that finished). A workload's `requests.csv` reports, per
    /// transfer, `completion_s` from the first data byte sent to the last
    /// byte received, a shorter span.
    pub completion_s: Option<f64>,
    /// Final congestion window, segments.
    pub final_cwnd: f64,
    /// Final smoothed RTT, seconds.
    pub srtt_s: Option<f64>,
    /// Mean one-way delay of this flow's data packets delivered, seconds.
    pub mean_owd_s: Option<f64>,
    /// Largest one-way delay of a delivered data packet, seconds.
    pub max_owd_s: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct QueueResult {
    /// The simplex link whose egress this queue feeds (`a->b`).
    pub link: String,
    pub kind: String,
    /// Packets offered to the queue (enqueued or dropped on arrival).
    pub arrivals: u64,
    pub enqueued: u64,
    pub dequeued: u64,
    pub dropped: u64,
    pub dropped_early: u64,
    pub dropped_forced: u64,
    pub dropped_overflow: u64,
    pub dropped_aqm: u64,
    /// Packets lost because the link went down (`[[events]]` `down`):
    /// queued, being serialised or propagating on this link direction.
    pub dropped_link_down: u64,
    pub marked: u64,
    /// Time-averaged queue length, packets.
    pub mean_len_pkts: f64,
    pub mean_len_bytes: f64,
    /// Mean per-packet queueing delay (enqueue to dequeue), seconds.
    pub mean_delay_s: f64,
    pub p50_delay_s: f64,
    pub p99_delay_s: f64,
    pub max_delay_s: f64,
    /// Arrivals, drops and marks per packet class, for queues that saw
    /// packets tagged by a classifier (RIO-PS: `in` = short, `out` = long),
    /// then those of the discipline's own queues (DualPI2: `l`, `c`, with
    /// departures and mean delay); empty otherwise. See [`crate::net::link::ClassCounters`] for how
    /// marks are attributed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassResult>,
    /// Statistics of the discipline and its classifier beyond the common
    /// counters ([`QueueDisc::stats`](crate::aqm::QueueDisc::stats), the
    /// classifier's under `classifier.`); absent when there are none.
    #[serde(skip_serializing_if = "Stats::is_empty")]
    pub stats: Stats,
}

/// Named statistics a component reports beyond the common counters (a
/// discipline's per-class counts, a classifier's tags, a congestion
/// control's state), in `summary.json` under the component's result.
pub type Stats = BTreeMap<String, f64>;

/// `(name, value)` pairs as [`Stats`], each name after `prefix`.
pub fn stats_of(prefix: &str, pairs: Vec<(&'static str, f64)>) -> Stats {
    pairs
        .into_iter()
        .map(|(k, v)| (format!("{prefix}{k}"), v))
        .collect()
}

/// A queue's [`Stats`]: its discipline's and its classifier's.
pub fn queue_stats(
    qd: &dyn crate::aqm::QueueDisc,
    classifier: Option<&crate::net::classifier::Classifier>,
) -> Stats {
    let mut s = stats_of("", qd.stats());
    if let Some(c) = classifier {
        s.extend(stats_of("classifier.", c.stats()));
    }
    s
}

/// The [`FlowStats`] of every flow (in id order; `None` for a flow without
/// a congestion control) whose controller reports any.
pub fn cc_stats<'a>(
    ccs: impl Iterator<Item = Option<&'a dyn crate::tcp::cc::CongestionControl>>,
) -> Vec<FlowStats> {
    ccs.enumerate()
        .filter_map(|(i, cc)| {
            let stats = stats_of("", cc?.stats());
            (!stats.is_empty()).then_some(FlowStats {
                flow: i as u32,
                stats,
            })
        })
        .collect()
}

/// One flow's congestion-control [`Stats`] (`RunResult::cc_stats`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowStats {
    pub flow: u32,
    pub stats: Stats,
}

/// One packet class's counts at a queue.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ClassResult {
    /// The port's classes `default`, `in` (short-flow packets) and `out`
    /// (long-flow packets); a discipline's own queues (DualPI2: `l`, `c`).
    pub class: String,
    pub arrivals: u64,
    pub dropped: u64,
    pub marked: u64,
    /// Packets sent from the class, for a discipline's own queues (the
    /// port's classes do not count departures: `None`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dequeued: Option<u64>,
    /// Their mean queueing delay, seconds (0 when none left).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_delay_s: Option<f64>,
    /// Sum of their queueing delays, ns (the numerator of `mean_delay_s`,
    /// so that a window's is a difference of integers).
    #[serde(skip)]
    pub sojourn_ns: u128,
}

impl ClassResult {
    /// Fraction of arrivals dropped.
    pub fn drop_rate(&self) -> f64 {
        ratio(self.dropped, self.arrivals)
    }
    /// Fraction of arrivals marked CE.
    pub fn mark_rate(&self) -> f64 {
        ratio(self.marked, self.arrivals)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct LinkResult {
    pub link: String,
    pub from: String,
    pub to: String,
    pub rate_bps: u64,
    pub delay_s: f64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Fraction of the measured interval the transmitter was busy: busy
    /// time (a transmission's whole serialisation time, booked when it
    /// starts) over the interval, at most 1; exactly 0 when no
    /// transmission started in the interval. On a link whose service
    /// varies (events, trace): the bytes whose transmission started over
    /// the capacity offered in the interval, at most 1.
    pub utilization: f64,
    /// Packets lost to the link's random loss.
    pub lost: u64,
    /// Busy time booked since the start of the run, ns (the exact
    /// numerator of `utilization`, so that a window's is a difference of
    /// integers).
    #[serde(skip)]
    pub busy_ns: u64,
    /// On a link whose service varies: (bytes whose transmission started,
    /// capacity offered, bytes) since the start of the run; its
    /// `utilization` is their ratio, the capacity actually offered.
    #[serde(skip)]
    pub offered: Option<(u64, u64)>,
}

/// One sample of a monitored queue.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct QueueSample {
    pub time_s: f64,
    pub len_pkts: u32,
    pub len_bytes: u64,
    /// The discipline's average (RED's `avg`), if it has one.
    pub avg_pkts: Option<f64>,
    /// Queueing delay: the sojourn time of the last packet dequeued before
    /// the sample, 0 when the queue is empty.
    pub delay_s: f64,
    /// Packets offered to the queue since the start of the run.
    pub arrivals: u64,
    /// Packets dropped since the start of the run (every cause).
    pub dropped: u64,
    /// Packets marked CE since the start of the run.
    pub marked: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct QueueSeries {
    pub link: String,
    pub samples: Vec<QueueSample>,
    /// The discipline's own queues (DualPI2's `l` and `c`), sampled with
    /// `samples` (one entry per sample each); empty for other disciplines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassSeries>,
}

/// One internal queue's time series ([`QueueSeries::classes`]).
#[derive(Clone, Debug, Serialize)]
pub struct ClassSeries {
    /// The queue's name, as in `classes.csv`'s `class` column.
    pub class: String,
    pub samples: Vec<ClassSample>,
}

/// One sample of an internal queue: as [`QueueSample`], for that queue.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct ClassSample {
    pub len_pkts: u64,
    pub len_bytes: u64,
    /// The sojourn time of the last packet that left this queue before the
    /// sample, 0 when it is empty.
    pub delay_s: f64,
    /// Counted from the start of the run.
    pub arrivals: u64,
    pub dropped: u64,
    pub marked: u64,
}

/// Drop and mark rates of a queue over one window of time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SignalWindow {
    pub t0_s: f64,
    pub t1_s: f64,
    /// Packets offered to the queue in the window.
    pub arrivals: u64,
    pub dropped: u64,
    pub marked: u64,
}

impl SignalWindow {
    /// Drops per arrival in the window (0 when nothing arrived).
    pub fn drop_rate(&self) -> f64 {
        ratio(self.dropped, self.arrivals)
    }
    /// Marks per arrival in the window (0 when nothing arrived).
    pub fn mark_rate(&self) -> f64 {
        ratio(self.marked, self.arrivals)
    }
    /// Drops plus marks per arrival: the congestion-signal rate.
    pub fn signal_rate(&self) -> f64 {
        ratio(self.dropped + self.marked, self.arrivals)
    }
}

impl QueueSeries {
    /// Drop/mark rates over time, in consecutive windows of at least
    /// `window_s` seconds whose edges are sample times (so a window is a
    /// whole number of sample intervals). The counts are differences of the
    /// cumulative counters at the edges: a packet dropped at dequeue (CoDel)
    /// is counted in the window of its drop, not of its arrival. A last
    /// window shorter than `window_s` is kept. `window_s` ≤ 0 gives one
    /// window per sample interval.
    pub fn signal_rates(&self, window_s: f64) -> Vec<SignalWindow> {
        let mut out = Vec::new();
        let Some(first) = self.samples.first() else {
            return out;
        };
        let mut edge = *first;
        let n = self.samples.len();
        for (i, s) in self.samples.iter().enumerate().skip(1) {
            // Tolerate float error in sample times (k·interval summed).
            let full = s.time_s - edge.time_s >= window_s - 1e-9;
            if full || i + 1 == n {
                out.push(SignalWindow {
                    t0_s: edge.time_s,
                    t1_s: s.time_s,
                    arrivals: s.arrivals - edge.arrivals,
                    dropped: s.dropped - edge.dropped,
                    marked: s.marked - edge.marked,
                });
                edge = *s;
            }
        }
        out
    }
}

/// One sample of a flow's congestion state.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CwndSample {
    pub time_s: f64,
    /// Congestion window, segments.
    pub cwnd: f64,
    /// Slow-start threshold, segments (None while unset).
    pub ssthresh: Option<f64>,
    /// Segments in flight.
    pub in_flight: u32,
    /// Smoothed RTT, seconds.
    pub srtt_s: Option<f64>,
}

/// A flow's cwnd over time (flows with `trace_cwnd = true`).
#[derive(Clone, Debug, Serialize)]
pub struct CwndTrace {
    pub flow: u32,
    pub group: String,
    pub cc: String,
    pub samples: Vec<CwndSample>,
}

/// A flow's delivered throughput per time bin (`output.throughput_bin`).
#[derive(Clone, Debug, Serialize)]
pub struct ThroughputSeries {
    pub flow: u32,
    pub group: String,
    /// Bin width, seconds.
    pub bin_s: f64,
    /// Payload bytes that reached the receiver for the first time in each
    /// bin: a segment is counted once, in the bin it arrived in, whether
    /// it arrived in order or past a hole (so a hole being filled adds no
    /// burst), and a duplicate not at all. A bin therefore carries at most
    /// the receiver's incoming link rate × bin plus one packet.
    pub bytes: Vec<u64>,
}

impl ThroughputSeries {
    /// (bin start time in s, throughput in bit/s) pairs.
    pub fn bps(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.bytes
            .iter()
            .enumerate()
            .map(|(i, b)| (i as f64 * self.bin_s, *b as f64 * 8.0 / self.bin_s))
    }
}

/// One item of a workload: an HTTP request/response connection, or a web
/// object. Its first flow opens the item; its last flow carries the answer.
#[derive(Clone, Debug, Serialize)]
pub struct RequestResult {
    pub workload: String,
    pub id: u32,
    /// Bytes of the answer (the last flow's transfer).
    pub bytes: u64,
    /// When the connection was opened (SYN sent).
    pub open_s: f64,
    /// When the request's first byte was sent.
    pub request_s: Option<f64>,
    /// Request's first byte sent → response's first byte received.
    pub response_time_s: Option<f64>,
    /// Request's first byte sent → response's last byte received.
    pub completion_s: Option<f64>,
    /// Connection opened → answer's last byte received (handshake included).
    pub total_s: Option<f64>,
}

/// Summary of one workload.
#[derive(Clone, Debug, Serialize)]
pub struct WorkloadResult {
    pub name: String,
    pub kind: String,
    pub connections: u32,
    /// Connections whose response arrived completely.
    pub completed: u32,
    pub mean_response_time_s: Option<f64>,
    pub p50_response_time_s: Option<f64>,
    pub p90_response_time_s: Option<f64>,
    pub max_response_time_s: Option<f64>,
}

/// How a run used threads (`summary.json` key `parallel`, present when a
/// run asked for more than one thread). The timings in it (`busy_s`,
/// `wait_s`, `cpu_s`, `wait_fraction`) are measurements; everything else
/// in `summary.json` is the same whatever the thread count.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ParallelReport {
    pub threads: usize,
    /// Logical processes (one per thread used).
    pub processes: usize,
    /// Why the run stayed sequential, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Shortest delay of a cut link: the synchronisation window.
    pub lookahead_s: f64,
    /// Simplex links whose ends lie in different processes.
    pub cut_links: usize,
    /// Synchronisation windows (one barrier each).
    pub windows: u64,
    pub windows_per_sim_s: f64,
    /// Share of the processes' wall time spent waiting at barriers.
    pub wait_fraction: f64,
    pub parts: Vec<PartReport>,
}

/// One logical process of a parallel run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PartReport {
    pub nodes: usize,
    /// Expected work (packet hops and flow ends) the partitioner assigned.
    pub expected_work: f64,
    pub events: u64,
    pub busy_s: f64,
    pub wait_s: f64,
    /// CPU seconds of its thread (on a shared machine less than busy_s).
    pub cpu_s: f64,
    /// This process's packet ledger: sent + cut_in = delivered + dropped +
    /// in_flight + cut_out.
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
    pub cut_in: u64,
    pub cut_out: u64,
}

impl PartReport {
    /// Packet conservation within this process.
    pub fn holds(&self) -> bool {
        self.sent + self.cut_in == self.delivered + self.dropped + self.in_flight + self.cut_out
    }
}

/// Every packet created is delivered, dropped, or still in the network.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Conservation {
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
    /// Of `dropped`: packets that found no route on (every path to their
    /// destination down, `[[events]]` `down`); the other drops are the
    /// queues' and the links' random losses.
    pub dropped_no_route: u64,
}

impl Conservation {
    pub fn holds(&self) -> bool {
        self.sent == self.delivered + self.dropped + self.in_flight
    }
}

/// Wall-clock and process CPU time of one phase of a run, seconds.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct PhaseTime {
    pub wall_s: f64,
    /// CPU seconds of the whole process (all threads) during the phase.
    pub cpu_s: f64,
}

/// The phases of a run (`summary.json`'s `timings`): set-up (building the
/// simulation from the validated scenario; under `aqmlab run` also reading,
/// expanding and validating the scenario, see
/// [`crate::Simulation::setup_since`]), the event loop, collecting the
/// results, and writing the output files other than `summary.json`.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct Timings {
    pub setup: PhaseTime,
    #[serde(rename = "loop")]
    pub event_loop: PhaseTime,
    pub collect: PhaseTime,
    pub write: PhaseTime,
}

/// A started phase: [`PhaseClock::stop`] gives its [`PhaseTime`].
#[derive(Clone, Copy, Debug)]
pub struct PhaseClock {
    wall: std::time::Instant,
    cpu: f64,
}

impl PhaseClock {
    pub fn start() -> PhaseClock {
        PhaseClock {
            wall: std::time::Instant::now(),
            cpu: process_cpu_seconds(),
        }
    }

    pub fn stop(&self) -> PhaseTime {
        PhaseTime {
            wall_s: self.wall.elapsed().as_secs_f64(),
            cpu_s: (process_cpu_seconds() - self.cpu).max(0.0),
        }
    }
}

/// CPU time of the whole process, seconds (POSIX `clock_gettime` with
/// `CLOCK_PROCESS_CPUTIME_ID`; 0 where it is not available).
pub fn process_cpu_seconds() -> f64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec for the call.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
        if rc == 0 {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        }
        0.0
    }
    #[cfg(not(unix))]
    {
        0.0
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    pub scenario: String,
    pub seed: u64,
    pub sim_seconds: f64,
    pub wall_seconds: f64,
    /// Wall and CPU time of each phase (set-up, loop and collection here;
    /// writing is filled in by the writer of `summary.json`). Measurements:
    /// they differ between identical runs, like `wall_seconds`.
    pub timings: Timings,
    pub events: u64,
    pub flows: Vec<FlowResult>,
    pub queues: Vec<QueueResult>,
    pub links: Vec<LinkResult>,
    /// Jain's index over the goodputs of each flow group.
    pub fairness: BTreeMap<String, f64>,
    pub conservation: Conservation,
    #[serde(skip)]
    pub series: Vec<QueueSeries>,
    /// cwnd traces of the flows that asked for one.
    #[serde(skip)]
    pub cwnd: Vec<CwndTrace>,
    /// Per-workload summaries (HTTP response times).
    pub workloads: Vec<WorkloadResult>,
    /// Congestion controls' statistics ([`CongestionControl::stats`](crate::tcp::cc::CongestionControl::stats)),
    /// for the flows whose controller reports any. Kept apart from `flows`,
    /// whose fields are the columns of `flows.csv`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cc_stats: Vec<FlowStats>,
    /// Every HTTP request/response (`requests.csv`).
    #[serde(skip)]
    pub requests: Vec<RequestResult>,
    /// Per-flow throughput series (`throughput.csv`).
    #[serde(skip)]
    pub throughput: Vec<ThroughputSeries>,
    /// Threads, partition and synchronisation of a parallel run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel: Option<ParallelReport>,
    /// Start of the measurement window, seconds, when the counters, rates
    /// and means are over `[warmup_s, sim_seconds]` (`[output] warmup`,
    /// [`Simulation::measured_since`](crate::Simulation::measured_since));
    /// absent for whole-run results.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup_s: Option<f64>,
    /// The per-packet event log (`[output] log`), over the whole run.
    #[serde(skip)]
    pub event_log: Option<crate::net::event_log::EventLog>,
    /// The tables' file format (`[output] format`).
    #[serde(skip)]
    pub table_format: crate::net::event_log::FileFormat,
    /// What the scenario asks for that the run did not do as its names say
    /// (`scenario::warnings`).
    pub warnings: Vec<crate::scenario::warnings::Warning>,
}

impl RunResult {
    pub fn queue(&self, link: &str) -> Option<&QueueResult> {
        self.queues.iter().find(|q| q.link == link)
    }
    pub fn link(&self, link: &str) -> Option<&LinkResult> {
        self.links.iter().find(|l| l.link == link)
    }
    /// The cwnd trace of flow `id`, if it was traced.
    pub fn cwnd_trace(&self, id: u32) -> Option<&CwndTrace> {
        self.cwnd.iter().find(|t| t.flow == id)
    }
    pub fn group(&self, g: &str) -> impl Iterator<Item = &FlowResult> {
        let g = g.to_string();
        self.flows.iter().filter(move |f| f.group == g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_bounds() {
        assert_eq!(jain(&[5.0, 5.0, 5.0]), 1.0);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert!((jain(&[1.0, 2.0]) - 0.9).abs() < 1e-12);
        assert_eq!(jain(&[]), 1.0);
    }
}
