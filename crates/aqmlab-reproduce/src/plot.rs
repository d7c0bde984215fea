//! Plots (PNG and SVG) drawn with plotters, using a bundled DejaVu Sans font
//! so no system font library is needed.
//!
//! Every figure is drawn twice from the same code, once on a bitmap backend
//! (`<stem>.png`) and once on an SVG backend (`<stem>.svg`).
//!
//! - [`queue_series`]: instantaneous queue length and the discipline's
//!   average (RED's `avg`) over time, one panel per monitored queue that
//!   held packets at some sample;
//! - [`queue_series_window`]: the same over a time window;
//! - [`grouped_bars`]: grouped bar charts (e.g. paper vs aqmlab per sender),
//!   in one or more panels sharing the y scale.

use aqmlab::output::TempFile;
use aqmlab::RunResult;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// DejaVu Sans (Bitstream Vera licence), registered as "sans-serif".
static FONT: &[u8] = include_bytes!("../../../assets/DejaVuSans.ttf");
static FONT_OK: OnceLock<bool> = OnceLock::new();

const FAMILY: &str = "sans-serif";

/// Register the bundled font once per process.
fn init_font() -> std::io::Result<()> {
    let ok = *FONT_OK.get_or_init(|| {
        plotters::style::register_font(FAMILY, plotters::style::FontStyle::Normal, FONT).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(std::io::Error::other(
            "the bundled font could not be loaded",
        ))
    }
}

type DrawResult = Result<(), Box<dyn Error>>;

/// Something that can draw itself on any plotters backend.
trait Figure {
    fn size(&self) -> (u32, u32);
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static;
}

fn with_ext(stem: &Path, ext: &str) -> PathBuf {
    let mut s = stem.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

/// Draw `fig` to `<stem>.png` and `<stem>.svg`.
fn render(fig: &impl Figure, stem: &Path) -> std::io::Result<()> {
    init_font()?;
    if let Some(dir) = stem.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir)?;
        }
    }
    let err = |what: &str, e: Box<dyn Error>| {
        std::io::Error::other(format!("drawing {}.{what}: {e}", stem.display()))
    };
    // Drawn under a temporary name and renamed into place, so that a plot
    // file that exists is complete; a failed drawing (a full disk) or an
    // interrupt leaves no temporary file (`output::TempFile`).
    let png = TempFile::beside(&with_ext(stem, "png"))?;
    {
        let root = BitMapBackend::new(png.path(), fig.size()).into_drawing_area();
        let r: DrawResult = (|| {
            root.fill(&WHITE)?;
            fig.draw(&root)?;
            root.present()?;
            Ok(())
        })();
        r.map_err(|e| err("png", e))?;
    }
    let svg = TempFile::beside(&with_ext(stem, "svg"))?;
    {
        let root = SVGBackend::new(svg.path(), fig.size()).into_drawing_area();
        let r: DrawResult = (|| {
            root.fill(&WHITE)?;
            fig.draw(&root)?;
            root.present()?;
            Ok(())
        })();
        r.map_err(|e| err("svg", e))?;
    }
    png.persist(&with_ext(stem, "png"))?;
    svg.persist(&with_ext(stem, "svg"))?;
    Ok(())
}

/// One legend entry: a line (`true`) or a filled box (`false`) in `color`.
struct LegendItem {
    name: String,
    color: RGBColor,
    line: bool,
}

/// Draw a legend in one row, right-aligned at the top of `area` (a figure
/// header), so that it never covers data.
fn header_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    items: &[LegendItem],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let font: TextStyle = (FAMILY, 15).into_font().color(&BLACK);
    let (w, _) = area.dim_in_pixel();
    let widths: Vec<i32> = items
        .iter()
        .map(|it| {
            let (tw, _) = area
                .estimate_text_size(&it.name, &font)
                .unwrap_or((100, 15));
            30 + tw as i32 + 20
        })
        .collect();
    let mut x = w as i32 - 20 - widths.iter().sum::<i32>();
    let y = 18;
    for (it, wi) in items.iter().zip(&widths) {
        if it.line {
            area.draw(&PathElement::new(
                vec![(x, y), (x + 24, y)],
                it.color.stroke_width(3),
            ))?;
        } else {
            area.draw(&Rectangle::new(
                [(x + 4, y - 8), (x + 20, y + 8)],
                it.color.filled(),
            ))?;
        }
        area.draw(&Text::new(
            it.name.clone(),
            (x + 30, y),
            font.clone()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
        x += wi;
    }
    Ok(())
}

/// Estimated width in pixels of a legend entry (line, gap, name at 15 px:
/// at most 9 px per character).
fn legend_item_w(name: &str) -> u32 {
    30 + 9 * name.chars().count() as u32 + 20
}

/// Rows (item indices) of a legend that does not fit beside the title of a
/// figure `w` pixels wide: none when it fits (in the right half), else the
/// items laid left to right below the subtitle, wrapped at the right margin.
fn legend_rows(names: &[String], w: u32) -> Vec<Vec<usize>> {
    let total: u32 = names.iter().map(|n| legend_item_w(n)).sum();
    if total <= w / 2 {
        return Vec::new();
    }
    let mut rows: Vec<Vec<usize>> = vec![Vec::new()];
    let mut x = 20;
    for (i, n) in names.iter().enumerate() {
        let wi = legend_item_w(n);
        if x + wi > w - 20 && !rows.last().is_some_and(|r| r.is_empty()) {
            rows.push(Vec::new());
            x = 20;
        }
        rows.last_mut().expect("a row").push(i);
        x += wi;
    }
    rows
}

/// Height of a header whose legend is laid out by [`legend_rows`].
fn header_h_with(names: &[String], w: u32) -> u32 {
    HEADER_H + LEGEND_ROW_H * legend_rows(names, w).len() as u32
}

const LEGEND_ROW_H: u32 = 24;

/// The header legend of a figure sized by [`header_h_with`]: beside the
/// title when it fits, else in rows below the subtitle.
fn wrapped_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    items: &[LegendItem],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (w, _) = area.dim_in_pixel();
    let names: Vec<String> = items.iter().map(|it| it.name.clone()).collect();
    let rows = legend_rows(&names, w);
    if rows.is_empty() {
        return header_legend(area, items);
    }
    let font: TextStyle = (FAMILY, 15).into_font().color(&BLACK);
    for (k, row) in rows.iter().enumerate() {
        let y = (HEADER_H + LEGEND_ROW_H * k as u32) as i32 + 4;
        let mut x = 20;
        for &i in row {
            let it = &items[i];
            area.draw(&PathElement::new(
                vec![(x, y), (x + 24, y)],
                it.color.stroke_width(3),
            ))?;
            area.draw(&Text::new(
                it.name.clone(),
                (x + 30, y),
                font.clone()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            ))?;
            x += legend_item_w(&it.name) as i32;
        }
    }
    Ok(())
}

/// A figure's title and grey subtitle at the top of its header area.
fn draw_titles<DB: DrawingBackend>(
    header: &DrawingArea<DB, Shift>,
    title: &str,
    subtitle: &str,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    header.draw(&Text::new(
        title.to_string(),
        (20, 8),
        (FAMILY, 24).into_font().color(&BLACK),
    ))?;
    header.draw(&Text::new(
        subtitle.to_string(),
        (20, 36),
        (FAMILY, 15).into_font().color(&RGBColor(90, 90, 90)),
    ))?;
    Ok(())
}

/// A tick label without needless decimals: `0.1`, `2`, `0.25`, `1500`
/// (at most six decimals, trailing zeros dropped).
pub fn tick(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

// ---- queue time series ----------------------------------------------------

const INST_COLOR: RGBColor = RGBColor(70, 130, 200);
const AVG_COLOR: RGBColor = RGBColor(200, 30, 30);

struct QueueFig<'a> {
    r: &'a RunResult,
    window: Option<(f64, f64)>,
    /// Indices into `r.series` of the panels to draw.
    panels: Vec<usize>,
    /// Monitored queues left out because they never held a packet.
    empty: Vec<String>,
}

impl<'a> QueueFig<'a> {
    fn new(r: &'a RunResult, window: Option<(f64, f64)>) -> Self {
        let mut panels = Vec::new();
        let mut empty = Vec::new();
        for (i, s) in r.series.iter().enumerate() {
            let busy = s
                .samples
                .iter()
                .any(|x| x.len_pkts > 0 || x.avg_pkts.is_some_and(|a| a > 0.0));
            if busy {
                panels.push(i);
            } else {
                empty.push(s.link.clone());
            }
        }
        if panels.is_empty() && !r.series.is_empty() {
            panels.push(0);
            empty.remove(0);
        }
        QueueFig {
            r,
            window,
            panels,
            empty,
        }
    }
}

const PANEL_H: u32 = 330;
const HEADER_H: u32 = 60;

impl Figure for QueueFig<'_> {
    fn size(&self) -> (u32, u32) {
        (1200, HEADER_H + PANEL_H * self.panels.len().max(1) as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let (header, body) = root.split_vertically(HEADER_H);
        let mut title = format!(
            "Queue length over time — {} (seed {})",
            self.r.scenario, self.r.seed
        );
        if let Some((t0, t1)) = self.window {
            title.push_str(&format!(", {t0:.1}–{t1:.1} s"));
        }
        header.draw(&Text::new(
            title,
            (20, 8),
            (FAMILY, 24).into_font().color(&BLACK),
        ))?;
        let interval = self
            .r
            .series
            .first()
            .and_then(|s| s.samples.get(1).map(|x| x.time_s - s.samples[0].time_s))
            .unwrap_or(0.0);
        let mut sub = format!(
            "sampled every {:.0} ms; instantaneous length and the discipline's average",
            interval * 1e3
        );
        if !self.empty.is_empty() {
            sub.push_str(&format!(
                "; not shown (always empty): {}",
                self.empty.join(", ")
            ));
        }
        header.draw(&Text::new(
            sub,
            (20, 36),
            (FAMILY, 15).into_font().color(&RGBColor(90, 90, 90)),
        ))?;
        if self.panels.is_empty() {
            return Ok(());
        }
        let mut legend = vec![LegendItem {
            name: "instantaneous".into(),
            color: INST_COLOR,
            line: true,
        }];
        let any_avg = self.panels.iter().any(|&i| {
            self.r.series[i]
                .samples
                .iter()
                .any(|x| x.avg_pkts.is_some())
        });
        if any_avg {
            let red = self.panels.iter().all(|&i| {
                self.r
                    .queue(&self.r.series[i].link)
                    .is_some_and(|q| q.kind == "red")
            });
            legend.push(LegendItem {
                name: if red { "RED average (avg)" } else { "average" }.into(),
                color: AVG_COLOR,
                line: true,
            });
        }
        header_legend(&header, &legend)?;
        let areas = body.split_evenly((self.panels.len(), 1));
        let (t0, t1) = self.window.unwrap_or((0.0, self.r.sim_seconds.max(1e-9)));
        for (area, &si) in areas.iter().zip(&self.panels) {
            let s = &self.r.series[si];
            let kind = self
                .r
                .queue(&s.link)
                .map(|q| q.kind.clone())
                .unwrap_or_default();
            let pts: Vec<_> = s
                .samples
                .iter()
                .filter(|x| x.time_s >= t0 && x.time_s <= t1)
                .collect();
            let ymax = pts
                .iter()
                .map(|x| (x.len_pkts as f64).max(x.avg_pkts.unwrap_or(0.0)))
                .fold(1.0f64, f64::max)
                * 1.1;
            let mut chart = ChartBuilder::on(area)
                .caption(
                    format!("{} ({kind})", s.link),
                    (FAMILY, 19).into_font().color(&BLACK),
                )
                .margin(10)
                .margin_right(25)
                .x_label_area_size(45)
                .y_label_area_size(70)
                .build_cartesian_2d(t0..t1, 0.0..ymax)?;
            let fy = |v: &f64| tick(*v);
            chart
                .configure_mesh()
                .x_label_formatter(&|v: &f64| tick(*v))
                .y_label_formatter(&fy)
                .x_desc("time (s)")
                .y_desc("queue length (packets)")
                .label_style((FAMILY, 15))
                .axis_desc_style((FAMILY, 16))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()?;
            chart.draw_series(LineSeries::new(
                pts.iter().map(|x| (x.time_s, x.len_pkts as f64)),
                INST_COLOR.stroke_width(1),
            ))?;
            chart.draw_series(LineSeries::new(
                pts.iter().filter_map(|x| x.avg_pkts.map(|a| (x.time_s, a))),
                AVG_COLOR.stroke_width(2),
            ))?;
        }
        Ok(())
    }
}

/// Queue length over time for every monitored queue: `<stem>.png` and `<stem>.svg`.
///
/// Draws the instantaneous length (packets) and, where the discipline keeps
/// one, its average (RED's `avg`), one panel per monitored queue that held
/// a packet at some sample; queues that were always empty are named in the
/// subtitle instead.
pub fn queue_series(r: &RunResult, stem: &Path) -> std::io::Result<()> {
    render(&QueueFig::new(r, None), stem)
}

/// As [`queue_series`], restricted to simulated times `t0..=t1` seconds.
pub fn queue_series_window(r: &RunResult, stem: &Path, t0: f64, t1: f64) -> std::io::Result<()> {
    if t1.partial_cmp(&t0) != Some(std::cmp::Ordering::Greater) {
        return Err(std::io::Error::other(format!(
            "empty plot window {t0}..{t1} s"
        )));
    }
    render(&QueueFig::new(r, Some((t0, t1))), stem)
}

/// Drop and mark rates over time for every monitored queue that saw
/// packets: `<stem>.png` and `<stem>.svg`, one panel per queue, rates in %
/// of the packets offered in windows of about 1/100 of the run (at least
/// one sample interval). Queues that never dropped or marked are named in
/// the subtitle instead. Returns `false` (and draws nothing) when no
/// monitored queue dropped or marked a packet.
pub fn signal_rates(r: &RunResult, stem: &Path) -> std::io::Result<bool> {
    let window = r.sim_seconds / 100.0;
    let mut panels = Vec::new();
    let mut quiet = Vec::new();
    for s in &r.series {
        let w = s.signal_rates(window);
        if w.iter().all(|x| x.dropped + x.marked == 0) {
            quiet.push(s.link.as_str());
            continue;
        }
        let pts = |f: fn(&aqmlab::metrics::SignalWindow) -> f64| -> Vec<(f64, f64)> {
            w.iter()
                .filter(|x| x.arrivals > 0)
                .map(|x| (x.t1_s, 100.0 * f(x)))
                .collect()
        };
        panels.push((
            s.link.clone(),
            vec![
                ("drop rate".to_string(), pts(|x| x.drop_rate())),
                ("mark rate".to_string(), pts(|x| x.mark_rate())),
            ],
        ));
    }
    if panels.is_empty() {
        return Ok(false);
    }
    let fig = PanelLines {
        title: format!("{}: drop and mark rate over time", r.scenario),
        subtitle: format!(
            "seed {}; % of the packets offered to the queue per window of ≈ {} s (points at window ends){}",
            r.seed,
            (window * 1000.0).round() / 1000.0,
            if quiet.is_empty() {
                String::new()
            } else {
                format!("; no drops or marks at {}", quiet.join(", "))
            }
        ),
        x_desc: "time (s)".into(),
        y_desc: "% of arrivals".into(),
        panels,
        y_max: None,
    };
    panel_lines(&fig, stem)?;
    Ok(true)
}

// ---- grouped bars ---------------------------------------------------------

/// One panel of a grouped bar chart.
pub struct BarPanel {
    pub title: String,
    /// Category names along the x axis.
    pub categories: Vec<String>,
    /// `values[series][category]`.
    pub values: Vec<Vec<f64>>,
}

/// A grouped bar chart: one bar per series in each category, one or more
/// panels side by side on a shared y scale.
pub struct GroupedBars {
    pub title: String,
    pub subtitle: String,
    pub x_label: String,
    pub y_label: String,
    /// Series names, in the order of `BarPanel::values`.
    pub series: Vec<String>,
    pub panels: Vec<BarPanel>,
    /// Decimals of the value printed above each bar.
    pub decimals: usize,
}

/// An x axis of `n` categories at 0, 1, …, n−1, each one unit wide, with
/// a tick (and label) at every category and nowhere else.
struct Categories(usize);

impl Ranged for Categories {
    type ValueType = f64;
    type FormatOption = DefaultFormatting;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = (v + 0.5) / self.0 as f64;
        limit.0 + (f * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            return vec![];
        }
        (0..self.0).map(|i| i as f64).collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        -0.5..self.0 as f64 - 0.5
    }
}

const BAR_COLORS: [RGBColor; 4] = [
    RGBColor(160, 160, 160),
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
];

impl Figure for GroupedBars {
    fn size(&self) -> (u32, u32) {
        ((80 + 480 * self.panels.len().max(1) as u32).max(900), 560)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let (header, body) = root.split_vertically(HEADER_H + 10);
        header.draw(&Text::new(
            self.title.clone(),
            (20, 8),
            (FAMILY, 24).into_font().color(&BLACK),
        ))?;
        header.draw(&Text::new(
            self.subtitle.clone(),
            (20, 38),
            (FAMILY, 15).into_font().color(&RGBColor(90, 90, 90)),
        ))?;
        if self.panels.is_empty() {
            return Ok(());
        }
        let legend: Vec<LegendItem> = self
            .series
            .iter()
            .enumerate()
            .map(|(i, n)| LegendItem {
                name: n.clone(),
                color: BAR_COLORS[i % BAR_COLORS.len()],
                line: false,
            })
            .collect();
        let (legend_row, body) = body.split_vertically(30);
        header_legend(&legend_row, &legend)?;
        let ymax = self
            .panels
            .iter()
            .flat_map(|p| p.values.iter().flatten())
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max)
            .max(1e-9)
            * 1.15;
        let nser = self.series.len().max(1);
        let areas = body.split_evenly((1, self.panels.len()));
        for (pi, (area, p)) in areas.iter().zip(&self.panels).enumerate() {
            let n = p.categories.len().max(1);
            let mut chart = ChartBuilder::on(area)
                .caption(p.title.clone(), (FAMILY, 20).into_font().color(&BLACK))
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(if pi == 0 { 80 } else { 55 })
                .build_cartesian_2d(Categories(n), 0.0..ymax)?;
            let cats = &p.categories;
            let fmt_x = |x: &f64| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 {
                    cats.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            };
            let fy = |v: &f64| tick(*v);
            let mut mesh = chart.configure_mesh();
            mesh.disable_x_mesh()
                .x_label_formatter(&fmt_x)
                .y_label_formatter(&fy)
                .x_desc(self.x_label.clone())
                .label_style((FAMILY, 15))
                .axis_desc_style((FAMILY, 16))
                .light_line_style(RGBColor(235, 235, 235));
            if pi == 0 {
                mesh.y_desc(self.y_label.clone());
            }
            mesh.draw()?;
            let group_w = 0.8;
            let bar_w = group_w / nser as f64;
            for (si, vals) in p.values.iter().enumerate() {
                let color = BAR_COLORS[si % BAR_COLORS.len()];
                let x_of = |ci: usize| ci as f64 - group_w / 2.0 + si as f64 * bar_w;
                chart.draw_series(vals.iter().enumerate().map(|(ci, &v)| {
                    let x0 = x_of(ci);
                    Rectangle::new([(x0, 0.0), (x0 + bar_w * 0.92, v)], color.filled())
                }))?;
                let d = self.decimals;
                chart.draw_series(vals.iter().enumerate().map(|(ci, &v)| {
                    let xc = x_of(ci) + bar_w * 0.46;
                    EmptyElement::at((xc, v))
                        + Text::new(
                            format!("{v:.d$}"),
                            (0, -4),
                            (FAMILY, 12)
                                .into_font()
                                .color(&BLACK)
                                .pos(Pos::new(HPos::Center, VPos::Bottom)),
                        )
                }))?;
            }
        }
        Ok(())
    }
}

/// Draw a grouped bar chart to `<stem>.png` and `<stem>.svg`.
pub fn grouped_bars(fig: &GroupedBars, stem: &Path) -> std::io::Result<()> {
    render(fig, stem)
}

// ---- several time series on one chart --------------------------------------

/// Colours for up to ten series (then repeated).
const LINE_COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// A line chart of several named series sharing the axes.
pub struct Lines {
    pub title: String,
    pub subtitle: String,
    pub x_desc: String,
    pub y_desc: String,
    /// (name, points).
    pub series: Vec<(String, Vec<(f64, f64)>)>,
    /// One panel per series (shared axes) instead of all on one chart.
    pub panels: bool,
}

impl Lines {
    /// Header height: room for the legend of many series.
    fn header_h(&self) -> u32 {
        if self.panels {
            HEADER_H
        } else {
            let names: Vec<String> = self.series.iter().map(|(n, _)| n.clone()).collect();
            header_h_with(&names, 1200)
        }
    }
}

impl Figure for Lines {
    fn size(&self) -> (u32, u32) {
        if self.panels {
            (1200, HEADER_H + 170 * self.series.len().max(1) as u32)
        } else {
            (1200, self.header_h() + 480)
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let (header, body) = root.split_vertically(self.header_h());
        draw_titles(&header, &self.title, &self.subtitle)?;
        let color = |i: usize| LINE_COLORS[i % LINE_COLORS.len()];
        let pts = self.series.iter().flat_map(|(_, p)| p.iter());
        let (x0, x1, y1) = pts.fold((f64::MAX, f64::MIN, 0.0f64), |(a, b, c), &(x, y)| {
            (a.min(x), b.max(x), c.max(y))
        });
        let (x0, x1) = if x0 < x1 { (x0, x1) } else { (0.0, 1.0) };
        let ymax = (y1 * 1.1).max(1e-9);
        let fy = |v: &f64| tick(*v);
        if !self.panels {
            let legend: Vec<LegendItem> = self
                .series
                .iter()
                .enumerate()
                .map(|(i, (n, _))| LegendItem {
                    name: n.clone(),
                    color: color(i),
                    line: true,
                })
                .collect();
            wrapped_legend(&header, &legend)?;
        }
        let areas = if self.panels {
            body.split_evenly((self.series.len().max(1), 1))
        } else {
            vec![body]
        };
        for (k, area) in areas.iter().enumerate() {
            let last = k + 1 == areas.len();
            let mut b = ChartBuilder::on(area);
            b.margin(6)
                .margin_right(25)
                .x_label_area_size(if self.panels && !last { 28 } else { 45 })
                .y_label_area_size(80);
            if self.panels {
                b.caption(
                    self.series[k].0.clone(),
                    (FAMILY, 16).into_font().color(&BLACK),
                );
            }
            let mut chart = b.build_cartesian_2d(x0..x1, 0.0..ymax)?;
            chart
                .configure_mesh()
                .x_label_formatter(&|v: &f64| tick(*v))
                .y_label_formatter(&fy)
                .x_desc(if last { self.x_desc.as_str() } else { "" })
                .y_desc(self.y_desc.as_str())
                .y_labels(if self.panels { 4 } else { 10 })
                .label_style((FAMILY, 14))
                .axis_desc_style((FAMILY, 15))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()?;
            let which: Vec<usize> = if self.panels {
                vec![k]
            } else {
                (0..self.series.len()).collect()
            };
            for i in which {
                chart.draw_series(LineSeries::new(
                    self.series[i].1.iter().copied(),
                    color(i).stroke_width(if self.panels { 1 } else { 2 }),
                ))?;
            }
        }
        Ok(())
    }
}

/// Draw a [`Lines`] chart to `<stem>.png` and `<stem>.svg`.
pub fn lines(fig: &Lines, stem: &Path) -> std::io::Result<()> {
    render(fig, stem)
}

// ---- stacked panels of line charts (added for the MarkMax reproduction) ----

/// A named series of (x, y) points.
pub type Series = (String, Vec<(f64, f64)>);

/// Line charts stacked vertically, each with several named series, sharing
/// the x and y axes; one legend in the header, where a series name keeps
/// its colour in every panel (e.g. each flow's cwnd under DropTail, then
/// under MarkMax).
pub struct PanelLines {
    pub title: String,
    pub subtitle: String,
    pub x_desc: String,
    pub y_desc: String,
    /// (panel caption, [(series name, points)]).
    pub panels: Vec<(String, Vec<Series>)>,
    /// Top of the y axis; larger values are drawn at it (clipped). Default:
    /// the largest value.
    pub y_max: Option<f64>,
}

impl PanelLines {
    /// Series names in order of first appearance (legend and colours).
    fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for (_, ser) in &self.panels {
            for (n, _) in ser {
                if !v.contains(n) {
                    v.push(n.clone());
                }
            }
        }
        v
    }
}

impl Figure for PanelLines {
    fn size(&self) -> (u32, u32) {
        (1200, HEADER_H + 320 * self.panels.len().max(1) as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let (header, body) = root.split_vertically(HEADER_H);
        draw_titles(&header, &self.title, &self.subtitle)?;
        let names = self.names();
        let color = |n: &str| {
            let i = names.iter().position(|x| x == n).unwrap_or(0);
            LINE_COLORS[i % LINE_COLORS.len()]
        };
        let legend: Vec<LegendItem> = names
            .iter()
            .map(|n| LegendItem {
                name: n.clone(),
                color: color(n),
                line: true,
            })
            .collect();
        header_legend(&header, &legend)?;
        if self.panels.is_empty() {
            return Ok(());
        }
        let pts = self
            .panels
            .iter()
            .flat_map(|(_, s)| s.iter())
            .flat_map(|(_, p)| p.iter());
        let (x0, x1, y1) = pts.fold((f64::MAX, f64::MIN, 0.0f64), |(a, b, c), &(x, y)| {
            (a.min(x), b.max(x), c.max(y))
        });
        let (x0, x1) = if x0 < x1 { (x0, x1) } else { (0.0, 1.0) };
        let ymax = self.y_max.unwrap_or(y1 * 1.08).max(1e-9);
        let fy = |v: &f64| tick(*v);
        let areas = body.split_evenly((self.panels.len(), 1));
        for (k, (area, (caption, series))) in areas.iter().zip(&self.panels).enumerate() {
            let last = k + 1 == areas.len();
            let mut chart = ChartBuilder::on(area)
                .caption(caption.clone(), (FAMILY, 18).into_font().color(&BLACK))
                .margin(8)
                .margin_right(25)
                .x_label_area_size(if last { 45 } else { 30 })
                .y_label_area_size(80)
                .build_cartesian_2d(x0..x1, 0.0..ymax)?;
            chart
                .configure_mesh()
                .x_label_formatter(&|v: &f64| tick(*v))
                .y_label_formatter(&fy)
                .x_desc(if last { self.x_desc.as_str() } else { "" })
                .y_desc(self.y_desc.as_str())
                .y_labels(6)
                .label_style((FAMILY, 14))
                .axis_desc_style((FAMILY, 15))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()?;
            for (n, p) in series {
                chart.draw_series(LineSeries::new(
                    p.iter().map(|&(x, y)| (x, y.min(ymax))),
                    color(n).stroke_width(2),
                ))?;
            }
        }
        Ok(())
    }
}

/// Draw a [`PanelLines`] figure to `<stem>.png` and `<stem>.svg`.
pub fn panel_lines(fig: &PanelLines, stem: &Path) -> std::io::Result<()> {
    render(fig, stem)
}

// ---- mean and band over seeds, error bars (sweeps) -------------------------

/// One series of a [`BandLines`] panel: the mean over seeds and the band
/// (lowest and highest seed) at each x.
pub struct Band {
    pub name: String,
    /// (x, mean, low, high).
    pub points: Vec<(f64, f64, f64, f64)>,
}

/// Line charts of means with a shaded band, one panel per series, sharing
/// the axes.
pub struct BandLines {
    pub title: String,
    pub subtitle: String,
    pub x_desc: String,
    pub y_desc: String,
    pub series: Vec<Band>,
}

impl Figure for BandLines {
    fn size(&self) -> (u32, u32) {
        (1200, HEADER_H + 190 * self.series.len().max(1) as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let (header, body) = root.split_vertically(HEADER_H);
        draw_titles(&header, &self.title, &self.subtitle)?;
        let pts = self.series.iter().flat_map(|b| b.points.iter());
        let (x0, x1, y1) = pts.fold((f64::MAX, f64::MIN, 0.0f64), |(a, b, c), p| {
            (a.min(p.0), b.max(p.0), c.max(p.3))
        });
        let (x0, x1) = if x0 < x1 { (x0, x1) } else { (0.0, 1.0) };
        let ymax = (y1 * 1.1).max(1e-9);
        let areas = body.split_evenly((self.series.len().max(1), 1));
        for (k, (area, b)) in areas.iter().zip(&self.series).enumerate() {
            let last = k + 1 == areas.len();
            let color = LINE_COLORS[k % LINE_COLORS.len()];
            let mut chart = ChartBuilder::on(area)
                .caption(b.name.clone(), (FAMILY, 16).into_font().color(&BLACK))
                .margin(6)
                .margin_right(25)
                .x_label_area_size(if last { 45 } else { 28 })
                .y_label_area_size(80)
                .build_cartesian_2d(x0..x1, 0.0..ymax)?;
            chart
                .configure_mesh()
                .x_label_formatter(&|v: &f64| tick(*v))
                .y_label_formatter(&|v: &f64| tick(*v))
                .x_desc(if last { self.x_desc.as_str() } else { "" })
                .y_desc(self.y_desc.as_str())
                .y_labels(4)
                .label_style((FAMILY, 14))
                .axis_desc_style((FAMILY, 15))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()?;
            let mut poly: Vec<(f64, f64)> = b.points.iter().map(|p| (p.0, p.3)).collect();
            poly.extend(b.points.iter().rev().map(|p| (p.0, p.2)));
            if !poly.is_empty() {
                chart.draw_series(std::iter::once(Polygon::new(
                    poly,
                    color.mix(0.25).filled(),
                )))?;
            }
            chart.draw_series(LineSeries::new(
                b.points.iter().map(|p| (p.0, p.1)),
                color.stroke_width(1),
            ))?;
        }
        Ok(())
    }
}

/// Draw a [`BandLines`] chart to `<stem>.png` and `<stem>.svg`.
pub fn band_lines(fig: &BandLines, stem: &Path) -> std::io::Result<()> {
    render(fig, stem)
}

/// One panel of [`ErrorBars`]: a metric, its mean per category and the
/// half-width of its interval.
pub struct ErrorPanel {
    pub title: String,
    /// (mean, half-width of the 95 % interval; 0 = no spread known).
    pub values: Vec<(f64, f64)>,
}

/// Means with 95 % intervals as error bars, one panel per metric, the
/// categories (sweep combinations) along x.
pub struct ErrorBars {
    pub title: String,
    pub subtitle: String,
    pub categories: Vec<String>,
    pub panels: Vec<ErrorPanel>,
}

impl Figure for ErrorBars {
    fn size(&self) -> (u32, u32) {
        let w = (160 + 90 * self.categories.len() as u32).clamp(700, 1600);
        (w, HEADER_H + 260 * self.panels.len().max(1) as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let (header, body) = root.split_vertically(HEADER_H);
        draw_titles(&header, &self.title, &self.subtitle)?;
        let n = self.categories.len();
        let areas = body.split_evenly((self.panels.len().max(1), 1));
        for (k, (area, p)) in areas.iter().zip(&self.panels).enumerate() {
            let last = k + 1 == areas.len();
            let top = p.values.iter().map(|(m, h)| m + h).fold(0.0f64, f64::max);
            let ymax = (top * 1.15).max(1e-9);
            let cats = &self.categories;
            let fmt_x = |x: &f64| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
                    cats[i as usize].clone()
                } else {
                    String::new()
                }
            };
            let mut chart = ChartBuilder::on(area)
                .caption(p.title.clone(), (FAMILY, 16).into_font().color(&BLACK))
                .margin(8)
                .margin_right(25)
                .x_label_area_size(if last { 50 } else { 35 })
                .y_label_area_size(80)
                .build_cartesian_2d(Categories(n), 0.0..ymax)?;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_label_formatter(&fmt_x)
                .y_label_formatter(&|v: &f64| tick(*v))
                .y_labels(5)
                .label_style((FAMILY, 13))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()?;
            let color = LINE_COLORS[k % LINE_COLORS.len()];
            chart.draw_series(p.values.iter().enumerate().map(|(i, &(m, h))| {
                ErrorBar::new_vertical(
                    i as f64,
                    (m - h).max(0.0),
                    m,
                    m + h,
                    color.filled().stroke_width(2),
                    14,
                )
            }))?;
            chart.draw_series(
                p.values
                    .iter()
                    .enumerate()
                    .map(|(i, &(m, _))| Circle::new((i as f64, m), 4, color.filled())),
            )?;
        }
        Ok(())
    }
}

/// Draw an [`ErrorBars`] chart to `<stem>.png` and `<stem>.svg`.
pub fn error_bars(fig: &ErrorBars, stem: &Path) -> std::io::Result<()> {
    render(fig, stem)
}

/// cwnd of every traced flow over time (`run --plot` when `cwnd.csv` is
/// written); false when no flow was traced.
pub fn cwnd(r: &RunResult, stem: &Path) -> std::io::Result<bool> {
    if r.cwnd.is_empty() {
        return Ok(false);
    }
    let series = r
        .cwnd
        .iter()
        .map(|t| {
            (
                format!("flow {} ({}, {})", t.flow, t.group, t.cc),
                t.samples.iter().map(|x| (x.time_s, x.cwnd)).collect(),
            )
        })
        .collect();
    lines(
        &Lines {
            title: format!("Congestion window — {}", r.scenario),
            subtitle: format!("traced flows, seed {}", r.seed),
            x_desc: "time (s)".into(),
            y_desc: "cwnd (segments)".into(),
            series,
            panels: false,
        },
        stem,
    )?;
    Ok(true)
}

/// Throughput of every flow with a series over time (`run --plot` when
/// `throughput.csv` is written); false when there is none.
pub fn throughput(r: &RunResult, stem: &Path) -> std::io::Result<bool> {
    if r.throughput.is_empty() {
        return Ok(false);
    }
    let series = r
        .throughput
        .iter()
        .map(|t| {
            (
                format!("flow {} ({})", t.flow, t.group),
                t.bps().map(|(x, b)| (x, b / 1e6)).collect(),
            )
        })
        .collect();
    lines(
        &Lines {
            title: format!("Throughput — {}", r.scenario),
            subtitle: format!("per flow, binned; seed {}", r.seed),
            x_desc: "time (s)".into(),
            y_desc: "throughput (Mbit/s)".into(),
            series,
            panels: false,
        },
        stem,
    )?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_legend_wraps_below_the_title_and_grows_the_header() {
        let few: Vec<String> = (0..2).map(|i| format!("flow {i} (bulk)")).collect();
        assert!(legend_rows(&few, 1200).is_empty());
        assert_eq!(header_h_with(&few, 1200), HEADER_H);
        let many: Vec<String> = (0..9)
            .map(|i| format!("flow {i} (bulk, newreno)"))
            .collect();
        let rows = legend_rows(&many, 1200);
        assert!(rows.len() >= 2, "{rows:?}");
        // every item once, in order, and each row within the figure
        let flat: Vec<usize> = rows.iter().flatten().copied().collect();
        assert_eq!(flat, (0..9).collect::<Vec<_>>());
        for r in &rows {
            let w: u32 = r.iter().map(|&i| legend_item_w(&many[i])).sum();
            assert!(20 + w <= 1200 - 20, "{w}");
        }
        assert_eq!(
            header_h_with(&many, 1200),
            HEADER_H + LEGEND_ROW_H * rows.len() as u32
        );
    }

    #[test]
    fn grouped_bars_write_png_and_svg() {
        let dir = tempfile::tempdir().unwrap();
        let stem = dir.path().join("bars");
        let fig = GroupedBars {
            title: "t".into(),
            subtitle: "s".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec!["a".into(), "b".into()],
            panels: vec![BarPanel {
                title: "p".into(),
                categories: vec!["c1".into(), "c2".into()],
                values: vec![vec![1.0, 2.0], vec![3.0, 0.5]],
            }],
            decimals: 1,
        };
        grouped_bars(&fig, &stem).unwrap();
        let png = std::fs::read(dir.path().join("bars.png")).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        let svg = std::fs::read_to_string(dir.path().join("bars.svg")).unwrap();
        assert!(svg.contains("<svg"));
        // legend entries, category labels and a bar value are drawn as text
        for label in ["a", "b", "c1", "c2", "0.5"] {
            let t = format!("\n{label}\n</text>");
            assert!(svg.contains(&t), "text {label:?} missing from the SVG");
        }
    }

    #[test]
    fn queue_series_draws_busy_queues_only() {
        let text = include_str!("../../../scenarios/papers/red-gateway/b1.toml");
        let sc =
            aqmlab::Scenario::from_toml_with(text, "b1.toml", &["duration=\"1s\"".into()]).unwrap();
        let r = aqmlab::Simulation::new(&sc, 1).run();
        let fig = QueueFig::new(&r, None);
        assert_eq!(fig.panels.len(), 1, "only gw->sink holds packets");
        assert_eq!(r.series[fig.panels[0]].link, "gw->sink");
        assert_eq!(fig.empty.len(), 5);
        let dir = tempfile::tempdir().unwrap();
        let stem = dir.path().join("sub").join("q");
        queue_series(&r, &stem).unwrap();
        let png = std::fs::read(dir.path().join("sub/q.png")).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        let svg = std::fs::read_to_string(dir.path().join("sub/q.svg")).unwrap();
        assert!(svg.contains("RED average (avg)"));
        assert!(queue_series_window(&r, &stem, 1.0, 1.0).is_err());
    }

    #[test]
    fn ticks_have_no_needless_decimals() {
        assert_eq!(tick(2.0), "2");
        assert_eq!(tick(0.1 + 0.2), "0.3");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(1500.0), "1500");
        assert_eq!(tick(-0.0), "0");
        assert_eq!(tick(2.5e-7), "0");
    }
}
