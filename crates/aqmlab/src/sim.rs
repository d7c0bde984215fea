//! The simulation: builds the network from a [`Scenario`], runs the event
//! loop, and collects a [`RunResult`].
//!
//! One clock, one event queue, no global state: a `Simulation` owns
//! everything. Events are plain data ([`Ev`]); packets move by value.

use crate::engine::{stream_id, to_secs, tx_time, EventQueue, RngStream, Time, TimerAction};
use crate::metrics::{
    jain, Conservation, CwndSample, CwndTrace, FlowResult, LinkResult, QueueResult, QueueSample,
    QueueSeries, RequestResult, RunResult, ThroughputSeries, WorkloadResult,
};
use crate::net::link::{Link, Port};
use crate::net::packet::{NodeId, Packet};
use crate::net::routing::{Routes, NO_ROUTE};
use crate::scenario::Scenario;
use crate::tcp::{Receiver, Sender, TcpCtx, TimerKind};
use crate::traffic::{Cbr, Role, Spawn, Workload};
use std::collections::{BTreeMap, VecDeque};

/// An event. Plain data: no closures, no allocation.
#[derive(Clone, Copy, Debug)]
pub enum Ev {
    /// The transmitter of link `0` finished serialising its packet.
    TxDone(u32),
    /// The packet at the head of link `0`'s pipe reaches the far node; `1`
    /// is the flow it is delivered to there, or `u32::MAX` when the node
    /// forwards it (only used to prefetch that flow's record).
    Arrive(u32, u32),
    /// A flow timer.
    Timer(u32, TimerKind),
    /// Sample the monitored queues.
    Sample,
    /// A constant-bit-rate flow sends its next packet.
    Cbr(u32),
    /// Sample the traced congestion windows.
    CwndSample,
    /// Workload `0` opens its next connection(s).
    Workload(u32),
}

/// The endpoints of a flow. TCP's sender and receiver are stored inline
/// (not boxed), so a flow's state is one contiguous record: one fewer cache
/// miss per packet with 10⁵ flows; CBR flows are rare.
#[allow(clippy::large_enum_variant)]
enum Transport {
    Tcp { snd: Sender, rcv: Receiver },
    Cbr(Cbr),
}

struct Flow {
    group: String,
    cc: &'static str,
    t: Transport,
    start: Time,
    start_timer: bool,
    /// Packets of this flow dropped anywhere.
    drops: u64,
    /// One-way delay of data packets delivered: sum, count, max (ns).
    owd_sum: u128,
    owd_n: u64,
    owd_max: Time,
    /// Segments of a sized transfer (for the receiver-complete event).
    total_segs: Option<u32>,
    /// First data packet delivered to the receiver.
    first_rx: Option<Time>,
    /// Whole transfer delivered to the receiver.
    rx_done: Option<Time>,
    /// (workload, item, role) of a workload's connection.
    owner: Option<(u32, u32, Role)>,
    /// Payload bytes delivered per throughput bin, if recorded.
    tput: Option<Vec<u64>>,
}

impl Flow {
    fn new(
        group: String,
        cc: &'static str,
        t: Transport,
        start: Time,
        total_segs: Option<u32>,
    ) -> Flow {
        Flow {
            group,
            cc,
            t,
            start,
            start_timer: true,
            drops: 0,
            owd_sum: 0,
            owd_n: 0,
            owd_max: 0,
            total_segs,
            first_rx: None,
            rx_done: None,
            owner: None,
            tput: None,
        }
    }
}

/// A packet tap (see [`Simulation::set_tap`]): (time, packet, flow's MSS
/// or 0 for a CBR flow).
pub type PacketTap = Box<dyn FnMut(Time, &Packet, u32) + Send>;

pub struct Simulation {
    name: String,
    seed: u64,
    now: Time,
    end: Time,
    events: EventQueue<Ev>,
    node_names: Vec<String>,
    links: Vec<Link>,
    routes: Routes,
    flows: Vec<Flow>,
    sample_interval: Time,
    series: Vec<(usize, Vec<QueueSample>)>,
    cwnd_interval: Time,
    cwnd: Vec<(u32, Vec<CwndSample>)>,
    workloads: Vec<Box<dyn Workload>>,
    /// Throughput bin width (0 = none).
    tput_bin: Time,
    /// Per workload, per item: its flows in creation order.
    wl_flows: Vec<Vec<Vec<u32>>>,
    /// Node ids by name (for workloads).
    node_ids: std::collections::HashMap<String, NodeId>,
    // scratch buffers reused on the hot path
    out: Vec<Packet>,
    timers: Vec<(Time, TimerKind)>,
    drops: Vec<Packet>,
    /// Packet taps (pcap capture) by link index; empty when none is set.
    taps: Vec<Option<PacketTap>>,
    // conservation ledger
    next_uid: u64,
    delivered: u64,
    dropped: u64,
}

impl Simulation {
    /// Build a simulation of a validated scenario with the given seed.
    pub fn new(sc: &Scenario, seed: u64) -> Simulation {
        let topo = crate::scenario::paths::Topology::build(sc, seed);
        let node_names: Vec<String> = topo.names.iter().map(|n| n.to_string()).collect();
        let id = |n: &str| *topo.ids.get(n).expect("validated node");
        let mut links = Vec::with_capacity(topo.links.len());
        for sl in &topo.links {
            let (from, to, l) = (sl.from, sl.to, sl.spec);
            let (rate, loss, cl) = if sl.ab {
                (l.rate.0, l.loss_ab, l.classifier_ab.as_ref())
            } else {
                (
                    l.rate_ba.unwrap_or(l.rate).0,
                    l.loss_ba,
                    l.classifier_ba.as_ref(),
                )
            };
            let name = format!("{}->{}", node_names[from as usize], node_names[to as usize]);
            let spec = sl.queue().cloned().unwrap_or_default();
            let mut qrng = RngStream::new(seed, stream_id(&format!("queue:{name}")));
            let mut port = Port::new(spec.build(rate, l.delay.0, &mut qrng), qrng);
            port.classifier = cl.map(|c| Box::new(crate::net::classifier::Classifier::new(c)));
            links.push(Link {
                loss_rng: RngStream::new(seed, stream_id(&format!("loss:{name}"))),
                name,
                from,
                to,
                rate_bps: rate,
                delay: l.delay.0,
                loss,
                port,
                tx: None,
                pipe: VecDeque::new(),
                monitored: l.monitor.unwrap_or(topo.is_router[from as usize]),
                busy_ns: 0,
                tx_bytes: 0,
                tx_pkts: 0,
                lost: 0,
            });
        }
        let mut events = EventQueue::new();
        let mut flows = Vec::new();
        // one random stream per group name (host patterns give one group
        // several entries)
        let mut rngs: std::collections::HashMap<&str, RngStream> = Default::default();
        for (gi, g) in sc.flows.iter().enumerate() {
            let p = std::sync::Arc::new(sc.tcp_params(gi));
            let rng = rngs
                .entry(g.group.as_str())
                .or_insert_with(|| RngStream::new(seed, stream_id(&format!("flows:{}", g.group))));
            for _ in 0..g.count {
                let fid = flows.len() as u32;
                let (s, d) = (id(&g.src), id(&g.dst));
                let spread = if g.start_spread.0 > 0 {
                    rng.below(g.start_spread.0)
                } else {
                    0
                };
                let start = g.start.0 + spread;
                let t = match &g.cbr {
                    Some(c) => Transport::Cbr(Cbr::new(c, fid, s, d, g.size.map(|x| x.0))),
                    None => Transport::Tcp {
                        snd: Sender::new(p.clone(), g.cc.build(), fid, s, d, g.size.map(|x| x.0)),
                        rcv: Receiver::new(&p, fid, d, s).with_echo(g.cc.ecn_echo()),
                    },
                };
                events.schedule_timer(start, Ev::Timer(fid, TimerKind::Start));
                let total = g.size.map(|x| segments(x.0, p.mss));
                let cc = if g.cbr.is_some() { "cbr" } else { g.cc.name() };
                flows.push(Flow::new(g.group.clone(), cc, t, start, total));
            }
        }
        let mut cwnd = Vec::new();
        let mut fid = 0u32;
        for g in &sc.flows {
            for _ in 0..g.count {
                if g.trace_cwnd && g.cbr.is_none() {
                    cwnd.push((fid, Vec::new()));
                }
                fid += 1;
            }
        }
        if !cwnd.is_empty() {
            events.schedule(0, Ev::CwndSample);
        }
        let series: Vec<(usize, Vec<QueueSample>)> = links
            .iter()
            .enumerate()
            .filter(|(_, l)| l.monitored)
            .map(|(i, _)| (i, Vec::new()))
            .collect();
        if !series.is_empty() {
            events.schedule(0, Ev::Sample);
        }
        let workloads: Vec<Box<dyn Workload>> = sc
            .workloads
            .iter()
            .map(|w| w.build(&sc.tcp, seed))
            .collect();
        for (wi, w) in workloads.iter().enumerate() {
            if let Some(t) = w.first_arrival() {
                events.schedule(t, Ev::Workload(wi as u32));
            }
        }
        let wl_flows = vec![Vec::new(); workloads.len()];
        let node_ids = topo.ids.iter().map(|(n, i)| (n.to_string(), *i)).collect();
        let routes = topo.routes;
        let tput_bin = sc.output.throughput_bin.map_or(0, |d| d.0);
        if let Some(n) = sc.duration.0.checked_div(tput_bin) {
            for f in flows.iter_mut() {
                f.tput = Some(vec![0; n as usize + 1]);
            }
        }
        Simulation {
            tput_bin,
            workloads,
            wl_flows,
            node_ids,
            name: sc.name.clone(),
            seed,
            now: 0,
            end: sc.duration.0,
            events,
            node_names,
            links,
            routes,
            flows,
            sample_interval: sc.output.sample_interval.0,
            series,
            cwnd_interval: sc
                .output
                .cwnd_interval
                .unwrap_or(sc.output.sample_interval)
                .0,
            cwnd,
            out: Vec::with_capacity(64),
            timers: Vec::with_capacity(8),
            drops: Vec::with_capacity(8),
            next_uid: 0,
            delivered: 0,
            dropped: 0,
            taps: Vec::new(),
        }
    }

    /// Call `tap` with every packet transmitted on link direction `link`
    /// (`"a->b"`) once its last bit is sent (the packets `tx_packets`
    /// counts), stamped with the time its transmission started, with its
    /// flow's MSS (0 for CBR).
    /// Returns false when there is no such link direction.
    pub fn set_tap(&mut self, link: &str, tap: PacketTap) -> bool {
        let Some(i) = self.links.iter().position(|l| l.name == link) else {
            return false;
        };
        self.taps.resize_with(self.links.len(), || None);
        self.taps[i] = Some(tap);
        true
    }

    /// Override the simulated duration.
    pub fn set_duration(&mut self, d: Time) {
        self.end = d;
    }

    pub fn now(&self) -> Time {
        self.now
    }

    /// The edge classifier of link direction `name` (`"a->b"`), if any.
    pub fn classifier(&self, name: &str) -> Option<&crate::net::classifier::Classifier> {
        self.links
            .iter()
            .find(|l| l.name == name)
            .and_then(|l| l.port.classifier.as_deref())
    }

    /// Heap bytes of the ports' delay histograms, and how many ports hold a
    /// dense one (for the scale benchmark).
    pub fn histogram_bytes(&self) -> (usize, usize) {
        let dense = self
            .links
            .iter()
            .filter(|l| matches!(l.port.sojourn, crate::net::link::SojournHist::Dense(_)))
            .count();
        (self.links.iter().map(|l| l.port.hist_bytes()).sum(), dense)
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events.popped()
    }

    /// Run to the end and collect the results.
    pub fn run(&mut self) -> RunResult {
        self.run_with_progress(|_| {})
    }

    /// Run to the end, calling `progress(fraction_done)` now and then.
    pub fn run_with_progress(&mut self, mut progress: impl FnMut(f64)) -> RunResult {
        let wall = std::time::Instant::now();
        while let Some(t) = self.events.peek_time() {
            if t > self.end {
                break;
            }
            let (t, ev) = self.events.pop().expect("peeked");
            self.now = t;
            self.prefetch_next();
            match ev {
                Ev::TxDone(l) => self.on_tx_done(l),
                Ev::Arrive(l, _) => self.on_arrive(l),
                Ev::Timer(f, k) => self.on_timer(f, k),
                Ev::Sample => self.on_sample(),
                Ev::Cbr(f) => self.on_cbr(f),
                Ev::CwndSample => self.on_cwnd_sample(),
                Ev::Workload(w) => self.on_workload(w),
            }
            if self.events.popped() & 0x3FFF == 0 {
                progress(t as f64 / self.end as f64);
            }
        }
        self.now = self.end;
        progress(1.0);
        self.collect(wall.elapsed().as_secs_f64())
    }

    /// Prefetch the link or flow record the next event will touch (no
    /// effect on results; see [`crate::engine::prefetch`]).
    #[inline]
    fn prefetch_next(&mut self) {
        use crate::engine::prefetch;
        match self.events.peek() {
            Some(&Ev::TxDone(l)) | Some(&Ev::Arrive(l, u32::MAX)) => {
                if let Some(x) = self.links.get(l as usize) {
                    prefetch(x, 16);
                }
            }
            Some(&Ev::Arrive(l, f)) => {
                if let Some(x) = self.links.get(l as usize) {
                    prefetch(x, 16);
                }
                if let Some(x) = self.flows.get(f as usize) {
                    prefetch(x, 16);
                }
            }
            Some(&Ev::Timer(f, _)) => {
                if let Some(x) = self.flows.get(f as usize) {
                    prefetch(x, 16);
                }
            }
            _ => {}
        }
    }

    // ---- packet movement -------------------------------------------------

    #[inline]
    fn send_on_link(&mut self, li: u32, pkt: Packet) {
        let now = self.now;
        let link = &mut self.links[li as usize];
        link.port.enqueue(pkt, now, &mut self.drops);
        if link.tx.is_none() {
            self.start_tx(li);
        }
        self.account_drops();
    }

    #[inline]
    fn start_tx(&mut self, li: u32) {
        let now = self.now;
        let link = &mut self.links[li as usize];
        if let Some(p) = link.port.dequeue(now, &mut self.drops) {
            let d = tx_time(p.size, link.rate_bps);
            link.tx = Some(p);
            link.busy_ns += d;
            self.events.schedule(now + d, Ev::TxDone(li));
        }
    }

    #[inline]
    fn account_drops(&mut self) {
        for p in self.drops.drain(..) {
            self.dropped += 1;
            if let Some(f) = self.flows.get_mut(p.flow as usize) {
                f.drops += 1;
            }
        }
    }

    fn on_tx_done(&mut self, li: u32) {
        let now = self.now;
        let link = &mut self.links[li as usize];
        let p = link.tx.take().expect("transmitting");
        if let Some(Some(tap)) = self.taps.get_mut(li as usize) {
            let mss = match self.flows.get(p.flow as usize).map(|f| &f.t) {
                Some(Transport::Tcp { snd, .. }) => snd.p.mss,
                _ => 0,
            };
            // Stamped with the start of its transmission.
            tap(now - tx_time(p.size, link.rate_bps), &p, mss);
        }
        link.tx_pkts += 1;
        link.tx_bytes += p.size as u64;
        let at = now + link.delay;
        if link.pipe.is_empty() {
            let f = if p.dst == link.to { p.flow } else { u32::MAX };
            self.events.schedule(at, Ev::Arrive(li, f));
        }
        link.pipe.push_back((at, p));
        self.start_tx(li);
        self.account_drops();
    }

    fn on_arrive(&mut self, li: u32) {
        let link = &mut self.links[li as usize];
        let (_, p) = link.pipe.pop_front().expect("pipe");
        if let Some((t, q)) = link.pipe.front() {
            let f = if q.dst == link.to { q.flow } else { u32::MAX };
            self.events.schedule(*t, Ev::Arrive(li, f));
        }
        if link.loss > 0.0 && link.loss_rng.chance(link.loss) {
            link.lost += 1;
            self.drops.push(p);
            self.account_drops();
            return;
        }
        let node = link.to;
        self.receive(node, p);
    }

    fn receive(&mut self, node: NodeId, p: Packet) {
        if p.dst == node {
            self.delivered += 1;
            self.deliver(p);
        } else {
            let li = self.routes.next_link(node, p.dst, p.flow);
            debug_assert_ne!(li, NO_ROUTE, "validated routes");
            self.send_on_link(li, p);
        }
    }

    fn deliver(&mut self, p: Packet) {
        let fid = p.flow;
        let now = self.now;
        let f = &mut self.flows[fid as usize];
        if p.is_data() {
            let d = now - p.sent_time;
            f.owd_sum += d as u128;
            f.owd_n += 1;
            f.owd_max = f.owd_max.max(d);
            f.first_rx.get_or_insert(now);
        }
        let mut ctx = TcpCtx {
            now,
            out: &mut self.out,
            timers: &mut self.timers,
        };
        let mut completed = false;
        let bin = now.checked_div(self.tput_bin).unwrap_or(0) as usize;
        match &mut f.t {
            Transport::Tcp { snd, rcv } => {
                if p.is_forward() {
                    let before = rcv.rcv_nxt;
                    rcv.on_packet(&p, &mut ctx);
                    if let Some(v) = f.tput.as_mut() {
                        let segs = (rcv.rcv_nxt - before) as u64;
                        if let Some(b) = v.get_mut(bin) {
                            *b += segs * snd.p.mss as u64;
                        }
                    }
                    if f.rx_done.is_none() && f.total_segs.is_some_and(|n| rcv.rcv_nxt >= n) {
                        f.rx_done = Some(now);
                        completed = true;
                    }
                } else {
                    snd.on_ack(&p, &mut ctx);
                }
            }
            Transport::Cbr(c) => {
                c.on_receive(&p);
                if let Some(b) = f.tput.as_mut().and_then(|v| v.get_mut(bin)) {
                    *b += p.payload as u64;
                }
            }
        }
        let owner = f.owner;
        self.flush_endpoint(fid);
        if let (true, Some((w, item, role))) = (completed, owner) {
            for sp in self.workloads[w as usize].transfer_done(item, role, now) {
                self.spawn(w, sp);
            }
        }
    }

    /// Create a flow of workload `w` now.
    fn spawn(&mut self, w: u32, sp: Spawn) {
        let fid = self.flows.len() as u32;
        let (s, d) = (self.node_ids[&sp.src], self.node_ids[&sp.dst]);
        let total = segments(sp.bytes, sp.params.mss);
        let t = Transport::Tcp {
            snd: Sender::new(sp.params.clone(), sp.cc.build(), fid, s, d, Some(sp.bytes)),
            rcv: Receiver::new(&sp.params, fid, d, s).with_echo(sp.cc.ecn_echo()),
        };
        let mut f = Flow::new(sp.group, sp.cc.name(), t, self.now, Some(total));
        f.owner = Some((w, sp.item, sp.role));
        self.flows.push(f);
        let list = &mut self.wl_flows[w as usize];
        if list.len() <= sp.item as usize {
            list.resize(sp.item as usize + 1, Vec::new());
        }
        list[sp.item as usize].push(fid);
        self.on_timer(fid, TimerKind::Start);
    }

    fn on_workload(&mut self, w: u32) {
        let (spawns, next) = self.workloads[w as usize].arrive(self.now);
        for sp in spawns {
            self.spawn(w, sp);
        }
        if let Some(t) = next {
            self.events.schedule(t, Ev::Workload(w));
        }
    }

    fn on_timer(&mut self, fid: u32, k: TimerKind) {
        let now = self.now;
        let f = &mut self.flows[fid as usize];
        let mut ctx = TcpCtx {
            now,
            out: &mut self.out,
            timers: &mut self.timers,
        };
        match (&mut f.t, k) {
            (_, TimerKind::Start) if !f.start_timer => {}
            (Transport::Cbr(c), TimerKind::Start) => {
                f.start_timer = false;
                let t = c.start(now);
                self.events.schedule(t, Ev::Cbr(fid));
            }
            (Transport::Tcp { snd, .. }, TimerKind::Start) => {
                f.start_timer = false;
                snd.start(&mut ctx);
            }
            (Transport::Tcp { snd, .. }, TimerKind::Rto) => match snd.rto_timer.on_event(now) {
                (true, _) => snd.on_rto(&mut ctx),
                (false, TimerAction::Schedule(t)) => ctx.timers.push((t, TimerKind::Rto)),
                _ => {}
            },
            (Transport::Tcp { snd, .. }, TimerKind::Rack) => match snd.rack_timer.on_event(now) {
                (true, _) => snd.on_rack_timer(&mut ctx),
                (false, TimerAction::Schedule(t)) => ctx.timers.push((t, TimerKind::Rack)),
                _ => {}
            },
            (Transport::Tcp { snd, .. }, TimerKind::Pace) => match snd.pace_timer.on_event(now) {
                (true, _) => snd.on_pace(&mut ctx),
                (false, TimerAction::Schedule(t)) => ctx.timers.push((t, TimerKind::Pace)),
                _ => {}
            },
            (Transport::Tcp { rcv, .. }, TimerKind::DelAck) => match rcv.delack_timer.on_event(now)
            {
                (true, _) => rcv.on_delack(&mut ctx),
                (false, TimerAction::Schedule(t)) => ctx.timers.push((t, TimerKind::DelAck)),
                _ => {}
            },
            (Transport::Cbr(_), _) => {}
        }
        self.flush_endpoint(fid);
    }

    fn on_cbr(&mut self, fid: u32) {
        if let Transport::Cbr(c) = &mut self.flows[fid as usize].t {
            if let Some(next) = c.send(self.now, &mut self.out) {
                self.events.schedule(next, Ev::Cbr(fid));
            }
        }
        self.flush_endpoint(fid);
    }

    /// Send what an endpoint produced and schedule its timers.
    fn flush_endpoint(&mut self, fid: u32) {
        for (t, k) in self.timers.drain(..) {
            self.events.schedule_timer(t, Ev::Timer(fid, k));
        }
        let mut out = std::mem::take(&mut self.out);
        for mut p in out.drain(..) {
            p.uid = self.next_uid;
            self.next_uid += 1;
            let li = self.routes.next_link(p.src, p.dst, p.flow);
            debug_assert_ne!(li, NO_ROUTE);
            self.send_on_link(li, p);
        }
        self.out = out;
    }

    fn on_sample(&mut self) {
        let t = to_secs(self.now);
        for (li, v) in self.series.iter_mut() {
            let port = &self.links[*li].port;
            let qd = &port.qd;
            let len = qd.len_pkts();
            let c = &port.counters;
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
                    to_secs(port.last_sojourn)
                },
            });
        }
        self.events
            .schedule(self.now + self.sample_interval, Ev::Sample);
    }

    fn on_cwnd_sample(&mut self) {
        let t = to_secs(self.now);
        for (fid, v) in self.cwnd.iter_mut() {
            if let Transport::Tcp { snd, .. } = &self.flows[*fid as usize].t {
                v.push(CwndSample {
                    time_s: t,
                    cwnd: snd.st.cwnd,
                    ssthresh: (snd.st.ssthresh < 1e8).then_some(snd.st.ssthresh),
                    in_flight: snd.snd_max - snd.snd_una,
                    srtt_s: snd.srtt().map(to_secs),
                });
            }
        }
        self.events
            .schedule(self.now + self.cwnd_interval, Ev::CwndSample);
    }

    // ---- results ---------------------------------------------------------

    /// The packet-conservation ledger at the current time.
    pub fn conservation(&self) -> Conservation {
        let in_flight: u64 = self
            .links
            .iter()
            .map(|l| l.port.qd.len_pkts() as u64 + l.tx.is_some() as u64 + l.pipe.len() as u64)
            .sum();
        Conservation {
            sent: self.next_uid,
            delivered: self.delivered,
            dropped: self.dropped,
            in_flight,
        }
    }

    fn collect(&mut self, wall: f64) -> RunResult {
        let end = self.end;
        let name = |n: NodeId| self.node_names[n as usize].clone();
        let flows: Vec<FlowResult> = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let started = !f.start_timer;
                let owd = (f.owd_n > 0).then(|| f.owd_sum as f64 / f.owd_n as f64 / 1e9);
                let mut r = FlowResult {
                    id: i as u32,
                    group: f.group.clone(),
                    src: String::new(),
                    dst: String::new(),
                    cc: f.cc.to_string(),
                    start_s: to_secs(f.start),
                    bytes_acked: 0,
                    segments_delivered: 0,
                    goodput_bps: 0.0,
                    segments_sent: 0,
                    retransmits: 0,
                    timeouts: 0,
                    fast_retransmits: 0,
                    ecn_reductions: 0,
                    drops: f.drops,
                    completion_s: None,
                    final_cwnd: 0.0,
                    srtt_s: None,
                    mean_owd_s: owd,
                    max_owd_s: (f.owd_n > 0).then(|| to_secs(f.owd_max)),
                };
                let stop = match &f.t {
                    Transport::Tcp { snd: s, rcv } => {
                        r.src = name(s.src_node());
                        r.dst = name(s.dst_node());
                        r.bytes_acked = s.bytes_acked();
                        r.segments_delivered = rcv.rcv_nxt as u64;
                        r.segments_sent = s.counters.segments_sent;
                        r.retransmits = s.counters.retransmits;
                        r.timeouts = s.counters.timeouts;
                        r.fast_retransmits = s.counters.fast_retransmits;
                        r.ecn_reductions = s.counters.ecn_reductions;
                        r.completion_s = s.completion_time.map(|t| to_secs(t - f.start));
                        r.final_cwnd = s.st.cwnd;
                        r.srtt_s = s.srtt().map(to_secs);
                        s.completion_time.unwrap_or(end)
                    }
                    Transport::Cbr(c) => {
                        r.src = name(c.src_node());
                        r.dst = name(c.dst_node());
                        r.bytes_acked = c.bytes_received;
                        r.segments_delivered = c.received;
                        r.segments_sent = c.sent;
                        end
                    }
                };
                let dur = stop.saturating_sub(f.start);
                if started && dur > 0 {
                    r.goodput_bps = r.bytes_acked as f64 * 8.0 / to_secs(dur);
                }
                r
            })
            .collect();
        let mut groups: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for f in &flows {
            groups
                .entry(f.group.clone())
                .or_default()
                .push(f.goodput_bps);
        }
        let fairness = groups.into_iter().map(|(g, v)| (g, jain(&v))).collect();
        let conservation = self.conservation();
        let mut queues = Vec::new();
        let mut links = Vec::new();
        for l in self.links.iter_mut() {
            let c = l.port.counters.clone();
            let h = &l.port.sojourn;
            let q = |v: f64| {
                if c.dequeued == 0 {
                    0.0
                } else {
                    to_secs(h.quantile(v))
                }
            };
            queues.push(QueueResult {
                link: l.name.clone(),
                kind: l.port.qd.kind().to_string(),
                arrivals: c.arrivals,
                enqueued: c.enqueued,
                dequeued: c.dequeued,
                dropped: c.dropped(),
                dropped_early: c.dropped_early,
                dropped_forced: c.dropped_forced,
                dropped_overflow: c.dropped_overflow,
                dropped_aqm: c.dropped_aqm,
                marked: c.marked,
                mean_len_pkts: 0.0,
                mean_len_bytes: 0.0,
                mean_delay_s: l.port.mean_sojourn_ns() / 1e9,
                p50_delay_s: q(0.5),
                p99_delay_s: q(0.99),
                max_delay_s: if c.dequeued == 0 {
                    0.0
                } else {
                    to_secs(h.max())
                },
                classes: class_results(&l.port.by_class),
            });
            let last = queues.last_mut().expect("pushed");
            last.mean_len_pkts = l.port.mean_len_pkts(end);
            last.mean_len_bytes = l.port.mean_len_bytes(end);
            links.push(LinkResult {
                link: l.name.clone(),
                from: self.node_names[l.from as usize].clone(),
                to: self.node_names[l.to as usize].clone(),
                rate_bps: l.rate_bps,
                delay_s: to_secs(l.delay),
                tx_packets: l.tx_pkts,
                tx_bytes: l.tx_bytes,
                utilization: (l.busy_ns.min(end) as f64 / end.max(1) as f64).min(1.0),
                lost: l.lost,
            });
        }
        let series = self
            .series
            .iter()
            .map(|(li, v)| QueueSeries {
                link: self.links[*li].name.clone(),
                samples: v.clone(),
            })
            .collect();
        let cwnd = self
            .cwnd
            .iter()
            .map(|(fid, v)| {
                let f = &self.flows[*fid as usize];
                CwndTrace {
                    flow: *fid,
                    group: f.group.clone(),
                    cc: f.cc.to_string(),
                    samples: v.clone(),
                }
            })
            .collect();
        let mut requests = Vec::new();
        let mut workloads = Vec::new();
        for (wi, w) in self.workloads.iter().enumerate() {
            let mut rts = Vec::new();
            let mut completed = 0;
            for (item, fl) in self.wl_flows[wi].iter().enumerate() {
                let (Some(&first), Some(&last)) = (fl.first(), fl.last()) else {
                    continue;
                };
                let ff = &self.flows[first as usize];
                let lf = &self.flows[last as usize];
                let sent = match &ff.t {
                    Transport::Tcp { snd, .. } => snd.first_data_at,
                    Transport::Cbr(_) => None,
                };
                let bytes = match &lf.t {
                    Transport::Tcp { snd, .. } => snd.total_bytes(),
                    Transport::Cbr(_) => 0,
                };
                let rt = sent.zip(lf.first_rx).map(|(a, b)| to_secs(b - a));
                if lf.rx_done.is_some() {
                    completed += 1;
                }
                if let Some(x) = rt {
                    rts.push(x);
                }
                requests.push(RequestResult {
                    workload: w.name().to_string(),
                    id: item as u32,
                    bytes,
                    open_s: to_secs(ff.start),
                    request_s: sent.map(to_secs),
                    response_time_s: rt,
                    completion_s: sent.zip(lf.rx_done).map(|(a, b)| to_secs(b - a)),
                    total_s: lf.rx_done.map(|b| to_secs(b - ff.start)),
                });
            }
            rts.sort_by(|a, b| a.total_cmp(b));
            workloads.push(WorkloadResult {
                name: w.name().to_string(),
                kind: w.kind().into(),
                connections: self.wl_flows[wi].len() as u32,
                completed,
                mean_response_time_s: (!rts.is_empty())
                    .then(|| rts.iter().sum::<f64>() / rts.len() as f64),
                p50_response_time_s: quantile(&rts, 0.5),
                p90_response_time_s: quantile(&rts, 0.9),
                max_response_time_s: rts.last().copied(),
            });
        }
        let throughput = self
            .flows
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                f.tput.as_ref().map(|v| ThroughputSeries {
                    flow: i as u32,
                    group: f.group.clone(),
                    bin_s: to_secs(self.tput_bin),
                    bytes: v.clone(),
                })
            })
            .collect();
        RunResult {
            throughput,
            requests,
            workloads,
            cwnd,
            scenario: self.name.clone(),
            seed: self.seed,
            sim_seconds: to_secs(end),
            wall_seconds: wall,
            events: self.events.popped(),
            flows,
            queues,
            links,
            fairness,
            conservation,
            series,
        }
    }
}

/// Segments of an `bytes`-byte transfer with `mss`-byte segments.
fn segments(bytes: u64, mss: u32) -> u32 {
    bytes.div_ceil(mss as u64).max(1) as u32
}

/// The `q`-quantile of sorted values (nearest rank).
fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    Some(sorted[i])
}

/// Per-class counts of a port, when a classifier tagged any packet.
fn class_results(by: &[crate::net::link::ClassCounters; 3]) -> Vec<crate::metrics::ClassResult> {
    if by[1].arrivals + by[2].arrivals == 0 {
        return Vec::new();
    }
    ["default", "in", "out"]
        .iter()
        .zip(by)
        .filter(|(_, c)| c.arrivals > 0)
        .map(|(name, c)| crate::metrics::ClassResult {
            class: name.to_string(),
            arrivals: c.arrivals,
            dropped: c.dropped,
            marked: c.marked,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per-flow and per-link state stays compact: with 10⁵ flows every
    /// byte here is 100 KB.
    #[test]
    fn per_flow_and_per_link_state_is_bounded() {
        assert!(
            std::mem::size_of::<Flow>() <= 1024,
            "{}",
            std::mem::size_of::<Flow>()
        );
        assert!(
            std::mem::size_of::<Link>() <= 768,
            "{}",
            std::mem::size_of::<Link>()
        );
        // a star of 10⁴ hosts: routing state is one router × one attachment
        // point (every host hangs off the hub), and no port holds a
        // histogram before packets flow
        let text = "name = \"s\"\nduration = \"1s\"\n[topology]\nkind = \"star\"\nhosts = 10000\naccess_rate = \"1Gbps\"\naccess_delay = \"1ms\"\nbottleneck_rate = \"100Mbps\"\nbottleneck_delay = \"10ms\"\n[[flows]]\ngroup = \"g\"\nsrc = \"h*\"\ndst = \"sink\"\n";
        let sc = Scenario::from_toml(text, "s.toml").unwrap();
        let sim = Simulation::new(&sc, 1);
        assert_eq!(sim.flows.len(), 10_000);
        assert_eq!(sim.links.len(), 20_002);
        assert_eq!(sim.routes.table_entries(), 1);
        assert_eq!(sim.histogram_bytes(), (0, 0));
        // only the bottleneck's ports record time series
        assert_eq!(sim.series.len(), 2);
    }
}
