//! Statistics over seeds, written once for every reproduction: mean, sample
//! standard deviation and a 95 % confidence half-width (Student's t).

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

/// The 97.5 % quantile of Student's t with `df` degrees of freedom (table
/// values to 3 decimals up to 30, then the normal approximation's 1.96
/// corrected by 2.4/df).
fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => T[df - 1],
        _ => 1.96 + 2.4 / df as f64,
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
        assert!((s.ci95() - 2.365 * s.sd / 8f64.sqrt()).abs() < 1e-12);
        let one = Summary::of([3.0]);
        assert_eq!((one.mean, one.sd), (3.0, 0.0));
        assert!(one.ci95().is_nan());
        assert!(Summary::of([]).mean.is_nan());
        assert_eq!(mean_by::<f64>(&[], |x| *x), 0.0);
        assert!((sd_by(&[1.0, 3.0], |x| *x) - 2f64.sqrt()).abs() < 1e-12);
    }
}
