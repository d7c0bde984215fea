//! Validation of RED's early-drop process against its formula (S. Floyd
//! and V. Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", IEEE/ACM ToN 1(4), 1993, §7 and Fig. 2;
//! ns-2 `queue/red.cc` `modify_p` for `wait` and `gentle`).
//!
//! Method: the discipline is driven directly through the `QueueDisc` trait.
//! The queue is pre-filled with `n` packets, then every step offers one
//! packet and, if it was accepted, dequeues one, so every arrival sees the
//! instantaneous queue `q = n`. After a warm-up of 20/w_q arrivals the
//! average is `avg = n` (to 1e-6), so `p_b` is constant and the drop process
//! is the renewal process of RED's count rule: with `count` incremented
//! before use and reset to 0 after a drop, the k-th arrival after a drop is
//! dropped with hazard
//!
//! ```text
//! wait = false: h_k = p_b / (1 − k·p_b) while k·p_b < 1, else 1
//! wait = true:  h_k = 0 while k·p_b < 1, p_b / (2 − k·p_b) while k·p_b < 2, else 1
//! ```
//!
//! The expected inter-drop gap G (arrivals from one drop to the next, the
//! drop included) is computed numerically from the hazards,
//! P(G = k) = h_k·Π_{j<k}(1 − h_j), and the long-run early-drop fraction is
//! 1/E[G] (renewal-reward theorem). The measured fraction over ≥ 200 000
//! arrivals must be within 10 % of it. The variance of the measured gaps is
//! compared with the exact variance of G and with the variance of a
//! geometric gap of the same mean (what RED without the count rule would
//! give): count spacing makes drops nearly uniform, not geometric.

use aqmlab::aqm::{DropCause, Limit, QdCtx, QueueDisc, Red, RedConfig};
use aqmlab::engine::RngStream;
use aqmlab::net::packet::Packet;

const MIN_TH: f64 = 5.0;
const MAX_TH: f64 = 15.0;
const MAX_P: f64 = 0.1;
const W_Q: f64 = 0.002;

fn cfg(gentle: bool, wait: bool) -> RedConfig {
    let mut c = RedConfig::new(Limit::Packets(1000), MIN_TH, MAX_TH, MAX_P, W_Q);
    c.gentle = gentle;
    c.wait = wait;
    c
}

/// RED's p_b for a given average (FJ93 Fig. 2; ns-2 gentle curve).
fn p_b(avg: f64) -> f64 {
    if avg < MAX_TH {
        MAX_P * (avg - MIN_TH) / (MAX_TH - MIN_TH)
    } else {
        MAX_P + (1.0 - MAX_P) * (avg - MAX_TH) / MAX_TH
    }
}

/// The hazard of the k-th arrival after a drop (k ≥ 1), written from the
/// formula independently of the library's `spaced_probability`.
fn hazard(pb: f64, k: u64, wait: bool) -> f64 {
    let kp = k as f64 * pb;
    if wait {
        if kp < 1.0 {
            0.0
        } else if kp < 2.0 {
            pb / (2.0 - kp)
        } else {
            1.0
        }
    } else if kp < 1.0 {
        pb / (1.0 - kp)
    } else {
        1.0
    }
}

/// (E[G], Var[G]) of the inter-drop gap, summed numerically over the gap
/// distribution until the survival probability vanishes.
fn gap_moments(pb: f64, wait: bool) -> (f64, f64) {
    let (mut surv, mut m1, mut m2) = (1.0f64, 0.0f64, 0.0f64);
    let mut k = 1u64;
    while surv > 1e-15 {
        let h = hazard(pb, k, wait).min(1.0);
        let pk = surv * h;
        m1 += k as f64 * pk;
        m2 += (k * k) as f64 * pk;
        surv *= 1.0 - h;
        k += 1;
        assert!(k < 10_000_000, "gap distribution does not terminate");
    }
    (m1, m2 - m1 * m1)
}

struct Observed {
    avg: f64,
    arrivals: u64,
    early: u64,
    forced: u64,
    overflow: u64,
    gaps: Vec<u64>,
}

impl Observed {
    fn fraction(&self) -> f64 {
        self.early as f64 / self.arrivals as f64
    }
    fn gap_mean_var(&self) -> (f64, f64) {
        let n = self.gaps.len() as f64;
        let m = self.gaps.iter().sum::<u64>() as f64 / n;
        let v = self
            .gaps
            .iter()
            .map(|&g| (g as f64 - m).powi(2))
            .sum::<f64>()
            / (n - 1.0);
        (m, v)
    }
}

/// Hold RED's instantaneous queue at `n` packets and observe `arrivals`
/// arrivals after the average has converged.
fn hold_queue(c: &RedConfig, n: usize, arrivals: u64, seed: u64) -> Observed {
    let mut red = Red::new(c, 10_000_000, 0);
    let mut rng = RngStream::new(seed, 7);
    let mut dropped: Vec<(Packet, DropCause)> = Vec::new();
    let mut uid = 0u64;
    let mut next = || {
        uid += 1;
        Packet {
            uid,
            size: 1000,
            ..Default::default()
        }
    };
    let mut now = 0u64;
    // Pre-fill: the average is still ~0 < min_th, so every packet is accepted.
    for _ in 0..n {
        let mut ctx = QdCtx {
            now,
            rng: &mut rng,
            dropped: &mut dropped,
            marked: 0,
        };
        red.enqueue(next(), &mut ctx).expect("pre-fill accepted");
    }
    assert_eq!(red.len_pkts(), n);
    let warmup = (20.0 / c.w_q.expect("explicit w_q")) as u64;
    let mut obs = Observed {
        avg: 0.0,
        arrivals: 0,
        early: 0,
        forced: 0,
        overflow: 0,
        gaps: Vec::new(),
    };
    let mut since_drop: Option<u64> = None; // first gap is censored: skip it
    for i in 0..warmup + arrivals {
        now += 1000;
        let mut ctx = QdCtx {
            now,
            rng: &mut rng,
            dropped: &mut dropped,
            marked: 0,
        };
        assert_eq!(red.len_pkts(), n, "queue not held constant");
        let res = red.enqueue(next(), &mut ctx);
        if res.is_ok() {
            red.dequeue(&mut ctx).expect("non-empty");
        }
        assert!(dropped.is_empty(), "RED drops only the arriving packet");
        if i < warmup {
            continue;
        }
        if i == warmup {
            obs.avg = red.avg();
            assert!(
                (obs.avg - n as f64).abs() < 1e-6,
                "avg {} has not converged to {n}",
                obs.avg
            );
        }
        obs.arrivals += 1;
        if let Some(g) = since_drop.as_mut() {
            *g += 1;
        }
        match res {
            Ok(()) => {}
            Err(DropCause::Early) => {
                obs.early += 1;
                if let Some(g) = since_drop {
                    obs.gaps.push(g);
                }
                since_drop = Some(0);
            }
            Err(DropCause::Forced) => obs.forced += 1,
            Err(cause) => {
                obs.overflow += 1;
                panic!("unexpected {cause:?} drop");
            }
        }
    }
    // The average stays at n for the whole measurement.
    assert!((red.avg() - n as f64).abs() < 1e-6);
    obs
}

/// Measure at queue level `n` and compare with the renewal expectation.
/// Returns (measured fraction, expected fraction).
fn check_level(gentle: bool, wait: bool, n: usize, arrivals: u64, seed: u64) -> (f64, f64) {
    let c = cfg(gentle, wait);
    let o = hold_queue(&c, n, arrivals, seed);
    let pb = p_b(o.avg);
    let (eg, vg) = gap_moments(pb, wait);
    let expect = 1.0 / eg;
    let got = o.fraction();
    let (gm, gv) = o.gap_mean_var();
    let geo_var = eg * (eg - 1.0); // geometric on {1, 2, ...} with mean E[G]
    println!(
        "gentle={gentle} wait={wait} avg={:.4} p_b={pb:.4}: early-drop fraction {got:.5} vs \
         expected {expect:.5} (ratio {:.4}; naive p_b {pb:.4}); gaps: mean {gm:.2} (E {eg:.2}), \
         var {gv:.1} (exact {vg:.1}, geometric {geo_var:.1}); {} drops in {} arrivals",
        o.avg,
        got / expect,
        o.early,
        o.arrivals
    );
    assert_eq!(o.forced, 0, "no forced drops below the forced threshold");
    assert!(
        (got / expect - 1.0).abs() <= 0.10,
        "n={n} gentle={gentle} wait={wait}: fraction {got:.5} vs expected {expect:.5}"
    );
    // Uniform, not geometric, spacing.
    assert!(o.gaps.len() > 1000, "too few drops ({})", o.gaps.len());
    assert!(
        (gv / vg - 1.0).abs() <= 0.10,
        "gap variance {gv:.1} vs exact {vg:.1}"
    );
    assert!(
        gv < 0.5 * geo_var,
        "gap variance {gv:.1} not well below a geometric's {geo_var:.1}"
    );
    (got, expect)
}

#[test]
fn renewal_expectation_is_right() {
    // Without `wait` the hazards telescope: Π_{j<k}(1 − h_j) =
    // (1 − k·p_b)/(1 − p_b), so P(G = k) = p_b/(1 − p_b) for every k up to
    // the last one: the gap is uniform. For p_b = 0.05: P(G = k) = 1/19 for
    // k = 1..19 (survival after 19 is (1 − 20·0.05)/0.95 = 0), so
    // E[G] = 10 and Var[G] = (19² − 1)/12 = 30.
    let (m, v) = gap_moments(0.05, false);
    assert!((m - 10.0).abs() < 1e-9, "{m}");
    assert!((v - (19.0 * 19.0 - 1.0) / 12.0).abs() < 1e-6, "{v}");
    // Small p_b: E[G] → 1/(2 p_b) (FJ93 §7: mean gap ≈ 1/(2 p_b)).
    let (m, _) = gap_moments(0.001, false);
    assert!((m * 2.0 * 0.001 - 1.0).abs() < 0.01, "{m}");
    // wait: no drop before k = 1/p_b, then hazard p_b/(2 − k·p_b): mean gap
    // ≈ 1/p_b + 1/(2 p_b) = 1.5/p_b.
    let (m, _) = gap_moments(0.001, true);
    assert!((m * 0.001 / 1.5 - 1.0).abs() < 0.01, "{m}");
}

/// Between min_th and max_th: three average levels.
#[test]
fn early_drop_fraction_matches_count_spacing_formula() {
    for (i, n) in [7usize, 10, 14].into_iter().enumerate() {
        check_level(false, false, n, 300_000, 11 + i as u64);
    }
}

/// Gentle mode: between max_th and 2·max_th, p_b rises from max_p to 1.
#[test]
fn gentle_mode_above_max_th() {
    for (i, n) in [16usize, 18].into_iter().enumerate() {
        check_level(true, false, n, 200_000, 21 + i as u64);
    }
    // Gentle: at 2·max_th and above every arrival is a forced drop; without
    // gentle already at max_th.
    for (gentle, n) in [(true, 31usize), (false, 16)] {
        let o = hold_queue(&cfg(gentle, false), n, 10_000, 5);
        assert_eq!(o.forced, o.arrivals, "gentle={gentle} n={n}");
        assert_eq!(o.early, 0);
    }
    // Below min_th nothing is dropped.
    let o = hold_queue(&cfg(false, false), 4, 50_000, 6);
    assert_eq!(o.early + o.forced, 0);
}

/// `wait = true` (ns-2 `wait_`): no drop until count·p_b ≥ 1.
#[test]
fn wait_variant_matches_formula() {
    for (i, n) in [7usize, 10, 14].into_iter().enumerate() {
        check_level(false, true, n, 300_000, 31 + i as u64);
    }
    // gentle + wait
    check_level(true, true, 20, 200_000, 41);
    // With wait, the smallest gap is ⌈1/p_b⌉ arrivals.
    let c = cfg(false, true);
    let o = hold_queue(&c, 10, 100_000, 9);
    let min_gap = (1.0 / p_b(o.avg)).ceil() as u64;
    assert!(
        o.gaps.iter().all(|&g| g >= min_gap),
        "a gap shorter than {min_gap}"
    );
}
