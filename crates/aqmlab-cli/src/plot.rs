//! Plots (PNG and SVG) drawn with plotters, using a bundled DejaVu Sans font
//! so no system font library is needed.

use aqmlab::RunResult;
use std::path::Path;

/// Queue length over time for every monitored queue: `<stem>.png` and `<stem>.svg`.
pub fn queue_series(_r: &RunResult, _stem: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other("plots not written yet"))
}
