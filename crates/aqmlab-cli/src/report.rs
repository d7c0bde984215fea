//! `report.html` of a sweep (`aqmlab sweep --report`) and of a
//! reproduction (`aqmlab reproduce --report`), built on the page of
//! `aqmlab::output::report` (one file, uPlot embedded, no network).

use aqmlab::output::report::{fmt_num, Cell, Kind, Page, Part, Plot, Series, Table};
use aqmlab_reproduce::TableRow;

/// What a sweep's page shows.
pub struct SweepInput<'a> {
    pub name: &'a str,
    pub link: &'a str,
    pub seeds: u64,
    pub runs: usize,
    pub axes: &'a [String],
    /// Each point's value on every axis.
    pub axis_values: &'a [Vec<String>],
    /// Each point's label.
    pub labels: &'a [String],
    /// (key, title, scale) of each metric.
    pub metrics: &'a [(&'a str, &'a str, f64)],
    /// Per point and metric: mean, sd, half-width of the 95 % interval.
    pub stats: &'a [Vec<(f64, f64, f64)>],
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// Distinct values in order of first appearance.
fn distinct(xs: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for x in xs {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// The sweep's page: each metric against the first axis (one series per
/// combination of the other axes), means over seeds with their 95 %
/// intervals as error bars, and the numbers in a table.
pub fn sweep_page(s: &SweepInput) -> Page {
    let cats = distinct(s.axis_values.iter().map(|v| v[0].clone()));
    let rest = |v: &[String]| -> String {
        s.axes[1..]
            .iter()
            .zip(&v[1..])
            .map(|(a, x)| format!("{a} = {x}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let groups = distinct(s.axis_values.iter().map(|v| rest(v)));
    let mut parts = vec![Part::Heading("Metrics by axis".into())];
    for (m, (_, title, _)) in s.metrics.iter().enumerate() {
        let series = groups
            .iter()
            .map(|g| {
                let mut x = Vec::new();
                let mut y = Vec::new();
                let mut err = Vec::new();
                for (c, cat) in cats.iter().enumerate() {
                    let hit = s
                        .axis_values
                        .iter()
                        .position(|v| &v[0] == cat && rest(v) == *g);
                    if let Some(p) = hit {
                        let (mean, _, hw) = s.stats[p][m];
                        x.push(c as f64);
                        y.push(finite(mean));
                        err.push(finite(hw));
                    }
                }
                Series {
                    name: if g.is_empty() {
                        "mean".into()
                    } else {
                        g.clone()
                    },
                    x,
                    y,
                    err: Some(err),
                }
            })
            .collect();
        parts.push(Part::Plot(Plot {
            title: title.to_string(),
            note: format!(
                "at {}; mean over {} seed(s), bars: 95 % interval (Student's t, n − 1 degrees of freedom; none for one seed)",
                s.link, s.seeds
            ),
            x_label: s.axes[0].clone(),
            y_label: title.to_string(),
            kind: Kind::Points,
            categories: Some(cats.clone()),
            series,
        }));
    }
    parts.push(Part::Heading("Table".into()));
    let mut head = vec!["combination".to_string()];
    for (_, title, _) in s.metrics {
        head.push(format!("{title}: mean"));
        head.push("± 95 %".into());
        head.push("sd".into());
    }
    let rows = s
        .labels
        .iter()
        .zip(s.stats)
        .map(|(label, st)| {
            let mut row = vec![Cell::text(label.clone())];
            for ((key, _, _), (mean, sd, hw)) in s.metrics.iter().zip(st) {
                let k = |what: &str| format!("{label}|{key}|{what}");
                row.push(Cell::num(*mean, k("mean")));
                row.push(Cell::num(*hw, k("ci95")));
                row.push(Cell::num(*sd, k("sd")));
            }
            row
        })
        .collect();
    parts.push(Part::Table(Table {
        caption: "Mean over seeds, half-width of the 95 % interval and sd, in the plots' units (sweep.csv has every run)".into(),
        head,
        rows,
    }));
    Page {
        title: format!("aqmlab sweep: {}", s.name),
        subtitle: format!(
            "{} combinations × {} seeds = {} runs; queue reported: {}",
            s.labels.len(),
            s.seeds,
            s.runs,
            s.link
        ),
        parts,
    }
}

/// `report.md` as HTML, its images left out (the page stands alone; the
/// PNG/SVG plots are beside it).
fn markdown_html(md: &str) -> String {
    use pulldown_cmark::{html, Event, Options, Parser, Tag, TagEnd};
    let mut in_image = 0usize;
    let events = Parser::new_ext(md, Options::ENABLE_TABLES).filter_map(|e| match e {
        Event::Start(Tag::Image { .. }) => {
            in_image += 1;
            None
        }
        Event::End(TagEnd::Image) => {
            in_image -= 1;
            None
        }
        _ if in_image > 0 => None,
        // No raw HTML from the Markdown reaches the page.
        Event::Html(t) | Event::InlineHtml(t) => Some(Event::Text(t)),
        e => Some(e),
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    out
}

/// The reproduction's page: per table of the paper, the paper's numbers
/// beside aqmlab's mean (bars: ± one sd over seeds), the cells in a table
/// (the rows of `tables.csv`), and the driver's `report.md` with its
/// verdicts.
pub fn reproduce_page(paper: &str, rows: &[TableRow], report_md: Option<&str>) -> Page {
    let mut parts = vec![Part::Heading("Paper vs aqmlab".into())];
    let panels = distinct(rows.iter().map(|r| format!("{} ({})", r.table, r.unit)));
    for panel in &panels {
        let idx: Vec<usize> = (0..rows.len())
            .filter(|&i| format!("{} ({})", rows[i].table, rows[i].unit) == *panel)
            .collect();
        let cats: Vec<String> = idx
            .iter()
            .map(|&i| format!("{} · {}", rows[i].row, rows[i].column))
            .collect();
        let xs: Vec<f64> = (0..idx.len()).map(|k| k as f64).collect();
        let paper_series = Series {
            name: "paper".into(),
            x: xs.clone(),
            y: idx
                .iter()
                .map(|&i| rows[i].paper.and_then(finite))
                .collect(),
            err: None,
        };
        let ours = Series {
            name: "aqmlab (mean ± sd)".into(),
            x: xs,
            y: idx.iter().map(|&i| finite(rows[i].aqmlab_mean)).collect(),
            err: Some(
                idx.iter()
                    .map(|&i| rows[i].aqmlab_sd.and_then(finite))
                    .collect(),
            ),
        };
        parts.push(Part::Plot(Plot {
            title: panel.clone(),
            note: "the paper's number and aqmlab's mean over seeds (bars: ± one standard deviation over seeds; none where the value is pooled); report.md below gives the verdicts".into(),
            x_label: "cell".into(),
            y_label: rows[idx[0]].unit.clone(),
            kind: Kind::Points,
            categories: Some(cats),
            series: vec![paper_series, ours],
        }));
    }
    let head = [
        "table",
        "row",
        "column",
        "unit",
        "paper",
        "aqmlab mean",
        "aqmlab sd",
        "n",
        "aqmlab − paper",
    ]
    .map(String::from)
    .to_vec();
    let trows = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let k = |c: &str| format!("tables.csv/{i}/{c}");
            let opt = |x: Option<f64>, c: &str| match x {
                Some(v) => Cell::num(v, k(c)),
                None => Cell {
                    text: "—".into(),
                    key: Some(k(c)),
                    value: None,
                },
            };
            vec![
                Cell::text(r.table.clone()),
                Cell::text(r.row.clone()),
                Cell::text(r.column.clone()),
                Cell::text(r.unit.clone()),
                opt(r.paper, "paper"),
                Cell::num(r.aqmlab_mean, k("aqmlab_mean")),
                opt(r.aqmlab_sd, "aqmlab_sd"),
                Cell::num(r.n as f64, k("n")),
                Cell::text(match r.paper {
                    Some(p) => fmt_num(r.aqmlab_mean - p),
                    None => "—".into(),
                }),
            ]
        })
        .collect();
    parts.push(Part::Table(Table {
        caption: "Every cell (tables.csv)".into(),
        head,
        rows: trows,
    }));
    if let Some(md) = report_md {
        parts.push(Part::Heading(
            "Report, with the verdicts (report.md)".into(),
        ));
        parts.push(Part::Html(markdown_html(md)));
    }
    Page {
        title: format!("aqmlab reproduce {paper}"),
        subtitle: format!("{} cells in {} panels", rows.len(), panels.len()),
        parts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_keeps_tables_and_drops_images_and_raw_html() {
        let h =
            markdown_html("| a | b |\n|---|---|\n| 1 | 2 |\n\n![plot](x.png) <script>x</script>\n");
        assert!(h.contains("<table>") && h.contains("<td>2</td>"), "{h}");
        assert!(!h.contains("<img") && !h.contains("<script>"), "{h}");
    }

    #[test]
    fn sweep_series_follow_the_other_axes() {
        let axes = vec!["a".to_string(), "b".to_string()];
        let vals: Vec<Vec<String>> = [["1", "x"], ["2", "x"], ["1", "y"], ["2", "y"]]
            .iter()
            .map(|v| v.iter().map(|s| s.to_string()).collect())
            .collect();
        let labels: Vec<String> = (0..4).map(|i| format!("p{i}")).collect();
        let stats: Vec<Vec<(f64, f64, f64)>> =
            (0..4).map(|i| vec![(i as f64, 0.5, 0.25)]).collect();
        let p = sweep_page(&SweepInput {
            name: "s",
            link: "r1->r2",
            seeds: 3,
            runs: 12,
            axes: &axes,
            axis_values: &vals,
            labels: &labels,
            metrics: &[("m", "metric", 1.0)],
            stats: &stats,
        });
        let Part::Plot(plot) = &p.parts[1] else {
            panic!("first part after the heading is the plot")
        };
        assert_eq!(
            plot.categories.as_deref(),
            Some(&["1".to_string(), "2".into()][..])
        );
        assert_eq!(plot.series.len(), 2);
        assert_eq!(plot.series[1].name, "b = y");
        assert_eq!(plot.series[1].y, vec![Some(2.0), Some(3.0)]);
        assert_eq!(plot.series[1].err, Some(vec![Some(0.25), Some(0.25)]));
    }
}
