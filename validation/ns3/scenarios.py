"""Dumbbell scenarios shared by the ns-3 scripts and the aqmlab TOML files.

One table defines every scenario; `ns3_dumbbell.py` builds it in ns-3 and
`write_toml()` writes the matching aqmlab scenario, so both sides read the
same numbers (rates, delays, queue limits, AQM parameters, flow starts).

Topology (both sides): one sender host `src` with N bulk TCP flows ->
router `r1` -> bottleneck -> router `r2` -> receiver host `dst`. Access
links run at 10x the bottleneck rate (at least 1 Gbit/s) with 1 ms one-way
delay; the bottleneck's one-way delay is `rtt_ms/2 - 2` ms, so the base
two-way propagation delay is `rtt_ms`. Flow i starts at 0.1 + 0.2*i s.

Replicates: replicate k = 0 is the run above (ns-3 RngRun 1, aqmlab seed 1).
Replicate k >= 1 delays flow i's start by a jitter drawn uniformly from
{0, 1, ..., 9999} microseconds (U[0, 10 ms) on a 1-us grid) by Python's
`random.Random` seeded with the string "ns3-kit/NAME/k/i", so the draw
depends only on (scenario, replicate, flow) and is the same on every
machine and Python version (string seeds hash with SHA-512). Both sides get
these exact start times (ns-3 `MicroSeconds`, aqmlab `start` in seconds
with six decimals); ns-3 runs with RngRun = k + 1 (RED's drop draws) and
aqmlab with seed = k + 1. The same inputs go to both sides, so replicate k
of ns-3 pairs with replicate k of aqmlab.

Packets: 1448 B payload + 32 B TCP header (20 B + 12 B timestamp option) +
20 B IPv4 = 1500 B IP packets; ns-3's PointToPoint link adds a 2 B PPP
header on the wire. BDP below counts 1500-B packets.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

MSS = 1448
IP_PACKET = 1500
PPP = 2
# aqmlab has no link-layer header: its packets carry ns-3's 2-B PPP header in
# `header_bytes` (40 + 2, plus the profile's 12 B of timestamps), so both
# sides serialise 1502 B per data segment and 54 B per pure ACK. Byte
# parameters of the aqmlab queues use this size where ns-3's queue discs,
# which see the 1500-B IP packet, use 1500.
WIRE = IP_PACKET + PPP
# replicates k >= 1 delay each flow's start by U{0, ..., MAX_JITTER_US - 1} us
MAX_JITTER_US = 10_000


@dataclasses.dataclass(frozen=True)
class Scenario:
    """One dumbbell."""

    name: str
    cc: str  # "newreno", "cubic" or "bbr"
    rate_mbps: float
    rtt_ms: float
    queue: str  # "droptail", "red", "codel", "fq_codel"
    limit: int  # packets
    flows: int
    duration_s: float
    # RED only: thresholds in packets, max_p, w_q
    red: tuple[float, float, float, float] | None = None

    @property
    def bdp_pkts(self) -> float:
        return self.rate_mbps * 1e6 * self.rtt_ms / 1e3 / (8 * IP_PACKET)

    @property
    def access_mbps(self) -> float:
        return max(1000.0, 10 * self.rate_mbps)

    @property
    def bottleneck_delay_ms(self) -> float:
        return self.rtt_ms / 2 - 2

    def starts_us(self, replicate: int = 0) -> list[int]:
        """Flow start times in integer microseconds (see the module's
        docstring for the replicates' jitter)."""
        if replicate < 0:
            raise ValueError(f"replicate must be >= 0, got {replicate}")
        out = []
        for i in range(self.flows):
            base = 100_000 + 200_000 * i
            if replicate > 0:
                rng = random.Random(f"ns3-kit/{self.name}/{replicate}/{i}")
                base += rng.randrange(MAX_JITTER_US)
            out.append(base)
        return out

    def starts(self, replicate: int = 0) -> list[float]:
        """Flow start times in seconds (exact multiples of 1 us)."""
        return [us / 1e6 for us in self.starts_us(replicate)]


def _fmt(x: float) -> str:
    return f"{x:.10g}"


SCENARIOS: list[Scenario] = [
    Scenario("nr-bdp10-droptail-1", "newreno", 2, 60, "droptail", 20, 1, 20),
    Scenario(
        "nr-bdp33-red-5", "newreno", 10, 40, "red", 100, 5, 20, red=(10, 30, 0.1, 0.002)
    ),
    Scenario("cu-bdp100-droptail-1", "cubic", 20, 60, "droptail", 100, 1, 20),
    Scenario("cu-bdp100-codel-4", "cubic", 20, 60, "codel", 1000, 4, 20),
    Scenario("nr-bdp250-fqcodel-10", "newreno", 50, 60, "fq_codel", 10240, 10, 20),
    Scenario("cu-bdp500-droptail-3", "cubic", 100, 60, "droptail", 500, 3, 20),
    Scenario(
        "cu-bdp500-red-3",
        "cubic",
        100,
        60,
        "red",
        1000,
        3,
        20,
        red=(100, 300, 0.1, 0.002),
    ),
    Scenario("nr-bdp1000-droptail-2", "newreno", 200, 60, "droptail", 1000, 2, 20),
    # the issue's 622 Mbit/s, 50 ms, 8xBDP case; RED at ns-3's default
    # thresholds (MinTh 5, MaxTh 15, LInterm 50 -> max_p 0.02, QW 0.002)
    Scenario(
        "cu-bdp2600-red-3",
        "cubic",
        622,
        50,
        "red",
        20736,
        3,
        15,
        red=(5, 15, 0.02, 0.002),
    ),
    # the motivating row as stated (20 s); RED with MinTh = MaxTh = 0,
    # from which ns-3's RedQueueDisc derives its thresholds (adaptive RED's
    # rule, `red_auto_thresholds`: 129.6 and 388.8 packets here), LInterm 50,
    # QW 0.002
    Scenario(
        "cu-bdp2600-redauto-3",
        "cubic",
        622,
        50,
        "red",
        20736,
        3,
        20,
        red=(0, 0, 0.02, 0.002),
    ),
    Scenario("cu-bdp2600-codel-3", "cubic", 622, 50, "codel", 20736, 3, 15),
    Scenario("cu-bdp2600-fqcodel-3", "cubic", 622, 50, "fq_codel", 10240, 3, 15),
    Scenario("cu-bdp3000-droptail-1", "cubic", 622, 58, "droptail", 3000, 1, 15),
    # ns-3's own BBR validation set-up (examples/tcp/tcp-bbr-example.cc):
    # 10 Mbit/s, 40 ms base RTT, a 100-packet FIFO, one flow; 30 s shows
    # ProbeRTT's dips to 4 segments at ~10 and ~20 s
    Scenario("bbr-bdp33-droptail-1", "bbr", 10, 40, "droptail", 100, 1, 30),
]

BY_NAME = {s.name: s for s in SCENARIOS}


def red_auto_thresholds(s: Scenario) -> tuple[float, float]:
    """ns-3 `RedQueueDisc::InitializeParams` with MinTh = MaxTh = 0 (packet
    mode): min_th = max(5, TargetDelay x C / 2) with C the link's rate in
    MeanPktSize (1500 B) packets per second and TargetDelay 5 ms (the rule
    of Floyd, Gummadi and Shenker's "Adaptive RED"), max_th = 3 x min_th."""
    ptc = s.rate_mbps * 1e6 / (8.0 * IP_PACKET)
    min_th = max(5.0, 0.005 * ptc / 2.0)
    return min_th, 3 * min_th


def queue_toml(s: Scenario) -> str:
    """The bottleneck queue as an aqmlab inline table."""
    if s.queue == "droptail":
        return f'{{ kind = "droptail", limit = {s.limit} }}'
    if s.queue == "red":
        assert s.red is not None
        mn, mx, p, wq = s.red
        if mn == 0 and mx == 0:
            mn, mx = red_auto_thresholds(s)
        # ns-3 RedQueueDisc: Wait true, Gentle true, packet mode; both sides
        # use a 1500-B mean packet size for the idle-time decay; `variant =
        # "ns3"`: RedQueueDisc's count rules (first crossing, nQueued > 1,
        # forced drops keep the count).
        return (
            f'{{ kind = "red", limit = {s.limit}, min_th = {_fmt(mn)}, max_th = {_fmt(mx)}, '
            f"max_p = {_fmt(p)}, w_q = {_fmt(wq)}, gentle = true, wait = true, "
            f'mean_pktsize = {WIRE}, variant = "ns3" }}'
        )
    if s.queue == "codel":
        return f'{{ kind = "codel", limit = {s.limit}, target = "5ms", interval = "100ms", mtu = {WIRE} }}'
    if s.queue == "fq_codel":
        # ns-3 FqCoDelQueueDisc: quantum = device MTU (1500), 1024 flows,
        # drop batch 64, ECN marking only for ECT packets (TCP ECN is off).
        return (
            f'{{ kind = "fq_codel", limit = {s.limit}, flows = 1024, quantum = {WIRE}, '
            f'target = "5ms", interval = "100ms", mtu = {WIRE}, drop_batch = 64 }}'
        )
    raise ValueError(s.queue)


def _start_s(us: int) -> str:
    """A start time in seconds, exact to the microsecond ("0.1", "0.307341")."""
    whole, frac = divmod(us, 1_000_000)
    return f"{whole}.{frac:06d}".rstrip("0").rstrip(".")


def write_toml(
    s: Scenario, dest: Path, cubic: str = "ns3", replicate: int = 0, bbr: str = "ns3"
) -> Path:
    """Write the aqmlab scenario matching `s` (replicate `replicate`: its
    jittered starts and seed = replicate + 1); return its path. Replicate 0
    is written as `NAME.toml`, replicate k >= 1 as `NAME-rK.toml`. CUBIC
    flows use `variant = cubic`: "ns3" models ns-3's TcpCubic; BBR flows
    `variant = bbr`: "ns3" models ns-3's TcpBbr, "v1" is Linux's BBR v1."""
    if s.cc == "newreno":
        cc = '"newreno"'
    elif s.cc == "bbr":
        cc = f'{{ kind = "bbr", variant = "{bbr}" }}'
    else:
        cc = f'{{ kind = "cubic", variant = "{cubic}" }}'
    lines = [
        f"# Generated by validation/ns3/scenarios.py: ns-3 cross-check `{s.name}`.",
        (
            f"# {s.cc}, {_fmt(s.rate_mbps)} Mbit/s, base RTT {_fmt(s.rtt_ms)} ms "
            f"(BDP {s.bdp_pkts:.0f} x 1500 B), {s.queue} limit {s.limit} p, {s.flows} flow(s)."
        ),
        f'name = "ns3-{s.name}"',
        f'duration = "{_fmt(s.duration_s)}s"',
        f"seed = {replicate + 1}",
        "",
        "[nodes]",
        'hosts = ["src", "dst"]',
        'routers = ["r1", "r2"]',
        "",
        "[tcp]",
        'profile = "ns3-3.44"',
        f"mss = {MSS}",
        f"header_bytes = {40 + PPP}",
        "handshake = true",
        "max_window = 100000",
        "",
        "[[links]]",
        'a = "src"',
        'b = "r1"',
        f'rate = "{_fmt(s.access_mbps)}Mbps"',
        'delay = "1ms"',
        'queue = { kind = "droptail", limit = 100000 }',
        "",
        "[[links]]",
        'name = "bottleneck"',
        'a = "r1"',
        'b = "r2"',
        f'rate = "{_fmt(s.rate_mbps)}Mbps"',
        f'delay = "{_fmt(s.bottleneck_delay_ms)}ms"',
        f"queue_ab = {queue_toml(s)}",
        'queue_ba = { kind = "droptail", limit = 100000 }',
        "",
        "[[links]]",
        'a = "r2"',
        'b = "dst"',
        f'rate = "{_fmt(s.access_mbps)}Mbps"',
        'delay = "1ms"',
        'queue = { kind = "droptail", limit = 100000 }',
    ]
    if replicate > 0:
        lines.insert(
            2,
            f"# Replicate {replicate}: flow starts jittered by U[0, 10 ms) "
            f"(scenarios.py), seed {replicate + 1}.",
        )
    for i, start in enumerate(s.starts_us(replicate)):
        lines += [
            "",
            "[[flows]]",
            f'group = "f{i}"',
            'src = "src"',
            'dst = "dst"',
            f"cc = {cc}",
            f'start = "{_start_s(start)}s"',
        ]
        if s.cc == "bbr":
            # the cwnd trace shows ProbeRTT's dips (ns3_dumbbell.py traces
            # every 10 ms too)
            lines.append("trace_cwnd = true")
    if s.cc == "bbr":
        lines += ["", "[output]", 'cwnd_interval = "10ms"']
    path = dest / (
        f"{s.name}.toml" if replicate == 0 else f"{s.name}-r{replicate}.toml"
    )
    path.write_text("\n".join(lines) + "\n")
    return path


if __name__ == "__main__":
    here = Path(__file__).resolve().parent / "scenarios"
    here.mkdir(exist_ok=True)
    for sc in SCENARIOS:
        print(write_toml(sc, here), f"BDP {sc.bdp_pkts:.0f}")
