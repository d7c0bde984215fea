//! What every reproduction takes from its caller (the command line or the
//! Python package): seeds, an optional run length and load.

use crate::{Error, Result};

/// Longest `--duration` of a reproduction without `--allow-large`, s (2.5×
/// the longest paper run, rio-ps's 4000 s).
pub const MAX_DURATION_S: f64 = 10_000.0;

/// What every reproduction takes from its caller, checked by
/// [`crate::reproduce`] against the paper's [`crate::Driver`].
#[derive(Clone, Debug)]
pub struct Opts {
    /// Seeds per configuration (1..=seeds).
    pub seeds: u64,
    /// `--duration`, seconds.
    pub duration_s: Option<f64>,
    /// `--load`, a fraction of the bottleneck.
    pub load: Option<f64>,
}

impl Opts {
    /// The run length: `--duration` if given (at least `min_s` seconds,
    /// else an input error naming the paper's constraint), else `paper_s`.
    /// The flag says whether it differs from the paper's.
    pub fn duration_or(&self, paper_s: f64, min_s: f64, why: &str) -> Result<(f64, bool)> {
        match self.duration_s {
            None => Ok((paper_s, false)),
            Some(d) if d < min_s => Err(Error::Input(format!(
                "--duration: must be at least {min_s} s ({why}), got {d} s"
            ))),
            Some(d) => Ok((d, (d - paper_s).abs() > 1e-9)),
        }
    }
}

/// `--duration`'s text ("600s", "10min") in seconds.
pub fn parse_duration(d: &str) -> Result<f64> {
    let t = aqmlab::scenario::units::parse_duration(d)
        .map_err(|m| Error::Input(format!("--duration `{d}`: {m}")))?;
    if t == 0 {
        return Err(Error::Input(format!("--duration `{d}`: must be positive")));
    }
    Ok(t as f64 / 1e9)
}
