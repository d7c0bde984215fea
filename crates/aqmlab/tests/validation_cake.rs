//! CAKE's host isolation in whole runs ("Piece of CAKE", LANMAN 2018,
//! §III-A; Linux `sch_cake.c` `cake_hash`, `cake_get_flow_quantum`): host h1
//! with one CUBIC flow and host h2 with eight share a 10 Mbit/s bottleneck
//! to one receiver. Per-host isolation (`hosts`, `dual-srchost`) gives each
//! host about half; FQ-CoDel's per-flow fairness gives h1 about 1/9.
//! Measured (seed 1, 20 s, 5 s warm-up): h1's share 0.506 (`hosts`), 0.468
//! (`dual-srchost`), 0.111 (`fq_codel`).

use aqmlab::{Scenario, Simulation};

fn two_hosts(queue: &str) -> Scenario {
    let text = format!(
        r#"
name = "cake-hosts"
duration = "20s"
seed = 1
[nodes]
hosts = ["h1", "h2", "d"]
routers = ["r"]
[[links]]
a = "h1"
b = "r"
rate = "100Mbps"
delay = "1ms"
[[links]]
a = "h2"
b = "r"
rate = "100Mbps"
delay = "1ms"
[[links]]
a = "r"
b = "d"
rate = "10Mbps"
delay = "9ms"
queue_ab = {queue}
[[flows]]
group = "h1"
src = "h1"
dst = "d"
count = 1
cc = "cubic"
[[flows]]
group = "h2"
src = "h2"
dst = "d"
count = 8
cc = "cubic"
start_spread = "100ms"
[output]
warmup = "5s"
"#
    );
    Scenario::from_toml(&text, "cake-hosts.toml").unwrap()
}

/// h1's share of the goodput, and the utilisation of the bottleneck.
fn share_of_h1(queue: &str) -> (f64, f64) {
    let r = Simulation::new(&two_hosts(queue), 1).run();
    assert!(r.conservation.holds(), "packet conservation");
    let by = |g: &str| -> f64 {
        r.flows
            .iter()
            .filter(|f| f.group == g)
            .map(|f| f.goodput_bps)
            .sum()
    };
    let (h1, h2) = (by("h1"), by("h2"));
    (h1 / (h1 + h2), (h1 + h2) / 10e6)
}

#[test]
fn cake_host_isolation_gives_each_host_half() {
    for mode in ["hosts", "dual-srchost"] {
        let (s, util) = share_of_h1(&format!(r#"{{ kind = "cake", flow_mode = "{mode}" }}"#));
        println!("cake {mode}: h1 share {s:.3}, goodput/capacity {util:.3}");
        assert!((s - 0.5).abs() < 0.05, "{mode}: h1's share {s}");
        assert!(util > 0.9, "{mode}: utilisation {util}");
    }
    let (s, _) = share_of_h1(r#"{ kind = "fq_codel" }"#);
    println!("fq_codel: h1 share {s:.3}");
    assert!((s - 1.0 / 9.0).abs() < 0.03, "fq_codel: h1's share {s}");
}
