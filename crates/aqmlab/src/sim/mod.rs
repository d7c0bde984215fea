//! The simulation: builds the network from a [`Scenario`], runs the event
//! loop, and collects a [`RunResult`]. The work follows the event flow:
//!
//! - [`build`]: the topology, links, flows, samplers and workloads of a
//!   scenario, placed in one or more logical processes;
//! - [`lp`]: a logical process — an event queue, a clock, and the elements
//!   of its nodes — and its event loop;
//! - [`forward`]: links, ports and forwarding;
//! - [`endpoint`]: flow endpoints behind one trait (TCP, CBR) and workloads;
//! - [`sample`]: queue and congestion-window time series;
//! - [`collect`]: the results, merged in global order;
//! - [`window`]: measurement windows (snapshots of the counters and the
//!   results since one, `[output] warmup`).
//!
//! One clock per logical process, no global state: a `Simulation` owns
//! everything. Events are plain data ([`event::Event`]); packets move by value.

mod actions;
mod build;
mod collect;
mod endpoint;
mod event;
mod forward;
mod hints;
pub mod ids;
mod lane;
mod log;
mod lp;
mod parallel;
pub mod partition;
mod sample;
mod window;

use crate::engine::Time;
use crate::metrics::RunResult;
use crate::net::packet::NodeId;
use crate::net::routing::Routes;
use ids::LpId;
use lp::LogicalProcess;

pub use lp::{Ledger, PacketTap};
pub use parallel::thread_cpu_seconds;
pub use window::Snapshot;

/// What every logical process reads and none writes while running.
pub(crate) struct Shared {
    routes: Routes,
    node_names: Vec<String>,
    /// Node ids by name (for workloads; empty without them).
    node_ids: rustc_hash::FxHashMap<String, NodeId>,
    end: Time,
    sample_interval: Time,
    cwnd_interval: Time,
    /// Throughput bin width (0 = none).
    tput_bin: Time,
}

pub struct Simulation {
    name: String,
    seed: u64,
    now: Time,
    shared: Shared,
    lps: Vec<LogicalProcess>,
    /// The logical process of every node.
    node_lp: Vec<LpId>,
    n_links: usize,
    /// The process running the workloads.
    workload_lp: LpId,
    /// Threads asked for.
    threads: usize,
    /// Why a run asked to use threads stays sequential.
    note: Option<String>,
    /// The partition of a parallel run.
    plan: Option<partition::Plan>,
    /// Windows run so far, and each process's timings.
    windows: u64,
    stats: Vec<parallel::LpStats>,
    /// The scenario's measurement start (`[output] warmup`), and the
    /// snapshot taken there once the run reached it.
    warmup: Option<Time>,
    warm: Option<window::Snapshot>,
    /// Snapshots taken so far.
    marks: u64,
    /// `[output] log_max_events` and `log_format` when the scenario logs packet events.
    log_cap: Option<(u64, crate::net::event_log::FileFormat)>,
    /// `[output] format`: the result tables' file format.
    table_format: crate::net::event_log::FileFormat,
    /// The scenario's link down/up and flow stop events, in the order they
    /// run, and the next to run ([`actions`]).
    actions: Vec<(Time, actions::Action)>,
    next_action: usize,
    /// What rebuilding the routes needs, when a link goes down.
    graph: Option<crate::net::routing::Graph>,
    /// Wall and CPU time of building this simulation, or of the whole
    /// set-up ([`Simulation::setup_since`]).
    setup: crate::metrics::PhaseTime,
    /// The scenario's warnings on the routes this run starts with
    /// (`scenario::warnings`).
    warnings: Vec<crate::scenario::warnings::Warning>,
}

impl Simulation {
    /// What the scenario asks for that this run will not do as its names
    /// say (`scenario::warnings`): printed by the CLI, listed in
    /// `summary.json`; `--strict` refuses the run.
    pub fn warnings(&self) -> &[crate::scenario::warnings::Warning] {
        &self.warnings
    }

    /// Call `tap` with every packet transmitted on link direction `link`
    /// (`"a->b"`) once its last bit is sent (the packets `tx_packets`
    /// counts), stamped with the time its transmission started, with its
    /// flow's TCP parameters (`None` for CBR). Set taps before running:
    /// while none is set, a link with a delay lane puts each packet in the
    /// lane when its transmission starts, so a packet already being sent
    /// when the first tap is set is not tapped.
    /// Returns false when there is no such link direction.
    pub fn set_tap(&mut self, link: &str, tap: PacketTap) -> bool {
        for lp in self.lps.iter_mut() {
            let id = lp.id;
            let found = (lp.links.iter()).position(|sl| sl.tx_lp == id && sl.link.name == link);
            if let Some(i) = found {
                lp.taps.resize_with(lp.links.len(), || None);
                lp.taps[i] = Some(tap);
                return true;
            }
        }
        false
    }

    /// Override the simulated duration.
    pub fn set_duration(&mut self, d: Time) {
        self.shared.end = d;
    }

    pub fn now(&self) -> Time {
        self.now
    }

    /// The edge classifier of link direction `name` (`"a->b"`), if any.
    pub fn classifier(&self, name: &str) -> Option<&crate::net::classifier::Classifier> {
        (self.lps.iter())
            .flat_map(|lp| lp.links.iter().filter(move |sl| sl.tx_lp == lp.id))
            .find(|sl| sl.link.name == name)
            .and_then(|sl| sl.link.port.classifier())
    }

    /// Heap bytes of the ports' delay histograms, and how many ports hold a
    /// dense one (for the scale benchmark).
    pub fn histogram_bytes(&self) -> (usize, usize) {
        let ports = || {
            (self.lps.iter())
                .flat_map(|lp| lp.links.iter().filter(move |sl| sl.tx_lp == lp.id))
                .map(|sl| &sl.link.port)
        };
        let dense = ports().filter(|p| p.stats.dense_histogram()).count();
        (ports().map(|p| p.stats.hist_bytes()).sum(), dense)
    }

    /// Record the set-up phase (`timings.setup`) as everything from
    /// `clock`'s start to now: a caller that reads, expands and validates
    /// the scenario itself starts `clock` first, so that the phase holds
    /// that work as well as building this simulation.
    pub fn setup_since(&mut self, clock: crate::metrics::PhaseClock) {
        self.setup = clock.stop();
    }

    /// Why a simulation built to use threads runs sequentially, if it does.
    pub fn parallel_note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// Logical processes (1: sequential).
    pub fn processes(&self) -> usize {
        self.lps.len()
    }

    /// Threads, partition and synchronisation, for runs asked to use
    /// threads (None for a plain sequential run).
    pub fn parallel_report(&self) -> Option<crate::metrics::ParallelReport> {
        if self.threads <= 1 && self.lps.len() <= 1 {
            return None;
        }
        let plan = self.plan.as_ref();
        let parts = (self.lps.iter().enumerate())
            .map(|(i, lp)| {
                let st = self.stats.get(i).cloned().unwrap_or_default();
                crate::metrics::PartReport {
                    nodes: self.node_lp.iter().filter(|&&l| l == lp.id).count(),
                    expected_work: plan.map_or(0.0, |p| p.weights.get(i).copied().unwrap_or(0.0)),
                    events: lp.popped(),
                    busy_s: st.busy_s,
                    wait_s: st.wait_s,
                    cpu_s: st.cpu_s,
                    sent: lp.ledger.sent,
                    delivered: lp.ledger.delivered,
                    dropped: lp.ledger.dropped,
                    in_flight: lp.in_flight(),
                    cut_in: lp.ledger.cut_in,
                    cut_out: lp.ledger.cut_out,
                }
            })
            .collect::<Vec<_>>();
        let (busy, wait): (f64, f64) =
            (parts.iter()).fold((0.0, 0.0), |(b, w), p| (b + p.busy_s, w + p.wait_s));
        Some(crate::metrics::ParallelReport {
            threads: self.threads,
            processes: self.lps.len(),
            note: self.note.clone(),
            lookahead_s: plan.map_or(0.0, |p| crate::engine::to_secs(p.lookahead)),
            cut_links: plan.map_or(0, |p| p.cut_links),
            windows: self.windows,
            windows_per_sim_s: self.windows as f64 / crate::engine::to_secs(self.now).max(1e-12),
            wait_fraction: if busy + wait > 0.0 {
                wait / (busy + wait)
            } else {
                0.0
            },
            parts,
        })
    }

    /// Run to the end and collect the results.
    pub fn run(&mut self) -> RunResult {
        self.run_with_progress(|_| {})
    }

    /// Run to the end, calling `progress(fraction_done)` now and then.
    /// With `[output] warmup` the results are over `[warmup, end]`
    /// ([`RunResult::warmup_s`]; see [`Snapshot`]), else over the whole run.
    pub fn run_with_progress(&mut self, mut progress: impl FnMut(f64)) -> RunResult {
        let wall = std::time::Instant::now();
        let clock = crate::metrics::PhaseClock::start();
        let end = self.shared.end;
        let mut tick = |t: Time| progress(t as f64 / end as f64);
        self.advance(end, &mut tick);
        progress(1.0);
        let event_loop = clock.stop();
        let clock = crate::metrics::PhaseClock::start();
        let whole = self.collect(end, wall.elapsed().as_secs_f64());
        let mut r = match &self.warm {
            Some(w) => self.window(w, whole),
            None => whole,
        };
        r.timings = crate::metrics::Timings {
            setup: self.setup,
            event_loop,
            collect: clock.stop(),
            write: Default::default(),
        };
        r
    }

    /// Run every event and action ([`actions`]) due at or before `limit`.
    fn step(&mut self, limit: Time, tick: &mut dyn FnMut(Time)) {
        if self.next_action < self.actions.len() {
            self.act_until(limit, tick);
        }
        self.step_events(limit, tick);
    }

    /// Run every event due at or before `limit`, sequentially or in
    /// parallel windows (the last one cut at `limit`).
    fn step_events(&mut self, limit: Time, tick: &mut dyn FnMut(Time)) {
        match &self.plan {
            Some(p) if self.lps.len() > 1 => {
                let (w, st) = parallel::run(&mut self.lps, &self.shared, p.lookahead, limit, tick);
                self.windows += w;
                self.stats.resize(st.len(), Default::default());
                for (a, b) in self.stats.iter_mut().zip(st) {
                    a.wait_s += b.wait_s;
                    a.busy_s += b.busy_s;
                    a.cpu_s += b.cpu_s;
                }
            }
            _ => {
                for lp in self.lps.iter_mut() {
                    lp.run_until(&self.shared, limit, tick);
                }
            }
        }
        self.now = self.now.max(limit);
    }
}

#[cfg(test)]
impl Simulation {
    /// Every link keeps its own pipe (no delay lanes), as before any
    /// packet is sent: the reference the lanes are tested against.
    fn without_lanes(mut self) -> Self {
        for lp in &mut self.lps {
            assert_eq!(lp.lanes.len(), 0, "before the run");
            for sl in &mut lp.links {
                sl.lane = lane::NO_LANE;
            }
            lp.lanes = lane::Lanes::new(0);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    /// Delay lanes change nothing but speed: a run with them gives the
    /// results of the same run with a pipe per link, event for event —
    /// with random loss on links, equal delays on many links (arrivals at
    /// one time on different links), more distinct delays than lanes (so
    /// some links keep their pipes), in a partitioned run, where cut
    /// links keep pipes too, and with a packet tap set.
    #[test]
    fn delay_lanes_give_the_results_of_pipes() {
        let names: Vec<String> = (0..24).map(|i| format!("\"h{i}\"")).collect();
        let mut text = format!(
            "name = \"lanes\"\nduration = \"6s\"\n[nodes]\nhosts = [\"d\", {}]\nrouters = [\"r\"]\n",
            names.join(", ")
        );
        text += "[[links]]\na = \"r\"\nb = \"d\"\nrate = \"20Mbps\"\ndelay = \"5ms\"\nloss_ba = 0.01\nqueue = { kind = \"red\", limit = 60, min_th = 5, max_th = 15 }\n";
        for i in 0..24 {
            // twelve delays over 24 access links, one in three lossy
            let loss = if i % 3 == 0 { "loss_ab = 0.005\n" } else { "" };
            text += &format!(
                "[[links]]\na = \"h{i}\"\nb = \"r\"\nrate = \"100Mbps\"\ndelay = \"{}ms\"\n{loss}",
                1 + i % 12
            );
        }
        for i in 0..24 {
            text += &format!(
                "[[flows]]\ngroup = \"g{i}\"\nsrc = \"h{i}\"\ndst = \"d\"\ncount = 2\nstart_spread = \"100ms\"\n"
            );
        }
        let sc = Scenario::from_toml(&text, "lanes.toml").unwrap();
        let key = |r: &RunResult| {
            let mut r = r.clone();
            r.wall_seconds = 0.0;
            r.timings = Default::default();
            r.parallel = None;
            format!("{r:?}")
        };
        let mut with = Simulation::new(&sc, 7);
        assert_eq!(with.lps[0].lanes.held(), lane::MAX_LANES);
        let with = with.run();
        let without = Simulation::new(&sc, 7).without_lanes().run();
        assert_eq!(key(&with), key(&without));
        assert!(with.links.iter().any(|l| l.lost > 0), "links lose packets");
        // packets in the lanes at the end count as in flight
        let c = &with.conservation;
        assert!(with.events > 50_000 && c.in_flight > 0, "{c:?}");
        assert_eq!(c.sent, c.delivered + c.dropped + c.in_flight);
        let mut split = Simulation::with_threads(&sc, 7, 2);
        assert!(split.processes() > 1, "{:?}", split.parallel_note());
        assert_eq!(key(&split.run()), key(&without));
        // while a packet tap is set, a packet waits in its link's record
        // until its transmission ends (when the tap is called) and enters
        // its lane then, instead of when its transmission starts: the
        // same run again
        let mut tapped = Simulation::new(&sc, 7);
        let seen = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let count = seen.clone();
        let tap =
            move |_: Time, _: &crate::net::packet::Packet, _: Option<&crate::tcp::TcpParams>| {
                count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            };
        assert!(tapped.set_tap("h0->r", Box::new(tap)));
        let tapped = tapped.run();
        assert_eq!(key(&tapped), key(&without));
        let h0 = (tapped.links.iter()).find(|l| l.link == "h0->r").unwrap();
        assert_eq!(
            seen.load(std::sync::atomic::Ordering::Relaxed),
            h0.tx_packets
        );
    }

    /// Per-flow and per-link state stays compact: with 10⁵ flows every
    /// byte here is 100 KB.
    #[test]
    fn per_flow_and_per_link_state_is_bounded() {
        let flow = std::mem::size_of::<endpoint::Flow>();
        assert!(flow <= 1024, "{flow}");
        // 832 = 13 cache lines: the link's service-model pointer
        // (`Link::varying`, cold) took it past 12 (768)
        let link = std::mem::size_of::<forward::SimLink>();
        assert!(link <= 832, "{link}");
        // a star of 10⁴ hosts: routing state is one router × one attachment
        // point (every host hangs off the hub), and no port holds a
        // histogram before packets flow
        let text = "name = \"s\"\nduration = \"1s\"\n[topology]\nkind = \"star\"\nhosts = 10000\naccess_rate = \"1Gbps\"\naccess_delay = \"1ms\"\nbottleneck_rate = \"100Mbps\"\nbottleneck_delay = \"10ms\"\n[[flows]]\ngroup = \"g\"\nsrc = \"h*\"\ndst = \"sink\"\n";
        let sc = Scenario::from_toml(text, "s.toml").unwrap();
        let sim = Simulation::new(&sc, 1);
        assert_eq!(sim.lps[0].flows.len(), 10_000);
        assert_eq!(sim.lps[0].links.len(), 20_002);
        assert_eq!(sim.shared.routes.table_entries(), 1);
        assert_eq!(sim.histogram_bytes(), (0, 0));
        // only the bottleneck's ports record time series
        assert_eq!(sim.lps[0].series.len(), 2);
    }
}
