//! Automatic partitioning of a network into logical processes.
//!
//! Links shorter than a lookahead bound are contracted (their ends must
//! share a process); so are the hosts of every workload (a workload opens
//! connections at both ends when a transfer completes, with no delay to
//! look ahead over) and the nodes a scenario places in one named process
//! (`[lp]` table: `"a-*" = "site-a"`). The resulting groups are packed into
//! at most `threads` parts, heaviest first into the lightest part, by their
//! expected work: one unit per packet hop a flow's data and ACKs make at a
//! node (from the routes) and one per flow end. The bound tried first is
//! the largest link delay, then each smaller one, and for each bound
//! `threads` parts, then fewer down to two; the first (bound, parts) whose
//! heaviest part holds at most `1/parts + 0.1` of the work wins — a long
//! lookahead is preferred to a finer balance, since every window costs a
//! barrier — else the best-balanced one. The partition's lookahead is the shortest delay of a
//! cut link. Only links of at least [`MIN_LOOKAHEAD`] are cut: a window per
//! few microseconds costs a barrier each (a k = 8 fat-tree of 5 us links
//! cut between hosts and switches ran 200 000 windows per simulated second
//! and gained nothing). Without such a link to cut, or when one part would
//! hold 90 % of the work or more, the run stays sequential and says why.

use super::ids::LpId;
use crate::engine::Time;
use crate::net::packet::FlowId;
use crate::scenario::paths::Topology;
use crate::scenario::Scenario;

/// The shortest link delay the automatic partition cuts.
pub const MIN_LOOKAHEAD: Time = 100_000;

/// The parts of a partition.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The process of every node (topology order).
    pub node_lp: Vec<LpId>,
    pub parts: usize,
    /// The shortest delay of a cut link.
    pub lookahead: Time,
    /// Expected work per part (see the module notes).
    pub weights: Vec<f64>,
    /// Simplex links cut.
    pub cut_links: usize,
}

/// Disjoint sets over node ids.
struct Sets(Vec<u32>);
impl Sets {
    fn new(n: usize) -> Sets {
        Sets((0..n as u32).collect())
    }
    fn find(&mut self, mut x: u32) -> u32 {
        while self.0[x as usize] != x {
            let p = self.0[self.0[x as usize] as usize];
            self.0[x as usize] = p;
            x = p;
        }
        x
    }
    fn union(&mut self, a: u32, b: u32) {
        let (a, b) = (self.find(a), self.find(b));
        // the smaller id represents the set: deterministic
        let (lo, hi) = (a.min(b), a.max(b));
        self.0[hi as usize] = lo;
    }
}

/// The `[lp]` name of node `n`, if the scenario names one.
pub fn named_lp<'a>(sc: &'a Scenario, n: &str) -> Option<&'a str> {
    sc.lp
        .iter()
        .find(|(k, _)| match k.strip_suffix('*') {
            Some(prefix) => n.starts_with(prefix),
            None => k.as_str() == n,
        })
        .map(|(_, v)| v.as_str())
}

/// Expected work per node: a unit per packet hop leaving it (data and
/// ACK paths of every flow) and per flow end.
fn node_weights(sc: &Scenario, topo: &Topology) -> Vec<f64> {
    let mut w = vec![0.0; topo.names.len()];
    let mut fid = 0u32;
    for g in &sc.flows {
        let (s, d) = (topo.ids[g.src.as_str()], topo.ids[g.dst.as_str()]);
        for _ in 0..g.count {
            for (a, b) in [(s, d), (d, s)] {
                w[a.ix()] += 1.0;
                for li in topo.trace(a, b, FlowId(fid)).unwrap_or_default() {
                    w[topo.links[li].from.ix()] += 1.0;
                }
            }
            fid += 1;
        }
    }
    for wl in &sc.workloads {
        for (_, h) in wl.hosts() {
            if let Some(&n) = topo.ids.get(h) {
                w[n.ix()] += 1.0;
            }
        }
    }
    w
}

/// The groups that must share a process, with links shorter than `bound`
/// contracted.
fn groups(sc: &Scenario, topo: &Topology, bound: Time) -> Sets {
    let mut sets = Sets::new(topo.names.len());
    for l in &topo.links {
        if l.spec.delay.0 < bound {
            sets.union(l.from.0, l.to.0);
        }
    }
    let mut first_host: Option<u32> = None;
    for wl in &sc.workloads {
        for (_, h) in wl.hosts() {
            if let Some(&n) = topo.ids.get(h) {
                let f = *first_host.get_or_insert(n.0);
                sets.union(f, n.0);
            }
        }
    }
    let mut named: std::collections::BTreeMap<&str, u32> = Default::default();
    for (i, n) in topo.names.iter().enumerate() {
        if let Some(lp) = named_lp(sc, n) {
            let f = *named.entry(lp).or_insert(i as u32);
            sets.union(f, i as u32);
        }
    }
    sets
}

/// Pack the groups into at most `k` parts (heaviest group into the lightest
/// part; ties by the smaller id), numbering parts by their first node.
fn pack(sets: &mut Sets, w: &[f64], k: usize) -> (Vec<LpId>, Vec<f64>) {
    let n = w.len();
    let mut gw: std::collections::BTreeMap<u32, f64> = Default::default();
    for i in 0..n as u32 {
        *gw.entry(sets.find(i)).or_default() += w[i as usize];
    }
    let mut gs: Vec<(u32, f64)> = gw.into_iter().collect();
    gs.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut bins = vec![0.0f64; k.min(gs.len()).max(1)];
    let mut of_group: std::collections::HashMap<u32, usize> = Default::default();
    for (g, gw) in gs {
        let (b, _) = (bins.iter().enumerate())
            .min_by(|x, y| x.1.total_cmp(y.1).then(x.0.cmp(&y.0)))
            .expect("one bin");
        bins[b] += gw;
        of_group.insert(g, b);
    }
    // renumber parts in order of their first node
    let mut order: Vec<Option<u16>> = vec![None; bins.len()];
    let mut next = 0u16;
    let mut node_lp = Vec::with_capacity(n);
    for i in 0..n as u32 {
        let b = of_group[&sets.find(i)];
        let id = *order[b].get_or_insert_with(|| {
            next += 1;
            next - 1
        });
        node_lp.push(LpId(id));
    }
    let mut weights = vec![0.0; bins.len()];
    for (b, o) in order.iter().enumerate() {
        if let Some(o) = o {
            weights[*o as usize] = bins[b];
        }
    }
    (node_lp, weights)
}

/// The shortest delay of a cut link, and how many links are cut.
pub fn lookahead(topo: &Topology, node_lp: &[LpId]) -> (Option<Time>, usize) {
    let cut = (topo.links.iter()).filter(|l| node_lp[l.from.ix()] != node_lp[l.to.ix()]);
    let la = cut.clone().map(|l| l.spec.delay.0).min();
    (la, cut.count())
}

/// Partition for `threads` worker threads, or why the run stays
/// sequential.
pub fn plan(sc: &Scenario, topo: &Topology, threads: usize) -> Result<Plan, String> {
    if sc.has_varying_links() {
        // a delay that changes would change the lookahead under the
        // windows; such runs are not split
        return Err("links change during the run ([[events]] or a trace)".into());
    }
    let w = node_weights(sc, topo);
    let total: f64 = w.iter().sum::<f64>().max(1e-9);
    let mut bounds: Vec<Time> = topo.links.iter().map(|l| l.spec.delay.0).collect();
    bounds.sort_unstable_by(|a, b| b.cmp(a));
    bounds.dedup();
    let mut best: Option<(f64, Plan)> = None;
    let tries = bounds.into_iter().filter(|&b| b >= MIN_LOOKAHEAD);
    for (b, k) in tries.flat_map(|b| (2..=threads.max(2)).rev().map(move |k| (b, k))) {
        let mut sets = groups(sc, topo, b);
        let (node_lp, weights) = pack(&mut sets, &w, k);
        if weights.len() < 2 {
            continue;
        }
        let (Some(la), cut_links) = lookahead(topo, &node_lp) else {
            continue;
        };
        let heaviest = weights.iter().cloned().fold(0.0, f64::max) / total;
        let plan = Plan {
            parts: weights.len(),
            node_lp,
            lookahead: la,
            weights,
            cut_links,
        };
        if heaviest <= 1.0 / plan.parts as f64 + 0.1 {
            return Ok(plan);
        }
        if best.as_ref().is_none_or(|(h, _)| heaviest < *h) {
            best = Some((heaviest, plan));
        }
    }
    match best {
        None => Err(format!(
            "no link of {} us or more can be cut (no lookahead worth a barrier)",
            MIN_LOOKAHEAD / 1000
        )),
        Some((h, _)) if h >= 0.9 => Err(format!(
            "one part would hold {:.0} % of the work (a single bottleneck)",
            h * 100.0
        )),
        Some((_, p)) => Ok(p),
    }
}
