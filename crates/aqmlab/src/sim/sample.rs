//! Samplers: the queue and congestion-window time series. Each logical
//! process samples what it holds (the ports of its links, the senders of
//! its flows) at the same instants; collection merges the series in global
//! link and flow order, so a series does not depend on the partition.

use super::event::{owner, Event};
use super::lp::LogicalProcess;
use super::Shared;
use crate::aqm::QueueClassCounts;
use crate::engine::{to_secs, TieBreak};
use crate::metrics::{ClassSample, ClassSeries, CwndSample, QueueSample};

/// Append one sample of each of a discipline's own queues (`classes`, in
/// the discipline's order) to their series.
fn sample_classes(series: &mut Vec<ClassSeries>, classes: Vec<QueueClassCounts>) {
    for (i, c) in classes.into_iter().enumerate() {
        if series.len() <= i {
            series.push(ClassSeries {
                class: c.name.to_string(),
                samples: Vec::new(),
            });
        }
        series[i].samples.push(ClassSample {
            len_pkts: c.len_pkts,
            len_bytes: c.len_bytes,
            delay_s: if c.len_pkts == 0 {
                0.0
            } else {
                to_secs(c.last_sojourn_ns)
            },
            arrivals: c.arrivals,
            dropped: c.dropped,
            marked: c.marked,
        });
    }
}

impl LogicalProcess {
    pub(super) fn on_sample(&mut self, shared: &Shared) {
        let t = to_secs(self.now);
        self.class_series.resize_with(self.series.len(), Vec::new);
        for (k, (li, v)) in self.series.iter_mut().enumerate() {
            let port = &self.links[li.ix()].link.port;
            let qd = &port.disc;
            sample_classes(&mut self.class_series[k], qd.classes());
            let len = qd.len_pkts();
            let c = port.stats.counters();
            v.push(QueueSample {
                arrivals: c.arrivals,
                dropped: c.dropped(),
                marked: c.marked,
                time_s: t,
                len_pkts: len as u32,
                len_bytes: qd.len_bytes(),
                avg_pkts: qd.avg_len(),
                delay_s: if len == 0 {
                    0.0
                } else {
                    to_secs(port.stats.last_sojourn())
                },
            });
        }
        self.sampler_events += 1;
        let tie = TieBreak {
            owner: owner::SAMPLE,
            seq: self.sampler_events,
        };
        (self.events).schedule(self.now + shared.sample_interval, tie, Event::Sample);
    }

    pub(super) fn on_cwnd_sample(&mut self, shared: &Shared) {
        let t = to_secs(self.now);
        for (lf, v) in self.cwnd.iter_mut() {
            if let Some(snd) = self.flows[lf.ix()].transport.sender() {
                v.push(CwndSample {
                    time_s: t,
                    cwnd: snd.cc_state.cwnd,
                    ssthresh: (snd.cc_state.ssthresh < 1e8).then_some(snd.cc_state.ssthresh),
                    in_flight: snd.snd_max - snd.snd_una,
                    srtt_s: snd.srtt().map(to_secs),
                });
            }
        }
        self.cwnd_events += 1;
        let tie = TieBreak {
            owner: owner::CWND,
            seq: self.cwnd_events,
        };
        (self.events).schedule(self.now + shared.cwnd_interval, tie, Event::CwndSample);
    }
}
