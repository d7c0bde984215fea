//! Static shortest-path routing, computed once at build time.
//!
//! Metric: hop count (as ns-3's global routing with unit interface metrics).
//! Only routers forward: a path may pass through routers but not through
//! hosts. Ties are broken deterministically by link declaration order.

use crate::net::packet::NodeId;
use std::collections::VecDeque;

/// Next-hop table: `next[node * n + dst]` is the index of the simplex link
/// leaving `node` towards `dst`, or `u32::MAX` when unreachable.
pub struct Routes {
    n: usize,
    next: Vec<u32>,
}

pub const NO_ROUTE: u32 = u32::MAX;

impl Routes {
    /// `links[i] = (from, to)` for simplex link `i`; `is_router[v]` tells
    /// whether node `v` forwards.
    pub fn compute(n: usize, links: &[(NodeId, NodeId)], is_router: &[bool]) -> Routes {
        let mut into: Vec<Vec<u32>> = vec![Vec::new(); n]; // links entering each node
        for (i, &(_, to)) in links.iter().enumerate() {
            into[to as usize].push(i as u32);
        }
        let mut next = vec![NO_ROUTE; n * n];
        let mut dist = vec![u32::MAX; n];
        let mut q = VecDeque::new();
        for dst in 0..n {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst] = 0;
            q.clear();
            q.push_back(dst);
            while let Some(u) = q.pop_front() {
                if u != dst && !is_router[u] {
                    continue; // hosts do not forward
                }
                for &li in &into[u] {
                    let v = links[li as usize].0 as usize;
                    if dist[v] == u32::MAX {
                        dist[v] = dist[u] + 1;
                        next[v * n + dst] = li;
                        q.push_back(v);
                    }
                }
            }
        }
        Routes { n, next }
    }

    #[inline]
    pub fn next_link(&self, node: NodeId, dst: NodeId) -> u32 {
        self.next[node as usize * self.n + dst as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dumbbell_routes_through_routers_only() {
        // h0 - r1 - r2 - h3, and a direct h0 - h3 link is absent.
        // simplex links: 0: h0->r1, 1: r1->h0, 2: r1->r2, 3: r2->r1, 4: r2->h3, 5: h3->r2
        let links = [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)];
        let r = Routes::compute(4, &links, &[false, true, true, false]);
        assert_eq!(r.next_link(0, 3), 0);
        assert_eq!(r.next_link(1, 3), 2);
        assert_eq!(r.next_link(2, 3), 4);
        assert_eq!(r.next_link(3, 0), 5);
        assert_eq!(r.next_link(2, 0), 3);
    }

    #[test]
    fn hosts_do_not_forward() {
        // h0 - h1 - h2 (h1 is a host): no route from h0 to h2.
        let links = [(0, 1), (1, 0), (1, 2), (2, 1)];
        let r = Routes::compute(3, &links, &[false, false, false]);
        assert_eq!(r.next_link(0, 2), NO_ROUTE);
        assert_eq!(r.next_link(0, 1), 0);
    }

    #[test]
    fn shortest_path_preferred() {
        // r0 -> r1 -> r2 and r0 -> r2 directly
        let links = [(0, 1), (1, 2), (0, 2)];
        let r = Routes::compute(3, &links, &[true, true, true]);
        assert_eq!(r.next_link(0, 2), 2);
    }
}
