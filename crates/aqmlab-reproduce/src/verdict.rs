//! Verdicts computed from the run: a measured value is compared with the
//! paper's under a tolerance that the report states next to the verdict.
//! Where no tolerance makes sense a report shows the numbers and no verdict;
//! nothing in a report says "agrees" or "holds" without going through here.

/// How far a measured value may lie from the paper's and still agree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tol {
    /// |aqmlab − paper| ≤ this, in the value's unit.
    Abs(f64),
    /// |aqmlab − paper| ≤ this fraction of |paper|.
    Rel(f64),
}

impl Tol {
    /// Whether `measured` agrees with `paper` under this tolerance. A
    /// non-finite measurement never agrees.
    pub fn within(self, measured: f64, paper: f64) -> bool {
        if !measured.is_finite() {
            return false;
        }
        let d = (measured - paper).abs();
        match self {
            Tol::Abs(a) => d <= a + 1e-12,
            Tol::Rel(r) => d <= r * paper.abs() + 1e-12,
        }
    }

    /// The tolerance in words, e.g. "±0.05" or "±20 % of the paper's value".
    pub fn describe(self, unit: &str) -> String {
        let unit = if unit.is_empty() {
            String::new()
        } else {
            format!(" {unit}")
        };
        match self {
            Tol::Abs(a) => format!("±{a}{unit}"),
            Tol::Rel(r) => format!("±{} % of the paper's value", r * 100.0),
        }
    }
}

/// "agrees" or "differs".
pub fn word(ok: bool) -> &'static str {
    if ok {
        "agrees"
    } else {
        "differs"
    }
}

/// One comparison in words: "agrees with the paper (aqmlab 0.612, paper 0.55;
/// tolerance ±0.1)" or "differs from the paper (…)".
pub fn compare(measured: f64, paper: f64, tol: Tol, unit: &str, dec: usize) -> String {
    let ok = tol.within(measured, paper);
    format!(
        "{} {} the paper (aqmlab {measured:.dec$}, paper {paper}; tolerance {})",
        word(ok),
        if ok { "with" } else { "from" },
        tol.describe(unit)
    )
}

/// How many of `n` comparisons agree, in words: "all 8", "5 of 8", "none of
/// the 8".
pub fn count(k: usize, n: usize) -> String {
    if n > 0 && k == n {
        format!("all {n}")
    } else if k == 0 {
        format!("none of the {n}")
    } else {
        format!("{k} of {n}")
    }
}

/// A finding the paper states as an inequality or trend, checked on each of
/// `n` cases of which `k` show it: "holds" only when every case shows it,
/// "holds in part" when some do, "does not hold" when none do.
pub fn finding(k: usize, n: usize) -> &'static str {
    if n > 0 && k == n {
        "holds"
    } else if k > 0 {
        "holds in part"
    } else {
        "does not hold"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_tolerance_flips_at_the_bound() {
        let t = Tol::Abs(0.05);
        assert!(t.within(0.55, 0.5));
        assert!(t.within(0.45, 0.5));
        assert!(!t.within(0.5501, 0.5));
        assert!(!t.within(0.4499, 0.5));
        assert!(!t.within(f64::NAN, 0.5));
        assert!(compare(0.54, 0.5, t, "", 2).starts_with("agrees"));
        assert!(compare(0.56, 0.5, t, "", 2).starts_with("differs"));
        assert!(compare(0.56, 0.5, t, "", 2).contains("tolerance ±0.05"));
    }

    #[test]
    fn relative_tolerance_scales_with_the_paper() {
        let t = Tol::Rel(0.2);
        assert!(t.within(120.0, 100.0));
        assert!(!t.within(121.0, 100.0));
        assert!(t.within(0.0, 0.0));
        assert!(!t.within(0.001, 0.0));
        assert_eq!(t.describe(""), "±20 % of the paper's value");
    }

    #[test]
    fn counts_and_findings_follow_the_count() {
        assert_eq!(finding(8, 8), "holds");
        assert_eq!(finding(3, 8), "holds in part");
        assert_eq!(finding(0, 8), "does not hold");
        assert_eq!(finding(0, 0), "does not hold");
        assert_eq!(count(8, 8), "all 8");
        assert_eq!(count(0, 8), "none of the 8");
        assert_eq!(count(5, 8), "5 of 8");
    }
}
