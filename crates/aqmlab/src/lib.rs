//! aqmlab — a fast, faithful packet-level simulator for TCP congestion control
//! and active queue management.
//!
//! ```no_run
//! use aqmlab::{Scenario, Simulation};
//! let sc = Scenario::from_file("scenarios/papers/red-gateway/b1.toml").unwrap();
//! let res = Simulation::new(&sc, sc.seed).run();
//! println!("{} events, bottleneck drops {}", res.events, res.queue("gw->sink").unwrap().dropped);
//! ```

pub mod aqm;
pub mod catalogue;
pub mod echo;
pub mod engine;
pub mod fluid;
pub mod metrics;
pub mod net;
pub mod output;
pub mod registry;
pub mod scenario;
pub mod sim;
pub mod tcp;
pub mod traffic;
pub mod units;

pub use metrics::RunResult;
pub use scenario::{Scenario, ScenarioError};
pub use sim::{Simulation, Snapshot};
