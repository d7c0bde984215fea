//! Physical invariants of a run's results: what no correct simulation of
//! the scenario can report. The in-repo fuzzer checks them on every case
//! it runs, and a property test on random scenarios; the definitions they
//! rest on are in `docs/src/reference/metrics.md`.
//!
//! - a flow's goodput ≤ the narrowest link of its path (over its life: all
//!   the bytes it counts crossed that link in it); a flow measured from a
//!   window it was already alive at, ≤ its receiver's incoming link plus
//!   one packet over the window (it counts the bytes received in the
//!   window);
//! - the bytes all flows crossing one link delivered in the interval ≤
//!   that link's rate × the interval (flows alive at a window's start are
//!   counted on their last link only, plus one packet each);
//! - a shaper (CAKE's `bandwidth`) charged at most its rate × the run's
//!   length plus one packet;
//! - a throughput bin ≤ the receiver's incoming link rate plus one packet
//!   per bin;
//! - utilisation in [0, 1], and no floating-point residue: 0, or at least
//!   1 ns of busy time over the interval;
//! - every delay and time ≥ 0; no NaN or infinity anywhere in the results
//!   (`summary.json` and every CSV are written from them);
//! - packet conservation.
//!
//! "One packet" is the largest packet the scenario can send (its largest
//! MSS or CBR packet plus its largest header and options), a tolerance for
//! the one transmission that straddles an interval's edge.

use super::RunResult;
use crate::net::packet::FlowId;
use crate::scenario::paths::Topology;
use crate::scenario::Scenario;
use crate::tcp::TcpParams;
use std::collections::HashMap;

/// Relative slack for floating-point rounding in the comparisons.
const EPS: f64 = 1e-9;

/// The largest packet the scenario sends, bytes (payload + headers and
/// options).
fn largest_packet(sc: &Scenario) -> f64 {
    let mut most = 0u32;
    let mut take = |p: &TcpParams| most = most.max(p.mss + p.header_bytes + 60);
    let mut g = TcpParams::default();
    g.apply(&sc.tcp);
    take(&g);
    for i in 0..sc.flows.len() {
        take(&sc.tcp_params(i));
    }
    for w in &sc.workloads {
        if let Some(o) = w.tcp_options() {
            let mut p = g.clone();
            p.apply(o);
            take(&p);
        }
    }
    for f in &sc.flows {
        if let Some(c) = &f.cbr {
            most = most.max(c.packet_size + g.header_bytes + 60);
        }
    }
    most as f64
}

/// Check `r`, the results of `sc` run with `seed`; the error names the
/// figure, its value and the bound it broke.
pub fn check(sc: &Scenario, seed: u64, r: &RunResult) -> Result<(), String> {
    finite(r)?;
    if !r.conservation.holds() {
        return Err(format!("packet conservation: {:?}", r.conservation));
    }
    let topo = Topology::build(sc, seed);
    // the highest rate a link direction offers (its rate, or the peak of
    // its schedule or trace); the topology holds `[[links]]` entry i as
    // directions 2i and 2i + 1 (computed once: a trace's peak is a scan
    // of the whole trace, and every flow's path asks for its links')
    let rates: Vec<f64> = (0..topo.links.len())
        .map(|li| sc.peak_rate(li / 2, topo.links[li].ab) as f64)
        .collect();
    let rate = |li: usize| rates[li];
    let pkt_bits = 8.0 * largest_packet(sc);
    let t0 = r.warmup_s.unwrap_or(0.0);
    let span = r.sim_seconds - t0;
    if span.is_nan() || span < 0.0 {
        return Err(format!(
            "interval: sim_seconds {} before warmup_s {t0}",
            r.sim_seconds
        ));
    }
    // bytes delivered in the interval per link
    let mut into: HashMap<usize, (f64, f64)> = HashMap::new(); // link -> (bits, slack bits)
    let mut last_link = vec![None; r.flows.len()];
    for (i, f) in r.flows.iter().enumerate() {
        let (Some(&s), Some(&d)) = (topo.ids.get(f.src.as_str()), topo.ids.get(f.dst.as_str()))
        else {
            return Err(format!(
                "flows[{i}]: unknown nodes `{}`, `{}`",
                f.src, f.dst
            ));
        };
        let Ok(path) = topo.trace(s, d, FlowId(f.id)) else {
            return Err(format!("flows[{i}]: no path {} -> {}", f.src, f.dst));
        };
        let (Some(&last), Some(c_min)) = (
            path.last(),
            path.iter().map(|&li| rate(li)).reduce(f64::min),
        ) else {
            continue;
        };
        last_link[i] = Some(last);
        let windowed = r.warmup_s.is_some() && f.start_s < t0;
        if f.goodput_bps < 0.0 {
            return Err(format!("flows[{i}].goodput_bps = {} < 0", f.goodput_bps));
        }
        let e = into.entry(last).or_default();
        if windowed {
            let bound = rate(last) * (1.0 + EPS) + pkt_bits / span;
            if f.goodput_bps > bound {
                return Err(format!(
                    "flows[{i}] (group `{}`, alive at the window's start): goodput_bps {} above its receiver's link {} bit/s + one packet over the {span} s window",
                    f.group, f.goodput_bps, rate(last)
                ));
            }
            e.0 += f.goodput_bps * span;
            e.1 += pkt_bits;
        } else {
            // every link of the path carried all of it in the interval
            for &li in &path[..path.len() - 1] {
                into.entry(li).or_default().0 += f.bytes_acked as f64 * 8.0;
            }
            let e = into.entry(last).or_default();
            if f.goodput_bps > c_min * (1.0 + EPS) {
                return Err(format!(
                    "flows[{i}] (group `{}`): goodput_bps {} above the narrowest link of its path, {c_min} bit/s",
                    f.group, f.goodput_bps
                ));
            }
            e.0 += f.bytes_acked as f64 * 8.0;
        }
    }
    for (li, (bits, slack)) in into {
        let bound = rate(li) * span * (1.0 + EPS) + slack;
        if bits > bound {
            let l = &topo.links[li];
            return Err(format!(
                "link {} -> {}: the flows crossing it delivered {bits} bits in {span} s, above its {} bit/s",
                topo.names[l.from.ix()],
                topo.names[l.to.ix()],
                rate(li)
            ));
        }
    }
    for t in &r.throughput {
        let Some(li) = last_link.get(t.flow as usize).copied().flatten() else {
            continue;
        };
        let bound = rate(li) * (1.0 + EPS) + pkt_bits / t.bin_s;
        for (k, (at, bps)) in t.bps().enumerate() {
            if !(0.0..=bound).contains(&bps) {
                return Err(format!(
                    "throughput of flow {} (group `{}`), bin {k} at {at} s: {bps} bit/s, above its receiver's link {} bit/s + one packet per bin",
                    t.flow,
                    t.group,
                    rate(li)
                ));
            }
        }
    }
    for l in &r.links {
        let u = l.utilization;
        if !(0.0..=1.0).contains(&u) || (u > 0.0 && u * span < 1e-9 * (1.0 - EPS)) {
            return Err(format!(
                "link {}: utilization {u} outside [0, 1] or below 1 ns of busy time in {span} s",
                l.link
            ));
        }
    }
    shapers(sc, r)?;
    event_log(sc, r)?;
    delays(r)
}

/// A shaping discipline (CAKE's `bandwidth`) that reports its rate and the
/// bytes it charged since the start (`shaper_rate_bps`, `shaper_bytes`,
/// lengths after overhead compensation) charged at most the rate × the
/// run's length plus one packet: each packet waits until the previous
/// ones' time at the rate has passed.
fn shapers(sc: &Scenario, r: &RunResult) -> Result<(), String> {
    let slack = 8.0 * (largest_packet(sc) + 256.0);
    for q in &r.queues {
        let (Some(&rate), Some(&bytes)) =
            (q.stats.get("shaper_rate_bps"), q.stats.get("shaper_bytes"))
        else {
            continue;
        };
        let bound = rate * r.sim_seconds * (1.0 + EPS) + slack;
        if bytes * 8.0 > bound {
            return Err(format!(
                "queue {}: its shaper charged {bytes} bytes in {} s, above its {rate} bit/s",
                q.link, r.sim_seconds
            ));
        }
    }
    Ok(())
}

/// The event log agrees with the queues' counters: per logged port, its
/// enqueues, dequeues, drops and marks are the counters' (when the log
/// holds every flow's events over the whole run, none lost), its records
/// are in time order within the run, a sojourn is never longer than the
/// time since the start.
fn event_log(sc: &Scenario, r: &RunResult) -> Result<(), String> {
    let Some(log) = &r.event_log else {
        return Ok(());
    };
    let end = (r.sim_seconds * 1e9).round() as u64;
    let mut last = 0;
    let mut per: HashMap<u32, [u64; 4]> = HashMap::new();
    for (i, x) in log.records.iter().enumerate() {
        if x.t < last || x.t > end || x.sojourn > x.t {
            return Err(format!(
                "event log record {i}: time {} ns after {last} ns or past the end {end} ns, or sojourn {} ns longer than the time",
                x.t, x.sojourn
            ));
        }
        last = x.t;
        per.entry(x.link).or_default()[x.event as usize] += 1;
    }
    if log.lost > 0 || r.warmup_s.is_some() || !sc.output.log_flows.is_empty() {
        return Ok(());
    }
    for (&li, c) in &per {
        let Some(q) = r.queues.get(li as usize) else {
            return Err(format!("event log: link id {li} has no queue"));
        };
        let want = [q.enqueued, q.dequeued, q.dropped, q.marked];
        if *c != want {
            return Err(format!(
                "event log of {}: (enqueue, dequeue, drop, mark) = {c:?}, counters {want:?}",
                q.link
            ));
        }
    }
    Ok(())
}

/// Every delay and time ≥ 0.
fn delays(r: &RunResult) -> Result<(), String> {
    let neg = |what: String, v: f64| {
        if v < 0.0 {
            Err(format!("{what} = {v} < 0"))
        } else {
            Ok(())
        }
    };
    for q in &r.queues {
        for (k, v) in [
            ("mean_delay_s", q.mean_delay_s),
            ("p50_delay_s", q.p50_delay_s),
            ("p99_delay_s", q.p99_delay_s),
            ("max_delay_s", q.max_delay_s),
            ("mean_len_pkts", q.mean_len_pkts),
            ("mean_len_bytes", q.mean_len_bytes),
        ] {
            neg(format!("queue {} {k}", q.link), v)?;
        }
    }
    for f in &r.flows {
        for (k, v) in [
            ("mean_owd_s", f.mean_owd_s),
            ("max_owd_s", f.max_owd_s),
            ("completion_s", f.completion_s),
            ("srtt_s", f.srtt_s),
        ] {
            neg(format!("flow {} {k}", f.id), v.unwrap_or(0.0))?;
        }
    }
    for q in &r.requests {
        for (k, v) in [
            ("response_time_s", q.response_time_s),
            ("completion_s", q.completion_s),
            ("total_s", q.total_s),
        ] {
            neg(
                format!("request {} of `{}` {k}", q.id, q.workload),
                v.unwrap_or(0.0),
            )?;
        }
    }
    for s in &r.series {
        for x in &s.samples {
            neg(
                format!("queue sample of {} at {} s: delay_s", s.link, x.time_s),
                x.delay_s,
            )?;
        }
    }
    Ok(())
}

/// No NaN or infinity in any value of the results: they are walked as the
/// serialiser sees them (a TOML tree keeps a NaN a float, where JSON would
/// write `null` and hide it).
fn finite(r: &RunResult) -> Result<(), String> {
    fn walk(v: &toml::Value, at: &mut String) -> Result<(), String> {
        match v {
            toml::Value::Float(x) if !x.is_finite() => Err(format!("{at} = {x}")),
            toml::Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    let n = at.len();
                    at.push_str(&format!("[{i}]"));
                    walk(x, at)?;
                    at.truncate(n);
                }
                Ok(())
            }
            toml::Value::Table(t) => {
                for (k, x) in t {
                    let n = at.len();
                    at.push('.');
                    at.push_str(k);
                    walk(x, at)?;
                    at.truncate(n);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
    let tree = toml::Value::try_from(r).map_err(|e| format!("results not serialisable: {e}"))?;
    walk(&tree, &mut String::new()).map_err(|m| format!("not finite: {m}"))
}
