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
        crate::net::event_log::LogFormat::Csv => "events.csv",
        crate::net::event_log::LogFormat::Parquet => "events.parquet",
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
    let mut w =
        (csv::WriterBuilder::new().has_headers(false)).from_writer(std::io::BufWriter::new(f));
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

/// Write `log` as Parquet: one row group per 2^20 rows.
pub fn write_parquet(
    r: &RunResult,
    log: &EventLog,
    id: &RunId,
    path: &Path,
) -> std::io::Result<()> {
    use parquet::basic::Compression;
    use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    use std::sync::Arc;

    let pq = |e: parquet::errors::ParquetError| std::io::Error::other(e.to_string());
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
    let props = Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("aqmlab {}", env!("CARGO_PKG_VERSION")))
            .build(),
    );
    let f = std::fs::File::create(path)?;
    let mut w = SerializedFileWriter::new(f, schema, props).map_err(pq)?;
    let names = Names { r };
    let label = ByteArray::from(id.label.as_str());
    // The seed is at most 2^63 - 1 (the scenario's bound).
    let seed = id.seed.min(i64::MAX as u64) as i64;
    for chunk in log.records.chunks(1 << 20) {
        let mut g = w.next_row_group().map_err(pq)?;
        let n = chunk.len();
        let strs = |f: &dyn Fn(&LogRecord) -> &'static str| strs_of(chunk, f);
        let ints = |f: &dyn Fn(&LogRecord) -> u64| -> Vec<i64> {
            chunk
                .iter()
                .map(|x| f(x).min(i64::MAX as u64) as i64)
                .collect()
        };
        let dbls = |f: &dyn Fn(&LogRecord) -> u64| -> Vec<f64> {
            chunk.iter().map(|x| secs(f(x))).collect()
        };
        enum Col {
            S(Vec<ByteArray>),
            I(Vec<i64>),
            D(Vec<f64>),
        }
        let cols = [
            Col::S(vec![label.clone(); n]),
            Col::I(vec![seed; n]),
            Col::D(dbls(&|x| x.t)),
            Col::S(strs_of(chunk, |x| names.link(x))),
            Col::S(strs(&|x| x.event.name())),
            Col::S(strs_of(chunk, |x| names.reason(x))),
            Col::I(ints(&|x| x.flow as u64)),
            Col::S(strs_of(chunk, |x| names.group(x))),
            Col::I(ints(&|x| x.seq as u64)),
            Col::I(ints(&|x| x.size as u64)),
            Col::S(strs(&|x| ecn_name(x.ecn))),
            Col::I(ints(&|x| x.qlen_pkts as u64)),
            Col::I(ints(&|x| x.qlen_bytes)),
            Col::D(dbls(&|x| x.sojourn)),
        ];
        for col in cols {
            let mut c = g.next_column().map_err(pq)?.ok_or_else(|| {
                std::io::Error::other("parquet: fewer columns in the schema than written")
            })?;
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

fn strs_of<'s>(
    chunk: &[LogRecord],
    f: impl Fn(&LogRecord) -> &'s str,
) -> Vec<parquet::data_type::ByteArray> {
    chunk.iter().map(|x| f(x).into()).collect()
}

/// Write the log in its scenario's format.
pub fn write(r: &RunResult, log: &EventLog, id: &RunId, path: &Path) -> std::io::Result<()> {
    match log.format {
        crate::net::event_log::LogFormat::Csv => write_csv(r, log, id, path),
        crate::net::event_log::LogFormat::Parquet => write_parquet(r, log, id, path),
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
