//! Parallel simulation of one run: the results are byte-identical to the
//! sequential run whatever the thread count and the partition, and packets
//! are conserved in every logical process and in total.

use aqmlab::metrics::RunResult;
use aqmlab::{Scenario, Simulation};
use proptest::prelude::*;

/// A multi-site network: `sites` sites (up to 4), each a router with
/// `hosts` hosts on 1 Gbit/s, 50 us links; the routers joined by
/// 100 Mbit/s links of 5 to 20 ms (a ring plus one chord); per host a
/// group of `count` bulk flows inside its site and one to a host of
/// another site.
pub fn multi_site(sites: usize, hosts: usize, count: u32, duration: &str) -> String {
    let names = ["a", "b", "c", "d"];
    let s = &names[..sites];
    let mut t = format!("name = \"multi-site\"\nduration = \"{duration}\"\nseed = 1\n[nodes]\n");
    let hs: Vec<String> = (s.iter())
        .flat_map(|x| (0..hosts).map(move |i| format!("\"{x}h{i}\"")))
        .collect();
    let rs: Vec<String> = s.iter().map(|x| format!("\"r{x}\"")).collect();
    t += &format!(
        "hosts = [{}]\nrouters = [{}]\n",
        hs.join(", "),
        rs.join(", ")
    );
    for x in s {
        for i in 0..hosts {
            t += &format!(
                "[[links]]\na = \"{x}h{i}\"\nb = \"r{x}\"\nrate = \"1Gbps\"\ndelay = \"50us\"\nqueue = {{ kind = \"droptail\", limit = 1000 }}\n"
            );
        }
    }
    let trunks = [(0, 1, 5), (1, 2, 8), (2, 3, 12), (3, 0, 20), (0, 2, 15)];
    for &(a, b, d) in trunks.iter().filter(|t| t.0 < sites && t.1 < sites) {
        t += &format!(
            "[[links]]\na = \"r{}\"\nb = \"r{}\"\nrate = \"100Mbps\"\ndelay = \"{d}ms\"\nqueue = {{ kind = \"red\", limit = 300, min_th = 20, max_th = 80, max_p = 0.1 }}\n",
            s[a], s[b]
        );
    }
    for (si, x) in s.iter().enumerate() {
        for i in 0..hosts {
            let y = s[(si + 1 + i % 3) % sites];
            let j = (i + 1) % hosts;
            if j != i {
                t += &format!("[[flows]]\ngroup = \"{x}-in-{i}\"\nsrc = \"{x}h{i}\"\ndst = \"{x}h{j}\"\ncount = {count}\nstart_spread = \"100ms\"\n");
            }
            if y != *x {
                t += &format!("[[flows]]\ngroup = \"{x}-out-{i}\"\nsrc = \"{x}h{i}\"\ndst = \"{y}h{i}\"\ncount = {count}\nstart_spread = \"100ms\"\ntrace_cwnd = {}\n", i == 0);
            }
        }
    }
    t
}

/// Everything a run reports except the wall-clock figures: Rust's `{:?}`
/// of an `f64` is its shortest round-trip form, so equal strings are equal
/// bits.
fn fingerprint(r: &RunResult) -> String {
    let mut r = r.clone();
    r.wall_seconds = 0.0;
    r.timings = Default::default();
    r.parallel = None;
    format!("{r:?}")
}

/// Run `sc` (seed 1) on `threads` threads: with more than one, the
/// simulation must have split into at least two processes; the result's
/// parts are checked.
fn run_split(sc: &Scenario, threads: usize) -> RunResult {
    let mut sim = Simulation::with_threads(sc, 1, threads);
    if threads > 1 {
        assert!(sim.processes() >= 2, "{threads}: {:?}", sim.parallel_note());
    }
    let r = sim.run();
    check_parts(&r);
    r
}

fn check_parts(r: &RunResult) {
    assert!(r.conservation.holds(), "{:?}", r.conservation);
    if let Some(p) = &r.parallel {
        for (i, part) in p.parts.iter().enumerate() {
            assert!(part.holds(), "process {i}: {part:?}");
        }
        let cut_in: u64 = p.parts.iter().map(|x| x.cut_in).sum();
        let cut_out: u64 = p.parts.iter().map(|x| x.cut_out).sum();
        assert_eq!(cut_in, cut_out, "every message sent was accepted");
        let sent: u64 = p.parts.iter().map(|x| x.sent).sum();
        assert_eq!(sent, r.conservation.sent);
    }
}

#[test]
fn multi_site_is_identical_with_1_2_3_and_8_threads() {
    let sc = Scenario::from_toml(&multi_site(4, 3, 2, "1s"), "ms.toml").unwrap();
    let seq = Simulation::new(&sc, 1).run();
    check_parts(&seq);
    let moving = seq.flows.iter().filter(|f| f.bytes_acked > 0).count();
    assert!(
        moving * 10 >= seq.flows.len() * 9,
        "{moving} of {}",
        seq.flows.len()
    );
    assert!(!seq.series.is_empty() && !seq.cwnd.is_empty());
    let want = fingerprint(&seq);
    for threads in [1, 2, 3, 8] {
        let r = run_split(&sc, threads);
        assert_eq!(fingerprint(&r), want, "{threads} threads");
        let p = r.parallel.as_ref();
        if threads > 1 {
            let p = p.expect("a parallel report");
            // the sites are cut on their 5-20 ms trunks, not on host links
            assert!(p.lookahead_s >= 0.005, "{p:?}");
            assert!(p.windows > 0 && p.cut_links > 0);
        }
    }
}

#[test]
fn a_run_continued_after_set_duration_matches_too() {
    // a run extended by `set_duration` after it ended (measurement windows
    // use `run_until`, tested below)
    let sc = Scenario::from_toml(&multi_site(3, 2, 1, "1s"), "ms.toml").unwrap();
    let run = |threads| {
        let mut sim = Simulation::with_threads(&sc, 1, threads);
        sim.set_duration(aqmlab::engine::secs(0.4));
        let a = fingerprint(&sim.run());
        sim.set_duration(aqmlab::engine::secs(1.0));
        (a, fingerprint(&sim.run()))
    };
    assert_eq!(run(1), run(2));
}

/// A measurement window (`[output] warmup`) gives the same results with
/// any thread count: the parallel run cuts its last window at the warm-up
/// instant, where the snapshot is taken; `run_until` and `measured_since`
/// likewise, and the snapshot is what a run that long reports.
#[test]
fn a_warm_up_window_is_identical_with_1_2_3_and_8_threads() {
    let text = multi_site(4, 3, 2, "1s") + "[output]\nwarmup = \"400ms\"\n";
    let sc = Scenario::from_toml(&text, "ms.toml").unwrap();
    let seq = Simulation::new(&sc, 1).run();
    check_parts(&seq);
    assert_eq!(seq.warmup_s, Some(0.4));
    let want = fingerprint(&seq);
    let plain = Scenario::from_toml(&multi_site(4, 3, 2, "1s"), "ms.toml").unwrap();
    let mut short = Simulation::new(&plain, 1);
    short.set_duration(aqmlab::engine::secs(0.4));
    let at_warm = fingerprint(&short.run());
    for threads in [1, 2, 3, 8] {
        let r = run_split(&sc, threads);
        assert_eq!(fingerprint(&r), want, "{threads} threads");
        let mut sim = Simulation::with_threads(&plain, 1, threads);
        let snap = sim.run_until(aqmlab::engine::secs(0.4));
        assert_eq!(fingerprint(&snap.result), at_warm, "{threads} threads");
        sim.run();
        let w = sim.measured_since(&snap);
        assert_eq!(fingerprint(&w), want, "{threads} threads, run_until");
    }
}

/// Every scenario shipped in `scenarios/` that splits with lookahead gives
/// the sequential results with 2, 3 and 8 threads.
#[test]
fn shipped_scenarios_with_lookahead_are_identical() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "toml") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut split = Vec::new();
    for f in &files {
        let Ok(sc) = Scenario::from_file(f) else {
            continue; // experiment matrices, not scenarios
        };
        // the first 0.2 s (0.02 s of the 10 000-flow benchmark network)
        let flows: u32 = sc.flows.iter().map(|g| g.count).sum();
        let first = if flows > 1000 { 0.02 } else { 0.2 };
        let d = aqmlab::engine::secs(first).min(sc.duration.0);
        let mut seq = Simulation::new(&sc, sc.seed);
        seq.set_duration(d);
        let want = fingerprint(&seq.run());
        for threads in [2, 3, 8] {
            let mut sim = Simulation::with_threads(&sc, sc.seed, threads);
            if sim.processes() < 2 {
                assert!(sim.parallel_note().is_some(), "{}", f.display());
                continue;
            }
            split.push(format!("{}:{threads}", f.display()));
            sim.set_duration(d);
            let r = sim.run();
            check_parts(&r);
            assert_eq!(
                fingerprint(&r),
                want,
                "{} with {threads} threads",
                f.display()
            );
        }
    }
    eprintln!("split: {split:?}");
}

/// Two sites: `a` with two hosts and `n` flows between them, `b` with one
/// host that one flow from `a` reaches over a link of `trunk` delay.
fn lopsided(n: u32, trunk: &str, access: &str) -> Scenario {
    let text = format!(
        "name = \"l\"\nduration = \"0.5s\"\n[nodes]\nhosts = [\"a0\", \"a1\", \"b0\"]\nrouters = [\"ra\", \"rb\"]\n\
         [[links]]\na = \"a0\"\nb = \"ra\"\nrate = \"1Gbps\"\ndelay = \"{access}\"\n\
         [[links]]\na = \"a1\"\nb = \"ra\"\nrate = \"1Gbps\"\ndelay = \"{access}\"\n\
         [[links]]\na = \"b0\"\nb = \"rb\"\nrate = \"1Gbps\"\ndelay = \"{access}\"\n\
         [[links]]\na = \"ra\"\nb = \"rb\"\nrate = \"100Mbps\"\ndelay = \"{trunk}\"\n\
         [[flows]]\ngroup = \"in\"\nsrc = \"a0\"\ndst = \"a1\"\ncount = {n}\n\
         [[flows]]\ngroup = \"out\"\nsrc = \"a0\"\ndst = \"b0\"\n"
    );
    Scenario::from_toml(&text, "l.toml").unwrap()
}

#[test]
fn runs_that_do_not_split_stay_sequential_with_a_note() {
    // one part would hold nearly all the work (only the trunk has a delay)
    let sim = Simulation::with_threads(&lopsided(40, "10ms", "0s"), 1, 2);
    assert_eq!(sim.processes(), 1);
    let note = sim.parallel_note().expect("a note");
    assert!(note.contains("% of the work"), "{note}");
    // no link with a delay to look ahead over
    let sim = Simulation::with_threads(&lopsided(1, "0s", "0s"), 1, 2);
    assert_eq!(sim.processes(), 1);
    let note = sim.parallel_note().expect("a note");
    assert!(note.contains("no lookahead worth"), "{note}");
    // 3/4 of the work on one side, but only the trunk to cut: it splits
    let sim = Simulation::with_threads(&lopsided(1, "10ms", "0s"), 1, 2);
    assert_eq!(sim.processes(), 2, "{:?}", sim.parallel_note());
    let r = sim.parallel_report().expect("report");
    assert_eq!((r.lookahead_s, r.cut_links), (0.01, 2));
}

#[test]
fn lp_names_place_nodes_and_unknown_names_are_refused() {
    let mut text = multi_site(4, 2, 1, "0.3s");
    // sites a+b and c+d named together: two processes whatever the bound
    text += "[lp]\n\"ra\" = \"west\"\n\"ah*\" = \"west\"\n\"rb\" = \"west\"\n\"bh*\" = \"west\"\n";
    let sc = Scenario::from_toml(&text, "ms.toml").unwrap();
    let sim = Simulation::with_threads(&sc, 1, 4);
    assert!(sim.processes() >= 2);
    let r = Simulation::with_threads(&sc, 1, 4).run();
    assert_eq!(fingerprint(&r), fingerprint(&Simulation::new(&sc, 1).run()));
    let bad = multi_site(2, 1, 1, "0.3s") + "[lp]\n\"zz\" = \"west\"\n";
    let e = Scenario::from_toml(&bad, "ms.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("lp.zz"), "{e}");
}

/// A workload (fat-tree-k8's web-search arrivals, spawning connections at
/// run time) in a partition: hosts in one process, switches in another,
/// cut on the 5 us links.
#[test]
fn workloads_run_in_one_process_of_a_partition() {
    let f =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/fat-tree-k8.toml");
    let sc = Scenario::from_file(f).unwrap();
    assert!(!sc.workloads.is_empty());
    let d = aqmlab::engine::secs(0.05);
    let mut seq = Simulation::new(&sc, 1);
    seq.set_duration(d);
    let want = seq.run();
    assert!(!want.requests.is_empty(), "the workload opened connections");
    let host = |n: &str| n.starts_with('h');
    let mut sim = Simulation::with_partition(&sc, 1, |n| if host(n) { 0 } else { 1 }).unwrap();
    sim.set_duration(d);
    let r = sim.run();
    check_parts(&r);
    assert_eq!(fingerprint(&r), fingerprint(&want));
    // workload hosts split over two processes are refused
    let e = Simulation::with_partition(&sc, 1, |n| if n.starts_with("h0") { 0 } else { 1 });
    assert!(e.is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Any assignment of nodes to up to four processes (host links cut
    /// too: 50 us lookahead) gives the sequential results, and packets are
    /// conserved per process.
    #[test]
    fn random_partitions_give_the_sequential_results(
        sites in 2usize..=4,
        hosts in 1usize..=3,
        assign in proptest::collection::vec(0u16..4, 16),
    ) {
        let sc = Scenario::from_toml(&multi_site(sites, hosts, 1, "0.25s"), "ms.toml").unwrap();
        let want = fingerprint(&Simulation::new(&sc, 3).run());
        let names: Vec<String> = (0..sites)
            .flat_map(|s| {
                let x = ["a", "b", "c", "d"][s];
                std::iter::once(format!("r{x}")).chain((0..hosts).map(move |i| format!("{x}h{i}")))
            })
            .collect();
        let part = |n: &str| assign[names.iter().position(|m| m == n).unwrap() % assign.len()];
        let mut sim = Simulation::with_partition(&sc, 3, part).unwrap();
        let r = sim.run();
        check_parts(&r);
        prop_assert_eq!(fingerprint(&r), want);
    }
}
