//! The cdf workload with the shipped data-mining distribution, on the
//! shipped `scenarios/data-mining.toml` (k = 4 fat-tree, ECMP): every
//! arrival is launched, sizes follow the distribution, the small flows
//! complete, packets are conserved, and the run is deterministic.

use aqmlab::{Scenario, Simulation};

fn scenario() -> Scenario {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/data-mining.toml"
    );
    Scenario::from_file(std::path::Path::new(path)).unwrap()
}

#[test]
fn data_mining_arrivals_on_a_fat_tree() {
    let sc = scenario();
    let r = Simulation::new(&sc, sc.seed).run();
    assert!(r.conservation.holds(), "{:?}", r.conservation);
    // Poisson arrivals at 60/s for 2 s, at most `flows` = 120 of them: the
    // count within the run is Poisson(120) capped at 120, so far above 60
    let n = r.requests.len();
    assert!((60..=120).contains(&n), "{n} arrivals");
    assert_eq!(r.workloads[0].connections as usize, n);
    // sizes are drawn from the data-mining table: P(size <= 10 kB) = 0.8
    // (binomial sd 0.05 at n = 60: the band is about 4 sd wide), no size
    // above 1 GB
    let small = r.requests.iter().filter(|q| q.bytes <= 10_000).count();
    let frac = small as f64 / n as f64;
    assert!((0.6..=0.95).contains(&frac), "{frac}");
    assert!(r
        .requests
        .iter()
        .all(|q| (1..=1_000_000_000).contains(&q.bytes)));
    // a 10 kB flow takes a few 10-us-RTTs on idle 1 Gbit/s paths; with
    // elephants in the network every small flow started before 1.5 s has
    // still finished by the end
    for q in &r.requests {
        if q.bytes <= 10_000 && q.open_s < 1.5 {
            assert!(q.completion_s.is_some(), "{q:?}");
        }
    }
    // same seed, same results
    let again = Simulation::new(&sc, sc.seed).run();
    assert_eq!(r.events, again.events);
    let sizes = |r: &aqmlab::RunResult| {
        r.requests
            .iter()
            .map(|q| (q.bytes, q.completion_s))
            .collect::<Vec<_>>()
    };
    assert_eq!(sizes(&r), sizes(&again));
}
