//! Events of the scenario that act on the network during the run
//! (`[[events]]`) beyond a link's service schedule (rate, delay and loss
//! live in the link's model, `net/link_model.rs`): a link going down or
//! coming back up, a flow group stopping, and telling the queue
//! disciplines of a link whose rate changes its new rate
//! ([`crate::aqm::QueueDisc::set_rate`]: RED, ARED, RIO, MaxNet).
//!
//! They run between the simulation's own events: the one of time `t` runs
//! after every event before `t` and before any event at `t` (events of one
//! time in file order). Such runs are sequential (the partition plan
//! refuses scenarios with events), so an action sees the whole network.
//!
//! **Down** (ns-3: `Ipv4::SetDown` on the interfaces at both ends, then
//! `Ipv4GlobalRoutingHelper::RecomputeRoutingTables`): both directions
//! lose the packets they hold — queued, being serialised, propagating —
//! each a `link_down` drop of its direction's port; the routes are rebuilt
//! without the link ([`crate::net::routing::Graph`]), so flows move to
//! another path where one exists, and packets with none are dropped
//! (`conservation.dropped_no_route`). **Up**: the routes are rebuilt with
//! the link again. Down on a link that is down, or up on one that is up,
//! changes nothing.

use super::ids::LinkId;
use super::Simulation;
use crate::engine::Time;
use crate::net::packet::FlowId;
use crate::net::routing::{Graph, NO_ROUTE};
use crate::scenario::Scenario;

/// What an action does.
#[derive(Clone, Debug)]
pub(super) enum Action {
    /// `[[links]]` entry `i` (simplex links `2i`, `2i + 1`) goes down.
    Down(usize),
    /// `[[links]]` entry `i` comes back up.
    Up(usize),
    /// These flows stop sending new data and close.
    Stop(Vec<FlowId>),
    /// Simplex link `l`'s rate is now `rate` bit/s: its discipline is told.
    Rate(usize, u64),
    /// Simplex link `l`'s discipline changes these parameters.
    Queue(usize, toml::value::Table),
}

/// The scenario's actions in the order they run: by time, then file order.
/// `groups[i]`: the flow ids of `[[flows]]` entry `i`.
pub(super) fn plan(sc: &Scenario, groups: &[Vec<FlowId>]) -> Vec<(Time, Action)> {
    if sc.events.is_empty() {
        return Vec::new(); // no link-name table for 10⁵ links to act on nothing
    }
    let links: std::collections::HashMap<String, usize> = (sc.links.iter().enumerate())
        .map(|(i, l)| (l.display_name(), i))
        .collect();
    let mut v = Vec::new();
    for e in &sc.events {
        let a = match (&e.link, &e.flow) {
            (Some(l), _) if e.down == Some(true) => Action::Down(links[l]),
            (Some(l), _) if e.up == Some(true) => Action::Up(links[l]),
            (_, Some(g)) if e.stop == Some(true) => Action::Stop(
                (sc.flows.iter().zip(groups))
                    .filter(|(f, _)| &f.group == g)
                    .flat_map(|(_, ids)| ids.iter().copied())
                    .collect(),
            ),
            (Some(l), _) => {
                // `rate` sets both directions, `rate_ba` b→a (as the
                // link's schedule reads them)
                let i = links[l];
                if let Some(q) = &e.queue {
                    v.push((e.at.0, Action::Queue(2 * i, q.clone())));
                    v.push((e.at.0, Action::Queue(2 * i + 1, q.clone())));
                }
                if let Some(r) = e.rate {
                    v.push((e.at.0, Action::Rate(2 * i, r.0)));
                }
                if let Some(r) = e.rate_ba.or(e.rate) {
                    v.push((e.at.0, Action::Rate(2 * i + 1, r.0)));
                }
                continue;
            }
            _ => continue,
        };
        v.push((e.at.0, a));
    }
    // stable: events at one time keep their file order
    v.sort_by_key(|(t, _)| *t);
    v
}

impl Simulation {
    /// Run the action `a` at `t` (every event before `t` has run).
    pub(super) fn act(&mut self, t: Time, a: &Action) {
        for lp in self.lps.iter_mut() {
            lp.now = lp.now.max(t);
        }
        self.now = self.now.max(t);
        match *a {
            Action::Down(i) | Action::Up(i) => {
                let down = matches!(a, Action::Down(_));
                // no graph: no link ever goes down, so `up` finds it up
                let Some(g) = self.graph.as_mut() else {
                    return;
                };
                if g.up[2 * i] != down {
                    return; // already down (up)
                }
                g.up[2 * i] = !down;
                g.up[2 * i + 1] = !down;
                self.shared.routes = g.routes();
                for lp in self.lps.iter_mut() {
                    if down {
                        for gi in [2 * i, 2 * i + 1] {
                            let li = lp.local_link(LinkId(gi as u32));
                            lp.take_down(li);
                        }
                    }
                    // the senders' first hops are looked up again
                    for f in lp.flows.iter_mut() {
                        f.snd_link = NO_ROUTE;
                    }
                }
            }
            Action::Rate(l, rate) => {
                for lp in self.lps.iter_mut() {
                    let li = lp.local_link(LinkId(l as u32));
                    let sl = &mut lp.links[li.ix()];
                    if sl.tx_lp == lp.id {
                        sl.link.port.disc.set_rate(t, rate);
                    }
                }
            }
            Action::Queue(l, ref q) => {
                for lp in self.lps.iter_mut() {
                    let li = lp.local_link(LinkId(l as u32));
                    let sl = &mut lp.links[li.ix()];
                    if sl.tx_lp == lp.id {
                        for (k, v) in q {
                            // validated on a fresh instance given the same
                            // changes in the same order
                            let r = sl.link.port.disc.set_param(k, v);
                            debug_assert!(r.is_ok(), "{k}: {r:?}");
                        }
                    }
                }
            }
            Action::Stop(ref ids) => {
                for lp in self.lps.iter_mut() {
                    for &fid in ids {
                        lp.stop_flow(fid);
                    }
                }
            }
        }
    }

    /// Run the actions due at or before `limit`, each after the events
    /// before its time.
    pub(super) fn act_until(&mut self, limit: Time, tick: &mut dyn FnMut(Time)) {
        while let Some((t, _)) = self.actions.get(self.next_action) {
            let t = *t;
            if t > limit {
                break;
            }
            if t > 0 {
                self.step_events(t - 1, tick);
            }
            let a = self.actions[self.next_action].1.clone();
            self.next_action += 1;
            self.act(t, &a);
        }
    }
}

/// What rebuilding the routes needs, for a scenario with a link that goes
/// down (else `None`).
pub(super) fn graph(
    sc: &Scenario,
    topo: &crate::scenario::paths::Topology,
    seed: u64,
) -> Option<Graph> {
    (0..sc.links.len())
        .any(|i| sc.link_may_go_down(i))
        .then(|| Graph {
            n: topo.names.len(),
            links: topo.links.iter().map(|l| (l.from, l.to)).collect(),
            is_router: topo.is_router.clone(),
            ecmp_seed: sc.routing.ecmp.then_some(seed),
            up: vec![true; topo.links.len()],
        })
}

impl super::lp::LogicalProcess {
    /// Flow `fid` stops (`[[events]]` `stop`), if its sender is here: a
    /// TCP sender closes after one more segment ([`Sender::stop`]), a CBR
    /// source sends nothing more; a flow not started yet never starts.
    ///
    /// [`Sender::stop`]: crate::tcp::Sender::stop
    pub(super) fn stop_flow(&mut self, fid: FlowId) {
        let i = self.flow_ix.get(fid);
        if i == super::ids::ABSENT {
            return;
        }
        let f = &mut self.flows[i as usize];
        if !f.started {
            // its start timer finds it started and does nothing
            f.started = true;
            return;
        }
        match &mut f.transport {
            super::endpoint::Transport::Tcp(t) => {
                let n = t.snd.stop();
                f.total_segs = Some(n);
            }
            super::endpoint::Transport::Cbr(c) => c.stop(),
        }
    }
}
