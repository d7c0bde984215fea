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

/// `--set .99=0` (and a sweep axis `key = ""`) set a key named "" at the
/// top level, and the error named `(top level)`: an empty part of a key
/// path is refused, naming the override or the axis.
#[test]
fn an_empty_part_of_a_key_path_is_refused_naming_where_it_was_written() {
    let sc = fat_tree(4, false);
    for o in [".99=0", "topology..k=4", "topology.k.=4"] {
        let e = Scenario::from_toml_with(&sc, "ft.toml", &[o.to_string()])
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("`{o}`:")), "{e}");
        assert!(e.contains("empty part"), "{e}");
    }
    let sweep = format!("{sc}[sweep]\n[[sweep.vary]]\nkey = \"\"\nvalues = [1, 2]\n");
    let e = Scenario::sweep_from_toml(&sweep, "ft.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("`sweep.vary[0].key`:"), "{e}");
}

/// A parking lot of 150 000 hops (450 000 nodes) was expanded at load,
/// 687 MB and 10 s, before the node limit refused it; a dumbbell's
/// `hosts` is per side. No generator makes more than 200 000 hosts.
#[test]
fn no_generator_makes_more_than_the_generated_host_bound() {
    let gen = |kind: &str, key: &str, n: u32| {
        let extra = if kind == "parking-lot" {
            "rate = \"10Mbps\"\ndelay = \"1ms\"\n"
        } else {
            "bottleneck_rate = \"10Mbps\"\nbottleneck_delay = \"1ms\"\n"
        };
        let t = format!(
            "name = \"g\"\nduration = \"1s\"\n[topology]\nkind = \"{kind}\"\n{key} = {n}\n{extra}access_rate = \"10Mbps\"\naccess_delay = \"1ms\"\n[[flows]]\ngroup = \"g\"\nsrc = \"x\"\ndst = \"y\"\n"
        );
        Scenario::from_toml(&t, "g.toml").map_err(|e| e.to_string())
    };
    let t = std::time::Instant::now();
    for (kind, key, max) in [
        ("parking-lot", "hops", 100_000),
        ("dumbbell", "hosts", 100_000),
        ("star", "hosts", 200_000),
    ] {
        let e = gen(kind, key, max + 1).unwrap_err();
        assert!(e.contains(&format!("`topology.{key}`:")), "{e}");
        assert!(e.contains(&format!("at most {max}")), "{e}");
    }
    assert!(t.elapsed().as_secs() < 5, "{:?}", t.elapsed());
    // at the bound it loads (and the flow's unknown hosts are the error)
    let e = gen("parking-lot", "hops", 3).unwrap_err();
    assert!(e.contains("flows[0]"), "{e}");
}
