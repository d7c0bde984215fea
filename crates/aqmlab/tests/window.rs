//! Measurement windows (`[output] warmup`, `Simulation::run_until` and
//! `Simulation::measured_since`): a snapshot is the result of a run that
//! long and changes nothing; the window's counters are differences, its
//! rates and means are over the window; per-flow times count only flows
//! that started inside it.

use aqmlab::engine::secs;
use aqmlab::metrics::RunResult;
use aqmlab::{Scenario, Simulation};

/// One bottleneck of 10 Mbit/s (20 ms, DropTail 100 packets): two bulk
/// flows from t = 0, one sized flow (200 kB) at 0.5 s and one at 3 s,
/// run for `dur`; `extra` is appended (e.g. an `[output]` table).
fn dumbbell(dur: &str, extra: &str) -> Scenario {
    let text = format!(
        r#"name = "w"
duration = "{dur}"
[nodes]
hosts = ["s", "d"]
routers = ["r"]
[[links]]
a = "s"
b = "r"
rate = "1Gbps"
delay = "1ms"
[[links]]
name = "bottleneck"
a = "r"
b = "d"
rate = "10Mbps"
delay = "20ms"
queue_ab = {{ kind = "droptail", limit = 100 }}
[[flows]]
group = "bulk"
src = "s"
dst = "d"
count = 2
[[flows]]
group = "early"
src = "s"
dst = "d"
start = "500ms"
size = "200KB"
[[flows]]
group = "late"
src = "s"
dst = "d"
start = "3s"
size = "200KB"
{extra}"#
    );
    Scenario::from_toml(&text, "w.toml").unwrap()
}

/// Everything but the wall clock, as `{:?}` prints it (shortest
/// round-trip floats: equal strings are equal bits).
fn fingerprint(r: &RunResult) -> String {
    let mut r = r.clone();
    r.wall_seconds = 0.0;
    r.timings = Default::default();
    r.parallel = None;
    format!("{r:?}")
}

#[test]
fn a_snapshot_is_the_result_of_a_run_that_long_and_changes_nothing() {
    let sc = dumbbell("5s", "");
    let mut sim = Simulation::new(&sc, 1);
    let snap = sim.run_until(secs(2.0));
    assert_eq!(snap.at, secs(2.0));
    let mut short = Simulation::new(&sc, 1);
    short.set_duration(secs(2.0));
    assert_eq!(fingerprint(&snap.result), fingerprint(&short.run()));
    // running on gives the plain run's results, byte for byte
    let whole = sim.run();
    let plain = Simulation::new(&sc, 1).run();
    assert_eq!(fingerprint(&whole), fingerprint(&plain));
    assert_eq!(whole.warmup_s, None);
}

#[test]
fn window_counters_are_differences_and_rates_are_over_the_window() {
    let sc = dumbbell("5s", "");
    let mut sim = Simulation::new(&sc, 1);
    let snap = sim.run_until(secs(2.0));
    let b = sim.run();
    let w = sim.measured_since(&snap);
    let a = &snap.result;
    assert_eq!(w.warmup_s, Some(2.0));
    assert_eq!(w.sim_seconds, 5.0);
    assert!(w.conservation.holds());
    assert_eq!(w.flows.len(), 4);
    for i in 0..4 {
        let (fa, fb, fw) = (&a.flows[i], &b.flows[i], &w.flows[i]);
        assert_eq!(fw.bytes_acked, fb.bytes_acked - fa.bytes_acked);
        assert_eq!(fw.segments_sent, fb.segments_sent - fa.segments_sent);
        assert_eq!(fw.drops, fb.drops - fa.drops);
        assert_eq!(fw.final_cwnd, fb.final_cwnd, "end values stay");
    }
    // bulk flows: goodput over the 3 s window, from the bytes received in
    // it; the bytes acknowledged in it differ by at most what was in
    // flight at either end (the 100-packet buffer and the path's BDP,
    // 10 Mbit/s × 42 ms ≈ 53 kB: under 200 kB)
    for f in &w.flows[..2] {
        assert!(f.bytes_acked > 0);
        let got = f.goodput_bps * (5.0 - 2.0) / 8.0;
        assert!((got - f.bytes_acked as f64).abs() < 200e3, "{f:?}");
        assert_eq!(f.completion_s, None);
    }
    // (a sum of per-flow rates over different spans is no link rate: the
    // two measured over the whole window share the link)
    let total: f64 = w.flows[..2].iter().map(|f| f.goodput_bps).sum();
    assert!(total <= 10e6, "{total}");
    // a sized flow started before the window: no completion time in it,
    // even though it finished (it did, in the whole run)
    let early = &w.flows[2];
    assert!(b.flows[2].completion_s.is_some(), "{:?}", b.flows[2]);
    assert_eq!(early.completion_s, None);
    // one started inside it: its own completion time, as in the whole run
    let late = &w.flows[3];
    assert!(late.completion_s.is_some(), "{late:?}");
    assert_eq!(late.completion_s, b.flows[3].completion_s);
    assert_eq!(late.bytes_acked, b.flows[3].bytes_acked);
    assert_eq!(late.goodput_bps, b.flows[3].goodput_bps);
    // the bottleneck: counters, and the busy fraction over the window
    let (qa, qb, qw) = (
        a.queue("r->d").unwrap(),
        b.queue("r->d").unwrap(),
        w.queue("r->d").unwrap(),
    );
    assert_eq!(qw.arrivals, qb.arrivals - qa.arrivals);
    assert_eq!(qw.dequeued, qb.dequeued - qa.dequeued);
    assert_eq!(qw.dropped, qb.dropped - qa.dropped);
    let sum = |q: &aqmlab::metrics::QueueResult| q.mean_delay_s * q.dequeued as f64;
    let mean = (sum(qb) - sum(qa)) / qw.dequeued as f64;
    assert!((qw.mean_delay_s - mean).abs() <= 1e-12 * mean, "{qw:?}");
    assert!(qw.p50_delay_s <= qw.p99_delay_s && qw.p99_delay_s <= qw.max_delay_s);
    assert!(qw.max_delay_s <= qb.max_delay_s);
    let (la, lb, lw) = (
        a.link("r->d").unwrap(),
        b.link("r->d").unwrap(),
        w.link("r->d").unwrap(),
    );
    assert_eq!(lw.tx_packets, lb.tx_packets - la.tx_packets);
    // two bulk flows keep a 100-packet buffer busy after slow start: the
    // window's busy fraction is ≈ 1, the whole run's lower (start-up)
    assert!(lw.utilization > 0.99, "{}", lw.utilization);
    assert!(lw.utilization > lb.utilization, "{lw:?} {lb:?}");
    // and it is what the bytes sent in the window say, within a packet
    let from_bytes = lw.tx_bytes as f64 * 8.0 / 10e6 / 3.0;
    assert!((lw.utilization - from_bytes).abs() < 1.5 * 1040.0 * 8.0 / 10e6 / 3.0);
    // fairness over the window's goodputs
    let bulk: Vec<f64> = w.flows[..2].iter().map(|f| f.goodput_bps).collect();
    assert_eq!(w.fairness["bulk"], aqmlab::metrics::jain(&bulk));
}

#[test]
fn the_warmup_key_is_run_until_and_measured_since() {
    let keyed = dumbbell("5s", "[output]\nwarmup = \"2s\"\n");
    let r = Simulation::new(&keyed, 1).run();
    assert_eq!(r.warmup_s, Some(2.0));
    let sc = dumbbell("5s", "");
    let mut sim = Simulation::new(&sc, 1);
    let snap = sim.run_until(secs(2.0));
    sim.run();
    let w = sim.measured_since(&snap);
    assert_eq!(fingerprint(&r), fingerprint(&w));
    // the time series still cover the whole run
    let plain = Simulation::new(&sc, 1).run();
    assert_eq!(format!("{:?}", r.series), format!("{:?}", plain.series));
    assert_eq!(r.events, plain.events);
}

#[test]
fn flow_delay_maxima_restart_at_each_snapshot() {
    let sc = dumbbell("5s", "");
    let mut sim = Simulation::new(&sc, 1);
    let first = sim.run_until(secs(1.0));
    let second = sim.run_until(secs(2.0));
    let whole = sim.run();
    let since_second = sim.measured_since(&second);
    let since_first = sim.measured_since(&first);
    let plain = Simulation::new(&sc, 1).run();
    assert_eq!(fingerprint(&whole), fingerprint(&plain));
    for (w, b) in since_second.flows.iter().zip(&whole.flows) {
        let (x, y) = (w.max_owd_s.unwrap(), b.max_owd_s.unwrap());
        assert!(x <= y && x > 0.0, "{x} {y}");
        let m = w.mean_owd_s.unwrap();
        assert!(m > 0.0 && m <= x, "{m} {x}");
    }
    // the maxima since an older snapshot are not known
    assert!(since_first.flows.iter().all(|f| f.max_owd_s.is_none()));
    assert!(since_first.flows[0].mean_owd_s.is_some());
    // counters since the first snapshot
    assert_eq!(
        since_first.flows[0].bytes_acked,
        whole.flows[0].bytes_acked - first.result.flows[0].bytes_acked
    );
}

#[test]
fn a_warmup_not_shorter_than_the_run_is_refused() {
    for (w, needle) in [
        ("\"5s\"", "5 s is not shorter than `duration` (5 s)"),
        ("\"6s\"", "6 s is not shorter than `duration` (5 s)"),
        ("\"-1s\"", "negative"),
        ("5", "a unit is required"),
    ] {
        let text = format!(
            "name = \"w\"\nduration = \"5s\"\n[output]\nwarmup = {w}\n[nodes]\nhosts = [\"a\", \"b\"]\n[[links]]\na = \"a\"\nb = \"b\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[[flows]]\ngroup = \"g\"\nsrc = \"a\"\ndst = \"b\"\n"
        );
        let e = Scenario::from_toml(&text, "w.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("output.warmup"), "{w}: {e}");
        assert!(e.contains(needle), "{w}: {e}");
    }
    // zero is allowed: the whole run
    let sc = dumbbell("2s", "[output]\nwarmup = \"0s\"\n");
    let r = Simulation::new(&sc, 1).run();
    let plain = Simulation::new(&dumbbell("2s", ""), 1).run();
    assert_eq!(fingerprint(&r), fingerprint(&plain));
}

/// A workload's summary over the window counts the requests opened in it;
/// the request log stays whole.
#[test]
fn workload_summaries_count_the_requests_opened_in_the_window() {
    let f =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/fat-tree-k8.toml");
    let sc = Scenario::from_file(f).unwrap();
    let mut sim = Simulation::new(&sc, 1);
    sim.set_duration(secs(0.05));
    let snap = sim.run_until(secs(0.02));
    let whole = sim.run();
    let w = sim.measured_since(&snap);
    assert_eq!(w.requests.len(), whole.requests.len());
    for (ws, bs) in w.workloads.iter().zip(&whole.workloads) {
        let inside: Vec<_> = (w.requests.iter())
            .filter(|q| q.workload == ws.name && q.open_s >= 0.02)
            .collect();
        assert!(!inside.is_empty() && inside.len() < bs.connections as usize);
        assert_eq!(ws.connections as usize, inside.len());
        let done = inside.iter().filter(|q| q.total_s.is_some()).count();
        assert_eq!(ws.completed as usize, done);
        let rts: Vec<f64> = inside.iter().filter_map(|q| q.response_time_s).collect();
        let mean = rts.iter().sum::<f64>() / rts.len() as f64;
        assert_eq!(ws.mean_response_time_s, Some(mean));
    }
}

/// One 60 kB transfer over 10 Mbit/s, measured from a window that opens
/// `before` its completion: its goodput may not exceed the link (issue 35:
/// 16.8 Mbit/s from two ACKs in the window's first 0.95 ms, divided by
/// that sliver), and the link idle after it has utilisation exactly 0.
#[test]
fn a_window_opening_at_a_transfers_end_reports_no_impossible_rate() {
    let text = |warmup: &str| {
        format!(
            r#"name = "sliver"
duration = "1s"
[nodes]
hosts = ["s", "d"]
routers = ["r"]
[[links]]
a = "s"
b = "r"
rate = "1Gbps"
delay = "1ms"
[[links]]
a = "r"
b = "d"
rate = "10Mbps"
delay = "20ms"
[[flows]]
group = "x"
src = "s"
dst = "d"
size = "60KB"
{warmup}"#
        )
    };
    let whole = Simulation::new(&Scenario::from_toml(&text(""), "s.toml").unwrap(), 1).run();
    let done = whole.flows[0].completion_s.expect("the transfer completes");
    for before in [0.000_5, 0.000_95, 0.005, 0.02] {
        let w = format!(
            "[output]\nwarmup = \"{}ns\"\n",
            ((done - before) * 1e9) as u64
        );
        let r = Simulation::new(&Scenario::from_toml(&text(&w), "s.toml").unwrap(), 1).run();
        let f = &r.flows[0];
        assert!(f.goodput_bps <= 10e6, "{before}: {f:?}");
        assert!(r.conservation.holds());
    }
    // after the transfer (and its last ACK): nothing is sent, utilisation
    // is exactly 0, not a floating-point residue
    let w = format!("[output]\nwarmup = \"{}ns\"\n", ((done + 0.1) * 1e9) as u64);
    let r = Simulation::new(&Scenario::from_toml(&text(&w), "s.toml").unwrap(), 1).run();
    for l in &r.links {
        assert_eq!(l.tx_packets, 0, "{l:?}");
        assert_eq!(l.utilization, 0.0, "{l:?}");
    }
    assert_eq!(r.flows[0].goodput_bps, 0.0);
}
