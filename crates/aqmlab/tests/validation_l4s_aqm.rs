//! The L4S modes of FQ-CoDel and the CAKE/COBALT queues in whole runs.
//!
//! `ce_threshold` (Linux `sch_fq_codel`, ns-3 `FqCoDelQueueDisc`
//! `CeThreshold`): DCTCP (ECT(0), a per-packet CE echo) through FQ-CoDel
//! with a 1 ms step keeps its queue near the step while the link stays busy,
//! as in ns-3's `fqcodel-l4s-example.cc` with DCTCP and Linux with
//! `ce_threshold 1ms`.

use aqmlab::{Scenario, Simulation};

const C_BPS: f64 = 100e6;
const PKT_BYTES: f64 = 1040.0; // mss 1000 + 40 header bytes

fn dctcp_through(queue: &str, flows: u32) -> Scenario {
    let text = format!(
        r#"
name = "dctcp-fq-codel-ce"
duration = "6s"
[nodes]
hosts = ["s", "d"]
routers = ["r1", "r2"]
[tcp]
ecn = true
delayed_ack = false
max_window = 100000
[[links]]
a = "s"
b = "r1"
rate = "1Gbps"
delay = "0.25ms"
[[links]]
a = "r1"
b = "r2"
rate = "100Mbps"
delay = "2ms"
queue_ab = {queue}
[[links]]
a = "r2"
b = "d"
rate = "1Gbps"
delay = "0.25ms"
[[flows]]
group = "bulk"
src = "s"
dst = "d"
count = {flows}
cc = "dctcp"
start_spread = "10ms"
[output]
warmup = "1s"
"#
    );
    Scenario::from_toml(&text, "l4s.toml").unwrap()
}

/// DCTCP over FQ-CoDel with `ce_threshold = 1ms`: the mean queueing delay
/// stays near the step (< 2 ms) and utilisation above 90 %; without the
/// step, CoDel's 5 ms target lets the queue sit several times higher.
#[test]
fn dctcp_over_fq_codel_ce_threshold_keeps_a_shallow_queue() {
    for n in [1u32, 4] {
        let step = dctcp_through(r#"{ kind = "fq_codel", ce_threshold = "1ms" }"#, n);
        let r = Simulation::new(&step, 1).run();
        assert!(r.conservation.holds(), "packet conservation");
        let q = r.queue("r1->r2").unwrap();
        let goodput: f64 = r.flows.iter().map(|f| f.goodput_bps).sum();
        let util = goodput / (C_BPS * 1000.0 / PKT_BYTES);
        println!(
            "N={n} ce_threshold 1ms: mean delay {:.3} ms, p99 {:.3} ms, utilisation {util:.3}, marked {}, dropped {}",
            q.mean_delay_s * 1e3,
            q.p99_delay_s * 1e3,
            q.marked,
            q.dropped
        );
        assert!(
            q.mean_delay_s < 2e-3,
            "N={n}: mean delay {} s",
            q.mean_delay_s
        );
        assert!(util > 0.90, "N={n}: utilisation {util}");
        assert!(q.marked > 0 && q.dropped == 0, "N={n}: marks, no drops");

        let plain = dctcp_through(r#"{ kind = "fq_codel" }"#, n);
        let r0 = Simulation::new(&plain, 1).run();
        let q0 = r0.queue("r1->r2").unwrap();
        println!(
            "N={n} plain fq_codel: mean delay {:.3} ms",
            q0.mean_delay_s * 1e3
        );
        assert!(
            q0.mean_delay_s > 2.0 * q.mean_delay_s,
            "N={n}: the step lowers the delay ({} vs {} s)",
            q.mean_delay_s,
            q0.mean_delay_s
        );
    }
}
