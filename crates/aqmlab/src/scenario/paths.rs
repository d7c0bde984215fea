//! The scenario's topology, built once by one function for validation and
//! for the simulation: node ids (hosts first, then routers, in declaration
//! order), the simplex links (a→b then b→a for each `[[links]]` entry) and
//! the routes ([`Routes`], with ECMP when `[routing] ecmp = true`).
//!
//! Checks on it:
//! - every flow and workload is routable: a TCP flow needs a route from
//!   `src` to `dst` and back (its ACKs), a CBR flow from `src` to `dst`, a
//!   workload between every two of its hosts in different roles (client and
//!   server, senders and receivers), both ways. Otherwise the
//!   scenario is rejected with the flow and the hop where the path stops.
//! - a MaxNet source (`cc = "maxnet"`, `tcp/cc/maxnet.rs`) sets its rate from
//!   the price stamped by MaxNet links (`aqm/maxnet.rs`); on a path without
//!   one it would never see a price and would send at its `max_rate`
//!   whatever the load. Such a flow is a scenario error that names the
//!   flow's (or workload's) `cc` key and the path. For workloads the check
//!   covers both directions between the workload's hosts (an HTTP request
//!   goes client → server, its response server → client, both with the
//!   workload's `cc`). With ECMP the check follows the path of flow 0's
//!   hash.

use super::{LinkSpec, Scenario};
use crate::aqm::QueueSpec;
use crate::net::packet::{FlowId, NodeId};
use crate::net::routing::{Routes, NO_ROUTE};
use crate::tcp::cc::CcConfig;
use rustc_hash::{FxHashMap, FxHashSet};

/// One direction of a `[[links]]` entry.
pub struct Simplex<'a> {
    pub from: NodeId,
    pub to: NodeId,
    /// The `[[links]]` entry and whether this is its a→b direction.
    pub spec: &'a LinkSpec,
    pub ab: bool,
}

impl Simplex<'_> {
    /// This direction's queue discipline, if the scenario set one.
    pub fn queue(&self) -> Option<&QueueSpec> {
        let l = self.spec;
        if self.ab {
            l.queue_ab.as_ref().or(l.queue.as_ref())
        } else {
            l.queue_ba.as_ref().or(l.queue.as_ref())
        }
    }

    /// Whether this direction's port runs an edge classifier.
    pub fn classifies(&self) -> bool {
        if self.ab {
            self.spec.classifier_ab.is_some()
        } else {
            self.spec.classifier_ba.is_some()
        }
    }
}

/// The scenario's nodes, simplex links and routes, as the simulation uses
/// them.
pub struct Topology<'a> {
    pub names: Vec<&'a str>,
    pub ids: FxHashMap<&'a str, NodeId>,
    pub is_router: Vec<bool>,
    pub links: Vec<Simplex<'a>>,
    pub routes: Routes,
}

/// Kept for callers of the former name.
pub type Paths<'a> = Topology<'a>;

impl<'a> Topology<'a> {
    /// Build the topology of a scenario whose node and link references are
    /// valid (call after the cross-reference checks of `validate`), with
    /// ECMP (if enabled) hashed with `seed`.
    pub fn build(sc: &'a Scenario, seed: u64) -> Topology<'a> {
        let mut names: Vec<&str> = Vec::new();
        let mut is_router = Vec::new();
        for h in &sc.nodes.hosts {
            names.push(h);
            is_router.push(false);
        }
        for r in &sc.nodes.routers {
            names.push(r);
            is_router.push(true);
        }
        let ids: FxHashMap<&str, NodeId> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (*n, NodeId(i as u32)))
            .collect();
        let id = |n: &str| ids.get(n).copied().unwrap_or_default();
        let mut links = Vec::with_capacity(2 * sc.links.len());
        for l in &sc.links {
            let (a, b) = (id(&l.a), id(&l.b));
            links.push(Simplex {
                from: a,
                to: b,
                spec: l,
                ab: true,
            });
            links.push(Simplex {
                from: b,
                to: a,
                spec: l,
                ab: false,
            });
        }
        let pairs: Vec<(NodeId, NodeId)> = links.iter().map(|l| (l.from, l.to)).collect();
        let routes = if sc.routing.ecmp {
            Routes::compute_ecmp(names.len(), &pairs, &is_router, seed)
        } else {
            Routes::compute(names.len(), &pairs, &is_router)
        };
        Topology {
            names,
            ids,
            is_router,
            links,
            routes,
        }
    }

    /// The topology as validation sees it (ECMP hashed with the scenario's
    /// seed).
    pub fn new(sc: &'a Scenario) -> Topology<'a> {
        Self::build(sc, sc.seed)
    }

    fn id(&self, n: &str) -> Option<NodeId> {
        self.ids.get(n).copied()
    }

    /// The simplex links (indices) that flow `flow`'s packets take from
    /// `src` to `dst`, or where the path stops: `Err(hops so far)`.
    pub fn trace(&self, src: NodeId, dst: NodeId, flow: FlowId) -> Result<Vec<usize>, Vec<usize>> {
        let mut node = src;
        let mut out = Vec::new();
        while node != dst {
            if (node != src && !self.is_router[node.ix()]) || out.len() > self.links.len() {
                return Err(out);
            }
            let li = self.routes.next_link(node, dst, flow);
            if li == NO_ROUTE {
                return Err(out);
            }
            out.push(li as usize);
            node = self.links[li as usize].to;
        }
        Ok(out)
    }

    /// The simplex links (indices) from `src` to `dst`, or None when there
    /// is no route.
    pub fn path(&self, src: &str, dst: &str) -> Option<Vec<usize>> {
        let (s, d) = (self.id(src)?, self.id(dst)?);
        self.trace(s, d, FlowId(0)).ok()
    }

    /// `a -> b -> c` for a path from `src`.
    pub fn describe(&self, src: &str, path: &[usize]) -> String {
        let mut s = src.to_string();
        for &li in path {
            s.push_str(" -> ");
            s.push_str(self.names[self.links[li].to.ix()]);
        }
        s
    }

    /// Whether simplex link `li`'s egress queue is a MaxNet link.
    pub fn is_maxnet(&self, li: usize) -> bool {
        matches!(self.links[li].queue(), Some(QueueSpec::MaxNet(_)))
    }

    /// Check that `src` (node `s`) reaches `dst` (node `d`); the error is
    /// the message.
    fn check_route_at(&self, src: &str, dst: &str, s: NodeId, d: NodeId) -> Result<(), String> {
        self.trace(s, d, FlowId(0)).map(|_| ()).map_err(|hops| {
            let at = hops
                .last()
                .map_or(src, |&li| self.names[self.links[li].to.ix()]);
            let why = if at != src && !self.is_router[self.id(at).unwrap_or_default().ix()] {
                format!("`{at}` is a host, and hosts do not forward")
            } else {
                format!("`{at}` has no link towards `{dst}`")
            };
            format!(
                "no route from `{src}` to `{dst}`: the path {} stops there ({why}); \
                 connect them through routers in [[links]]",
                self.describe(src, &hops)
            )
        })
    }

    /// Check that the packets of a flow with a DSCP from `src` to `dst`
    /// cross no classifier, whose class tag would replace the DSCP in the
    /// packet's one extension slot (`net/ext.rs`).
    fn check_dscp(&self, src: &str, dst: &str) -> Result<(), String> {
        let p = self.path(src, dst).unwrap_or_default();
        if let Some(&li) = p.iter().find(|&&li| self.links[li].classifies()) {
            let l = &self.links[li];
            return Err(format!(
                "the flow's path crosses the classifier of `{}` -> `{}`: a packet carries either \
                 a DSCP or a RIO class, not both; remove the classifier or `dscp`",
                self.names[l.from.ix()],
                self.names[l.to.ix()]
            ));
        }
        Ok(())
    }

    /// Check that a MaxNet source from `src` to `dst` crosses at least one
    /// MaxNet link, and no classifier in either direction (a packet has one
    /// extension slot: the class tag would replace the price, `net/ext.rs`);
    /// the error is the message (the caller adds the key).
    fn check_maxnet(&self, src: &str, dst: &str) -> Result<(), String> {
        let Some(p) = self.path(src, dst) else {
            return Err(format!(
                "a MaxNet source needs a route from `{src}` to `{dst}`, and there is none"
            ));
        };
        let back = self.path(dst, src).unwrap_or_default();
        if let Some(&li) = (p.iter().chain(&back)).find(|&&li| self.links[li].classifies()) {
            let l = &self.links[li];
            return Err(format!(
                "a MaxNet source's path crosses the classifier of `{}` -> `{}`: a packet carries either \
                 MaxNet's price or a RIO class, not both; remove the classifier or use another `cc`",
                self.names[l.from.ix()],
                self.names[l.to.ix()]
            ));
        }
        if p.iter().any(|&li| self.is_maxnet(li)) {
            Ok(())
        } else {
            Err(format!(
                "a MaxNet source needs at least one MaxNet link (a queue with kind = \"maxnet\") on its path, \
                 and {} has none: it would never receive a price; set `queue`, `queue_ab` or `queue_ba` \
                 of the bottleneck to {{ kind = \"maxnet\" }}",
                self.describe(src, &p)
            ))
        }
    }
}

/// A workload's hosts grouped by role (client, server, sender, ...), in
/// the order the workload lists them.
pub(super) fn workload_roles(w: &crate::traffic::WorkloadSpec) -> Vec<(&'static str, Vec<&str>)> {
    let mut roles: Vec<(&'static str, Vec<&str>)> = Vec::new();
    for (k, h) in w.hosts() {
        match roles.iter_mut().find(|(r, _)| *r == k) {
            Some((_, v)) => v.push(h),
            None => roles.push((k, vec![h])),
        }
    }
    roles
}

/// The `cc` of a workload, read from its serialised form so that every
/// workload kind that has a `cc` key is covered.
fn workload_cc(w: &crate::traffic::WorkloadSpec) -> Option<CcConfig> {
    let v = toml::Value::try_from(w).ok()?;
    let cc = v.get("cc")?.clone();
    cc.try_into().ok()
}

/// Every flow and workload must be routable, and every MaxNet source (flow
/// group or workload) must cross a MaxNet link. Returns (key path, message)
/// like [`Scenario::validate`].
/// Most host pairs of one workload whose routes are each checked.
const MAX_PAIR_CHECKS: u64 = 1_000_000;

/// Check every flow's and workload's routes (see [`check_routes`]), unless
/// the next-hop table is above the default limit
/// ([`Scenario::routing_cells`]): then nothing is routed here (building the
/// table could take gigabytes and minutes) and
/// [`Scenario::check_limits`] refuses the scenario, or checks the routes
/// when the limits allow it (`--allow-large`).
pub fn check(sc: &Scenario) -> Result<(), (String, String)> {
    if sc.routing_cells() > crate::scenario::limits::Limits::DEFAULT.routing_cells {
        return Ok(());
    }
    check_routes(sc)
}

/// Every flow and workload routable, MaxNet sources crossing a MaxNet link.
pub fn check_routes(sc: &Scenario) -> Result<(), (String, String)> {
    let topo = Topology::new(sc);
    let uses_maxnet = |cc: &CcConfig| matches!(cc, CcConfig::MaxNet(_));
    // each (src, dst) pair of nodes is routed once; unknown names are
    // reported by the reference checks
    let mut checked: FxHashSet<(NodeId, NodeId)> = Default::default();
    let mut route_once = |a: &str, b: &str| match (topo.id(a), topo.id(b)) {
        (Some(s), Some(d)) if checked.insert((s, d)) => topo.check_route_at(a, b, s, d),
        _ => Ok(()),
    };
    for (i, f) in sc.flows.iter().enumerate() {
        let mut dirs = vec![(f.src.as_str(), f.dst.as_str())];
        if f.cbr.is_none() {
            dirs.push((f.dst.as_str(), f.src.as_str())); // the ACKs
        }
        for (a, b) in dirs {
            route_once(a, b).map_err(|m| {
                (
                    format!("flows[{i}]"),
                    format!("flow group `{}`: {m}", f.group),
                )
            })?;
        }
        if f.cbr.is_none() && uses_maxnet(&f.cc) {
            if f.dscp != 0 {
                return Err((
                    format!("flows[{i}].dscp"),
                    "a MaxNet source's packets carry MaxNet's price in their one extension slot, \
                     which a DSCP needs too; remove `dscp` or use another `cc`"
                        .into(),
                ));
            }
            topo.check_maxnet(&f.src, &f.dst)
                .map_err(|m| (format!("flows[{i}].cc"), m))?;
        }
        if f.dscp != 0 {
            topo.check_dscp(&f.src, &f.dst)
                .map_err(|m| (format!("flows[{i}].dscp"), m))?;
        }
    }
    for (i, w) in sc.workloads.iter().enumerate() {
        let maxnet = workload_cc(w).as_ref().is_some_and(uses_maxnet);
        // hosts in different roles talk to each other (client and server,
        // senders and receivers), both ways: pair the roles, never the hosts
        // of one role with each other
        let roles = workload_roles(w);
        for (ia, (_, xs)) in roles.iter().enumerate() {
            for (ib, (_, ys)) in roles.iter().enumerate() {
                if ia == ib {
                    continue;
                }
                // Every pair while that stays small; beyond, each host
                // against the first host of the other role and that host
                // against each of them, which covers every pair when each
                // host hangs off one connected set of routers (what the
                // generators build) and bounds the work at 10^6 checks.
                let all = (xs.len() as u64) * (ys.len() as u64) <= MAX_PAIR_CHECKS;
                let pairs: Box<dyn Iterator<Item = (&str, &str)>> = if all {
                    Box::new(xs.iter().flat_map(|a| ys.iter().map(move |b| (*a, *b))))
                } else {
                    Box::new(
                        xs.iter()
                            .map(|a| (*a, ys[0]))
                            .chain(ys.iter().map(|b| (xs[0], *b))),
                    )
                };
                for (a, b) in pairs {
                    if a == b {
                        continue;
                    }
                    route_once(a, b).map_err(|m| {
                        (
                            format!("workloads[{i}]"),
                            format!("workload `{}`: {m}", w.name()),
                        )
                    })?;
                    if maxnet {
                        topo.check_maxnet(a, b)
                            .map_err(|m| (format!("workloads[{i}].cc"), m))?;
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::Scenario;

    const BASE: &str = r#"
name = "p"
duration = "1s"
[nodes]
hosts = ["h1", "h2"]
routers = ["r1", "r2"]
[[links]]
a = "h1"
b = "r1"
rate = "100Mbps"
delay = "1ms"
[[links]]
name = "bn"
a = "r1"
b = "r2"
rate = "10Mbps"
delay = "10ms"
QUEUE
[[links]]
a = "r2"
b = "h2"
rate = "100Mbps"
delay = "1ms"
"#;

    fn sc(queue: &str, tail: &str) -> Result<Scenario, String> {
        let t = BASE.replace("QUEUE", queue) + tail;
        Scenario::from_toml(&t, "p.toml").map_err(|e| e.to_string())
    }

    const FLOW: &str = "[[flows]]\ngroup = \"m\"\nsrc = \"h1\"\ndst = \"h2\"\ncc = \"maxnet\"\n";
    const HTTP: &str = "[[workloads]]\nkind = \"http\"\nname = \"web\"\nclient = \"h1\"\nserver = \"h2\"\nconnections = 2\ncc = \"maxnet\"\n";

    #[test]
    fn maxnet_source_needs_a_maxnet_link_on_its_path() {
        let e = sc("", FLOW).unwrap_err();
        assert!(
            e.contains("flows[0].cc")
                && e.contains("MaxNet link")
                && e.contains("h1 -> r1 -> r2 -> h2"),
            "{e}"
        );
        // a MaxNet queue on the other direction only does not count
        let e = sc("queue_ba = { kind = \"maxnet\" }", FLOW).unwrap_err();
        assert!(e.contains("flows[0].cc"), "{e}");
        assert!(sc("queue_ab = { kind = \"maxnet\" }", FLOW).is_ok());
        assert!(sc("queue = { kind = \"maxnet\" }", FLOW).is_ok());
        // other cc on a path without MaxNet: fine
        assert!(sc("", &FLOW.replace("maxnet", "reno")).is_ok());
    }

    #[test]
    fn maxnet_workloads_need_maxnet_links_both_ways() {
        // the response (h2 -> h1) has no MaxNet link
        let e = sc("queue_ab = { kind = \"maxnet\" }", HTTP).unwrap_err();
        assert!(
            e.contains("workloads[0].cc") && e.contains("h2 -> r2 -> r1 -> h1"),
            "{e}"
        );
        assert!(sc("queue = { kind = \"maxnet\" }", HTTP).is_ok());
        assert!(sc("", &HTTP.replace("maxnet", "newreno")).is_ok());
        // any workload kind with a `cc` key is checked
        let web = "[[workloads]]\nkind = \"web\"\nname = \"w\"\nclient = \"h1\"\nserver = \"h2\"\nsessions = 1\ncc = \"maxnet\"\n";
        let e = sc("", web).unwrap_err();
        assert!(
            e.contains("workloads[0].cc") && e.contains("MaxNet link"),
            "{e}"
        );
        assert!(sc("queue = { kind = \"maxnet\" }", web).is_ok());
    }

    /// One extension slot per packet: a MaxNet source's data or ACKs must
    /// not cross a RIO classifier, which would replace the price by a class.
    #[test]
    fn maxnet_paths_must_not_cross_a_classifier() {
        let cl = "classifier_DIR = { threshold = 5 }\nqueue = { kind = \"maxnet\" }";
        for dir in ["ab", "ba"] {
            let e = sc(&cl.replace("DIR", dir), FLOW).unwrap_err();
            assert!(
                e.contains("flows[0].cc") && e.contains("classifier of `r"),
                "{dir}: {e}"
            );
            // another cc may cross it
            assert!(sc(&cl.replace("DIR", dir), &FLOW.replace("maxnet", "reno")).is_ok());
        }
    }

    /// A flow whose hosts have no route between them is a scenario error
    /// naming the flow (it used to pass validation and panic in the run).
    #[test]
    fn unroutable_flows_and_workloads_are_rejected() {
        let extra = "[[links]]\na = \"h2\"\nb = \"h3\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n";
        let t = BASE.replace("\"h1\", \"h2\"]", "\"h1\", \"h2\", \"h3\"]") + extra;
        let flow = "[[flows]]\ngroup = \"far\"\nsrc = \"h1\"\ndst = \"h3\"\n";
        let e = Scenario::from_toml(&(t.replace("QUEUE", "") + flow), "p.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`flows[0]`")
                && e.contains("flow group `far`")
                && e.contains("no route from `h1` to `h3`")
                && e.contains("the path h1 -> r1 stops there")
                && e.contains("`r1` has no link towards `h3`"),
            "{e}"
        );
        // an isolated host
        let t2 = BASE.replace("\"h1\", \"h2\"]", "\"h1\", \"h2\", \"h4\"]");
        let e = Scenario::from_toml(
            &(t2.replace("QUEUE", "") + &flow.replace("h3", "h4")),
            "p.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no route from `h1` to `h4`"), "{e}");
        // a host with one link to another host: the packet would stop there
        let t3 = t.replace("QUEUE", "")
            + "[[links]]\na = \"h3\"\nb = \"h5\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n";
        let t3 = t3.replace("\"h1\", \"h2\", \"h3\"]", "\"h1\", \"h2\", \"h3\", \"h5\"]");
        let f5 = "[[flows]]\ngroup = \"x\"\nsrc = \"h5\"\ndst = \"h2\"\n";
        let e = Scenario::from_toml(&(t3 + f5), "p.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("h5 -> h3") && e.contains("`h3` is a host, and hosts do not forward"),
            "{e}"
        );
        let wl = "[[workloads]]\nkind = \"incast\"\nname = \"i\"\nclient = \"h1\"\nservers = [\"h2\", \"h3\"]\n";
        let e = Scenario::from_toml(&(t.replace("QUEUE", "") + wl), "p.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`workloads[0]`") && e.contains("workload `i`") && e.contains("`h3`"),
            "{e}"
        );
    }

    #[test]
    fn paths_follow_the_simulation_routes() {
        let s = sc("queue = { kind = \"maxnet\" }", FLOW).unwrap();
        let p = super::Topology::new(&s);
        let fwd = p.path("h1", "h2").unwrap();
        assert_eq!(p.describe("h1", &fwd), "h1 -> r1 -> r2 -> h2");
        assert_eq!(fwd.len(), 3);
        assert!(!p.is_maxnet(fwd[0]) && p.is_maxnet(fwd[1]) && !p.is_maxnet(fwd[2]));
        assert!(p.path("h1", "nowhere").is_none());
    }
}
