//! Warnings: a scenario that is valid but does not do what its names say.
//!
//! Each cause in [`CAUSES`] is a configuration that runs without error yet
//! measures something else than the scenario's words promise — `cc =
//! "prague"` without AccECN runs Prague's Reno fallback, an ECN-marking
//! queue that no ECN-capable flow crosses only drops. A run prints one line
//! per warning on stderr, lists them in `summary.json` (`warnings`) and
//! `report.html`, and `--strict` (CLI) / `strict=True` (Python) turns them
//! into an input error. What is impossible, not merely surprising, stays a
//! validation error (e.g. `tcp.rack` without `tcp.sack`).
//!
//! The checks that follow routes (which links a flow's packets cross) use
//! the routes the run starts with, and are skipped under ECMP (each flow
//! hashes its own path) and on links that `[[events]]` take down (routes
//! change during the run).

use super::paths::Topology;
use super::Scenario;
use crate::aqm::QueueSpec;
use crate::tcp::cc::CcConfig;
use crate::tcp::TcpParams;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// One warning: its cause (an entry of [`CAUSES`]), the scenario key it is
/// about and a sentence saying what the run does instead and how to change
/// it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    pub cause: String,
    pub key: String,
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "warning [{}]: {}: {}",
            self.cause, self.key, self.message
        )
    }
}

/// Every cause a warning can have, with what it means (the list in
/// `docs/src/guide/running.md`, checked by a test).
pub const CAUSES: &[(&str, &str)] = &[
    (
        "prague-without-accecn",
        "a TCP Prague flow without tcp.ecn = true and tcp.ecn_feedback = \"accecn\" runs Prague's Reno fallback without ECN",
    ),
    (
        "dctcp-without-ecn",
        "a DCTCP flow without tcp.ecn = true sends no ECN-capable packets and reacts to losses only",
    ),
    (
        "bbr-without-sack",
        "a BBR flow without tcp.sack = true recovers losses as NewReno does (one retransmission per round trip), unlike every BBR implementation",
    ),
    (
        "ecn-queue-without-ecn-flows",
        "a queue whose ECN marking the scenario turned on (ecn = true where the kind drops by default, or step) is crossed by data of flows none of which is ECN-capable, so it only drops",
    ),
    (
        "observed-link-unused",
        "a link direction named in output.log or output.pcap is crossed by no flow or workload (or, for the log, by none of output.log_flows)",
    ),
];

fn warn(cause: &'static str, key: String, message: String) -> Warning {
    debug_assert!(CAUSES.iter().any(|(c, _)| *c == cause), "{cause}");
    Warning {
        cause: cause.to_string(),
        key,
        message,
    }
}

/// Whether flows with `p` and controller `cc` send ECN-capable packets.
fn ecn_capable(cc: &CcConfig, p: &TcpParams) -> bool {
    match cc {
        CcConfig::Prague(_) => p.ecn && p.ecn_feedback == crate::tcp::ecn::EcnFeedback::Accecn,
        _ => p.ecn,
    }
}

/// The warnings about one flow group's or workload's TCP configuration.
fn tcp_warnings(key: &str, who: &str, cc: &CcConfig, p: &TcpParams, out: &mut Vec<Warning>) {
    match cc {
        CcConfig::Prague(_) if !ecn_capable(cc, p) => out.push(warn(
            "prague-without-accecn",
            format!("{key}.cc"),
            format!(
                "{who} uses cc = \"prague\" with tcp.ecn = {} and tcp.ecn_feedback = \"{}\": Prague \
                 needs ECN with AccECN feedback and otherwise runs as Reno without ECN (L4STeam \
                 prague_init's fallback); set tcp.ecn = true and tcp.ecn_feedback = \"accecn\"",
                p.ecn,
                match p.ecn_feedback {
                    crate::tcp::ecn::EcnFeedback::Rfc3168 => "rfc3168",
                    crate::tcp::ecn::EcnFeedback::Accecn => "accecn",
                }
            ),
        )),
        CcConfig::Dctcp(_) if !p.ecn => out.push(warn(
            "dctcp-without-ecn",
            format!("{key}.cc"),
            format!(
                "{who} uses cc = \"dctcp\" with tcp.ecn = false: its packets are not ECN-capable, \
                 so it sees no marks and reacts to losses only; set tcp.ecn = true"
            ),
        )),
        CcConfig::Bbr(_) if !p.sack => out.push(warn(
            "bbr-without-sack",
            format!("{key}.cc"),
            format!(
                "{who} uses cc = \"bbr\" with tcp.sack = false: losses are recovered one per round \
                 trip (NewReno), unlike Linux's and ns-3's BBR; set tcp.sack = true and \
                 tcp.recovery = \"sack\", or tcp.profile = \"linux-6.1\""
            ),
        )),
        _ => {}
    }
}

/// Whether the scenario turned ECN marking on for this queue: `step` (a
/// marker, nothing else), or `ecn = true` on a kind whose default is to
/// drop (RED, PIE, CoDel). Kinds that mark by default (FQ-CoDel, CAKE,
/// DualPI2, as Linux) drop for flows that are not ECN-capable by design,
/// and do not warn.
fn marking_asked(q: &QueueSpec) -> bool {
    if q.kind() == "step" {
        return true;
    }
    let Ok(toml::Value::Table(mut t)) = toml::Value::try_from(q) else {
        return false;
    };
    if t.remove("ecn").and_then(|e| e.as_bool()) != Some(true) {
        return false;
    }
    // the same queue with the kind's own default for `ecn`
    let default = QueueSpec::from_value(toml::Value::Table(t))
        .ok()
        .and_then(|d| toml::Value::try_from(&d).ok())
        .and_then(|v| v.get("ecn").and_then(|e| e.as_bool()));
    default == Some(false)
}

/// The warnings of scenario `sc`, whose topology (as the run builds it) is
/// `topo`. In the order: flow groups, workloads, queues, observed links.
pub fn warnings(sc: &Scenario, topo: &Topology) -> Vec<Warning> {
    let mut out = Vec::new();
    for (i, f) in sc.flows.iter().enumerate() {
        if f.cbr.is_none() {
            let who = format!("flow group `{}`", super::cut(&f.group));
            tcp_warnings(
                &format!("flows[{i}]"),
                &who,
                &f.cc,
                &sc.tcp_params(i),
                &mut out,
            );
        }
    }
    let mut wl_tcp = Vec::new();
    for (i, w) in sc.workloads.iter().enumerate() {
        let Some((cc, p)) = workload_tcp(sc, w) else {
            continue;
        };
        let who = format!("workload `{}`", super::cut(w.name()));
        tcp_warnings(&format!("workloads[{i}]"), &who, &cc, &p, &mut out);
        wl_tcp.push((i, ecn_capable(&cc, &p)));
    }
    if sc.routing.ecmp || sc.events.iter().any(|e| e.down.is_some()) {
        return out;
    }
    route_warnings(sc, topo, &wl_tcp, &mut out);
    out
}

/// The `cc` and resolved TCP parameters of a workload, read from its
/// serialised form (as `paths::workload_cc`), `None` for one without TCP.
fn workload_tcp(sc: &Scenario, w: &crate::traffic::WorkloadSpec) -> Option<(CcConfig, TcpParams)> {
    let v = toml::Value::try_from(w).ok()?;
    let cc: CcConfig = v.get("cc")?.clone().try_into().ok()?;
    let mut p = TcpParams::default();
    p.apply(&sc.tcp);
    if let Some(t) = v.get("tcp") {
        let o: crate::tcp::TcpOptions = t.clone().try_into().ok()?;
        p.apply(&o);
    }
    Some((cc, p))
}

/// Link directions used by data (`data`), by any packet (`any`), and by
/// ECN-capable data (`ecn`), per simplex link index.
struct Use {
    data: Vec<bool>,
    any: Vec<bool>,
    ecn: Vec<bool>,
    /// Crossed by a flow group named in `output.log_flows`.
    logged: Vec<bool>,
}

impl Use {
    fn mark(&mut self, path: &[usize], data: bool, ecn: bool, logged: bool) {
        for &li in path {
            self.any[li] = true;
            self.data[li] |= data;
            self.ecn[li] |= data && ecn;
            self.logged[li] |= logged;
        }
    }
}

fn route_warnings(sc: &Scenario, topo: &Topology, wl: &[(usize, bool)], out: &mut Vec<Warning>) {
    let n = topo.links.len();
    let mut u = Use {
        data: vec![false; n],
        any: vec![false; n],
        ecn: vec![false; n],
        logged: vec![false; n],
    };
    let log_groups: BTreeSet<&str> = sc.output.log_flows.iter().map(|s| s.as_str()).collect();
    for (i, f) in sc.flows.iter().enumerate() {
        let ecn = match &f.cbr {
            Some(c) => c.ecn,
            None => ecn_capable(&f.cc, &sc.tcp_params(i)),
        };
        let logged = log_groups.is_empty() || log_groups.contains(f.group.as_str());
        if let Some(p) = topo.path(&f.src, &f.dst) {
            u.mark(&p, true, ecn, logged);
        }
        if f.cbr.is_none() {
            if let Some(p) = topo.path(&f.dst, &f.src) {
                u.mark(&p, false, false, logged);
            }
        }
    }
    for &(i, ecn) in wl {
        // hosts of different roles talk to each other, both ways: each
        // host against the first host of every other role covers every
        // host's links at a cost linear in the hosts (as `paths::check_routes`)
        let roles = super::paths::workload_roles(&sc.workloads[i]);
        for (ia, (_, xs)) in roles.iter().enumerate() {
            for (ib, (_, ys)) in roles.iter().enumerate() {
                if ia == ib {
                    continue;
                }
                let pairs = (xs.iter().map(|a| (*a, ys[0]))).chain(ys.iter().map(|b| (xs[0], *b)));
                for (a, b) in pairs {
                    if let Some(p) = topo.path(a, b) {
                        u.mark(&p, true, ecn, log_groups.is_empty());
                    }
                }
            }
        }
    }
    for (li, sl) in topo.links.iter().enumerate() {
        let Some(q) = sl.queue() else { continue };
        if u.data[li] && !u.ecn[li] && marking_asked(q) {
            let (a, b) = (topo.names[sl.from.ix()], topo.names[sl.to.ix()]);
            let key = sl_key(li, sl);
            out.push(warn(
                "ecn-queue-without-ecn-flows",
                key,
                format!(
                    "the {} queue of `{a}` -> `{b}` is set to mark ECN, but none of the flows \
                     whose data cross it is ECN-capable, so it never marks (it only drops); set \
                     tcp.ecn = true (and, for Prague, tcp.ecn_feedback = \"accecn\") on those \
                     flows, or turn the queue's marking off",
                    q.kind()
                ),
            ));
        }
    }
    let named = (sc.output.log.iter().enumerate()).map(|(i, n)| ("log", i, n));
    let pcap = (sc.output.pcap.iter().enumerate()).map(|(i, n)| ("pcap", i, n));
    for (what, i, name) in named.chain(pcap) {
        let dirs = sc.link_directions(name);
        let used = |need: &Vec<bool>| {
            dirs.iter().any(|(_, a, b)| {
                topo.links.iter().enumerate().any(|(li, sl)| {
                    need[li] && topo.names[sl.from.ix()] == *a && topo.names[sl.to.ix()] == *b
                })
            })
        };
        let by_flows = what == "log" && !log_groups.is_empty();
        let ok = if by_flows {
            used(&u.logged)
        } else {
            used(&u.any)
        };
        if !ok {
            let whom = if by_flows {
                "by none of the flow groups output.log_flows names"
            } else {
                "by no flow or workload"
            };
            out.push(warn(
                "observed-link-unused",
                format!("output.{what}[{i}]"),
                format!(
                    "`{}` is crossed {whom}, so its {} will be empty",
                    super::cut(name),
                    if what == "log" {
                        "event log"
                    } else {
                        "capture"
                    }
                ),
            ));
        }
    }
}

/// The key of a simplex link's queue: `links[i].queue_ab`, `.queue_ba` or
/// `.queue` (the one the direction uses).
fn sl_key(li: usize, sl: &super::paths::Simplex) -> String {
    // `Topology` lists each `[[links]]` entry's a→b then b→a direction
    let i = li / 2;
    let l = sl.spec;
    let which = match (sl.ab, &l.queue_ab, &l.queue_ba) {
        (true, Some(_), _) => "queue_ab",
        (false, _, Some(_)) => "queue_ba",
        _ => "queue",
    };
    format!("links[{i}].{which}")
}

impl Scenario {
    /// The scenario's warnings (see the module), on the routes of its own
    /// seed. A run computes them once when it is built
    /// (`Simulation::warnings`).
    pub fn warnings(&self) -> Vec<Warning> {
        warnings(self, &Topology::new(self))
    }
}

#[cfg(test)]
mod tests {
    use crate::Scenario;

    /// A dumbbell h1 - r1 - r2 - h2 (the bottleneck r1 -> r2 named `b`),
    /// and a spare link r2 - h3 no flow crosses; `flows` and `extra` are
    /// appended.
    fn sc(bottleneck_queue: &str, flows: &str, extra: &str) -> Scenario {
        let text = format!(
            r#"
name = "w"
duration = "1s"
{extra}
[nodes]
hosts = ["h1", "h2", "h3"]
routers = ["r1", "r2"]
[[links]]
a = "h1"
b = "r1"
rate = "100Mbps"
delay = "1ms"
[[links]]
name = "b"
a = "r1"
b = "r2"
rate = "10Mbps"
delay = "10ms"
queue_ab = {bottleneck_queue}
[[links]]
a = "r2"
b = "h2"
rate = "100Mbps"
delay = "1ms"
[[links]]
name = "spare"
a = "r2"
b = "h3"
rate = "100Mbps"
delay = "1ms"
{flows}
"#
        );
        Scenario::from_toml(&text, "w.toml").unwrap_or_else(|e| panic!("{e}"))
    }

    fn flow(cc: &str, tcp: &str) -> String {
        format!("[[flows]]\ngroup = \"g\"\nsrc = \"h1\"\ndst = \"h2\"\ncc = \"{cc}\"\ntcp = {{ {tcp} }}\n")
    }

    fn causes(s: &Scenario) -> Vec<(String, String)> {
        s.warnings().into_iter().map(|w| (w.cause, w.key)).collect()
    }

    const FIFO: &str = r#"{ kind = "droptail", limit = 100 }"#;

    #[test]
    fn prague_needs_ecn_with_accecn() {
        let bare = sc(FIFO, &flow("prague", ""), "");
        assert_eq!(
            causes(&bare),
            [("prague-without-accecn".into(), "flows[0].cc".into())]
        );
        let classic = sc(FIFO, &flow("prague", "ecn = true"), "");
        assert_eq!(causes(&classic).len(), 1);
        let w = &classic.warnings()[0];
        assert!(
            w.message.contains("tcp.ecn_feedback = \"rfc3168\""),
            "{}",
            w.message
        );
        let right = sc(
            FIFO,
            &flow("prague", r#"ecn = true, ecn_feedback = "accecn""#),
            "",
        );
        assert!(causes(&right).is_empty(), "{:?}", causes(&right));
    }

    #[test]
    fn dctcp_needs_ecn_and_bbr_needs_sack() {
        let d = sc(FIFO, &flow("dctcp", ""), "");
        assert_eq!(
            causes(&d),
            [("dctcp-without-ecn".into(), "flows[0].cc".into())]
        );
        assert!(sc(FIFO, &flow("dctcp", "ecn = true"), "")
            .warnings()
            .is_empty());
        let b = sc(FIFO, &flow("bbr", ""), "");
        assert_eq!(
            causes(&b),
            [("bbr-without-sack".into(), "flows[0].cc".into())]
        );
        assert!(sc(FIFO, &flow("bbr", r#"profile = "linux-6.1""#), "")
            .warnings()
            .is_empty());
        // the scenario-wide [tcp] counts as much as the group's own table
        let global = sc(
            FIFO,
            &flow("bbr", ""),
            "[tcp]\nsack = true\nrecovery = \"sack\"",
        );
        assert!(global.warnings().is_empty(), "{:?}", causes(&global));
    }

    #[test]
    fn a_marking_queue_needs_an_ecn_capable_flow() {
        let red = r#"{ kind = "red", limit = 100, min_th = 5, max_th = 15, ecn = true }"#;
        let s = sc(red, &flow("cubic", ""), "");
        assert_eq!(
            causes(&s),
            [(
                "ecn-queue-without-ecn-flows".into(),
                "links[1].queue_ab".into()
            )]
        );
        assert!(sc(red, &flow("cubic", "ecn = true"), "")
            .warnings()
            .is_empty());
        // a queue that drops only does not warn, nor one crossed only by ACKs
        assert!(sc(
            r#"{ kind = "red", limit = 100, min_th = 5, max_th = 15 }"#,
            &flow("cubic", ""),
            ""
        )
        .warnings()
        .is_empty());
        let back = "[[flows]]\ngroup = \"g\"\nsrc = \"h2\"\ndst = \"h1\"\ncc = \"cubic\"\n";
        assert!(sc(red, back, "").warnings().is_empty());
        // kinds that mark by default (as Linux) drop for classic flows by
        // design; a step marker marks and does nothing else
        assert!(sc(r#"{ kind = "dualpi2" }"#, &flow("cubic", ""), "")
            .warnings()
            .is_empty());
        assert!(sc(r#"{ kind = "fq_codel" }"#, &flow("cubic", ""), "")
            .warnings()
            .is_empty());
        let step = sc(r#"{ kind = "step", k = 20 }"#, &flow("cubic", ""), "");
        assert_eq!(causes(&step).len(), 1);
        // an ECN-capable CBR flow is enough
        let cbr = format!(
            "{}[[flows]]\ngroup = \"u\"\nsrc = \"h1\"\ndst = \"h2\"\ncbr = {{ rate = \"1Mbps\", ecn = true }}\n",
            flow("cubic", "")
        );
        assert!(sc(red, &cbr, "").warnings().is_empty());
    }

    #[test]
    fn observed_links_must_be_crossed() {
        let f = flow("cubic", "");
        let spare = sc(FIFO, &f, "[output]\nlog = [\"spare\"]\npcap = [\"r1->r2\"]");
        assert_eq!(
            causes(&spare),
            [("observed-link-unused".into(), "output.log[0]".into())]
        );
        // the ACKs' direction counts as crossed
        let back = sc(FIFO, &f, "[output]\nlog = [\"r2->r1\"]");
        assert!(back.warnings().is_empty());
        // the log keeps only the groups log_flows names
        let two = format!("{f}[[flows]]\ngroup = \"x\"\nsrc = \"h1\"\ndst = \"h3\"\n");
        let only_x = sc(
            FIFO,
            &two,
            "[output]\nlog = [\"r2->h2\"]\nlog_flows = [\"x\"]",
        );
        assert_eq!(
            causes(&only_x),
            [("observed-link-unused".into(), "output.log[0]".into())]
        );
        let w = &only_x.warnings()[0];
        assert!(w.message.contains("log_flows"), "{}", w.message);
    }

    #[test]
    fn every_cause_is_listed_once() {
        let mut names: Vec<&str> = super::CAUSES.iter().map(|(c, _)| *c).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), super::CAUSES.len());
    }
}
