//! Adaptive RED — RED whose `max_p` adapts to keep the average queue between
//! `min_th` and `max_th`.
//!
//! Source: S. Floyd, R. Gummadi, S. Shenker, "Adaptive RED: An Algorithm for
//! Increasing the Robustness of RED's Active Queue Management" (ICSI, 2001),
//! Fig. 2; as in ns-2.35 `red.cc` `updateMaxP` (also ns-3's ARED).
//!
//! Every `interval` (checked at arrivals, as ns-2 does): with the target band
//! `[min_th + 0.4·(max_th − min_th), min_th + 0.6·(max_th − min_th)]`,
//! - `avg` above the band and `max_p ≤ top`: `max_p += min(alpha, max_p/4)`
//!   (additive increase);
//! - `avg` below the band and `max_p ≥ bottom`: `max_p *= beta`
//!   (multiplicative decrease).
//!
//! Parameters: every RED parameter (see `red.rs`; `max_p` is the initial
//! value), plus `interval` = 0.5 s, `alpha` = 0.01, `beta` = 0.9,
//! `top` = 0.5, `bottom` = 0.01.

use super::red::RedConfig;
use crate::engine::Time;
use crate::units::Dur;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(try_from = "toml::Table")]
pub struct AredConfig {
    #[serde(flatten)]
    pub red: RedConfig,
    #[serde(default = "d_interval")]
    pub interval: Dur,
    #[serde(default = "d_alpha")]
    pub alpha: f64,
    #[serde(default = "d_beta")]
    pub beta: f64,
    #[serde(default = "d_top")]
    pub top: f64,
    #[serde(default = "d_bottom")]
    pub bottom: f64,
}

/// ARED's own keys; the rest of the table is RED's.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AredOwn {
    #[serde(default = "d_interval")]
    interval: Dur,
    #[serde(default = "d_alpha")]
    alpha: f64,
    #[serde(default = "d_beta")]
    beta: f64,
    #[serde(default = "d_top")]
    top: f64,
    #[serde(default = "d_bottom")]
    bottom: f64,
}

/// Parsed in two parts (ARED's keys, then RED's) rather than with serde's
/// `flatten`, which loses the key path of an error in the RED part.
impl TryFrom<toml::Table> for AredConfig {
    type Error = String;
    fn try_from(mut t: toml::Table) -> Result<Self, String> {
        let mut own = toml::Table::new();
        for k in ["interval", "alpha", "beta", "top", "bottom"] {
            if let Some(v) = t.remove(k) {
                own.insert(k.into(), v);
            }
        }
        let nest = |(p, m): (String, String)| crate::registry::nested(&p, &m);
        let o: AredOwn = crate::registry::parse_config(own).map_err(nest)?;
        let red: RedConfig = crate::registry::parse_config(t).map_err(nest)?;
        Ok(AredConfig {
            red,
            interval: o.interval,
            alpha: o.alpha,
            beta: o.beta,
            top: o.top,
            bottom: o.bottom,
        })
    }
}

fn d_interval() -> Dur {
    Dur(500_000_000)
}
fn d_alpha() -> f64 {
    0.01
}
fn d_beta() -> f64 {
    0.9
}
fn d_top() -> f64 {
    0.5
}
fn d_bottom() -> f64 {
    0.01
}

impl AredConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        self.red.validate()?;
        if self.interval.0 == 0 {
            return Err(("interval".into(), "must be positive".into()));
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err((
                "alpha".into(),
                format!("must be in (0, 1), got {}", self.alpha),
            ));
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err((
                "beta".into(),
                format!("must be in (0, 1), got {}", self.beta),
            ));
        }
        if !(self.top > 0.0 && self.top <= 1.0) {
            return Err(("top".into(), format!("must be in (0, 1], got {}", self.top)));
        }
        if !(self.bottom > 0.0 && self.bottom < self.top) {
            return Err((
                "bottom".into(),
                format!("must be in (0, top) = (0, {}), got {}", self.top, self.bottom),
            ));
        }
        Ok(())
    }

    pub fn adaptation(&self) -> Adaptation {
        Adaptation {
            interval: self.interval.0,
            alpha: self.alpha,
            beta: self.beta,
            top: self.top,
            bottom: self.bottom,
            last: 0,
        }
    }
}

/// The `max_p` adaptation state carried by a [`super::Red`].
#[derive(Clone, Debug)]
pub struct Adaptation {
    interval: Time,
    alpha: f64,
    beta: f64,
    top: f64,
    bottom: f64,
    last: Time,
}

impl Adaptation {
    /// ns-2 `updateMaxP`, run when `interval` has passed since the last
    /// change. Returns the new `max_p`.
    pub fn update(&mut self, now: Time, avg: f64, min_th: f64, max_th: f64, max_p: f64) -> f64 {
        if now < self.last + self.interval {
            return max_p;
        }
        self.last = now;
        let part = 0.4 * (max_th - min_th);
        if avg < min_th + part && max_p >= self.bottom {
            max_p * self.beta
        } else if avg > max_th - part && max_p <= self.top {
            max_p + self.alpha.min(max_p / 4.0)
        } else {
            max_p
        }
    }
}

impl super::registry::Registered for AredConfig {
    const KIND: &'static str = "ared";
    const ABOUT: &'static str = "Adaptive RED (Floyd, Gummadi, Shenker 2001): RED whose max_p follows the average queue";
    const PARAMS: &'static [crate::registry::Param] = &[
        crate::registry::param!(required = "100", "limit", "packets, or bytes with a unit", "> 0", "0", "buffer size"),
        crate::registry::param!(required = "5.0", "min_th", "packets (or mean_pktsize bytes)", "≥ 0; 0 with auto = automatic", "-1.0", "lower threshold"),
        crate::registry::param!(required = "15.0", "max_th", "packets (or mean_pktsize bytes)", "> min_th; 0 with auto = automatic", "", "upper threshold"),
        crate::registry::param!("max_p", "probability", "(0, 1]", "1.5", "initial max_p"),
        crate::registry::param!("w_q", "weight", "(0, 1]", "0.0", "EWMA weight of the average queue"),
        crate::registry::param!("gentle", "", "true/false", "", "gentle RED above max_th"),
        crate::registry::param!("wait", "", "true/false", "", "space drops by waiting"),
        crate::registry::param!("ecn", "", "true/false", "", "mark instead of dropping early"),
        crate::registry::param!("mean_pktsize", "bytes", "≥ 1", "0", "packet size for idle decay and byte mode"),
        crate::registry::param!("bytes", "", "true/false", "", "measure the queue in bytes"),
        crate::registry::param!("auto", "", "true/false", "", "automatic thresholds and w_q"),
        crate::registry::param!("target_delay", "time", "> 0 (with auto)", "", "delay the automatic thresholds aim at"),
        crate::registry::param!("variant", "", "\"fj93\" or \"ns3\"", "\"ns2\"", "count rule: Floyd & Jacobson, or ns-3 3.44 RedQueueDisc"),
        crate::registry::param!("interval", "time", "> 0", "\"0ms\"", "max_p adaptation period"),
        crate::registry::param!("alpha", "probability", "(0, 1)", "1.5", "additive increase of max_p"),
        crate::registry::param!("beta", "factor", "(0, 1)", "1.5", "multiplicative decrease of max_p"),
        crate::registry::param!("top", "probability", "(bottom, 1]", "1.5", "upper bound of max_p"),
        crate::registry::param!("bottom", "probability", "(0, top)", "0.0", "lower bound of max_p"),
    ];
    fn validate(&self) -> Result<(), (String, String)> {
        AredConfig::validate(self)
    }
}

impl super::registry::QueueKind for AredConfig {
    const FIFO: bool = true;
    fn build(&self, port: &mut super::PortCtx) -> Box<dyn super::QueueDisc> {
        Box::new(super::Red::adaptive(&self.red, port.rate_bps, port.delay, self.adaptation()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a() -> Adaptation {
        let c: AredConfig = toml::from_str("limit = 100\nmin_th = 10\nmax_th = 30").unwrap();
        c.adaptation()
    }

    #[test]
    fn aimd_on_max_p() {
        let mut ad = a();
        // band is [18, 22]
        assert_eq!(ad.update(500_000_000, 25.0, 10.0, 30.0, 0.1), 0.11);
        // within the interval: no change
        assert_eq!(ad.update(600_000_000, 25.0, 10.0, 30.0, 0.11), 0.11);
        assert!((ad.update(1_000_000_000, 12.0, 10.0, 30.0, 0.11) - 0.099).abs() < 1e-12);
        assert_eq!(ad.update(1_500_000_000, 20.0, 10.0, 30.0, 0.099), 0.099);
        // small max_p: increase limited to max_p/4
        assert_eq!(ad.update(2_000_000_000, 25.0, 10.0, 30.0, 0.02), 0.025);
    }

    #[test]
    fn flattened_red_keys_and_unknown_key_error() {
        let c: AredConfig =
            toml::from_str("limit = 100\nmin_th = 10\nmax_th = 30\ngentle = true").unwrap();
        assert!(c.red.gentle);
        assert!(c.validate().is_ok());
        assert!(
            toml::from_str::<AredConfig>("limit = 100\nmin_th = 10\nmax_th = 30\nalpah = 1")
                .is_err()
        );
    }
}
