//! Validation of the modern AQMs through the simulator (issue 3): CoDel
//! (RFC 8289, both re-entry variants), FQ-CoDel (RFC 8290), sfqCoDel (ns-2
//! Pollere), PIE (RFC 8033) and Adaptive RED (Floyd, Gummadi, Shenker 2001).
//!
//! Topology: a dumbbell. Senders `s1`–`s3` reach router `r1` over 100 Mbit/s,
//! 2 ms links; the bottleneck `r1 → r2` is 10 Mbit/s, 20 ms, with the
//! discipline under test; `r2 → d` is 100 Mbit/s, 2 ms. Base RTT 48 ms plus
//! serialisation (a 1040-byte segment takes 0.832 ms on the bottleneck).
//!
//! Steady-state numbers are measured over a window `[t1, t2]` that excludes
//! the start-up transient: the same scenario and seed are run to `t1` and to
//! `t2` (a run is deterministic, so the first run is a prefix of the second),
//! and every cumulative counter (packets, exact sojourn sums, bytes
//! acknowledged, one-way-delay sums) is differenced.

use aqmlab::aqm::{AredConfig, DropCause, QdCtx, QueueDisc, Red};
use aqmlab::engine::RngStream;
use aqmlab::metrics::{jain, FlowResult, QueueResult, RunResult};
use aqmlab::net::packet::Packet;
use aqmlab::scenario::units::Dur;
use aqmlab::{Scenario, Simulation};

const BOTTLENECK: &str = "r1->r2";
const RATE: f64 = 10e6;
const MS: f64 = 1e-3;

/// The dumbbell with `queue` (an inline TOML table) on the bottleneck,
/// `flows` ([[flows]] entries) and extra `[tcp]` keys.
fn dumbbell(queue: &str, flows: &str, tcp: &str) -> String {
    format!(
        r#"
name = "validation-aqm"
duration = "1s"
[nodes]
hosts = ["s1", "s2", "s3", "d"]
routers = ["r1", "r2"]
[tcp]
{tcp}
[[links]]
a = "s1"
b = "r1"
rate = "100Mbps"
delay = "2ms"
[[links]]
a = "s2"
b = "r1"
rate = "100Mbps"
delay = "2ms"
[[links]]
a = "s3"
b = "r1"
rate = "100Mbps"
delay = "2ms"
[[links]]
a = "r1"
b = "r2"
rate = "10Mbps"
delay = "20ms"
queue_ab = {queue}
[[links]]
a = "r2"
b = "d"
rate = "100Mbps"
delay = "2ms"
{flows}
"#
    )
}

fn bulk(n: u32) -> String {
    format!(
        r#"
[[flows]]
group = "bulk"
src = "s1"
dst = "d"
count = {n}
start_spread = "1s"
"#
    )
}

fn cbr(group: &str, src: &str, rate: &str, size: u32) -> String {
    format!(
        r#"
[[flows]]
group = "{group}"
src = "{src}"
dst = "d"
cbr = {{ rate = "{rate}", packet_size = {size} }}
"#
    )
}

fn run_to(text: &str, seed: u64, secs: f64) -> RunResult {
    let mut sc = Scenario::from_toml(text, "validation_aqm.toml").expect("valid scenario");
    sc.duration = Dur((secs * 1e9).round() as u64);
    Simulation::new(&sc, seed).run()
}

/// Cumulative results at `t1` and `t2` of one scenario and seed.
struct Window {
    a: RunResult,
    b: RunResult,
    t1: f64,
    t2: f64,
}

impl Window {
    fn new(text: &str, seed: u64, t1: f64, t2: f64) -> Window {
        Window {
            a: run_to(text, seed, t1),
            b: run_to(text, seed, t2),
            t1,
            t2,
        }
    }
    fn span(&self) -> f64 {
        self.t2 - self.t1
    }
    fn queues(&self) -> (&QueueResult, &QueueResult) {
        (
            self.a.queue(BOTTLENECK).expect("bottleneck"),
            self.b.queue(BOTTLENECK).expect("bottleneck"),
        )
    }
    /// Exact mean sojourn (enqueue → start of transmission) of the packets
    /// dequeued at the bottleneck in the window, seconds; and their number.
    fn sojourn(&self) -> (f64, u64) {
        let (a, b) = self.queues();
        let sum = b.mean_delay_s * b.dequeued as f64 - a.mean_delay_s * a.dequeued as f64;
        let n = b.dequeued - a.dequeued;
        (sum / n as f64, n)
    }
    /// Bottleneck utilisation over the window.
    fn utilization(&self) -> f64 {
        let bytes = self.b.link(BOTTLENECK).unwrap().tx_bytes as f64
            - self.a.link(BOTTLENECK).unwrap().tx_bytes as f64;
        bytes * 8.0 / self.span() / RATE
    }
    /// Drops at the bottleneck in the window: (early, forced, overflow, aqm).
    fn drops(&self) -> (u64, u64, u64, u64) {
        let (a, b) = self.queues();
        (
            b.dropped_early - a.dropped_early,
            b.dropped_forced - a.dropped_forced,
            b.dropped_overflow - a.dropped_overflow,
            b.dropped_aqm - a.dropped_aqm,
        )
    }
    /// Packets that arrived at the bottleneck in the window (accepted or
    /// rejected on arrival; AQM drops at dequeue are of accepted packets).
    fn arrivals(&self) -> u64 {
        let (a, b) = self.queues();
        let arr =
            |q: &QueueResult| q.enqueued + q.dropped_early + q.dropped_forced + q.dropped_overflow;
        arr(b) - arr(a)
    }
    fn flows<'s>(
        &'s self,
        group: &'s str,
    ) -> impl Iterator<Item = (&'s FlowResult, &'s FlowResult)> {
        self.a.group(group).zip(self.b.group(group))
    }
    /// Goodput of each flow of `group` over the window, bit/s.
    fn goodputs(&self, group: &str) -> Vec<f64> {
        self.flows(group)
            .map(|(x, y)| (y.bytes_acked - x.bytes_acked) as f64 * 8.0 / self.span())
            .collect()
    }
    /// Mean one-way delay over the window of a CBR flow (every delivered
    /// packet is counted once in `segments_delivered`), and the count.
    fn cbr_owd(&self, group: &str) -> (f64, u64) {
        let (x, y) = self.flows(group).next().expect("group");
        let sum = |f: &FlowResult| f.mean_owd_s.unwrap_or(0.0) * f.segments_delivered as f64;
        let n = y.segments_delivered - x.segments_delivered;
        ((sum(y) - sum(x)) / n as f64, n)
    }
}

// ---------------------------------------------------------------------------
// CoDel against an unresponsive constant-rate overload
// ---------------------------------------------------------------------------

/// CBR of 1000-byte packets at 12 Mbit/s (1.2× the bottleneck): 1500 pkt/s
/// offered, 1250 pkt/s served, so the long-run drop rate must be the excess,
/// 250 pkt/s. A large `limit` makes every drop a CoDel drop.
fn codel_overload(variant: &str) -> String {
    dumbbell(
        &format!("{{ kind = \"codel\", variant = \"{variant}\", limit = 100000 }}"),
        &cbr("cbr", "s1", "12Mbps", 1000),
        "",
    )
}

const EXCESS_PPS: f64 = 250.0;

/// Mean, minimum and maximum of the sampled queue length (packets) in [t1, t2).
fn queue_len_stats(r: &RunResult, t1: f64, t2: f64) -> (f64, u32, u32) {
    let s = &r
        .series
        .iter()
        .find(|s| s.link == BOTTLENECK)
        .expect("bottleneck is monitored")
        .samples;
    let v: Vec<u32> = s
        .iter()
        .filter(|x| x.time_s >= t1 && x.time_s < t2)
        .map(|x| x.len_pkts)
        .collect();
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
    (mean, *v.iter().min().unwrap(), *v.iter().max().unwrap())
}

/// ns-2 Pollere re-entry (`count − 1`): the drop rate stays where it was, so
/// the queue is held close to target. It cannot sit *at* target: after each
/// exit from the dropping state (sojourn < target) CoDel waits a full
/// `interval` of above-target sojourns before dropping again, and meanwhile
/// the queue grows by (ρ − 1)·interval of sojourn (ρ = 1.2: 20 ms). So the
/// sojourn saw-tooths between ≈ target and ≈ target + (ρ − 1)·interval and
/// its mean must lie in [target, target + (ρ − 1)·interval] = [5, 25] ms
/// (measured 13.2 ms over 10–130 s; sampled queue 7–32 packets, i.e.
/// 5.6–25.6 ms).
#[test]
fn codel_ns2_cbr_overload_holds_sojourn_near_target() {
    let w = Window::new(&codel_overload("ns2"), 1, 10.0, 130.0);
    let (mean, n) = w.sojourn();
    let (early, forced, overflow, aqm) = w.drops();
    let rate = aqm as f64 / w.span();
    let (qmean, qmin, qmax) = queue_len_stats(&w.b, w.t1, w.t2);
    println!(
        "codel ns2 1.2x CBR: mean sojourn {:.2} ms over {n} pkts, drop rate {rate:.1}/s \
         (excess {EXCESS_PPS}), utilisation {:.4}, queue mean {qmean:.1} min {qmin} max {qmax} pkts",
        mean / MS,
        w.utilization()
    );
    assert_eq!((early, forced, overflow), (0, 0, 0), "only CoDel drops");
    let offered = w.arrivals() as f64 / w.span();
    assert!((offered - 1500.0).abs() < 0.1, "offered {offered} pkt/s");
    assert!(
        (rate - EXCESS_PPS).abs() <= 0.05 * EXCESS_PPS,
        "drop rate {rate}/s vs excess {EXCESS_PPS}/s"
    );
    assert!(
        (5.0 * MS..=25.0 * MS).contains(&mean),
        "mean sojourn {} ms outside [target, target + (ρ−1)·interval] = [5, 25] ms",
        mean / MS
    );
    assert!(w.utilization() > 0.999, "utilisation {}", w.utilization());
}

/// Linux re-entry (`count − lastcount`): against an unresponsive source the
/// drop rate restarts low on each re-entry, so the queue rises and drains in
/// multi-second cycles — CoDel's known behaviour with CBR (RFC 8289 targets
/// responsive traffic). What must hold: the long-run drop rate equals the
/// excess (within 5 %), the link stays busy, and the sojourn is bounded
/// (mean < 250 ms, the bound of the unit test; measured 146 ms at 1.2×,
/// sampled queue 7–358 packets). It is much larger than the ns-2 variant's
/// (asserted: more than 3×).
#[test]
fn codel_linux_cbr_overload_drops_the_excess_with_bounded_sojourn() {
    let w = Window::new(&codel_overload("linux"), 1, 10.0, 130.0);
    let (mean, n) = w.sojourn();
    let (early, forced, overflow, aqm) = w.drops();
    let rate = aqm as f64 / w.span();
    let (qmean, qmin, qmax) = queue_len_stats(&w.b, w.t1, w.t2);
    let ns2 = Window::new(&codel_overload("ns2"), 1, 10.0, 130.0)
        .sojourn()
        .0;
    println!(
        "codel linux 1.2x CBR: mean sojourn {:.2} ms over {n} pkts (ns2 {:.2} ms), drop rate \
         {rate:.1}/s, utilisation {:.4}, queue mean {qmean:.1} min {qmin} max {qmax} pkts",
        mean / MS,
        ns2 / MS,
        w.utilization()
    );
    assert_eq!((early, forced, overflow), (0, 0, 0), "only CoDel drops");
    let offered = w.arrivals() as f64 / w.span();
    assert!((offered - 1500.0).abs() < 0.1, "offered {offered} pkt/s");
    assert!(
        (rate - EXCESS_PPS).abs() <= 0.05 * EXCESS_PPS,
        "drop rate {rate}/s vs excess {EXCESS_PPS}/s"
    );
    assert!(mean < 0.250, "mean sojourn {} ms", mean / MS);
    assert!(
        mean > 3.0 * ns2,
        "linux re-entry oscillates: mean {} ms vs ns2 {} ms",
        mean / MS,
        ns2 / MS
    );
    assert!(w.utilization() > 0.999, "utilisation {}", w.utilization());
}

/// Drop spacing in the simulator: in the first dropping episode of the 1.2×
/// CBR overload, the queue keeps growing (the drop rate √count/interval stays
/// below the 250 pkt/s excess until count ≈ 625, i.e. for ≈ 5 s), so CoDel
/// never leaves the dropping state and drop k falls at the first dequeue at
/// or after `t_1 + S_k`, `S_k = Σ_{j<k} interval/√j` (count = 1 at entry for
/// both variants). Dequeues happen every 0.8 ms (1000 B at 10 Mbit/s), so the
/// number of drops by `t_1 + D` lies in [N(D − 0.8 ms), N(D)] with
/// N(x) = #{k : S_k ≤ x}. `t_1` (the first drop) is located by bisection on
/// the run length.
#[test]
fn codel_drop_spacing_follows_the_control_law_in_the_simulator() {
    const INTERVAL: f64 = 0.1;
    const SERVICE: f64 = 0.8e-3;
    let n_of = |x: f64| -> u64 {
        let (mut s, mut k) = (0.0f64, 1u64);
        let mut n = 0;
        while s <= x + 1e-6 {
            n = k;
            s += INTERVAL / (k as f64).sqrt();
            k += 1;
        }
        n
    };
    for variant in ["linux", "ns2"] {
        let text = codel_overload(variant);
        let drops_at = |t: f64| run_to(&text, 1, t).queue(BOTTLENECK).unwrap().dropped_aqm;
        // bisection for the first drop, to 1 µs
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        assert!(drops_at(hi) > 0);
        while hi - lo > 1e-6 {
            let mid = 0.5 * (lo + hi);
            if drops_at(mid) > 0 {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let t1 = hi;
        // The sojourn first reaches 5 ms after ~38 packets (each waits
        // 0.133 ms longer than the previous), plus one interval.
        assert!(
            (0.12..0.15).contains(&t1),
            "{variant}: first drop at {t1} s, expected ≈ 30 ms + interval"
        );
        for d in [0.05, 0.25, 0.5, 1.0, 2.0, 3.0] {
            let got = drops_at(t1 + d);
            let (lo_n, hi_n) = (n_of(d - SERVICE), n_of(d));
            println!("codel {variant}: first drop at {t1:.6} s; drops by +{d} s: {got} (control law: {lo_n}..={hi_n})");
            assert!(
                (lo_n..=hi_n).contains(&got),
                "{variant}: {got} drops {d} s after the first, control law gives {lo_n}..={hi_n}"
            );
        }
    }
}

/// Below capacity CoDel never drops: four CBR flows of different packet
/// sizes (1500, 1000, 576 and 200 B) at 2 Mbit/s each (0.8× the bottleneck),
/// and — separately — two window-limited New Reno flows plus a CBR (measured
/// utilisation 0.851). The transient queues from colliding arrivals and
/// window bursts (max sojourn measured 2.4 ms with CBR only, 9.0 ms with the
/// TCP bursts) never stay above target for an interval, so nothing is
/// dropped or marked.
#[test]
fn codel_drops_nothing_below_capacity() {
    let mut flows = String::new();
    for (i, size) in [1500, 1000, 576, 200].iter().enumerate() {
        let src = ["s1", "s2", "s3", "s1"][i];
        flows += &cbr(&format!("cbr{i}"), src, "2Mbps", *size);
    }
    for variant in ["linux", "ns2"] {
        let q = format!("{{ kind = \"codel\", variant = \"{variant}\" }}");
        let r = run_to(&dumbbell(&q, &flows, ""), 1, 30.0);
        let b = r.queue(BOTTLENECK).unwrap();
        println!(
            "codel {variant} 0.8x CBR: dropped {} marked {} mean delay {:.3} ms max {:.3} ms",
            b.dropped,
            b.marked,
            b.mean_delay_s / MS,
            b.max_delay_s / MS
        );
        assert_eq!(b.dropped, 0, "{variant}: CoDel dropped below capacity");
        assert_eq!(b.marked, 0);
        assert!(
            b.max_delay_s < 5.0 * MS,
            "max delay {} ms",
            b.max_delay_s / MS
        );
        assert!(r.flows.iter().all(|f| f.drops == 0));
    }
    // Two window-limited New Reno flows (20 segments per ≥ 48 ms RTT, at most
    // ≈ 3.5 Mbit/s each on the wire) and a 2 Mbit/s CBR.
    let flows = format!(
        "{}{}",
        r#"
[[flows]]
group = "limited"
src = "s1"
dst = "d"
count = 2
start_spread = "500ms"
tcp = { max_window = 20 }
"#,
        cbr("cbr", "s2", "2Mbps", 1000)
    );
    let r = run_to(&dumbbell("{ kind = \"codel\" }", &flows, ""), 1, 30.0);
    let b = r.queue(BOTTLENECK).unwrap();
    let util = r.link(BOTTLENECK).unwrap().utilization;
    println!(
        "codel, window-limited TCP + CBR: utilisation {util:.3}, dropped {}, max delay {:.2} ms",
        b.dropped,
        b.max_delay_s / MS
    );
    assert!(util < 0.95, "the load must be below capacity: {util}");
    assert_eq!(b.dropped, 0);
    assert!(r.flows.iter().all(|f| f.drops == 0 && f.retransmits == 0));
}

/// CoDel with responsive traffic: four New Reno bulk flows. The queueing
/// delay settles near target (mean in [3, 15] ms over 10–60 s) with the link
/// busy (≥ 95 %), for three seeds. Measured: 4.64–4.75 ms, 98.97–99.24 %.
#[test]
fn codel_newreno_bulk_settles_near_target() {
    let text = dumbbell("{ kind = \"codel\" }", &bulk(4), "");
    for seed in 1..=3 {
        let w = Window::new(&text, seed, 10.0, 60.0);
        let (mean, _) = w.sojourn();
        let (early, forced, overflow, aqm) = w.drops();
        println!(
            "codel 4x newreno seed {seed}: mean sojourn {:.2} ms, utilisation {:.4}, aqm drops {aqm}, jain {:.4}",
            mean / MS,
            w.utilization(),
            jain(&w.goodputs("bulk"))
        );
        assert_eq!((early, forced, overflow), (0, 0, 0));
        assert!(aqm > 0);
        assert!(
            (3.0 * MS..=15.0 * MS).contains(&mean),
            "seed {seed}: mean sojourn {} ms",
            mean / MS
        );
        assert!(
            w.utilization() >= 0.95,
            "seed {seed}: utilisation {}",
            w.utilization()
        );
    }
}

// ---------------------------------------------------------------------------
// FQ-CoDel and sfqCoDel: sparse-flow isolation and fair sharing
// ---------------------------------------------------------------------------

/// One-way delay of a 100-byte packet with empty queues: 24 ms of
/// propagation, 8 µs on each 100 Mbit/s link, 80 µs on the bottleneck.
const SPARSE_BASE: f64 = 24.096e-3;

struct Isolation {
    sparse_queueing: f64,
    sparse_max_queueing: f64,
    bulk_sojourn: f64,
    jain: f64,
    utilization: f64,
    sparse_drops: u64,
}

/// `n` New Reno bulk flows (same RTT) and a sparse CBR flow of 100-byte
/// packets at 64 kbit/s (80 pkt/s) through `queue`, measured over 10–60 s.
fn isolation(queue: &str, n: u32, seed: u64) -> Isolation {
    let text = dumbbell(queue, &(bulk(n) + &cbr("sparse", "s2", "64kbps", 100)), "");
    let w = Window::new(&text, seed, 10.0, 60.0);
    let (owd, n_sparse) = w.cbr_owd("sparse");
    let sparse_queueing = owd - SPARSE_BASE;
    // The bulk flows' packets: all packets dequeued at the bottleneck minus
    // the sparse ones, whose bottleneck sojourn is their queueing delay.
    let (a, b) = w.queues();
    let sum = b.mean_delay_s * b.dequeued as f64 - a.mean_delay_s * a.dequeued as f64;
    let n_all = b.dequeued - a.dequeued;
    let bulk_sojourn = (sum - sparse_queueing * n_sparse as f64) / (n_all - n_sparse) as f64;
    let sparse = w.b.group("sparse").next().unwrap();
    Isolation {
        sparse_queueing,
        sparse_max_queueing: sparse.max_owd_s.unwrap() - SPARSE_BASE,
        bulk_sojourn,
        jain: jain(&w.goodputs("bulk")),
        utilization: w.utilization(),
        sparse_drops: sparse.drops,
    }
}

fn check_isolation(kind: &str, queue: &str, min_util: f64) {
    // Plain CoDel, for contrast: one FIFO, the sparse flow waits behind the
    // bulk backlog.
    let fifo = isolation("{ kind = \"codel\" }", 4, 1);
    println!(
        "codel (FIFO) 4 bulk + sparse: sparse queueing {:.3} ms, bulk sojourn {:.2} ms",
        fifo.sparse_queueing / MS,
        fifo.bulk_sojourn / MS
    );
    for n in [4, 8] {
        for seed in 1..=2 {
            let r = isolation(queue, n, seed);
            println!(
                "{kind} {n} bulk + sparse, seed {seed}: sparse queueing mean {:.3} ms max {:.3} ms, \
                 bulk sojourn {:.2} ms, jain {:.5}, utilisation {:.4}, sparse drops {}",
                r.sparse_queueing / MS,
                r.sparse_max_queueing / MS,
                r.bulk_sojourn / MS,
                r.jain,
                r.utilization,
                r.sparse_drops
            );
            // The sparse flow's packets wait at most for the bulk packet in
            // service (0.832 ms) plus a few packets of other new flows.
            assert!(
                r.sparse_queueing < 1.0 * MS,
                "{kind} n={n}: sparse queueing {} ms",
                r.sparse_queueing / MS
            );
            assert!(
                r.sparse_queueing < fifo.sparse_queueing / 3.0,
                "{kind}: sparse queueing {} ms not isolated (FIFO CoDel {} ms)",
                r.sparse_queueing / MS,
                fifo.sparse_queueing / MS
            );
            assert_eq!(r.sparse_drops, 0, "{kind}: the sparse flow lost packets");
            // The bulk flows see about CoDel's target.
            assert!(
                (2.5 * MS..=12.0 * MS).contains(&r.bulk_sojourn),
                "{kind} n={n}: bulk sojourn {} ms",
                r.bulk_sojourn / MS
            );
            assert!(r.jain >= 0.99, "{kind} n={n}: Jain {}", r.jain);
            assert!(
                r.utilization >= min_util,
                "{kind}: utilisation {}",
                r.utilization
            );
        }
    }
}

/// FQ-CoDel (RFC 8290): a sparse flow keeps its queueing delay below a
/// millisecond while 4 or 8 bulk New Reno flows share the rest equally
/// (Jain ≥ 0.99 over 10–60 s) and their packets see about CoDel's target
/// (bulk sojourn in [2.5, 12] ms). Measured (4 / 8 flows, seeds 1–2): sparse
/// queueing 0.78 / 0.82–0.83 ms (max 3.2–4.5 ms; 5.2 ms behind a plain CoDel
/// FIFO), bulk sojourn 3.7 / 6.0–6.2 ms, Jain ≥ 0.9998, utilisation
/// 0.975–0.997.
#[test]
fn fq_codel_isolates_a_sparse_flow_and_shares_equally() {
    check_isolation("fq_codel", "{ kind = \"fq_codel\" }", 0.95);
}

/// sfqCoDel (ns-2 Pollere, both variants): the same isolation, sharing and
/// delay properties. Utilisation is lower than FQ-CoDel's with 4 flows
/// (measured 0.947 and 0.954 for seeds 1–2, vs 0.975–0.979; with 8 flows
/// 0.973–0.980): each bin's CoDel re-enters dropping sooner (count − 2, and
/// the first-above time shortened to interval/√count on re-entry), so each
/// of few bulk flows is cut more often. The bound asserted is 0.90. (The
/// two variants differ only in bins and overflow handling, neither of which
/// this load reaches, so they give identical numbers here.)
#[test]
fn sfq_codel_isolates_a_sparse_flow_and_shares_equally() {
    check_isolation("sfq_codel pollere-256", "{ kind = \"sfq_codel\" }", 0.90);
    check_isolation(
        "sfq_codel pollere-1024",
        "{ kind = \"sfq_codel\", variant = \"pollere-1024\" }",
        0.90,
    );
}

// ---------------------------------------------------------------------------
// PIE
// ---------------------------------------------------------------------------

/// PIE (RFC 8033, defaults: 15 ms reference) under 4 and 8 New Reno bulk
/// flows: the mean queueing delay over 10–60 s, and over each half of that
/// window, is within 15 ± 5 ms. (With one or two flows the BDP-sized window
/// halving empties the queue often and the mean falls to 10–14 ms.)
#[test]
fn pie_queueing_delay_converges_to_reference() {
    for n in [4, 8] {
        let text = dumbbell("{ kind = \"pie\" }", &bulk(n), "");
        for seed in 1..=2 {
            let w = Window::new(&text, seed, 10.0, 60.0);
            let mid = Window::new(&text, seed, 35.0, 60.0);
            let first = {
                let (a, b) = (w.queues().0, mid.queues().0);
                (b.mean_delay_s * b.dequeued as f64 - a.mean_delay_s * a.dequeued as f64)
                    / (b.dequeued - a.dequeued) as f64
            };
            let (all, _) = w.sojourn();
            let (second, _) = mid.sojourn();
            let (early, forced, overflow, aqm) = w.drops();
            println!(
                "pie {n} bulk seed {seed}: mean delay {:.2} ms (10–35 s {:.2}, 35–60 s {:.2}), \
                 utilisation {:.4}, early drops {early}",
                all / MS,
                first / MS,
                second / MS,
                w.utilization()
            );
            assert_eq!((forced, overflow, aqm), (0, 0, 0));
            assert!(early > 0);
            for (what, d) in [("10–60 s", all), ("10–35 s", first), ("35–60 s", second)] {
                assert!(
                    (d - 15.0 * MS).abs() <= 5.0 * MS,
                    "pie n={n} seed {seed}: mean delay {what} {} ms",
                    d / MS
                );
            }
            assert!(w.utilization() >= 0.95);
        }
    }
}

// ---------------------------------------------------------------------------
// Adaptive RED
// ---------------------------------------------------------------------------

/// Mean of RED's sampled `avg` over [t1, t2).
fn mean_avg(r: &RunResult, t1: f64, t2: f64) -> f64 {
    let s = &r
        .series
        .iter()
        .find(|s| s.link == BOTTLENECK)
        .unwrap()
        .samples;
    let v: Vec<f64> = s
        .iter()
        .filter(|x| x.time_s >= t1 && x.time_s < t2)
        .map(|x| x.avg_pkts.expect("RED has an average"))
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

/// 32 New Reno flows through RED with min_th = 10, max_th = 40 and a small
/// max_p = 0.02: plain RED cannot drop enough, so its average sits above the
/// target band [min_th + 0.4(max_th − min_th), min_th + 0.6(max_th − min_th)]
/// = [22, 28] (measured ≈ 35.5). Adaptive RED, from the same initial max_p,
/// raises max_p until the average is in the band: its mean `avg` over the
/// last 20 s of a 60 s run must lie in [22, 28] (measured ≈ 24.2).
#[test]
fn ared_brings_the_average_into_the_target_band() {
    let (band_lo, band_hi) = (22.0, 28.0);
    for gentle in [false, true] {
        for seed in 1..=2 {
            let q = |kind: &str| {
                format!(
                    "{{ kind = \"{kind}\", limit = 300, min_th = 10, max_th = 40, max_p = 0.02, gentle = {gentle} }}"
                )
            };
            let red = run_to(&dumbbell(&q("red"), &bulk(32), ""), seed, 60.0);
            let ared = run_to(&dumbbell(&q("ared"), &bulk(32), ""), seed, 60.0);
            let (r, a) = (mean_avg(&red, 40.0, 60.0), mean_avg(&ared, 40.0, 60.0));
            let early = |x: &RunResult| {
                let q = x.queue(BOTTLENECK).unwrap();
                (q.dropped_early, q.dropped_forced)
            };
            println!(
                "gentle={gentle} seed {seed}: RED avg {r:.2} (early, forced) {:?}; ARED avg {a:.2} {:?}",
                early(&red),
                early(&ared)
            );
            assert!(
                r > band_hi,
                "plain RED's average {r} should be above the band"
            );
            assert!(
                (band_lo..=band_hi).contains(&a),
                "ARED's average {a} outside [{band_lo}, {band_hi}]"
            );
        }
    }
}

/// ARED's max_p adaptation through the discipline itself (built from an
/// `ared` config): the instantaneous queue is held at `n` packets (every
/// arrival sees the queue at `n`, as in `validation_red.rs`), arrivals every
/// millisecond. With the average above the band max_p grows by
/// min(alpha, max_p/4) per `interval` up to `top`; inside the band it stays;
/// below the band it shrinks by `beta` per interval down to `bottom`.
#[test]
fn ared_max_p_follows_aimd_on_the_average() {
    let c: AredConfig = toml::from_str(
        "limit = 1000\nmin_th = 10\nmax_th = 30\nmax_p = 0.02\nw_q = 0.02\ninterval = \"500ms\"",
    )
    .unwrap();
    let mut red = Red::adaptive(&c.red, 10_000_000, 20_000_000, c.adaptation());
    let mut rng = RngStream::new(3, 9);
    let mut dropped: Vec<(Packet, DropCause)> = Vec::new();
    let mut now = 0u64;
    let mut uid = 0u64;
    let mut hold = |red: &mut Red, n: usize, secs: f64, now: &mut u64| -> Vec<f64> {
        // bring the queue to n
        let mut ctx = QdCtx {
            now: *now,
            rng: &mut rng,
            dropped: &mut dropped,
            marked: 0,
        };
        while red.len_pkts() > n {
            red.dequeue(&mut ctx);
        }
        while red.len_pkts() < n {
            uid += 1;
            let _ = red.enqueue(
                Packet {
                    uid,
                    size: 1000,
                    ..Default::default()
                },
                &mut ctx,
            );
        }
        let mut max_ps = Vec::new();
        let end = *now + (secs * 1e9) as u64;
        while *now < end {
            *now += 1_000_000;
            let mut ctx = QdCtx {
                now: *now,
                rng: &mut rng,
                dropped: &mut dropped,
                marked: 0,
            };
            uid += 1;
            if red
                .enqueue(
                    Packet {
                        uid,
                        size: 1000,
                        ..Default::default()
                    },
                    &mut ctx,
                )
                .is_ok()
            {
                red.dequeue(&mut ctx);
            }
            if max_ps.last() != Some(&red.max_p()) {
                max_ps.push(red.max_p());
            }
        }
        max_ps
    };
    // band [18, 22]; hold above: avg → 26
    let up = hold(&mut red, 26, 10.0, &mut now);
    println!("max_p above the band: {up:?}");
    assert!(red.avg() > 22.0);
    let mut expect = vec![0.02];
    while expect.len() < up.len() {
        let m = *expect.last().unwrap();
        expect.push(m + (0.01f64).min(m / 4.0));
    }
    for (g, e) in up.iter().zip(&expect) {
        assert!(
            (g - e).abs() < 1e-12,
            "max_p sequence {up:?}, expected {expect:?}"
        );
    }
    assert!(up.len() >= 15, "max_p should grow every 0.5 s: {up:?}");
    assert!(*up.last().unwrap() <= 0.5 + 0.01, "capped near top");
    // inside the band: unchanged
    let top = red.max_p();
    let flat = hold(&mut red, 20, 10.0, &mut now);
    println!("max_p in the band: {flat:?}");
    // the average needs ~ 4/w_q arrivals to move into the band; after that
    // max_p must not change
    let last = *flat.last().unwrap();
    assert!(last <= top);
    let settled = hold(&mut red, 20, 5.0, &mut now);
    assert!(
        settled.len() <= 1 && settled.first().is_none_or(|&m| m == last),
        "max_p changed inside the band: {settled:?}"
    );
    // below: multiplicative decrease to bottom
    let down = hold(&mut red, 12, 30.0, &mut now);
    println!("max_p below the band: {down:?}");
    for w in down.windows(2).skip(1) {
        assert!(
            (w[1] - 0.9 * w[0]).abs() < 1e-12,
            "decrease by beta: {down:?}"
        );
    }
    let m = *down.last().unwrap();
    assert!(
        (0.009..0.0101).contains(&m),
        "max_p floors near bottom: {m}"
    );
}
