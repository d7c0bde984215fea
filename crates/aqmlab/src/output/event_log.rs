//! The event log's file: `events.csv` or `events.parquet`, one row per
//! logged packet event (`net/event_log.rs`), with the columns
//!
//! `label, seed, time_s, link, event, reason, flow, group, seq, size, ecn,
//! qlen_pkts, qlen_bytes, sojourn_s`
//!
//! `reason` is empty for enqueues and dequeues; `sojourn_s` is the time
//! the packet spent in this queue (0 for an arrival's events); `qlen_*` is
//! the queue just after the event. Parquet (Apache Parquet, written with
//! the `parquet` crate's column writers, Snappy-compressed) holds the same
//! columns, `time_s`/`sojourn_s` as doubles, counts as 64-bit integers,
//! names as UTF-8 strings.

use super::RunId;
use crate::metrics::RunResult;
use crate::net::event_log::{EventLog, LogReason, LogRecord};
use crate::net::packet::Ecn;
use std::io::Write;
use std::path::Path;

/// The column names, in order.
pub const COLUMNS: [&str; 14] = [
    "label",
    "seed",
    "time_s",
    "link",
    "event",
    "reason",
    "flow",
    "group",
    "seq",
    "size",
    "ecn",
    "qlen_pkts",
    "qlen_bytes",
    "sojourn_s",
];

/// The file name of a log in `format`.
pub fn file_name(log: &EventLog) -> &'static str {
    match log.format {
        crate::net::event_log::FileFormat::Csv => "events.csv",
        crate::net::event_log::FileFormat::Parquet => "events.parquet",
    }
}

fn ecn_name(e: Ecn) -> &'static str {
    match e {
        Ecn::NotEct => "not-ect",
        Ecn::Ect0 => "ect0",
        Ecn::Ect1 => "ect1",
        Ecn::Ce => "ce",
    }
}

/// Names of a record's link, group and reason.
struct Names<'a> {
    r: &'a RunResult,
}

impl<'a> Names<'a> {
    fn link(&self, x: &LogRecord) -> &'a str {
        self.r
            .links
            .get(x.link as usize)
            .map_or("", |l| l.link.as_str())
    }
    fn group(&self, x: &LogRecord) -> &'a str {
        (self.r.flows.get(x.flow as usize))
            .filter(|f| f.id == x.flow)
            .map_or("", |f| f.group.as_str())
    }
    fn reason(&self, x: &LogRecord) -> &'a str {
        let kind = self
            .r
            .queues
            .get(x.link as usize)
            .map_or("", |q| q.kind.as_str());
        match x.reason {
            LogReason::Disc => kind,
            other => other.name(""),
        }
    }
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// Write `log` as CSV.
pub fn write_csv(r: &RunResult, log: &EventLog, id: &RunId, path: &Path) -> std::io::Result<()> {
    let f = std::fs::File::create(path)?;
    write_csv_to(r, log, id, std::io::BufWriter::new(f))
}

/// The run's event log as the CSV text `events.csv` holds, whatever its
/// format (the Python package reads it without pyarrow); `None` without a
/// log.
pub fn csv_bytes(r: &RunResult) -> std::io::Result<Option<Vec<u8>>> {
    let Some(log) = &r.event_log else {
        return Ok(None);
    };
    let id = RunId {
        label: r.scenario.clone(),
        seed: r.seed,
    };
    let mut buf = Vec::new();
    write_csv_to(r, log, &id, &mut buf)?;
    Ok(Some(buf))
}

/// Write `log` as CSV into `sink`.
fn write_csv_to<W: Write>(
    r: &RunResult,
    log: &EventLog,
    id: &RunId,
    sink: W,
) -> std::io::Result<()> {
    let mut w = (csv::WriterBuilder::new().has_headers(false)).from_writer(sink);
    w.write_record(COLUMNS).map_err(std::io::Error::other)?;
    // The rows serialise as tuples (shortest round-trip floats).
    let names = Names { r };
    for x in &log.records {
        let row = (
            id.label.as_str(),
            id.seed,
            secs(x.t),
            names.link(x),
            x.event.name(),
            names.reason(x),
            x.flow,
            names.group(x),
            x.seq,
            x.size,
            ecn_name(x.ecn),
            x.qlen_pkts,
            x.qlen_bytes,
            secs(x.sojourn),
        );
        w.serialize(row).map_err(std::io::Error::other)?;
    }
    let mut inner = w
        .into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    inner.flush()
}

/// Rows per Parquet row group.
const ROW_GROUP: usize = 1 << 17;

enum Col {
    S(Vec<parquet::data_type::ByteArray>),
    I(Vec<i64>),
    D(Vec<f64>),
}

/// Write `log` as Parquet: one row group per [`ROW_GROUP`] rows.
pub fn write_parquet(
    r: &RunResult,
    log: &EventLog,
    id: &RunId,
    path: &Path,
) -> std::io::Result<()> {
    use super::columnar::pq_err as pq;
    use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
    use parquet::schema::parser::parse_message_type;
    use std::sync::Arc;

    let schema = "message events {
        REQUIRED BYTE_ARRAY label (UTF8);
        REQUIRED INT64 seed;
        REQUIRED DOUBLE time_s;
        REQUIRED BYTE_ARRAY link (UTF8);
        REQUIRED BYTE_ARRAY event (UTF8);
        REQUIRED BYTE_ARRAY reason (UTF8);
        REQUIRED INT64 flow;
        REQUIRED BYTE_ARRAY group (UTF8);
        REQUIRED INT64 seq;
        REQUIRED INT64 size;
        REQUIRED BYTE_ARRAY ecn (UTF8);
        REQUIRED INT64 qlen_pkts;
        REQUIRED INT64 qlen_bytes;
        REQUIRED DOUBLE sojourn_s;
    }";
    let schema = Arc::new(parse_message_type(schema).map_err(pq)?);
    let mut w = super::columnar::create(path, schema)?;
    let label = ByteArray::from(id.label.as_str());
    // The seed is at most 2^63 - 1 (the scenario's bound).
    let seed = id.seed.min(i64::MAX as u64) as i64;
    // Each distinct string becomes one ByteArray, shared by reference.
    let mut interned: std::collections::HashMap<&str, ByteArray> = Default::default();
    let mut strs =
        |chunk: &[LogRecord], f: &dyn Fn(&LogRecord) -> &'static str| -> Vec<ByteArray> {
            (chunk.iter())
                .map(|x| {
                    let s = f(x);
                    interned
                        .entry(s)
                        .or_insert_with(|| ByteArray::from(s))
                        .clone()
                })
                .collect()
        };
    let links: Vec<ByteArray> = r
        .links
        .iter()
        .map(|l| ByteArray::from(l.link.as_str()))
        .collect();
    let groups: Vec<ByteArray> = r
        .flows
        .iter()
        .map(|f| ByteArray::from(f.group.as_str()))
        .collect();
    let kinds: Vec<ByteArray> = r
        .queues
        .iter()
        .map(|q| ByteArray::from(q.kind.as_str()))
        .collect();
    let empty = ByteArray::from("");
    let pick =
        |v: &[ByteArray], i: u32| v.get(i as usize).cloned().unwrap_or_else(|| empty.clone());
    for chunk in log.records.chunks(ROW_GROUP) {
        let mut g = w.next_row_group().map_err(pq)?;
        let n = chunk.len();
        let ints = |f: &dyn Fn(&LogRecord) -> u64| -> Vec<i64> {
            (chunk.iter())
                .map(|x| f(x).min(i64::MAX as u64) as i64)
                .collect()
        };
        let dbls = |f: &dyn Fn(&LogRecord) -> u64| -> Vec<f64> {
            chunk.iter().map(|x| secs(f(x))).collect()
        };
        // One column at a time: built, written, dropped.
        for j in 0..COLUMNS.len() {
            let mut c = g.next_column().map_err(pq)?.ok_or_else(|| {
                std::io::Error::other("parquet: fewer columns in the schema than written")
            })?;
            let s = |v: Vec<ByteArray>| Col::S(v);
            let col = match j {
                0 => s(vec![label.clone(); n]),
                1 => Col::I(vec![seed; n]),
                2 => Col::D(dbls(&|x| x.t)),
                3 => s(chunk.iter().map(|x| pick(&links, x.link)).collect()),
                4 => s(strs(chunk, &|x| x.event.name())),
                5 => s((chunk.iter())
                    .map(|x| match x.reason {
                        LogReason::Disc => pick(&kinds, x.link),
                        other => other.name("").into(),
                    })
                    .collect()),
                6 => Col::I(ints(&|x| x.flow as u64)),
                7 => s((chunk.iter())
                    .map(|x| match r.flows.get(x.flow as usize) {
                        Some(f) if f.id == x.flow => pick(&groups, x.flow),
                        _ => empty.clone(),
                    })
                    .collect()),
                8 => Col::I(ints(&|x| x.seq as u64)),
                9 => Col::I(ints(&|x| x.size as u64)),
                10 => s(strs(chunk, &|x| ecn_name(x.ecn))),
                11 => Col::I(ints(&|x| x.qlen_pkts as u64)),
                12 => Col::I(ints(&|x| x.qlen_bytes)),
                _ => Col::D(dbls(&|x| x.sojourn)),
            };
            match col {
                Col::S(v) => c.typed::<ByteArrayType>().write_batch(&v, None, None),
                Col::I(v) => c.typed::<Int64Type>().write_batch(&v, None, None),
                Col::D(v) => c.typed::<DoubleType>().write_batch(&v, None, None),
            }
            .map_err(pq)?;
            c.close().map_err(pq)?;
        }
        g.close().map_err(pq)?;
    }
    w.close().map_err(pq)?;
    Ok(())
}

/// Write the log in its scenario's format.
pub fn write(r: &RunResult, log: &EventLog, id: &RunId, path: &Path) -> std::io::Result<()> {
    match log.format {
        crate::net::event_log::FileFormat::Csv => write_csv(r, log, id, path),
        crate::net::event_log::FileFormat::Parquet => write_parquet(r, log, id, path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::event_log::LogEvent;

    #[test]
    fn event_and_reason_names_are_the_documented_ones() {
        let names: Vec<&str> = [
            LogEvent::Enqueue,
            LogEvent::Dequeue,
            LogEvent::Drop,
            LogEvent::Mark,
        ]
        .iter()
        .map(|e| e.name())
        .collect();
        assert_eq!(names, ["enqueue", "dequeue", "drop", "mark"]);
        assert_eq!(LogReason::Tail.name("red"), "tail");
        assert_eq!(LogReason::Disc.name("codel"), "codel");
    }
}
