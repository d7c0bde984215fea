//! Path checks on a scenario: the route each flow will take, computed as the
//! simulation will compute it ([`Routes::compute`] over the simplex links in
//! declaration order, a→b then b→a for each `[[links]]` entry, hosts before
//! routers), and what that route must contain.
//!
//! Today one check: a MaxNet source (`cc = "maxnet"`, `tcp/cc/maxnet.rs`)
//! sets its rate from the price stamped by MaxNet links (`aqm/maxnet.rs`);
//! on a path without one it would never see a price and would send at its
//! `max_rate` whatever the load. Such a flow is a scenario error that names
//! the flow's (or workload's) `cc` key and the path. For workloads the check
//! covers both directions between the workload's hosts (an HTTP request
//! goes client → server, its response server → client, both with the
//! workload's `cc`).

use super::Scenario;
use crate::aqm::QueueSpec;
use crate::net::packet::NodeId;
use crate::net::routing::{Routes, NO_ROUTE};
use crate::tcp::cc::CcConfig;

/// One direction of a `[[links]]` entry.
struct Simplex<'a> {
    from: NodeId,
    to: NodeId,
    queue: Option<&'a QueueSpec>,
}

/// The scenario's nodes, simplex links and routes, as the simulation builds
/// them.
pub struct Paths<'a> {
    names: Vec<&'a str>,
    links: Vec<Simplex<'a>>,
    routes: Routes,
}

impl<'a> Paths<'a> {
    /// Build the routes of a scenario whose node and link references are
    /// valid (call after the cross-reference checks of `validate`).
    pub fn new(sc: &'a Scenario) -> Paths<'a> {
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
        let id = |n: &str| names.iter().position(|x| *x == n).unwrap_or(0) as NodeId;
        let mut links = Vec::new();
        for l in &sc.links {
            let (a, b) = (id(&l.a), id(&l.b));
            links.push(Simplex {
                from: a,
                to: b,
                queue: l.queue_ab.as_ref().or(l.queue.as_ref()),
            });
            links.push(Simplex {
                from: b,
                to: a,
                queue: l.queue_ba.as_ref().or(l.queue.as_ref()),
            });
        }
        let pairs: Vec<(NodeId, NodeId)> = links.iter().map(|l| (l.from, l.to)).collect();
        let routes = Routes::compute(names.len(), &pairs, &is_router);
        Paths {
            names,
            links,
            routes,
        }
    }

    fn id(&self, n: &str) -> Option<NodeId> {
        self.names.iter().position(|x| *x == n).map(|i| i as NodeId)
    }

    /// The simplex links (indices) from `src` to `dst`, or None when there
    /// is no route.
    pub fn path(&self, src: &str, dst: &str) -> Option<Vec<usize>> {
        let (s, d) = (self.id(src)?, self.id(dst)?);
        let mut node = s;
        let mut out = Vec::new();
        while node != d {
            let li = self.routes.next_link(node, d);
            if li == NO_ROUTE || out.len() > self.links.len() {
                return None;
            }
            out.push(li as usize);
            node = self.links[li as usize].to;
        }
        Some(out)
    }

    /// `a -> b -> c` for a path from `src`.
    pub fn describe(&self, src: &str, path: &[usize]) -> String {
        let mut s = src.to_string();
        for &li in path {
            s.push_str(" -> ");
            s.push_str(self.names[self.links[li].to as usize]);
        }
        s
    }

    /// Whether simplex link `li`'s egress queue is a MaxNet link.
    pub fn is_maxnet(&self, li: usize) -> bool {
        matches!(self.links[li].queue, Some(QueueSpec::MaxNet(_)))
    }

    /// Check that a MaxNet source from `src` to `dst` crosses at least one
    /// MaxNet link; the error is the message (the caller adds the key).
    fn check_maxnet(&self, src: &str, dst: &str) -> Result<(), String> {
        let Some(p) = self.path(src, dst) else {
            return Err(format!(
                "a MaxNet source needs a route from `{src}` to `{dst}`, and there is none"
            ));
        };
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

/// The `cc` of a workload, read from its serialised form so that every
/// workload kind that has a `cc` key is covered.
fn workload_cc(w: &crate::traffic::WorkloadSpec) -> Option<CcConfig> {
    let v = toml::Value::try_from(w).ok()?;
    let cc = v.get("cc")?.clone();
    cc.try_into().ok()
}

/// Every MaxNet source (flow group or workload) must cross a MaxNet link.
/// Returns (key path, message) like [`Scenario::validate`].
pub fn check_maxnet_paths(sc: &Scenario) -> Result<(), (String, String)> {
    let uses_maxnet = |cc: &CcConfig| matches!(cc, CcConfig::MaxNet(_));
    let flows = sc
        .flows
        .iter()
        .any(|f| f.cbr.is_none() && uses_maxnet(&f.cc));
    let wls: Vec<Option<CcConfig>> = sc.workloads.iter().map(workload_cc).collect();
    if !flows && !wls.iter().flatten().any(uses_maxnet) {
        return Ok(());
    }
    let paths = Paths::new(sc);
    for (i, f) in sc.flows.iter().enumerate() {
        if f.cbr.is_none() && uses_maxnet(&f.cc) {
            paths
                .check_maxnet(&f.src, &f.dst)
                .map_err(|m| (format!("flows[{i}].cc"), m))?;
        }
    }
    for (i, (w, cc)) in sc.workloads.iter().zip(&wls).enumerate() {
        if !cc.as_ref().is_some_and(uses_maxnet) {
            continue;
        }
        let hosts: Vec<&str> = w.hosts().into_iter().map(|(_, h)| h).collect();
        for a in &hosts {
            for b in &hosts {
                if a != b {
                    paths
                        .check_maxnet(a, b)
                        .map_err(|m| (format!("workloads[{i}].cc"), m))?;
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

    #[test]
    fn paths_follow_the_simulation_routes() {
        let s = sc("queue = { kind = \"maxnet\" }", FLOW).unwrap();
        let p = super::Paths::new(&s);
        let fwd = p.path("h1", "h2").unwrap();
        assert_eq!(p.describe("h1", &fwd), "h1 -> r1 -> r2 -> h2");
        assert_eq!(fwd.len(), 3);
        assert!(!p.is_maxnet(fwd[0]) && p.is_maxnet(fwd[1]) && !p.is_maxnet(fwd[2]));
        assert!(p.path("h1", "nowhere").is_none());
    }
}
