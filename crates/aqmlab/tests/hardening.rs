//! Regression tests of issue 35 (hardening, round 2): figures the physics
//! forbids, hangs and unbounded reads or allocations, each as the issue
//! found it.

use aqmlab::scenario::limits::Limits;
use aqmlab::{Scenario, Simulation};

const DUMBBELL: &str = r#"name = "d"
duration = "{dur}"
[nodes]
hosts = ["a", "b", "c"]
routers = ["r"]
[[links]]
a = "a"
b = "r"
rate = "100Mbps"
delay = "1ms"
[[links]]
a = "b"
b = "r"
rate = "100Mbps"
delay = "1ms"
[[links]]
a = "r"
b = "c"
rate = "10Mbps"
delay = "10ms"
{extra}"#;

fn dumbbell(dur: &str, extra: &str) -> Result<Scenario, String> {
    let t = DUMBBELL.replace("{dur}", dur).replace("{extra}", extra);
    Scenario::from_toml(&t, "d.toml").map_err(|e| e.to_string())
}

/// A 10 Mbit/s link with 1 % loss: every throughput bin carries at most
/// the link's rate plus one packet (the bins counted cumulative ACKs after
/// a hole was filled: 13.6 Mbit/s).
#[test]
fn throughput_bins_never_exceed_the_link_rate_under_loss() {
    // (`loss_ab` lands in the bottleneck's table, the last link)
    let sc = dumbbell(
        "10s",
        "loss_ab = 0.01\n[[flows]]\ngroup = \"x\"\nsrc = \"a\"\ndst = \"c\"\ncount = 2\n[output]\nthroughput_bin = \"100ms\"\n",
    )
    .unwrap();
    let r = Simulation::new(&sc, 3).run();
    assert!(r.links.iter().any(|l| l.lost > 0), "the link loses packets");
    let pkt = 1500.0 * 8.0; // one full packet, bits
    let mut total = vec![0.0; r.throughput[0].bytes.len()];
    for s in &r.throughput {
        for (i, (_, bps)) in s.bps().enumerate() {
            assert!(bps <= 10e6 + pkt / 0.1, "flow {} bin {i}: {bps}", s.flow);
            total[i] += bps;
        }
    }
    for (i, t) in total.iter().enumerate() {
        assert!(*t <= 10e6 + 2.0 * pkt / 0.1, "all flows, bin {i}: {t}");
    }
    // the bins count every payload byte once: their sum is the bytes the
    // receivers hold, at least those acknowledged
    for (s, f) in r.throughput.iter().zip(&r.flows) {
        let sum: u64 = s.bytes.iter().sum();
        assert!(sum >= f.bytes_acked, "{sum} < {}", f.bytes_acked);
    }
}

/// A `cdf` workload whose only receiver is one of its senders spun
/// forever drawing a receiver other than the sender; it is refused.
#[test]
fn a_cdf_sender_without_another_receiver_is_refused() {
    let w = |s: &str, r: &str| {
        format!("[[workloads]]\nkind = \"cdf\"\nname = \"w\"\nsenders = {s}\nreceivers = {r}\nflows = 10\nrate = 100\nsizes = \"web-search\"\n")
    };
    let e = dumbbell("1s", &w(r#"["a", "c"]"#, r#"["c"]"#)).unwrap_err();
    assert!(e.contains("workloads[0].receivers"), "{e}");
    assert!(e.contains("sender `c`"), "{e}");
    let e = dumbbell("1s", &w(r#"["c"]"#, r#"["c", "c"]"#)).unwrap_err();
    assert!(e.contains("workloads[0].receivers"), "{e}");
    // a pattern is checked once expanded
    let e = dumbbell("1s", &w(r#"["c*"]"#, r#"["c*"]"#)).unwrap_err();
    assert!(e.contains("receivers"), "{e}");
    // a sender with another receiver runs
    let sc = dumbbell("1s", &w(r#"["a", "c"]"#, r#"["a", "c"]"#)).unwrap();
    assert!(Simulation::new(&sc, 1).run().conservation.holds());
}

fn cdf_file(path: &str) -> Result<Scenario, String> {
    dumbbell(
        "1s",
        &format!("[[workloads]]\nkind = \"cdf\"\nname = \"w\"\nsenders = [\"a\"]\nreceivers = [\"c\"]\nflows = 10\nrate = 100\nsizes = \"{path}\"\n"),
    )
}

/// A CDF of all-zero sizes became 1-byte transfers without a word.
#[test]
fn a_cdf_of_zero_sizes_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("zero.cdf");
    std::fs::write(&p, "0 0\n0 100\n").unwrap();
    let e = cdf_file(&p.display().to_string()).unwrap_err();
    assert!(e.contains("workloads[0].sizes"), "{e}");
    assert!(e.contains("below 1 byte"), "{e}");
}

/// A FIFO blocked forever and `/dev/zero` was read to about 2 GB: a CDF
/// file is read like a scenario file (regular file, size bound).
#[test]
fn cdf_files_are_read_like_scenario_files() {
    if std::path::Path::new("/dev/zero").exists() {
        let e = cdf_file("/dev/zero").unwrap_err();
        assert!(e.contains("workloads[0].sizes"), "{e}");
        assert!(e.contains("not a regular file"), "{e}");
    }
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo.cdf");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let e = cdf_file(&fifo.display().to_string()).unwrap_err();
        assert!(e.contains("a FIFO, socket or device"), "{e}");
    }
    let big = d.path().join("big.cdf");
    std::fs::write(&big, vec![b'#'; 5 << 20]).unwrap();
    let e = cdf_file(&big.display().to_string()).unwrap_err();
    assert!(e.contains("at most 4194304 bytes"), "{e}");
}

fn parking_lot(hops: u32) -> Result<Scenario, String> {
    let t = format!(
        "name = \"p\"\nduration = \"1s\"\n[topology]\nkind = \"parking-lot\"\nhops = {hops}\nrate = \"10Mbps\"\ndelay = \"1ms\"\naccess_rate = \"100Mbps\"\naccess_delay = \"1ms\"\n[[flows]]\ngroup = \"long\"\nsrc = \"long_src\"\ndst = \"long_dst\"\n"
    );
    Scenario::from_toml(&t, "p.toml").map_err(|e| e.to_string())
}

/// `hops = 49999` asked for 10 GB in validation and aborted; `20000`
/// took 17.7 s and 2.1 GB. The next-hop table is estimated first: above
/// the limit nothing is routed in validation, and the limits refuse it.
#[test]
fn a_long_parking_lot_is_refused_before_its_routes_are_built() {
    let t = std::time::Instant::now();
    let sc = parking_lot(49_999).expect("valid without building routes");
    let (k, m) = sc.check_limits(&Limits::DEFAULT).unwrap_err();
    assert_eq!(k, "topology.hops");
    assert!(m.contains("next-hop table"), "{m}");
    assert!(m.contains("--allow-large"), "{m}");
    assert!(sc.routing_cells() > 2_000_000_000, "{}", sc.routing_cells());
    // a cheap refusal (the routes would take minutes)
    assert!(t.elapsed().as_secs() < 5, "{:?}", t.elapsed());
    // a short one is routed and checked as before
    let sc = parking_lot(10).unwrap();
    sc.check_limits(&Limits::DEFAULT).unwrap();
    assert_eq!(sc.routing_cells(), 11 * 11);
}

fn topo(body: &str) -> String {
    let t = format!(
        "name = \"t\"\nduration = \"1s\"\n[topology]\n{body}\n[[flows]]\ngroup = \"x\"\nsrc = \"src0\"\ndst = \"dst0\"\n"
    );
    Scenario::from_toml(&t, "t.toml").unwrap_err().to_string()
}

/// Inside a generated topology the message named only `topology`
/// (`` `topology`: invalid rate `-1Mbps` ``, `` `topology.limit`: required ``
/// without the queue).
#[test]
fn messages_inside_a_topology_name_the_key() {
    let ok = "kind = \"dumbbell\"\nhosts = 1\naccess_rate = \"100Mbps\"\naccess_delay = \"1ms\"\nbottleneck_rate = \"10Mbps\"\nbottleneck_delay = \"10ms\"";
    let e = topo(&ok.replace("\"10Mbps\"", "\"-1Mbps\""));
    assert!(e.contains("`topology.bottleneck_rate`"), "{e}");
    let e = topo(&format!(
        "{ok}\nqueue = {{ kind = \"red\", min_th = 5, max_th = 15 }}"
    ));
    assert!(e.contains("`topology.queue.limit`: required"), "{e}");
    let e = topo(&format!("{ok}\naccess_rat = \"1Mbps\""));
    assert!(e.contains("`topology.access_rat`"), "{e}");
    assert!(e.contains("did you mean `access_rate`?"), "{e}");
    let e = topo(&ok.replace("dumbbell", "dumbell"));
    assert!(e.contains("`topology.kind`"), "{e}");
    let e = topo("hosts = 3");
    assert!(e.contains("`topology.kind`: required"), "{e}");
}

/// An unknown key gets the close one suggested (issue 34: `max_pp`).
#[test]
fn a_typo_gets_the_close_key_suggested() {
    let e = dumbbell(
        "1s",
        "queue = { kind = \"red\", limit = 100, min_th = 5, max_th = 15, max_pp = 0.1 }\n[[flows]]\ngroup = \"x\"\nsrc = \"a\"\ndst = \"c\"\n",
    )
    .unwrap_err();
    assert!(e.contains("`links[2].queue.max_pp`"), "{e}");
    assert!(e.contains("did you mean `max_p`?"), "{e}");
    let e = dumbbell(
        "1s",
        "[[flows]]\ngroup = \"x\"\nsrc = \"a\"\ndst = \"c\"\nstrat = \"1s\"\n",
    )
    .unwrap_err();
    assert!(e.contains("did you mean `start`?"), "{e}");
    // nothing close: no guess
    let e = dumbbell(
        "1s",
        "[[flows]]\ngroup = \"x\"\nsrc = \"a\"\ndst = \"c\"\nbanana = 1\n",
    )
    .unwrap_err();
    assert!(!e.contains("did you mean"), "{e}");
}

/// A 100 kB scenario name was written on every CSV row (a 2-second run
/// made 40 MB of output); names are bounded.
#[test]
fn long_names_are_refused() {
    let t = DUMBBELL
        .replace("{dur}", "1s")
        .replace(
            "{extra}",
            "[[flows]]\ngroup = \"x\"\nsrc = \"a\"\ndst = \"c\"\n",
        )
        .replace(
            "name = \"d\"",
            &format!("name = \"{}\"", "n".repeat(100_000)),
        );
    let e = Scenario::from_toml(&t, "d.toml").unwrap_err().to_string();
    assert!(e.contains("`name`"), "{e}");
    assert!(e.contains("at most 200"), "{e}");
    assert!(
        e.len() < 300,
        "the message does not echo the name: {} bytes",
        e.len()
    );
    let e = dumbbell(
        "1s",
        &format!(
            "[[flows]]\ngroup = \"{}\"\nsrc = \"a\"\ndst = \"c\"\n",
            "g".repeat(201)
        ),
    )
    .unwrap_err();
    assert!(e.contains("`flows[0].group`"), "{e}");
}
