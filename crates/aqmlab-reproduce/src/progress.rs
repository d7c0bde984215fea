//! Progress on stderr for work longer than a second: a bar on a terminal;
//! when stderr is not a terminal (a batch job, a log file), a plain line
//! every 10 s (`AQMLAB_PROGRESS_SECS` changes the period):
//! `<label>: 12/40 (30 %), 1m05s elapsed, ETA 2m31s`.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Map `f` over `jobs` in parallel on rayon's current pool, with one
/// progress bar labelled `label` over the jobs; results come back in input
/// order.
pub fn par_map<J: Sync, T: Send>(label: &str, jobs: &[J], f: impl Fn(&J) -> T + Sync) -> Vec<T> {
    let bar = Mutex::new(Progress::new(label.to_string(), jobs.len() as u64));
    let done = AtomicU64::new(0);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let out = std::thread::scope(|s| {
        // Plain progress lines keep coming while long jobs run.
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                let mut b = bar.lock().unwrap_or_else(|e| e.into_inner());
                let n = done.load(Ordering::Relaxed);
                b.set(n);
            }
        });
        let out = jobs
            .par_iter()
            .map(|j| {
                let t = f(j);
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                bar.lock().unwrap_or_else(|e| e.into_inner()).set(n);
                t
            })
            .collect();
        stop.store(true, Ordering::Relaxed);
        out
    });
    bar.lock().unwrap_or_else(|e| e.into_inner()).finish();
    out
}

/// Shows a bar (or plain lines) only once the work has taken more than a
/// second.
pub struct Progress {
    started: Instant,
    bar: Option<ProgressBar>,
    label: String,
    len: u64,
    /// Plain lines instead of a bar: the period and the last line's time.
    plain: Option<(Duration, Instant)>,
    pos: u64,
    /// Position shown by the last plain line.
    shown: Option<u64>,
}

/// `1h02m`, `3m05s`, `12s`.
fn hms(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

impl Progress {
    pub fn new(label: impl Into<String>, len: u64) -> Self {
        let plain = (!std::io::stderr().is_terminal()).then(|| {
            let secs = std::env::var("AQMLAB_PROGRESS_SECS")
                .ok()
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v > 0.0)
                .unwrap_or(10.0);
            (Duration::from_secs_f64(secs), Instant::now())
        });
        Progress {
            started: Instant::now(),
            bar: None,
            label: label.into(),
            len,
            plain,
            pos: 0,
            shown: None,
        }
    }

    /// The plain progress line.
    fn line(&self) -> String {
        let el = self.started.elapsed();
        let pct = if self.len > 0 {
            self.pos as f64 / self.len as f64 * 100.0
        } else {
            100.0
        };
        let eta = if self.pos >= self.len {
            "done".into()
        } else if self.pos > 0 {
            let rest = el.as_secs_f64() * (self.len - self.pos) as f64 / self.pos as f64;
            format!("ETA {}", hms(Duration::from_secs_f64(rest)))
        } else {
            "ETA unknown".into()
        };
        format!(
            "{}: {}/{} ({pct:.0} %), {} elapsed, {eta}",
            self.label,
            self.pos,
            self.len,
            hms(el)
        )
    }

    /// Report `pos` of `len` units done.
    pub fn set(&mut self, pos: u64) {
        self.pos = pos.min(self.len);
        if let Some((every, last)) = &mut self.plain {
            if last.elapsed() >= *every {
                *last = Instant::now();
                self.shown = Some(self.pos);
                eprintln!("{}", self.line());
            }
            return;
        }
        if self.bar.is_none() {
            if self.started.elapsed() < Duration::from_secs(1) {
                return;
            }
            let b = ProgressBar::with_draw_target(Some(self.len), ProgressDrawTarget::stderr());
            b.set_style(
                ProgressStyle::with_template(
                    "{msg} [{elapsed_precise}] {wide_bar} {percent}% (eta {eta})",
                )
                .expect("template"),
            );
            b.set_message(self.label.clone());
            self.bar = Some(b);
        }
        if let Some(b) = &self.bar {
            b.set_position(self.pos);
        }
    }

    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        if let Some((every, _)) = self.plain.take() {
            // A closing line when any was due and the last one is behind.
            if self.started.elapsed() >= every && self.shown != Some(self.pos) {
                eprintln!("{}", self.line());
            }
        }
    }
}
