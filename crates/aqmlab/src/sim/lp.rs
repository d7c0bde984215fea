//! A logical process: a group of nodes with the links leaving and entering
//! them, the flow endpoints on them and their timers, one event queue and
//! one clock. A sequential run is one logical process holding everything;
//! a parallel run ([`super::parallel`]) has several that exchange packets
//! crossing cut links as messages ([`Msg`]).

use super::endpoint::Flow;
use super::event::Event;
use super::forward::{Msg, SimLink};
use super::hints::HintState;
use super::ids::{FlowIx, LocalFlow, LocalLink, LpId};
use super::lane::Lanes;
use super::Shared;
use crate::engine::{EventQueue, Time};
use crate::metrics::{CwndSample, QueueSample};
use crate::net::packet::{FlowId, Packet};
use crate::tcp::TimerKind;
use crate::traffic::Workload;

/// A packet tap (see [`super::Simulation::set_tap`]): (time, packet, the
/// flow's TCP parameters or `None` for a CBR flow).
pub type PacketTap = Box<dyn FnMut(Time, &Packet, Option<&crate::tcp::TcpParams>) + Send>;

/// One process's packet ledger. Summed over the processes it is the run's
/// [`crate::metrics::Conservation`]; for one process
/// `sent + cut_in = delivered + dropped + in_flight + cut_out`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ledger {
    /// Packets its endpoints sent.
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    /// Packets that reached it over a cut link.
    pub cut_in: u64,
    /// Packets that left it over a cut link.
    pub cut_out: u64,
}

/// Drops logged before they are added to the per-flow counters.
pub(super) const DROP_LOG: usize = 64;

pub struct LogicalProcess {
    pub id: LpId,
    pub now: Time,
    pub events: EventQueue<Event>,
    /// Packets propagating on links held whole here, by delay: arrivals
    /// merged with `events` in its order ([`super::lane`]).
    pub lanes: Lanes,
    pub links: Vec<SimLink>,
    /// Global link id → local index (or `ABSENT`).
    pub link_ix: Vec<u32>,
    /// `link_ix[i] == i` for every link (a sequential run): a global link
    /// id is its local index.
    pub links_identity: bool,
    pub flows: Vec<Flow>,
    /// Global flow id → local index (or `ABSENT`).
    pub flow_ix: FlowIx,
    /// Packets of each flow (global id) dropped in this process, up to
    /// the drops still in `drop_log` (complete whenever `run_until` has
    /// returned).
    pub flow_drops: Vec<u64>,
    /// The flows (global ids) of the latest drops, added to `flow_drops`
    /// [`DROP_LOG`] at a time: with 10⁵ flows a flow's counter is a cache
    /// miss, and a batch of independent increments overlaps them, where
    /// one per drop made the event wait for it.
    pub drop_log: Vec<u32>,
    /// Monitored ports held here and their samples.
    pub series: Vec<(LocalLink, Vec<QueueSample>)>,
    /// The samples of their disciplines' own queues, by `series` index
    /// (empty for a discipline without: `QueueDisc::classes`).
    pub class_series: Vec<Vec<crate::metrics::ClassSeries>>,
    /// Traced senders held here and their samples.
    pub cwnd: Vec<(LocalFlow, Vec<CwndSample>)>,
    /// The workloads, in the one process that runs them (else empty).
    pub workloads: Vec<Box<dyn Workload>>,
    /// Per workload, per item: its flows (global ids) in creation order.
    pub wl_flows: Vec<Vec<Vec<FlowId>>>,
    /// Per workload: arrival events scheduled (tie-break counter).
    pub wl_seq: Vec<u64>,
    /// Global id of the next flow a workload opens.
    pub next_flow: FlowId,
    /// Sampler events run (counted once per instant over the processes).
    pub sampler_events: u64,
    pub cwnd_events: u64,
    pub ledger: Ledger,
    /// Packets dropped because no route led on from where they were (a
    /// link down cut every path); part of `ledger.dropped`.
    pub no_route: u64,
    /// What the cache hints remember between events ([`super::hints`]).
    pub(super) hints: HintState,
    /// Packets that left over cut links in the current window.
    pub outbox: Vec<Msg>,
    /// Packet taps by local link index; empty when none is set.
    pub taps: Vec<Option<PacketTap>>,
    // scratch buffers reused on the hot path
    pub out: Vec<Packet>,
    pub timers: Vec<(Time, TimerKind)>,
    pub drops: Vec<Packet>,
}

impl LogicalProcess {
    pub fn new(id: LpId, n_links: usize, n_flows: usize) -> LogicalProcess {
        LogicalProcess {
            id,
            now: 0,
            events: EventQueue::new(),
            lanes: Lanes::default(),
            links: Vec::new(),
            link_ix: vec![super::ids::ABSENT; n_links],
            links_identity: false,
            flows: Vec::new(),
            flow_ix: FlowIx::new(n_flows),
            flow_drops: Vec::new(),
            drop_log: Vec::with_capacity(DROP_LOG),
            series: Vec::new(),
            class_series: Vec::new(),
            cwnd: Vec::new(),
            workloads: Vec::new(),
            wl_flows: Vec::new(),
            wl_seq: Vec::new(),
            next_flow: FlowId(n_flows as u32),
            sampler_events: 0,
            cwnd_events: 0,
            ledger: Ledger::default(),
            no_route: 0,
            hints: HintState::default(),
            outbox: Vec::new(),
            taps: Vec::new(),
            out: Vec::with_capacity(64),
            timers: Vec::with_capacity(8),
            drops: Vec::with_capacity(8),
        }
    }

    /// Run every event due at or before `limit`, calling `progress(t)` now
    /// and then: the queue's events and the lanes' arrivals, merged in the
    /// queue's order (time, owner, counter).
    pub fn run_until(&mut self, shared: &Shared, limit: Time, progress: &mut dyn FnMut(Time)) {
        self.hint_sizes();
        loop {
            let (t, lane) = match (self.events.peek_key(), self.lanes.peek()) {
                (Some(q), Some((l, k))) if k < q => (k.0, Some(l)),
                (Some(q), _) => (q.0, None),
                (None, Some((l, k))) => (k.0, Some(l)),
                (None, None) => break,
            };
            if t > limit {
                break;
            }
            self.now = t;
            match lane {
                Some(l) => {
                    let tr = self.lanes.pop(l);
                    self.hint_next(shared, Some(l));
                    self.on_transit(shared, tr);
                }
                None => {
                    let (_, ev) = self.events.pop().expect("peeked");
                    self.hint_next(shared, None);
                    self.dispatch(shared, ev);
                }
            }
            if self.popped() & 0x3FFF == 0 {
                progress(t);
            }
        }
        self.fold_drops();
    }

    /// Events run so far: the queue's and the lanes' arrivals.
    pub fn popped(&self) -> u64 {
        self.events.popped() + self.lanes.popped()
    }

    /// Time of the earliest pending event, in the queue or the lanes.
    pub fn next_time(&mut self) -> Option<Time> {
        let l = self.lanes.peek().map(|(_, k)| k.0);
        match (self.events.peek_time(), l) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    #[inline]
    fn dispatch(&mut self, shared: &Shared, ev: Event) {
        match ev {
            Event::TxDone(l) => self.on_tx_done(shared, l),
            Event::Arrive(l) => self.on_arrive(shared, l),
            Event::Timer(f, k) => self.on_timer(shared, f, k),
            Event::Sample => self.on_sample(shared),
            Event::CwndSample => self.on_cwnd_sample(shared),
            Event::Workload(w) => self.on_workload(shared, w),
        }
    }

    /// Packets queued, being serialised or propagating in this process.
    pub fn in_flight(&self) -> u64 {
        self.links
            .iter()
            .map(|sl| {
                let l = &sl.link;
                let near = sl.tx_lp == self.id;
                let far = sl.rx_lp == self.id;
                (near as u64) * (l.port.disc.len_pkts() as u64 + l.tx.is_some() as u64)
                    + (far as u64) * l.pipe.len() as u64
            })
            .sum::<u64>()
            + self.lanes.len() as u64
    }
}
