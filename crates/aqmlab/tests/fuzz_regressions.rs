//! Cases the scenario fuzzer (crates/aqmlab-fuzz) found, each kept as a
//! regression test (issue 35).

use aqmlab::scenario::limits::Limits;
use aqmlab::Scenario;

fn fat_tree(k: u32, ecmp: bool) -> String {
    format!(
        "name = \"ft\"\nduration = \"1s\"\n[topology]\nkind = \"fat-tree\"\nk = {k}\nrate = \"1Gbps\"\ndelay = \"10us\"\necmp = {ecmp}\n[[flows]]\ngroup = \"g\"\nsrc = \"h0-*\"\ndst = \"h1-*\"\n"
    )
}

/// `topology.k = 64` with ECMP (the largest fat-tree the generator takes)
/// built 2.5 GB of equal-cost alternatives in validation, 31 s before the
/// limits refused the run for another reason. The estimate now counts the
/// alternatives: the scenario is refused at `topology.k` without routing.
#[test]
fn a_k64_fat_tree_with_ecmp_is_refused_before_its_routes_are_built() {
    let t = std::time::Instant::now();
    let sc = Scenario::from_toml(&fat_tree(64, true), "ft.toml").expect("valid unrouted");
    let cells = sc.routing_cells();
    // 5 120 switches × 2 048 edge switches × (1 + 64 links)
    assert_eq!(cells, 5120 * 2048 * 65);
    let (k, m) = sc.check_limits(&Limits::DEFAULT).unwrap_err();
    assert_eq!(k, "topology.k");
    assert!(m.contains("next-hop table"), "{m}");
    assert!(m.contains("--allow-large"), "{m}");
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
}

/// The alternatives count only with ECMP; the shipped k = 8 fat-tree and a
/// k = 32 one stay under the limit.
#[test]
fn fat_trees_up_to_k32_stay_under_the_routing_limit() {
    let sc = Scenario::from_toml(&fat_tree(8, true), "ft.toml").unwrap();
    assert_eq!(sc.routing_cells(), 80 * 32 * 9);
    sc.check_limits(&Limits::DEFAULT).unwrap();
    let sc = Scenario::from_toml(&fat_tree(8, false), "ft.toml").unwrap();
    assert_eq!(sc.routing_cells(), 80 * 32);
    let sc = Scenario::from_toml(&fat_tree(32, true), "ft.toml").unwrap();
    assert_eq!(sc.routing_cells(), 1280 * 512 * 33);
    assert!(sc.routing_cells() <= Limits::DEFAULT.routing_cells);
}
