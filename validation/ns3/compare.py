"""Run the aqmlab side of every scenario and print the comparison with the
cached ns-3 results (`ns3_results.csv`, written by `run_ns3.py`).

Usage: python compare.py [--aqmlab PATH] [--out DIR] [--cubic VARIANT] [NAME ...]

Targets (issue 12): utilisation within +-0.05, total goodput within +-10 %,
Jain within +-0.1, mean queueing delay within +-20 % of ns-3. Every row is
printed, in or out of target; `ok` marks a metric within its target.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import tempfile
import time
from pathlib import Path

from scenarios import SCENARIOS, Scenario, write_toml

HERE = Path(__file__).resolve().parent


def jain(xs: list[float]) -> float:
    s, s2 = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * s2) if s2 > 0 else 1.0


def run_aqmlab(exe: str, s: Scenario, out: Path, cubic: str) -> dict[str, float]:
    toml = write_toml(s, out, cubic)
    res = out / s.name
    t0 = time.time()
    p = subprocess.run(
        ["/usr/bin/time", "-f", "%U %S %M", exe, "run", str(toml), "--out", str(res)],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.time() - t0
    user, sys_, rss_kib = p.stderr.strip().splitlines()[-1].split()
    with (res / "links.csv").open() as f:
        link = next(r for r in csv.DictReader(f) if r["link"] == "r1->r2")
    with (res / "flows.csv").open() as f:
        flows = list(csv.DictReader(f))
    goodput = [float(r["goodput_bps"]) for r in flows]
    return {
        "utilisation": float(link["utilization"]),
        "goodput_mbps": sum(goodput) / 1e6,
        "jain": jain(goodput),
        "mean_qdelay_ms": float(link["mean_delay_s"]) * 1e3,
        "drops": float(link["dropped"]),
        "retransmits": float(sum(int(r["retransmits"]) for r in flows)),
        "timeouts": float(sum(int(r["timeouts"]) for r in flows)),
        "wall_s": wall,
        "cpu_s": float(user) + float(sys_),
        "max_rss_mib": float(rss_kib) / 1024,
    }


def rel(a: float, b: float) -> float:
    return (a - b) / b if b else float("inf") if a else 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--aqmlab", default=str(HERE.parents[1] / "target/release/aqmlab"))
    ap.add_argument("--out", default=None, help="keep aqmlab outputs here")
    ap.add_argument(
        "--cubic",
        default="ns3",
        help='aqmlab CUBIC variant for the CUBIC rows ("ns3" models ns-3\'s TcpCubic)',
    )
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    with (HERE / "ns3_results.csv").open() as f:
        ns3 = {r["scenario"]: r for r in csv.DictReader(f)}
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="aqmlab-ns3-"))
    out.mkdir(parents=True, exist_ok=True)

    head = (
        "| scenario | BDP (p) | util ns-3 / aqmlab | goodput Mbit/s ns-3 / aqmlab (Δ) "
        "| Jain ns-3 / aqmlab | mean qdelay ms ns-3 / aqmlab (Δ) | drops ns-3 / aqmlab "
        "| in target |"
    )
    print(head)
    print("|" + "---|" * 8)
    perf = []
    n_ok = 0
    n_rows = 0
    for s in SCENARIOS:
        if args.names and s.name not in args.names:
            continue
        if s.name not in ns3:
            print(f"| {s.name} | no ns-3 result cached |")
            continue
        n = {
            k: float(v)
            for k, v in ns3[s.name].items()
            if k not in ("scenario", "flow_goodput_mbps") and v != ""
        }
        a = run_aqmlab(args.aqmlab, s, out, args.cubic)
        du = a["utilisation"] - n["utilisation"]
        dg = rel(a["goodput_mbps"], n["goodput_mbps"])
        dj = a["jain"] - n["jain"]
        dq = rel(a["mean_qdelay_ms"], n["mean_qdelay_ms"])
        ok = {
            "util": abs(du) <= 0.05,
            "goodput": abs(dg) <= 0.10,
            "Jain": abs(dj) <= 0.10,
            "qdelay": abs(dq) <= 0.20,
        }
        n_rows += 1
        n_ok += all(ok.values())
        verdict = (
            "all 4"
            if all(ok.values())
            else "out: " + ", ".join(k for k, v in ok.items() if not v)
        )
        print(
            f"| {s.name} | {s.bdp_pkts:.0f} | {n['utilisation']:.3f} / {a['utilisation']:.3f} "
            f"| {n['goodput_mbps']:.1f} / {a['goodput_mbps']:.1f} ({dg:+.1%}) "
            f"| {n['jain']:.3f} / {a['jain']:.3f} "
            f"| {n['mean_qdelay_ms']:.2f} / {a['mean_qdelay_ms']:.2f} ({dq:+.0%}) "
            f"| {n['drops']:.0f} / {a['drops']:.0f} | {verdict} |",
            flush=True,
        )
        perf.append((s.name, n, a))
    print(f"\n{n_ok} of {n_rows} scenarios within all four targets.\n")
    print(
        "| scenario | ns-3 run wall s / CPU s | ns-3 process wall s / CPU s (incl. import) | aqmlab wall s / CPU s "
        "| retransmits ns-3 / aqmlab | timeouts ns-3 / aqmlab |"
    )
    print("|---|---|---|---|---|---|")
    for name, n, a in perf:
        nretx = f"{n['retransmits']:.0f}" if "retransmits" in n else "–"
        nrto = f"{n['rtos']:.0f}" if "rtos" in n else "–"
        print(
            f"| {name} | {n['run_wall_s']:.1f} / {n['run_cpu_s']:.1f} | {n['process_wall_s']:.0f} / {n['process_cpu_s']:.1f} "
            f"| {a['wall_s']:.2f} / {a['cpu_s']:.2f} | {nretx} / {a['retransmits']:.0f} | {nrto} / {a['timeouts']:.0f} |"
        )
    print(f"\naqmlab outputs in {out}")


if __name__ == "__main__":
    main()
