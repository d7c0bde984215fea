//! `aqmlab reproduce PAPER`: run a paper's experiment and print its numbers
//! beside ours.

pub mod codel_highspeed_tcp;
pub mod common;
pub mod markmax;
pub mod maxnet_mice;
pub mod red_gateway;
pub mod rio_ps;

use crate::CliResult;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Paper {
    /// Fang, Youn, Choo, Yu: New Reno through a RED gateway (PDCS 2001).
    RedGateway,
    /// Kushwaha, Ratneshwer: RED, CoDel and sfqCoDel with CUBIC, H-TCP and
    /// Compound TCP at 622 Mbit/s.
    CodelHighspeedTcp,
    /// Osipova, Blanc, Avrachenkov: MarkMax vs DropTail, New Reno flows with
    /// different RTTs (schemes 1 and 2).
    Markmax,
    /// Guo & Matta: RIO-PS vs DropTail and RED, goodput table and web
    /// traffic (ICNP 2001).
    RioPs,
    /// Phan, Tran, Nguyen, Thoai: MaxNet vs TCP Reno/RED on HTTP mice with
    /// an FTP elephant (MSOCP 2009).
    MaxnetMice,
}

impl Paper {
    /// Seeds per configuration when `--seeds` is not given.
    fn default_seeds(self) -> u64 {
        match self {
            Paper::RedGateway => 10,       // the paper's ten runs per case
            Paper::CodelHighspeedTcp => 3, // the paper reports one run; 3 show the spread
            Paper::Markmax => 5,           // the paper reports one number per cell
            Paper::RioPs => 2,             // 4000 s web runs; the paper reports one run
            Paper::MaxnetMice => 10,       // testbed runs; seeds move the elephant's phase
        }
    }

    fn default_out(self) -> PathBuf {
        PathBuf::from("results").join(match self {
            Paper::RedGateway => "red-gateway",
            Paper::CodelHighspeedTcp => "codel-highspeed-tcp",
            Paper::Markmax => "markmax",
            Paper::RioPs => "rio-ps",
            Paper::MaxnetMice => "maxnet-mice",
        })
    }
}

#[derive(Args)]
pub struct ReproduceArgs {
    /// Which paper.
    pub paper: Paper,
    /// Seeds per configuration (default: the paper's number of runs, see
    /// each paper's report).
    #[arg(long)]
    pub seeds: Option<u64>,
    /// Output directory for the report, tables and plots (default
    /// results/<paper>).
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
}

pub fn main(a: ReproduceArgs) -> CliResult {
    let seeds = a.seeds.unwrap_or(a.paper.default_seeds());
    if seeds == 0 {
        return Err(crate::CliError::Input("--seeds must be at least 1".into()));
    }
    if let Some(j) = a.jobs {
        rayon::ThreadPoolBuilder::new()
            .num_threads(j.max(1))
            .build_global()
            .map_err(|e| crate::CliError::Internal(e.to_string()))?;
    }
    let out = a.out.unwrap_or_else(|| a.paper.default_out());
    match a.paper {
        Paper::RedGateway => red_gateway::run(seeds, &out),
        Paper::CodelHighspeedTcp => codel_highspeed_tcp::run(seeds, &out),
        Paper::Markmax => markmax::run(seeds, &out),
        Paper::RioPs => rio_ps::run(seeds, &out),
        Paper::MaxnetMice => maxnet_mice::run(seeds, &out),
    }
}
