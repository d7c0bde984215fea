//! Cache hints: every prefetch the simulation makes, the offsets they are
//! computed from, and the tests that hold the layout to them. A hint has no
//! effect on results; with 10⁵ flows the flow and link records do not fit
//! in cache, and a hint lets the memory latency of the next event overlap
//! the work of the current one. The model code calls one hint by name where
//! it schedules or runs an event and otherwise reads as if there were none:
//!
//! - [`LogicalProcess::hint_next`], before each event runs: the state of the next
//!   event (and of a timer [`TIMER_AHEAD`] timers ahead, and of the link an
//!   arrival [`LANE_AHEAD`] arrivals behind a lane's head leaves on);
//! - [`LogicalProcess::hint_pipe`], when an arrival is scheduled from a pipe: the flow
//!   record it is delivered to and the link it leaves on next;
//! - [`LogicalProcess::hint_lane`], when a packet enters a delay lane: the flow record
//!   and the route entries its onward lookup reads;
//! - [`LogicalProcess::hint_queued`], when a packet waits in a port's queue: the delay
//!   histogram's buffer its dequeue writes.
//!
//! A process whose flow and link records fit in the last-level cache
//! ([`HINT_MIN_BYTES`]) skips every hint: there they only cost instructions.
//!
//! **Layout rule.** A record an event touches in part (`SimLink` with its
//! `Link`, `Port`, `PortStats` and `Disc`; `Flow` with the TCP `Sender` and
//! `Receiver`) is `#[repr(C)]` and declares its fields in the order the
//! events touch them, hot first; where the hot part ends is declared once,
//! as the offset of the first cold field (`HOT_BYTES`, next to the type).
//! This module derives every prefetched range from those declarations and
//! the field offsets, and its tests check that the fields each event reads
//! lie in the ranges it prefetches. Adding a field: put it in the cold part
//! unless an event that is hinted reads it; if it is hot, add it to the
//! list in the test below, which says whether it still fits.

use super::forward::SimLink;
use super::ids::{FlowIx, LocalFlow, LocalLink, ABSENT};
use super::lp::LogicalProcess;
use super::Shared;
use crate::engine::{prefetch_addr, prefetch_range};
use crate::net::link::{Disc, Link, Port};
use crate::net::packet::{NodeId, Packet};
use crate::net::port_stats::PortStats;
use crate::net::routing::Routes;
use crate::tcp::{Receiver, Sender, TimerKind};

use super::endpoint::{Flow, TcpPair, Transport};
use super::event::Event;

/// How many timers ahead of the next one [`LogicalProcess::hint_next`] prefetches a
/// timer's flow record.
const TIMER_AHEAD: usize = 3;

/// How many arrivals behind a lane's head [`LogicalProcess::hint_next`] prefetches the
/// record of the link an arrival leaves on next.
const LANE_AHEAD: usize = 3;

/// What the hints remember between events.
pub(super) struct HintState {
    /// The timer whose lines were prefetched last, [`TIMER_AHEAD`] timers
    /// ahead: the next events see the same timer there until one is taken,
    /// and prefetching its lines again only spent instructions.
    ahead: (LocalFlow, TimerKind),
    /// The process's records outgrow the cache ([`HINT_MIN_BYTES`]);
    /// otherwise every hint returns at once.
    on: bool,
}

impl Default for HintState {
    fn default() -> Self {
        HintState {
            ahead: (LocalFlow(ABSENT), TimerKind::Start),
            on: true,
        }
    }
}

/// Fewest bytes of flow and link records a process holds for the hints to
/// run. Below it the records stay in the last-level cache from one of
/// their events to the next, and a hint's lookups and address arithmetic
/// only cost instructions (on a 36 MiB L3 the break-even lies between 13
/// and 26 MB of records: 5·10³ and 10⁴ star hosts).
const HINT_MIN_BYTES: usize = 20 << 20;

/// Whether the hints pay for a process holding `flows` flow records and
/// `links` link records.
fn hints_pay(flows: usize, links: usize) -> bool {
    flows * std::mem::size_of::<Flow>() + links * std::mem::size_of::<SimLink>() >= HINT_MIN_BYTES
}

/// Which end of a flow an event runs: which lines of its record to bring in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    /// A data packet reaches the receiver.
    Data,
    /// An ACK reaches the sender, or a sender's timer fires.
    Snd,
    /// The receiver's delayed-ACK timer fires.
    Rcv,
}

impl Side {
    #[inline]
    fn of_packet(p: &Packet) -> Side {
        if p.is_forward() {
            Side::Data
        } else {
            Side::Snd
        }
    }
    #[inline]
    fn of_timer(k: TimerKind) -> Side {
        if k == TimerKind::DelAck {
            Side::Rcv
        } else {
            Side::Snd
        }
    }
}

// ---- the ranges, from the declared layouts ----

/// Where a link's parts lie in its record.
mod link_at {
    use super::*;
    use std::mem::{offset_of, size_of};
    const LINK: usize = offset_of!(SimLink, link);
    /// Bytes from the record's start that an arrival reads besides the
    /// pipe (tie-break counter, far end, loss).
    pub const RX_END: usize = LINK + offset_of!(Link, delay);
    /// The pipe's header.
    pub const PIPE: usize = LINK + offset_of!(Link, pipe);
    pub const PIPE_END: usize =
        PIPE + size_of::<std::collections::VecDeque<(crate::engine::Time, Packet)>>();
    pub const PORT: usize = LINK + offset_of!(Link, port);
    /// Bytes from the record's start that a send on an idle link with an
    /// empty DropTail queue, and its transmission's end, touch up to the
    /// discipline: the transmitter, the classifier and the statistics'
    /// hot prefix.
    pub const TX_END: usize = PORT + offset_of!(Port, stats) + PortStats::HOT_BYTES;
    /// The discipline, and the end of its bytes a bypass reads.
    pub const DISC: usize = PORT + offset_of!(Port, disc);
    pub const DISC_END: usize = DISC + Disc::HOT_BYTES;
    /// The end of what a packet queued behind a busy transmitter touches.
    pub const QUEUE_END: usize = PORT + offset_of!(Port, rng);
}

/// Where a flow's parts lie in its record.
mod flow_at {
    use super::*;
    use std::mem::{align_of, offset_of};
    /// A TCP flow's endpoints (a `#[repr(u8)]` enum holds its variant at
    /// the variant's alignment after the tag).
    pub const TCP: usize = offset_of!(Flow, transport) + align_of::<TcpPair>();
    pub const RCV: usize = TCP + offset_of!(TcpPair, rcv);
    pub const SND: usize = TCP + offset_of!(TcpPair, snd);
    /// The first field every event of the flow touches.
    pub const COMMON: usize = offset_of!(Flow, id);
}

#[inline(always)]
fn at<T>(x: &T, o: usize) -> *const u8 {
    (x as *const T as *const u8).wrapping_add(o)
}

/// The lines an arrival from the link's pipe touches.
#[inline(always)]
fn link_rx(x: &SimLink) {
    prefetch_range(at(x, 0), at(x, link_at::RX_END));
    prefetch_range(at(x, link_at::PIPE), at(x, link_at::PIPE_END));
}

/// The lines a transmission's start or end touches; with `queue`, also
/// those a packet queued behind the busy transmitter and its dequeue touch
/// (the queue's statistics, the discipline's packet, the length integral).
#[inline(always)]
fn link_tx(x: &SimLink, queue: bool) {
    prefetch_range(at(x, 0), at(x, link_at::TX_END));
    prefetch_range(at(x, link_at::DISC), at(x, link_at::DISC_END));
    if queue {
        prefetch_range(at(x, link_at::TX_END), at(x, link_at::QUEUE_END));
    }
}

/// The lines of a flow's record an event at `side` touches: a data packet
/// delivered, the delivery fields and the receiver's hot ones; an ACK or a
/// sender's timer, the sender's hot fields; a delayed ACK, the receiver's.
/// Nothing is read from the record (for a CBR flow the lines are its
/// first ones, harmlessly).
#[inline]
fn flow_lines(x: &Flow, side: Side) {
    match side {
        Side::Data => prefetch_range(at(x, 0), at(x, flow_at::RCV + Receiver::HOT_BYTES)),
        Side::Snd => {
            prefetch_range(at(x, flow_at::COMMON), at(x, flow_at::TCP));
            prefetch_range(at(x, flow_at::SND), at(x, flow_at::SND + Sender::HOT_BYTES));
        }
        Side::Rcv => prefetch_range(
            at(x, flow_at::COMMON),
            at(x, flow_at::RCV + Receiver::HOT_BYTES),
        ),
    }
}

/// The lines a start touches besides the sender's hot ones: the sender's
/// cold fields and the record's own, which lie after them.
#[inline]
fn flow_start(x: &Flow) {
    prefetch_range(
        at(x, flow_at::SND + Sender::HOT_BYTES),
        at(x, std::mem::size_of::<Flow>()),
    );
}

/// The heap objects the sender points to; cheap only once the record is in
/// cache (one event ahead).
#[inline]
fn flow_heap(x: &Flow) {
    if let Transport::Tcp(t) = &x.transport {
        let h = t.snd.heap_addresses();
        if let Some(r) = h.rec {
            prefetch_addr(r);
        }
        prefetch_addr(h.cc);
        if let Some(e) = h.spill_front {
            prefetch_addr(e);
        }
        if let Some((from, to)) = h.cold {
            prefetch_range(from, to);
        }
    }
}

/// The local flow a packet reaching node `to` is delivered to, or `ABSENT`
/// when `to` forwards it.
#[inline]
fn delivered_to(flow_ix: &FlowIx, to: NodeId, p: &Packet) -> LocalFlow {
    if p.dst == to {
        LocalFlow(flow_ix.get(p.flow))
    } else {
        LocalFlow(ABSENT)
    }
}

/// Where the packet `p`, once at `node`, is sent next: its destination
/// when `node` forwards it; for an ACK delivered to its sender, the
/// receiver (the sender's next segment leaves on the same link); none for
/// a data packet delivered.
#[inline]
fn onward_dst(node: NodeId, p: &Packet) -> Option<NodeId> {
    if p.dst != node {
        Some(p.dst)
    } else if Side::of_packet(p) == Side::Snd {
        Some(p.src)
    } else {
        None
    }
}

impl LogicalProcess {
    /// Turn the hints on or off for the records the process now holds
    /// (before its events run, and after a workload opened flows).
    #[inline]
    pub(super) fn hint_sizes(&mut self) {
        self.hints.on = hints_pay(self.flows.len(), self.links.len());
    }

    /// The record of global link `id`, where its local index is the id
    /// itself (a sequential run; elsewhere finding it reads a table).
    #[inline]
    fn hinted_link(&self, id: u32) -> Option<&SimLink> {
        if self.links_identity {
            self.links.get(id as usize)
        } else {
            None
        }
    }

    /// The record of the link `p` leaves on once it reaches `node`: the
    /// next hop when `node` forwards it, or, for an ACK delivered to its
    /// sender, the link the sender's next segment leaves on, with its
    /// queue's lines (in slow start an ACK sends two segments, and the
    /// second waits in the queue).
    #[inline]
    fn onward_link(&self, routes: &Routes, node: NodeId, p: &Packet) {
        if !self.links_identity {
            return;
        }
        if let Some(d) = onward_dst(node, p) {
            if let Some(x) = self.hinted_link(routes.next_link(node, d, p.flow)) {
                link_tx(x, p.dst == node);
            }
        }
    }

    /// A packet's arrival at `to` from a pipe was just scheduled (at least
    /// one packet spacing away): the lines of the flow record it touches,
    /// and the record of the link it leaves on next (`routes` is `None`
    /// for a packet that crossed from another process).
    #[inline]
    pub(super) fn hint_pipe(&self, routes: Option<&Routes>, to: NodeId, p: &Packet) {
        if !self.hints.on {
            return;
        }
        if let Some(x) = self.flows.get(delivered_to(&self.flow_ix, to, p).ix()) {
            flow_lines(x, Side::of_packet(p));
        }
        if let Some(r) = routes {
            self.onward_link(r, to, p);
        }
    }

    /// A packet entered a delay lane towards `to`: the flow record it
    /// touches, and the route entries of the link it leaves on next, whose
    /// record [`LogicalProcess::hint_next`] prefetches [`LANE_AHEAD`] arrivals before
    /// its own (by then the lookup finds them in cache).
    #[inline]
    pub(super) fn hint_lane(&self, routes: &Routes, to: NodeId, p: &Packet) {
        if !self.hints.on {
            return;
        }
        if let Some(x) = self.flows.get(delivered_to(&self.flow_ix, to, p).ix()) {
            flow_lines(x, Side::of_packet(p));
        }
        if let Some(d) = onward_dst(to, p) {
            let (a, b) = routes.first_entries(to, d);
            for x in [a, b].into_iter().flatten() {
                prefetch_addr(x);
            }
        }
    }

    /// A packet waits in the queue of link `li`: the delay histogram's
    /// buffer, which its dequeue writes one serialisation time or more
    /// from now.
    #[inline]
    pub(super) fn hint_queued(&self, li: LocalLink) {
        if !self.hints.on {
            return;
        }
        if let Some(b) = self.links[li.ix()].link.port.stats.sojourn_buffer() {
            prefetch_addr(b);
        }
    }

    /// Before an event runs (`lane`: it came from that delay lane): bring
    /// in the state the next events will touch. A timer's flow record is
    /// prefetched [`TIMER_AHEAD`] timers ahead; one event ahead the record
    /// is in cache, and the heap objects it points to and the record of
    /// the link a sender's timer sends on can be prefetched too. An
    /// arrival's flow record was prefetched when it was scheduled
    /// ([`LogicalProcess::hint_pipe`], [`LogicalProcess::hint_lane`]); one
    /// event ahead comes the link's record for an arrival from a pipe. A
    /// transmission's end needs nothing: it comes one serialisation time
    /// after its start, with the link's record still in cache.
    #[inline(always)]
    pub(super) fn hint_next(&mut self, shared: &Shared, lane: Option<usize>) {
        if self.hints.on {
            self.hint_next_on(shared, lane);
        }
    }

    #[inline]
    fn hint_next_on(&mut self, shared: &Shared, lane: Option<usize>) {
        if let Some(l) = lane {
            if let Some(a) = self.lanes.ahead(l, LANE_AHEAD) {
                self.onward_link(&shared.routes, a.to, &a.pkt);
            }
        }
        if let Some(&Event::Timer(f, k)) = self.events.timer_ahead(TIMER_AHEAD) {
            if self.hints.ahead != (f, k) {
                self.hints.ahead = (f, k);
                if let Some(x) = self.flows.get(f.ix()) {
                    flow_lines(x, Side::of_timer(k));
                    if k == TimerKind::Start {
                        flow_start(x);
                    }
                }
            }
        }
        let next = self.events.peek_entry().map(|(k, e)| (k, *e));
        if let Some((l, k)) = self.lanes.peek() {
            if next.is_none_or(|(q, _)| k < q) {
                // an arrival from a lane: the flow it reaches (the link's
                // record is not read unless the link is lossy)
                let tr = self.lanes.ahead(l, 0).expect("peeked");
                let f = delivered_to(&self.flow_ix, tr.to, &tr.pkt);
                if let Some(x) = self.flows.get(f.ix()) {
                    let side = Side::of_packet(&tr.pkt);
                    flow_lines(x, side);
                    if side == Side::Snd {
                        flow_heap(x);
                    }
                }
                return;
            }
        }
        match next.map(|(_, e)| e) {
            Some(Event::Arrive(l)) => {
                if let Some(x) = self.links.get(l.ix()) {
                    link_rx(x);
                }
            }
            Some(Event::Timer(f, k)) => {
                if let Some(x) = self.flows.get(f.ix()) {
                    let side = Side::of_timer(k);
                    flow_lines(x, side);
                    if side == Side::Snd {
                        flow_heap(x);
                        // a sender's timer (with 10⁵ flows mostly the
                        // retransmission timeout, or the start) sends on
                        // its host's link; a start sends its initial
                        // window at once, and all its segments but the
                        // first wait in the link's queue
                        if let Some(y) = self.hinted_link(x.snd_link) {
                            link_tx(y, k == TimerKind::Start);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::FlowId;
    use crate::tcp::cc::CcKind;
    use crate::tcp::TcpParams;
    use std::mem::{align_of, offset_of, size_of};

    /// The hints run where the records outgrow the cache: not for 10 or
    /// 10³ star hosts (2 records of links per host) or a 100-flow
    /// dumbbell, but for 10⁴ and 10⁵ hosts; a process's decision follows
    /// the flows it holds.
    #[test]
    fn hints_run_only_where_the_records_outgrow_the_cache() {
        let star = |n: usize| hints_pay(n, 2 * (n + 1));
        assert!(!star(10) && !star(1_000));
        assert!(star(10_000) && star(100_000));
        assert!(!hints_pay(100, 6));
        let sc = crate::Scenario::from_toml(
            "name = \"s\"\nduration = \"10ms\"\n[topology]\nkind = \"star\"\nhosts = 3\naccess_rate = \"1Gbps\"\naccess_delay = \"1ms\"\nbottleneck_rate = \"100Mbps\"\nbottleneck_delay = \"10ms\"\n[[flows]]\ngroup = \"g\"\nsrc = \"h*\"\ndst = \"sink\"\n",
            "s.toml",
        )
        .unwrap();
        let mut sim = crate::Simulation::new(&sc, 1);
        sim.run();
        assert!(!sim.lps[0].hints.on);
    }

    /// An event is 8 bytes: it carries no field that only a hint reads.
    #[test]
    fn an_event_is_eight_bytes() {
        assert_eq!(size_of::<Event>(), 8);
    }

    /// The fields an arrival reads or writes lie in the lines `link_rx`
    /// brings in (the record's first line and the pipe's header), those of
    /// a send on an idle link with an empty DropTail queue (the
    /// transmission's start and end, the port's count of such packets and
    /// the discipline's limit and count) in `link_tx`'s, the record's
    /// first three; the port's statistics, the queue's buffers, the packet
    /// held by a link without a lane and the cold fields after both.
    #[test]
    fn link_fields_lie_where_the_hints_look() {
        use link_at::*;
        assert_eq!(align_of::<SimLink>(), 64, "records start on a cache line");
        let end = |o: usize, n: usize| o + n;
        let rx = [
            end(offset_of!(SimLink, rx_seq), 8),
            end(offset_of!(SimLink, id), 4),
            end(offset_of!(SimLink, link.loss), 8),
            end(offset_of!(SimLink, link.to), 4),
        ];
        for e in rx {
            assert!(e <= RX_END, "{e} > {RX_END}");
        }
        const { assert!(RX_END <= 64) };
        assert_eq!(PIPE, offset_of!(SimLink, link.pipe));
        assert_eq!(
            PIPE_END.div_ceil(64) - PIPE / 64,
            1,
            "the pipe's header lies in one line: at {PIPE} (port at {PORT}, disc at {DISC}, port size {})",
            size_of::<Port>()
        );
        let tx = [
            end(offset_of!(SimLink, tx_seq), 8),
            end(offset_of!(SimLink, rx_lp), 2),
            end(offset_of!(SimLink, link.rate_bps), 8),
            end(offset_of!(SimLink, link.delay), 8),
            end(offset_of!(SimLink, link.tx_pkts), 8),
            end(offset_of!(SimLink, link.tx_bytes), 8),
            end(offset_of!(SimLink, link.busy_ns), 8),
            end(offset_of!(SimLink, link.tx_state), 1),
            end(offset_of!(SimLink, link.tx_size), 4),
            end(offset_of!(SimLink, link.port.edge), 8),
        ];
        for e in tx {
            assert!(e <= TX_END, "{e} > {TX_END}");
        }
        assert_eq!(DISC, offset_of!(SimLink, link.port.disc));
        // the lines of the two ranges a bypass touches
        let mut lines: Vec<usize> = (0..TX_END.div_ceil(64)).collect();
        lines.extend(DISC / 64..DISC_END.div_ceil(64));
        lines.dedup();
        assert!(lines.len() <= 3, "{lines:?}");
        let cold = [
            offset_of!(SimLink, link.pipe),
            offset_of!(SimLink, link.tx),
            offset_of!(SimLink, link.lost),
            offset_of!(SimLink, link.port.rng),
            offset_of!(SimLink, link.port.disc) + Disc::HOT_BYTES,
            offset_of!(SimLink, link.monitored),
            offset_of!(SimLink, link.name),
            offset_of!(SimLink, link.loss_rng),
        ];
        for o in cold {
            assert!(o >= TX_END, "{o} < {TX_END}");
        }
        const { assert!(TX_END.div_ceil(64) < size_of::<SimLink>() / 64) };
    }

    /// The offsets the hints compute from the layout alone are where a TCP
    /// flow's endpoints lie, and the hot parts stay within the lines the
    /// layout promises: a delivered data packet touches the record's first
    /// four cache lines, an ACK or a retransmission timeout its second
    /// line and five of the sender's.
    #[test]
    fn flow_fields_lie_where_the_hints_look() {
        use flow_at::*;
        let p = TcpParams::default();
        let cc = CcKind::NewReno(Default::default()).build();
        let t = Transport::Tcp(TcpPair {
            snd: Sender::new(p.clone(), cc, FlowId(0), NodeId(0), NodeId(1), None),
            rcv: Receiver::new(&p, FlowId(0), NodeId(1), NodeId(0)),
        });
        let flows = [Flow::new(FlowId(0), "g".into(), "newreno", t, 0, None)];
        let f = &flows[0];
        let base = f as *const Flow as usize;
        assert_eq!(base % 64, 0, "records start on a cache line");
        let Transport::Tcp(t) = &f.transport else {
            unreachable!()
        };
        assert_eq!(&t.rcv as *const Receiver as usize - base, RCV);
        assert_eq!(&t.snd as *const Sender as usize - base, SND);
        const { assert!(RCV + Receiver::HOT_BYTES <= 4 * 64) };
        const { assert!(COMMON >= 64 && TCP <= 128) };
        let snd_lines = (SND + Sender::HOT_BYTES).div_ceil(64) - SND / 64;
        assert!(snd_lines <= 5, "{snd_lines}");
        // what every event of the flow reads lies in the common range
        let common = [offset_of!(Flow, snd_link), offset_of!(Flow, snd_seq)];
        for o in common {
            assert!((COMMON..TCP).contains(&o), "{o}");
        }
    }
}
