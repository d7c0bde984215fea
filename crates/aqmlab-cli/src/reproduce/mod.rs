//! `aqmlab reproduce PAPER`: run a paper's experiment and print its numbers
//! beside ours.

pub mod red_gateway;

use crate::CliResult;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Paper {
    /// Fang, Youn, Choo, Yu: New Reno through a RED gateway (PDCS 2001).
    RedGateway,
}

#[derive(Args)]
pub struct ReproduceArgs {
    /// Which paper.
    pub paper: Paper,
    /// Seeds per configuration (the paper used 10).
    #[arg(long, default_value_t = 10)]
    pub seeds: u64,
    /// Output directory for the report, tables and plots.
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
}

pub fn main(a: ReproduceArgs) -> CliResult {
    if a.seeds == 0 {
        return Err(crate::CliError::Input("--seeds must be at least 1".into()));
    }
    if let Some(j) = a.jobs {
        rayon::ThreadPoolBuilder::new()
            .num_threads(j.max(1))
            .build_global()
            .map_err(|e| crate::CliError::Internal(e.to_string()))?;
    }
    match a.paper {
        Paper::RedGateway => red_gateway::run(
            a.seeds,
            &a.out
                .unwrap_or_else(|| PathBuf::from("results/red-gateway")),
        ),
    }
}
