//! The HTTP request/response workload: timing on an idle path against the
//! hand-computed value, Poisson arrivals, conservation, bad input.

use aqmlab::{Scenario, Simulation};

fn scenario(extra: &str) -> String {
    format!(
        r#"
name = "http"
duration = "20s"
[nodes]
hosts = ["client", "server"]
routers = ["r"]
[tcp]
mss = 1000
header_bytes = 40
delayed_ack = false
[[links]]
a = "client"
b = "r"
rate = "8Mbps"
delay = "5ms"
[[links]]
a = "r"
b = "server"
rate = "8Mbps"
delay = "5ms"
[[workloads]]
kind = "http"
name = "mice"
client = "client"
server = "server"
{extra}
"#
    )
}

#[test]
fn one_connection_on_an_idle_path_matches_the_hand_computation() {
    let sc = Scenario::from_toml(&scenario("connections = 1\nstart = \"1s\""), "h.toml").unwrap();
    let r = Simulation::new(&sc, 1).run();
    assert!(r.conservation.holds());
    let q = &r.requests[0];
    // 8 Mbit/s: 1 µs per byte; two hops of 5 ms.
    let tx = |bytes: f64| bytes * 1e-6;
    let one_way = |bytes: f64| 2.0 * (0.005 + tx(bytes));
    // SYN (40 B) out, SYN-ACK (40 B) back, then the request goes out.
    let request_s = 1.0 + 2.0 * one_way(40.0);
    assert!((q.request_s.unwrap() - request_s).abs() < 1e-6, "{q:?}");
    // request (62 + 40 B) reaches the server, which sends the first
    // response segment (1000 + 40 B) at once — behind its pure ACK of the
    // request (40 B) on its access link (aqmlab does not piggyback).
    let rt = one_way(102.0) + tx(40.0) + one_way(1040.0);
    assert!(
        (q.response_time_s.unwrap() - rt).abs() < 1e-6,
        "{} vs {rt}",
        q.response_time_s.unwrap()
    );
    // 4000 B = 4 segments; initial window 2: two round trips of data.
    let c = q.completion_s.unwrap();
    assert!(
        c > rt && c < rt + 2.0 * one_way(1040.0) + 2.0 * one_way(40.0) + 4.0 * tx(1040.0),
        "{c}"
    );
    let w = &r.workloads[0];
    assert_eq!((w.connections, w.completed), (1, 1));
    assert_eq!(q.bytes, 4000);
    // open → last response byte = handshake + completion
    assert!((q.total_s.unwrap() - (c + 2.0 * one_way(40.0))).abs() < 1e-6);
}

#[test]
fn poisson_arrivals_have_the_configured_rate() {
    let sc = Scenario::from_toml(
        &scenario("connections = 2000\nrate = 200.0\nresponse_size = \"500B\""),
        "h.toml",
    )
    .unwrap();
    let r = Simulation::new(&sc, 3).run();
    assert!(r.conservation.holds());
    let mut opens: Vec<f64> = r.requests.iter().map(|q| q.open_s).collect();
    assert_eq!(opens.len(), 2000);
    opens.sort_by(|a, b| a.total_cmp(b));
    let mean_gap = (opens[1999] - opens[0]) / 1999.0;
    // exponential gaps, mean 5 ms; the mean of 1999 gaps has sd 5/√1999 = 0.11 ms
    assert!((mean_gap - 0.005).abs() < 0.0005, "mean gap {mean_gap}");
    assert_eq!(r.workloads[0].completed, 2000);
    // a different seed gives different arrival times
    let r2 = Simulation::new(&sc, 4).run();
    assert_ne!(r.requests[10].open_s, r2.requests[10].open_s);
}

#[test]
fn burst_of_connections_all_open_at_start_and_complete() {
    let sc = Scenario::from_toml(&scenario("connections = 50\nstart = \"2s\""), "h.toml").unwrap();
    let r = Simulation::new(&sc, 1).run();
    assert!(r.conservation.holds());
    assert!(r.requests.iter().all(|q| q.open_s == 2.0));
    assert_eq!(r.workloads[0].completed, 50);
    for q in &r.requests {
        assert!(q.completion_s.unwrap() >= q.response_time_s.unwrap());
    }
}

#[test]
fn bad_workload_input_names_the_key() {
    let e = |extra: &str| {
        Scenario::from_toml(&scenario(extra), "h.toml")
            .unwrap_err()
            .to_string()
    };
    let m = e("connections = 0");
    assert!(
        m.contains("workloads[0].connections") && m.contains("at least 1"),
        "{m}"
    );
    let m = e("connections = 3\nrate = -2.0");
    assert!(m.contains("workloads[0].rate"), "{m}");
    let m = Scenario::from_toml(
        &scenario("connections = 1").replace("server = \"server\"", "server = \"nowhere\""),
        "h.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        m.contains("workloads[0].server") && m.contains("unknown node `nowhere`"),
        "{m}"
    );
    let m = Scenario::from_toml(
        &scenario("connections = 1").replace("kind = \"http\"", "kind = \"ftp\""),
        "h.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(m.contains("workloads[0]") && m.contains("http"), "{m}");
}
