//! The per-packet event log of a port: every enqueue, dequeue (with its
//! sojourn), drop (with its reason) and CE mark, for the ports and flows
//! a scenario names in `[output] log` and `log_flows` (ns-3's queue-disc
//! trace sources `Enqueue`, `Dequeue`, `Drop` with a reason and `Mark`).
//!
//! A logged port keeps its records in its own [`PortLog`], in the logical
//! process that owns the port; `Simulation::collect` merges them by time
//! (then link, then order within the port), so the log is the same whatever
//! the thread count. A port without a log pays one test of a pointer that
//! the enqueue path reads anyway (`Port::edge`).
//!
//! Reasons (column `reason`):
//! - `tail`: the arrival met a full buffer ([`DropCause::Overflow`]);
//! - `head`: a queued packet dropped to make room for an arrival
//!   ([`DropCause::Overflow`] of a packet other than the arrival: FQ-CoDel
//!   and CAKE drop from the head of the fattest queue);
//! - `early`, `forced`: RED-family probabilistic and forced drops;
//! - the discipline's kind (`codel`, `fq_codel`, `pie`, ...): a drop the
//!   discipline's own law decided ([`DropCause::Aqm`]) and every CE mark;
//! - `link_down`: the port's link went down ([`DropCause::LinkDown`]) while
//!   the packet was queued, being serialised or propagating on it (its
//!   `sojourn` is then the time since it entered the queue).
//!
//! A mark is logged for the packet the discipline was handling when it
//! marked: the arrival (enqueue-time markers: RED, PIE, step) or the
//! departing packet (dequeue-time markers: CoDel and its kin). MarkMax,
//! which marks a queued packet on an arrival, is logged against the
//! arrival.

use crate::aqm::DropCause;
use crate::engine::Time;
use crate::net::packet::{Ecn, Packet};

/// File format of the result tables and the event log (`[output] format`,
/// `log_format`): chosen by the scenario or the command, never by a
/// table's size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileFormat {
    #[default]
    Csv,
    Parquet,
}

/// What `format = "auto"` is told: the form is never chosen by size.
pub const AUTO_REFUSED: &str = "`auto` is not a format: every table is CSV unless the \
     scenario or the command asks for \"parquet\"; allowed: \"csv\" (the default), \"parquet\"";

impl<'de> serde::Deserialize<'de> for FileFormat {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        // a value of another type is named with the allowed names, as
        // every name-only key's (`registry`)
        let s = match toml::Value::deserialize(d)? {
            toml::Value::String(s) => s,
            v => {
                return Err(D::Error::custom(format!(
                    "expected one of `csv`, `parquet` (a string), got {} {}",
                    v.type_str(),
                    crate::echo::echo(&v.to_string())
                )))
            }
        };
        match s.as_str() {
            "csv" => Ok(FileFormat::Csv),
            "parquet" => Ok(FileFormat::Parquet),
            "auto" => Err(D::Error::custom(AUTO_REFUSED)),
            other => Err(D::Error::unknown_variant(other, &["csv", "parquet"])),
        }
    }
}

/// What happened to a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum LogEvent {
    Enqueue = 0,
    Dequeue = 1,
    Drop = 2,
    Mark = 3,
}

impl LogEvent {
    pub fn name(self) -> &'static str {
        match self {
            LogEvent::Enqueue => "enqueue",
            LogEvent::Dequeue => "dequeue",
            LogEvent::Drop => "drop",
            LogEvent::Mark => "mark",
        }
    }
}

/// Why a packet was dropped or marked (see the module's list).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum LogReason {
    None = 0,
    Tail = 1,
    Head = 2,
    Early = 3,
    Forced = 4,
    /// The discipline's own law; written as the discipline's kind.
    Disc = 5,
    /// The link went down (`[[events]]` `down = true`).
    LinkDown = 6,
}

impl LogReason {
    fn of_drop(cause: DropCause, arrival: bool) -> Self {
        match cause {
            DropCause::Overflow if arrival => LogReason::Tail,
            DropCause::Overflow => LogReason::Head,
            DropCause::Early => LogReason::Early,
            DropCause::Forced => LogReason::Forced,
            DropCause::Aqm => LogReason::Disc,
            DropCause::LinkDown => LogReason::LinkDown,
        }
    }

    /// The reason's name; `kind` is the discipline's kind.
    pub fn name(self, kind: &'static str) -> &'static str {
        match self {
            LogReason::None => "",
            LogReason::Tail => "tail",
            LogReason::Head => "head",
            LogReason::Early => "early",
            LogReason::Forced => "forced",
            LogReason::Disc => kind,
            LogReason::LinkDown => "link_down",
        }
    }
}

/// One logged event. 48 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogRecord {
    pub t: Time,
    /// Sojourn in this queue (dequeue, and drops of queued packets), ns.
    pub sojourn: Time,
    /// Bytes in the queue just after the event.
    pub qlen_bytes: u64,
    /// Global link id of the port.
    pub link: u32,
    pub flow: u32,
    /// Segment number (data) or cumulative ACK (pure ACKs).
    pub seq: u32,
    pub size: u32,
    /// Packets in the queue just after the event.
    pub qlen_pkts: u32,
    pub event: LogEvent,
    pub reason: LogReason,
    /// The packet's ECN codepoint after the event.
    pub ecn: Ecn,
}

/// The log of one port.
#[derive(Clone, Debug)]
pub struct PortLog {
    link: u32,
    /// Flows to log, by id (`None`: every flow). Flows created during the
    /// run (workloads) beyond the vector's end are not logged.
    flows: Option<Vec<bool>>,
    /// Most records kept; later events are counted in `lost` only.
    cap: usize,
    pub records: Vec<LogRecord>,
    /// Events not kept because `cap` was reached.
    pub lost: u64,
}

impl PortLog {
    pub fn new(link: u32, flows: Option<Vec<bool>>, cap: usize) -> Self {
        PortLog {
            link,
            flows,
            cap,
            records: Vec::new(),
            lost: 0,
        }
    }

    #[inline]
    fn wants(&self, p: &Packet) -> bool {
        match &self.flows {
            None => true,
            Some(f) => f.get(p.flow.0 as usize).copied().unwrap_or(false),
        }
    }

    /// Record `event` for `p` at `now` with the queue at `(pkts, bytes)`.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        now: Time,
        p: &Packet,
        event: LogEvent,
        reason: LogReason,
        sojourn: Time,
        pkts: usize,
        bytes: u64,
    ) {
        if !self.wants(p) {
            return;
        }
        if self.records.len() >= self.cap {
            self.lost += 1;
            return;
        }
        self.records.push(LogRecord {
            t: now,
            sojourn,
            qlen_bytes: bytes,
            link: self.link,
            flow: p.flow.0,
            seq: if p.is_data() { p.seq } else { p.ack },
            size: p.size,
            qlen_pkts: pkts.min(u32::MAX as usize) as u32,
            event,
            reason,
            ecn: p.ecn,
        });
    }

    /// Record the drop of `p` for `cause`; `arrival` when `p` was the
    /// packet being offered.
    #[inline]
    pub fn record_drop(
        &mut self,
        now: Time,
        p: &Packet,
        cause: DropCause,
        arrival: bool,
        q: (usize, u64),
    ) {
        let sojourn = if arrival {
            0
        } else {
            now.saturating_sub(p.enq_time)
        };
        let reason = LogReason::of_drop(cause, arrival);
        self.record(now, p, LogEvent::Drop, reason, sojourn, q.0, q.1);
    }
}

/// The merged log of a run: records of every logged port, by time, then
/// link, then the order in which the port saw them.
#[derive(Clone, Debug, Default)]
pub struct EventLog {
    pub records: Vec<LogRecord>,
    /// Events not kept because a port's cap was reached.
    pub lost: u64,
    /// The most records a port kept (`[output] log_max_events`).
    pub cap: u64,
    pub format: FileFormat,
}

impl EventLog {
    /// Merge the ports' logs (each in its own time order).
    pub fn merge(logs: Vec<&PortLog>, cap: u64, format: FileFormat) -> EventLog {
        let mut records: Vec<LogRecord> = logs
            .iter()
            .flat_map(|l| l.records.iter().copied())
            .collect();
        // Stable: records of one port at one instant keep their order.
        records.sort_by_key(|r| (r.t, r.link));
        EventLog {
            records,
            lost: logs.iter().map(|l| l.lost).sum(),
            cap,
            format,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{flags, FlowId};

    fn pkt(flow: u32, seq: u32) -> Packet {
        Packet {
            flow: FlowId(flow),
            seq,
            size: 1500,
            payload: 1460,
            flags: flags::DATA,
            ..Default::default()
        }
    }

    #[test]
    fn record_is_48_bytes() {
        assert!(std::mem::size_of::<LogRecord>() <= 48);
    }

    #[test]
    fn filters_flows_and_counts_what_the_cap_loses() {
        let mut l = PortLog::new(3, Some(vec![false, true]), 2);
        for (f, s) in [(0, 1), (1, 2), (2, 3), (1, 4), (1, 5)] {
            l.record(
                10,
                &pkt(f, s),
                LogEvent::Enqueue,
                LogReason::None,
                0,
                1,
                1500,
            );
        }
        let seqs: Vec<u32> = l.records.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, vec![2, 4]);
        assert_eq!(l.lost, 1);
        assert!(l.records.iter().all(|r| r.link == 3));
    }

    #[test]
    fn drop_reasons() {
        let mut l = PortLog::new(0, None, 10);
        let mut p = pkt(0, 7);
        p.enq_time = 4;
        l.record_drop(10, &p, DropCause::Overflow, true, (5, 7500));
        l.record_drop(10, &p, DropCause::Overflow, false, (5, 7500));
        l.record_drop(10, &p, DropCause::Aqm, false, (4, 6000));
        let r: Vec<(&str, Time)> = (l.records.iter())
            .map(|r| (r.reason.name("codel"), r.sojourn))
            .collect();
        assert_eq!(r, vec![("tail", 0), ("head", 6), ("codel", 6)]);
    }

    #[test]
    fn merge_orders_by_time_then_link_stably() {
        let mut a = PortLog::new(1, None, 10);
        let mut b = PortLog::new(0, None, 10);
        a.record(5, &pkt(0, 1), LogEvent::Enqueue, LogReason::None, 0, 1, 0);
        a.record(5, &pkt(0, 2), LogEvent::Dequeue, LogReason::None, 0, 0, 0);
        b.record(5, &pkt(0, 3), LogEvent::Enqueue, LogReason::None, 0, 1, 0);
        b.record(2, &pkt(0, 4), LogEvent::Enqueue, LogReason::None, 0, 1, 0);
        let m = EventLog::merge(vec![&a, &b], 10, FileFormat::Csv);
        let seqs: Vec<u32> = m.records.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, vec![4, 3, 1, 2]);
    }
}
