//! The flent data file (`output::flent`): its structure is flent's version
//! 4 format, its series are the run's own figures in flent's units, and the
//! file is a pure function of the scenario and the seed.

use aqmlab::output::flent;
use aqmlab::{RunResult, Scenario, Simulation};
use serde_json::Value;
use std::io::Read;

/// Two Reno flows through a 10 Mbit/s, 20 ms bottleneck for 5 s; the first
/// flow's cwnd traced; throughput bins of `bin` when given.
fn run(bin: Option<&str>) -> RunResult {
    let output = match bin {
        Some(b) => format!("[output]\nthroughput_bin = \"{b}\""),
        None => String::new(),
    };
    let text = format!(
        r#"
name = "flent-test"
duration = "5s"
[nodes]
hosts = ["s", "d"]
routers = ["r1", "r2"]
[[links]]
a = "s"
b = "r1"
rate = "1Gbps"
delay = "1ms"
[[links]]
a = "r1"
b = "r2"
rate = "10Mbps"
delay = "20ms"
queue_ab = {{ kind = "droptail", limit = 50 }}
[[links]]
a = "r2"
b = "d"
rate = "1Gbps"
delay = "1ms"
[[flows]]
group = "a"
src = "s"
dst = "d"
cc = "newreno"
trace_cwnd = true
[[flows]]
group = "b"
src = "s"
dst = "d"
cc = "cubic"
start = "1s"
{output}
"#
    );
    let sc = Scenario::from_toml(&text, "flent.toml").unwrap();
    Simulation::new(&sc, 7).run()
}

fn nums(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

#[test]
fn series_are_the_runs_figures_in_flents_units() {
    let r = run(Some("100ms"));
    let j = flent::to_json(&r).expect("a run with throughput bins");
    assert_eq!(j["version"], 4);
    assert_eq!(j["metadata"]["NAME"], "tcp_nup");
    assert_eq!(j["metadata"]["TEST_PARAMETERS"]["upload_streams"], 2);
    assert_eq!(
        j["metadata"]["AQMLAB_STREAMS"]["TCP upload::2"]["cc"],
        "cubic"
    );
    let x = nums(&j["x_values"]);
    // Whole bins of 5 s, each stamped at its end.
    assert_eq!(x.len(), 50);
    assert_eq!(x[0], 0.1);
    assert_eq!(x[49], 5.0);
    let res = &j["results"];
    let a = nums(&res["TCP upload::1"]);
    let b = nums(&res["TCP upload::2"]);
    let sum = nums(&res["TCP upload sum"]);
    let fair = nums(&res["TCP upload fairness"]);
    // One packet of 1500 B per 100 ms bin above the link rate at most.
    let cap = 10.0 + 1500.0 * 8.0 / 0.1 / 1e6;
    for i in 0..x.len() {
        assert!((a[i] + b[i] - sum[i]).abs() < 1e-9);
        assert!(sum[i] <= cap + 1e-9, "bin {i}: {} Mbit/s", sum[i]);
        assert!((0.5 - 1e-12..=1.0 + 1e-12).contains(&fair[i]));
    }
    // Flow 2 starts at 1 s: nothing before it, and the bins agree with
    // throughput.csv's series (bytes per bin, in Mbit/s).
    assert!(b[..10].iter().all(|v| *v == 0.0));
    let t0 = &r.throughput[0];
    assert_eq!(a.len(), x.len());
    for (v, bytes) in a.iter().zip(&t0.bytes) {
        assert!((v - *bytes as f64 * 8.0 / 0.1 / 1e6).abs() < 1e-9);
    }
    // The sum's mean is the payload the bottleneck carried: at most its
    // wire rate (headers included), at least 90 % of it.
    let mean = sum.iter().sum::<f64>() / sum.len() as f64;
    let link = r.links.iter().find(|l| l.link == "r1->r2").unwrap();
    let wire = link.tx_bytes as f64 * 8.0 / 5.0 / 1e6;
    assert!(
        mean <= wire && mean >= 0.9 * wire,
        "mean {mean} Mbit/s, link {wire} Mbit/s"
    );
    // The bottleneck's queue delay, in ms, from its sample at or before
    // each x; under the 50-packet buffer (60 ms at 10 Mbit/s).
    let qd = nums(&res["Queue delay (ms)::r1->r2"]);
    assert_eq!(qd.len(), x.len());
    assert!(qd.iter().all(|d| (0.0..=61.0).contains(d)));
    assert!(qd.iter().any(|d| *d > 1.0), "the queue built up");
    // Raw records of the traced flow: cwnd and RTT (ms, at least the 44 ms
    // base RTT), in time order.
    let raw = j["raw_values"]["TCP upload::1"].as_array().unwrap();
    let ts: Vec<f64> = raw.iter().map(|r| r["t"].as_f64().unwrap()).collect();
    assert!(ts.windows(2).all(|w| w[0] <= w[1]));
    let rtts: Vec<f64> = raw.iter().filter_map(|r| r["tcp_rtt"].as_f64()).collect();
    assert!(!rtts.is_empty());
    assert!(rtts.iter().all(|v| *v >= 44.0), "{:?}", &rtts[..3]);
    assert!(raw.iter().any(|r| r["tcp_cwnd"].as_f64().is_some()));
    assert!(j["raw_values"]["TCP upload::2"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r.get("tcp_cwnd").is_none()));
}

#[test]
fn the_file_is_gzipped_json_and_deterministic() {
    let a = flent::encode(&run(Some("250ms"))).unwrap().unwrap();
    let b = flent::encode(&run(Some("250ms"))).unwrap().unwrap();
    assert_eq!(a, b, "same scenario and seed, same bytes");
    let mut text = String::new();
    flate2::read::GzDecoder::new(a.as_slice())
        .read_to_string(&mut text)
        .unwrap();
    let j = flent::to_json(&run(Some("250ms"))).unwrap();
    assert_eq!(text, format!("{}\n", serde_json::to_string(&j).unwrap()));
    assert_eq!(nums(&j["x_values"]).len(), 20);
}

#[test]
fn a_run_without_throughput_bins_has_no_flent_file() {
    assert!(flent::to_json(&run(None)).is_none());
    assert!(flent::encode(&run(None)).is_none());
}
