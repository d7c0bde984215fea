//! A progress bar on stderr for runs longer than a second; nothing when stderr
//! is not a terminal (indicatif hides itself then).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::{Duration, Instant};

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
