#!/usr/bin/env python3
"""Write a synthetic cellular-like packet-delivery trace in Mahimahi's format.

Mahimahi's format (read natively by aqmlab's `trace` key): one integer
millisecond timestamp per line, each line one delivery opportunity of 1504
bytes; the trace repeats after its last timestamp.

The capacity follows a mean-reverting random walk of the log-rate, redrawn
every `--step-ms` milliseconds (an Ornstein-Uhlenbeck process sampled at
that step), clamped to [--min-mbps, --max-mbps], with outages: at each step,
with probability `--outage-p`, the link delivers nothing for 100-400 ms (as
a handover or a deep fade would). Opportunities are emitted from an
accumulated byte credit, so the trace's rate over any step is the drawn
rate to within one opportunity. The output is a function of the arguments
(seeded `random.Random`).

    python3 scripts/gen_trace.py --seconds 20 --seed 1 > scenarios/changing/cellular.trace

With `--burst-ms N`, the trace is instead a constant `--mean-mbps` rate
whose opportunities come in bunches every N milliseconds (a link that
aggregates, as Wi-Fi or DOCSIS do): the byte credit accrues every
millisecond and is spent only at multiples of N, so the mean rate is the
same for every N and N = 1 is the smoothest a Mahimahi trace can be.

    python3 scripts/gen_trace.py --seconds 1 --burst-ms 4 --mean-mbps 48.128 \
        > scenarios/l4s/bursty-4ms.trace
"""

from __future__ import annotations

import argparse
import math
import random
import sys

OPPORTUNITY_BYTES = 1504


def rates(args: argparse.Namespace) -> list[float]:
    """The rate (bit/s) of each step."""
    rng = random.Random(args.seed)
    steps = args.seconds * 1000 // args.step_ms
    mean = math.log(args.mean_mbps)
    x = mean
    out: list[float] = []
    outage = 0
    for _ in range(steps):
        # OU update: pull towards the mean, plus noise
        x += args.reversion * (mean - x) + args.volatility * rng.gauss(0.0, 1.0)
        r = min(max(math.exp(x), args.min_mbps), args.max_mbps) * 1e6
        if outage == 0 and rng.random() < args.outage_p:
            outage = rng.randint(100, 400) // args.step_ms
        if outage > 0:
            outage -= 1
            r = 0.0
        out.append(r)
    return out


def bursty(args: argparse.Namespace) -> list[int]:
    """Opportunity timestamps (ms) of a constant rate delivered every
    `--burst-ms` milliseconds."""
    lines: list[int] = []
    credit = 0.0
    last = args.seconds * 1000
    for ms in range(1, last + 1):
        credit += args.mean_mbps * 1e6 / 8.0 / 1000.0
        if ms % args.burst_ms == 0:
            while credit >= OPPORTUNITY_BYTES:
                credit -= OPPORTUNITY_BYTES
                lines.append(ms)
    if not lines or lines[-1] != last:
        lines.append(last)
    return lines


def trace(args: argparse.Namespace) -> list[int]:
    """Opportunity timestamps (ms), from 1 ms on."""
    lines: list[int] = []
    credit = 0.0
    for i, r in enumerate(rates(args)):
        for k in range(args.step_ms):
            ms = i * args.step_ms + k + 1
            credit += r / 8.0 / 1000.0
            while credit >= OPPORTUNITY_BYTES:
                credit -= OPPORTUNITY_BYTES
                lines.append(ms)
    last = args.seconds * 1000
    if not lines or lines[-1] != last:
        # the last line is the period: the trace repeats after `seconds`
        lines.append(last)
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=int, default=20, help="trace period (s)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--step-ms", type=int, default=50, help="rate redrawn every (ms)")
    p.add_argument("--mean-mbps", type=float, default=8.0, help="geometric mean rate")
    p.add_argument("--min-mbps", type=float, default=0.5)
    p.add_argument("--max-mbps", type=float, default=30.0)
    p.add_argument("--reversion", type=float, default=0.05, help="pull to the mean per step")
    p.add_argument("--volatility", type=float, default=0.15, help="log-rate noise per step")
    p.add_argument("--outage-p", type=float, default=0.004, help="outage start per step")
    p.add_argument(
        "--burst-ms",
        type=int,
        default=0,
        help="constant --mean-mbps delivered in bunches every N ms (0: the random walk)",
    )
    args = p.parse_args()
    if args.seconds <= 0 or args.step_ms <= 0:
        p.error("--seconds and --step-ms must be positive")
    if args.burst_ms < 0 or args.mean_mbps <= 0:
        p.error("--burst-ms must be >= 0 and --mean-mbps positive")
    lines = bursty(args) if args.burst_ms > 0 else trace(args)
    sys.stdout.write("".join(f"{m}\n" for m in lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
