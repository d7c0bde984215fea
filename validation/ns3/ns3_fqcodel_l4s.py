"""Run one scenario of ns-3's `fqcodel-l4s-example.cc` (`l4s_scenarios.py`)
in ns-3 3.44 (pip `ns3`) and print one JSON line of 100-ms bins: each
flow's received bytes, the bottleneck queue disc's per-flow sojourn sums,
marks and drops.

Usage: python ns3_fqcodel_l4s.py NUM [--device kit|example]

The network is built as the example builds it (see `l4s_scenarios.py` for
the topology and TCP settings), with the kit's timeline. `--device`:
- `kit` (default): every PointToPoint device queue holds 1 packet (the one
  waiting for the transmitter) and the non-bottleneck devices get a
  100000-packet PfifoFast, as in the rest of the kit: the bottleneck queue
  disc is then the only queue, as aqmlab's port is;
- `example`: the example's devices: 3-packet device queues under Dynamic
  Queue Limits (HoldTime 1000 ms on the bottleneck, 1 ms elsewhere) and
  FQ-CoDel (with the scenario's attributes) on every device.

Per packet dequeued from the bottleneck queue disc, the flow (by destination
address, as the example's queue-delay traces) and two delays are summed in
the bin of its dequeue: the queue disc's sojourn (enqueue -> dequeue, what
the example writes to queue-delay-n0/n1.dat) and enqueue -> start of
transmission (PhyTxBegin; aqmlab's sojourn, which has no device queue).
Received bytes are the PacketSinks' (the example's throughput traces).
"""

from __future__ import annotations

import argparse
import json
import time

import cppyy
from ns import ns

from l4s_scenarios import BUF_BYTES, BY_NUM, MSS, L4sScenario

cppyy.cppdef(
    r"""
#include <unordered_map>
namespace l4skit {
struct Mon {
    double bin = 0.1;
    int nbins = 0;
    std::vector<double> rx[2], soj_qd[2], soj_tx[2], deq[2], marks[2], drops[2];
    std::unordered_map<const ns3::Packet*, std::pair<int64_t, int>> enq;
    ns3::Ipv4Address dst1;
    void Init(double duration) {
        nbins = int(duration / bin) + 1;
        for (int f = 0; f < 2; f++) {
            rx[f].assign(nbins, 0); soj_qd[f].assign(nbins, 0); soj_tx[f].assign(nbins, 0);
            deq[f].assign(nbins, 0); marks[f].assign(nbins, 0); drops[f].assign(nbins, 0);
        }
    }
    int Bin() {
        int b = int(ns3::Simulator::Now().GetSeconds() / bin);
        return b < nbins ? b : nbins - 1;
    }
    int Flow(ns3::Ptr<const ns3::QueueDiscItem> item) {
        auto q = ns3::DynamicCast<const ns3::Ipv4QueueDiscItem>(item);
        return (q && q->GetHeader().GetDestination() == dst1) ? 1 : 0;
    }
    void Rx(int f, ns3::Ptr<const ns3::Packet> p) { rx[f][Bin()] += p->GetSize(); }
    void Enqueue(ns3::Ptr<const ns3::QueueDiscItem> item) {
        enq[ns3::PeekPointer(item->GetPacket())] = {ns3::Simulator::Now().GetNanoSeconds(), Flow(item)};
    }
    void Dequeue(ns3::Ptr<const ns3::QueueDiscItem> item) {
        int f = Flow(item), b = Bin();
        soj_qd[f][b] += (ns3::Simulator::Now() - item->GetTimeStamp()).GetSeconds();
    }
    void Tx(ns3::Ptr<const ns3::Packet> p) {
        auto it = enq.find(ns3::PeekPointer(p));
        if (it == enq.end()) return;
        int f = it->second.second, b = Bin();
        soj_tx[f][b] += (ns3::Simulator::Now().GetNanoSeconds() - it->second.first) * 1e-9;
        deq[f][b] += 1;
        enq.erase(it);
    }
    void Mark(ns3::Ptr<const ns3::QueueDiscItem> item, const char*) { marks[Flow(item)][Bin()] += 1; }
    void Drop(ns3::Ptr<const ns3::QueueDiscItem> item) {
        enq.erase(ns3::PeekPointer(item->GetPacket()));
        drops[Flow(item)][Bin()] += 1;
    }
};
void RxCb(Mon* m, int f, ns3::Ptr<const ns3::Packet> p, const ns3::Address&) { m->Rx(f, p); }
void Attach(Mon* m, ns3::Ptr<ns3::NetDevice> dev) {
    auto qd = dev->GetNode()->GetObject<ns3::TrafficControlLayer>()->GetRootQueueDiscOnDevice(dev);
    qd->TraceConnectWithoutContext("Enqueue", ns3::MakeCallback(&Mon::Enqueue, m));
    qd->TraceConnectWithoutContext("Dequeue", ns3::MakeCallback(&Mon::Dequeue, m));
    qd->TraceConnectWithoutContext("Mark", ns3::MakeCallback(&Mon::Mark, m));
    qd->TraceConnectWithoutContext("Drop", ns3::MakeCallback(&Mon::Drop, m));
    dev->TraceConnectWithoutContext("PhyTxBegin", ns3::MakeCallback(&Mon::Tx, m));
}
void WatchSink(Mon* m, int f, ns3::Ptr<ns3::Application> app) {
    app->TraceConnectWithoutContext("Rx", ns3::MakeBoundCallback(&RxCb, m, f));
}
void SetSocketType(ns3::Ptr<ns3::Node> n, std::string tid) {
    n->GetObject<ns3::TcpL4Protocol>()->SetAttribute(
        "SocketType", ns3::TypeIdValue(ns3::TypeId::LookupByName(tid)));
}
void SetRate(ns3::Ptr<ns3::NetDevice> d, std::string rate) {
    d->SetAttribute("DataRate", ns3::DataRateValue(ns3::DataRate(rate)));
}
}
"""
)
kit = cppyy.gbl.l4skit

TCP = {"bic": "ns3::TcpBic", "dctcp": "ns3::TcpDctcp"}


def run(s: L4sScenario, device: str = "kit") -> dict[str, object]:
    sd = ns.Config.SetDefault
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(MSS))
    sd("ns3::TcpSocket::SndBufSize", ns.UintegerValue(BUF_BYTES))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(BUF_BYTES))
    sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    sd(
        "ns3::TcpL4Protocol::RecoveryType",
        ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpPrrRecovery")),
    )
    if s.ecn:
        sd("ns3::TcpSocketBase::UseEcn", ns.StringValue("On"))
    if s.ce_threshold:
        sd("ns3::FqCoDelQueueDisc::CeThreshold", ns.TimeValue(ns.MilliSeconds(1)))
    if s.use_l4s:
        sd("ns3::FqCoDelQueueDisc::UseL4s", ns.BooleanValue(True))
        sd("ns3::TcpDctcp::UseEct0", ns.BooleanValue(False))

    nodes = ns.NodeContainer()
    nodes.Create(6)  # n0, n1, n2, n3, n4, n5
    n = [nodes.Get(i) for i in range(6)]
    p2p = ns.PointToPointHelper()
    qsize = "3p" if device == "example" else "1p"
    p2p.SetQueue(
        "ns3::DropTailQueue", "MaxSize", ns.QueueSizeValue(ns.QueueSize(qsize))
    )
    p2p.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate("1Gbps")))

    def link(a: int, b: int, delay_us: int) -> object:
        p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.MicroSeconds(delay_us)))
        return p2p.Install(n[a], n[b])

    d02 = link(2, 0, s.d0_us)
    d12 = link(2, 1, s.d1_us)
    d23 = link(2, 3, 1)
    d34 = link(3, 4, 1)
    d35 = link(3, 5, 1)
    kit.SetRate(d23.Get(0), "100Mbps")

    ns.InternetStackHelper().InstallAll()
    for f, (cc, _src, _start) in enumerate(s.flows()):
        kit.SetSocketType(n[f], TCP[cc])  # sender
        kit.SetSocketType(n[4 + f], TCP[cc])  # receiver, as the example

    others = ns.TrafficControlHelper()
    bn = ns.TrafficControlHelper()
    bn.SetRootQueueDisc("ns3::FqCoDelQueueDisc")
    if device == "example":
        others.SetRootQueueDisc("ns3::FqCoDelQueueDisc")
        others.SetQueueLimits(
            "ns3::DynamicQueueLimits", "HoldTime", ns.StringValue("1ms")
        )
        bn.SetQueueLimits(
            "ns3::DynamicQueueLimits", "HoldTime", ns.StringValue("1000ms")
        )
    else:
        sd(
            "ns3::PfifoFastQueueDisc::MaxSize",
            ns.QueueSizeValue(ns.QueueSize("100000p")),
        )
        others.SetRootQueueDisc("ns3::PfifoFastQueueDisc")
    for d in (d02, d12, d34, d35):
        others.Install(d)
    others.Install(d23.Get(1))
    bn.Install(d23.Get(0))

    addr = ns.Ipv4AddressHelper()
    ifaces = []
    for i, d in enumerate([d02, d12, d23, d34, d35]):
        addr.SetBase(ns.Ipv4Address(f"10.0.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        ifaces.append(addr.Assign(d))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    mon = kit.Mon()
    mon.Init(s.duration_s)
    mon.dst1 = ifaces[4].GetAddress(1)
    for f, (_cc, _src, start) in enumerate(s.flows()):
        dst = ifaces[3 + f].GetAddress(1)
        sink = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory",
            ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 5000).ConvertTo(),
        )
        apps = sink.Install(n[4 + f])
        apps.Start(ns.Seconds(0.0))
        kit.WatchSink(mon, f, apps.Get(0))
        bulk = ns.BulkSendHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(dst, 5000).ConvertTo()
        )
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        bapps = bulk.Install(n[f])
        bapps.Start(ns.Seconds(start))
    kit.Attach(mon, d23.Get(0))

    ns.Simulator.Stop(ns.Seconds(s.duration_s))
    w0 = time.time()
    ns.Simulator.Run()
    wall = time.time() - w0
    nf = len(s.flows())

    def series(v: object) -> list[list[float]]:
        return [list(v[f]) for f in range(nf)]  # type: ignore[index]

    out: dict[str, object] = {
        "scenario": s.num,
        "device": device,
        "bin_s": 0.1,
        "rx_bytes": series(mon.rx),
        "soj_qd_s": series(mon.soj_qd),
        "soj_tx_s": series(mon.soj_tx),
        "dequeued": series(mon.deq),
        "marks": series(mon.marks),
        "drops": series(mon.drops),
        "run_wall_s": round(wall, 2),
    }
    ns.Simulator.Destroy()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description="run one fqcodel-l4s scenario in ns-3")
    ap.add_argument("num", type=int, choices=sorted(BY_NUM))
    ap.add_argument("--device", choices=["kit", "example"], default="kit")
    args = ap.parse_args()
    print(json.dumps(run(BY_NUM[args.num], args.device)), flush=True)


if __name__ == "__main__":
    main()
