//! Forwarding: a packet is queued at a link's port, serialised, propagates
//! and reaches the next node, which delivers it or forwards it along its
//! route. A link whose two ends lie in different logical processes is cut:
//! its port and transmitter run in the process of its near end, its pipe in
//! that of its far end, and a packet crosses as a timestamped message
//! ([`Msg`]) handed over at the next window boundary — at least one link
//! delay (the lookahead) before it is due.

use super::endpoint::Side;
use super::event::{owner, Ev};
use super::ids::{FlowIx, LinkId, LocalFlow, LocalLink, LpId, ABSENT};
use super::lane::{Transit, NO_LANE};
use super::lp::Lp;
use super::Shared;
use crate::engine::{tx_time, Tie, Time};
use crate::net::link::{Link, TxState};
use crate::net::packet::{NodeId, Packet};
use crate::net::routing::{Routes, NO_ROUTE};

/// A link direction as a logical process holds it.
///
/// `#[repr(C, align(64))]` with [`Link`] and its `Port` laid out hot-first
/// (see ARCHITECTURE, Memory layout): a send on an idle link whose
/// DropTail queue is empty, and the transmission's end, touch the record's
/// first [`SimLink::TX_END`] bytes (tie-break counters, id, far end, loss,
/// delay, rate, the transmitter's state and counters, the port's count of
/// such packets and the discipline's limit and count: three cache lines;
/// on a link with a delay lane the packet goes straight into the lane, see
/// `Lp::transmit`, elsewhere into `tx` after the pipe);
/// an arrival from a pipe touches the first line and the pipe's header
/// ([`SimLink::RX_END`]); a packet that waits in the queue also touches
/// the port's statistics, the discipline's buffers and the queue-length
/// integral after them. [`SimLink::prefetch_rx`] and
/// [`SimLink::prefetch_tx`] bring in exactly the lines of the first two.
#[repr(C, align(64))]
pub struct SimLink {
    /// Events the far end and the transmitter scheduled (tie-break counters).
    pub rx_seq: u64,
    pub tx_seq: u64,
    pub id: LinkId,
    /// The process running the far end (pipe, loss, next node).
    pub rx_lp: LpId,
    /// The process running the near end (port, transmitter).
    pub tx_lp: LpId,
    /// The delay lane its packets propagate in ([`super::lane`]), or
    /// [`NO_LANE`]: its own pipe.
    pub lane: u8,
    pub l: Link,
}

impl SimLink {
    /// Bytes from the record's start that an arrival reads besides the
    /// pipe (tie-break counter, far end, loss).
    pub const RX_END: usize = std::mem::offset_of!(SimLink, l) + std::mem::offset_of!(Link, delay);
    /// Where the pipe's header lies, and its end.
    const PIPE_AT: usize = std::mem::offset_of!(SimLink, l) + std::mem::offset_of!(Link, pipe);
    const PIPE_END: usize =
        Self::PIPE_AT + std::mem::size_of::<std::collections::VecDeque<(Time, Packet)>>();
    /// Where a port lies in the record.
    const PORT_AT: usize = std::mem::offset_of!(SimLink, l) + std::mem::offset_of!(Link, port);
    /// Bytes from the record's start that a send on an idle link with an
    /// empty DropTail queue, and its transmission's end, touch up to the
    /// discipline: the transmitter, the classifier and the statistics'
    /// hot prefix.
    pub const TX_END: usize = Self::PORT_AT
        + std::mem::offset_of!(crate::net::link::Port, stats)
        + crate::net::port_stats::PortStats::HOT_BYTES;
    /// Where the discipline lies, and the end of its bytes a bypass reads.
    const DISC_AT: usize = Self::PORT_AT + std::mem::offset_of!(crate::net::link::Port, disc);
    const DISC_END: usize = Self::DISC_AT + crate::net::link::Disc::HOT_BYTES;
    /// The end of what a queued packet touches besides (see
    /// [`SimLink::prefetch_queue`]).
    const QUEUE_END: usize = Self::PORT_AT + std::mem::offset_of!(crate::net::link::Port, rng);

    /// Prefetch the lines an arrival from this link's pipe touches (a
    /// hint; nothing is read from the record).
    #[inline(always)]
    pub fn prefetch_rx(&self) {
        let p = self as *const SimLink as *const u8;
        crate::engine::prefetch_range(p, p.wrapping_add(Self::RX_END));
        crate::engine::prefetch_range(
            p.wrapping_add(Self::PIPE_AT),
            p.wrapping_add(Self::PIPE_END),
        );
    }

    /// Prefetch the lines a transmission's start or end touches.
    #[inline(always)]
    pub fn prefetch_tx(&self) {
        let p = self as *const SimLink as *const u8;
        crate::engine::prefetch_range(p, p.wrapping_add(Self::TX_END));
        crate::engine::prefetch_range(
            p.wrapping_add(Self::DISC_AT),
            p.wrapping_add(Self::DISC_END),
        );
    }

    /// Prefetch the lines after those of [`SimLink::prefetch_tx`] that a
    /// packet queued behind the busy transmitter touches, and its dequeue
    /// at the transmission's end: the queue's statistics, the discipline's
    /// packet and the queue-length integral (the port up to its random
    /// stream).
    #[inline(always)]
    pub fn prefetch_queue(&self) {
        let p = self as *const SimLink as *const u8;
        crate::engine::prefetch_range(
            p.wrapping_add(Self::TX_END),
            p.wrapping_add(Self::QUEUE_END),
        );
    }
}

impl SimLink {
    #[inline]
    fn tx_tie(&mut self) -> Tie {
        self.tx_seq += 1;
        Tie {
            owner: owner::link_tx(self.id),
            seq: self.tx_seq - 1,
        }
    }
    #[inline]
    fn rx_tie(&mut self) -> Tie {
        self.rx_seq += 1;
        Tie {
            owner: owner::link_rx(self.id),
            seq: self.rx_seq - 1,
        }
    }
}

/// A packet crossing a cut link: it reaches the far end of `link` at `at`.
#[derive(Clone, Debug)]
pub struct Msg {
    pub to: LpId,
    pub link: LinkId,
    pub at: Time,
    pub pkt: Packet,
}

impl Lp {
    #[inline]
    pub(super) fn local_link(&self, id: LinkId) -> LocalLink {
        if self.links_identity {
            return LocalLink(id.0);
        }
        let i = self.link_ix[id.ix()];
        debug_assert_ne!(i, ABSENT, "link {} not held by {:?}", id.0, self.id);
        LocalLink(i)
    }

    #[inline]
    pub(super) fn send_on_link(&mut self, sh: &Shared, id: LinkId, mut pkt: Packet) {
        let li = self.local_link(id);
        let now = self.now;
        let sl = &mut self.links[li.ix()];
        if sl.l.tx_state == TxState::Idle && sl.l.port.may_bypass(&pkt) {
            // an idle link with an empty DropTail queue (with 10⁵ hosts
            // nearly every send of an access link): the packet goes to the
            // transmitter directly, counted as queued and dequeued at once,
            // instead of being written into the queue and read back
            sl.l.port.bypass(&mut pkt, now);
            self.transmit(sh, li, pkt);
        } else {
            sl.l.port.enqueue(pkt, now, &mut self.drops);
            if sl.l.tx_state == TxState::Idle {
                self.start_tx(sh, li);
            }
        }
        self.account_drops();
    }

    #[inline]
    fn start_tx(&mut self, sh: &Shared, li: LocalLink) {
        let now = self.now;
        if let Some(p) = self.links[li.ix()].l.port.dequeue(now, &mut self.drops) {
            self.transmit(sh, li, p);
        }
    }

    /// Start serialising `p` on the idle transmitter of link `li`.
    ///
    /// On a link with a delay lane, while no packet tap is set, the packet
    /// enters the lane now, due at the far end one serialisation time and
    /// one delay from now, and its transmission's end only counts it and
    /// frees the transmitter: the link's record does not hold the packet
    /// (112 bytes, two of its cache lines). Its arrival's key is the one
    /// it got when it entered the lane at the end of its serialisation —
    /// the far end's counter, taken in the same order, as the link sends
    /// in order — and the lane keeps its packets in key order, so the
    /// events run in the same order as before. Elsewhere (a link with its
    /// own pipe, a cut link, a tap that is called with the packet at its
    /// transmission's end) the record holds it until then.
    #[inline]
    fn transmit(&mut self, sh: &Shared, li: LocalLink, p: Packet) {
        let now = self.now;
        let sl = &mut self.links[li.ix()];
        let d = tx_time(p.size, sl.l.rate_bps);
        sl.l.tx_size = p.size;
        sl.l.busy_ns += d;
        let tie = sl.tx_tie();
        self.events.schedule(now + d, tie, Ev::TxDone(li));
        let sl = &mut self.links[li.ix()];
        if sl.lane != NO_LANE && self.taps.is_empty() {
            sl.l.tx_state = TxState::InLane;
            let at = now + d + sl.l.delay;
            self.push_lane(&sh.routes, li, at, p);
        } else {
            sl.l.tx_state = TxState::Held;
            sl.l.tx = Some(p);
        }
    }

    #[inline]
    pub(super) fn account_drops(&mut self) {
        while let Some(p) = self.drops.pop() {
            self.ledger.dropped += 1;
            self.drop_log.push(p.flow.0);
            if self.drop_log.len() == super::lp::DROP_LOG {
                self.fold_drops();
            }
        }
    }

    /// Add the logged drops to the per-flow counters.
    #[inline(never)]
    pub(super) fn fold_drops(&mut self) {
        for &f in &self.drop_log {
            let f = f as usize;
            if self.flow_drops.len() <= f {
                self.flow_drops.resize(f + 1, 0);
            }
            self.flow_drops[f] += 1;
        }
        self.drop_log.clear();
    }

    /// The flow's TCP parameters as a packet tap gets them (`None`: CBR or
    /// not held here).
    fn tap_params(&self, p: &Packet) -> Option<std::sync::Arc<crate::tcp::TcpParams>> {
        match self.flow_ix.get(p.flow) {
            i if i != ABSENT => self.flows[i as usize]
                .transport
                .sender()
                .map(|s| s.params.clone()),
            _ => None,
        }
    }

    pub(super) fn on_tx_done(&mut self, sh: &Shared, li: LocalLink) {
        let now = self.now;
        let sl = &mut self.links[li.ix()];
        let held = sl.l.tx_state == TxState::Held;
        sl.l.tx_state = TxState::Idle;
        if held {
            let p = sl.l.tx.take().expect("transmitting");
            if let Some(Some(_)) = self.taps.get(li.ix()) {
                let tcp = self.tap_params(&p);
                let rate = self.links[li.ix()].l.rate_bps;
                if let Some(Some(tap)) = self.taps.get_mut(li.ix()) {
                    // Stamped with the start of its transmission.
                    tap(now - tx_time(p.size, rate), &p, tcp.as_deref());
                }
            }
            let sl = &mut self.links[li.ix()];
            let at = now + sl.l.delay;
            if sl.lane != NO_LANE {
                self.push_lane(&sh.routes, li, at, p);
            } else if sl.rx_lp == self.id {
                self.push_pipe(Some(&sh.routes), li, at, p);
            } else {
                self.ledger.cut_out += 1;
                self.outbox.push(Msg {
                    to: sl.rx_lp,
                    link: sl.id,
                    at,
                    pkt: p,
                });
            }
        }
        let sl = &mut self.links[li.ix()];
        sl.l.tx_pkts += 1;
        sl.l.tx_bytes += sl.l.tx_size as u64;
        self.start_tx(sh, li);
        self.account_drops();
    }

    /// A packet enters the pipe of a link whose far end is here.
    #[inline]
    pub(super) fn push_pipe(
        &mut self,
        routes: Option<&Routes>,
        li: LocalLink,
        at: Time,
        p: Packet,
    ) {
        let sl = &mut self.links[li.ix()];
        if sl.l.pipe.is_empty() {
            let f = delivered_to(&self.flow_ix, &sl.l, &p);
            let side = Side::of_packet(&p);
            let tie = sl.rx_tie();
            self.events.schedule(at, tie, Ev::Arrive(li, f, side));
            let to = sl.l.to;
            if let Some(x) = self.flows.get(f.ix()) {
                x.prefetch_for(side);
            }
            if let Some(r) = routes {
                self.prefetch_onward(r, to, &p);
            }
        }
        self.links[li.ix()].l.pipe.push_back((at, p));
    }

    /// A packet enters the delay lane of link `li` (whose far end is
    /// here), due at the far end at `at`.
    #[inline]
    fn push_lane(&mut self, routes: &Routes, li: LocalLink, at: Time, p: Packet) {
        let sl = &mut self.links[li.ix()];
        let tie = sl.rx_tie();
        let flow = delivered_to(&self.flow_ix, &sl.l, &p);
        let side = Side::of_packet(&p);
        let (to, lossy, lane) = (sl.l.to, sl.l.loss > 0.0, sl.lane);
        // the flow's record, as `push_pipe` does for a packet entering an
        // empty pipe, and the route entries of the link it leaves on next,
        // whose record is prefetched [`super::lp::LANE_AHEAD`] arrivals
        // before its own (by then the lookup finds them in cache)
        if let Some(x) = self.flows.get(flow.ix()) {
            x.prefetch_for(side);
        }
        if let Some(d) = onward_dst(to, &p) {
            routes.prefetch_lookup(to, d);
        }
        self.lanes.push(
            lane,
            Transit {
                time: at,
                owner: tie.owner,
                seq: tie.seq,
                link: li,
                flow,
                to,
                side,
                lossy,
                pkt: p,
            },
        );
    }

    /// A packet taken from a delay lane reaches the far end of its link:
    /// [`Lp::on_arrive`] without the pipe.
    pub(super) fn on_transit(&mut self, sh: &Shared, t: Transit) {
        self.reach_far_end(sh, t.link, t.lossy, t.to, t.pkt);
    }

    /// Packet `p` reaches node `to`, the far end of link `li`, unless the
    /// link loses it: a lossy link (one with a loss probability) draws
    /// from its loss stream; a lossless one's record is not read.
    #[inline]
    fn reach_far_end(&mut self, sh: &Shared, li: LocalLink, lossy: bool, to: NodeId, p: Packet) {
        if lossy {
            let link = &mut self.links[li.ix()].l;
            if link.loss_rng.chance(link.loss) {
                link.lost += 1;
                self.drops.push(p);
                self.account_drops();
                return;
            }
        }
        self.receive(sh, to, p);
    }

    /// Prefetch the record of the link the packet `p` will be sent on once
    /// it reaches `node` (a hint, with no effect on results): the next hop
    /// when `node` forwards it, or, for an ACK delivered to its sender, the
    /// link the sender's next segment leaves on, with its queue's lines
    /// (in slow start an ACK sends two segments, and the second waits in
    /// the queue). With 10⁵ hosts these
    /// records do not stay in cache between a host's packets. Only where a
    /// link's local index needs no table read (a sequential run).
    #[inline]
    pub(super) fn prefetch_onward(&self, routes: &Routes, node: NodeId, p: &Packet) {
        if !self.links_identity {
            return;
        }
        if let Some(d) = onward_dst(node, p) {
            // an ACK that opens the window by more than one segment (slow
            // start) sends a second one into the link's queue
            let ack = p.dst == node;
            self.prefetch_link(routes.next_link(node, d, p.flow), ack);
        }
    }

    /// Prefetch the record of global link `id` where its local index is
    /// the id itself (a hint, with no effect on results); with `queue`,
    /// also the lines a packet queued there touches.
    #[inline]
    pub(super) fn prefetch_link(&self, id: u32, queue: bool) {
        if self.links_identity {
            if let Some(x) = self.links.get(id as usize) {
                x.prefetch_tx();
                if queue {
                    x.prefetch_queue();
                }
            }
        }
    }

    /// A packet that crossed a cut link from another process.
    pub(super) fn accept(&mut self, m: Msg) {
        self.ledger.cut_in += 1;
        let li = self.local_link(m.link);
        self.push_pipe(None, li, m.at, m.pkt);
    }

    pub(super) fn on_arrive(&mut self, sh: &Shared, li: LocalLink) {
        let sl = &mut self.links[li.ix()];
        let (_, p) = sl.l.pipe.pop_front().expect("pipe");
        if let Some((t, q)) = sl.l.pipe.front() {
            let f = delivered_to(&self.flow_ix, &sl.l, q);
            let (t, side) = (*t, Side::of_packet(q));
            let tie = sl.rx_tie();
            self.events.schedule(t, tie, Ev::Arrive(li, f, side));
            // the delivery is at least one packet spacing away: bring in
            // the lines of the flow's record it will touch now, and the
            // record of the link it will leave on
            if let Some(x) = self.flows.get(f.ix()) {
                x.prefetch_for(side);
            }
            let sl = &self.links[li.ix()];
            let q = &sl.l.pipe.front().expect("just read").1;
            self.prefetch_onward(&sh.routes, sl.l.to, q);
        }
        let link = &self.links[li.ix()].l;
        let (lossy, to) = (link.loss > 0.0, link.to);
        self.reach_far_end(sh, li, lossy, to, p);
    }

    fn receive(&mut self, sh: &Shared, node: NodeId, p: Packet) {
        if p.dst == node {
            self.ledger.delivered += 1;
            self.deliver(sh, p);
        } else {
            let li = sh.routes.next_link(node, p.dst, p.flow);
            debug_assert_ne!(li, NO_ROUTE, "validated routes");
            self.send_on_link(sh, LinkId(li), p);
        }
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

/// The local flow a packet on `link` is delivered to at the link's far end,
/// or `ABSENT` when that node forwards it (for prefetching only).
#[inline]
fn delivered_to(flow_ix: &FlowIx, link: &Link, p: &Packet) -> LocalFlow {
    if p.dst == link.to {
        LocalFlow(flow_ix.get(p.flow))
    } else {
        LocalFlow(ABSENT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    /// An arrival names its flow's side in the event (so that the event
    /// loop need not read the pipe's buffer to prefetch the flow's
    /// record) without making the event-queue entries any larger.
    #[test]
    fn an_arrival_event_carries_its_side_in_twelve_bytes() {
        assert_eq!(size_of::<Ev>(), 12);
    }

    /// The fields an arrival reads or writes lie in the lines
    /// `prefetch_rx` brings in (the record's first line and the pipe's
    /// header), those of a send on an idle link with an empty DropTail
    /// queue (the transmission's start and end, the port's count of such
    /// packets and the discipline's limit and count) in `prefetch_tx`'s,
    /// the record's first three; the port's statistics, the queue's
    /// buffers, the packet held by a link without a lane and the cold
    /// fields after both.
    #[test]
    fn hot_fields_lie_where_the_prefetch_looks() {
        assert_eq!(align_of::<SimLink>(), 64, "records start on a cache line");
        let end = |o: usize, n: usize| o + n;
        let rx = [
            end(offset_of!(SimLink, rx_seq), 8),
            end(offset_of!(SimLink, id), 4),
            end(offset_of!(SimLink, l.loss), 8),
            end(offset_of!(SimLink, l.to), 4),
        ];
        for e in rx {
            assert!(e <= SimLink::RX_END, "{e} > {}", SimLink::RX_END);
        }
        const { assert!(SimLink::RX_END <= 64) };
        assert_eq!(SimLink::PIPE_AT, offset_of!(SimLink, l.pipe));
        assert_eq!(
            SimLink::PIPE_END.div_ceil(64) - SimLink::PIPE_AT / 64,
            1,
            "the pipe's header lies in one line: at {} (port at {}, disc at {}, port size {})",
            SimLink::PIPE_AT,
            SimLink::PORT_AT,
            SimLink::DISC_AT,
            size_of::<crate::net::link::Port>()
        );
        let tx = [
            end(offset_of!(SimLink, tx_seq), 8),
            end(offset_of!(SimLink, rx_lp), 2),
            end(offset_of!(SimLink, l.rate_bps), 8),
            end(offset_of!(SimLink, l.delay), 8),
            end(offset_of!(SimLink, l.tx_pkts), 8),
            end(offset_of!(SimLink, l.tx_bytes), 8),
            end(offset_of!(SimLink, l.busy_ns), 8),
            end(offset_of!(SimLink, l.tx_state), 1),
            end(offset_of!(SimLink, l.tx_size), 4),
            end(offset_of!(SimLink, l.port.classifier), 8),
        ];
        for e in tx {
            assert!(e <= SimLink::TX_END, "{e} > {}", SimLink::TX_END);
        }
        assert_eq!(SimLink::DISC_AT, offset_of!(SimLink, l.port.disc));
        // the lines of the two ranges a bypass touches
        let mut lines: Vec<usize> = (0..SimLink::TX_END.div_ceil(64)).collect();
        lines.extend(SimLink::DISC_AT / 64..SimLink::DISC_END.div_ceil(64));
        lines.dedup();
        assert!(lines.len() <= 3, "{lines:?}");
        let cold = [
            offset_of!(SimLink, l.pipe),
            offset_of!(SimLink, l.tx),
            offset_of!(SimLink, l.lost),
            offset_of!(SimLink, l.port.rng),
            offset_of!(SimLink, l.port.disc) + crate::net::link::Disc::HOT_BYTES,
            offset_of!(SimLink, l.monitored),
            offset_of!(SimLink, l.name),
            offset_of!(SimLink, l.loss_rng),
        ];
        for o in cold {
            assert!(o >= SimLink::TX_END, "{o} < {}", SimLink::TX_END);
        }
        const { assert!(SimLink::TX_END.div_ceil(64) < size_of::<SimLink>() / 64) };
    }
}
