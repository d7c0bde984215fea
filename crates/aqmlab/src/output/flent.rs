//! A run as a flent data file (`run.flent.gz`), so that flent's plotting
//! and comparison tools (`flent -i run.flent.gz -p upload`) and scripts that
//! read flent results take aqmlab runs beside testbed runs.
//!
//! Format: flent's data file, version 4 (flent 2.x, `flent/resultset.py`,
//! "The Data File Format" in flent's documentation): gzipped JSON with the
//! keys `version`, `metadata`, `x_values`, `results` (series name → one
//! value or `null` per x value) and `raw_values` (series name → records
//! `{"t": time, "val": value, ...}` at the times they were measured).
//!
//! Mapping (flent's `tcp_nup` test, N upload streams; `NAME = "tcp_nup"`
//! and `TEST_PARAMETERS.upload_streams = N`, so flent's `tcp_nup` plots
//! apply):
//!
//! | flent series | aqmlab source | unit |
//! |---|---|---|
//! | `TCP upload::<k>` | the k-th flow (from 1) of `throughput.csv`; metadata `AQMLAB_STREAMS` maps each to its flow id, group and cc | Mbit/s |
//! | `TCP upload sum` / `avg` | sum / mean over those flows per bin | Mbit/s |
//! | `TCP upload fairness` | Jain's index over those flows per bin | index |
//! | `Queue delay (ms)::<link>` | `queues.csv` `delay_s` | ms |
//! | `Queue length (pkts)::<link>` | `queues.csv` `len_pkts` | packets |
//! | raw `tcp_cwnd`, `tcp_rtt` of `TCP upload::<k>` | `cwnd.csv` (traced flows) | segments, ms |
//!
//! The x values are the ends of the throughput bins (a bin's rate is
//! reported when the bin closes, as flent's netperf runner reports an
//! interval); a queue series takes the last sample at or before each x.
//! flent has no series for what a simulation knows exactly (drops by
//! reason, per-flow goodput): those stay in aqmlab's own tables. There is
//! no `Ping (ms) ICMP` series: aqmlab sends no ping, so flent's `totals`
//! and `ping` plots are empty; `upload`, `upload_with_ping_and_tcp_rtt`
//! (TCP RTT only) and the box plots work.
//!
//! Time: flent stamps a test with the wall-clock date; a simulation has
//! none, so `TIME` and `T0` are the Unix epoch and raw `t` values are
//! simulated seconds. The file is a pure function of the scenario and the
//! seed (the gzip header carries no time).

use crate::metrics::{jain, RunResult};
use serde_json::{json, Map, Value};
use std::io::Write;

/// Why a run cannot be written as a flent file.
pub const NEEDS_THROUGHPUT: &str =
    "flent's data is a time series of per-flow throughput: set `output.throughput_bin` (e.g. \"100ms\")";

/// The flent data file of `r` as JSON (`None` when the run recorded no
/// per-flow throughput series: see [`NEEDS_THROUGHPUT`]).
pub fn to_json(r: &RunResult) -> Option<Value> {
    let bin = r.throughput.first()?.bin_s;
    // Whole bins only: a last bin cut by the end of the run would read as
    // a drop in throughput.
    let whole = ((r.sim_seconds + 1e-9) / bin).floor() as usize;
    let bins = r.throughput.iter().map(|t| t.bytes.len()).max()?.min(whole);
    // Rounded to the nanosecond, the simulator's clock resolution.
    let x: Vec<f64> = (1..=bins)
        .map(|i| (i as f64 * bin * 1e9).round() / 1e9)
        .collect();
    let mut results = Map::new();
    let mut raw = Map::new();
    let mut per_bin: Vec<Vec<f64>> = vec![Vec::new(); bins];
    let mut streams = Map::new();
    for (k, t) in r.throughput.iter().enumerate() {
        let mbps: Vec<f64> = t.bytes[..t.bytes.len().min(bins)]
            .iter()
            .map(|b| *b as f64 * 8.0 / t.bin_s / 1e6)
            .collect();
        for (i, v) in mbps.iter().enumerate() {
            per_bin[i].push(*v);
        }
        // flent numbers a test's streams from 1 and plots only those its
        // test definition names (`upload_streams` of them).
        let name = format!("TCP upload::{}", k + 1);
        let f = r.flows.iter().find(|f| f.id == t.flow);
        streams.insert(
            name.clone(),
            json!({
                "flow": t.flow,
                "group": t.group,
                "cc": f.map(|f| f.cc.as_str()),
                "src": f.map(|f| f.src.as_str()),
                "dst": f.map(|f| f.dst.as_str()),
            }),
        );
        let mut col: Vec<Value> = mbps.iter().map(|v| json!(v)).collect();
        col.resize(bins, Value::Null);
        let mut recs: Vec<Value> = mbps
            .iter()
            .enumerate()
            .map(|(i, v)| json!({"t": x[i], "val": v}))
            .collect();
        if let Some(c) = r.cwnd.iter().find(|c| c.flow == t.flow) {
            recs.extend(c.samples.iter().map(|s| {
                let mut m = Map::new();
                m.insert("t".into(), json!(s.time_s));
                m.insert("tcp_cwnd".into(), json!(s.cwnd));
                if let Some(rtt) = s.srtt_s {
                    m.insert("tcp_rtt".into(), json!(rtt * 1e3));
                }
                Value::Object(m)
            }));
            // flent reads raw records in time order.
            recs.sort_by(|a, b| {
                let t = |v: &Value| v["t"].as_f64().unwrap_or(0.0);
                t(a).total_cmp(&t(b))
            });
        }
        results.insert(name.clone(), Value::Array(col));
        raw.insert(name, Value::Array(recs));
    }
    let agg = |f: &dyn Fn(&[f64]) -> f64| -> Value {
        Value::Array(per_bin.iter().map(|v| json!(f(v))).collect())
    };
    results.insert("TCP upload sum".into(), agg(&|v| v.iter().sum()));
    results.insert(
        "TCP upload avg".into(),
        agg(&|v| v.iter().sum::<f64>() / v.len().max(1) as f64),
    );
    results.insert("TCP upload fairness".into(), agg(&jain));
    for s in &r.series {
        let mut delay = Vec::with_capacity(bins);
        let mut len = Vec::with_capacity(bins);
        let mut k = 0;
        for xi in &x {
            // Last sample at or before xi (with a guard of a nanosecond
            // against the two grids' rounding).
            while k < s.samples.len() && s.samples[k].time_s <= xi + 1e-9 {
                k += 1;
            }
            match k.checked_sub(1).map(|j| &s.samples[j]) {
                Some(q) => {
                    delay.push(json!(q.delay_s * 1e3));
                    len.push(json!(q.len_pkts));
                }
                None => {
                    delay.push(Value::Null);
                    len.push(Value::Null);
                }
            }
        }
        results.insert(format!("Queue delay (ms)::{}", s.link), Value::Array(delay));
        results.insert(
            format!("Queue length (pkts)::{}", s.link),
            Value::Array(len),
        );
    }
    let epoch = "1970-01-01T00:00:00.000000Z";
    let hosts: Vec<&str> = r
        .flows
        .iter()
        .filter(|f| r.throughput.iter().any(|t| t.flow == f.id))
        .map(|f| f.dst.as_str())
        .collect();
    let metadata = json!({
        "NAME": "tcp_nup",
        "TITLE": r.scenario,
        "TIME": epoch,
        "T0": epoch,
        "LENGTH": r.sim_seconds,
        "TOTAL_LENGTH": r.sim_seconds,
        "STEP_SIZE": bin,
        "LOCAL_HOST": "aqmlab",
        "NOTE": format!("simulated by aqmlab {}, seed {}", env!("CARGO_PKG_VERSION"), r.seed),
        "IP_VERSION": 4,
        "HOST": hosts.first().copied().unwrap_or(""),
        "HOSTS": hosts,
        "TEST_PARAMETERS": {"upload_streams": r.throughput.len()},
        "DATA_FILENAME": "run.flent.gz",
        "AQMLAB_VERSION": env!("CARGO_PKG_VERSION"),
        "AQMLAB_SEED": r.seed,
        "AQMLAB_STREAMS": streams,
    });
    Some(json!({
        "version": 4,
        "metadata": metadata,
        "x_values": x,
        "results": results,
        "raw_values": raw,
    }))
}

/// `run.flent.gz`: [`to_json`] gzipped (deterministic: no time or name in
/// the gzip header).
pub fn encode(r: &RunResult) -> Option<std::io::Result<Vec<u8>>> {
    let v = to_json(r)?;
    let mut gz = flate2::GzBuilder::new().write(Vec::new(), flate2::Compression::default());
    Some(
        serde_json::to_writer(&mut gz, &v)
            .map_err(std::io::Error::other)
            .and_then(|_| gz.write_all(b"\n"))
            .and_then(|_| gz.finish()),
    )
}
