"""Run every scenario (or those named) in ns-3, one process each, and write
`ns3_results.csv` (the cached ns-3 side of the comparison).

Usage: python run_ns3.py [--python PATH] [NAME ...]
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from pathlib import Path

from scenarios import SCENARIOS

HERE = Path(__file__).resolve().parent
CSV = HERE / "ns3_results.csv"
FIELDS = [
    "scenario",
    "utilisation",
    "goodput_mbps",
    "jain",
    "mean_qdelay_ms",
    "mean_qlen_pkts",
    "drops",
    "recoveries",
    "rtos",
    "flow_goodput_mbps",
    "run_wall_s",
    "run_cpu_s",
    "process_wall_s",
    "process_cpu_s",
    "max_rss_mib",
    "retransmits",
    "data_sent",
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--python", default=sys.executable, help="interpreter with the ns3 package"
    )
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    rows: dict[str, dict[str, str]] = {}
    if CSV.exists():
        with CSV.open() as f:
            rows = {r["scenario"]: r for r in csv.DictReader(f)}
    for s in SCENARIOS:
        if args.names and s.name not in args.names:
            continue
        t0 = time.time()
        p = subprocess.run(
            [
                "/usr/bin/time",
                "-f",
                "%U %S",
                args.python,
                str(HERE / "ns3_dumbbell.py"),
                s.name,
            ],
            cwd=HERE,
            capture_output=True,
            text=True,
            check=True,
        )
        wall = time.time() - t0
        line = [x for x in p.stdout.splitlines() if x.startswith("{")][-1]
        r = json.loads(line)
        user, sys_ = (float(x) for x in p.stderr.strip().splitlines()[-1].split())
        r["process_wall_s"] = wall
        r["process_cpu_s"] = user + sys_
        rows[s.name] = {k: str(r.get(k, "")) for k in FIELDS}
        print(json.dumps(rows[s.name]), flush=True)
        with CSV.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS, restval="")
            w.writeheader()
            for sc in SCENARIOS:
                if sc.name in rows:
                    w.writerow(rows[sc.name])


if __name__ == "__main__":
    main()
