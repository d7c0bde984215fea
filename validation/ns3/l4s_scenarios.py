"""The nine scenarios of ns-3's `fqcodel-l4s-example.cc`, one table for both
sides: `ns3_fqcodel_l4s.py` builds them in ns-3 3.44 and `write_toml()`
writes the matching aqmlab scenarios (scenarios/l4s/ns3-fqcodel-l4s/).

Source: ns-3 `src/traffic-control/examples/fqcodel-l4s-example.cc` (NITK
Surathkal, after T. Henderson's L4S evaluation), read in nsnam/ns-3-dev-git;
the same file ships with ns-3 3.44. Its topology:

    n0 --(1 Gbit/s, d0)--+                      +--(1 Gbit/s, 1 us)-- n4
                         n2 --(100 Mbit/s, 1 us)-- n3
    n1 --(1 Gbit/s, d1)--+                      +--(1 Gbit/s, 1 us)-- n5

n0 -> n4 and n1 -> n5 are bulk TCP flows; the bottleneck is n2's device
towards n3 (100 Mbit/s; 1 Gbit/s back), with FQ-CoDel (ns-3 defaults: 5 ms,
100 ms, 1024 flows, drop batch 64, MinBytes 1500, ECN marking on, limit
10240 p). The example runs 70 s with n0 from 5 s and n1 from 15 s; the kit
runs n0 from 1 s and n1 from 11 s and stops at 16 s (one flow) or 26 s (two
flows), long enough for each expected result to show (FQ-CoDel serves each
flow from its own queue, so the share settles within a second).

TCP (example's settings): SegmentSize 1448, buffers 8192000 B, InitialCwnd
10, PRR recovery, the rest ns-3 defaults (SACK, timestamps, DelAckCount 2,
MinRto 1 s). ECN ("UseEcn On") in scenarios 2, 3, 4, 6, 7, 8, 9. DCTCP is
ns-3 `TcpDctcp` (g 1/16, ECT(0), or ECT(1) with `UseEct0 false` in the L4S
scenarios); BIC is ns-3 `TcpBic` (Beta 0.8, MaxIncr 16, LowWnd 14,
SmoothPart 5, BinarySearchCoefficient 4, FastConvergence on).

Not modelled: the example's ping (100 B every 100 ms from a third server;
0.008 % of the link) and its per-device FQ-CoDel on the 1 Gbit/s links
(never backlogged). Device queues: see `ns3_fqcodel_l4s.py` (`--device`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

MSS = 1448
# ns-3 PointToPoint: 1500-B IP packet + 2-B PPP header (see scenarios.py)
WIRE = 1502
BUF_BYTES = 8_192_000  # the example's SndBufSize / RcvBufSize
N0_START_S = 1.0
N1_START_S = 11.0


@dataclasses.dataclass(frozen=True)
class L4sScenario:
    num: int
    n0: str  # "bic" or "dctcp"
    n1: str | None  # second flow's CC, None: one flow
    ecn: bool  # TcpSocketBase::UseEcn On
    d0_us: int  # one-way delay of n0's access link
    d1_us: int  # one-way delay of n1's access link
    ce_threshold: bool  # FqCoDelQueueDisc::CeThreshold = 1 ms
    use_l4s: bool  # FqCoDelQueueDisc::UseL4s, TcpDctcp::UseEct0 false
    expected: str  # the example's stated expected result, condensed

    @property
    def name(self) -> str:
        return f"scenario-{self.num}"

    @property
    def duration_s(self) -> float:
        return 26.0 if self.n1 else 16.0

    def flows(self) -> list[tuple[str, str, float]]:
        """(cc, sender, start s) per flow."""
        out = [(self.n0, "n0", N0_START_S)]
        if self.n1:
            out.append((self.n1, "n1", N1_START_S))
        return out

    def windows(self) -> list[tuple[str, float, float]]:
        """The measurement windows: (label, from s, to s); slow start
        (2 s) and the second flow's first 5 s are left out."""
        if not self.n1:
            return [("one", N0_START_S + 2, self.duration_s)]
        return [
            ("one", N0_START_S + 2, N1_START_S),
            ("two", N1_START_S + 5, self.duration_s),
        ]


# The example's expected results, condensed (throughput, drops, marks, queue
# delay; the cwnd and RTT figures are left out).
L4S_SCENARIOS: list[L4sScenario] = [
    L4sScenario(
        num=1,
        n0="bic",
        n1=None,
        ecn=False,
        d0_us=40_000,
        d1_us=40_000,
        ce_threshold=False,
        use_l4s=False,
        expected="BIC, no ECN, 80 ms: about 100 Mbit/s; about one drop per 100 ms; "
        "no marks; queue delay below 5 ms with spikes",
    ),
    L4sScenario(
        num=2,
        n0="bic",
        n1=None,
        ecn=True,
        d0_us=40_000,
        d1_us=40_000,
        ce_threshold=False,
        use_l4s=False,
        expected="BIC with ECN, 80 ms: reaching 100 Mbit/s; no drops; about one mark "
        "per 100 ms; queue delay below 5 ms, about 3 ms on average",
    ),
    L4sScenario(
        num=3,
        n0="dctcp",
        n1=None,
        ecn=True,
        d0_us=500,
        d1_us=500,
        ce_threshold=True,
        use_l4s=False,
        expected="DCTCP ECT(0), CE threshold 1 ms, 1 ms RTT: just below 100 Mbit/s; "
        "no drops; about 160 marks per 100 ms; queue delay 0.5-1 ms",
    ),
    L4sScenario(
        num=4,
        n0="dctcp",
        n1=None,
        ecn=True,
        d0_us=500,
        d1_us=500,
        ce_threshold=True,
        use_l4s=True,
        expected="DCTCP ECT(1), L4S mode, 1 ms RTT: as scenario 3",
    ),
    L4sScenario(
        num=5,
        n0="bic",
        n1="bic",
        ecn=False,
        d0_us=40_000,
        d1_us=40_000,
        ce_threshold=False,
        use_l4s=False,
        expected="two BIC flows, no ECN, 80 ms: n0 about 100 Mbit/s alone, then both "
        "about 50; about one drop per 100 ms; no marks",
    ),
    L4sScenario(
        num=6,
        n0="bic",
        n1="bic",
        ecn=True,
        d0_us=40_000,
        d1_us=40_000,
        ce_threshold=False,
        use_l4s=False,
        expected="two BIC flows with ECN, 80 ms: about 50 Mbit/s each; no drops; "
        "marks instead",
    ),
    L4sScenario(
        num=7,
        n0="dctcp",
        n1="dctcp",
        ecn=True,
        d0_us=500,
        d1_us=500,
        ce_threshold=True,
        use_l4s=False,
        expected="two DCTCP ECT(0) flows, CE threshold 1 ms: about 100 then 50 Mbit/s "
        "each; no drops; 150-250 marks per 100 ms; queue delay about 1 ms",
    ),
    L4sScenario(
        num=8,
        n0="dctcp",
        n1="dctcp",
        ecn=True,
        d0_us=500,
        d1_us=500,
        ce_threshold=True,
        use_l4s=True,
        expected="two DCTCP ECT(1) flows, L4S mode: as scenario 7",
    ),
    L4sScenario(
        num=9,
        n0="bic",
        n1="dctcp",
        ecn=True,
        d0_us=40_000,
        d1_us=500,
        ce_threshold=True,
        use_l4s=True,
        expected="BIC (80 ms, ECN) then DCTCP ECT(1) (1 ms), L4S mode: about 50 Mbit/s "
        "each; no drops; DCTCP's queue delay 0.4-1.4 ms, BIC's about 5 ms",
    ),
]

BY_NUM = {s.num: s for s in L4S_SCENARIOS}


def _us(us: int) -> str:
    return f"{us}us" if us % 1000 else f"{us // 1000}ms"


def cc_toml(cc: str, s: L4sScenario) -> str:
    if cc == "bic":
        # ns-3 TcpBic (its rules, and its attribute defaults Beta 0.8 and
        # SmoothPart 5; the others equal Linux's)
        return '{ kind = "bic", variant = "ns3", beta = 0.8, smooth_part = 5 }'
    if cc == "dctcp":
        return f'{{ kind = "dctcp", ect1 = {"true" if s.use_l4s else "false"} }}'
    raise ValueError(cc)


def queue_toml(s: L4sScenario) -> str:
    """ns-3 FqCoDelQueueDisc with the example's attributes. Byte parameters
    are 1502 (the 1500-B IP packet + the 2-B PPP header aqmlab's packets
    carry, as in scenarios.py)."""
    q = (
        f'{{ kind = "fq_codel", limit = 10240, flows = 1024, quantum = {WIRE}, '
        f'target = "5ms", interval = "100ms", mtu = {WIRE}, drop_batch = 64, ecn = true'
    )
    if s.ce_threshold:
        q += ', ce_threshold = "1ms"'
    if s.use_l4s:
        q += ", use_l4s = true"
    return q + " }"


def write_toml(s: L4sScenario, dest: Path) -> Path:
    lines = [
        f"# ns-3 fqcodel-l4s-example.cc, scenario {s.num} (ns-3 3.44,",
        "# src/traffic-control/examples/fqcodel-l4s-example.cc), generated by",
        "# validation/ns3/l4s_scenarios.py; ns-3 side: ns3_fqcodel_l4s.py.",
        "# Expected result stated by the example:",
        f"#   {s.expected}",
        "# Timeline shortened: n0 from 1 s (example 5 s), n1 from 11 s (15 s).",
        f'name = "ns3-fqcodel-l4s-{s.num}"',
        f'duration = "{s.duration_s:g}s"',
        "seed = 1",
        "",
        "[nodes]",
        'hosts = ["n0", "n1", "n4", "n5"]',
        'routers = ["n2", "n3"]',
        "",
        "[tcp]",
        'profile = "ns3-3.44"',
        f"mss = {MSS}",
        "header_bytes = 42",
        "handshake = true",
        f"max_window = {BUF_BYTES // MSS}",
        f"ecn = {'true' if s.ecn else 'false'}",
        "",
        "[output]",
        'throughput_bin = "100ms"',
        'log = ["n2->n3"]',
    ]
    other = 'queue = { kind = "droptail", limit = 100000 }'
    links = [
        ("n0", "n2", "1Gbps", _us(s.d0_us)),
        ("n1", "n2", "1Gbps", _us(s.d1_us)),
    ]
    for a, b, rate, delay in links:
        lines += ["", "[[links]]", f'a = "{a}"', f'b = "{b}"']
        lines += [f'rate = "{rate}"', f'delay = "{delay}"', other]
    lines += [
        "",
        "[[links]]",
        'name = "bottleneck"',
        'a = "n2"',
        'b = "n3"',
        'rate = "100Mbps"',
        'rate_ba = "1Gbps"',
        'delay = "1us"',
        f"queue_ab = {queue_toml(s)}",
        'queue_ba = { kind = "droptail", limit = 100000 }',
        "monitor = true",
    ]
    for a, b in [("n3", "n4"), ("n3", "n5")]:
        lines += ["", "[[links]]", f'a = "{a}"', f'b = "{b}"']
        lines += ['rate = "1Gbps"', 'delay = "1us"', other]
    for cc, src, start in s.flows():
        dst = "n4" if src == "n0" else "n5"
        lines += [
            "",
            "[[flows]]",
            f'group = "{src}"',
            f'src = "{src}"',
            f'dst = "{dst}"',
            f"cc = {cc_toml(cc, s)}",
            f'start = "{start:g}s"',
        ]
    path = dest / f"{s.name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


if __name__ == "__main__":
    here = Path(__file__).resolve().parents[2] / "scenarios/l4s/ns3-fqcodel-l4s"
    here.mkdir(parents=True, exist_ok=True)
    for sc in L4S_SCENARIOS:
        print(write_toml(sc, here))


BIN_S = 0.1
BIN_KEYS = ("rx_bytes", "soj_s", "dequeued", "marks", "drops")
WINDOW_COLUMNS = [
    "scenario",
    "window",
    "flow",
    "goodput_mbps",
    "sojourn_ms",
    "marks_per_100ms",
    "drops_per_100ms",
]


def summarize(
    s: L4sScenario, bins: dict[str, list[list[float]]]
) -> list[dict[str, object]]:
    """One row per (window, flow) from 100-ms bins, the same for both sides:
    `rx_bytes` (payload received), `soj_s` (sum of the sojourns of the
    packets dequeued in the bin), `dequeued`, `marks`, `drops`, each indexed
    [flow][bin]. Goodput = bytes x 8 / window; sojourn = mean over the
    packets dequeued in the window; marks and drops per 100 ms."""
    rows: list[dict[str, object]] = []
    for label, a, b in s.windows():
        lo, hi = round(a / BIN_S), round(b / BIN_S)
        per_100ms = (b - a) / 0.1
        for f, (_cc, src, start) in enumerate(s.flows()):
            if start >= b:
                continue

            total = {k: float(sum(bins[k][f][lo:hi])) for k in BIN_KEYS}
            n = total["dequeued"]
            rows.append(
                {
                    "scenario": s.num,
                    "window": label,
                    "flow": src,
                    "goodput_mbps": total["rx_bytes"] * 8 / (b - a) / 1e6,
                    "sojourn_ms": 1e3 * total["soj_s"] / n if n else 0.0,
                    "marks_per_100ms": total["marks"] / per_100ms,
                    "drops_per_100ms": total["drops"] / per_100ms,
                }
            )
    return rows
