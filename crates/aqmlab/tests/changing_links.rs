//! Links that change during a run (`net/link_model.rs`): Mahimahi traces,
//! `[[events]]` that change a link's rate, delay or loss, and what holds
//! under them (conservation, the physical invariants, determinism, the
//! same results whatever `--threads`).

use aqmlab::metrics::{invariants, RunResult};
use aqmlab::{Scenario, Simulation};
use std::path::PathBuf;

fn run(sc: &Scenario) -> RunResult {
    let r = Simulation::new(sc, sc.seed).run();
    assert!(r.conservation.holds(), "{:?}", r.conservation);
    invariants::check(sc, sc.seed, &r).unwrap();
    r
}

/// Everything a run reports but the wall-clock figures.
fn fingerprint(r: &RunResult) -> String {
    let mut r = r.clone();
    r.wall_seconds = 0.0;
    r.timings = Default::default();
    r.parallel = None;
    format!("{r:?}")
}

fn trace_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("aqmlab-changing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// One bulk New Reno flow over `s - r - d`; the `r - d` link's rate,
/// delay or trace are `bottleneck`, its queue DropTail of 1000 packets;
/// `extra` is appended.
fn path(bottleneck: &str, dur: &str, extra: &str) -> Scenario {
    let text = format!(
        r#"name = "c"
duration = "{dur}"
[nodes]
hosts = ["s", "d"]
routers = ["r"]
[tcp]
mss = 1460
max_window = 10000
[[links]]
a = "s"
b = "r"
rate = "1Gbps"
delay = "1ms"
queue = {{ kind = "droptail", limit = 10000 }}
[[links]]
name = "bottleneck"
a = "r"
b = "d"
queue = {{ kind = "droptail", limit = 1000 }}
{bottleneck}
[[flows]]
group = "bulk"
src = "s"
dst = "d"
cc = "newreno"
{extra}
"#
    );
    Scenario::from_toml(&text, "t.toml").unwrap()
}

fn link<'a>(r: &'a RunResult, name: &str) -> &'a aqmlab::metrics::LinkResult {
    r.links.iter().find(|l| l.link == name).unwrap()
}

/// A trace of k opportunities each millisecond (k lines of `1`: period
/// 1 ms) offers k·1504 B/ms, a constant k·12.032 Mbit/s. A saturating
/// flow moves as many bytes over it as over a constant link of that rate,
/// within the trace's granularity: the two differ by when in each
/// millisecond bytes leave (the trace sends a millisecond's bytes at its
/// end), which shifts the flow's clock by at most 1 ms over the run and
/// its window by one ms's bytes; over 10 s that is at most 0.1 % of the
/// bytes, plus the slow-start difference of the first RTTs (the flow's
/// RTT is 22 ms plus queueing on both): asserted within 1 %. The trace
/// link never sends more than its opportunities offer, and its
/// utilisation, against the capacity the trace offered, is within 2 % of
/// the constant link's.
#[test]
fn a_trace_of_k_lines_a_millisecond_moves_what_a_constant_link_does() {
    for k in [1u64, 4] {
        let text: String = (0..k).map(|_| "1\n").collect();
        let f = trace_file(&format!("k{k}.trace"), &text);
        let rate = k * 1504 * 8 * 1000;
        let tr = run(&path(
            &format!("delay = \"10ms\"\ntrace = {:?}", f.display().to_string()),
            "10s",
            "",
        ));
        let cst = run(&path(
            &format!("delay = \"10ms\"\nrate = \"{rate}bps\""),
            "10s",
            "",
        ));
        let (a, b) = (link(&tr, "r->d"), link(&cst, "r->d"));
        let offered = 10 * 1000 * k * 1504;
        assert!(a.tx_bytes <= offered, "k={k}: {} > {offered}", a.tx_bytes);
        let diff = (a.tx_bytes as f64 - b.tx_bytes as f64).abs() / b.tx_bytes as f64;
        assert!(
            diff < 0.01,
            "k={k}: trace {} B, constant {} B",
            a.tx_bytes,
            b.tx_bytes
        );
        let (g1, g2) = (tr.flows[0].goodput_bps, cst.flows[0].goodput_bps);
        assert!((g1 - g2).abs() / g2 < 0.01, "k={k}: goodput {g1} vs {g2}");
        assert!(
            (a.utilization - b.utilization).abs() < 0.02 && a.utilization > 0.9,
            "k={k}: utilisation {} vs {}",
            a.utilization,
            b.utilization
        );
        assert_eq!(a.rate_bps, rate, "a trace link reports its mean rate");
    }
}

/// The rate-step scenario with the bottleneck queue `queue`: the
/// queueing delay samples (time, delay) of `r1->r2`.
fn step_delays(queue: &str) -> Vec<(f64, f64)> {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/changing/rate-step.toml"
    );
    let text = std::fs::read_to_string(file).unwrap();
    let set = format!("links.bottleneck.queue_ab={queue}");
    let sc = Scenario::from_toml_with(&text, file, &[set]).unwrap();
    let r = run(&sc);
    let s = r.series.iter().find(|s| s.link == "r1->r2").unwrap();
    s.samples.iter().map(|x| (x.time_s, x.delay_s)).collect()
}

/// Seconds from the step (10 s) until the queueing delay, having risen
/// above `level` after the step, is first back below it.
fn recovery(d: &[(f64, f64)], level: f64) -> f64 {
    let after: Vec<_> = d.iter().filter(|x| x.0 > 10.0).collect();
    let up = after
        .iter()
        .position(|x| x.1 > level)
        .expect("the step builds a queue");
    let down = after[up..]
        .iter()
        .find(|x| x.1 < level)
        .expect("the delay returns");
    down.0 - 10.0
}

/// Step 100 → 10 Mbit/s at 10 s under 4 New Reno flows (40 ms base RTT).
///
/// Before the step the flows' windows sum to about the 100 Mbit/s BDP,
/// 100e6 · 0.040 / (1500 · 8) ≈ 333 packets; at 10 Mbit/s the BDP is 33,
/// so about 300 packets (360 ms at 10 Mbit/s) become a standing queue and
/// each flow's window (≈ 83) must halve h = ⌈log2(333 / 37)⌉ = 4 times
/// (37: the new BDP plus a target's worth of queue). A New Reno flow
/// halves at most once per RTT, which is at most 40 ms + the standing
/// queue, bounded here by 0.5 s (the 360 ms excess plus what the flows
/// add by additive increase while the discipline detects the queue):
/// RTT_max = 0.54 s.
///
/// - CoDel (target 5 ms, interval 100 ms): it starts dropping after one
///   interval above target and then drops every interval/√n, faster than
///   once per RTT_max, so each flow halves about once per RTT:
///   recovery ≤ 1 interval + h · RTT_max = 0.1 + 2.16 s ≈ 23 intervals.
/// - PIE (target 15 ms, t_update 15 ms, α = 0.125, β = 1.25): with the
///   delay at 0.1–0.4 s, α·(d − target) + β·(d − d_old) ≥ 0.01 per update;
///   scaled ÷32 … ÷2 while drop_prob < 0.1, that reaches 0.1 in at most 12
///   updates (180 ms), after which every flow sees a drop within an RTT:
///   recovery ≤ 12 updates + h · RTT_max = 0.18 + 2.16 s = 156 updates.
///
/// Both bounds are checked for the first return below 2 × target;
/// DropTail, which has no control law, is still above 100 ms 2.34 s after
/// the step.
#[test]
fn codel_and_pie_bring_the_delay_back_after_a_rate_step_within_their_bounds() {
    let codel = step_delays(r#"{kind="codel",limit=2000}"#);
    let t = recovery(&codel, 0.010);
    assert!(t <= 23.0 * 0.100, "CoDel: {t} s");
    let pie = step_delays(r#"{kind="pie",limit=2000}"#);
    let t = recovery(&pie, 0.030);
    assert!(t <= 156.0 * 0.015, "PIE: {t} s");
    let dt = step_delays(r#"{kind="droptail",limit=2000}"#);
    let late = dt.iter().find(|x| x.0 >= 12.34).unwrap();
    assert!(late.1 > 0.1, "DropTail at {} s: {} s", late.0, late.1);
}

/// Events change a link's rate, delay and loss; the run conserves
/// packets, meets the invariants (against the schedule's peak rate), is
/// the same run after run and with 1 or 4 threads (such runs stay
/// sequential and say why).
#[test]
fn events_keep_conservation_determinism_and_thread_identity() {
    let ev = r#"
[[events]]
at = "1s"
link = "bottleneck"
rate = "2Mbps"
delay = "40ms"
[[events]]
at = "2s"
link = "bottleneck"
loss_ab = 0.01
delay = "2ms"
[[events]]
at = "3s"
link = "bottleneck"
rate = "50Mbps"
loss_ab = 0.0
"#;
    let sc = path("rate = \"10Mbps\"\ndelay = \"10ms\"", "4s", ev);
    let a = run(&sc);
    assert_eq!(fingerprint(&a), fingerprint(&run(&sc)));
    let mut sim = Simulation::with_threads(&sc, sc.seed, 4);
    assert_eq!(sim.processes(), 1);
    assert!(sim.parallel_note().unwrap().contains("links change"));
    assert_eq!(fingerprint(&sim.run()), fingerprint(&a));
    let l = link(&a, "r->d");
    assert!(l.lost > 0, "the 1 % loss from 2 s to 3 s loses packets");
    // offered: 1 s at 10, 2 s at 2, 1 s at 50 Mbit/s... in bytes
    let offered = (10e6 + 2e6 + 2e6 + 50e6) / 8.0;
    assert!(l.tx_bytes as f64 <= offered);
    assert!((l.utilization - l.tx_bytes as f64 / offered).abs() < 0.01);
}

/// A shorter delay does not let a packet overtake the one ahead of it: a
/// 100 ms → 1 ms drop mid-flow keeps the receiver's data in order (no
/// duplicate ACKs, so no retransmission on a lossless path).
#[test]
fn a_shrinking_delay_does_not_reorder() {
    let ev = "[[events]]\nat = \"1s\"\nlink = \"bottleneck\"\ndelay = \"1ms\"\n";
    let sc = path("rate = \"10Mbps\"\ndelay = \"100ms\"", "2s", ev);
    let r = run(&sc);
    assert_eq!(r.flows[0].retransmits, 0, "{:?}", r.flows[0]);
}

/// Bad events and traces: one line naming the key.
#[test]
fn bad_events_and_traces_name_the_key() {
    let err = |extra: &str, bn: &str| -> String {
        let text = format!(
            "name = \"e\"\nduration = \"5s\"\n[nodes]\nhosts = [\"s\", \"d\"]\n[[links]]\na = \"s\"\nb = \"d\"\ndelay = \"1ms\"\n{bn}\n[[flows]]\ngroup = \"g\"\nsrc = \"s\"\ndst = \"d\"\n{extra}"
        );
        Scenario::from_toml(&text, "t.toml")
            .unwrap_err()
            .to_string()
    };
    let r = "rate = \"1Mbps\"";
    let e = err(
        "[[events]]\nat = \"1s\"\nlink = \"nope\"\nrate = \"1Mbps\"",
        r,
    );
    assert!(e.contains("`events[0].link`") && e.contains("s-d"), "{e}");
    let e = err(
        "[[events]]\nat = \"5s\"\nlink = \"s-d\"\nrate = \"1Mbps\"",
        r,
    );
    assert!(
        e.contains("`events[0].at`") && e.contains("before duration"),
        "{e}"
    );
    let e = err("[[events]]\nat = \"1s\"\nlink = \"s-d\"\nmtu = 3", r);
    assert!(e.contains("events[0]") && e.contains("mtu"), "{e}");
    let e = err("[[events]]\nat = \"1s\"\nlink = \"s-d\"", r);
    assert!(
        e.contains("`events[0]`") && e.contains("changes something"),
        "{e}"
    );
    let e = err("[[events]]\nat = \"1s\"\nlink = \"s-d\"\nloss_ab = 1.5", r);
    assert!(e.contains("`events[0].loss_ab`"), "{e}");
    let f = trace_file("ok.trace", "1\n2\n");
    let bn = format!("{r}\ntrace = {:?}", f.display().to_string());
    let e = err(
        "[[events]]\nat = \"1s\"\nlink = \"s-d\"\nrate = \"1Mbps\"",
        &bn,
    );
    assert!(e.contains("`events[0].rate`") && e.contains("trace"), "{e}");
    let e = err("", &format!("{r}\ntrace = \"/no/such.trace\""));
    assert!(
        e.contains("`links[0].trace`") && e.contains("/no/such.trace"),
        "{e}"
    );
    let e = err("", &format!("{r}\ntrace_ba = \"/dev/zero\""));
    assert!(
        e.contains("`links[0].trace_ba`") && e.contains("not a regular file"),
        "{e}"
    );
    let bad = trace_file("bad.trace", "3\n1\n");
    let e = err("", &format!("{r}\ntrace = {:?}", bad.display().to_string()));
    assert!(
        e.contains("`links[0].trace`") && e.contains("line 2"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    // a blank line: Mahimahi refuses it; the error names file and line
    let blank = trace_file("blank.trace", "1\n\n2\n");
    let e = err(
        "",
        &format!("{r}\ntrace = {:?}", blank.display().to_string()),
    );
    assert!(
        e.contains("`links[0].trace`")
            && e.contains("blank.trace")
            && e.contains("line 2: empty line"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    let e = err("", &format!("{r}\ntrace_once = true"));
    assert!(
        e.contains("`links[0].trace_once`") && e.contains("trace"),
        "{e}"
    );
}

/// On a traced link a packet's delay (the port's, in `queues.csv` and
/// `summary.json`) runs from its arrival at the queue to the opportunity
/// that carries it out (Mahimahi's `departure − arrival`), even when the
/// link was idle and the packet waited for the next opportunity. With a
/// trace of one line, `10` (an opportunity every 10 ms), each packet's
/// delay exceeds its time in the queue (the event log's sojourn, to the
/// dequeue) by its wait for the opportunity, more than 0 and at most
/// 10 ms. With `trace_once` the link carries nothing after its last line
/// (one opportunity here).
#[test]
fn traced_delays_include_the_wait_for_the_opportunity() {
    use aqmlab::net::event_log::LogEvent;
    let f = trace_file("every10.trace", "10\n");
    let tr = format!("delay = \"10ms\"\ntrace = {:?}", f.display().to_string());
    let sc = path(&tr, "3s", "[output]\nlog = [\"bottleneck\"]");
    let r = run(&sc);
    let log = r.event_log.as_ref().unwrap();
    let q = r.queue("r->d").unwrap();
    let id = (log.records.iter())
        .find(|x| x.event == LogEvent::Dequeue && x.size > 100)
        .unwrap()
        .link;
    let deq: Vec<u64> = (log.records.iter())
        .filter(|x| x.event == LogEvent::Dequeue && x.link == id)
        .map(|x| x.sojourn)
        .collect();
    assert_eq!(deq.len() as u64, q.dequeued, "every dequeue logged");
    let in_queue = deq.iter().sum::<u64>() as f64 / deq.len() as f64 / 1e9;
    let wait = q.mean_delay_s - in_queue;
    assert!(
        wait > 0.0 && wait <= 0.010,
        "mean wait {wait} s ({} vs {in_queue})",
        q.mean_delay_s
    );
    assert!(deq.contains(&0), "some packets found the link idle");
    let once = path(&format!("{tr}\ntrace_once = true"), "3s", "");
    let ro = run(&once);
    let (a, b) = (link(&r, "r->d"), link(&ro, "r->d"));
    // a 10-ms trace played once: one opportunity, 1504 B
    assert!(b.tx_bytes <= 1504, "{b:?}");
    assert!(a.tx_bytes > 100 * 1504, "{a:?}");
}
