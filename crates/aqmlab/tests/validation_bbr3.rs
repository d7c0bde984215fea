//! BBR v3 (google/bbr v3 `tcp_bbr.c`) end to end: one flow alone on a
//! 100 Mbit/s bottleneck with a 40 ms base RTT and a 2 BDP DropTail
//! buffer (`scenarios/bbr/alone-v3.toml`): Startup ends, the link is
//! kept full, ProbeRTT comes every ~5 s, and ProbeBW probes up.

use aqmlab::{Scenario, Simulation};

const PKTS_PER_S: f64 = 100e6 / (1500.0 * 8.0);

#[test]
fn single_flow_fills_the_link_and_cycles() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/bbr/alone-v3.toml"
    ))
    .unwrap();
    let sc = Scenario::from_toml(&text, "alone-v3.toml").unwrap();
    let r = Simulation::with_threads(&sc, 1, 1).run();
    assert!(r.conservation.holds(), "packet conservation");
    let stats = &r.cc_stats[0].stats;
    let bw = stats["bw_pkts_per_s"];
    assert!((bw / PKTS_PER_S - 1.0).abs() < 0.02, "bw {bw:.0} pkts/s");
    let exit = stats["startup_exit_round"];
    assert!(
        (5.0..=15.0).contains(&exit),
        "Startup ended at round {exit}"
    );
    // 30 s: ProbeRTT every 5 s of stale probe_rtt_min -> 5 or 6 times
    let prtt = stats["probe_rtt_count"];
    assert!((4.0..=6.0).contains(&prtt), "ProbeRTT {prtt} times");
    assert!(stats["probe_up_count"] >= 5.0, "{stats:?}");
    let util = r.flows[0].goodput_bps / 100e6;
    eprintln!("v3 stats {stats:?} util {util}");
    assert!(util >= 0.95 * 1448.0 / 1500.0, "utilisation {util}");
}
