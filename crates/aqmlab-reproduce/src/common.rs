//! Pieces shared by the reproductions: plain-text and markdown tables, and
//! running many simulations in parallel with a progress bar.

use crate::progress::par_map;
use crate::{Error, Result};
use aqmlab::{RunResult, Scenario, Simulation};
use std::fmt::Write as _;

/// A plain-text table: first column left-aligned, the others right-aligned.
pub fn text_table(head: &[String], rows: &[Vec<String>]) -> String {
    let ncol = head.len();
    let mut w = vec![0usize; ncol];
    for r in std::iter::once(head).chain(rows.iter().map(|r| r.as_slice())) {
        for (i, c) in r.iter().enumerate().take(ncol) {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |r: &[String]| {
        let mut s = String::new();
        for (i, c) in r.iter().enumerate().take(ncol) {
            let pad = w[i] - c.chars().count();
            if i == 0 {
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str("   ");
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
        }
        s.push('\n');
        s
    };
    let mut s = line(head);
    s.push_str(&"-".repeat(w.iter().sum::<usize>() + 3 * (ncol - 1)));
    s.push('\n');
    for r in rows {
        s.push_str(&line(r));
    }
    s
}

/// A markdown table: first column left-aligned, the others right-aligned.
pub fn md_rows(head: &[String], rows: &[Vec<String>]) -> String {
    let mut s = format!("| {} |\n|", head.join(" | "));
    for i in 0..head.len() {
        s.push_str(if i == 0 { "---|" } else { "---:|" });
    }
    s.push('\n');
    for r in rows {
        let _ = writeln!(s, "| {} |", r.join(" | "));
    }
    s
}

/// Run every (scenario, seed) in parallel on rayon's pool, showing one
/// progress bar over the runs; results come back in input order.
pub fn run_all(label: &str, jobs: &[(&Scenario, u64)]) -> Vec<RunResult> {
    par_map(label, jobs, |(sc, seed)| Simulation::new(sc, *seed).run())
}

/// Packet conservation (sent = delivered + dropped + in flight) in run `r`,
/// or an internal error naming the scenario and seed.
pub fn check_conservation(r: &RunResult) -> Result {
    if r.conservation.holds() {
        Ok(())
    } else {
        Err(Error::Internal(format!(
            "{} seed {}: packet conservation violated: {:?}",
            r.scenario, r.seed, r.conservation
        )))
    }
}
