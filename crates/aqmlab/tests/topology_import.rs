//! Imported topologies (`scenario/import.rs`): the shipped GraphML and
//! edge-list examples expand as documented, delays follow the nodes'
//! coordinates, missing speeds take `default_rate`, and bad files are
//! refused with the file, line and what is allowed.

use aqmlab::scenario::import::{fibre_delay_ns, great_circle_m};
use aqmlab::Scenario;
use std::path::{Path, PathBuf};

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/import")
}

fn load(dir: &Path, toml: &str) -> Result<Scenario, String> {
    let f = dir.join("s.toml");
    std::fs::write(&f, toml).unwrap();
    Scenario::from_file(&f).map_err(|e| e.to_string())
}

fn link<'a>(sc: &'a Scenario, a: &str, b: &str) -> &'a aqmlab::scenario::LinkSpec {
    sc.links
        .iter()
        .find(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a))
        .unwrap_or_else(|| panic!("no link {a}-{b}"))
}

#[test]
fn the_graphml_example_expands_as_documented() {
    let sc = Scenario::from_file(examples().join("us-backbone.toml")).unwrap();
    let cities = [
        "Seattle",
        "San_Francisco",
        "Denver",
        "Chicago",
        "New_York",
        "Atlanta",
    ];
    assert_eq!(sc.nodes.routers, cities);
    let hosts: Vec<String> = cities.iter().map(|c| format!("{c}-h0")).collect();
    assert_eq!(sc.nodes.hosts, hosts);
    // 8 edges: the two New York-Chicago circuits merge; 6 access links
    assert_eq!(sc.links.len(), 7 + 6);
    // parallel OC-48s: 2 × 2.5 Gbit/s
    assert_eq!(link(&sc, "Chicago", "New_York").rate.0, 5_000_000_000);
    // no speed on the edge: default_rate
    assert_eq!(link(&sc, "Chicago", "Atlanta").rate.0, 1_000_000_000);
    // LinkSpeed 622 with LinkSpeedUnits M and no LinkSpeedRaw
    assert_eq!(link(&sc, "Atlanta", "New_York").rate.0, 622_000_000);
    assert_eq!(link(&sc, "Seattle", "Denver").rate.0, 2_500_000_000);
    // Chicago (41.8781, -87.6298) to New York (40.7128, -74.0060): 1 144.29 km
    // by the haversine formula on a 6 371 km sphere (computed by hand, in
    // Python's math module); / 2e8 m/s = 5.7215 ms; tolerance 1 µs
    let d = link(&sc, "Chicago", "New_York").delay.0 as f64;
    assert!((d - 5_721_456.0).abs() < 1_000.0, "{d} ns");
    // access links: unmonitored, the access rate and delay
    let a = link(&sc, "Denver-h0", "Denver");
    assert_eq!(
        (a.rate.0, a.delay.0, a.monitor),
        (1_000_000_000, 1_000_000, Some(false))
    );
    assert_eq!(sc.inputs.len(), 1);
    assert_eq!(sc.inputs[0].key, "topology.file");
    assert_eq!(sc.inputs[0].sha256.len(), 64);
}

#[test]
fn the_edge_list_example_expands_as_documented() {
    let sc = Scenario::from_file(examples().join("ring.toml")).unwrap();
    assert_eq!(sc.nodes.hosts, ["client0", "client1", "server0", "server1"]);
    assert_eq!(sc.nodes.routers, ["r0", "r1", "r2", "r3"]);
    assert_eq!(sc.links.len(), 8);
    let b = link(&sc, "r1", "r2");
    assert_eq!(b.name.as_deref(), Some("bottleneck"));
    assert_eq!((b.rate.0, b.delay.0), (50_000_000, 10_000_000));
    assert!(sc.links.iter().all(|l| l.queue.is_some()));
    assert_eq!(sc.flows.len(), 2);
    assert_eq!(
        (sc.flows[1].src.as_str(), sc.flows[1].dst.as_str()),
        ("client1", "server1")
    );
}

const GRAPH_HEAD: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key attr.name="label" attr.type="string" for="node" id="d0" />
  <key attr.name="Latitude" attr.type="double" for="node" id="d1" />
  <key attr.name="Longitude" attr.type="double" for="node" id="d2" />
  <key attr.name="LinkSpeedRaw" attr.type="double" for="edge" id="d3" />
  <graph edgedefault="undirected">
"#;

fn graph(body: &str) -> String {
    format!("{GRAPH_HEAD}{body}  </graph>\n</graphml>\n")
}

fn node(id: u32, label: &str, at: Option<(f64, f64)>) -> String {
    let c = at.map_or(String::new(), |(la, lo)| {
        format!("<data key=\"d1\">{la}</data><data key=\"d2\">{lo}</data>")
    });
    format!("    <node id=\"{id}\"><data key=\"d0\">{label}</data>{c}</node>\n")
}

const GRAPH_SCENARIO: &str = "name = \"g\"\nduration = \"200ms\"\n[topology]\nkind = \"graphml\"\nfile = \"g.graphml\"\ndefault_rate = \"7Mbps\"\ndefault_delay = \"3ms\"\naccess_rate = \"1Gbps\"\naccess_delay = \"10us\"\n[[flows]]\ngroup = \"g\"\nsrc = \"A-h0\"\ndst = \"B_2-h0\"\n";

#[test]
fn labels_coordinates_speeds_parallel_edges_and_self_loops() {
    let d = tempfile::tempdir().unwrap();
    let body = [
        node(0, "A", Some((0.0, 0.0))),
        node(1, "B", Some((0.0, 1.0))),
        node(2, "B", None),
        node(3, "St. Louis", Some((1.0, 0.0))),
        node(4, &"L".repeat(150), None),
        "    <edge source=\"0\" target=\"1\"><data key=\"d3\">2000000.0</data></edge>\n".into(),
        "    <edge source=\"1\" target=\"0\"><data key=\"d3\">3000000.0</data></edge>\n".into(),
        "    <edge source=\"0\" target=\"0\" />\n".into(),
        "    <edge source=\"1\" target=\"2\" />\n".into(),
        "    <edge source=\"3\" target=\"2\" />\n".into(),
    ]
    .concat();
    std::fs::write(d.path().join("g.graphml"), graph(&body)).unwrap();
    let sc = load(d.path(), GRAPH_SCENARIO).unwrap();
    // a duplicate label gets `_2`; punctuation and spaces become `_`
    // a label of 150 characters keeps its first 100
    let long = "L".repeat(100);
    assert_eq!(sc.nodes.routers, ["A", "B", "B_2", "St_Louis", &long]);
    // A-B merged (2 + 3 Mbit/s), the self-loop skipped: 3 links, 5 access
    assert_eq!(sc.links.len(), 3 + 5);
    let ab = link(&sc, "A", "B");
    assert_eq!(ab.rate.0, 5_000_000);
    // one degree of longitude on the equator: 6 371 km × π/180 = 111.195 km
    // → 555.97 µs at 2e8 m/s (tolerance 1 ns, the rounding)
    let want = 6_371_000.0 * std::f64::consts::PI / 180.0 / 2e8 * 1e9;
    assert!(
        (ab.delay.0 as f64 - want).abs() <= 1.0,
        "{} vs {want}",
        ab.delay.0
    );
    // B_2 has no coordinates: default delay; no speed: default rate
    let b2 = link(&sc, "B", "B_2");
    assert_eq!((b2.rate.0, b2.delay.0), (7_000_000, 3_000_000));
    assert_eq!(link(&sc, "St_Louis", "B_2").delay.0, 3_000_000);
    // the library's figures agree with the formula
    assert_eq!(
        fibre_delay_ns(great_circle_m((0.0, 0.0), (0.0, 1.0))),
        ab.delay.0
    );
    let r = aqmlab::Simulation::new(&sc, 1).run();
    let c = r.conservation;
    assert_eq!(c.sent, c.delivered + c.dropped + c.in_flight);
    assert!(c.delivered > 0);
}

#[test]
fn bad_graphml_is_refused_with_the_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let cases: Vec<(String, &str, &[&str])> = vec![
        (
            graph(&node(0, "", None)),
            "topology.file",
            &["g.graphml` line 8", "node `0` has no `label`"],
        ),
        (
            graph(&format!(
                "{}{}    <edge source=\"0\" target=\"7\" />\n",
                node(0, "A", None),
                node(1, "B", None)
            )),
            "topology.file",
            &["line 10", "edge target `7` is not the id of a <node>"],
        ),
        (
            graph(&format!(
                "{}{}    <edge source=\"0\" target=\"1\"><data key=\"d3\">fast</data></edge>\n",
                node(0, "A", None),
                node(1, "B", None)
            )),
            "topology.file",
            &["link speed `fast`", "bit/s"],
        ),
        (
            graph(&node(0, "A", Some((91.0, 0.0)))),
            "topology.file",
            &["Latitude `91`", "-90 to 90"],
        ),
        (
            "<graphml><graph>".into(),
            "topology.file",
            &["not well-formed XML"],
        ),
        (
            // two components: the flow cannot route (the route check says so)
            graph(&format!("{}{}", node(0, "A", None), node(1, "B_2", None))),
            "flows[0]",
            &["route"],
        ),
    ];
    for (text, key, needles) in cases {
        std::fs::write(d.path().join("g.graphml"), &text).unwrap();
        let e = load(d.path(), GRAPH_SCENARIO).unwrap_err();
        assert!(e.contains(&format!("`{key}")), "{e}");
        for n in needles {
            assert!(e.contains(n), "`{n}` not in: {e}");
        }
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    // a missing file, and a missing key
    std::fs::remove_file(d.path().join("g.graphml")).unwrap();
    let e = load(d.path(), GRAPH_SCENARIO).unwrap_err();
    assert!(
        e.contains("`topology.file`") && e.contains("cannot read"),
        "{e}"
    );
    let e = load(
        d.path(),
        &GRAPH_SCENARIO.replace("default_rate = \"7Mbps\"\n", ""),
    )
    .unwrap_err();
    assert!(e.contains("`topology.default_rate`"), "{e}");
}

const EDGES_SCENARIO: &str = "name = \"e\"\nduration = \"200ms\"\n[topology]\nkind = \"edges\"\nfile = \"t.csv\"\nhosts = [\"h*\"]\n[[flows]]\ngroup = \"g\"\nsrc = \"h1\"\ndst = \"h2\"\n";

#[test]
fn bad_edge_lists_are_refused_with_the_line_and_column() {
    let d = tempfile::tempdir().unwrap();
    let long = format!("a,b,rate,delay\nh1,{},1Mbps,1ms\n", "r".repeat(201));
    let cases: &[(&str, &str, &[&str])] = &[
        (
            &long,
            "topology.file",
            &[
                "line 2, column `b`",
                "a name of 201 characters",
                "at most 200",
            ],
        ),
        (
            "a,b,rate\nh1,r,1Mbps\n",
            "topology.file",
            &["header", "no column `delay`"],
        ),
        (
            "a,b,rate,delay,speed\n",
            "topology.file",
            &["unknown column `speed`", "allowed: `a`, `b`"],
        ),
        (
            "a,b,rate,delay\nh1,r,1Mbps,1ms\nr,h2,1Mbps,-1ms\n",
            "topology.file",
            &["line 3, column `delay`", "negative"],
        ),
        (
            "a,b,rate,delay\nh1,r,1Mbps,1ms\nr,,1Mbps,1ms\n",
            "topology.file",
            &["line 3, column `b`", "empty"],
        ),
        (
            "a,b,rate,delay\nh1,h1,1Mbps,1ms\n",
            "topology.file",
            &["line 2", "two different nodes"],
        ),
        (
            "a,b,rate,delay\nh1,r,1Mbps,1ms\nr,h2,1Mbps,1ms\nh1,r,2Mbps,1ms\n",
            "topology.file",
            &["line 4", "second link named `h1-r`", "line 2"],
        ),
        (
            "a,b,rate,delay,loss_ab\nh1,r,1Mbps,1ms,1.5\n",
            "topology.file",
            &["column `loss_ab`", "[0, 1)"],
        ),
        ("a,b,rate,delay\n", "topology.file", &["no link rows"]),
        (
            "a,b,rate,delay\nh1,r,1Mbps,1ms\nr,x,1Mbps,1ms\n",
            "flows[0].dst",
            &["unknown node `h2`"],
        ),
    ];
    for (csv, key, needles) in cases {
        std::fs::write(d.path().join("t.csv"), csv).unwrap();
        let e = load(d.path(), EDGES_SCENARIO).unwrap_err();
        assert!(e.contains(&format!("`{key}`")), "{e}");
        for n in *needles {
            assert!(e.contains(n), "`{n}` not in: {e}");
        }
    }
    std::fs::write(
        d.path().join("t.csv"),
        "a,b,rate,delay\nh1,r,1Mbps,1ms\nr,h2,1Mbps,1ms\n",
    )
    .unwrap();
    let e = load(d.path(), &EDGES_SCENARIO.replace("[\"h*\"]", "[\"x*\"]")).unwrap_err();
    assert!(
        e.contains("`topology.hosts[0]`") && e.contains("matches no node"),
        "{e}"
    );
    // hosts_per_node needs the access keys
    let e = load(
        d.path(),
        &EDGES_SCENARIO.replace("hosts = [\"h*\"]", "hosts = [\"h*\"]\nhosts_per_node = 2"),
    )
    .unwrap_err();
    assert!(
        e.contains("`topology.access_rate`") && e.contains("required"),
        "{e}"
    );
    // ...and makes `{router}-h{i}` hosts
    let sc = load(
        d.path(),
        &EDGES_SCENARIO.replace(
            "hosts = [\"h*\"]",
            "hosts = [\"h*\"]\nhosts_per_node = 2\naccess_rate = \"1Gbps\"\naccess_delay = \"1us\"",
        ),
    )
    .unwrap();
    assert_eq!(sc.nodes.hosts, ["h1", "h2", "r-h0", "r-h1"]);
    assert_eq!(sc.links.len(), 4);
}

#[test]
fn a_file_too_large_is_refused_before_it_is_expanded() {
    let d = tempfile::tempdir().unwrap();
    // 200 002 rows under 4 MiB: refused by the row bound, before parsing
    let mut csv = String::from("a,b,rate,delay\n");
    for i in 0..200_002 {
        csv.push_str(&format!("n{i},m,1bps,1ns\n"));
    }
    assert!(csv.len() < 4 << 20);
    std::fs::write(d.path().join("t.csv"), &csv).unwrap();
    let e = load(d.path(), EDGES_SCENARIO).unwrap_err();
    assert!(
        e.contains("`topology.file`") && e.contains("at most 200000 links"),
        "{e}"
    );
    // over the reader's 4 MiB bound
    let big = "a,b,rate,delay\n".to_string() + &"h1,r,1Mbps,1ms,#padding.....\n".repeat(150_000);
    std::fs::write(d.path().join("t.csv"), big).unwrap();
    let e = load(d.path(), EDGES_SCENARIO).unwrap_err();
    assert!(
        e.contains("`topology.file`") && e.contains("at most 4194304 bytes"),
        "{e}"
    );
}
