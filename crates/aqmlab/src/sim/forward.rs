//! Forwarding: a packet is queued at a link's port, serialised, propagates
//! and reaches the next node, which delivers it or forwards it along its
//! route. A link whose two ends lie in different logical processes is cut:
//! its port and transmitter run in the process of its near end, its pipe in
//! that of its far end, and a packet crosses as a timestamped message
//! ([`Msg`]) handed over at the next window boundary — at least one link
//! delay (the lookahead) before it is due.

use super::event::{owner, Event};
use super::ids::{LinkId, LocalLink, LpId, ABSENT};
use super::lane::{Transit, NO_LANE};
use super::lp::LogicalProcess;
use super::Shared;
use crate::engine::{tx_time, TieBreak, Time};
use crate::net::link::{Link, TxState};
use crate::net::packet::{NodeId, Packet};
use crate::net::routing::{Routes, NO_ROUTE};

/// A link direction as a logical process holds it.
///
/// `#[repr(C, align(64))]`, hot fields first: what an arrival, a
/// transmission's start and end and a send on an idle link touch lie in
/// the record's first lines (the layout rule and its tests are in
/// [`super::hints`]).
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
    pub link: Link,
}

impl SimLink {
    #[inline]
    fn tx_tie(&mut self) -> TieBreak {
        self.tx_seq += 1;
        TieBreak {
            owner: owner::link_tx(self.id),
            seq: self.tx_seq - 1,
        }
    }
    #[inline]
    fn rx_tie(&mut self) -> TieBreak {
        self.rx_seq += 1;
        TieBreak {
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

impl LogicalProcess {
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
    pub(super) fn send_on_link(&mut self, shared: &Shared, id: LinkId, mut pkt: Packet) {
        let li = self.local_link(id);
        let now = self.now;
        let sl = &mut self.links[li.ix()];
        if sl.link.tx_state == TxState::Idle && sl.link.port.may_bypass(&pkt) {
            // an idle link with an empty DropTail queue (with 10⁵ hosts
            // nearly every send of an access link): the packet goes to the
            // transmitter directly, counted as queued and dequeued at once,
            // instead of being written into the queue and read back
            sl.link.port.bypass(&mut pkt, now);
            self.transmit(shared, li, pkt);
        } else {
            sl.link.port.enqueue(pkt, now, &mut self.drops);
            if sl.link.tx_state == TxState::Idle {
                self.start_tx(shared, li);
            } else {
                self.hint_queued(li);
            }
        }
        self.account_drops();
    }

    #[inline]
    fn start_tx(&mut self, shared: &Shared, li: LocalLink) {
        let now = self.now;
        if let Some(p) = self.links[li.ix()].link.port.dequeue(now, &mut self.drops) {
            self.transmit(shared, li, p);
        } else if let Some(at) = self.links[li.ix()].link.port.wake_at() {
            self.wait_tx(li, at.max(now));
        }
    }

    /// The port's discipline holds its packets back until `at` (CAKE's
    /// shaper): the idle transmitter waits, woken by a `TxDone` of its own
    /// at `at` (its tie-break counter, so the order is the same on any
    /// thread count) that sends nothing and asks the port again.
    #[inline(never)]
    fn wait_tx(&mut self, li: LocalLink, at: Time) {
        let sl = &mut self.links[li.ix()];
        sl.link.tx_state = TxState::Waiting;
        let tie = sl.tx_tie();
        self.events.schedule(at, tie, Event::TxDone(li));
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
    fn transmit(&mut self, shared: &Shared, li: LocalLink, p: Packet) {
        let now = self.now;
        let sl = &mut self.links[li.ix()];
        // a constant link computes its serialisation inline; a link whose
        // service varies (rate 0) asks its model
        let d = if sl.link.rate_bps != 0 {
            let d = tx_time(p.size, sl.link.rate_bps);
            sl.link.busy_ns += d;
            d
        } else {
            let d = sl.link.modelled_finish(now, &p) - now;
            // a `trace_once` link past its trace keeps the packet for ever
            if now + d < crate::net::link_model::NEVER {
                sl.link.busy_ns += d;
            }
            d
        };
        sl.link.tx_size = p.size;
        let tie = sl.tx_tie();
        self.events.schedule(now + d, tie, Event::TxDone(li));
        let sl = &mut self.links[li.ix()];
        if sl.lane != NO_LANE && self.taps.is_empty() {
            sl.link.tx_state = TxState::InLane;
            let at = now + d + sl.link.delay;
            self.push_lane(&shared.routes, li, at, p);
        } else {
            sl.link.tx_state = TxState::Held;
            sl.link.tx = Some(p);
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

    pub(super) fn on_tx_done(&mut self, shared: &Shared, li: LocalLink) {
        let now = self.now;
        let sl = &mut self.links[li.ix()];
        if sl.link.tx_state == TxState::Waiting {
            // a wake-up (`wait_tx`): no transmission ended
            sl.link.tx_state = TxState::Idle;
            self.start_tx(shared, li);
            self.account_drops();
            return;
        }
        let state = sl.link.tx_state;
        let held = state == TxState::Held;
        sl.link.tx_state = TxState::Idle;
        if held {
            let p = sl.link.tx.take().expect("transmitting");
            if let Some(Some(_)) = self.taps.get(li.ix()) {
                let tcp = self.tap_params(&p);
                let link = &self.links[li.ix()].link;
                let start = match &link.varying {
                    None => now - tx_time(p.size, link.rate_bps),
                    Some(v) => v.tx_start,
                };
                if let Some(Some(tap)) = self.taps.get_mut(li.ix()) {
                    // Stamped with the start of its transmission.
                    tap(start, &p, tcp.as_deref());
                }
            }
            let sl = &mut self.links[li.ix()];
            let mut at = now + sl.link.delay;
            // `rate_bps` is hot; `varying` lies in the record's cold end
            if sl.link.rate_bps == 0 {
                // the delay in force now; a packet never overtakes the one
                // ahead of it when the delay shrinks
                at = now + sl.link.delay_at(now);
                if let Some(&(last, _)) = sl.link.pipe.back() {
                    at = at.max(last);
                }
            }
            if sl.lane != NO_LANE {
                self.push_lane(&shared.routes, li, at, p);
            } else if sl.rx_lp == self.id {
                self.push_pipe(Some(&shared.routes), li, at, p);
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
        if state != TxState::Aborted {
            sl.link.tx_pkts += 1;
            sl.link.tx_bytes += sl.link.tx_size as u64;
        }
        self.start_tx(shared, li);
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
        if sl.link.pipe.is_empty() {
            let tie = sl.rx_tie();
            let to = sl.link.to;
            self.events.schedule(at, tie, Event::Arrive(li));
            self.hint_pipe(routes, to, &p);
        }
        self.links[li.ix()].link.pipe.push_back((at, p));
    }

    /// A packet enters the delay lane of link `li` (whose far end is
    /// here), due at the far end at `at`.
    #[inline]
    fn push_lane(&mut self, routes: &Routes, li: LocalLink, at: Time, p: Packet) {
        let sl = &mut self.links[li.ix()];
        let tie = sl.rx_tie();
        let (to, lossy, lane) = (sl.link.to, sl.link.loss > 0.0, sl.lane);
        self.hint_lane(routes, to, &p);
        self.lanes.push(
            lane,
            Transit {
                time: at,
                owner: tie.owner,
                seq: tie.seq,
                link: li,
                to,
                lossy,
                pkt: p,
            },
        );
    }

    /// A packet taken from a delay lane reaches the far end of its link:
    /// [`LogicalProcess::on_arrive`] without the pipe.
    pub(super) fn on_transit(&mut self, shared: &Shared, t: Transit) {
        self.reach_far_end(shared, t.link, t.lossy, t.to, t.pkt);
    }

    /// Packet `p` reaches node `to`, the far end of link `li`, unless the
    /// link loses it: a lossy link (one with a loss probability) draws
    /// from its loss stream; a lossless one's record is not read.
    #[inline]
    fn reach_far_end(
        &mut self,
        shared: &Shared,
        li: LocalLink,
        lossy: bool,
        to: NodeId,
        p: Packet,
    ) {
        if lossy {
            let link = &mut self.links[li.ix()].link;
            let loss = if link.rate_bps != 0 {
                link.loss
            } else {
                link.loss_at(self.now)
            };
            if link.loss_rng.chance(loss) {
                link.lost += 1;
                self.drops.push(p);
                self.account_drops();
                return;
            }
        }
        self.receive(shared, to, p);
    }

    /// A packet that crossed a cut link from another process.
    pub(super) fn accept(&mut self, m: Msg) {
        self.ledger.cut_in += 1;
        let li = self.local_link(m.link);
        self.push_pipe(None, li, m.at, m.pkt);
    }

    pub(super) fn on_arrive(&mut self, shared: &Shared, li: LocalLink) {
        let sl = &mut self.links[li.ix()];
        if sl.link.stale != 0 && Self::stale_arrival(&mut sl.link, self.now) {
            return;
        }
        let (_, p) = sl.link.pipe.pop_front().expect("pipe");
        if let Some((t, _)) = sl.link.pipe.front() {
            let t = *t;
            let tie = sl.rx_tie();
            self.events.schedule(t, tie, Event::Arrive(li));
            let sl = &self.links[li.ix()];
            let q = &sl.link.pipe.front().expect("just read").1;
            self.hint_pipe(Some(&shared.routes), sl.link.to, q);
        }
        let link = &self.links[li.ix()].link;
        let (lossy, to) = (link.loss > 0.0, link.to);
        self.reach_far_end(shared, li, lossy, to, p);
    }

    fn receive(&mut self, shared: &Shared, node: NodeId, p: Packet) {
        if p.dst == node {
            self.ledger.delivered += 1;
            self.deliver(shared, p);
        } else {
            let li = shared.routes.next_link(node, p.dst, p.flow);
            if li == NO_ROUTE {
                // validated routes exist at the start; a link down can
                // leave none
                self.drop_unroutable(p);
                return;
            }
            self.send_on_link(shared, LinkId(li), p);
        }
    }

    /// A packet with no route from where it is (every path to its
    /// destination is down): dropped, counted in `no_route` and in its
    /// flow's drops.
    #[inline(never)]
    pub(super) fn drop_unroutable(&mut self, p: Packet) {
        self.no_route += 1;
        self.drops.push(p);
        self.account_drops();
    }

    /// Whether the arrival event of link `link` running at `now` is one
    /// the link's going down left behind (its packet is gone): it is then
    /// struck off. Events of one owner at one time run in the order they
    /// were scheduled, so a stale event runs before any arrival at the
    /// same time scheduled after the link came back.
    #[inline(never)]
    fn stale_arrival(link: &mut Link, now: Time) -> bool {
        match link.stale_at.iter().position(|&t| t == now) {
            Some(i) => {
                link.stale_at.swap_remove(i);
                link.stale -= 1;
                true
            }
            None => false,
        }
    }

    /// Link `li` goes down (it is held whole by this process: runs with
    /// links going down are sequential). Its queue is emptied, the packet
    /// being serialised and those propagating are lost, each counted as a
    /// link-down drop of its port; the transmitter stays occupied until
    /// the aborted serialisation would have ended.
    pub(super) fn take_down(&mut self, li: LocalLink) {
        let now = self.now;
        let sl = &mut self.links[li.ix()];
        debug_assert!(sl.tx_lp == self.id && sl.rx_lp == self.id);
        let link = &mut sl.link;
        link.port.drain_down(now, &mut self.drops);
        match link.tx_state {
            TxState::Held => {
                let p = link.tx.take().expect("transmitting");
                link.port.lose_on_down(now, p, &mut self.drops);
                link.tx_state = TxState::Aborted;
            }
            TxState::InLane => unreachable!("a link that can go down has no delay lane"),
            // a waiting transmitter's wake-up finds the emptied queue
            TxState::Idle | TxState::Aborted | TxState::Waiting => {}
        }
        if let Some(&(t, _)) = link.pipe.front() {
            // its arrival event is scheduled: struck off when it runs
            link.stale_at.push(t);
            link.stale += 1;
        }
        while let Some((_, p)) = link.pipe.pop_front() {
            link.port.lose_on_down(now, p, &mut self.drops);
        }
        self.account_drops();
    }
}
