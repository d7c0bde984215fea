//! Statistics over seeds, written once for `sweep`, every reproduction and
//! the Python package: mean, sample standard deviation, a 95 % confidence
//! half-width (Student's t, the quantile exact for every degree of freedom)
//! and Jain's fairness index.

/// Jain's fairness index (R. Jain, D. Chiu, W. Hawe, DEC TR-301, 1984): the
/// core library's, which run summaries use, so every report agrees.
pub use aqmlab::metrics::jain;

/// Mean, sample standard deviation (n − 1) and count of a set of values.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    pub mean: f64,
    /// 0 with fewer than two values.
    pub sd: f64,
    pub n: usize,
}

impl Summary {
    /// Of `v`; the mean of no values is NaN.
    pub fn of(v: impl IntoIterator<Item = f64>) -> Summary {
        let v: Vec<f64> = v.into_iter().collect();
        let n = v.len();
        if n == 0 {
            return Summary {
                mean: f64::NAN,
                sd: 0.0,
                n,
            };
        }
        let mean = v.iter().sum::<f64>() / n as f64;
        let sd = if n > 1 {
            (v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Summary { mean, sd, n }
    }

    /// Half-width of the 95 % confidence interval of the mean (Student's t
    /// with n − 1 degrees of freedom); NaN with fewer than two values.
    pub fn ci95(&self) -> f64 {
        if self.n < 2 {
            return f64::NAN;
        }
        t975(self.n - 1) * self.sd / (self.n as f64).sqrt()
    }
}

/// Mean of `v` (NaN when empty).
pub fn mean(v: impl IntoIterator<Item = f64>) -> f64 {
    Summary::of(v).mean
}

/// Mean of `f` over `items` (0 when empty, as the reports print it).
pub fn mean_by<T>(items: &[T], f: impl Fn(&T) -> f64) -> f64 {
    if items.is_empty() {
        0.0
    } else {
        mean(items.iter().map(f))
    }
}

/// Sample standard deviation of `f` over `items` (0 with fewer than two).
pub fn sd_by<T>(items: &[T], f: impl Fn(&T) -> f64) -> f64 {
    Summary::of(items.iter().map(f)).sd
}

/// The 97.5 % quantile of Student's t with `df` degrees of freedom, exact
/// for every `df` (the inverse of the regularised incomplete beta function,
/// `statrs`); NaN for `df = 0`.
pub fn t975(df: usize) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    match StudentsT::new(0.0, 1.0, df as f64) {
        Ok(t) if df > 0 => t.inverse_cdf(0.975),
        _ => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_sd_and_ci_of_known_values() {
        let s = Summary::of([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.n, 8);
        assert!((s.mean - 5.0).abs() < 1e-12);
        // sample sd: sqrt(32 / 7)
        assert!((s.sd - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert!((s.ci95() - t975(7) * s.sd / 8f64.sqrt()).abs() < 1e-12);
        let one = Summary::of([3.0]);
        assert_eq!((one.mean, one.sd), (3.0, 0.0));
        assert!(one.ci95().is_nan());
        assert!(Summary::of([]).mean.is_nan());
        assert_eq!(mean_by::<f64>(&[], |x| *x), 0.0);
        assert!((sd_by(&[1.0, 3.0], |x| *x) - 2f64.sqrt()).abs() < 1e-12);
    }

    /// The quantile against published values (R's `qt(0.975, df)`, 6
    /// decimals) at small, moderate and large df, and its limit z(0.975).
    #[test]
    fn t_quantile_is_exact_for_every_df() {
        for (df, q) in [
            (1, 12.706205),
            (2, 4.302653),
            (7, 2.364624),
            (30, 2.042272),
            (31, 2.039513),
            (60, 2.000298),
            (120, 1.979930),
            (1000, 1.962339),
        ] {
            assert!((t975(df) - q).abs() < 1e-6, "df {df}: {} vs {q}", t975(df));
        }
        // the seed limit: z + (z³ + z)/(4·df) is within 1e-8 there
        assert!((t975(10_000) - 1.960201).abs() < 1e-5, "{}", t975(10_000));
        assert!(t975(0).is_nan());
        // decreasing in df
        assert!((1..200).all(|d| t975(d) > t975(d + 1)));
    }

    #[test]
    fn jain_of_known_sets() {
        assert_eq!(jain(&[5.0, 5.0]), 1.0);
        assert!((jain(&[1.0, 2.0]) - 0.9).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }
}
