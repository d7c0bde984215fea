//! Reproduction of Fang, Youn, Choo, Yu, "Evaluation of Proactive Congestion
//! Control on RED Gateway" (PDCS 2001). (Work in progress.)

use crate::{CliError, CliResult};
use std::path::Path;

pub fn run(_seeds: u64, _out: &Path) -> CliResult {
    Err(CliError::Internal(
        "red-gateway reproduction not written yet".into(),
    ))
}
