"""Run one dumbbell of `scenarios.py` in ns-3 3.44 (pip `ns3`) and print
one JSON line: utilisation, per-flow goodput, Jain, mean queueing delay.

Usage: python ns3_dumbbell.py SCENARIO_NAME [TRACE_DIR] [--replicate K]
       [--duration S] [--trace-until S]

Replicate K (default 0, the kit's original run) starts the flows at
`Scenario.starts_us(K)` (jittered by U[0, 10 ms) for K >= 1; see
`scenarios.py`) and runs with RngRun = K + 1 (ns-3's default run is 1, so
K = 0 is unchanged); the JSON line then carries "replicate": K.

With TRACE_DIR, each flow's cwnd, ssthresh, bytes in flight (segments),
RTO and counts of data segments sent and retransmitted (every 10 ms) are
written there as SCENARIO-flowI.csv (SCENARIO-rK-flowI.csv for replicate K >= 1), the bottleneck queue disc's length
(packets, every 10 ms) as SCENARIO-queue.csv and the time of each drop as
SCENARIO-drops.csv. Also, per flow, SCENARIO-flowI-events.csv (each change
of congestion state, ns-3 `TcpCongState_t` 0 open, 1 disorder, 3 recovery,
4 loss, or of ssthresh, state -1, with cwnd and ssthresh in segments) and
SCENARIO-flowI-retx.csv (time and segment number of each retransmission),
and SCENARIO-arrivals.csv: every arrival at the bottleneck queue disc up to
`--trace-until` seconds (default: the whole run) with the packets in the
queue disc before it, RED's average and count right after RedQueueDisc
updated them (read from the queue disc's private members; -1 for other
queue discs), the outcome (0 enqueued, 1 early drop, 2 forced drop, 3 other
drop), the flow (-1: no payload), its segment number counted from the
flow's first data segment, and whether it is a retransmission (1: a
segment number below the flow's highest seen here). `--duration S` runs S
seconds instead of the scenario's duration (for tracing the first seconds).

ns-3 defaults are kept (TcpSocketBase: SACK, timestamps, MinRto 1 s,
DelAckCount 2, 200 ms delayed-ACK timer, InitialCwnd 10, limited transmit;
TcpL4Protocol: PRR recovery; TcpCubic: HyStart on) except:
- SegmentSize 1448 (default 536), SndBufSize/RcvBufSize 64 MiB (default
  128 KiB would cap the window), congestion ops TcpNewReno, TcpCubic or
  TcpBbr (which turns pacing on itself);
- the device queue of every PointToPoint NetDevice is 1 packet (default
  100 packets, which would add 100 packets of FIFO under the queue disc);
- the bottleneck queue disc is the scenario's; every other device gets a
  100000-packet FIFO instead of the default FQ-CoDel.

Measured the way aqmlab measures them, over the whole run:
- utilisation: bytes the bottleneck device started sending (PhyTxBegin,
  PPP header included) x 8 / (rate x duration);
- goodput of a flow: bytes its PacketSink received x 8 / (duration - start);
- mean queueing delay: per packet, from enqueue into the bottleneck queue
  disc to the start of its transmission (PhyTxBegin), over the packets sent.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import time
from pathlib import Path

from scenarios import BY_NAME, MSS, Scenario

t_import = time.time()
import cppyy
from ns import ns

cppyy.cppdef(
    r"""
#include <unordered_map>
namespace kit {
// Read RedQueueDisc's private state (average, count, first-crossing flag)
// without changing ns-3: an explicit instantiation may name private members
// ([temp.spec]), and the friend it defines hands out the member pointer.
template <typename Tag, typename Tag::type M>
struct Rob {
    friend typename Tag::type get(Tag) { return M; }
};
struct RedAvg { typedef double ns3::RedQueueDisc::*type; friend type get(RedAvg); };
struct RedCount { typedef uint32_t ns3::RedQueueDisc::*type; friend type get(RedCount); };
struct RedOld { typedef uint32_t ns3::RedQueueDisc::*type; friend type get(RedOld); };
template struct Rob<RedAvg, &ns3::RedQueueDisc::m_qAvg>;
template struct Rob<RedCount, &ns3::RedQueueDisc::m_count>;
template struct Rob<RedOld, &ns3::RedQueueDisc::m_old>;
struct Monitor {
    std::unordered_map<const ns3::Packet*, int64_t> enq;
    double sum_delay = 0;
    uint64_t n_delay = 0;
    uint64_t tx_bytes = 0;
    uint64_t tx_pkts = 0;
    uint64_t drops = 0;
    uint64_t marks = 0;
    double len_sum = 0;
    uint64_t len_n = 0;
    ns3::Ptr<ns3::QueueDisc> qd;
    std::vector<double> qtrace;  // time, packets in the queue disc, every 10 ms
    std::vector<double> drop_times;
    void Sample() {
        len_sum += qd->GetNPackets();
        if (len_n % 10 == 0) {
            qtrace.push_back(ns3::Simulator::Now().GetSeconds());
            qtrace.push_back(qd->GetNPackets());
        }
        len_n++;
        ns3::Simulator::Schedule(ns3::MilliSeconds(1), &Monitor::Sample, this);
    }
    uint64_t n_enq = 0;
    uint64_t n_soj = 0;
    double soj_sum = 0;
    void Sojourn(ns3::Time t) { n_soj++; soj_sum += t.GetSeconds(); }
    void Enqueue(ns3::Ptr<const ns3::QueueDiscItem> item) {
        n_enq++;
        enq[ns3::PeekPointer(item->GetPacket())] = ns3::Simulator::Now().GetNanoSeconds();
    }
    void Drop(ns3::Ptr<const ns3::QueueDiscItem> item) {
        enq.erase(ns3::PeekPointer(item->GetPacket()));
        drops++;
        drop_times.push_back(ns3::Simulator::Now().GetSeconds());
    }
    void Mark(ns3::Ptr<const ns3::QueueDiscItem> item, const char*) { marks++; }
    // Per-arrival trace (with a trace dir, until `arr_until` s): time, packets
    // in the queue disc before the arrival, RED's average and count after
    // its update (-1 for other queue discs), outcome (0 enqueued, 1 early
    // drop, 2 forced drop, 3 other drop), flow (destination port - 5000, -1
    // for a packet without TCP payload), TCP sequence number (bytes, relative
    // to the flow's first data byte seen here) and whether it is a
    // retransmission (a sequence number below the highest seen here).
    double arr_until = -1;
    std::vector<double> arr;
    std::unordered_map<uint16_t, uint32_t> isn, high;
    ns3::Ptr<ns3::RedQueueDisc> red;
    void Arrival(ns3::Ptr<const ns3::QueueDiscItem> item, double before, int outcome) {
        double now = ns3::Simulator::Now().GetSeconds();
        if (now > arr_until) return;
        int flow = -1;
        double seq = -1;
        int retx = 0;
        ns3::TcpHeader h;
        ns3::Ptr<const ns3::Packet> p = item->GetPacket();
        if (p->PeekHeader(h) && p->GetSize() > h.GetSerializedSize()) {
            uint16_t port = h.GetDestinationPort();
            flow = int(port) - 5000;
            uint32_t s = h.GetSequenceNumber().GetValue();
            if (!isn.count(port)) { isn[port] = s; high[port] = s; }
            seq = double(uint32_t(s - isn[port]));
            if (int32_t(s - high[port]) < 0) retx = 1;
            else high[port] = s;
        }
        arr.push_back(now);
        arr.push_back(before);
        arr.push_back(red ? red.operator->()->*get(RedAvg()) : -1.0);
        arr.push_back(red ? double(red.operator->()->*get(RedCount())) : -1.0);
        arr.push_back(outcome);
        arr.push_back(flow);
        arr.push_back(seq);
        arr.push_back(retx);
    }
    void EnqueueArr(ns3::Ptr<const ns3::QueueDiscItem> item) {
        // the internal queue already holds the item
        Arrival(item, double(qd->GetInternalQueue(0)->GetNPackets()) - 1, 0);
    }
    void DropArr(ns3::Ptr<const ns3::QueueDiscItem> item, const char* reason) {
        std::string r(reason);
        int o = r == "Unforced drop" ? 1 : r == "Forced drop" ? 2 : 3;
        Arrival(item, double(qd->GetInternalQueue(0)->GetNPackets()), o);
    }
    void Tx(ns3::Ptr<const ns3::Packet> p) {
        tx_bytes += p->GetSize();
        tx_pkts++;
        auto it = enq.find(ns3::PeekPointer(p));
        if (it != enq.end()) {
            sum_delay += (ns3::Simulator::Now().GetNanoSeconds() - it->second) * 1e-9;
            n_delay++;
            enq.erase(it);
        }
    }
};
Monitor* Attach(ns3::Ptr<ns3::QueueDisc> qd, ns3::Ptr<ns3::NetDevice> dev) {
    auto* m = new Monitor();
    m->qd = qd;
    ns3::Simulator::Schedule(ns3::MilliSeconds(1), &Monitor::Sample, m);
    qd->TraceConnectWithoutContext("Enqueue", ns3::MakeCallback(&Monitor::Enqueue, m));
    qd->TraceConnectWithoutContext("SojournTime", ns3::MakeCallback(&Monitor::Sojourn, m));
    qd->TraceConnectWithoutContext("Drop", ns3::MakeCallback(&Monitor::Drop, m));
    qd->TraceConnectWithoutContext("Mark", ns3::MakeCallback(&Monitor::Mark, m));
    dev->TraceConnectWithoutContext("PhyTxBegin", ns3::MakeCallback(&Monitor::Tx, m));
    return m;
}
void TraceArrivals(Monitor* m, double until) {
    m->arr_until = until;
    m->red = ns3::DynamicCast<ns3::RedQueueDisc>(m->qd);
    m->qd->TraceConnectWithoutContext("Enqueue", ns3::MakeCallback(&Monitor::EnqueueArr, m));
    m->qd->TraceConnectWithoutContext("DropBeforeEnqueue", ns3::MakeCallback(&Monitor::DropArr, m));
}
struct FlowMon {
    uint64_t recoveries = 0;
    uint64_t rtos = 0;
    uint32_t cwnd = 0;
    uint32_t ssthresh = 0;
    uint32_t seg = 1448;
    uint32_t inflight = 0;
    double rto = 0;
    uint64_t data_tx = 0;
    uint64_t retx = 0;
    uint32_t high_tx = 0;
    bool any_tx = false;
    // time, cwnd, ssthresh, bytes in flight (segments), RTO (s), data
    // segments sent, retransmissions, every 10 ms
    std::vector<double> trace;
    // time, new congestion state (ns-3 TcpCongState_t: 0 open, 1 disorder,
    // 3 recovery, 4 loss), cwnd and ssthresh (segments) at the change;
    // and each retransmission's time and sequence number (bytes from the ISN)
    std::vector<double> events;
    std::vector<double> retx_log;
    uint32_t isn = 0;
    void State(ns3::TcpSocketState::TcpCongState_t, ns3::TcpSocketState::TcpCongState_t n) {
        if (n == ns3::TcpSocketState::CA_RECOVERY) recoveries++;
        if (n == ns3::TcpSocketState::CA_LOSS) rtos++;
        events.push_back(ns3::Simulator::Now().GetSeconds());
        events.push_back(double(n));
        events.push_back(double(cwnd) / seg);
        events.push_back(double(ssthresh) / seg);
    }
    void Cwnd(uint32_t, uint32_t v) { cwnd = v; }
    void Ssth(uint32_t, uint32_t v) {
        ssthresh = v;
        events.push_back(ns3::Simulator::Now().GetSeconds());
        events.push_back(-1);  // ssthresh changed
        events.push_back(double(cwnd) / seg);
        events.push_back(double(v) / seg);
    }
    void InFlight(uint32_t, uint32_t v) { inflight = v; }
    void Rto(ns3::Time, ns3::Time v) { rto = v.GetSeconds(); }
    void Tx(ns3::Ptr<const ns3::Packet> p, const ns3::TcpHeader& h, ns3::Ptr<const ns3::TcpSocketBase>) {
        if (p->GetSize() == 0) return;
        data_tx++;
        uint32_t s = h.GetSequenceNumber().GetValue();
        if (!any_tx) isn = s;
        if (any_tx && int32_t(s - high_tx) < 0) {
            retx++;
            retx_log.push_back(ns3::Simulator::Now().GetSeconds());
            retx_log.push_back(double(uint32_t(s - isn)));
        }
        else { high_tx = s; any_tx = true; }
    }
    void Sample() {
        trace.push_back(ns3::Simulator::Now().GetSeconds());
        trace.push_back(double(cwnd) / seg);
        trace.push_back(double(ssthresh) / seg);
        trace.push_back(double(inflight) / seg);
        trace.push_back(rto);
        trace.push_back(double(data_tx));
        trace.push_back(double(retx));
        ns3::Simulator::Schedule(ns3::MilliSeconds(10), &FlowMon::Sample, this);
    }
};
void ConnectFlow(FlowMon* f, uint32_t i) {
    std::string base = "/NodeList/0/$ns3::TcpL4Protocol/SocketList/" + std::to_string(i) + "/";
    ns3::Config::ConnectWithoutContext(base + "CongState", ns3::MakeCallback(&FlowMon::State, f));
    ns3::Config::ConnectWithoutContext(base + "CongestionWindow", ns3::MakeCallback(&FlowMon::Cwnd, f));
    ns3::Config::ConnectWithoutContext(base + "SlowStartThreshold", ns3::MakeCallback(&FlowMon::Ssth, f));
    ns3::Config::ConnectWithoutContext(base + "BytesInFlight", ns3::MakeCallback(&FlowMon::InFlight, f));
    ns3::Config::ConnectWithoutContext(base + "RTO", ns3::MakeCallback(&FlowMon::Rto, f));
    ns3::Config::ConnectWithoutContext(base + "Tx", ns3::MakeCallback(&FlowMon::Tx, f));
    f->Sample();
}
FlowMon* WatchFlow(uint32_t i, double at) {
    auto* f = new FlowMon();
    ns3::Simulator::Schedule(ns3::Seconds(at), &ConnectFlow, f, i);
    return f;
}
uint64_t TotalRx(ns3::Ptr<ns3::Application> a) {
    return ns3::DynamicCast<ns3::PacketSink>(a)->GetTotalRx();
}
ns3::Ptr<ns3::QueueDisc> RootQdisc(ns3::Ptr<ns3::NetDevice> dev) {
    return dev->GetNode()->GetObject<ns3::TrafficControlLayer>()->GetRootQueueDiscOnDevice(dev);
}
}
"""
)
kit = cppyy.gbl.kit
t_ready = time.time()


def set_default(path: str, value: object) -> None:
    ns.Config.SetDefault(path, value)


def run(
    s: Scenario,
    trace_dir: Path | None = None,
    replicate: int = 0,
    duration_s: float | None = None,
    trace_until_s: float | None = None,
) -> dict[str, object]:
    if duration_s is not None:
        s = dataclasses.replace(s, duration_s=duration_s)
    sd = set_default
    # RED draws its drop decisions from ns-3's RNG: run K + 1 of seed 1
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(replicate + 1)
    starts_us = s.starts_us(replicate)
    starts = s.starts(replicate)
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(MSS))
    sd("ns3::TcpSocket::SndBufSize", ns.UintegerValue(1 << 26))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(1 << 26))
    ops = {"newreno": "TcpNewReno", "cubic": "TcpCubic", "bbr": "TcpBbr"}
    cc = "ns3::" + ops[s.cc]
    sd("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TypeId.LookupByName(cc)))
    sd("ns3::DropTailQueue<Packet>::MaxSize", ns.QueueSizeValue(ns.QueueSize("1p")))
    sd("ns3::PfifoFastQueueDisc::MaxSize", ns.QueueSizeValue(ns.QueueSize("100000p")))
    limit = ns.QueueSizeValue(ns.QueueSize(f"{s.limit}p"))
    if s.queue == "droptail":
        qd_type = "ns3::FifoQueueDisc"
        sd("ns3::FifoQueueDisc::MaxSize", limit)
    elif s.queue == "red":
        assert s.red is not None
        mn, mx, p, wq = s.red
        qd_type = "ns3::RedQueueDisc"
        sd("ns3::RedQueueDisc::MaxSize", limit)
        sd("ns3::RedQueueDisc::MinTh", ns.DoubleValue(mn))
        sd("ns3::RedQueueDisc::MaxTh", ns.DoubleValue(mx))
        sd("ns3::RedQueueDisc::LInterm", ns.DoubleValue(1.0 / p))
        sd("ns3::RedQueueDisc::QW", ns.DoubleValue(wq))
        sd("ns3::RedQueueDisc::MeanPktSize", ns.UintegerValue(1500))
        sd(
            "ns3::RedQueueDisc::LinkBandwidth",
            ns.DataRateValue(ns.DataRate(f"{s.rate_mbps}Mbps")),
        )
        sd(
            "ns3::RedQueueDisc::LinkDelay",
            ns.TimeValue(ns.MilliSeconds(s.bottleneck_delay_ms)),
        )
    elif s.queue == "codel":
        qd_type = "ns3::CoDelQueueDisc"
        sd("ns3::CoDelQueueDisc::MaxSize", limit)
    elif s.queue == "fq_codel":
        qd_type = "ns3::FqCoDelQueueDisc"
        sd("ns3::FqCoDelQueueDisc::MaxSize", limit)
    else:
        raise ValueError(s.queue)

    nodes = ns.NodeContainer()
    nodes.Create(4)  # src, r1, r2, dst
    p2p = ns.PointToPointHelper()

    def link(a: int, b: int, rate_mbps: float, delay_ms: float) -> object:
        p2p.SetDeviceAttribute(
            "DataRate", ns.DataRateValue(ns.DataRate(f"{rate_mbps}Mbps"))
        )
        p2p.SetChannelAttribute(
            "Delay", ns.TimeValue(ns.MicroSeconds(round(delay_ms * 1000)))
        )
        return p2p.Install(nodes.Get(a), nodes.Get(b))

    d_access1 = link(0, 1, s.access_mbps, 1.0)
    d_bn = link(1, 2, s.rate_mbps, s.bottleneck_delay_ms)
    d_access2 = link(2, 3, s.access_mbps, 1.0)

    ns.InternetStackHelper().Install(nodes)
    fifo = ns.TrafficControlHelper()
    fifo.SetRootQueueDisc("ns3::PfifoFastQueueDisc")
    bn = ns.TrafficControlHelper()
    bn.SetRootQueueDisc(qd_type)
    fifo.Install(d_access1)
    fifo.Install(d_access2)
    bn.Install(d_bn.Get(0))
    fifo.Install(d_bn.Get(1))

    addr = ns.Ipv4AddressHelper()
    ifaces = []
    for i, d in enumerate([d_access1, d_bn, d_access2]):
        addr.SetBase(ns.Ipv4Address(f"10.0.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        ifaces.append(addr.Assign(d))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    dst_addr = ifaces[2].GetAddress(1)

    sinks = []
    for i, start_us in enumerate(starts_us):
        port = 5000 + i
        sink = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory",
            ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo(),
        )
        apps = sink.Install(nodes.Get(3))
        apps.Start(ns.Seconds(0.0))
        sinks.append(apps.Get(0))
        bulk = ns.BulkSendHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(dst_addr, port).ConvertTo()
        )
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        bulk.SetAttribute("SendSize", ns.UintegerValue(1 << 16))
        sapps = bulk.Install(nodes.Get(0))
        sapps.Start(ns.MicroSeconds(start_us))

    mon = kit.Attach(kit.RootQdisc(d_bn.Get(0)), d_bn.Get(0))
    if trace_dir is not None:
        until = s.duration_s if trace_until_s is None else trace_until_s
        kit.TraceArrivals(mon, until)
    # the sender's sockets exist once BulkSend starts; index i = flow i
    watch = [kit.WatchFlow(i, start + 1e-6) for i, start in enumerate(starts)]
    ns.Simulator.Stop(ns.Seconds(s.duration_s))
    w0, c0 = time.time(), time.process_time()
    ns.Simulator.Run()
    wall, cpu = time.time() - w0, time.process_time() - c0

    goodput = [
        kit.TotalRx(app) * 8 / (s.duration_s - start)
        for app, start in zip(sinks, starts)
    ]
    total = sum(goodput)
    jain = total**2 / (len(goodput) * sum(g * g for g in goodput)) if total > 0 else 1.0
    out: dict[str, object] = {
        "scenario": s.name,
        "replicate": replicate,
        "starts_us": ";".join(str(us) for us in starts_us),
        "utilisation": mon.tx_bytes * 8 / (s.rate_mbps * 1e6 * s.duration_s),
        "goodput_mbps": total / 1e6,
        "jain": jain,
        "mean_qdelay_ms": 1e3 * mon.sum_delay / mon.n_delay if mon.n_delay else 0.0,
        "mean_qlen_pkts": mon.len_sum / mon.len_n if mon.len_n else 0.0,
        "drops": int(mon.drops),
        "recoveries": int(sum(w.recoveries for w in watch)),
        "rtos": int(sum(w.rtos for w in watch)),
        "retransmits": int(sum(w.retx for w in watch)),
        "data_sent": int(sum(w.data_tx for w in watch)),
        "tx_pkts": int(mon.tx_pkts),
        "delay_samples": int(mon.n_delay),
        "unmatched": int(mon.enq.size()),
        "n_enq": int(mon.n_enq),
        "n_soj": int(mon.n_soj),
        "soj_ms": 1e3 * mon.soj_sum / max(1, mon.n_soj),
        "marks": int(mon.marks),
        "flow_goodput_mbps": ";".join(f"{g / 1e6:.4f}" for g in goodput),
        "run_wall_s": wall,
        "run_cpu_s": cpu,
        "import_s": t_ready - t_import,
        "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    if trace_dir is not None:
        tag = s.name if replicate == 0 else f"{s.name}-r{replicate}"
        for i, w in enumerate(watch):
            v = list(w.trace)
            rows = ["time_s,cwnd,ssthresh,in_flight,rto_s,data_sent,retransmits"] + [
                f"{v[k]:.3f},{v[k + 1]:.1f},{v[k + 2]:.1f},{v[k + 3]:.1f},{v[k + 4]:.3f},"
                f"{v[k + 5]:.0f},{v[k + 6]:.0f}"
                for k in range(0, len(v), 7)
            ]
            (trace_dir / f"{tag}-flow{i}.csv").write_text("\n".join(rows) + "\n")
        q = list(mon.qtrace)
        rows = ["time_s,qlen_pkts"] + [
            f"{q[k]:.3f},{q[k + 1]:.0f}" for k in range(0, len(q), 2)
        ]
        (trace_dir / f"{tag}-queue.csv").write_text("\n".join(rows) + "\n")
        drops = ["time_s"] + [f"{t:.6f}" for t in mon.drop_times]
        (trace_dir / f"{tag}-drops.csv").write_text("\n".join(drops) + "\n")
        a = list(mon.arr)
        rows = ["time_s,qlen_before,avg,count,outcome,flow,seq_seg,retx"] + [
            f"{a[k]:.9f},{a[k + 1]:.0f},{a[k + 2]:.6f},{a[k + 3]:.0f},{a[k + 4]:.0f},"
            f"{a[k + 5]:.0f},{a[k + 6] / MSS if a[k + 6] >= 0 else -1:.0f},{a[k + 7]:.0f}"
            for k in range(0, len(a), 8)
        ]
        (trace_dir / f"{tag}-arrivals.csv").write_text("\n".join(rows) + "\n")
        for i, w in enumerate(watch):
            e = list(w.events)
            rows = ["time_s,state,cwnd,ssthresh"] + [
                f"{e[k]:.6f},{e[k + 1]:.0f},{e[k + 2]:.1f},{e[k + 3]:.1f}"
                for k in range(0, len(e), 4)
            ]
            (trace_dir / f"{tag}-flow{i}-events.csv").write_text("\n".join(rows) + "\n")
            r = list(w.retx_log)
            rows = ["time_s,seq_seg"] + [
                f"{r[k]:.6f},{r[k + 1] / MSS:.0f}" for k in range(0, len(r), 2)
            ]
            (trace_dir / f"{tag}-flow{i}-retx.csv").write_text("\n".join(rows) + "\n")
    ns.Simulator.Destroy()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description="run one kit scenario in ns-3")
    ap.add_argument("scenario", choices=sorted(BY_NAME))
    ap.add_argument("trace_dir", nargs="?", type=Path, default=None)
    ap.add_argument("--replicate", type=int, default=0, help="replicate k >= 0")
    ap.add_argument(
        "--duration", type=float, default=None, help="run S seconds instead (traces)"
    )
    ap.add_argument(
        "--trace-until",
        type=float,
        default=None,
        help="per-arrival trace only up to S seconds (default: the whole run)",
    )
    args = ap.parse_args()
    if args.replicate < 0:
        ap.error(f"--replicate must be >= 0, got {args.replicate}")
    if args.duration is not None and not args.duration > 0:
        ap.error(f"--duration must be > 0 seconds, got {args.duration}")
    out = run(
        BY_NAME[args.scenario],
        args.trace_dir,
        args.replicate,
        args.duration,
        args.trace_until,
    )
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
