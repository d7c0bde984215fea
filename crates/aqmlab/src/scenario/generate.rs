//! Topology generators and host patterns: `[topology] kind = "dumbbell" |
//! "star" | "parking-lot" | "fat-tree"` expands, when the scenario is
//! loaded, into the same `nodes` and `[[links]]` a hand-written file would
//! list (appended after any the file declares), so a scenario with 10⁵ hosts
//! needs no 10⁵ `[[links]]` tables. Links to hosts are not monitored
//! (`monitor = false`: no queue time series for 10⁵ access ports); links
//! between routers keep the default (monitored).
//!
//! Generated names:
//!
//! | kind | hosts | routers | links |
//! |---|---|---|---|
//! | `dumbbell` | `src0..`, `dst0..` (`hosts` per side) | `left`, `right` | `srcI-left`, `bottleneck` (left–right), `right-dstI` |
//! | `star` | `h0..` (`hosts`), `sink` | `hub` | `hI-hub`, `bottleneck` (hub–sink) |
//! | `parking-lot` | `long_src`, `long_dst`, `cross_srcI`, `cross_dstI` (I = 0..hops−1) | `r0..r{hops}` | `hopI` (rI–rI+1), host links `long_src-r0`, `r{hops}-long_dst`, `cross_srcI-rI`, `rI+1-cross_dstI` |
//! | `fat-tree` | `hP-E-I` (pod P, edge switch E, host I) | `eP-E` (edge), `aP-A` (aggregation), `cC` (core) | host–edge, edge–aggregation, aggregation–core |
//!
//! The fat-tree is Al-Fares, Loukissas, Vahdat, "A Scalable, Commodity Data
//! Center Network Architecture" (SIGCOMM 2008) §3: `k` pods, each with k/2
//! edge and k/2 aggregation switches; edge switch E of every pod serves k/2
//! hosts and links to every aggregation switch of its pod; aggregation
//! switch A of every pod links to the k/2 core switches `c{A·k/2 + j}`,
//! j = 0..k/2 ((k/2)² core switches, k³/4 hosts). It sets
//! `[routing] ecmp = true` unless `ecmp = false` is given.
//!
//! **Host patterns**: a flow group's `src` or `dst` ending in `*` stands for
//! every host whose name starts with the text before the `*`, in declaration
//! order (`src = "h0-*"`: the hosts of pod 0). Two patterns pair the i-th
//! source with the i-th destination (they must match equally many hosts); a
//! pattern and a single host give one flow entry per matched host. Each
//! entry keeps the group's name and `count`, so `count = 2` with 10 matched
//! hosts is 20 flows in one group (one random stream per group name).

use super::units::{Dur, Rate};
use super::{FlowSpec, LinkSpec, Scenario};
use crate::aqm::QueueSpec;
use serde::{Deserialize, Serialize};

/// `[topology]`: a generated topology, by `kind`.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum TopologySpec {
    Dumbbell(DumbbellSpec),
    Star(StarSpec),
    ParkingLot(ParkingLotSpec),
    FatTree(FatTreeSpec),
    /// An edge-list CSV file ([`super::import`]).
    Edges(super::import::EdgesSpec),
    /// A GraphML file as the Internet Topology Zoo ships it ([`super::import`]).
    Graphml(super::import::GraphmlSpec),
}

/// Parsed in two stages, as the registries' `kind` tables are
/// ([`crate::registry::split_kind`]): the kind, then its table with key
/// paths, so that an error names the key inside `[topology]`
/// (`topology.queue.limit`, `topology.access_rate`) where serde's tagged
/// enum could name only `topology`.
impl<'de> Deserialize<'de> for TopologySpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use crate::registry::{nested, parse_config, split_kind};
        let v = <toml::Value as Deserialize>::deserialize(d)?;
        let err = |(p, m): (String, String)| <D::Error as serde::de::Error>::custom(nested(&p, &m));
        let (kind, table) = split_kind(v, "topology", KINDS, false).map_err(err)?;
        match kind.as_str() {
            "dumbbell" => parse_config(table).map(TopologySpec::Dumbbell),
            "star" => parse_config(table).map(TopologySpec::Star),
            "parking-lot" => parse_config(table).map(TopologySpec::ParkingLot),
            "edges" => parse_config(table).map(TopologySpec::Edges),
            "graphml" => parse_config(table).map(TopologySpec::Graphml),
            _ => parse_config(table).map(TopologySpec::FatTree),
        }
        .map_err(err)
    }
}

/// The names a `kind` may take.
pub const KINDS: &[&str] = &[
    "dumbbell",
    "star",
    "parking-lot",
    "fat-tree",
    "edges",
    "graphml",
];

/// `n` senders `srcI` on router `left`, `n` receivers `dstI` on `right`, one
/// bottleneck between the routers.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DumbbellSpec {
    /// Hosts per side.
    #[serde(default = "one")]
    pub hosts: u32,
    pub access_rate: Rate,
    pub access_delay: Dur,
    #[serde(default)]
    pub access_queue: Option<QueueSpec>,
    pub bottleneck_rate: Rate,
    pub bottleneck_delay: Dur,
    /// The bottleneck's queue, both directions.
    #[serde(default)]
    pub queue: Option<QueueSpec>,
}

/// `n` hosts `hI` on router `hub`, and a `sink` host behind the bottleneck
/// `hub`–`sink`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StarSpec {
    pub hosts: u32,
    pub access_rate: Rate,
    pub access_delay: Dur,
    #[serde(default)]
    pub access_queue: Option<QueueSpec>,
    pub bottleneck_rate: Rate,
    pub bottleneck_delay: Dur,
    /// The bottleneck's queue, both directions.
    #[serde(default)]
    pub queue: Option<QueueSpec>,
}

/// A chain of `hops` router-to-router links; one long path end to end and
/// one cross path per hop.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ParkingLotSpec {
    pub hops: u32,
    pub rate: Rate,
    pub delay: Dur,
    /// The hop links' queue, both directions.
    #[serde(default)]
    pub queue: Option<QueueSpec>,
    pub access_rate: Rate,
    pub access_delay: Dur,
    #[serde(default)]
    pub access_queue: Option<QueueSpec>,
}

/// A k-ary fat-tree (Al-Fares et al. 2008).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FatTreeSpec {
    /// Switch radix: even, at least 2.
    pub k: u32,
    /// Rate of every link (`core_rate` overrides aggregation–core links).
    pub rate: Rate,
    #[serde(default)]
    pub core_rate: Option<Rate>,
    /// Propagation delay of every link.
    pub delay: Dur,
    /// Queue of every switch port (`core_queue` overrides the
    /// aggregation–core links, `host_queue` the host–edge links).
    #[serde(default)]
    pub queue: Option<QueueSpec>,
    #[serde(default)]
    pub core_queue: Option<QueueSpec>,
    #[serde(default)]
    pub host_queue: Option<QueueSpec>,
    /// Spread flows over equal-cost paths (default true).
    #[serde(default = "yes")]
    pub ecmp: bool,
}

fn one() -> u32 {
    1
}

fn yes() -> bool {
    true
}

/// A link `a`–`b` with the defaults of every other key.
pub(super) fn link(a: &str, b: &str, rate: Rate, delay: Dur, queue: Option<QueueSpec>) -> LinkSpec {
    LinkSpec {
        name: None,
        a: a.to_string(),
        b: b.to_string(),
        rate,
        rate_ba: None,
        delay,
        queue,
        queue_ab: None,
        queue_ba: None,
        loss_ab: 0.0,
        loss_ba: 0.0,
        monitor: None,
        classifier_ab: None,
        classifier_ba: None,
        trace: None,
        trace_ba: None,
        trace_once: false,
        traces: Default::default(),
    }
}

/// A link between a host and a router: not monitored.
fn access(a: &str, b: &str, rate: Rate, delay: Dur, queue: &Option<QueueSpec>) -> LinkSpec {
    let mut l = link(a, b, rate, delay, queue.clone());
    l.monitor = Some(false);
    l
}

fn named(mut l: LinkSpec, name: &str) -> LinkSpec {
    l.name = Some(name.to_string());
    l
}

/// Most hosts (or hops) a `[topology]` generator takes: twice the 10⁵-host
/// star the scale benchmark runs. The expansion (about 0.7 KB of link spec
/// per host) then stays far below 1 GiB.
pub const MAX_GENERATED_HOSTS: u32 = 200_000;
/// Largest fat-tree arity: k³/4 = 65 536 hosts, 3 × 65 536 links.
pub const MAX_FAT_TREE_K: u32 = 64;

impl TopologySpec {
    /// Check parameters. Returns (key inside `topology`, message).
    pub fn validate(&self) -> Result<(), (String, String)> {
        // bounded before anything is expanded: a generated node list is
        // built in full at load time, before the resource limits are known
        // `per`: hosts the generator makes per unit of the key (a
        // dumbbell's `hosts` is per side, a parking lot's hops each add a
        // cross source and sink), so that no kind makes more than
        // MAX_GENERATED_HOSTS hosts (a parking lot of 150 000 hops held
        // 687 MB at load, before the node limit refused it)
        let positive = |k: &str, v: u32, per: u32| {
            let max = MAX_GENERATED_HOSTS / per;
            if v == 0 {
                Err((k.to_string(), "must be at least 1".to_string()))
            } else if v > max {
                Err((
                    k.to_string(),
                    format!(
                        "at most {max} in a generated topology (at most {MAX_GENERATED_HOSTS} hosts), got {v}"
                    ),
                ))
            } else {
                Ok(())
            }
        };
        let queues: Vec<(&str, &Option<QueueSpec>)> = match self {
            TopologySpec::Dumbbell(d) => {
                positive("hosts", d.hosts, 2)?;
                vec![("access_queue", &d.access_queue), ("queue", &d.queue)]
            }
            TopologySpec::Star(s) => {
                positive("hosts", s.hosts, 1)?;
                vec![("access_queue", &s.access_queue), ("queue", &s.queue)]
            }
            TopologySpec::ParkingLot(p) => {
                positive("hops", p.hops, 2)?;
                vec![("access_queue", &p.access_queue), ("queue", &p.queue)]
            }
            TopologySpec::FatTree(f) => {
                if f.k < 2 || f.k % 2 == 1 || f.k > MAX_FAT_TREE_K {
                    return Err((
                        "k".into(),
                        format!(
                            "must be an even number from 2 to {MAX_FAT_TREE_K} (k³/4 hosts), got {}",
                            f.k
                        ),
                    ));
                }
                vec![
                    ("queue", &f.queue),
                    ("core_queue", &f.core_queue),
                    ("host_queue", &f.host_queue),
                ]
            }
            TopologySpec::Edges(e) => return e.validate(),
            TopologySpec::Graphml(g) => return g.validate(),
        };
        for (k, q) in queues {
            if let Some(q) = q {
                q.validate().map_err(|(key, m)| (format!("{k}.{key}"), m))?;
            }
        }
        Ok(())
    }

    /// The hosts, routers and links this topology adds, and whether it
    /// asks for ECMP; an imported topology reads its file through `rd`.
    /// Returns (key inside `topology`, message).
    #[allow(clippy::type_complexity)]
    pub(crate) fn expand(
        &self,
        rd: &mut super::files::Reader,
    ) -> Result<(Vec<String>, Vec<String>, Vec<LinkSpec>, bool), (String, String)> {
        let mut x = Expansion::default();
        match self {
            TopologySpec::Dumbbell(d) => d.expand(&mut x),
            TopologySpec::Star(s) => s.expand(&mut x),
            TopologySpec::ParkingLot(p) => p.expand(&mut x),
            TopologySpec::FatTree(f) => f.expand(&mut x),
            TopologySpec::Edges(e) => {
                return e.import(rd).map(|i| (i.hosts, i.routers, i.links, false))
            }
            TopologySpec::Graphml(g) => {
                return g.import(rd).map(|i| (i.hosts, i.routers, i.links, false))
            }
        }
        Ok((x.hosts, x.routers, x.links, x.ecmp))
    }
}

/// What a generator adds to the scenario.
#[derive(Default)]
struct Expansion {
    hosts: Vec<String>,
    routers: Vec<String>,
    links: Vec<LinkSpec>,
    ecmp: bool,
}

impl DumbbellSpec {
    /// `hosts` sources on `left`, as many sinks on `right`, one bottleneck between.
    fn expand(&self, x: &mut Expansion) {
        x.routers.extend(["left".to_string(), "right".to_string()]);
        x.hosts.reserve_exact(2 * self.hosts as usize);
        x.links.reserve_exact(2 * self.hosts as usize + 1);
        for i in 0..self.hosts {
            x.hosts.push(format!("src{i}"));
        }
        for i in 0..self.hosts {
            x.hosts.push(format!("dst{i}"));
        }
        for i in 0..self.hosts {
            let h = format!("src{i}");
            x.links.push(access(
                &h,
                "left",
                self.access_rate,
                self.access_delay,
                &self.access_queue,
            ));
        }
        x.links.push(named(
            link(
                "left",
                "right",
                self.bottleneck_rate,
                self.bottleneck_delay,
                self.queue.clone(),
            ),
            "bottleneck",
        ));
        for i in 0..self.hosts {
            let h = format!("dst{i}");
            x.links.push(access(
                "right",
                &h,
                self.access_rate,
                self.access_delay,
                &self.access_queue,
            ));
        }
    }
}

impl StarSpec {
    /// `hosts` hosts and a `sink` around one `hub`; the hub → sink link is the monitored bottleneck.
    fn expand(&self, x: &mut Expansion) {
        x.routers.push("hub".to_string());
        x.hosts.reserve_exact(self.hosts as usize + 1);
        x.links.reserve_exact(self.hosts as usize + 1);
        for i in 0..self.hosts {
            x.hosts.push(format!("h{i}"));
        }
        x.hosts.push("sink".to_string());
        for i in 0..self.hosts {
            let h = format!("h{i}");
            x.links.push(access(
                &h,
                "hub",
                self.access_rate,
                self.access_delay,
                &self.access_queue,
            ));
        }
        let mut b = named(
            link(
                "hub",
                "sink",
                self.bottleneck_rate,
                self.bottleneck_delay,
                self.queue.clone(),
            ),
            "bottleneck",
        );
        b.monitor = Some(true);
        x.links.push(b);
    }
}

impl ParkingLotSpec {
    /// A chain of `hops` router links; one long flow path across all, a cross path over each.
    fn expand(&self, x: &mut Expansion) {
        for i in 0..=self.hops {
            x.routers.push(format!("r{i}"));
        }
        x.hosts
            .extend(["long_src".to_string(), "long_dst".to_string()]);
        for i in 0..self.hops {
            x.hosts.push(format!("cross_src{i}"));
            x.hosts.push(format!("cross_dst{i}"));
        }
        let (ar, ad, aq) = (self.access_rate, self.access_delay, &self.access_queue);
        x.links.push(access("long_src", "r0", ar, ad, aq));
        x.links
            .push(access(&format!("r{}", self.hops), "long_dst", ar, ad, aq));
        for i in 0..self.hops {
            x.links.push(named(
                link(
                    &format!("r{i}"),
                    &format!("r{}", i + 1),
                    self.rate,
                    self.delay,
                    self.queue.clone(),
                ),
                &format!("hop{i}"),
            ));
            x.links.push(access(
                &format!("cross_src{i}"),
                &format!("r{i}"),
                ar,
                ad,
                aq,
            ));
            x.links.push(access(
                &format!("r{}", i + 1),
                &format!("cross_dst{i}"),
                ar,
                ad,
                aq,
            ));
        }
    }
}

impl FatTreeSpec {
    /// A k-ary fat-tree (Al-Fares et al., SIGCOMM 2008): (k/2)² core switches, k pods of k/2 aggregation and k/2 edge switches, k/2 hosts per edge switch.
    fn expand(&self, x: &mut Expansion) {
        x.ecmp = self.ecmp;
        let h = self.k / 2;
        let host_q = self.host_queue.clone().or(self.queue.clone());
        let core_q = self.core_queue.clone().or(self.queue.clone());
        for c in 0..h * h {
            x.routers.push(format!("c{c}"));
        }
        for p in 0..self.k {
            for a in 0..h {
                x.routers.push(format!("a{p}-{a}"));
            }
            for e in 0..h {
                x.routers.push(format!("e{p}-{e}"));
                for i in 0..h {
                    let name = format!("h{p}-{e}-{i}");
                    x.links.push(access(
                        &name,
                        &format!("e{p}-{e}"),
                        self.rate,
                        self.delay,
                        &host_q,
                    ));
                    x.hosts.push(name);
                }
            }
            for e in 0..h {
                for a in 0..h {
                    x.links.push(link(
                        &format!("e{p}-{e}"),
                        &format!("a{p}-{a}"),
                        self.rate,
                        self.delay,
                        self.queue.clone(),
                    ));
                }
            }
            for a in 0..h {
                for j in 0..h {
                    x.links.push(link(
                        &format!("a{p}-{a}"),
                        &format!("c{}", a * h + j),
                        self.core_rate.unwrap_or(self.rate),
                        self.delay,
                        core_q.clone(),
                    ));
                }
            }
        }
    }
}
/// Expand `[topology]` into nodes and links, and host patterns in flow
/// groups into one entry per host. An imported topology's file is taken
/// from `supplied` or read from disk, and recorded in `sc.inputs`.
/// Returns (key path, message).
pub fn expand(
    sc: &mut Scenario,
    supplied: Option<&super::files::Supplied>,
    max_file_bytes: u64,
) -> Result<(), (String, String)> {
    if let Some(t) = sc.topology.take() {
        sc.generated_by = Some(match t {
            TopologySpec::Dumbbell(_) | TopologySpec::Star(_) => "topology.hosts",
            TopologySpec::ParkingLot(_) => "topology.hops",
            TopologySpec::FatTree(_) => "topology.k",
            TopologySpec::Edges(_) | TopologySpec::Graphml(_) => "topology.file",
        });
        t.validate()
            .map_err(|(k, m)| (format!("topology.{k}"), m))?;
        let mut rd = super::files::Reader {
            supplied,
            read: Default::default(),
            max_bytes: max_file_bytes,
        };
        let (hosts, routers, links, ecmp) = t
            .expand(&mut rd)
            .map_err(|(k, m)| (format!("topology.{k}"), m))?;
        sc.inputs
            .extend(rd.read.into_values().map(|f| (*f).clone()));
        // appended, or moved in whole where the file lists none (no copy
        // of 10⁵ generated links)
        fn append<T>(to: &mut Vec<T>, v: Vec<T>) {
            if to.is_empty() {
                *to = v;
            } else {
                to.extend(v);
            }
        }
        append(&mut sc.nodes.hosts, hosts);
        append(&mut sc.nodes.routers, routers);
        append(&mut sc.links, links);
        sc.routing.ecmp |= ecmp;
    }
    // the host list that workload patterns match (none to copy without
    // workloads: 10⁵ generated names)
    let hosts = if sc.workloads.is_empty() {
        Vec::new()
    } else {
        sc.nodes.hosts.clone()
    };
    let expand_list = |list: &mut Vec<String>, key: String| -> Result<(), (String, String)> {
        if !list.iter().any(|h| h.ends_with('*')) {
            return Ok(());
        }
        let mut out = Vec::new();
        for (j, h) in list.iter().enumerate() {
            match h.strip_suffix('*') {
                Some(prefix) => {
                    let n = out.len();
                    out.extend(hosts.iter().filter(|x| x.starts_with(prefix)).cloned());
                    if out.len() == n {
                        return Err((
                            format!("{key}[{j}]"),
                            format!("the pattern `{h}` matches no host"),
                        ));
                    }
                }
                None => out.push(h.clone()),
            }
        }
        *list = out;
        Ok(())
    };
    for (i, w) in sc.workloads.iter_mut().enumerate() {
        for (k, list) in w.host_lists_mut() {
            expand_list(list, format!("workloads[{i}].{k}"))?;
        }
    }
    if !sc
        .flows
        .iter()
        .any(|f| f.src.ends_with('*') || f.dst.ends_with('*'))
    {
        return Ok(());
    }
    let matching = |pat: &str| -> Vec<String> {
        match pat.strip_suffix('*') {
            Some(prefix) => sc
                .nodes
                .hosts
                .iter()
                .filter(|h| h.starts_with(prefix))
                .cloned()
                .collect(),
            None => vec![pat.to_string()],
        }
    };
    let mut flows = Vec::with_capacity(sc.flows.len());
    for (i, f) in sc.flows.iter().enumerate() {
        let (srcs, dsts) = (matching(&f.src), matching(&f.dst));
        for (k, v, pat) in [("src", &srcs, &f.src), ("dst", &dsts, &f.dst)] {
            if v.is_empty() {
                return Err((
                    format!("flows[{i}].{k}"),
                    format!("the pattern `{pat}` matches no host"),
                ));
            }
        }
        let pairs: Vec<(&String, &String)> = if srcs.len() == dsts.len() {
            srcs.iter().zip(&dsts).collect()
        } else if dsts.len() == 1 {
            srcs.iter().map(|s| (s, &dsts[0])).collect()
        } else if srcs.len() == 1 {
            dsts.iter().map(|d| (&srcs[0], d)).collect()
        } else {
            return Err((
                format!("flows[{i}].dst"),
                format!(
                    "`{}` matches {} hosts and `{}` {}: two patterns must match equally many hosts",
                    f.src,
                    srcs.len(),
                    f.dst,
                    dsts.len()
                ),
            ));
        };
        flows.reserve(pairs.len());
        for (s, d) in pairs {
            let mut g: FlowSpec = f.clone();
            g.src = s.clone();
            g.dst = d.clone();
            flows.push(g);
        }
    }
    sc.flows = flows;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::Scenario;

    fn load(t: &str) -> Result<Scenario, String> {
        Scenario::from_toml(t, "t.toml").map_err(|e| e.to_string())
    }

    /// The generated dumbbell is the hand-written one.
    #[test]
    fn dumbbell_expands_to_the_hand_written_file() {
        let gen = load(
            r#"
name = "d"
duration = "1s"
[topology]
kind = "dumbbell"
hosts = 2
access_rate = "1Gbps"
access_delay = "1ms"
bottleneck_rate = "100Mbps"
bottleneck_delay = "10ms"
queue = { kind = "red", limit = 100, min_th = 10, max_th = 30 }
[[flows]]
group = "bulk"
src = "src*"
dst = "dst*"
"#,
        )
        .unwrap();
        let mut hand = String::from(
            "name = \"d\"\nduration = \"1s\"\n[nodes]\nhosts = [\"src0\", \"src1\", \"dst0\", \"dst1\"]\nrouters = [\"left\", \"right\"]\n",
        );
        for i in 0..2 {
            hand += &format!("[[links]]\na = \"src{i}\"\nb = \"left\"\nrate = \"1Gbps\"\ndelay = \"1ms\"\nmonitor = false\n");
        }
        hand += "[[links]]\nname = \"bottleneck\"\na = \"left\"\nb = \"right\"\nrate = \"100Mbps\"\ndelay = \"10ms\"\nqueue = { kind = \"red\", limit = 100, min_th = 10, max_th = 30 }\n";
        for i in 0..2 {
            hand += &format!("[[links]]\na = \"right\"\nb = \"dst{i}\"\nrate = \"1Gbps\"\ndelay = \"1ms\"\nmonitor = false\n");
        }
        for i in 0..2 {
            hand += &format!("[[flows]]\ngroup = \"bulk\"\nsrc = \"src{i}\"\ndst = \"dst{i}\"\n");
        }
        // one written entry per expanded flow (same group): parsed without
        // the written-file rule that each entry names its own group
        let hand: Scenario = toml::from_str(&hand).unwrap();
        hand.validate().unwrap();
        let j = |s: &Scenario| serde_json::to_string(s).unwrap();
        assert_eq!(j(&gen), j(&hand));
        assert!(gen.topology.is_none());
    }

    #[test]
    fn fat_tree_has_the_al_fares_counts_and_sets_ecmp() {
        let sc = load(
            "name = \"f\"\nduration = \"1s\"\n[topology]\nkind = \"fat-tree\"\nk = 4\nrate = \"1Gbps\"\ndelay = \"1us\"\n[[flows]]\ngroup = \"g\"\nsrc = \"h0-*\"\ndst = \"h3-*\"\n",
        )
        .unwrap();
        // k³/4 hosts, 5k²/4 switches, 3k³/4 links
        assert_eq!(sc.nodes.hosts.len(), 16);
        assert_eq!(sc.nodes.routers.len(), 20);
        assert_eq!(sc.links.len(), 48);
        assert!(sc.routing.ecmp);
        assert_eq!(sc.flows.len(), 4);
        assert_eq!(sc.flows[3].src, "h0-1-1");
        assert_eq!(sc.flows[3].dst, "h3-1-1");
        // aggregation switch 1 of pod 2 links to cores 2 and 3
        assert!(sc.links.iter().any(|l| l.a == "a2-1" && l.b == "c3"));
        assert!(!sc.links.iter().any(|l| l.a == "a2-1" && l.b == "c1"));
    }

    #[test]
    fn star_and_parking_lot_expand() {
        let star = load("name = \"s\"\nduration = \"1s\"\n[topology]\nkind = \"star\"\nhosts = 5\naccess_rate = \"1Gbps\"\naccess_delay = \"1ms\"\nbottleneck_rate = \"100Mbps\"\nbottleneck_delay = \"5ms\"\n[[flows]]\ngroup = \"g\"\nsrc = \"h*\"\ndst = \"sink\"\ncount = 2\n").unwrap();
        assert_eq!(star.nodes.hosts.len(), 6);
        assert_eq!(star.links.len(), 6);
        assert_eq!(star.flows.len(), 5);
        assert_eq!(star.flows.iter().map(|f| f.count).sum::<u32>(), 10);
        let pl = load("name = \"p\"\nduration = \"1s\"\n[topology]\nkind = \"parking-lot\"\nhops = 3\nrate = \"10Mbps\"\ndelay = \"5ms\"\naccess_rate = \"100Mbps\"\naccess_delay = \"1ms\"\n[[flows]]\ngroup = \"long\"\nsrc = \"long_src\"\ndst = \"long_dst\"\n[[flows]]\ngroup = \"cross\"\nsrc = \"cross_src*\"\ndst = \"cross_dst*\"\n").unwrap();
        assert_eq!(pl.nodes.routers, ["r0", "r1", "r2", "r3"]);
        assert_eq!(pl.links.len(), 3 + 2 + 6);
        let p = super::super::paths::Topology::new(&pl);
        let path = p.path("long_src", "long_dst").unwrap();
        assert_eq!(
            p.describe("long_src", &path),
            "long_src -> r0 -> r1 -> r2 -> r3 -> long_dst"
        );
        let path = p.path("cross_src1", "cross_dst1").unwrap();
        assert_eq!(
            p.describe("cross_src1", &path),
            "cross_src1 -> r1 -> r2 -> cross_dst1"
        );
    }

    #[test]
    fn bad_generator_input_names_the_key() {
        let e = load("name = \"f\"\nduration = \"1s\"\n[topology]\nkind = \"fat-tree\"\nk = 5\nrate = \"1Gbps\"\ndelay = \"1us\"\n[[flows]]\ngroup = \"g\"\nsrc = \"h0-*\"\ndst = \"h3-*\"\n").unwrap_err();
        assert!(e.contains("topology.k") && e.contains("even"), "{e}");
        let e =
            load("name = \"f\"\nduration = \"1s\"\n[topology]\nkind = \"torus\"\n").unwrap_err();
        assert!(e.contains("topology") && e.contains("fat-tree"), "{e}");
        let e = load("name = \"f\"\nduration = \"1s\"\n[topology]\nkind = \"fat-tree\"\nk = 4\nrate = \"1Gbps\"\ndelay = \"1us\"\n[[flows]]\ngroup = \"g\"\nsrc = \"x*\"\ndst = \"h3-*\"\n").unwrap_err();
        assert!(
            e.contains("flows[0].src") && e.contains("matches no host"),
            "{e}"
        );
    }
}

#[cfg(test)]
mod ecmp_tests {
    use crate::net::packet::FlowId;
    use crate::scenario::paths::Topology;
    use crate::{Scenario, Simulation};

    const K4: &str = "name = \"f\"\nduration = \"200ms\"\n[topology]\nkind = \"fat-tree\"\nk = 4\nrate = \"1Gbps\"\ndelay = \"10us\"\nECMP\n[[flows]]\ngroup = \"g\"\nsrc = \"h0-*\"\ndst = \"h3-*\"\ncount = 4\n";

    /// The core switch a flow's path from `src` to `dst` crosses.
    fn core_of(t: &Topology, src: &str, dst: &str, flow: u32) -> String {
        let path = t
            .trace(t.ids[src], t.ids[dst], FlowId(flow))
            .expect("routable");
        assert_eq!(path.len(), 6, "host-edge-agg-core-agg-edge-host");
        t.names[t.links[path[2]].to.ix()].to_string()
    }

    #[test]
    fn ecmp_spreads_flows_over_every_core_switch() {
        let sc = Scenario::from_toml(&K4.replace("ECMP", ""), "f.toml").unwrap();
        let t = Topology::new(&sc);
        let mut per_core = std::collections::BTreeMap::new();
        for f in 0..400 {
            *per_core
                .entry(core_of(&t, "h0-0-0", "h3-1-1", f))
                .or_insert(0) += 1;
        }
        // 4 cores, 100 flows each expected
        assert_eq!(per_core.len(), 4, "{per_core:?}");
        assert!(
            per_core.values().all(|&n| (60..=140).contains(&n)),
            "{per_core:?}"
        );
        // without ECMP every flow takes the first shortest path
        let sc = Scenario::from_toml(&K4.replace("ECMP", "ecmp = false"), "f.toml").unwrap();
        let t = Topology::new(&sc);
        let first = core_of(&t, "h0-0-0", "h3-1-1", 0);
        assert!((0..100).all(|f| core_of(&t, "h0-0-0", "h3-1-1", f) == first));
    }

    #[test]
    fn ecmp_runs_use_every_core_and_are_deterministic() {
        let sc = Scenario::from_toml(&K4.replace("ECMP", ""), "f.toml").unwrap();
        let a = Simulation::new(&sc, 3).run();
        // 16 flows: every aggregation → core link of pod 0 carries data
        let up: Vec<u64> = a
            .links
            .iter()
            .filter(|l| l.from.starts_with("a0-") && l.to.starts_with('c'))
            .map(|l| l.tx_packets)
            .collect();
        assert_eq!(up.len(), 4);
        assert!(up.iter().all(|&n| n > 100), "{up:?}");
        let b = Simulation::new(&sc, 3).run();
        let j = |r: &crate::RunResult| {
            let mut v = serde_json::to_value(r).unwrap();
            v.as_object_mut().unwrap().remove("wall_seconds");
            v.as_object_mut().unwrap().remove("timings");
            v.to_string()
        };
        assert_eq!(j(&a), j(&b));
        // another seed hashes flows differently
        let c = Simulation::new(&sc, 4).run();
        assert_ne!(j(&a), j(&c));
        let c = a.conservation;
        assert_eq!(c.sent, c.delivered + c.dropped + c.in_flight);
    }
}
