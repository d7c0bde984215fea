//! Validation of RIO-PS (Guo & Matta, ICNP 2001): the edge classifier's
//! L_t control, RIO's class preference, FIFO order and conservation.

use aqmlab::aqm::{QdCtx, QueueDisc, Rio, RioConfig};
use aqmlab::engine::{secs, RngStream};
use aqmlab::net::packet::{Class, Ecn, Ext, Packet};
use aqmlab::{Scenario, Simulation};

/// A stationary web load through RIO-PS: 5 Mbit/s, 80 ms RTT, 100 sessions
/// (about 0.85 of the link), object sizes bounded Pareto in packets.
const WEB: &str = r#"
name = "rio-web"
duration = "600s"
[nodes]
hosts = ["srv", "cli"]
routers = ["r1", "r2"]
[tcp]
mss = 460
header_bytes = 40
init_cwnd = 1
max_window = 128
min_rto = "200ms"
granularity = "100ms"
initial_rto = "3s"
delayed_ack = false
ecn = true
handshake = true
[output]
sample_interval = "1s"
[[links]]
a = "srv"
b = "r1"
rate = "100Mbps"
delay = "1ms"
[[links]]
name = "bottleneck"
a = "r1"
b = "r2"
rate = "5Mbps"
delay = "38ms"
queue_ab = { kind = "rio", limit = 250, ecn = true, wait = true, gentle = true }
classifier_ab = { threshold = 20, slr = 3, t_u = "1s", t_c = "10s" }
[[links]]
a = "r2"
b = "cli"
rate = "100Mbps"
delay = "1ms"
[[workloads]]
kind = "web"
name = "web"
client = "cli"
server = "srv"
sessions = 100
size_unit = "packets"
"#;

#[test]
fn classifier_holds_the_short_long_ratio_near_slr() {
    let sc = Scenario::from_toml_with(WEB, "rio-web.toml", &[]).unwrap();
    let mut sim = Simulation::new(&sc, 1);
    let r = sim.run();
    assert!(r.conservation.holds(), "{:?}", r.conservation);
    let c = sim.classifier("r1->r2").expect("classifier on r1->r2");
    // every packet offered to the bottleneck port was tagged
    let q = r.queue("r1->r2").unwrap();
    assert_eq!(
        c.counters.tagged_in + c.counters.tagged_out,
        q.enqueued + q.dropped
    );
    assert!(c.counters.tagged_in > 0 && c.counters.tagged_out > 0);
    // RIO refuses only arrivals, so arrivals = enqueued + dropped; the
    // port's per-class counts agree with the classifier's tags, and short
    // (In) packets see a lower drop+mark rate than long (Out) ones.
    assert_eq!(q.arrivals, q.enqueued + q.dropped);
    let class = |n: &str| q.classes.iter().find(|k| k.class == n).unwrap();
    let (cin, cout) = (class("in"), class("out"));
    assert_eq!(cin.arrivals, c.counters.tagged_in);
    assert_eq!(cout.arrivals, c.counters.tagged_out);
    let sig = |k: &aqmlab::metrics::ClassResult| k.drop_rate() + k.mark_rate();
    eprintln!(
        "signal rate: in {:.5} ({} drops, {} marks), out {:.5} ({} drops, {} marks)",
        sig(cin),
        cin.dropped,
        cin.marked,
        sig(cout),
        cout.dropped,
        cout.marked
    );
    assert!(sig(cout) > 0.0 && sig(cin) < sig(cout));
    // Drop/mark rate over time: 60 s windows partition the run's counts.
    let series = r.series.iter().find(|s| s.link == "r1->r2").unwrap();
    let w = series.signal_rates(60.0);
    assert_eq!(w.len(), 10);
    let last = series.samples.last().unwrap();
    assert_eq!(w.iter().map(|x| x.arrivals).sum::<u64>(), last.arrivals);
    assert_eq!(w.iter().map(|x| x.dropped).sum::<u64>(), last.dropped);
    assert_eq!(w.iter().map(|x| x.marked).sum::<u64>(), last.marked);
    assert!(last.arrivals <= q.arrivals && q.arrivals - last.arrivals < q.arrivals / 100);
    // after a 200 s transient, the ratio of the time-averaged numbers of
    // active short and long flows (observed at each adjustment, under the
    // L_t then in force) is within 20% of SLR = 3
    let h: Vec<_> = c.history.iter().filter(|a| a.time >= secs(200.0)).collect();
    assert!(h.len() >= 39, "{} adjustments", h.len());
    let ns: f64 = h.iter().map(|a| a.n_short as f64).sum();
    let nl: f64 = h.iter().map(|a| a.n_long as f64).sum();
    let ratio = ns / nl;
    let geo = (h
        .iter()
        .map(|a| ((a.n_short as f64 + 0.5) / (a.n_long as f64 + 0.5)).ln())
        .sum::<f64>()
        / h.len() as f64)
        .exp();
    let lt: Vec<f64> = h.iter().map(|a| a.threshold_before).collect();
    eprintln!(
        "ratio of means {ratio:.3}, geometric mean {geo:.3}, L_t {:.1}..{:.1}, mean {:.1}, active {:.1}",
        lt.iter().cloned().fold(f64::MAX, f64::min),
        lt.iter().cloned().fold(0.0, f64::max),
        lt.iter().sum::<f64>() / lt.len() as f64,
        (ns + nl) / h.len() as f64
    );
    assert!((ratio / 3.0 - 1.0).abs() <= 0.2, "ratio {ratio}");
    assert!((geo / 3.0 - 1.0).abs() <= 0.2, "geometric mean {geo}");
}

fn pkt(uid: u64, class: Class) -> Packet {
    Packet {
        uid,
        size: 500,
        ext: Ext::Rio(class),
        ecn: Ecn::Ect0,
        ..Default::default()
    }
}

/// Drive a RIO-PS queue (the paper's parameters for B = 100) with Poisson
/// arrivals at 1.2 × the service rate, a fraction `f_in` tagged In; return
/// (In, Out) signal rates and the dequeued uids in order.
fn drive(f_in: f64, ecn: bool, n: u64) -> (f64, f64, Vec<u64>) {
    // thresholds of B = 100 but room for 1000 packets, so that overflow
    // (which hits both classes alike) never happens and RIO alone decides
    let mut c = RioConfig::paper(100);
    let (s, l) = c.resolve();
    for (cc, p) in [(&mut c.short, s), (&mut c.long, l)] {
        cc.min_th = Some(p.min_th);
        cc.max_th = Some(p.max_th);
    }
    c.limit = aqmlab::aqm::Limit::Packets(1000);
    c.ecn = ecn;
    let mut q = Rio::new(&c, 4_000_000); // 1000 packets/s of 500 B
    let mut rng = RngStream::new(11, 1);
    let mut qrng = RngStream::new(11, 2);
    let mut dropped = Vec::new();
    let service = 1_000_000u64; // ns per packet
    let mean_gap = service as f64 / 1.2;
    let (mut t, mut next_dep) = (0u64, 0u64);
    let mut out = Vec::new();
    for uid in 0..n {
        t += (-(1.0 - rng.uniform()).ln() * mean_gap) as u64;
        while next_dep <= t {
            let mut ctx = QdCtx {
                now: next_dep,
                rng: &mut qrng,
                dropped: &mut dropped,
                marked: 0,
            };
            if let Some(p) = q.dequeue(&mut ctx) {
                out.push(p.uid);
            }
            next_dep += service;
        }
        let class = if rng.uniform() < f_in {
            Class::In
        } else {
            Class::Out
        };
        let mut ctx = QdCtx {
            now: t,
            rng: &mut qrng,
            dropped: &mut dropped,
            marked: 0,
        };
        let _ = q.enqueue(pkt(uid, class), &mut ctx);
    }
    let (s, l) = q.stats();
    (s.signal_rate(), l.signal_rate(), out)
}

#[test]
fn short_packets_see_lower_signal_probability_than_long() {
    for ecn in [false, true] {
        for f_in in [0.2, 0.4] {
            let (p_in, p_out, _) = drive(f_in, ecn, 200_000);
            eprintln!("ecn {ecn} f_in {f_in}: In {p_in:.4}, Out {p_out:.4}");
            assert!(p_out > 0.05, "overload must be signalled: {p_out}");
            assert!(p_in < 0.5 * p_out, "In {p_in} vs Out {p_out}");
        }
    }
}

#[test]
fn one_fifo_no_reordering() {
    let (_, _, out) = drive(0.4, false, 50_000);
    assert!(out.len() > 30_000);
    assert!(out.windows(2).all(|w| w[0] < w[1]), "reordered");
}

#[test]
fn goodput_scenario_conserves_packets_and_favours_short_flows() {
    // The paper's goodput experiment at 1.25 Mbit/s: RIO-PS lets the ten
    // 100-packet flows finish within the 20 s window (paper: 49 945 B/s of
    // the 50 000 possible), DropTail does not (paper: 40 973 B/s).
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/papers/rio-ps/goodput.toml"
    ))
    .unwrap();
    let short_bps = |queue: &str| {
        let o = vec![format!("links.bottleneck.queue_ab={queue}")];
        let sc = Scenario::from_toml_with(&text, "goodput.toml", &o).unwrap();
        let mut sim = Simulation::new(&sc, 1);
        let r = sim.run();
        assert!(r.conservation.holds(), "{:?}", r.conservation);
        let done = r
            .flows
            .iter()
            .filter(|f| f.group == "short" && f.completion_s.is_some())
            .count();
        let b: f64 = r
            .flows
            .iter()
            .filter(|f| f.group == "short")
            .map(|f| f.segments_delivered as f64 * 1000.0 / 20.0)
            .sum();
        (b, done, sim.classifier("r1->r2").map(|c| c.threshold()))
    };
    let (rio, rio_done, lt) =
        short_bps("{ kind = \"rio\", limit = 39, ecn = true, wait = true, gentle = true }");
    let (dt, _, _) = short_bps("{ kind = \"droptail\", limit = 23 }");
    eprintln!("short flows: RIO-PS {rio} B/s ({rio_done} done), DropTail {dt} B/s");
    assert_eq!(lt, Some(100.0));
    assert_eq!(rio_done, 10);
    assert!(rio > dt, "RIO-PS {rio} vs DropTail {dt}");
}
