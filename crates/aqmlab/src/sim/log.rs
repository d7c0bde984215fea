//! The per-packet event log (`[output] log`): a [`PortLog`] on each logged
//! port when the simulation is built, merged by time when it is collected
//! (`net/event_log.rs`).

use super::Simulation;
use crate::net::event_log::{EventLog, PortLog};
use crate::scenario::Scenario;
use std::collections::BTreeSet;

impl Simulation {
    /// Give each port that `[output] log` names a log of the flows that
    /// `log_flows` names (every flow when it names none).
    pub(super) fn attach_logs(&mut self, sc: &Scenario) {
        self.table_format = sc.output.format;
        if sc.output.log.is_empty() {
            return;
        }
        let dirs: BTreeSet<String> = (sc.output.log.iter())
            .flat_map(|n| sc.link_directions(n))
            .map(|(_, a, b)| format!("{a}->{b}"))
            .collect();
        let flows = (!sc.output.log_flows.is_empty()).then(|| {
            let groups: BTreeSet<&str> = sc.output.log_flows.iter().map(|s| s.as_str()).collect();
            let n = (self.lps.iter())
                .map(|lp| lp.next_flow.ix())
                .max()
                .unwrap_or(0);
            let mut keep = vec![false; n];
            for f in self.lps.iter().flat_map(|lp| &lp.flows) {
                if groups.contains(f.group.as_str()) {
                    keep[f.id.ix()] = true;
                }
            }
            keep
        });
        let cap = sc.output.log_max_events.min(usize::MAX as u64) as usize;
        for lp in self.lps.iter_mut() {
            let id = lp.id;
            for sl in lp.links.iter_mut().filter(|sl| sl.tx_lp == id) {
                if dirs.contains(&sl.link.name) {
                    let log = PortLog::new(sl.id.0, flows.clone(), cap);
                    sl.link.port.set_log(Some(log));
                }
            }
        }
        let format = sc.output.log_format.unwrap_or(sc.output.format);
        self.log_cap = Some((sc.output.log_max_events, format));
    }

    /// The merged log, if the scenario asked for one.
    pub(super) fn collect_log(&self) -> Option<EventLog> {
        let (cap, format) = self.log_cap?;
        let logs = (self.lps.iter())
            .flat_map(|lp| lp.links.iter().filter(move |sl| sl.tx_lp == lp.id))
            .filter_map(|sl| sl.link.port.log())
            .collect();
        Some(EventLog::merge(logs, cap, format))
    }
}
