//! Fluid models: small deterministic models of rates and backlogs used to
//! check the packet-level models against theory.
//!
//! - [`markmax`]: the MarkMax fluid model of Osipova, Blanc and Avrachenkov
//!   (N flows with linearly growing rates, one bottleneck buffer, the flow
//!   with the largest rate — or backlog — cut by β when the buffer reaches
//!   θ) and the paper's two threshold conditions.
//!
//! Units: rates in packets per second, backlogs in packets, times in seconds
//! (`f64`; these models have no event clock to share with the simulator).

pub mod markmax;
