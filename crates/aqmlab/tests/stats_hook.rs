//! Disciplines, classifiers and congestion controls report named statistics
//! through their traits (`QueueDisc::stats`, `Classifier::stats`,
//! `CongestionControl::stats`); they reach `RunResult` and `summary.json`
//! and agree with the counters every port keeps.

use aqmlab::{Scenario, Simulation};

const RIO: &str = include_str!("../../../scenarios/papers/rio-ps/goodput.toml");
const MARKMAX: &str = include_str!("../../../scenarios/papers/markmax/scheme1.toml");
const INCAST: &str = include_str!("../../../scenarios/incast.toml");

fn run(text: &str, file: &str, set: &[&str]) -> aqmlab::RunResult {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let sc = Scenario::from_toml_with(text, file, &set).unwrap();
    Simulation::new(&sc, 1).run()
}

#[test]
fn rio_reports_per_class_signals_and_its_classifier_tags() {
    let r = run(RIO, "goodput.toml", &["duration=\"5s\""]);
    let q = r
        .queues
        .iter()
        .find(|q| q.kind == "rio")
        .expect("a RIO queue");
    let s = &q.stats;
    let sum = |k: &str| s[&format!("short.{k}")] + s[&format!("long.{k}")];
    assert_eq!(sum("arrivals"), q.arrivals as f64, "{s:?}");
    assert_eq!(sum("marked"), q.marked as f64, "{s:?}");
    assert_eq!(
        sum("early") + sum("forced") + sum("overflow"),
        q.dropped as f64,
        "{s:?}"
    );
    assert!(s["short.arrivals"] > 0.0, "{s:?}");
    assert!(s["classifier.tagged_in"] > 0.0, "{s:?}");
    let json = serde_json::to_value(&r).unwrap();
    let rio = json["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["kind"] == "rio")
        .unwrap();
    assert_eq!(rio["stats"]["short.arrivals"], s["short.arrivals"]);
    // a discipline without statistics writes no `stats` key
    let other = json["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["kind"] == "droptail")
        .expect("a DropTail queue");
    assert!(other.get("stats").is_none(), "{other}");
}

#[test]
fn markmax_reports_its_signals() {
    let r = run(MARKMAX, "scheme1.toml", &["duration=\"5s\""]);
    let q = r
        .queues
        .iter()
        .find(|q| q.kind == "markmax")
        .expect("a MarkMax queue");
    let s = &q.stats;
    assert!(s["signals"] > 0.0, "{s:?}");
    assert_eq!(s["signals"], s["marks"] + s["drops"], "{s:?}");
    assert_eq!(s["marks"], q.marked as f64, "{s:?}");
}

#[test]
fn dctcp_reports_alpha_per_flow_and_other_ccs_nothing() {
    let r = run(
        INCAST,
        "incast.toml",
        &[
            "duration=\"200ms\"",
            "workloads.read.cc=\"dctcp\"",
            "workloads.read.tcp.ecn=true",
            "topology.queue={ kind = \"step\", limit = 64, k = 20 }",
        ],
    );
    assert!(!r.cc_stats.is_empty());
    for f in &r.cc_stats {
        let a = f.stats["alpha"];
        assert!((0.0..=1.0).contains(&a), "flow {}: α = {a}", f.flow);
    }
    let r = run(INCAST, "incast.toml", &["duration=\"200ms\""]);
    assert!(r.cc_stats.is_empty(), "newreno reports no statistics");
    let json = serde_json::to_value(&r).unwrap();
    assert!(json.get("cc_stats").is_none());
}
