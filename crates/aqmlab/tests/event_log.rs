//! The per-packet event log (`[output] log`, `net/event_log.rs`): it agrees
//! with the queues' counters and delay histograms, does not change the run
//! it records, is the same whatever the thread count, filters flows, and
//! its Parquet file holds the CSV's rows.

use aqmlab::metrics::{invariants, RunResult};
use aqmlab::net::event_log::{LogEvent, LogReason};
use aqmlab::output::{event_log, RunId};
use aqmlab::{Scenario, Simulation};

/// A dumbbell: 6 Reno flows (not ECN-capable) and 4 DCTCP flows (ECN) over a
/// 20 Mbit/s FQ-CoDel bottleneck with a 60-packet buffer: tail/head drops,
/// CoDel drops and CE marks all occur.
fn dumbbell(extra_output: &str) -> String {
    format!(
        r#"
name = "log"
duration = "4s"
[nodes]
hosts = ["s", "d"]
routers = ["r1", "r2"]
[[links]]
a = "s"
b = "r1"
rate = "1Gbps"
delay = "1ms"
[[links]]
name = "bottleneck"
a = "r1"
b = "r2"
rate = "20Mbps"
delay = "10ms"
queue_ab = {{ kind = "fq_codel", limit = 60, ecn = true }}
[[links]]
a = "r2"
b = "d"
rate = "1Gbps"
delay = "1ms"
[[flows]]
group = "reno"
src = "s"
dst = "d"
count = 6
cc = "reno"
start_spread = "200ms"
[[flows]]
group = "dctcp"
src = "s"
dst = "d"
count = 4
cc = "dctcp"
tcp = {{ ecn = true }}
start_spread = "200ms"
[output]
{extra_output}
"#
    )
}

fn run(text: &str) -> (Scenario, RunResult) {
    let sc = Scenario::from_toml(text, "log.toml").unwrap();
    let r = Simulation::new(&sc, 3).run();
    (sc, r)
}

#[test]
fn the_log_counts_what_the_queue_counts() {
    let (sc, r) = run(&dumbbell("log = [\"r1->r2\"]"));
    // enqueues, dequeues, drops and marks equal the counters; time order
    invariants::check(&sc, 3, &r).unwrap();
    let log = r.event_log.as_ref().unwrap();
    let q = r.queue("r1->r2").unwrap();
    assert!(q.dropped > 20 && q.marked > 20, "{q:?}");
    let n = |e: LogEvent, why: LogReason| {
        (log.records.iter())
            .filter(|x| x.event == e && x.reason == why)
            .count() as u64
    };
    // by reason: FQ-CoDel's CoDel drops, its drops from the fattest queue
    // when the buffer is full ("head") and no plain tail drop
    assert_eq!(n(LogEvent::Drop, LogReason::Disc), q.dropped_aqm);
    assert_eq!(
        n(LogEvent::Drop, LogReason::Head) + n(LogEvent::Drop, LogReason::Tail),
        q.dropped_overflow
    );
    assert_eq!(n(LogEvent::Mark, LogReason::Disc), q.marked);
    // marks only on ECN-capable (DCTCP) packets, drops of both groups
    let group = |x: &aqmlab::net::event_log::LogRecord| r.flows[x.flow as usize].group.as_str();
    assert!((log.records.iter())
        .filter(|x| x.event == LogEvent::Mark)
        .all(|x| group(x) == "dctcp"));
    // the log's sojourn quantiles are the histogram's, within its 3
    // significant digits
    let mut soj: Vec<u64> = (log.records.iter())
        .filter(|x| x.event == LogEvent::Dequeue)
        .map(|x| x.sojourn)
        .collect();
    soj.sort_unstable();
    for (p, want) in [(0.5, q.p50_delay_s), (0.99, q.p99_delay_s)] {
        let k = ((p * soj.len() as f64).ceil() as usize).max(1) - 1;
        let got = soj[k] as f64 / 1e9;
        assert!(
            (got - want).abs() <= want * 2e-3 + 1e-9,
            "p{p}: log {got} s, histogram {want} s"
        );
    }
    let mean = soj.iter().sum::<u64>() as f64 / soj.len() as f64 / 1e9;
    assert!((mean - q.mean_delay_s).abs() < 1e-12 + q.mean_delay_s * 1e-9);
}

#[test]
fn logging_changes_nothing_else() {
    let (_, off) = run(&dumbbell(""));
    let (_, mut on) = run(&dumbbell(
        "log = [\"bottleneck\"]\nlog_format = \"parquet\"",
    ));
    assert!(on.event_log.take().is_some_and(|l| !l.records.is_empty()));
    let key = |r: &RunResult| {
        let mut r = r.clone();
        r.wall_seconds = 0.0;
        r.timings = Default::default();
        format!("{r:?}")
    };
    assert_eq!(key(&on), key(&off));
}

#[test]
fn log_flows_keeps_one_group_and_the_cap_counts_the_rest() {
    let (sc, r) = run(&dumbbell("log = [\"r1->r2\"]\nlog_flows = [\"dctcp\"]"));
    invariants::check(&sc, 3, &r).unwrap();
    let log = r.event_log.as_ref().unwrap();
    assert!(!log.records.is_empty());
    assert!(log
        .records
        .iter()
        .all(|x| r.flows[x.flow as usize].group == "dctcp"));
    let (_, r) = run(&dumbbell("log = [\"r1->r2\"]\nlog_max_events = 1000"));
    let log = r.event_log.as_ref().unwrap();
    assert_eq!(log.records.len(), 1000);
    assert!(log.lost > 1000);
}

#[test]
fn the_log_is_the_same_on_several_threads() {
    let mut text = include_str!("../../../scenarios/multi-site.toml").to_string();
    assert!(!text.contains("[output]"));
    text += "\n[output]\nlog = [\"ra->rb\", \"rb->ra\", \"rc->rd\"]\n";
    let sc = Scenario::from_toml(&text, "ms.toml").unwrap();
    let one = Simulation::new(&sc, 1).run();
    let mut sim = Simulation::with_threads(&sc, 1, 3);
    assert!(sim.processes() >= 2, "{:?}", sim.parallel_note());
    let three = sim.run();
    let (a, b) = (one.event_log.unwrap(), three.event_log.unwrap());
    assert!(a.records.len() > 1000);
    assert!(a.records == b.records, "the logs differ");
}

#[test]
fn parquet_holds_the_csv_rows() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;
    let (_, r) = run(&dumbbell("log = [\"r1->r2\"]"));
    let log = r.event_log.as_ref().unwrap();
    let id = RunId {
        label: "x,\"y\"".into(),
        seed: 3,
    };
    let dir = tempfile::tempdir().unwrap();
    let (c, p) = (dir.path().join("e.csv"), dir.path().join("e.parquet"));
    event_log::write_csv(&r, log, &id, &c).unwrap();
    event_log::write_parquet(&r, log, &id, &p).unwrap();
    let mut rd = csv::Reader::from_path(&c).unwrap();
    assert_eq!(
        rd.headers().unwrap().iter().collect::<Vec<_>>(),
        event_log::COLUMNS
    );
    let rows: Vec<csv::StringRecord> = rd.records().map(|x| x.unwrap()).collect();
    let f = SerializedFileReader::new(std::fs::File::open(&p).unwrap()).unwrap();
    assert_eq!(f.metadata().file_metadata().num_rows() as usize, rows.len());
    let names: Vec<String> = (f.metadata().file_metadata().schema_descr().columns().iter())
        .map(|c| c.name().to_string())
        .collect();
    assert_eq!(names, event_log::COLUMNS);
    for (i, row) in f.get_row_iter(None).unwrap().enumerate().step_by(97) {
        let row = row.unwrap();
        for (j, (_, v)) in row.get_column_iter().enumerate() {
            let at = format!("row {i} column {}", event_log::COLUMNS[j]);
            match v {
                Field::Str(s) => assert_eq!(s, &rows[i][j], "{at}"),
                Field::Long(n) => assert_eq!(n.to_string(), rows[i][j], "{at}"),
                Field::Double(x) => assert_eq!(Ok(*x), rows[i][j].parse::<f64>(), "{at}"),
                other => panic!("{at}: {other:?}"),
            }
        }
    }
}

#[test]
fn bad_log_keys_name_the_key() {
    let err = |extra: &str| {
        Scenario::from_toml(&dumbbell(extra), "log.toml")
            .unwrap_err()
            .to_string()
    };
    assert!(err("log = [\"r9->r2\"]").contains("output.log[0]"));
    let e = err("log = [\"r1->r2\"]\nlog_flows = [\"cubic\"]");
    assert!(
        e.contains("output.log_flows[0]") && e.contains("`dctcp`, `reno`"),
        "{e}"
    );
    assert!(err("log_flows = [\"reno\"]").contains("output.log_flows"));
    assert!(err("log = [\"r1->r2\"]\nlog_max_events = 0").contains("output.log_max_events"));
    assert!(err("log = [\"r1->r2\"]\nlog_format = \"arrow\"").contains("log_format"));
}
