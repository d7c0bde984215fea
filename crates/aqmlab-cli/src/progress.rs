//! A progress bar on stderr for runs longer than a second; nothing when stderr
//! is not a terminal (indicatif hides itself then).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Map `f` over `jobs` in parallel on rayon's current pool, with one
/// progress bar labelled `label` over the jobs; results come back in input
/// order.
pub fn par_map<J: Sync, T: Send>(label: &str, jobs: &[J], f: impl Fn(&J) -> T + Sync) -> Vec<T> {
    let bar = Mutex::new(Progress::new(label.to_string(), jobs.len() as u64));
    let done = AtomicU64::new(0);
    let out = jobs
        .par_iter()
        .map(|j| {
            let t = f(j);
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            bar.lock().expect("progress").set(n);
            t
        })
        .collect();
    bar.lock().expect("progress").finish();
    out
}

/// Shows a bar only once the work has taken more than a second.
pub struct Progress {
    started: Instant,
    bar: Option<ProgressBar>,
    label: String,
    len: u64,
}

impl Progress {
    pub fn new(label: impl Into<String>, len: u64) -> Self {
        Progress {
            started: Instant::now(),
            bar: None,
            label: label.into(),
            len,
        }
    }

    /// Report `pos` of `len` units done.
    pub fn set(&mut self, pos: u64) {
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
            b.set_position(pos.min(self.len));
        }
    }

    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
