//! Shortest-path routing, computed at build time and again whenever a link
//! goes down or comes back up (`[[events]]` `down`/`up`, [`Graph`]).
//!
//! Metric: hop count (as ns-3's global routing with unit interface metrics).
//! Only routers forward: a path may pass through routers but not through
//! hosts. Ties are broken deterministically by link declaration order: the
//! next hop is the first link found by a breadth-first search from the
//! destination over the links in declaration order.
//!
//! Memory is O(routers × attachment points + nodes + links), never
//! node × node:
//! - a host with exactly one outgoing link sends everything on it and has
//!   no table;
//! - a host whose only incoming link comes from a router `a` is reached
//!   through `a`: every other node's next hop towards it is its next hop
//!   towards `a` (the search from the host visits `a` first and then runs
//!   exactly as a search from `a`), and `a` delivers on that link. All the
//!   hosts of a router share one column;
//! - other destinations (a host with several links, or one fed by a host)
//!   get their own column;
//! - rows exist only for nodes that choose between links: routers and
//!   hosts with several outgoing links.
//!
//! A star of 10⁵ hosts on two routers has 2 rows × 2 columns.
//!
//! **ECMP** (optional, [`Routes::compute_ecmp`]): where a node has several
//! outgoing links on shortest paths, a flow picks one by hashing. The hash
//! is `h = splitmix64(seed ⊕ splitmix64(flow << 32 | node))` (the SplitMix64
//! finaliser of [`crate::engine::splitmix64`]), and the choice is link
//! `⌊h · n / 2⁶⁴⌋` of the `n` equal-cost links in declaration order. It is a
//! function of the run seed, the flow id and the node (so a flow's hops at
//! different switches are independent, avoiding hash polarisation), so a
//! flow's packets — data and ACKs alike, each direction on its own path —
//! stay on one path and a run is deterministic per seed.
//!
//! **Links down** ([`Graph::routes`]): the tables are rebuilt from scratch
//! over the links that are up, as ns-3's global routing does on
//! `Ipv4GlobalRoutingHelper::RecomputeRoutingTables` after an
//! `Ipv4::SetDown` (only interfaces that are up enter its link-state
//! database). A host whose every link is down has no route
//! ([`NO_ROUTE`]); a host left with one link up sends everything on it.

use crate::engine::splitmix64;
use crate::net::packet::{FlowId, NodeId};
use std::collections::VecDeque;

pub const NO_ROUTE: u32 = u32::MAX;
const NONE: u32 = u32::MAX;

/// Next-hop tables (see the module documentation for their shape).
pub struct Routes {
    /// Per node: its only outgoing link when it is a host with one link.
    single: Vec<u32>,
    /// Per node: its row in `table`, or NONE.
    row: Vec<u32>,
    /// Per destination node: its own column, or NONE.
    col: Vec<u32>,
    /// Per destination: (attachment router, link router → destination), or
    /// (NONE, NONE) when the destination has its own column.
    attach: Vec<(u32, u32)>,
    keys: usize,
    /// `table[row * keys + col]`: the next link, or NO_ROUTE.
    table: Vec<u32>,
    ecmp: Option<Ecmp>,
}

/// What rebuilding the routes needs, kept by a simulation whose links go
/// down and up: the simplex links, which nodes forward, the ECMP seed (if
/// ECMP is on) and which links are up.
pub struct Graph {
    pub n: usize,
    pub links: Vec<(NodeId, NodeId)>,
    pub is_router: Vec<bool>,
    pub ecmp_seed: Option<u64>,
    /// Per simplex link: whether it is up.
    pub up: Vec<bool>,
}

impl Graph {
    /// The routes over the links that are up.
    pub fn routes(&self) -> Routes {
        let all_up = self.up.iter().all(|&u| u);
        let up = (!all_up).then_some(self.up.as_slice());
        Routes::build(self.n, &self.links, &self.is_router, self.ecmp_seed, up)
    }
}

/// Equal-cost alternatives per table cell.
struct Ecmp {
    seed: u64,
    /// `alts[start[c]..start[c + 1]]`: cell `c`'s equal-cost links (empty
    /// where there is only one).
    start: Vec<u32>,
    alts: Vec<u32>,
}

impl Routes {
    /// `links[i] = (from, to)` for simplex link `i`; `is_router[v]` tells
    /// whether node `v` forwards.
    pub fn compute(n: usize, links: &[(NodeId, NodeId)], is_router: &[bool]) -> Routes {
        Self::build(n, links, is_router, None, None)
    }

    /// As [`Routes::compute`], with flows spread over equal-cost next hops by
    /// the hash of the module documentation.
    pub fn compute_ecmp(
        n: usize,
        links: &[(NodeId, NodeId)],
        is_router: &[bool],
        seed: u64,
    ) -> Routes {
        Self::build(n, links, is_router, Some(seed), None)
    }

    /// `up[i]`: whether simplex link `i` carries packets (all do when
    /// `None`); a link that is down is left out of every table.
    fn build(
        n: usize,
        links: &[(NodeId, NodeId)],
        is_router: &[bool],
        ecmp_seed: Option<u64>,
        up: Option<&[bool]>,
    ) -> Routes {
        // The tables hold raw node indices; the ids stop at this boundary.
        let links: Vec<(u32, u32)> = links.iter().map(|&(a, b)| (a.0, b.0)).collect();
        let into = Adjacency::new(n, &links, up, |&(_, to)| to); // links entering each node
        let out = Adjacency::new(n, &links, up, |&(from, _)| from);
        let mut single = vec![NONE; n];
        let mut row = vec![NONE; n];
        let mut rows = 0u32;
        for v in 0..n {
            let out_v = out.of(v);
            if !is_router[v] && out_v.len() == 1 {
                single[v] = out_v[0];
            } else if is_router[v] || out_v.len() > 1 {
                row[v] = rows;
                rows += 1;
            }
        }
        // columns: attachment routers first seen, and self-keyed destinations
        let mut col = vec![NONE; n];
        let mut attach = vec![(NONE, NONE); n];
        let mut starts: Vec<u32> = Vec::new(); // the search origin of each column
        for v in 0..n {
            if is_router[v] {
                continue;
            }
            match into.of(v) {
                &[li] if is_router[links[li as usize].0 as usize] => {
                    let a = links[li as usize].0;
                    attach[v] = (a, li);
                    if col[a as usize] == NONE {
                        col[a as usize] = starts.len() as u32;
                        starts.push(a);
                    }
                }
                _ => {
                    col[v] = starts.len() as u32;
                    starts.push(v as u32);
                }
            }
        }
        let keys = starts.len();
        let mut table = vec![NO_ROUTE; rows as usize * keys];
        let mut ecmp_lists: Vec<Vec<u32>> = Vec::new();
        let mut dist = vec![u32::MAX; n];
        let mut q = VecDeque::new();
        for (k, &s) in starts.iter().enumerate() {
            let s = s as usize;
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[s] = 0;
            q.clear();
            q.push_back(s);
            let mut reached = Vec::new();
            while let Some(u) = q.pop_front() {
                if u != s && !is_router[u] {
                    continue; // hosts do not forward
                }
                for &li in into.of(u) {
                    let v = links[li as usize].0 as usize;
                    if dist[v] == u32::MAX {
                        dist[v] = dist[u] + 1;
                        if row[v] != NONE {
                            table[row[v] as usize * keys + k] = li;
                            reached.push(v);
                        }
                        if is_router[v] {
                            q.push_back(v);
                        }
                    }
                }
            }
            if ecmp_seed.is_some() {
                for v in reached {
                    let alts: Vec<u32> = (out.of(v).iter())
                        .copied()
                        .filter(|&li| {
                            let u = links[li as usize].1 as usize;
                            dist[u] != u32::MAX
                                && dist[u] + 1 == dist[v]
                                && (u == s || is_router[u])
                        })
                        .collect();
                    if alts.len() > 1 {
                        let cell = row[v] as usize * keys + k;
                        if ecmp_lists.len() <= cell {
                            ecmp_lists.resize(table.len(), Vec::new());
                        }
                        ecmp_lists[cell] = alts;
                    }
                }
            }
        }
        let ecmp = ecmp_seed.map(|seed| {
            let mut start = Vec::with_capacity(table.len() + 1);
            let mut alts = Vec::new();
            start.push(0);
            for c in 0..table.len() {
                if let Some(l) = ecmp_lists.get(c) {
                    alts.extend_from_slice(l);
                }
                start.push(alts.len() as u32);
            }
            Ecmp { seed, start, alts }
        });
        Routes {
            single,
            row,
            col,
            attach,
            keys,
            table,
            ecmp,
        }
    }

    /// The addresses of the entries [`Routes::next_link`] reads first for
    /// `node` and `dst` (for a cache hint: with 10⁵ hosts a host's entries
    /// are cache misses).
    #[inline]
    pub fn first_entries(
        &self,
        node: NodeId,
        dst: NodeId,
    ) -> (Option<*const u8>, Option<*const u8>) {
        (
            self.single
                .get(node.ix())
                .map(|x| x as *const u32 as *const u8),
            self.attach
                .get(dst.ix())
                .map(|x| x as *const (u32, u32) as *const u8),
        )
    }

    /// The link on which `node` sends a packet of `flow` towards `dst`, or
    /// [`NO_ROUTE`]. A host with one link always answers that link: whether
    /// the destination is reachable is checked by walking the whole path
    /// (`scenario::topology`).
    #[inline]
    pub fn next_link(&self, node: NodeId, dst: NodeId, flow: FlowId) -> u32 {
        let (node, dst, flow) = (node.0, dst.0, flow.0);
        let s = self.single[node as usize];
        if s != NONE {
            return s;
        }
        let (a, last) = self.attach[dst as usize];
        let key = if a != NONE {
            if a == node {
                return last;
            }
            self.col[a as usize]
        } else {
            self.col[dst as usize]
        };
        let r = self.row[node as usize];
        if r == NONE || key == NONE {
            return NO_ROUTE;
        }
        let cell = r as usize * self.keys + key as usize;
        if let Some(e) = &self.ecmp {
            let (lo, hi) = (e.start[cell] as usize, e.start[cell + 1] as usize);
            if hi - lo > 1 {
                let h = splitmix64(e.seed ^ splitmix64((flow as u64) << 32 | node as u64));
                let i = ((h as u128 * (hi - lo) as u128) >> 64) as usize;
                return e.alts[lo + i];
            }
        }
        self.table[cell]
    }

    /// Entries in the next-hop table (rows × columns) plus ECMP
    /// alternatives: the routing state that grows with the topology.
    pub fn table_entries(&self) -> usize {
        self.table.len()
            + self
                .ecmp
                .as_ref()
                .map_or(0, |e| e.start.len() + e.alts.len())
    }

    /// The equal-cost links `node` chooses among towards `dst` (one link
    /// when there is no choice, none without a route).
    pub fn choices(&self, node: NodeId, dst: NodeId) -> Vec<u32> {
        let first = self.next_link(node, dst, FlowId(0));
        if first == NO_ROUTE {
            return Vec::new();
        }
        let (node, dst) = (node.0, dst.0);
        let mut v = vec![first];
        if let (Some(e), r) = (&self.ecmp, self.row[node as usize]) {
            let (a, _) = self.attach[dst as usize];
            let key = if a != NONE {
                self.col[a as usize]
            } else {
                self.col[dst as usize]
            };
            if r != NONE && key != NONE && a != node {
                let cell = r as usize * self.keys + key as usize;
                let (lo, hi) = (e.start[cell] as usize, e.start[cell + 1] as usize);
                if hi - lo > 1 {
                    v = e.alts[lo..hi].to_vec();
                }
            }
        }
        v
    }
}

/// The links at one end of each node, in increasing link order, as one
/// buffer of compressed rows (`ix[start[v]..start[v + 1]]`): a `Vec` per
/// node was two allocations per host of a 10⁵-host star, 2·10⁵ in all.
struct Adjacency {
    start: Vec<u32>,
    ix: Vec<u32>,
}

impl Adjacency {
    /// The links that are up (`up`, as for [`Routes::build`]), grouped by
    /// the node `end` names.
    fn new(
        n: usize,
        links: &[(u32, u32)],
        up: Option<&[bool]>,
        end: impl Fn(&(u32, u32)) -> u32,
    ) -> Adjacency {
        let is_up = |i: usize| up.is_none_or(|u| u[i]);
        let mut start = vec![0u32; n + 1];
        for (i, l) in links.iter().enumerate() {
            if is_up(i) {
                start[end(l) as usize + 1] += 1;
            }
        }
        for v in 0..n {
            start[v + 1] += start[v];
        }
        let mut next = start.clone();
        let mut ix = vec![0u32; start[n] as usize];
        for (i, l) in links.iter().enumerate() {
            if is_up(i) {
                let v = end(l) as usize;
                ix[next[v] as usize] = i as u32;
                next[v] += 1;
            }
        }
        Adjacency { start, ix }
    }

    fn of(&self, v: usize) -> &[u32] {
        &self.ix[self.start[v] as usize..self.start[v + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(links: &[(u32, u32)]) -> Vec<(NodeId, NodeId)> {
        links.iter().map(|&(a, b)| (NodeId(a), NodeId(b))).collect()
    }

    fn nl(r: &Routes, node: u32, dst: u32, flow: u32) -> u32 {
        r.next_link(NodeId(node), NodeId(dst), FlowId(flow))
    }

    #[test]
    fn dumbbell_routes_through_routers_only() {
        // h0 - r1 - r2 - h3, and a direct h0 - h3 link is absent.
        // simplex links: 0: h0->r1, 1: r1->h0, 2: r1->r2, 3: r2->r1, 4: r2->h3, 5: h3->r2
        let links = [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)];
        let r = Routes::compute(4, &ids(&links), &[false, true, true, false]);
        assert_eq!(nl(&r, 0, 3, 0), 0);
        assert_eq!(nl(&r, 1, 3, 0), 2);
        assert_eq!(nl(&r, 2, 3, 0), 4);
        assert_eq!(nl(&r, 3, 0, 0), 5);
        assert_eq!(nl(&r, 2, 0, 0), 3);
    }

    #[test]
    fn hosts_do_not_forward() {
        // h0 - h1 - h2 (h1 is a host with two links): no route from h1 to
        // anything beyond its neighbours; h0 answers its only link, and the
        // path check finds the packet stuck at h1.
        let links = [(0, 1), (1, 0), (1, 2), (2, 1)];
        let r = Routes::compute(3, &ids(&links), &[false, false, false]);
        assert_eq!(nl(&r, 0, 1, 0), 0);
        assert_eq!(nl(&r, 1, 2, 0), 2);
        assert_eq!(nl(&r, 1, 0, 0), 1);
    }

    #[test]
    fn shortest_path_preferred() {
        // r0 -> r1 -> r2 and r0 -> r2 directly, h3 hangs off r2
        let links = [(0, 1), (1, 2), (0, 2), (2, 3), (3, 2)];
        let r = Routes::compute(4, &ids(&links), &[true, true, true, false]);
        assert_eq!(nl(&r, 0, 3, 0), 2);
        assert_eq!(nl(&r, 2, 3, 0), 3);
    }

    #[test]
    fn a_star_needs_no_node_by_node_table() {
        // n hosts on r (node n), r - r2 (node n+1), sink (node n+2) on r2
        let n = 1000u32;
        let (r, r2, sink) = (n, n + 1, n + 2);
        let mut links = Vec::new();
        for h in 0..n {
            links.push((h, r));
            links.push((r, h));
        }
        links.extend([(r, r2), (r2, r), (r2, sink), (sink, r2)]);
        let mut is_router = vec![false; n as usize + 3];
        is_router[r as usize] = true;
        is_router[r2 as usize] = true;
        let rt = Routes::compute(n as usize + 3, &ids(&links), &is_router);
        // two routers × two attachment points, whatever n is
        assert_eq!(rt.table_entries(), 4);
        assert_eq!(nl(&rt, 7, sink, 0), 14);
        assert_eq!(nl(&rt, r, sink, 0), 2 * n);
        assert_eq!(nl(&rt, r2, sink, 0), 2 * n + 2);
        assert_eq!(nl(&rt, sink, 7, 0), 2 * n + 3);
        assert_eq!(nl(&rt, r2, 7, 0), 2 * n + 1);
        assert_eq!(nl(&rt, r, 7, 0), 15);
    }

    /// A diamond h0 - a - {b1, b2} - c - h1: with b1's links down the
    /// flows take b2 (ECMP alternatives included); with both down there
    /// is no route; with the links up again the first routes come back.
    #[test]
    fn routes_are_rebuilt_over_the_links_that_are_up() {
        let duplex = [(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 5)];
        let mut links = Vec::new();
        for (x, y) in duplex {
            links.push((x, y));
            links.push((y, x));
        }
        for ecmp in [None, Some(1)] {
            let mut g = Graph {
                n: 6,
                links: ids(&links),
                is_router: vec![false, true, true, true, true, false],
                ecmp_seed: ecmp,
                up: vec![true; links.len()],
            };
            let first = g.routes();
            // a - b1 (simplex 2, 3) down
            g.up[2] = false;
            g.up[3] = false;
            let r = g.routes();
            assert_eq!(r.choices(NodeId(1), NodeId(5)), vec![4]);
            assert!((0..50).all(|f| nl(&r, 1, 5, f) == 4));
            // back from h1: c -> b2 -> a (link 9 is c->b2, 5 b2->a)
            assert_eq!(nl(&r, 4, 0, 0), 9);
            assert_eq!(nl(&r, 3, 0, 0), 5);
            // a - b2 down too: nothing reaches h1 from a
            g.up[4] = false;
            g.up[5] = false;
            let r = g.routes();
            assert_eq!(nl(&r, 1, 5, 0), NO_ROUTE);
            assert!(r.choices(NodeId(1), NodeId(5)).is_empty());
            // the host's own link down: it has no route at all
            g.up.iter_mut().for_each(|u| *u = true);
            g.up[0] = false;
            g.up[1] = false;
            assert_eq!(nl(&g.routes(), 0, 5, 0), NO_ROUTE);
            g.up[0] = true;
            g.up[1] = true;
            let back = g.routes();
            for f in 0..50 {
                for (a, b) in [(0, 5), (1, 5), (4, 0), (5, 0)] {
                    assert_eq!(nl(&back, a, b, f), nl(&first, a, b, f));
                }
            }
        }
    }

    #[test]
    fn ecmp_hashes_flows_over_equal_cost_links() {
        // h0 - a ; a - b1, a - b2 ; b1 - c, b2 - c ; c - h1
        // nodes: h0 0, a 1, b1 2, b2 3, c 4, h1 5
        let duplex = [(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 5)];
        let mut links = Vec::new();
        for (x, y) in duplex {
            links.push((x, y));
            links.push((y, x));
        }
        let is_router = [false, true, true, true, true, false];
        let plain = Routes::compute(6, &ids(&links), &is_router);
        let e = Routes::compute_ecmp(6, &ids(&links), &is_router, 1);
        assert_eq!(plain.choices(NodeId(1), NodeId(5)), vec![2]);
        assert_eq!(e.choices(NodeId(1), NodeId(5)), vec![2, 4]);
        let mut used = [0u32; 2];
        for f in 0..1000 {
            let l = nl(&e, 1, 5, f);
            assert!(l == 2 || l == 4);
            used[(l == 4) as usize] += 1;
            // the same flow always takes the same link
            assert_eq!(nl(&e, 1, 5, f), l);
        }
        assert!(used[0] > 400 && used[1] > 400, "{used:?}");
        // without ECMP, the first link found (declaration order) for every flow
        assert!((0..100).all(|f| nl(&plain, 1, 5, f) == 2));
        // a different seed moves some flows
        let e2 = Routes::compute_ecmp(6, &ids(&links), &is_router, 2);
        assert!((0..100).any(|f| nl(&e2, 1, 5, f) != nl(&e, 1, 5, f)));
    }
}
