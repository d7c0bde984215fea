//! TCP Prague and AccECN in whole runs (`tcp/cc/prague.rs`,
//! `tcp/ecn.rs`): Prague alone over a step-marking bottleneck keeps the
//! link busy with the queue near the step; with RFC 3168 feedback it falls
//! back to Reno without ECN (L4STeam `prague_init`); with RTT independence
//! two Prague flows of 10 and 80 ms base RTT share more evenly than two
//! DCTCP flows sending ECT(1) do.

use aqmlab::{Scenario, Simulation};

const C_BPS: f64 = 100e6;

/// One or two flows over a 100 Mbit/s step queue (CE above 1 ms sojourn).
/// `rtts_ms`: each flow's base RTT (access links set it).
fn scenario(cc: &str, feedback: &str, rtts_ms: &[f64], duration: &str, warmup: &str) -> Scenario {
    let mut t = format!(
        r#"
name = "l4s"
duration = "{duration}"
[nodes]
hosts = [{hosts}, "d"]
routers = ["r1", "r2"]
[tcp]
ecn = true
ecn_feedback = "{feedback}"
handshake = true
[[links]]
name = "bn"
a = "r1"
b = "r2"
rate = "100Mbps"
delay = "1ms"
queue_ab = {{ kind = "step", k_sojourn = "1ms", limit = 3000 }}
[[links]]
a = "r2"
b = "d"
rate = "1Gbps"
delay = "0.5ms"
[output]
warmup = "{warmup}"
"#,
        hosts = (0..rtts_ms.len())
            .map(|i| format!("\"s{i}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (i, rtt) in rtts_ms.iter().enumerate() {
        // base RTT = 2 × (access + 1 ms + 0.5 ms)
        let access = rtt / 2.0 - 1.5;
        t += &format!(
            "[[links]]\na = \"s{i}\"\nb = \"r1\"\nrate = \"1Gbps\"\ndelay = \"{access}ms\"\n\
             [[flows]]\ngroup = \"f{i}\"\nsrc = \"s{i}\"\ndst = \"d\"\ncc = {cc}\n"
        );
    }
    Scenario::from_toml(&t, "l4s.toml").unwrap()
}

fn stat(r: &aqmlab::RunResult, flow: usize, name: &str) -> f64 {
    let s = r
        .cc_stats
        .iter()
        .find(|s| s.flow as usize == flow)
        .expect("cc stats");
    *s.stats.get(name).unwrap_or_else(|| panic!("stat {name}"))
}

/// Prague alone, 20 ms base RTT: utilisation > 95 % and a mean queueing
/// delay near the 1 ms step (measured: 99.7 % of the payload rate, 0.47 ms
/// mean, 1.03 ms p99).
#[test]
fn prague_over_a_step_queue() {
    let sc = scenario("\"prague\"", "accecn", &[20.0], "20s", "5s");
    let r = Simulation::new(&sc, 1).run();
    assert!(r.conservation.holds(), "packet conservation");
    let q = r.queue("r1->r2").unwrap();
    // goodput counts payload: mss of mss + header bytes on the wire
    let d = aqmlab::tcp::TcpParams::default();
    let payload = d.mss as f64 / (d.mss + d.header_bytes) as f64;
    let util = r.flows[0].goodput_bps / (C_BPS * payload);
    println!(
        "prague: utilisation {util:.3}, queue delay mean {:.3} ms p99 {:.3} ms, marked {:.4}, alpha {:.3}",
        q.mean_delay_s * 1e3,
        q.p99_delay_s * 1e3,
        q.marked as f64 / q.enqueued as f64,
        stat(&r, 0, "alpha")
    );
    assert!(util > 0.95, "utilisation {util:.3}");
    assert!(
        q.mean_delay_s > 0.2e-3 && q.mean_delay_s < 1.2e-3,
        "mean queue delay {:.3} ms not near the 1 ms step",
        q.mean_delay_s * 1e3
    );
    assert_eq!(q.dropped, 0);
    assert_eq!(stat(&r, 0, "reno_fallback"), 0.0);
    assert!(q.marked > 0 && stat(&r, 0, "alpha") < 0.5);
}

/// With RFC 3168 feedback Prague does not get AccECN, turns ECN off and
/// runs Reno (`prague_reno`): Not-ECT data, so the step queue marks
/// nothing and the flow is loss-driven (measured: mean queue delay
/// 117 ms in the 3000-packet buffer).
#[test]
fn prague_without_accecn_falls_back_to_reno() {
    let sc = scenario("\"prague\"", "rfc3168", &[20.0], "10s", "2s");
    let r = Simulation::new(&sc, 1).run();
    assert!(r.conservation.holds());
    let q = r.queue("r1->r2").unwrap();
    assert_eq!(stat(&r, 0, "reno_fallback"), 1.0);
    assert_eq!(q.marked, 0, "Not-ECT data is never marked");
    assert_eq!(r.flows[0].ecn_reductions, 0);
    // loss-driven: the queue stands far above the 1 ms step
    println!("fallback: queue delay mean {:.1} ms", q.mean_delay_s * 1e3);
    assert!(
        q.mean_delay_s > 10e-3,
        "mean queue delay {:.2} ms",
        q.mean_delay_s * 1e3
    );
}

/// RTT independence (`RTT_CONTROL_RATE`, target 25 ms from 500 rounds):
/// 10 vs 80 ms base RTT through the step queue, 60 s, the last 40 s
/// measured. Measured ratio of the short flow's goodput to the long
/// one's: Prague 9.6, DCTCP with ECT(1) and AccECN 200 (asserted:
/// Prague's ratio below a fifth of DCTCP's).
#[test]
fn prague_is_less_rtt_unfair_than_dctcp() {
    let ratio = |cc: &str| {
        let sc = scenario(cc, "accecn", &[10.0, 80.0], "60s", "20s");
        let r = Simulation::new(&sc, 1).run();
        assert!(r.conservation.holds());
        r.flows[0].goodput_bps / r.flows[1].goodput_bps
    };
    let prague = ratio("\"prague\"");
    let dctcp = ratio("{ kind = \"dctcp\", ect1 = true }");
    println!("goodput ratio 10 ms : 80 ms — prague {prague:.2}, dctcp {dctcp:.2}");
    assert!(
        prague < dctcp / 5.0,
        "prague {prague:.2} vs dctcp {dctcp:.2}"
    );
    assert!(prague > 1.0, "the short flow still gets more: {prague:.2}");
}
