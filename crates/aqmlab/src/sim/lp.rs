//! A logical process: a group of nodes with the links leaving and entering
//! them, the flow endpoints on them and their timers, one event queue and
//! one clock. A sequential run is one logical process holding everything;
//! a parallel run ([`super::parallel`]) has several that exchange packets
//! crossing cut links as messages ([`Msg`]).

use super::endpoint::{Flow, Side};
use super::event::Ev;
use super::forward::{Msg, SimLink};
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

/// How many timers ahead of the next one the event loop prefetches a
/// timer's flow record (and, for a sender's timer, its link's).
const TIMER_AHEAD: usize = 3;

/// How many arrivals behind a lane's head the event loop prefetches the
/// record of the link an arrival leaves on next.
pub(super) const LANE_AHEAD: usize = 3;

/// Drops logged before they are added to the per-flow counters.
pub(super) const DROP_LOG: usize = 64;

pub struct Lp {
    pub id: LpId,
    pub now: Time,
    pub events: EventQueue<Ev>,
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
    /// The timer whose lines `prefetch_next` prefetched last, [`TIMER_AHEAD`]
    /// timers ahead (a hint only).
    ahead: (LocalFlow, TimerKind),
    /// Packets that left over cut links in the current window.
    pub outbox: Vec<Msg>,
    /// Packet taps by local link index; empty when none is set.
    pub taps: Vec<Option<PacketTap>>,
    // scratch buffers reused on the hot path
    pub out: Vec<Packet>,
    pub timers: Vec<(Time, TimerKind)>,
    pub drops: Vec<Packet>,
}

impl Lp {
    pub fn new(id: LpId, n_links: usize, n_flows: usize) -> Lp {
        Lp {
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
            cwnd: Vec::new(),
            workloads: Vec::new(),
            wl_flows: Vec::new(),
            wl_seq: Vec::new(),
            next_flow: FlowId(n_flows as u32),
            sampler_events: 0,
            cwnd_events: 0,
            ledger: Ledger::default(),
            ahead: (LocalFlow(super::ids::ABSENT), TimerKind::Start),
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
    pub fn run_until(&mut self, sh: &Shared, limit: Time, progress: &mut dyn FnMut(Time)) {
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
                    if let Some(a) = self.lanes.ahead(l, LANE_AHEAD) {
                        self.prefetch_onward(&sh.routes, a.to, &a.pkt);
                    }
                    self.prefetch_next();
                    self.on_transit(sh, tr);
                }
                None => {
                    let (_, ev) = self.events.pop().expect("peeked");
                    self.prefetch_next();
                    self.dispatch(sh, ev);
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
    fn dispatch(&mut self, sh: &Shared, ev: Ev) {
        match ev {
            Ev::TxDone(l) => self.on_tx_done(sh, l),
            Ev::Arrive(l, _, _) => self.on_arrive(sh, l),
            Ev::Timer(f, k, _) => self.on_timer(sh, f, k),
            Ev::Sample => self.on_sample(sh),
            Ev::CwndSample => self.on_cwnd_sample(sh),
            Ev::Workload(w) => self.on_workload(sh, w),
        }
    }

    /// Prefetch the state the next events will touch while the current one
    /// runs (hints with no effect on results; see
    /// [`crate::engine::prefetch`]): with 10⁵ flows the records do not fit
    /// in cache. A delivery's flow record was prefetched when the delivery
    /// was scheduled (a packet put in a delay lane or at the head of a
    /// pipe); a timer's is prefetched [`TIMER_AHEAD`] timers ahead, with
    /// the record of the link a sender's timer sends on. One
    /// event ahead, the record is in cache and the heap objects it points
    /// to can be prefetched too. (The record of the link an arrival from a
    /// lane leaves on is prefetched [`LANE_AHEAD`] arrivals ahead, in
    /// [`Lp::run_until`].)
    #[inline]
    fn prefetch_next(&mut self) {
        if let Some(&Ev::Timer(f, k, l)) = self.events.timer_ahead(TIMER_AHEAD) {
            // once per timer: the next events see the same timer there
            // until one is taken, and prefetching its lines again (about
            // four events in five with 10⁵ flows) only spent instructions
            if self.ahead != (f, k) {
                self.ahead = (f, k);
                if let Some(x) = self.flows.get(f.ix()) {
                    x.prefetch_for(Side::of_timer(k));
                    if k == TimerKind::Start {
                        x.prefetch_start();
                    }
                }
                if Side::of_timer(k) == Side::Snd {
                    // a sender's timer (with 10⁵ flows mostly the
                    // retransmission timeout, or the start) sends on the
                    // host's link, named in the event; a start sends its
                    // initial window at once, and all its segments but
                    // the first wait in the link's queue
                    self.prefetch_link(l, k == TimerKind::Start);
                }
            }
        }
        let (links, flows) = (&self.links, &self.flows);
        let next = self.events.peek_entry();
        if let Some((l, k)) = self.lanes.peek() {
            if next.is_none_or(|(q, _)| k < q) {
                // an arrival from a lane: the flow it reaches (the link's
                // record is not read unless the link is lossy)
                let tr = self.lanes.ahead(l, 0).expect("peeked");
                if let Some(x) = flows.get(tr.flow.ix()) {
                    x.prefetch_for(tr.side);
                    if tr.side == Side::Snd {
                        x.prefetch_heap();
                    }
                }
                return;
            }
        }
        match next.map(|(_, e)| e) {
            // a transmission ends one serialisation time after it started,
            // with the link's record still in cache: prefetching its lines
            // again only occupied the line-fill buffers (without it the
            // star runs 1-2 % faster at 10 and at 10⁵ flows); on a link
            // with a lane the packet is already in it
            Some(&Ev::TxDone(_)) => {}
            Some(&Ev::Arrive(l, f, side)) => {
                if let Some(x) = links.get(l.ix()) {
                    x.prefetch_rx();
                }
                // the event names the flow and its side, so the packet in
                // the pipe's buffer (a heap line of its own) is not read
                // here to learn them
                if let Some(x) = flows.get(f.ix()) {
                    x.prefetch_for(side);
                    if side == Side::Snd {
                        x.prefetch_heap();
                    }
                }
            }
            Some(&Ev::Timer(f, k, _)) => {
                if let Some(x) = flows.get(f.ix()) {
                    let side = Side::of_timer(k);
                    x.prefetch_for(side);
                    if side == Side::Snd {
                        x.prefetch_heap();
                    }
                }
            }
            _ => {}
        }
    }

    /// Packets queued, being serialised or propagating in this process.
    pub fn in_flight(&self) -> u64 {
        self.links
            .iter()
            .map(|sl| {
                let l = &sl.l;
                let near = sl.tx_lp == self.id;
                let far = sl.rx_lp == self.id;
                (near as u64) * (l.port.disc.len_pkts() as u64 + l.tx.is_some() as u64)
                    + (far as u64) * l.pipe.len() as u64
            })
            .sum::<u64>()
            + self.lanes.len() as u64
    }
}
