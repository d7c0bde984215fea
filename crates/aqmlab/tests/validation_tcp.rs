//! Validation of the TCP model against theory.
//!
//! 1. Reno/NewReno throughput under independent random loss against the full
//!    formula of J. Padhye, V. Firoiu, D. Towsley, J. Kurose, "Modeling TCP
//!    Throughput: A Simple Model and its Empirical Validation", SIGCOMM 1998,
//!    eq. (33):
//!
//!    ```text
//!    B(p) = min( Wmax/RTT,
//!                1 / (RTT·sqrt(2bp/3) + T0·min(1, 3·sqrt(3bp/8))·p·(1+32p²)) )
//!    ```
//!
//!    in packets per second, where B is the *send rate* (the model counts
//!    every transmitted packet, retransmissions included), `b` the number of
//!    segments acknowledged per ACK, `p` the loss probability, `T0` the first
//!    retransmission timeout.
//! 2. Reno against NewReno: with several losses in one window, Reno leaves
//!    fast recovery on the first partial ACK and often has to wait for the
//!    retransmission timer, while NewReno (RFC 6582) retransmits one hole per
//!    partial ACK and stays in recovery (Fall & Floyd, "Simulation-based
//!    comparisons of Tahoe, Reno and SACK TCP", CCR 26(3), 1996).
//!
//! Set-up: two hosts joined by one 1 Gbit/s link, 50 ms one-way delay, a
//! 100 000-packet DropTail buffer, Bernoulli loss `p` on the data direction
//! only (the ACK direction is loss-free). The link is ~100× faster than the
//! loss-limited rate, so the random loss, not the buffer, limits the window.
//! 1000-byte segments + 40 header bytes, receive window 10 000 segments (so
//! `Wmax/RTT` never binds).
//!
//! RTT: *measured*, as the base RTT (2 × 50 ms propagation + serialisation of
//! one data packet and one ACK) plus the mean queueing delay that the run
//! reports for the data queue and for the ACK queue (`QueueResult::
//! mean_delay_s`). The sender's final `srtt_s` is not used: it is one EWMA
//! value at the end of the run and includes delayed-ACK waits.
//!
//! T0: *computed* as the sender's RTO would be. RFC 6298: RTO =
//! max(min_rto, SRTT + max(G, 4·RTTVAR)). Here min_rto = 1 s (RFC 6298 §2.4)
//! and every RTT sample lies in [0.1 s, 0.1 s + delack_timeout (0.1 s) +
//! queueing], so SRTT + 4·RTTVAR < 0.2 + 4·0.1 < 1 s and the un-backed-off RTO
//! is exactly min_rto: T0 = 1 s. The test checks SRTT < 0.2 s as a guard.
//!
//! Averaging: each point is the mean over 4 seeds of runs of 600–2000 s
//! simulated time (several hundred to thousands of loss events per seed).
//! Tolerance: ±25 % of B(p).

use aqmlab::{Scenario, Simulation};

const RATE_BPS: f64 = 1e9;
const ONE_WAY_S: f64 = 0.050;
const MSS: f64 = 1000.0;
const HEADER: f64 = 40.0;
const WMAX: f64 = 10_000.0;
const MIN_RTO_S: f64 = 1.0;
const SEEDS: [u64; 4] = [1, 2, 3, 4];

fn scenario(p: f64, cc: &str, delayed_ack: bool, dur_s: f64) -> Scenario {
    scenario_with(p, cc, delayed_ack, dur_s, "")
}

/// `extra`: more `[tcp]` keys (e.g. SACK recovery).
fn scenario_with(p: f64, cc: &str, delayed_ack: bool, dur_s: f64, extra: &str) -> Scenario {
    let text = format!(
        r#"
name = "padhye-{cc}-{p}"
duration = "{dur_s}s"
[nodes]
hosts = ["h1", "h2"]
[tcp]
mss = {MSS}
header_bytes = {HEADER}
init_cwnd = 2
max_window = {WMAX}
min_rto = "{MIN_RTO_S}s"
initial_rto = "1s"
granularity = "1ms"
delayed_ack = {delayed_ack}
delack_count = 2
delack_timeout = "100ms"
{extra}
[[links]]
a = "h1"
b = "h2"
rate = "{RATE_BPS}bps"
delay = "{ONE_WAY_S}s"
loss_ab = {p}
queue = {{ kind = "droptail", limit = 100000 }}
[[flows]]
group = "f"
src = "h1"
dst = "h2"
cc = "{cc}"
"#
    );
    Scenario::from_toml(&text, "padhye.toml").expect("valid scenario")
}

/// Padhye et al. 1998, eq. (33). Packets per second.
fn padhye(p: f64, rtt: f64, t0: f64, b: f64, wmax: f64) -> f64 {
    let d = rtt * (2.0 * b * p / 3.0).sqrt()
        + t0 * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p);
    (wmax / rtt).min(1.0 / d)
}

/// Seed-averaged measurements of one configuration.
#[derive(Debug, Default)]
struct Measured {
    /// Segments sent per second (retransmissions included) — Padhye's B.
    send_rate: f64,
    /// Segments cumulatively acknowledged per second.
    goodput: f64,
    /// Base RTT + mean queueing delay, seconds.
    rtt: f64,
    /// Data packets lost on the link / data segments sent.
    loss: f64,
    timeouts: u64,
    fast_retransmits: u64,
    lost: u64,
}

fn measure(p: f64, cc: &str, delayed_ack: bool, dur_s: f64) -> Measured {
    measure_sc(&scenario(p, cc, delayed_ack, dur_s), dur_s)
}

fn measure_sc(sc: &Scenario, dur_s: f64) -> Measured {
    let mut m = Measured::default();
    let mut sent = 0u64;
    for &seed in &SEEDS {
        let r = Simulation::new(sc, seed).run();
        assert!(r.conservation.holds());
        let f = &r.flows[0];
        let data_q = r.queue("h1->h2").unwrap();
        let ack_q = r.queue("h2->h1").unwrap();
        let base = 2.0 * ONE_WAY_S + (MSS + HEADER) * 8.0 / RATE_BPS + HEADER * 8.0 / RATE_BPS;
        let rtt = base + data_q.mean_delay_s + ack_q.mean_delay_s;
        // Guard for T0 = min_rto (see the module comment).
        let srtt = f.srtt_s.expect("RTT sampled");
        assert!(srtt < 0.2, "srtt {srtt} s: T0 = min_rto no longer holds");
        let dur = dur_s - f.start_s;
        m.send_rate += f.segments_sent as f64 / dur;
        m.goodput += f.bytes_acked as f64 / MSS / dur;
        m.rtt += rtt;
        m.timeouts += f.timeouts;
        m.fast_retransmits += f.fast_retransmits;
        m.lost += r.link("h1->h2").unwrap().lost;
        sent += f.segments_sent;
    }
    let n = SEEDS.len() as f64;
    m.send_rate /= n;
    m.goodput /= n;
    m.rtt /= n;
    m.loss = m.lost as f64 / sent as f64;
    m
}

/// Simulated time per seed: enough for ≳ 500 loss events per seed.
fn duration_for(p: f64) -> f64 {
    if p < 0.005 {
        2000.0
    } else {
        600.0
    }
}

/// Compare one configuration with Padhye's B(p); returns (measured, B, ratio).
fn check_padhye(p: f64, cc: &str, delayed_ack: bool) -> (Measured, f64, f64) {
    let b = if delayed_ack { 2.0 } else { 1.0 };
    let m = measure(p, cc, delayed_ack, duration_for(p));
    let model = padhye(p, m.rtt, MIN_RTO_S, b, WMAX);
    let ratio = m.send_rate / model;
    println!(
        "{cc:8} b={b} p={p:<6} send {:8.2} pkt/s  goodput {:8.2}  Padhye {:8.2}  ratio {ratio:.3}  \
         rtt {:.5} s  measured loss {:.5}  timeouts {}  fast retransmits {}",
        m.send_rate, m.goodput, model, m.rtt, m.loss, m.timeouts, m.fast_retransmits
    );
    (m, model, ratio)
}

#[test]
fn padhye_formula_itself() {
    // Hand-computed values guard the helper: p = 0.01, RTT = 0.1 s, T0 = 1 s,
    // b = 2: 0.1·sqrt(0.04/3) = 0.0115470; 3·sqrt(0.0075) = 0.2598076;
    // 0.2598076·0.01·1.0032 = 0.0026064; B = 1/0.0141534 = 70.654 pkt/s.
    assert!((padhye(0.01, 0.1, 1.0, 2.0, 1e9) - 70.654).abs() < 0.01);
    // Window-limited: Wmax/RTT binds.
    assert_eq!(padhye(0.0001, 0.1, 1.0, 2.0, 10.0), 100.0);
}

/// New Reno with delayed ACKs (b = 2): send rate within 25 % of Padhye's B(p)
/// for p = 0.001, 0.01, 0.03.
#[test]
fn newreno_delayed_ack_b2_matches_padhye() {
    for p in [0.001, 0.01, 0.03] {
        let (m, model, ratio) = check_padhye(p, "newreno", true);
        // the loss process is the configured one
        assert!(
            (m.loss - p).abs() < 0.1 * p,
            "measured loss {} vs {p}",
            m.loss
        );
        assert!(
            (ratio - 1.0).abs() <= 0.25,
            "NewReno b=2 p={p}: send rate {:.2} pkt/s vs Padhye {model:.2} (ratio {ratio:.3})",
            m.send_rate
        );
    }
}

/// New Reno without delayed ACKs (b = 1): within 25 % of B(p) for p = 0.001
/// and 0.01. At p = 0.03 (window ≈ 9 segments) New Reno under *independent*
/// loss is measurably faster than the model (≈ +30 %): B(p) assumes that
/// after a loss the rest of the round is lost and that a loss indication is
/// a timeout with probability min(1, 3/w) (Reno's behaviour), whereas New
/// Reno repairs several independent losses of one window in one recovery with
/// one halving and few timeouts. That case is asserted in the direction the
/// theory gives: above B(p), and above Reno under the same loss.
#[test]
fn newreno_no_delayed_ack_b1_matches_padhye() {
    for p in [0.001, 0.01] {
        let (m, model, ratio) = check_padhye(p, "newreno", false);
        assert!(
            (ratio - 1.0).abs() <= 0.25,
            "NewReno b=1 p={p}: send rate {:.2} pkt/s vs Padhye {model:.2} (ratio {ratio:.3})",
            m.send_rate
        );
    }
    let (nr, model, ratio) = check_padhye(0.03, "newreno", false);
    let (reno, _, _) = check_padhye(0.03, "reno", false);
    assert!(ratio > 1.0, "NewReno b=1 p=0.03: ratio {ratio:.3}");
    assert!(
        nr.send_rate > reno.send_rate,
        "NewReno {:.2} vs Reno {:.2} pkt/s (Padhye {model:.2})",
        nr.send_rate,
        reno.send_rate
    );
}

/// Reno — the algorithm the model describes — within 25 % of B(p) for all
/// three loss rates, with and without delayed ACKs.
#[test]
fn reno_matches_padhye_b1_and_b2() {
    for delayed_ack in [true, false] {
        for p in [0.001, 0.01, 0.03] {
            let (m, model, ratio) = check_padhye(p, "reno", delayed_ack);
            assert!(
                (ratio - 1.0).abs() <= 0.25,
                "Reno delayed_ack={delayed_ack} p={p}: send rate {:.2} pkt/s vs Padhye \
                 {model:.2} (ratio {ratio:.3})",
                m.send_rate
            );
        }
    }
}

/// With independent loss at p = 0.01–0.03 and windows of 10–15 segments,
/// windows with two or more losses are common. Theory (Fall & Floyd 1996;
/// RFC 6582 §1): Reno then often needs the retransmission timer, NewReno
/// recovers in one fast recovery. Asserted: per lost packet, NewReno has at
/// most half of Reno's timeouts, and a higher send rate and goodput.
#[test]
fn newreno_times_out_less_than_reno_with_multiple_losses_per_window() {
    for p in [0.01, 0.03] {
        let reno = measure(p, "reno", false, 600.0);
        let nr = measure(p, "newreno", false, 600.0);
        let to_reno = reno.timeouts as f64 / reno.lost as f64;
        let to_nr = nr.timeouts as f64 / nr.lost as f64;
        println!(
            "p={p}: timeouts per lost packet Reno {to_reno:.4} ({} / {}), NewReno {to_nr:.4} \
             ({} / {}); goodput Reno {:.2}, NewReno {:.2} pkt/s",
            reno.timeouts, reno.lost, nr.timeouts, nr.lost, reno.goodput, nr.goodput
        );
        assert!(reno.timeouts > 100, "too few Reno timeouts to compare");
        assert!(
            to_nr < 0.5 * to_reno,
            "p={p}: NewReno {to_nr:.4} vs Reno {to_reno:.4} timeouts per loss"
        );
        assert!(nr.goodput > reno.goodput && nr.send_rate > reno.send_rate);
    }
}

/// Padhye again with SACK loss recovery (RFC 6675 + PRR, SACK blocks in
/// the ACKs, which the model ignores — ACKs are 12–36 bytes larger): the
/// send rate stays within 25 % of B(p) at p = 0.001, 0.01 and 0.03 with
/// delayed ACKs (b = 2). Measured (4 seeds): ratios 0.96, 0.87, 0.92. At
/// p = 0.03 (windows of a few segments) SACK sends ~12 % less than NewReno
/// (27.3 vs 31.1 pkt/s): ssthresh comes from the RFC 6675 pipe (SACKed and
/// lost segments excluded, as ns-3 does), which with 3 SACKed + 1 lost out
/// of ~6 is well below NewReno's FlightSize/2, and NewReno's send rate
/// counts its go-back-N retransmissions.
#[test]
fn sack_recovery_matches_padhye() {
    let sack = "sack = true\nrecovery = \"sack\"\nprr = true";
    for p in [0.001, 0.01, 0.03] {
        let dur = duration_for(p);
        let m = measure_sc(&scenario_with(p, "newreno", true, dur, sack), dur);
        let model = padhye(p, m.rtt, MIN_RTO_S, 2.0, WMAX);
        let ratio = m.send_rate / model;
        println!(
            "sack b=2 p={p:<6} send {:8.2} pkt/s  goodput {:8.2}  Padhye {model:8.2}  ratio {ratio:.3}  \
             timeouts {}  fast retransmits {}  lost {}",
            m.send_rate, m.goodput, m.timeouts, m.fast_retransmits, m.lost
        );
        assert!(
            (ratio - 1.0).abs() <= 0.25,
            "SACK p={p}: send rate {:.2} vs Padhye {model:.2} (ratio {ratio:.3})",
            m.send_rate
        );
    }
}
