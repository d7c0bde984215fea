//! `aqmlab bench`: fixed scenarios; events/s, simulated seconds per wall
//! second, and peak memory. (Work in progress.)

use crate::CliResult;
use clap::Args;

#[derive(Args)]
pub struct BenchArgs {}

pub fn main(_a: BenchArgs) -> CliResult {
    Err(crate::CliError::Internal("bench not written yet".into()))
}
