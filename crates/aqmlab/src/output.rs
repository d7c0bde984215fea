//! Writing a run's results: `summary.json`, `flows.csv`, `queues.csv` (time
//! series of the monitored queues) and `links.csv`. The schema is documented
//! in the README. Every file is a pure function of the scenario and the seed,
//! except `wall_seconds` in `summary.json`.

use crate::metrics::RunResult;
use std::fs;
use std::io::Write;
use std::path::Path;

/// Write all output files of `r` into `dir` (created if missing).
pub fn write_run(r: &RunResult, dir: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    // Buffered: serde_json writes token by token, which unbuffered costs a
    // system call each (seconds for a run with 10⁵ flows).
    let mut f = std::io::BufWriter::new(fs::File::create(dir.join("summary.json"))?);
    serde_json::to_writer_pretty(&mut f, r)?;
    writeln!(f)?;
    f.flush()?;
    write_flows(r, &dir.join("flows.csv"))?;
    write_queues(r, &dir.join("queues.csv"))?;
    write_links(r, &dir.join("links.csv"))?;
    if !r.cwnd.is_empty() {
        write_cwnd(r, &dir.join("cwnd.csv"))?;
    }
    if !r.throughput.is_empty() {
        let mut w = csv::Writer::from_path(dir.join("throughput.csv")).map_err(csv_err)?;
        w.write_record(["time_s", "flow", "group", "throughput_bps"])
            .map_err(csv_err)?;
        for t in &r.throughput {
            for (time, bps) in t.bps() {
                w.write_record([
                    format!("{time}"),
                    t.flow.to_string(),
                    t.group.clone(),
                    format!("{bps}"),
                ])
                .map_err(csv_err)?;
            }
        }
        w.flush()?;
    }
    if !r.requests.is_empty() {
        let mut w = csv::Writer::from_path(dir.join("requests.csv")).map_err(csv_err)?;
        for q in &r.requests {
            w.serialize(q).map_err(csv_err)?;
        }
        w.flush()?;
    }
    Ok(())
}

/// `cwnd.csv`: `time_s,flow,group,cc,cwnd,ssthresh,in_flight,srtt_s` for the
/// traced flows.
pub fn write_cwnd(r: &RunResult, path: &Path) -> std::io::Result<()> {
    let mut w = csv::Writer::from_path(path).map_err(csv_err)?;
    w.write_record([
        "time_s",
        "flow",
        "group",
        "cc",
        "cwnd",
        "ssthresh",
        "in_flight",
        "srtt_s",
    ])
    .map_err(csv_err)?;
    for t in &r.cwnd {
        for x in &t.samples {
            w.write_record([
                format!("{}", x.time_s),
                t.flow.to_string(),
                t.group.clone(),
                t.cc.clone(),
                format!("{:.4}", x.cwnd),
                x.ssthresh.map(|v| format!("{v:.4}")).unwrap_or_default(),
                x.in_flight.to_string(),
                x.srtt_s.map(|v| format!("{v}")).unwrap_or_default(),
            ])
            .map_err(csv_err)?;
        }
    }
    w.flush()
}

fn csv_err(e: csv::Error) -> std::io::Error {
    std::io::Error::other(e)
}

pub fn write_flows(r: &RunResult, path: &Path) -> std::io::Result<()> {
    let mut w = csv::Writer::from_path(path).map_err(csv_err)?;
    for f in &r.flows {
        w.serialize(f).map_err(csv_err)?;
    }
    if r.flows.is_empty() {
        w.write_record(["id"]).map_err(csv_err)?;
    }
    w.flush()
}

pub fn write_queues(r: &RunResult, path: &Path) -> std::io::Result<()> {
    let mut w = csv::Writer::from_path(path).map_err(csv_err)?;
    w.write_record([
        "time_s",
        "link",
        "len_pkts",
        "len_bytes",
        "avg_pkts",
        "delay_s",
        "arrivals",
        "dropped",
        "marked",
        "drop_rate",
        "mark_rate",
    ])
    .map_err(csv_err)?;
    for s in &r.series {
        let mut prev: Option<&crate::metrics::QueueSample> = None;
        for x in &s.samples {
            // Rates over the interval since the previous sample (empty on
            // the first sample and when nothing arrived).
            let (dr, mr) = match prev {
                Some(p) if x.arrivals > p.arrivals => {
                    let a = (x.arrivals - p.arrivals) as f64;
                    (
                        format!("{:.6}", (x.dropped - p.dropped) as f64 / a),
                        format!("{:.6}", (x.marked - p.marked) as f64 / a),
                    )
                }
                _ => (String::new(), String::new()),
            };
            prev = Some(x);
            w.write_record([
                format!("{}", x.time_s),
                s.link.clone(),
                x.len_pkts.to_string(),
                x.len_bytes.to_string(),
                x.avg_pkts.map(|a| format!("{a:.6}")).unwrap_or_default(),
                format!("{}", x.delay_s),
                x.arrivals.to_string(),
                x.dropped.to_string(),
                x.marked.to_string(),
                dr,
                mr,
            ])
            .map_err(csv_err)?;
        }
    }
    w.flush()
}

pub fn write_links(r: &RunResult, path: &Path) -> std::io::Result<()> {
    let mut w = csv::Writer::from_path(path).map_err(csv_err)?;
    w.write_record([
        "link",
        "from",
        "to",
        "rate_bps",
        "delay_s",
        "tx_packets",
        "tx_bytes",
        "utilization",
        "lost",
        "kind",
        "enqueued",
        "dropped",
        "dropped_early",
        "dropped_forced",
        "dropped_overflow",
        "marked",
        "mean_len_pkts",
        "mean_delay_s",
        "p50_delay_s",
        "p99_delay_s",
    ])
    .map_err(csv_err)?;
    for (l, q) in r.links.iter().zip(&r.queues) {
        w.write_record([
            l.link.clone(),
            l.from.clone(),
            l.to.clone(),
            l.rate_bps.to_string(),
            l.delay_s.to_string(),
            l.tx_packets.to_string(),
            l.tx_bytes.to_string(),
            l.utilization.to_string(),
            l.lost.to_string(),
            q.kind.clone(),
            q.enqueued.to_string(),
            q.dropped.to_string(),
            q.dropped_early.to_string(),
            q.dropped_forced.to_string(),
            q.dropped_overflow.to_string(),
            q.marked.to_string(),
            q.mean_len_pkts.to_string(),
            q.mean_delay_s.to_string(),
            q.p50_delay_s.to_string(),
            q.p99_delay_s.to_string(),
        ])
        .map_err(csv_err)?;
    }
    w.flush()
}
