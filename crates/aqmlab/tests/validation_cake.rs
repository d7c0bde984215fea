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

/// CAKE's shaper (`bandwidth`; Linux `sch_cake.c` `cake_advance_shaper`,
/// Piece of CAKE §IV-B) on a 100 Mbit/s link: senders s1..s4 → r1 → r2 →
/// receivers d1..d4, the shaper at r1's port on the r1 → r2 link.
fn shaped(queue: &str, flows: &str, duration: &str) -> Scenario {
    let text = format!(
        r#"
name = "cake-shaper"
duration = "{duration}"
seed = 1
[nodes]
hosts = ["s1", "s2", "s3", "s4", "d1", "d2", "d3", "d4"]
routers = ["r1", "r2"]
[[links]]
a = "s1"
b = "r1"
rate = "1Gbps"
delay = "1ms"
[[links]]
a = "s2"
b = "r1"
rate = "1Gbps"
delay = "1ms"
[[links]]
a = "s3"
b = "r1"
rate = "1Gbps"
delay = "1ms"
[[links]]
a = "s4"
b = "r1"
rate = "1Gbps"
delay = "1ms"
[[links]]
a = "r1"
b = "r2"
rate = "100Mbps"
delay = "8ms"
queue_ab = {queue}
[[links]]
a = "r2"
b = "d1"
rate = "1Gbps"
delay = "1ms"
[[links]]
a = "r2"
b = "d2"
rate = "1Gbps"
delay = "1ms"
[[links]]
a = "r2"
b = "d3"
rate = "1Gbps"
delay = "1ms"
[[links]]
a = "r2"
b = "d4"
rate = "1Gbps"
delay = "1ms"
{flows}
[output]
warmup = "2s"
"#
    );
    Scenario::from_toml(&text, "cake-shaper.toml").unwrap()
}

/// The bits per second the r1 → r2 link carried over the window, and the
/// run's result.
fn shaped_rate(sc: &Scenario, threads: usize) -> (f64, aqmlab::metrics::RunResult) {
    let r = Simulation::with_threads(sc, 1, threads).run();
    assert!(r.conservation.holds(), "packet conservation");
    let l = r.links.iter().find(|l| l.link == "r1->r2").expect("link");
    let span = r.sim_seconds - r.warmup_s.unwrap();
    (l.tx_bytes as f64 * 8.0 / span, r)
}

const TCP2: &str = r#"
[[flows]]
group = "tcp"
src = "s1"
dst = "d1"
count = 2
cc = "cubic"
"#;

fn cbr(rate: &str, size: u32) -> String {
    format!(
        r#"
[[flows]]
group = "cbr"
src = "s2"
dst = "d2"
cbr = {{ rate = "{rate}", packet_size = {size} }}
"#
    )
}

/// The shaper holds the link to `bandwidth` within 1 % under long TCP
/// flows and under a CBR load above it, on a link five times faster;
/// unshaped, the same TCP flows fill the link.
#[test]
fn shaper_holds_its_rate_within_one_percent() {
    let q = r#"{ kind = "cake", bandwidth = "20Mbps" }"#;
    for (what, flows) in [
        ("2 CUBIC", TCP2.to_string()),
        ("30 Mbit/s CBR", cbr("30Mbps", 1500)),
    ] {
        let (bps, r) = shaped_rate(&shaped(q, &flows, "12s"), 1);
        println!("{what}: {bps:.0} bit/s through a 20 Mbit/s shaper");
        assert!((bps / 20e6 - 1.0).abs() < 0.01, "{what}: {bps}");
        let st = &r.queues.iter().find(|q| q.link == "r1->r2").unwrap().stats;
        assert!(
            st["shaper_overlimits"] > 0.0,
            "the port waited for the shaper"
        );
        assert_eq!(st["shaper_rate_bps"], 20e6);
    }
    let (bps, _) = shaped_rate(&shaped(r#"{ kind = "cake" }"#, TCP2, "12s"), 1);
    assert!(bps > 90e6, "unshaped: {bps}");
}

/// Overhead compensation (`cake_calc_overhead`): the shaper charges
/// `max(size + overhead, mpu)` bytes, so the IP rate is the bandwidth
/// times size / charged size — by hand: 1500-byte packets with 38 bytes of
/// overhead, 20 Mbit/s × 1500/1538 = 19.506 Mbit/s; 100-byte packets with
/// an mpu of 250, 20 × 100/250 = 8 Mbit/s; a negative overhead raises it,
/// 20 × 1500/1480 = 20.270 Mbit/s.
#[test]
fn overhead_and_mpu_change_the_rate_as_computed() {
    for (extra, rate, size, want) in [
        ("overhead = 38", "30Mbps", 1500, 20e6 * 1500.0 / 1538.0),
        ("mpu = 250", "30Mbps", 100, 20e6 * 100.0 / 250.0),
        ("overhead = -20", "30Mbps", 1500, 20e6 * 1500.0 / 1480.0),
    ] {
        let q = format!(r#"{{ kind = "cake", bandwidth = "20Mbps", {extra} }}"#);
        let (bps, _) = shaped_rate(&shaped(&q, &cbr(rate, size), "8s"), 1);
        println!("{extra}: {bps:.0} bit/s, by hand {want:.0}");
        assert!((bps / want - 1.0).abs() < 0.005, "{extra}: {bps} vs {want}");
    }
}

/// A shaped run is the same on 1 and 2 threads (the wake-up is a
/// transmitter event with its own tie-break counter).
#[test]
fn shaped_runs_are_identical_on_two_threads() {
    let sc = shaped(
        r#"{ kind = "cake", bandwidth = "20Mbps" }"#,
        &format!("{TCP2}{}", cbr("5Mbps", 1000)),
        "4s",
    );
    let fp = |r: &aqmlab::metrics::RunResult| {
        let mut r = r.clone();
        r.wall_seconds = 0.0;
        r.timings = Default::default();
        r.parallel = None;
        format!("{r:?}")
    };
    let (_, one) = shaped_rate(&sc, 1);
    let mut sim = Simulation::with_threads(&sc, 1, 2);
    assert!(sim.processes() >= 2, "{:?}", sim.parallel_note());
    let two = sim.run();
    assert!(two.conservation.holds());
    assert_eq!(fp(&one), fp(&two));
}

/// A CUBIC flow marked CS1 (DSCP 8, "Low Priority" in sch_cake's diffserv3
/// table) against a best-effort one through CAKE diffserv3: the bulk tin
/// gets its tin's share. Unshaped, the tins share by DRR of their quanta
/// (`cake_config_diffserv3`: 1024 best effort, 1024 >> 4 = 64 bulk), so
/// bulk gets 64 / (1024 + 64) = 1/17 = 0.0588 of the link; shaped, the
/// bulk tin is served first while within its threshold (rate >> 4) and
/// not beyond, so it gets 1/16 = 0.0625 of the bandwidth. Four
/// best-effort flows keep their tin backlogged (an idle tin's share goes
/// to the other). `besteffort` ignores the DSCP: with per-flow isolation
/// each of the five flows gets about a fifth.
fn bulk_share(queue: &str) -> f64 {
    let flows = r#"
[[flows]]
group = "be"
src = "s1"
dst = "d1"
count = 4
cc = "cubic"
[[flows]]
group = "bulk"
src = "s2"
dst = "d2"
cc = "cubic"
dscp = 8
"#;
    let r = Simulation::new(&shaped(queue, flows, "20s"), 1).run();
    assert!(r.conservation.holds(), "packet conservation");
    let by = |g: &str| -> f64 {
        (r.flows.iter().filter(|f| f.group == g))
            .map(|f| f.goodput_bps)
            .sum()
    };
    let s = by("bulk") / (by("be") + by("bulk"));
    println!(
        "{queue}: goodput {:.2} Mbit/s, bulk share {s:.4}",
        (by("be") + by("bulk")) / 1e6
    );
    s
}

#[test]
fn a_cs1_flow_gets_the_bulk_tins_share() {
    for (queue, want, tol) in [
        (r#"{ kind = "cake" }"#, 64.0 / 1088.0, 0.006),
        (
            r#"{ kind = "cake", bandwidth = "20Mbps" }"#,
            1.0 / 16.0,
            0.006,
        ),
        (
            r#"{ kind = "cake", diffserv = "besteffort", flow_mode = "flows" }"#,
            0.2,
            0.03,
        ),
    ] {
        let s = bulk_share(queue);
        println!("{queue}: CS1 flow's share {s:.4}, expected {want:.4}");
        assert!((s - want).abs() < tol, "{queue}: {s} vs {want}");
    }
}
