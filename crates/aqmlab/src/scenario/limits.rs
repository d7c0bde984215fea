//! Resource estimates: what a scenario will hold in memory, computed from
//! the validated scenario before anything is allocated, and refused above a
//! default limit (the CLI's `--allow-large` lifts the limits).
//!
//! Each estimate counts the items that grow with the scenario; the limits
//! keep a run within about 2 GB of memory on default settings (a flow,
//! sender and receiver included, holds about 2 KB: 65535 web probe flows
//! peaked at 428 MiB in the fuzzer's counting allocator):
//!
//! | estimate | counted as | default limit | about |
//! |---|---|---|---|
//! | queue samples | (duration / `output.sample_interval` + 1) × monitored ports | 5×10⁶ | 72 B each, twice that while the vector grows |
//! | cwnd samples | (duration / `output.cwnd_interval` + 1) × traced flows | 5×10⁶ | 56 B each |
//! | throughput bins | (duration / `output.throughput_bin` + 1) × flows of `[[flows]]` | 2×10⁷ | 8 B each, copied once into the results |
//! | flows | Σ `flows[].count` | 10⁵ | ~2 KB each |
//! | workload flows | HTTP: 2 × `connections`; web: sessions × pages × objects, plus probes, over the run | 5×10⁵ | ~2 KB each |
//! | nodes | hosts + routers (routing holds a row per forwarding node, a column per attachment point) | 150 000 | about 1 KB × nodes with their links |
//! | links | `[[links]]` | 10⁵ | two ports each |
//! | routing cells | forwarding nodes × attachment points ([`crate::net::routing`]), counted before any table is built | 5×10⁷ | 4 B each (28 more with ECMP); one breadth-first search per attachment point |
//! | sweep runs | combinations × seeds (results are kept until the tables are written) | 10⁴ | one run's results each |
//! | worker threads | `--jobs` | 1024 | a thread stack each |

use super::Scenario;

/// The default limits (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub queue_samples: u64,
    pub cwnd_samples: u64,
    pub throughput_bins: u64,
    pub flows: u64,
    pub workload_flows: u64,
    pub nodes: u64,
    pub links: u64,
    /// Cells of the next-hop table: forwarding nodes × attachment points.
    pub routing_cells: u64,
    /// Segments the flows' first windows put in flight at once: Σ count ×
    /// min(init_cwnd, max_window); each is tracked by its sender.
    pub initial_window_segments: u64,
    pub sweep_runs: u64,
    pub jobs: u64,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        queue_samples: 5_000_000,
        cwnd_samples: 5_000_000,
        throughput_bins: 20_000_000,
        flows: 100_000,
        workload_flows: 500_000,
        nodes: 150_000,
        links: 1_000_000,
        routing_cells: 50_000_000,
        initial_window_segments: 10_000_000,
        sweep_runs: 10_000,
        jobs: 1024,
    };

    /// No limit at all (`--allow-large`).
    pub const NONE: Limits = Limits {
        queue_samples: u64::MAX,
        cwnd_samples: u64::MAX,
        throughput_bins: u64::MAX,
        flows: u64::MAX,
        workload_flows: u64::MAX,
        nodes: u64::MAX,
        links: u64::MAX,
        routing_cells: u64::MAX,
        initial_window_segments: u64::MAX,
        sweep_runs: u64::MAX,
        jobs: u64::MAX,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// The message of an estimate above its limit.
fn over(what: &str, estimate: u64, limit: u64, how: &str) -> String {
    format!(
        "{what}: the scenario would hold about {estimate}, above the default limit of {limit}; {how}, or pass --allow-large to run it anyway"
    )
}

fn check(
    key: String,
    what: &str,
    estimate: u64,
    limit: u64,
    how: &str,
) -> Result<(), (String, String)> {
    if estimate > limit {
        Err((key, over(what, estimate, limit, how)))
    } else {
        Ok(())
    }
}

/// What a scenario will hold, estimated from its text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Estimate {
    pub queue_samples: u64,
    pub cwnd_samples: u64,
    pub throughput_bins: u64,
    pub flows: u64,
    pub workload_flows: u64,
    pub nodes: u64,
    pub links: u64,
    pub routing_cells: u64,
    pub initial_window_segments: u64,
}

impl Estimate {
    /// Bytes the run would hold at its peak, roughly, from the per-item
    /// sizes of the table above, with the key to change and what the
    /// largest part is. Measured on the 10⁵-host star: a flow with its
    /// sender, receiver, spec and result row about 2 KB; a link with its
    /// two ports, spec and rows about 3 KB; a queue sample about 240 B in
    /// all (the growing vector and the copy into the results: the star
    /// with its 10⁵ hub ports monitored, 1.0·10⁸ samples, peaked at
    /// 23.7 GB). Used
    /// under `--allow-large`, which lifts the limits, to refuse a run the
    /// machine's memory cannot hold instead of being killed part way.
    pub fn bytes(&self, sc: &Scenario) -> (u64, &'static str, &'static str) {
        let parts: [(u64, &str, &str); 7] = [
            (
                self.queue_samples.saturating_mul(240),
                "output.sample_interval",
                "queue samples (set `monitor = false` on links or sample less often)",
            ),
            (
                self.cwnd_samples.saturating_mul(112),
                "output.cwnd_interval",
                "cwnd samples",
            ),
            (
                self.throughput_bins.saturating_mul(16),
                "output.throughput_bin",
                "throughput bins",
            ),
            (
                (self.flows.saturating_add(self.workload_flows)).saturating_mul(2048),
                if sc.flows.is_empty() {
                    "workloads"
                } else {
                    "flows"
                },
                "flows",
            ),
            (self.nodes.saturating_mul(1024), "nodes", "nodes"),
            (self.links.saturating_mul(3072), "links", "links"),
            (
                self.routing_cells.saturating_mul(4),
                // the key `check_limits` names for the same estimate
                sc.generated_by.unwrap_or("nodes.routers"),
                "next-hop table cells",
            ),
        ];
        let total = parts.iter().fold(0u64, |a, p| a.saturating_add(p.0));
        let (_, key, what) = parts
            .iter()
            .max_by_key(|p| p.0)
            .copied()
            .unwrap_or_default();
        (total, key, what)
    }
}

/// Samples of a series sampled every `every` over `duration` (both ns).
fn samples(duration: u64, every: u64) -> u64 {
    duration.checked_div(every).unwrap_or(0).saturating_add(1)
}

impl Scenario {
    /// Estimate what the scenario will hold (see [`Limits`]); the scenario
    /// must have passed [`Scenario::validate`].
    pub fn estimate(&self) -> Estimate {
        let router: rustc_hash::FxHashSet<&str> =
            self.nodes.routers.iter().map(|s| s.as_str()).collect();
        let monitored: u64 = self
            .links
            .iter()
            .map(|l| match l.monitor {
                Some(m) => 2 * m as u64,
                None => router.contains(l.a.as_str()) as u64 + router.contains(l.b.as_str()) as u64,
            })
            .sum();
        let d = self.duration.0;
        let flows: u64 = self.flows.iter().map(|f| f.count as u64).sum();
        let traced: u64 = self
            .flows
            .iter()
            .filter(|f| f.trace_cwnd && f.cbr.is_none())
            .map(|f| f.count as u64)
            .sum();
        let cwnd_every = self
            .output
            .cwnd_interval
            .unwrap_or(self.output.sample_interval)
            .0;
        Estimate {
            queue_samples: samples(d, self.output.sample_interval.0).saturating_mul(monitored),
            cwnd_samples: if traced == 0 {
                0
            } else {
                samples(d, cwnd_every).saturating_mul(traced)
            },
            throughput_bins: match self.output.throughput_bin {
                Some(b) => samples(d, b.0).saturating_mul(flows),
                None => 0,
            },
            flows,
            workload_flows: self
                .workloads
                .iter()
                .map(|w| w.expected_flows(d).0)
                .fold(0u64, |a, b| a.saturating_add(b)),
            nodes: (self.nodes.hosts.len() + self.nodes.routers.len()) as u64,
            links: self.links.len() as u64,
            routing_cells: self.routing_cells(),
            initial_window_segments: (0..self.flows.len())
                .map(|i| self.initial_window(i))
                .fold(0u64, |a, b| a.saturating_add(b)),
        }
    }

    /// Cells of the next-hop table [`crate::net::routing::Routes`] would
    /// build: a row per forwarding node (router, or host with several
    /// links), a column per attachment point (a router some single-link
    /// host hangs off, or a host fed otherwise), counted in O(nodes +
    /// links) from the names, before anything is routed. With ECMP a cell
    /// also lists its equal-cost links: each counts as a cell, at most the
    /// forwarding node's out-degree (a k = 64 fat-tree's 10.5 M cells held
    /// 2.5 GB of alternatives, built in validation before any limit).
    pub fn routing_cells(&self) -> u64 {
        // Node indices by name (routers first; a name listed twice keeps
        // its first index), then per-index tables: one hash per name and
        // per link end rather than several string-keyed maps.
        let (routers, hosts) = (&self.nodes.routers, &self.nodes.hosts);
        let mut idx: rustc_hash::FxHashMap<&str, u32> = rustc_hash::FxHashMap::default();
        idx.reserve(routers.len() + hosts.len());
        let mut n_routers = 0;
        for (i, n) in routers.iter().chain(hosts).enumerate() {
            let k = idx.len() as u32;
            idx.entry(n.as_str()).or_insert(k);
            if i + 1 == routers.len() {
                n_routers = idx.len() as u32; // distinct router names
            }
        }
        // per node: links leaving it, and the node of the only link
        // entering it (NONE: none yet; MANY: several; OUTSIDE: a name that
        // is no node)
        const NONE: u32 = u32::MAX;
        const MANY: u32 = u32::MAX - 1;
        const OUTSIDE: u32 = u32::MAX - 2;
        let mut out = vec![0u64; idx.len()];
        let mut feed = vec![NONE; idx.len()];
        for l in &self.links {
            let (a, b) = (
                idx.get(l.a.as_str()).copied(),
                idx.get(l.b.as_str()).copied(),
            );
            for (x, y) in [(a, b), (b, a)] {
                if let Some(x) = x {
                    out[x as usize] += 1;
                }
                if let Some(y) = y {
                    let f = &mut feed[y as usize];
                    *f = if *f == NONE {
                        x.unwrap_or(OUTSIDE)
                    } else {
                        MANY
                    };
                }
            }
        }
        let rows = (routers.iter().chain(hosts))
            .filter(|n| {
                let i = idx[n.as_str()];
                i < n_routers || out[i as usize] > 1
            })
            .count() as u64;
        let mut attach = vec![false; n_routers as usize];
        let mut own = 0u64;
        for h in hosts {
            match feed[idx[h.as_str()] as usize] {
                f if f < n_routers => attach[f as usize] = true,
                _ => own += 1,
            }
        }
        let attached = attach.iter().filter(|&&a| a).count() as u64;
        let cells = rows.saturating_mul(attached + own);
        if !self.routing.ecmp {
            return cells;
        }
        let fanout = (routers.iter())
            .map(|r| out[idx[r.as_str()] as usize])
            .max()
            .unwrap_or(0);
        cells.saturating_mul(1 + fanout)
    }

    /// Segments flow group `i`'s first windows put in flight (0 for CBR).
    fn initial_window(&self, i: usize) -> u64 {
        let f = &self.flows[i];
        if f.cbr.is_some() {
            return 0;
        }
        let p = self.tcp_params(i);
        let w = p.init_cwnd.ceil().min(p.max_window as f64).max(1.0) as u64;
        w.saturating_mul(f.count as u64)
    }

    /// Refuse a scenario whose [`Scenario::estimate`] exceeds `lim`; the
    /// error names the key to change and the estimate.
    pub fn check_limits(&self, lim: &Limits) -> Result<(), (String, String)> {
        let e = self.estimate();
        check(
            "nodes".into(),
            "nodes (hosts + routers)",
            e.nodes,
            lim.nodes,
            "use fewer nodes",
        )?;
        check(
            "links".into(),
            "links",
            e.links,
            lim.links,
            "use fewer links",
        )?;
        check(
            self.generated_by.unwrap_or("nodes.routers").into(),
            "next-hop table cells (routers and multi-link hosts × attachment points, × (1 + fan-out) with ECMP)",
            e.routing_cells,
            lim.routing_cells,
            "use fewer routers",
        )?;
        if e.routing_cells > Limits::DEFAULT.routing_cells {
            // `validate` left the routes unchecked (see `paths::check`)
            super::paths::check_routes(self)?;
        }
        let biggest = self
            .flows
            .iter()
            .enumerate()
            .max_by_key(|(i, f)| (f.count, std::cmp::Reverse(*i)))
            .map_or(0, |(i, _)| i);
        check(
            format!("flows[{biggest}].count"),
            "flows",
            e.flows,
            lim.flows,
            "lower the flows' `count`",
        )?;
        let widest = (0..self.flows.len())
            .max_by_key(|&i| (self.initial_window(i), std::cmp::Reverse(i)))
            .unwrap_or(0);
        check(
            format!("flows[{widest}]"),
            "segments in the flows' first windows (Σ count × min(init_cwnd, max_window))",
            e.initial_window_segments,
            lim.initial_window_segments,
            "lower the flows' `count`, `tcp.init_cwnd` or `tcp.max_window`",
        )?;
        let wl = self
            .workloads
            .iter()
            .enumerate()
            .max_by_key(|(i, w)| (w.expected_flows(self.duration.0).0, std::cmp::Reverse(*i)))
            .map(|(i, w)| format!("workloads[{i}].{}", w.expected_flows(self.duration.0).1))
            .unwrap_or_else(|| "workloads".into());
        check(
            wl,
            "workload flows over the run",
            e.workload_flows,
            lim.workload_flows,
            "open fewer connections or shorten `duration`",
        )?;
        check(
            "output.sample_interval".into(),
            "queue samples (duration / sample_interval × monitored ports)",
            e.queue_samples,
            lim.queue_samples,
            "sample less often, shorten `duration` or set `monitor = false` on links",
        )?;
        check(
            if self.output.cwnd_interval.is_some() {
                "output.cwnd_interval"
            } else {
                "output.sample_interval"
            }
            .into(),
            "cwnd samples (duration / cwnd_interval × traced flows)",
            e.cwnd_samples,
            lim.cwnd_samples,
            "sample less often or trace fewer flows",
        )?;
        check(
            "output.throughput_bin".into(),
            "throughput bins (duration / throughput_bin × flows)",
            e.throughput_bins,
            lim.throughput_bins,
            "use wider bins or fewer flows",
        )?;
        Ok(())
    }
}

/// Check a sweep's size: `points` combinations × `seeds` seeds, on `jobs`
/// worker threads. `seeds_key` names where the seeds came from
/// (`sweep.seeds` or `--seeds`).
pub fn check_runs(
    points: u64,
    seeds: u64,
    seeds_key: &str,
    jobs: Option<u64>,
    lim: &Limits,
) -> Result<(), (String, String)> {
    let what = if points == 1 {
        format!("runs ({seeds} seeds per configuration)")
    } else {
        format!("runs ({points} combinations × {seeds} seeds)")
    };
    check(
        seeds_key.into(),
        &what,
        points.saturating_mul(seeds),
        lim.sweep_runs,
        "use fewer seeds or fewer values",
    )?;
    if let Some(j) = jobs {
        if j == 0 {
            return Err(("--jobs".into(), "must be at least 1".into()));
        }
        check(
            "--jobs".into(),
            "worker threads",
            j,
            lim.jobs,
            "use fewer worker threads",
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
name = "l"
duration = "10s"
[nodes]
hosts = ["h1", "h2"]
routers = ["r"]
[[links]]
a = "h1"
b = "r"
rate = "10Mbps"
delay = "1ms"
[[links]]
a = "r"
b = "h2"
rate = "1Mbps"
delay = "5ms"
[[flows]]
group = "bulk"
src = "h1"
dst = "h2"
count = 3
trace_cwnd = true
"#;

    fn sc(extra: &str) -> Scenario {
        Scenario::from_toml(&format!("{BASE}{extra}"), "t.toml").unwrap()
    }

    #[test]
    fn estimates_count_samples_bins_and_flows() {
        let s = sc("[output]\nsample_interval = \"1ms\"\ncwnd_interval = \"10ms\"\nthroughput_bin = \"100ms\"\n");
        let e = s.estimate();
        // two ports on the router are monitored (r->h1 and r->h2)
        assert_eq!(e.queue_samples, 10_001 * 2);
        assert_eq!(e.cwnd_samples, 1_001 * 3);
        assert_eq!(e.throughput_bins, 101 * 3);
        assert_eq!(e.flows, 3);
        assert_eq!(e.nodes, 3);
        assert_eq!(e.links, 2);
        assert!(s.check_limits(&Limits::DEFAULT).is_ok());
    }

    #[test]
    fn limits_name_the_key_and_the_estimate() {
        let s = sc("[output]\nthroughput_bin = \"1ns\"\n");
        let (k, m) = s.check_limits(&Limits::DEFAULT).unwrap_err();
        assert_eq!(k, "output.throughput_bin");
        assert!(
            m.contains("30000000003") && m.contains("--allow-large"),
            "{m}"
        );
        assert!(s.check_limits(&Limits::NONE).is_ok());

        let s = sc("[output]\nsample_interval = \"1ns\"\n");
        let (k, m) = s.check_limits(&Limits::DEFAULT).unwrap_err();
        assert_eq!(k, "output.sample_interval");
        assert!(m.contains("20000000002"), "{m}");

        let s =
            Scenario::from_toml(&BASE.replace("count = 3", "count = 1000000"), "t.toml").unwrap();
        let (k, m) = s.check_limits(&Limits::DEFAULT).unwrap_err();
        assert_eq!(k, "flows[0].count");
        assert!(m.contains("1000000") && m.contains("100000"), "{m}");

        let s = sc("[[workloads]]\nkind = \"http\"\nname = \"w\"\nclient = \"h1\"\nserver = \"h2\"\nconnections = 4000000000\n");
        let (k, m) = s.check_limits(&Limits::DEFAULT).unwrap_err();
        assert_eq!(k, "workloads[0].connections");
        assert!(m.contains("8000000000"), "{m}");

        // first windows: 65 535 flows × min(10⁶, max_window 10 000) segments
        let s = Scenario::from_toml(
            &BASE.replace("count = 3", "count = 65535\ntcp = { init_cwnd = 1000000 }"),
            "t.toml",
        )
        .unwrap();
        let (k, m) = s.check_limits(&Limits::DEFAULT).unwrap_err();
        assert_eq!(k, "flows[0]");
        assert!(m.contains("655350000") && m.contains("10000000"), "{m}");
        assert!(s.check_limits(&Limits::NONE).is_ok());
    }

    #[test]
    fn sweep_runs_and_jobs_are_bounded() {
        let l = Limits::DEFAULT;
        assert!(check_runs(4, 10, "sweep.seeds", Some(8), &l).is_ok());
        let (k, m) = check_runs(4, 1_000_000_000_000, "--seeds", None, &l).unwrap_err();
        assert_eq!(k, "--seeds");
        assert!(m.contains("4000000000000"), "{m}");
        let (k, _) = check_runs(4, 1, "--seeds", Some(100_000), &l).unwrap_err();
        assert_eq!(k, "--jobs");
        assert!(check_runs(4, 1, "--seeds", Some(0), &Limits::NONE).is_err());
    }
}
