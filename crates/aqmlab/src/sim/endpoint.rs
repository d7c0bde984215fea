//! Endpoints: the two ends of a flow behind one trait ([`Endpoint`]), and
//! what a logical process does with them — deliver a packet, fire a timer,
//! send what the endpoint produced, open a workload's connections.
//!
//! A flow whose ends lie in two logical processes has a record in each: the
//! process of its source node runs the sending half, the process of its
//! destination node the receiving half. Collection takes each half's
//! figures from the record that ran it.

use super::event::{owner, Event};
use super::ids::LocalFlow;
use super::lp::LogicalProcess;
use super::Shared;
use crate::engine::{TieBreak, Time, TimerAction};
use crate::metrics::FlowResult;
use crate::net::packet::{FlowId, NodeId, Packet};
use crate::net::routing::NO_ROUTE;
use crate::tcp::{Receiver, Sender, TcpCtx, TimerKind};
use crate::traffic::{Cbr, Role, Spawn};

/// One transport endpoint pair as the simulation drives it (as htsim's
/// `PacketSink`/`EventSource`): start, packets, timers, results.
pub trait Endpoint {
    /// The application starts sending.
    fn start(&mut self, ctx: &mut TcpCtx);
    /// A packet of this flow reached one of its ends. When it reached the
    /// receiving end, returns the payload bytes it brought there for the
    /// first time: its payload when it is data the receiver did not hold
    /// yet (in order or not), 0 for a duplicate. A segment that arrives
    /// out of order is counted when it arrives, not when the hole before
    /// it is filled, so the throughput bins never see a cumulative jump.
    fn on_packet(&mut self, p: &Packet, ctx: &mut TcpCtx) -> Option<u64>;
    /// A timer of this flow fired (possibly a stale one).
    fn on_timer(&mut self, k: TimerKind, ctx: &mut TcpCtx);
    /// Segments received in order, for endpoints that count them.
    fn rx_segments(&self) -> Option<u64>;
    /// (source, destination) nodes.
    fn nodes(&self) -> (NodeId, NodeId);
    /// Fill the sender's figures; returns when it stopped sending (or `end`).
    fn report_sender(&self, r: &mut FlowResult, end: Time) -> Time;
    /// Fill the receiver's figures.
    fn report_receiver(&self, r: &mut FlowResult);
}

/// A TCP connection's two ends: the receiver first, right after the
/// flow's delivery fields, so that a delivery touches one run of lines and
/// an ACK another (`#[repr(C)]`: see [`Flow`]).
#[repr(C)]
pub struct TcpPair {
    pub rcv: Receiver,
    pub snd: Sender,
}

/// The endpoints of a flow. TCP's sender and receiver are stored inline
/// (not boxed), so a flow's state is one contiguous record: one fewer cache
/// miss per packet with 10⁵ flows; CBR flows are rare.
#[allow(clippy::large_enum_variant)]
#[repr(u8)]
pub enum Transport {
    Tcp(TcpPair),
    Cbr(Cbr),
}

impl Transport {
    #[inline]
    pub fn ep(&mut self) -> &mut dyn Endpoint {
        match self {
            Transport::Tcp(t) => t,
            Transport::Cbr(c) => c,
        }
    }
    pub fn ep_ref(&self) -> &dyn Endpoint {
        match self {
            Transport::Tcp(t) => t,
            Transport::Cbr(c) => c,
        }
    }
    pub fn sender(&self) -> Option<&Sender> {
        match self {
            Transport::Tcp(t) => Some(&t.snd),
            Transport::Cbr(_) => None,
        }
    }
}

impl Endpoint for TcpPair {
    fn start(&mut self, ctx: &mut TcpCtx) {
        self.snd.start(ctx);
    }
    #[inline]
    fn on_packet(&mut self, p: &Packet, ctx: &mut TcpCtx) -> Option<u64> {
        if p.is_forward() {
            // distinct segments held: in order, or buffered past a hole
            let held = |r: &Receiver| r.rcv_nxt as u64 + r.out_of_order() as u64;
            let before = held(&self.rcv);
            self.rcv.on_packet(p, ctx);
            Some((held(&self.rcv) - before) * p.payload as u64)
        } else {
            self.snd.on_ack(p, ctx);
            None
        }
    }
    fn on_timer(&mut self, k: TimerKind, ctx: &mut TcpCtx) {
        let timer = match k {
            TimerKind::Start => return,
            TimerKind::Rto => &mut self.snd.rto_timer,
            TimerKind::Rack => &mut self.snd.rack_timer,
            TimerKind::Pace => &mut self.snd.pace_timer,
            TimerKind::DelAck => &mut self.rcv.delack_timer,
        };
        match timer.on_event(ctx.now) {
            (true, _) => match k {
                TimerKind::Rto => self.snd.on_rto(ctx),
                TimerKind::Rack => self.snd.on_rack_timer(ctx),
                TimerKind::Pace => self.snd.on_pace(ctx),
                TimerKind::DelAck => self.rcv.on_delack(ctx),
                TimerKind::Start => {}
            },
            (false, TimerAction::Schedule(t)) => ctx.timers.push((t, k)),
            _ => {}
        }
    }
    fn rx_segments(&self) -> Option<u64> {
        Some(self.rcv.rcv_nxt as u64)
    }
    fn nodes(&self) -> (NodeId, NodeId) {
        (self.snd.src_node(), self.snd.dst_node())
    }
    fn report_sender(&self, r: &mut FlowResult, end: Time) -> Time {
        let s = &self.snd;
        r.bytes_acked = s.bytes_acked();
        let c = s.counters();
        r.segments_sent = c.segments_sent;
        r.retransmits = c.retransmits;
        r.timeouts = c.timeouts;
        r.fast_retransmits = c.fast_retransmits;
        r.ecn_reductions = c.ecn_reductions;
        r.final_cwnd = s.cc_state.cwnd;
        r.srtt_s = s.srtt().map(crate::engine::to_secs);
        s.completion_time.unwrap_or(end)
    }
    fn report_receiver(&self, r: &mut FlowResult) {
        r.segments_delivered = self.rcv.rcv_nxt as u64;
    }
}

/// A constant-bit-rate source: its next packet is its `Pace` timer.
impl Endpoint for Cbr {
    fn start(&mut self, ctx: &mut TcpCtx) {
        let t = Cbr::start(self, ctx.now);
        ctx.timers.push((t, TimerKind::Pace));
    }
    fn on_packet(&mut self, p: &Packet, _: &mut TcpCtx) -> Option<u64> {
        self.on_receive(p);
        Some(p.payload as u64)
    }
    fn on_timer(&mut self, k: TimerKind, ctx: &mut TcpCtx) {
        if k == TimerKind::Pace {
            if let Some(next) = self.send(ctx.now, ctx.out) {
                ctx.timers.push((next, TimerKind::Pace));
            }
        }
    }
    fn rx_segments(&self) -> Option<u64> {
        None
    }
    fn nodes(&self) -> (NodeId, NodeId) {
        (self.src_node(), self.dst_node())
    }
    fn report_sender(&self, r: &mut FlowResult, end: Time) -> Time {
        r.segments_sent = self.sent;
        end
    }
    fn report_receiver(&self, r: &mut FlowResult) {
        r.bytes_acked = self.bytes_received;
        r.segments_delivered = self.received;
    }
}

/// A flow as one logical process holds it: its endpoints and what the
/// simulation measures of it. The sending half's fields (`start`,
/// `started`) are meaningful in the process of the source node, the
/// receiving half's (delays, `first_rx`, `rx_done`, `tput`) in that of the
/// destination node.
///
/// `#[repr(C, align(64))]`, hot fields first: what a delivery or a timer
/// touches, then the endpoints, then the cold fields (the layout rule and
/// its tests are in [`super::hints`]; the order has no other effect).
#[repr(C, align(64))]
pub struct Flow {
    // -- hot: every data packet delivered --
    /// One-way delay of data packets delivered: sum, count, max (ns).
    pub owd_sum: u128,
    /// First data packet delivered to the receiver.
    pub first_rx: Option<Time>,
    /// Whole transfer delivered to the receiver.
    pub rx_done: Option<Time>,
    pub owd_n: u64,
    pub owd_max: Time,
    /// Payload bytes that reached the receiver for the first time, per
    /// throughput bin (the bin of their arrival), if recorded.
    pub tput: Option<Vec<u64>>,
    /// Segments of a sized transfer (for the receiver-complete event).
    pub total_segs: Option<u32>,
    // -- hot: every event of the flow --
    /// Global id: the flow's row in the results, the same in every partition.
    pub id: FlowId,
    /// The link the sender's segments leave on: looked up when a
    /// scenario's flow is built, and for a workload's flow at its first
    /// segment (`NO_ROUTE` before; routes are fixed, and the first hop of
    /// a flow's segments depends only on its ends and its id). Segments
    /// leave on it without a route lookup (with 10⁵ hosts the host's
    /// entry is a cache miss), and the cache hints (`sim/hints.rs`) load
    /// its record one event ahead of a timer or a start.
    pub snd_link: u32,
    /// Events the sending and the receiving end scheduled (tie-break
    /// counters).
    pub snd_seq: u64,
    pub rcv_seq: u64,
    pub transport: Transport,
    // -- cold --
    /// (workload, item, role) of a workload's connection.
    pub owner: Option<(u32, u32, Role)>,
    pub start: Time,
    /// The application has started.
    pub started: bool,
    /// The largest before the latest measurement snapshot (`owd_max`
    /// restarts at each; the run's is the larger of the two).
    pub owd_max_before: Time,
    pub group: String,
    pub cc: &'static str,
}

impl Flow {
    pub fn new(
        id: FlowId,
        group: String,
        cc: &'static str,
        transport: Transport,
        start: Time,
        total_segs: Option<u32>,
    ) -> Flow {
        Flow {
            id,
            group,
            cc,
            transport,
            start,
            started: false,
            owd_sum: 0,
            owd_n: 0,
            owd_max: 0,
            owd_max_before: 0,
            total_segs,
            first_rx: None,
            rx_done: None,
            owner: None,
            tput: None,
            snd_seq: 0,
            rcv_seq: 0,
            snd_link: NO_ROUTE,
        }
    }

    /// Record a packet delivered at `now`; true when it completed the
    /// transfer.
    #[inline]
    fn on_delivered(&mut self, p: &Packet, now: Time, bin: usize, ctx: &mut TcpCtx) -> bool {
        if p.is_data() {
            let d = now - p.sent_time;
            self.owd_sum += d as u128;
            self.owd_n += 1;
            self.owd_max = self.owd_max.max(d);
            self.first_rx.get_or_insert(now);
        }
        let Some(bytes) = self.transport.ep().on_packet(p, ctx) else {
            return false;
        };
        if let Some(b) = self.tput.as_mut().and_then(|v| v.get_mut(bin)) {
            *b += bytes;
        }
        let rx = self.transport.ep_ref().rx_segments();
        if self.rx_done.is_none() && rx.zip(self.total_segs).is_some_and(|(r, n)| r >= n as u64) {
            self.rx_done = Some(now);
            return true;
        }
        false
    }

    /// The tie-break of this flow's next timer of kind `k`: the delayed
    /// ACK belongs to the receiving end, every other timer to the sending
    /// end.
    #[inline]
    pub fn tie(&mut self, k: TimerKind) -> TieBreak {
        let (owner, seq) = if k == TimerKind::DelAck {
            (owner::receiver(self.id), &mut self.rcv_seq)
        } else {
            (owner::sender(self.id), &mut self.snd_seq)
        };
        *seq += 1;
        TieBreak {
            owner,
            seq: *seq - 1,
        }
    }
}

/// Segments of an `bytes`-byte transfer with `mss`-byte segments.
pub fn segments(bytes: u64, mss: u32) -> u32 {
    bytes.div_ceil(mss as u64).max(1) as u32
}

impl LogicalProcess {
    /// A packet reached its destination node.
    pub(super) fn deliver(&mut self, shared: &Shared, p: Packet) {
        let lf = LocalFlow(self.flow_ix.get(p.flow));
        let now = self.now;
        let bin = now.checked_div(shared.tput_bin).unwrap_or(0) as usize;
        let f = &mut self.flows[lf.ix()];
        let mut ctx = TcpCtx {
            now,
            out: &mut self.out,
            timers: &mut self.timers,
        };
        let completed = f.on_delivered(&p, now, bin, &mut ctx);
        // read only on completion: `owner` lies in the record's cold part
        let owner = if completed { f.owner } else { None };
        self.flush_endpoint(shared, lf);
        if let (true, Some((w, item, role))) = (completed, owner) {
            for sp in self.workloads[w as usize].transfer_done(item, role, now) {
                self.spawn(shared, w, sp);
            }
        }
    }

    pub(super) fn on_timer(&mut self, shared: &Shared, lf: LocalFlow, k: TimerKind) {
        let f = &mut self.flows[lf.ix()];
        let mut ctx = TcpCtx {
            now: self.now,
            out: &mut self.out,
            timers: &mut self.timers,
        };
        if k == TimerKind::Start {
            if f.started {
                return;
            }
            f.started = true;
            f.transport.ep().start(&mut ctx);
        } else {
            f.transport.ep().on_timer(k, &mut ctx);
        }
        self.flush_endpoint(shared, lf);
    }

    /// Send what an endpoint produced and schedule its timers.
    pub(super) fn flush_endpoint(&mut self, shared: &Shared, lf: LocalFlow) {
        let f = &mut self.flows[lf.ix()];
        for (t, k) in self.timers.drain(..) {
            self.events.schedule_timer(t, f.tie(k), Event::Timer(lf, k));
        }
        let mut out = std::mem::take(&mut self.out);
        for mut p in out.drain(..) {
            p.uid = self.ledger.sent;
            self.ledger.sent += 1;
            let f = &mut self.flows[lf.ix()];
            let li = if p.is_forward() && f.snd_link != NO_ROUTE {
                debug_assert_eq!(f.snd_link, shared.routes.next_link(p.src, p.dst, p.flow));
                f.snd_link
            } else {
                let li = shared.routes.next_link(p.src, p.dst, p.flow);
                if p.is_forward() {
                    f.snd_link = li;
                }
                li
            };
            if li == NO_ROUTE {
                // the host's links are down
                self.drop_unroutable(p);
                continue;
            }
            self.send_on_link(shared, super::ids::LinkId(li), p);
        }
        self.out = out;
    }

    /// Create a flow of workload `w` now. Workloads and both ends of their
    /// connections live in one logical process (the partition keeps them
    /// together), which numbers the new flows after the scenario's.
    fn spawn(&mut self, shared: &Shared, w: u32, sp: Spawn) {
        let fid = self.next_flow;
        self.next_flow = FlowId(fid.0 + 1);
        let (s, d) = (shared.node_ids[&sp.src], shared.node_ids[&sp.dst]);
        let total = segments(sp.bytes, sp.params.mss);
        let t = Transport::Tcp(TcpPair {
            snd: Sender::new(
                sp.params.clone(),
                sp.cc.build_for(sp.params.profile),
                fid,
                s,
                d,
                Some(sp.bytes),
            ),
            rcv: Receiver::new(&sp.params, fid, d, s)
                .with_echo(sp.cc.ecn_echo())
                .with_ext_echo(sp.cc.ext_echo()),
        });
        let mut f = Flow::new(fid, sp.group, sp.cc.name(), t, self.now, Some(total));
        f.owner = Some((w, sp.item, sp.role));
        let lf = LocalFlow(self.flows.len() as u32);
        self.flows.push(f);
        self.flow_ix.set(fid, lf);
        let list = &mut self.wl_flows[w as usize];
        if list.len() <= sp.item as usize {
            list.resize(sp.item as usize + 1, Vec::new());
        }
        list[sp.item as usize].push(fid);
        self.on_timer(shared, lf, TimerKind::Start);
    }

    pub(super) fn on_workload(&mut self, shared: &Shared, w: u32) {
        let (spawns, next) = self.workloads[w as usize].arrive(self.now);
        for sp in spawns {
            self.spawn(shared, w, sp);
        }
        self.hint_sizes();
        if let Some(t) = next {
            let seq = &mut self.wl_seq[w as usize];
            *seq += 1;
            let tie = TieBreak {
                owner: owner::workload(w),
                seq: *seq,
            };
            self.events.schedule(t, tie, Event::Workload(w));
        }
    }
}
