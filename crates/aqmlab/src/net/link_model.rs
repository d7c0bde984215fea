//! A link's service model: when a packet of a given size, whose
//! serialisation starts at a given time, has left the transmitter, and
//! what propagation delay and loss probability it then meets.
//!
//! A link of constant rate (today's links) keeps no model: the transmitter
//! computes `size · 8 / rate` inline (`Link::rate_bps != 0`), the one
//! branch this seam adds to a packet's path. A link whose service varies
//! has `Link::rate_bps == 0` and a [`Varying`] model behind a pointer:
//!
//! - a **piecewise-constant schedule** of rate, delay and loss ([`Point`]s,
//!   from the scenario's `[[events]]`): a packet's bits are served at the
//!   rate in force while they are sent, so a packet straddling a change is
//!   served partly at each rate; its delay is the one in force when its
//!   serialisation ends (a packet never overtakes the one ahead of it: a
//!   shorter delay takes effect as the pipe drains), its loss probability
//!   the one in force when it reaches the far end;
//! - a **packet-delivery trace** ([`Trace`]) in Mahimahi's format and with
//!   Mahimahi's rule (`src/packet/link_queue.cc`, `LinkQueue::rationalize`
//!   and `use_a_delivery_opportunity`): each line is one delivery
//!   opportunity of [`OPPORTUNITY_BYTES`] at an integer millisecond; an
//!   opportunity drains bytes, so it may finish several small packets and a
//!   large packet may take several; an opportunity that finds nothing to
//!   send is wasted; after the last line the trace repeats, shifted by its
//!   last timestamp (`mm-link` without `--once`), or, with `trace_once`,
//!   the link delivers nothing more (`--once`: `finished_`). Mahimahi
//!   stamps a packet with the millisecond it arrives in and enqueues it
//!   after the opportunities due at or before that millisecond have run
//!   (`LinkQueue::read_packet` calls `rationalize(now)` first), so a packet
//!   uses only opportunities strictly after its arrival: one that arrives
//!   at an idle link waits for the next opportunity, and the next packet of
//!   a busy period goes on with what the opportunity that carried the one
//!   before it has left (and others at the same millisecond) only if it
//!   arrived before that opportunity ran. Read at ravinet/mahimahi commit
//!   ae477d437615b972217498ba52be07db17a15618, `src/frontend/link_queue.cc`
//!   and `link_queue.hh` (`PACKET_SIZE` = 1504: `read_packet` throws on a
//!   larger packet; here a larger packet takes the bytes of as many
//!   opportunities as it needs, a difference the manual states). Mahimahi
//!   logs a packet's delay
//!   as its departure (the opportunity that finished it) less its arrival;
//!   so does a traced link's port (`Link::modelled_finish`).

use crate::engine::{tx_time, Time, NS_PER_SEC};
use std::sync::Arc;

/// Bytes one trace line delivers: Mahimahi's `PACKET_SIZE`, its largest
/// TUN payload.
pub const OPPORTUNITY_BYTES: u64 = 1504;

const NS_PER_MS: u64 = 1_000_000;

/// A packet-delivery trace: opportunity times in ms, non-decreasing, the
/// last one positive (the period after which the trace repeats).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    ms: Vec<u64>,
}

impl Trace {
    /// Parse Mahimahi's format: one non-negative integer (ms) per line,
    /// non-decreasing; a blank line is an error, as in Mahimahi
    /// (`LinkQueue::LinkQueue`: "invalid empty line"; a final newline ends
    /// the last line). The error names the line.
    pub fn parse(text: &str) -> Result<Trace, String> {
        let mut ms = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let s = line.trim();
            if s.is_empty() {
                return Err(format!(
                    "line {}: empty line (a Mahimahi trace has one ms timestamp on every line; Mahimahi refuses blank lines)",
                    i + 1
                ));
            }
            let v: u64 = s.parse().map_err(|_| {
                format!(
                    "line {}: `{}` is not a whole number of milliseconds",
                    i + 1,
                    crate::echo::echo(s)
                )
            })?;
            // 10¹² ms (31 years) keeps every time below 10¹⁸ ns
            if v > 1_000_000_000_000 {
                return Err(format!("line {}: {v} ms is beyond 10^12 ms", i + 1));
            }
            if let Some(&last) = ms.last() {
                if v < last {
                    return Err(format!(
                        "line {}: {v} ms comes after {last} ms; timestamps must not decrease",
                        i + 1
                    ));
                }
            }
            ms.push(v);
        }
        match ms.last() {
            None => Err("the trace has no delivery opportunity (one ms timestamp per line)".into()),
            Some(0) => {
                Err("the trace's last timestamp must be positive (it is the trace's period)".into())
            }
            Some(_) => Ok(Trace { ms }),
        }
    }

    /// The period after which the trace repeats.
    pub fn period(&self) -> Time {
        self.ms[self.ms.len() - 1] * NS_PER_MS
    }

    /// Opportunities per period.
    pub fn len(&self) -> usize {
        self.ms.len()
    }

    /// Always false: a parsed trace has an opportunity.
    pub fn is_empty(&self) -> bool {
        self.ms.is_empty()
    }

    /// Mean capacity over a period, bit/s (at least 1).
    pub fn mean_rate_bps(&self) -> u64 {
        let bits = self.ms.len() as u128 * OPPORTUNITY_BYTES as u128 * 8 * NS_PER_SEC as u128;
        ((bits / self.period() as u128) as u64).max(1)
    }

    /// The most opportunities due in one millisecond, as a rate (bit/s): no
    /// interval of at least 1 ms is offered more.
    pub fn peak_rate_bps(&self) -> u64 {
        let mut best = 0u64;
        let mut i = 0;
        while i < self.ms.len() {
            let j = i + self.ms[i..].partition_point(|&m| m == self.ms[i]);
            best = best.max((j - i) as u64);
            i = j;
        }
        // the last line and the next period's first line may share a ms
        if self.ms[0] == 0 {
            let first = self.ms.partition_point(|&m| m == 0) as u64;
            let last = self.ms.len() - self.ms.partition_point(|&m| m < self.ms[self.ms.len() - 1]);
            best = best.max(first + last as u64);
        }
        best * OPPORTUNITY_BYTES * 8 * 1000
    }

    /// Time of opportunity `i` of period `cycle`.
    #[inline]
    fn at(&self, cycle: u64, i: usize) -> Time {
        (cycle * self.ms[self.ms.len() - 1] + self.ms[i]) * NS_PER_MS
    }

    /// Bytes offered by the opportunities due in `(0, t]` (from the first
    /// period on), the capacity a link with this trace offers by time `t`;
    /// `once`: the trace is played once (nothing after its last line).
    pub fn offered_bytes_once(&self, t: Time, once: bool) -> u64 {
        if once && t >= self.period() {
            let zero = self.ms.partition_point(|&m| m == 0) as u64;
            return (self.ms.len() as u64 - zero) * OPPORTUNITY_BYTES;
        }
        self.offered_bytes(t)
    }

    /// Bytes offered by the opportunities due in `(0, t]` (from the first
    /// period on), the capacity a link with this trace offers by time `t`.
    pub fn offered_bytes(&self, t: Time) -> u64 {
        let p = self.period();
        let (cycle, rem) = (t / p, t % p);
        let within = self.ms.partition_point(|&m| m * NS_PER_MS <= rem) as u64;
        // opportunities at 0 ms of the first period are wasted by any link
        let zero = self.ms.partition_point(|&m| m == 0) as u64;
        (cycle * self.ms.len() as u64 + within - zero.min(cycle * self.ms.len() as u64 + within))
            * OPPORTUNITY_BYTES
    }
}

/// A point of a piecewise-constant schedule: from `at` on, the link's
/// rate, delay and loss probability.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub at: Time,
    pub rate_bps: u64,
    pub delay: Time,
    pub loss: f64,
}

/// The finish time of a packet on a `trace_once` link after its last
/// opportunity: never (beyond any run; the transmitter keeps the packet).
pub const NEVER: Time = 1 << 62;

/// Where a trace link stands: the next unused opportunity and what the last
/// used one has left.
#[derive(Clone, Debug)]
struct Cursor {
    trace: Arc<Trace>,
    cycle: u64,
    next: usize,
    /// Bytes the last used opportunity has left, and its time.
    left: u64,
    left_at: Time,
    /// Play the trace once (`trace_once`): after its last opportunity the
    /// link delivers nothing (`done`).
    once: bool,
    done: bool,
}

impl Cursor {
    fn advance(&mut self) {
        self.next += 1;
        if self.next == self.trace.len() {
            self.next = 0;
            self.cycle += 1;
            self.done |= self.once;
        }
    }

    /// Skip every opportunity due at or before `t` (wasted: the link was
    /// idle).
    fn skip_through(&mut self, t: Time) {
        let p = self.trace.period();
        if self.trace.at(self.cycle, self.next) + p <= t {
            // more than a period behind: jump to the period holding `t`
            // (the skipped opportunities are all due before `t`)
            self.cycle = t / p - 1;
            self.next = 0;
            self.done |= self.once && self.cycle > 0;
        }
        while !self.done && self.trace.at(self.cycle, self.next) <= t {
            self.advance();
        }
    }

    /// When a packet of `size` bytes that arrived at the link at `arrived`
    /// and starts at `start` has left: it uses only opportunities after
    /// `arrived` (the leftover of the opportunity at `start` only if it
    /// arrived before that opportunity ran).
    fn finish(&mut self, start: Time, size: u64, arrived: Time) -> Time {
        let mut need = size;
        let mut end = start;
        if self.left > 0 && self.left_at == start && arrived < start {
            let take = self.left.min(need);
            need -= take;
            self.left -= take;
        } else if self.left_at != start || arrived >= start {
            self.left = 0;
            self.skip_through(start);
        }
        while need > 0 {
            if self.done {
                return NEVER;
            }
            let t = self.trace.at(self.cycle, self.next);
            self.advance();
            let take = OPPORTUNITY_BYTES.min(need);
            need -= take;
            self.left = OPPORTUNITY_BYTES - take;
            self.left_at = t;
            end = t;
        }
        end
    }
}

/// The model of a link whose service varies.
#[derive(Clone, Debug)]
pub struct Varying {
    /// Sorted by time, the first at 0. With a trace, the rates are unused.
    points: Vec<Point>,
    trace: Option<Cursor>,
    /// When the packet being serialised started (for the packet tap).
    pub tx_start: Time,
    /// Bytes whose serialisation started (the numerator of a modelled
    /// link's utilisation).
    pub started_bytes: u64,
}

impl Varying {
    /// A model from its schedule (`points[0].at == 0`, sorted) and an
    /// optional trace, played once (`trace_once`) or repeated.
    pub fn new(points: Vec<Point>, trace: Option<Arc<Trace>>, once: bool) -> Self {
        debug_assert!(points.first().is_some_and(|p| p.at == 0));
        debug_assert!(points.windows(2).all(|w| w[0].at <= w[1].at));
        Varying {
            points,
            trace: trace.map(|trace| Cursor {
                trace,
                cycle: 0,
                next: 0,
                left: 0,
                left_at: 0,
                once,
                done: false,
            }),
            tx_start: 0,
            started_bytes: 0,
        }
    }

    fn point(&self, t: Time) -> &Point {
        let i = self.points.partition_point(|p| p.at <= t);
        &self.points[i.max(1) - 1]
    }

    /// The delay a packet whose serialisation ends at `t` propagates with.
    #[inline]
    pub fn delay_at(&self, t: Time) -> Time {
        self.point(t).delay
    }

    /// The loss probability a packet reaching the far end at `t` meets.
    #[inline]
    pub fn loss_at(&self, t: Time) -> f64 {
        self.point(t).loss
    }

    /// The rate in force at `t` (the trace's mean rate for a trace link).
    pub fn rate_at(&self, t: Time) -> u64 {
        match &self.trace {
            Some(c) => c.trace.mean_rate_bps(),
            None => self.point(t).rate_bps,
        }
    }

    /// The highest loss probability of the schedule.
    pub fn max_loss(&self) -> f64 {
        self.points.iter().map(|p| p.loss).fold(0.0, f64::max)
    }

    /// Whether the model follows a trace.
    pub fn traced(&self) -> bool {
        self.trace.is_some()
    }

    /// The time at which a packet of `size` bytes whose serialisation
    /// starts at `start` (not before the previous one's end) has left;
    /// `arrived`: when it reached the link's queue (a trace's opportunity
    /// serves only packets that arrived before it). [`NEVER`] on a
    /// `trace_once` link whose trace has ended.
    pub fn finish(&mut self, start: Time, size: u32, arrived: Time) -> Time {
        self.tx_start = start;
        self.started_bytes += size as u64;
        if let Some(c) = &mut self.trace {
            return c.finish(start, size as u64, arrived);
        }
        // bits·1e9 still to serve, served at rate r for dt ns as r·dt
        let mut need = size as u128 * 8 * NS_PER_SEC as u128;
        let mut t = start;
        let mut i = self.points.partition_point(|p| p.at <= start).max(1) - 1;
        loop {
            let r = self.points[i].rate_bps as u128;
            match self.points.get(i + 1) {
                Some(next) if r * ((next.at - t) as u128) < need => {
                    need -= r * (next.at - t) as u128;
                    t = next.at;
                    i += 1;
                }
                _ => return t + ((need + r / 2) / r) as Time,
            }
        }
    }

    /// The capacity offered over `[0, t]`, in bytes (for utilisation).
    pub fn offered_bytes(&self, t: Time) -> u64 {
        if let Some(c) = &self.trace {
            return c.trace.offered_bytes_once(t, c.once);
        }
        let mut bits = 0u128;
        for (k, p) in self.points.iter().enumerate() {
            if p.at >= t {
                break;
            }
            let end = self.points.get(k + 1).map_or(t, |n| n.at.min(t));
            bits += p.rate_bps as u128 * (end - p.at) as u128;
        }
        (bits / (8 * NS_PER_SEC as u128)) as u64
    }

    /// The serialisation time of `size` at the schedule's first rate (a
    /// constant schedule gives the constant link's figures).
    pub fn first_tx_time(&self, size: u32) -> Time {
        tx_time(size, self.points[0].rate_bps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = NS_PER_MS;

    fn trace(text: &str) -> Varying {
        let p = Point {
            at: 0,
            rate_bps: 1,
            delay: 0,
            loss: 0.0,
        };
        Varying::new(vec![p], Some(Arc::new(Trace::parse(text).unwrap())), false)
    }

    #[test]
    fn bad_traces_name_the_line() {
        assert!(Trace::parse("").unwrap_err().contains("no delivery"));
        assert!(Trace::parse("0\n0\n").unwrap_err().contains("positive"));
        assert!(Trace::parse("1\nx\n").unwrap_err().starts_with("line 2"));
        assert!(Trace::parse("5\n3\n").unwrap_err().contains("line 2"));
        assert!(Trace::parse("-1\n").unwrap_err().contains("line 1"));
        // a blank line is an error, as in Mahimahi; a final newline is not
        let e = Trace::parse("1\n\n2\n").unwrap_err();
        assert!(e.starts_with("line 2: empty line"), "{e}");
        assert!(Trace::parse("1\n2\n \n").unwrap_err().starts_with("line 3"));
        assert_eq!(Trace::parse("1\n2\n").unwrap().len(), 2);
        assert_eq!(Trace::parse("1\n2").unwrap().len(), 2);
    }

    /// Departure times worked out by hand from Mahimahi's rule. Trace
    /// `1 1 3 4`: opportunities at 1, 1, 3, 4 ms, then 5, 5, 7, 8 ms, …
    #[test]
    fn departures_follow_mahimahis_rule() {
        let mut m = trace("1\n1\n3\n4\n");
        // 1500 B at 0: the first opportunity at 1 ms carries it (4 B left)
        assert_eq!(m.finish(0, 1500, 0), MS);
        // next of the busy period (queued at 0.5 ms), 100 B at 1 ms: 4 B of
        // the first opportunity, 96 of the second (1 ms; 1408 B left)
        assert_eq!(m.finish(MS, 100, MS / 2), MS);
        // 1408 B fit in what is left: still 1 ms
        assert_eq!(m.finish(MS, 1408, MS / 2), MS);
        // 3010 B: opportunities at 3 and 4 ms (1504 B each) and 2 B of
        // the next period's first one, at 5 ms
        assert_eq!(m.finish(MS, 3010, MS / 2), 5 * MS);
        // idle until 6.5 ms: the rest of 5 ms's and the second 5 ms
        // opportunity are wasted; 40 B goes at 7 ms
        assert_eq!(m.finish(6 * MS + MS / 2, 40, 6 * MS + MS / 2), 7 * MS);
        // an arrival at an idle link exactly at 8 ms misses that opportunity
        assert_eq!(m.finish(8 * MS, 40, 8 * MS), 9 * MS);
        // far ahead: 1000 ms is the start of period 250 (9, 9, 11, 12 ms
        // is period 2); the next opportunities after 1000 ms are 1001, 1001
        assert_eq!(m.finish(1000 * MS, 3008, 1000 * MS), 1001 * MS);
        assert_eq!(m.finish(1001 * MS, 1, 1000 * MS), 1003 * MS);
    }

    /// A packet that arrives on the millisecond of the opportunity that
    /// carried the one before it does not use that opportunity's leftover
    /// (Mahimahi runs the opportunity before it enqueues the packet); one
    /// that arrived before does.
    #[test]
    fn a_packet_arriving_on_the_opportunity_does_not_use_its_leftover() {
        for (arrived, want) in [(MS, 2 * MS), (MS - 1, MS), (MS / 2, MS)] {
            let mut m = trace("1\n2\n3\n");
            assert_eq!(m.finish(0, 1000, 0), MS);
            assert_eq!(m.finish(MS, 400, arrived), want, "arrived {arrived}");
        }
        // nor does it use another opportunity at that millisecond
        let mut m = trace("1\n1\n3\n");
        assert_eq!(m.finish(0, 1504, 0), MS);
        assert_eq!(m.finish(MS, 100, MS), 3 * MS);
        let mut m = trace("1\n1\n3\n");
        assert_eq!(m.finish(0, 1504, 0), MS);
        assert_eq!(m.finish(MS, 100, MS - 1), MS);
    }

    /// `trace_once`: the opportunities of one play, then nothing.
    #[test]
    fn a_trace_played_once_ends() {
        let p = Point {
            at: 0,
            rate_bps: 1,
            delay: 0,
            loss: 0.0,
        };
        let t = Arc::new(Trace::parse("1\n2\n").unwrap());
        let mut m = Varying::new(vec![p], Some(t.clone()), true);
        assert_eq!(m.finish(0, 1504, 0), MS);
        assert_eq!(m.finish(MS, 1504, MS / 2), 2 * MS);
        assert_eq!(m.finish(2 * MS, 1, 2 * MS), NEVER);
        let mut m = Varying::new(vec![p], Some(t.clone()), true);
        assert_eq!(m.finish(5 * MS, 1, 5 * MS), NEVER, "idle past the end");
        assert_eq!(m.offered_bytes(100 * MS), 2 * OPPORTUNITY_BYTES);
        assert_eq!(t.offered_bytes(100 * MS), 100 * OPPORTUNITY_BYTES);
    }

    /// Mahimahi's `LinkQueue` as an independent reference, packet by
    /// packet: each packet is stamped with the millisecond it arrives in
    /// and enqueued after `rationalize(now)` has run every opportunity due
    /// by then; an opportunity drains up to 1504 B from the packet in
    /// transit and the queue, and a packet departs at the opportunity that
    /// sends its last byte. `None`: it never departs (`--once`, after the
    /// trace).
    fn mahimahi(trace: &[u64], once: bool, arrivals: &[(Time, u32)]) -> Vec<Option<Time>> {
        struct Lq<'a> {
            sched: &'a [u64],
            next: usize,
            base: u64,
            finished: bool,
            once: bool,
            queue: std::collections::VecDeque<(usize, u32)>,
            transit: Option<(usize, u32)>,
            out: Vec<Option<Time>>,
        }
        impl Lq<'_> {
            fn rationalize(&mut self, now_ms: u64) {
                while !self.finished && self.sched[self.next] + self.base <= now_ms {
                    let t = self.sched[self.next] + self.base;
                    self.next = (self.next + 1) % self.sched.len();
                    if self.next == 0 {
                        if self.once {
                            self.finished = true;
                        } else {
                            self.base += self.sched[self.sched.len() - 1];
                        }
                    }
                    let mut bytes = 1504u32;
                    while bytes > 0 {
                        if self.transit.is_none() {
                            match self.queue.pop_front() {
                                None => break,
                                Some(p) => self.transit = Some(p),
                            }
                        }
                        let (i, left) = self.transit.as_mut().unwrap();
                        let amount = bytes.min(*left);
                        *left -= amount;
                        bytes -= amount;
                        if *left == 0 {
                            self.out[*i] = Some(t * MS);
                            self.transit = None;
                        }
                    }
                }
            }
        }
        let mut lq = Lq {
            sched: trace,
            next: 0,
            base: 0,
            finished: false,
            once,
            queue: Default::default(),
            transit: None,
            out: vec![None; arrivals.len()],
        };
        for (i, &(a, size)) in arrivals.iter().enumerate() {
            lq.rationalize(a / MS);
            lq.queue.push_back((i, size));
        }
        // run until every byte could have gone: a period per 1504 B
        let bytes: u64 = arrivals.iter().map(|&(_, s)| s as u64).sum();
        let last = arrivals.last().map_or(0, |&(a, _)| a / MS);
        lq.rationalize(last + (bytes / 1504 + 2) * (trace[trace.len() - 1] + 1));
        lq.out
    }

    /// The model against [`mahimahi`] on random traces and arrivals (on
    /// whole milliseconds, just before and just after them, and anywhere),
    /// played repeatedly and once: every departure time agrees.
    #[test]
    fn departures_match_mahimahis_link_queue_packet_by_packet() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let mut packets = 0;
        for case in 0..200 {
            let lines = 1 + rnd(40) as usize;
            let mut ms = Vec::with_capacity(lines);
            let mut t = rnd(3);
            for _ in 0..lines {
                t += rnd(4).saturating_sub(1);
                ms.push(t);
            }
            if ms[lines - 1] == 0 {
                ms[lines - 1] = 1;
            }
            let text: String = ms.iter().map(|m| format!("{m}\n")).collect();
            let once = case % 3 == 0;
            let mut arrivals = Vec::new();
            let mut a: Time = 0;
            for _ in 0..(20 + rnd(200)) {
                a += match rnd(4) {
                    0 => 0,
                    1 => (a / MS + 1) * MS - a,
                    2 => (a / MS + 1) * MS - a - 1,
                    _ => rnd(3 * MS),
                };
                arrivals.push((a, 40 + rnd(1465) as u32));
            }
            let want = mahimahi(&ms, once, &arrivals);
            let p = Point {
                at: 0,
                rate_bps: 1,
                delay: 0,
                loss: 0.0,
            };
            let mut m = Varying::new(vec![p], Some(Arc::new(Trace::parse(&text).unwrap())), once);
            let mut free: Time = 0;
            for (i, &(a, size)) in arrivals.iter().enumerate() {
                let got = if free >= NEVER {
                    None
                } else {
                    let f = m.finish(a.max(free), size, a);
                    free = f;
                    (f < NEVER).then_some(f)
                };
                assert_eq!(
                    got, want[i],
                    "case {case}, packet {i} of {arrivals:?}, trace {ms:?}, once {once}"
                );
                packets += 1;
            }
        }
        assert!(packets > 10_000, "{packets}");
    }

    /// k lines per ms for 1 ms period deliver k·1504 B per ms; the bytes
    /// a saturated link delivers by t never exceed the opportunities due.
    #[test]
    fn saturated_trace_delivers_its_opportunities_and_no_more() {
        for k in 1..=4 {
            let text: String = (0..k).map(|_| "1\n").collect();
            let mut m = trace(&text);
            let (mut t, mut bytes) = (0, 0u64);
            let offered = Trace::parse(&text).unwrap();
            loop {
                let f = m.finish(t, 1000, 0);
                if f > 100 * MS {
                    break;
                }
                t = f;
                bytes += 1000;
                let o = offered.offered_bytes(t);
                assert!(bytes <= o, "{k}: {bytes} > {o} at {t}");
            }
            // by 100 ms, 100·k opportunities, all used but less than a
            // packet (the next one did not fit in what was left)
            let per_ms = k as u64 * OPPORTUNITY_BYTES;
            assert!(bytes + 1000 > 100 * per_ms, "{k}: {bytes}");
        }
    }

    #[test]
    fn schedule_serves_bits_at_the_rate_in_force() {
        let pt = |at, rate_bps| Point {
            at,
            rate_bps,
            delay: at,
            loss: 0.0,
        };
        // 8 Mbit/s until 1 ms, then 1 Mbit/s
        let mut m = Varying::new(vec![pt(0, 8_000_000), pt(MS, 1_000_000)], None, false);
        // 1000 B = 8000 bits: 1 ms at 8 Mbit/s
        assert_eq!(m.finish(0, 1000, 0), MS);
        // starting at 0.5 ms: 4000 bits by 1 ms, 4000 more at 1 Mbit/s: 4 ms
        assert_eq!(m.finish(MS / 2, 1000, MS / 2), 5 * MS);
        assert_eq!(m.finish(2 * MS, 125, 2 * MS), 3 * MS);
        assert_eq!(m.delay_at(MS - 1), 0);
        assert_eq!(m.delay_at(MS), MS);
        assert_eq!(m.offered_bytes(3 * MS), 1000 + 250);
    }
}
