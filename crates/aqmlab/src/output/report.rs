//! `report.html`: one self-contained page per run, sweep or reproduction
//! (`--report`), readable offline. Its plots are drawn by uPlot 1.6.32
//! (MIT, <https://github.com/leeoniya/uPlot>; the minified build, its CSS
//! and licence are vendored in `output/report/` and embedded with
//! `include_str!`), which gives zoom (drag; double-click resets), hover
//! values and series toggles (click a legend entry) in about 50 kB. The
//! data travel as one JSON document inside the page; the tables are plain
//! HTML, each number in a cell that names its source (`data-key`: a JSON
//! pointer into `summary.json` for a run) and carries the exact value
//! (`data-value`), so a test can check the page against the files.
//!
//! A page is a pure function of its inputs (no time stamps, no wall-clock
//! figures), so the same scenario and seed give the same bytes.

use crate::metrics::RunResult;
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt::Write as _;

const UPLOT_JS: &str = include_str!("report/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("report/uPlot.min.css");
const PAGE_JS: &str = include_str!("report/report.js");
const PAGE_CSS: &str = include_str!("report/report.css");

/// Most points a line series keeps in the page; longer series are reduced
/// to the lowest and highest point of each of `MAX_POINTS / 2` buckets,
/// which keeps every peak and trough visible.
pub const MAX_POINTS: usize = 4000;
/// Most points of one empirical CDF (quantiles at even steps beyond it).
pub const CDF_POINTS: usize = 1000;
/// Most series in one plot (queues, traced flows, flows' throughput).
pub const MAX_SERIES: usize = 16;

/// How a plot draws its series.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Lines,
    /// Steps that hold each value until the next x (CDFs).
    Steps,
    /// Markers only (categorical x, with error bars).
    Points,
}

/// One series: x and y of equal length, `x` strictly increasing.
#[derive(Clone, Debug, Serialize)]
pub struct Series {
    pub name: String,
    pub x: Vec<f64>,
    pub y: Vec<Option<f64>>,
    /// Half-length of an error bar at each point.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub err: Option<Vec<Option<f64>>>,
}

/// One interactive plot.
#[derive(Clone, Debug, Serialize)]
pub struct Plot {
    pub title: String,
    /// A line under the title: what is drawn and how it was reduced.
    pub note: String,
    pub x_label: String,
    pub y_label: String,
    pub kind: Kind,
    /// Names of x = 0, 1, … for a categorical axis.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub categories: Option<Vec<String>>,
    pub series: Vec<Series>,
}

/// A table cell: its text, and for a number the exact value and its source.
#[derive(Clone, Debug)]
pub struct Cell {
    pub text: String,
    pub key: Option<String>,
    pub value: Option<String>,
}

impl Cell {
    pub fn text(s: impl Into<String>) -> Cell {
        Cell {
            text: s.into(),
            key: None,
            value: None,
        }
    }
    /// A number shown to 6 significant digits, with its exact value.
    pub fn num(x: f64, key: impl Into<String>) -> Cell {
        Cell {
            text: fmt_num(x),
            key: Some(key.into()),
            value: Some(if x.is_finite() {
                x.to_string()
            } else {
                String::new()
            }),
        }
    }
}

/// One table: a caption, a head row and rows of cells.
#[derive(Clone, Debug)]
pub struct Table {
    pub caption: String,
    pub head: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

/// One part of a page, in order.
#[derive(Clone, Debug)]
pub enum Part {
    Heading(String),
    /// A paragraph of text (escaped).
    Text(String),
    /// Trusted HTML made by aqmlab (e.g. a report rendered from Markdown).
    Html(String),
    Table(Table),
    Plot(Plot),
}

/// A page: a title, a line under it and its parts.
#[derive(Clone, Debug, Default)]
pub struct Page {
    pub title: String,
    pub subtitle: String,
    pub parts: Vec<Part>,
}

/// `s` with `&`, `<`, `>`, `"` escaped for HTML text and attributes.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            c => o.push(c),
        }
    }
    o
}

/// A number as the tables show it: integers whole, others to 6
/// significant digits, "—" for a missing or non-finite value.
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return "—".into();
    }
    if x == x.trunc() && x.abs() < 1e15 {
        return format!("{}", x as i64);
    }
    let a = x.abs();
    if !(1e-4..1e15).contains(&a) {
        return format!("{x:.5e}");
    }
    let decimals = (5 - a.log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

impl Page {
    /// The whole HTML document.
    pub fn render(&self) -> String {
        let plots: Vec<&Plot> = self
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Plot(p) => Some(p),
                _ => None,
            })
            .collect();
        // `</` inside a script element would end it; `<\/` is the same JSON.
        let data = serde_json::to_string(&plots)
            .expect("plots serialize")
            .replace("</", "<\\/");
        let mut h = String::with_capacity(UPLOT_JS.len() + data.len() + 16_384);
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"generator\" content=\"aqmlab {}\">\n<title>{}</title>\n\
             <style>{UPLOT_CSS}\n{PAGE_CSS}</style>\n</head>\n<body>\n<header>\n<h1>{}</h1>\n<p>{}</p>\n\
             <p class=\"help\">Plots: drag to zoom, double-click to zoom out, hover for values, \
             click a legend entry to hide or show its series.</p>\n</header>\n<main>\n",
            env!("CARGO_PKG_VERSION"),
            escape(&self.title),
            escape(&self.title),
            escape(&self.subtitle)
        );
        let mut k = 0;
        for part in &self.parts {
            match part {
                Part::Heading(t) => {
                    let _ = writeln!(h, "<h2>{}</h2>", escape(t));
                }
                Part::Text(t) => {
                    let _ = writeln!(h, "<p>{}</p>", escape(t));
                }
                Part::Html(t) => {
                    let _ = writeln!(h, "<div class=\"md\">\n{t}</div>");
                }
                Part::Plot(p) => {
                    let _ = writeln!(
                        h,
                        "<figure class=\"plot\"><figcaption><b>{}</b><br><small>{}</small></figcaption>\
                         <div class=\"chart\" id=\"plot-{k}\" data-plot=\"{k}\"></div></figure>",
                        escape(&p.title),
                        escape(&p.note)
                    );
                    k += 1;
                }
                Part::Table(t) => render_table(&mut h, t),
            }
        }
        let _ = write!(
            h,
            "</main>\n<script type=\"application/json\" id=\"aqmlab-data\">{data}</script>\n\
             <script>{UPLOT_JS}</script>\n<script>{PAGE_JS}</script>\n</body>\n</html>\n"
        );
        h
    }
}

fn render_table(h: &mut String, t: &Table) {
    let _ = write!(
        h,
        "<div class=\"tablewrap\"><table class=\"numbers\">\n<caption>{}</caption>\n<thead><tr>",
        escape(&t.caption)
    );
    for c in &t.head {
        let _ = write!(h, "<th>{}</th>", escape(c));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for row in &t.rows {
        h.push_str("<tr>");
        for c in row {
            match (&c.key, &c.value) {
                (Some(k), Some(v)) => {
                    let _ = write!(
                        h,
                        "<td class=\"n\" data-key=\"{}\" data-value=\"{}\">{}</td>",
                        escape(k),
                        escape(v),
                        escape(&c.text)
                    );
                }
                (Some(k), None) => {
                    let _ = write!(h, "<td data-key=\"{}\">{}</td>", escape(k), escape(&c.text));
                }
                _ => {
                    let _ = write!(h, "<td>{}</td>", escape(&c.text));
                }
            }
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table></div>\n");
}

/// `xs`, `ys` with at most [`MAX_POINTS`] points: unchanged if short
/// enough, else the lowest and highest y of each of `MAX_POINTS / 2`
/// consecutive buckets, in order. Returns the points and whether it reduced.
pub fn decimate(xs: &[f64], ys: &[f64]) -> (Vec<f64>, Vec<Option<f64>>, bool) {
    let n = xs.len();
    if n <= MAX_POINTS {
        return (xs.to_vec(), ys.iter().map(|&y| Some(y)).collect(), false);
    }
    let buckets = MAX_POINTS / 2;
    let (mut ox, mut oy) = (
        Vec::with_capacity(MAX_POINTS),
        Vec::with_capacity(MAX_POINTS),
    );
    for b in 0..buckets {
        let (lo, hi) = (b * n / buckets, (b + 1) * n / buckets);
        if lo == hi {
            continue;
        }
        let (mut imin, mut imax) = (lo, lo);
        for i in lo..hi {
            if ys[i] < ys[imin] {
                imin = i;
            }
            if ys[i] > ys[imax] {
                imax = i;
            }
        }
        for i in [imin.min(imax), imin.max(imax)] {
            if ox.last() != Some(&xs[i]) {
                ox.push(xs[i]);
                oy.push(Some(ys[i]));
            }
        }
    }
    (ox, oy, true)
}

/// The empirical CDF of `values` (non-finite ones left out) as a step
/// series: at each distinct value x, the fraction of values ≤ x. More than
/// [`CDF_POINTS`] distinct values are reduced to the quantiles at
/// i / [`CDF_POINTS`].
pub fn cdf(name: &str, mut values: Vec<f64>, scale: f64) -> Option<Series> {
    values.retain(|v| v.is_finite());
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let mut pts: Vec<(f64, f64)> = Vec::new();
    for (i, &v) in values.iter().enumerate() {
        // The last of a run of equal values carries the run's fraction.
        if i + 1 == n || values[i + 1] != v {
            pts.push((v * scale, (i + 1) as f64 / n as f64));
        }
    }
    if pts.len() > CDF_POINTS {
        let m = pts.len();
        let mut keep: Vec<(f64, f64)> = (0..=CDF_POINTS)
            .map(|k| pts[((k * (m - 1)) / CDF_POINTS).min(m - 1)])
            .collect();
        keep.dedup_by(|a, b| a.0 == b.0);
        pts = keep;
    }
    Some(Series {
        name: name.into(),
        x: pts.iter().map(|p| p.0).collect(),
        y: pts.iter().map(|p| Some(p.1)).collect(),
        err: None,
    })
}

/// A JSON pointer (RFC 6901) segment.
fn ptr_seg(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Object(_) | Value::Array(_))
}

fn scalar_cell(v: &Value, key: &str) -> Cell {
    match v {
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            let mut c = Cell::num(x, key);
            // The exact text summary.json has (integers stay integers).
            c.value = Some(n.to_string());
            if n.is_u64() || n.is_i64() {
                c.text = n.to_string();
            }
            c
        }
        Value::Null => Cell {
            text: "—".into(),
            key: Some(key.into()),
            value: None,
        },
        Value::Bool(b) => Cell {
            text: b.to_string(),
            key: Some(key.into()),
            value: None,
        },
        Value::String(s) => Cell {
            text: s.clone(),
            key: Some(key.into()),
            value: None,
        },
        _ => Cell::text(""),
    }
}

/// Tables that show every scalar of the JSON value `v` (at pointer `ptr`):
/// an object of scalars as a key/value table, an object of objects or an
/// array of objects as one row per record (its scalars as columns, its
/// nested values in further tables), an array of scalars by index.
pub fn json_tables(caption: &str, ptr: &str, v: &Value, out: &mut Vec<Table>) {
    match v {
        Value::Object(m) if m.is_empty() => {}
        Value::Array(a) if a.is_empty() => {}
        Value::Object(m) if m.values().all(|x| x.is_object()) => {
            let recs: Vec<(String, String, &Map<String, Value>)> = m
                .iter()
                .map(|(k, x)| {
                    (
                        k.clone(),
                        format!("{ptr}/{}", ptr_seg(k)),
                        x.as_object().expect("checked"),
                    )
                })
                .collect();
            records(caption, &recs, out);
        }
        Value::Array(a) if a.iter().all(|x| x.is_object()) => {
            let recs: Vec<(String, String, &Map<String, Value>)> = a
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    let o = x.as_object().expect("checked");
                    let label = ["link", "name", "flow", "class"]
                        .iter()
                        .find_map(|k| o.get(*k).and_then(|s| s.as_str()).map(str::to_string))
                        .unwrap_or_else(|| i.to_string());
                    (label, format!("{ptr}/{i}"), o)
                })
                .collect();
            records(caption, &recs, out);
        }
        Value::Object(m) => {
            let rows: Vec<Vec<Cell>> = m
                .iter()
                .filter(|(_, x)| is_scalar(x))
                .map(|(k, x)| {
                    vec![
                        Cell::text(k.clone()),
                        scalar_cell(x, &format!("{ptr}/{}", ptr_seg(k))),
                    ]
                })
                .collect();
            if !rows.is_empty() {
                out.push(Table {
                    caption: caption.into(),
                    head: vec!["key".into(), "value".into()],
                    rows,
                });
            }
            for (k, x) in m.iter().filter(|(_, x)| !is_scalar(x)) {
                let cap = if caption.is_empty() {
                    k.clone()
                } else {
                    format!("{caption} › {k}")
                };
                json_tables(&cap, &format!("{ptr}/{}", ptr_seg(k)), x, out);
            }
        }
        Value::Array(a) => {
            let rows = a
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    let key = format!("{ptr}/{i}");
                    if is_scalar(x) {
                        vec![Cell::text(i.to_string()), scalar_cell(x, &key)]
                    } else {
                        vec![Cell::text(i.to_string()), Cell::text(x.to_string())]
                    }
                })
                .collect();
            out.push(Table {
                caption: caption.into(),
                head: vec!["index".into(), "value".into()],
                rows,
            });
        }
        _ => {}
    }
}

/// One row per record (label, pointer, fields): the union of the records'
/// scalar fields as columns, in order of first appearance; nested fields
/// in their own tables.
fn records(caption: &str, recs: &[(String, String, &Map<String, Value>)], out: &mut Vec<Table>) {
    let mut cols: Vec<&str> = Vec::new();
    for (_, _, m) in recs {
        for (k, x) in m.iter() {
            if is_scalar(x) && !cols.contains(&k.as_str()) {
                cols.push(k);
            }
        }
    }
    if !cols.is_empty() {
        let rows = recs
            .iter()
            .map(|(label, ptr, m)| {
                let mut row = vec![Cell::text(label.clone())];
                row.extend(cols.iter().map(|c| match m.get(*c) {
                    Some(x) => scalar_cell(x, &format!("{ptr}/{}", ptr_seg(c))),
                    None => Cell::text(""),
                }));
                row
            })
            .collect();
        let mut head = vec![String::new()];
        head.extend(cols.iter().map(|c| c.to_string()));
        out.push(Table {
            caption: caption.into(),
            head,
            rows,
        });
    }
    for (label, ptr, m) in recs {
        for (k, x) in m.iter().filter(|(_, x)| !is_scalar(x)) {
            json_tables(
                &format!("{caption} › {label} › {k}"),
                &format!("{ptr}/{}", ptr_seg(k)),
                x,
                out,
            );
        }
    }
}

/// `report.html` of one run: its queues, cwnd, throughput and delay CDFs
/// as plots, and every number of `summary.json` (but `wall_seconds`,
/// `timings` and `parallel`) in tables.
pub fn run_page(r: &RunResult) -> Page {
    let mut parts = Vec::new();
    if !r.warnings.is_empty() {
        // first: a configuration that did not do what it says changes how
        // everything below reads
        parts.push(Part::Heading("Warnings".into()));
        for w in &r.warnings {
            parts.push(Part::Text(format!(
                "[{}] {}: {}",
                w.cause, w.key, w.message
            )));
        }
    }
    let mon = &r.series;
    let shown = |n: usize, what: &str| {
        if n > MAX_SERIES {
            format!("; the first {MAX_SERIES} of {n} {what}")
        } else {
            String::new()
        }
    };
    if !mon.is_empty() {
        parts.push(Part::Heading("Queues".into()));
        let mut reduced = false;
        let mut series = |f: &dyn Fn(&crate::metrics::QueueSample) -> f64| -> Vec<Series> {
            mon.iter()
                .take(MAX_SERIES)
                .map(|s| {
                    let xs: Vec<f64> = s.samples.iter().map(|q| q.time_s).collect();
                    let ys: Vec<f64> = s.samples.iter().map(f).collect();
                    let (x, y, d) = decimate(&xs, &ys);
                    reduced |= d;
                    Series {
                        name: s.link.clone(),
                        x,
                        y,
                        err: None,
                    }
                })
                .collect()
        };
        let len = series(&|q| q.len_pkts as f64);
        let delay = series(&|q| q.delay_s * 1e3);
        let note = |what: &str| {
            let mut n = format!(
                "{what}, at each sample of queues.csv{}",
                shown(mon.len(), "monitored queues")
            );
            if reduced {
                n.push_str(&format!(
                    "; series longer than {MAX_POINTS} samples show the lowest and highest sample of each of {} buckets",
                    MAX_POINTS / 2
                ));
            }
            n
        };
        parts.push(Part::Plot(Plot {
            title: "Queue length".into(),
            note: note("instantaneous queue length"),
            x_label: "time (s)".into(),
            y_label: "packets".into(),
            kind: Kind::Lines,
            categories: None,
            series: len,
        }));
        parts.push(Part::Plot(Plot {
            title: "Queueing delay".into(),
            note: note("sojourn time of the last packet dequeued before the sample (0 when empty)"),
            x_label: "time (s)".into(),
            y_label: "delay (ms)".into(),
            kind: Kind::Lines,
            categories: None,
            series: delay,
        }));
    }
    if !r.cwnd.is_empty() {
        parts.push(Part::Heading("Congestion windows".into()));
        let mut reduced = false;
        let series = r
            .cwnd
            .iter()
            .take(MAX_SERIES)
            .map(|t| {
                let xs: Vec<f64> = t.samples.iter().map(|s| s.time_s).collect();
                let ys: Vec<f64> = t.samples.iter().map(|s| s.cwnd).collect();
                let (x, y, d) = decimate(&xs, &ys);
                reduced |= d;
                Series {
                    name: format!("flow {} ({}, {})", t.flow, t.group, t.cc),
                    x,
                    y,
                    err: None,
                }
            })
            .collect();
        parts.push(Part::Plot(Plot {
            title: "Congestion window".into(),
            note: format!(
                "cwnd of the traced flows (cwnd.csv){}{}",
                shown(r.cwnd.len(), "traced flows"),
                if reduced {
                    format!("; long traces reduced to {MAX_POINTS} points (lowest and highest of each bucket)")
                } else {
                    String::new()
                }
            ),
            x_label: "time (s)".into(),
            y_label: "segments".into(),
            kind: Kind::Lines,
            categories: None,
            series,
        }));
    }
    if !r.throughput.is_empty() {
        parts.push(Part::Heading("Throughput".into()));
        let bin = r.throughput[0].bin_s;
        let per_flow = r.throughput.len() <= MAX_SERIES;
        let mut named: Vec<(String, Vec<f64>)> = Vec::new();
        if per_flow {
            for t in &r.throughput {
                named.push((
                    format!("flow {} ({})", t.flow, t.group),
                    t.bps().map(|(_, b)| b / 1e6).collect(),
                ));
            }
        } else {
            // Summed per group, bin by bin, in flow order.
            for t in &r.throughput {
                let i = match named.iter().position(|(g, _)| *g == t.group) {
                    Some(i) => i,
                    None => {
                        named.push((t.group.clone(), Vec::new()));
                        named.len() - 1
                    }
                };
                let acc = &mut named[i].1;
                for (k, (_, b)) in t.bps().enumerate() {
                    if acc.len() <= k {
                        acc.resize(k + 1, 0.0);
                    }
                    acc[k] += b / 1e6;
                }
            }
        }
        let series = named
            .into_iter()
            .take(MAX_SERIES)
            .map(|(name, ys)| {
                let xs: Vec<f64> = (0..ys.len()).map(|k| k as f64 * bin).collect();
                let (x, y, _) = decimate(&xs, &ys);
                Series {
                    name,
                    x,
                    y,
                    err: None,
                }
            })
            .collect();
        parts.push(Part::Plot(Plot {
            title: "Throughput".into(),
            note: format!(
                "payload delivered to the receiver per {} ms bin (throughput.csv), stamped at the bin's start as in throughput.csv; {}",
                fmt_num(bin * 1e3),
                if per_flow {
                    "one series per flow".to_string()
                } else {
                    format!("summed per flow group ({} flows)", r.throughput.len())
                }
            ),
            x_label: "time (s)".into(),
            y_label: "Mbit/s".into(),
            kind: Kind::Lines,
            categories: None,
            series,
        }));
    }
    let mut cdfs: Vec<Series> = mon
        .iter()
        .take(MAX_SERIES)
        .filter_map(|s| {
            cdf(
                &format!("queue {} (samples)", s.link),
                s.samples.iter().map(|q| q.delay_s).collect(),
                1e3,
            )
        })
        .collect();
    if r.flows.len() > 1 {
        cdfs.extend(cdf(
            "flows' mean one-way delay",
            r.flows.iter().filter_map(|f| f.mean_owd_s).collect(),
            1e3,
        ));
        cdfs.extend(cdf(
            "flows' smoothed RTT",
            r.flows.iter().filter_map(|f| f.srtt_s).collect(),
            1e3,
        ));
    }
    cdfs.extend(cdf(
        "requests' response time",
        r.requests
            .iter()
            .filter_map(|q| q.response_time_s)
            .collect(),
        1e3,
    ));
    if !cdfs.is_empty() {
        parts.push(Part::Heading("Delay distributions".into()));
        parts.push(Part::Plot(Plot {
            title: "Delay CDFs".into(),
            note: format!(
                "empirical CDFs: each monitored queue's sampled queueing delay (one value per sample), \
                 the flows' mean one-way delays and smoothed RTTs (one value per flow, flows.csv), \
                 the requests' response times (requests.csv); more than {CDF_POINTS} distinct values \
                 are shown as {CDF_POINTS} quantiles"
            ),
            x_label: "delay (ms)".into(),
            y_label: "fraction ≤ x".into(),
            kind: Kind::Steps,
            categories: None,
            series: cdfs,
        }));
    }
    parts.push(Part::Heading("Summary (summary.json)".into()));
    parts.push(Part::Text(
        "Every number of summary.json but wall_seconds, timings and parallel (how the run used threads and \
         the times it took: measurements of the machine, not functions of the scenario and the \
         seed); each cell names its key."
            .into(),
    ));
    let mut v =
        serde_json::to_value(crate::output::summary::Summary::of(r)).expect("summary serializes");
    if let Some(o) = v.as_object_mut() {
        // Measurements of the machine, not results: the page stays the
        // same for the same scenario and seed, whatever the thread count.
        o.remove("wall_seconds");
        o.remove("timings");
        o.remove("parallel");
        // shown at the top of the page
        o.remove("warnings");
    }
    let mut tables = Vec::new();
    json_tables("run", "", &v, &mut tables);
    parts.extend(tables.into_iter().map(Part::Table));
    Page {
        title: format!("aqmlab run: {}", r.scenario),
        subtitle: format!(
            "seed {}, {} simulated s, {} events",
            r.seed,
            fmt_num(r.sim_seconds),
            r.events
        ),
        parts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_show_six_significant_digits() {
        assert_eq!(fmt_num(3.0), "3");
        assert_eq!(fmt_num(0.123456789), "0.123457");
        assert_eq!(fmt_num(12345.6789), "12345.7");
        assert_eq!(fmt_num(2.5e-7), "2.50000e-7");
        assert_eq!(fmt_num(f64::NAN), "—");
    }

    #[test]
    fn decimation_keeps_extremes_and_order() {
        let xs: Vec<f64> = (0..100_000).map(|i| i as f64).collect();
        let mut ys = vec![1.0; 100_000];
        ys[12_345] = 99.0;
        ys[77_777] = -5.0;
        let (x, y, reduced) = decimate(&xs, &ys);
        assert!(reduced && x.len() <= MAX_POINTS);
        assert!(x.windows(2).all(|w| w[0] < w[1]));
        assert!(y.contains(&Some(99.0)) && y.contains(&Some(-5.0)));
    }

    #[test]
    fn cdf_steps_end_at_one_with_distinct_x() {
        let s = cdf("d", vec![0.0, 0.0, 1.0, 2.0, f64::NAN], 1.0).unwrap();
        assert_eq!(s.x, vec![0.0, 1.0, 2.0]);
        assert_eq!(s.y, vec![Some(0.5), Some(0.75), Some(1.0)]);
        let big = cdf("d", (0..50_000).map(f64::from).collect(), 1.0).unwrap();
        assert!(big.x.len() <= CDF_POINTS + 1 && big.y.last() == Some(&Some(1.0)));
    }

    #[test]
    fn json_tables_name_every_scalar_by_pointer() {
        let v: Value = serde_json::json!({
            "seed": 3, "a/b": {"x": 1.5}, "groups": {"g": {"n": 2, "s": {"k": 0.25}}},
            "queues": [{"link": "r1->r2", "d": 0.001}]
        });
        let mut t = Vec::new();
        json_tables("run", "", &v, &mut t);
        let keys: Vec<String> = t
            .iter()
            .flat_map(|t| t.rows.iter().flatten())
            .filter_map(|c| c.value.as_ref().and(c.key.clone()))
            .collect();
        for k in [
            "/seed",
            "/a~1b/x",
            "/groups/g/n",
            "/groups/g/s/k",
            "/queues/0/d",
        ] {
            assert!(keys.iter().any(|x| x == k), "{k} missing from {keys:?}");
        }
    }

    #[test]
    fn a_script_end_in_data_cannot_close_the_script() {
        let p = Page {
            title: "t".into(),
            subtitle: String::new(),
            parts: vec![Part::Plot(Plot {
                title: "</script><b>".into(),
                note: String::new(),
                x_label: String::new(),
                y_label: String::new(),
                kind: Kind::Lines,
                categories: None,
                series: vec![],
            })],
        };
        let h = p.render();
        assert_eq!(
            h.matches("</script>").count(),
            3,
            "only the three script ends"
        );
    }
}
