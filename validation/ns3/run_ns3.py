"""Run the kit's scenarios in ns-3, one process each, and write
`ns3_results.csv` (the cached ns-3 side of the comparison).

Usage: python run_ns3.py [--python PATH] [--replicates N] [--rows A,B,...]
                         [--jobs J] [--force] [NAME ...]

Without `--replicates`, runs replicate 0 (the kit's original run) of every
scenario named (all by default), as before. With `--replicates N`, runs
replicates 0 .. N-1 (see `scenarios.py` for how replicate k jitters the
flow starts and picks the seeds) and skips every (scenario, replicate)
already in the file unless `--force`; so `--replicates 5` on the committed
file runs replicates 1-4 and keeps the cached replicate-0 rows. Jobs go
replicate by replicate (replicate 1 of every row first, then 2, ...), in
the order `--rows` names the rows, `--jobs` at a time; each result is
merged into the file as soon as it arrives (under a lock, so several
invocations can share the file).

The file has one row per (scenario, replicate); the `replicate` column
comes last and every column but `scenario` and `flow_goodput_mbps` stays
numeric (a replicate's start times are a function of the scenario and k,
`Scenario.starts_us(k)`, and are not stored). Within a scenario, replicate
0 is written last, so a reader that keys rows on `scenario` alone (the
kit's earlier compare.py) still reads replicate 0 and prints its old
table. Rows of an older file without the `replicate` column are
replicate 0.
"""

from __future__ import annotations

import argparse
import csv
import fcntl
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from pathlib import Path

from scenarios import BY_NAME, SCENARIOS

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
    "replicate",
]

Key = tuple[str, int]


def row_key(r: dict[str, str]) -> Key:
    """(scenario, replicate) of a CSV row; no replicate column means 0."""
    return r["scenario"], int(r.get("replicate") or 0)


def selection(ap: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    """The scenario names `--rows` and the positional names ask for, and a
    check of `--replicates`; an unknown name or a count below 1 is an
    argparse error (exit 2)."""
    names = [n for n in args.rows.split(",") if n] + args.names
    for n in names:
        if n not in BY_NAME:
            ap.error(f"unknown scenario `{n}`; allowed: {', '.join(BY_NAME)}")
    if args.replicates is not None and args.replicates < 1:
        ap.error(f"--replicates must be >= 1, got {args.replicates}")
    return names


def read_rows(path: Path = CSV) -> dict[Key, dict[str, str]]:
    """Every row of the results file by (scenario, replicate)."""
    if not path.exists():
        return {}
    with path.open() as f:
        rows = {row_key(r): r for r in csv.DictReader(f)}
    for (_, k), r in rows.items():
        r["replicate"] = str(k)
    return rows


def write_rows(rows: dict[Key, dict[str, str]], path: Path = CSV) -> None:
    """Write the file atomically: scenarios in the kit's order, replicates
    1, 2, ... of each, then its replicate 0 (see the module docstring)."""
    order = {s.name: i for i, s in enumerate(SCENARIOS)}

    def sort_key(key: Key) -> tuple[int, str, int, int]:
        name, k = key
        return order.get(name, len(order)), name, k == 0, k

    tmp = path.with_suffix(".csv.tmp")
    with tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, restval="", extrasaction="ignore")
        w.writeheader()
        for key in sorted(rows, key=sort_key):
            w.writerow(rows[key])
    os.replace(tmp, path)


@contextmanager
def locked(path: Path = CSV) -> Iterator[None]:
    with open(path.with_suffix(".csv.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def run_one(python: str, name: str, k: int) -> dict[str, str]:
    """One ns-3 process for (name, k); its result as a CSV row."""
    t0 = time.time()
    p = subprocess.run(
        [
            "/usr/bin/time",
            "-f",
            "%U %S",
            python,
            str(HERE / "ns3_dumbbell.py"),
            name,
            "--replicate",
            str(k),
        ],
        cwd=HERE,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.time() - t0
    lines = [x for x in p.stdout.splitlines() if x.startswith("{")]
    if p.returncode != 0 or not lines:
        tail = "\n".join(p.stderr.strip().splitlines()[-5:])
        raise RuntimeError(f"{name} replicate {k}: exit {p.returncode}\n{tail}")
    r = json.loads(lines[-1])
    user, sys_ = (float(x) for x in p.stderr.strip().splitlines()[-1].split())
    r["process_wall_s"] = wall
    r["process_cpu_s"] = user + sys_
    return {f: str(r.get(f, "")) for f in FIELDS}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--python", default=sys.executable, help="interpreter with the ns3 package"
    )
    ap.add_argument(
        "--replicates",
        type=int,
        default=None,
        help="run replicates 0..N-1 that the file lacks (default: replicate 0 only)",
    )
    ap.add_argument(
        "--rows", default="", help="comma-separated scenario names, in run order"
    )
    ap.add_argument("--jobs", type=int, default=1, help="ns-3 processes at a time")
    ap.add_argument(
        "--force",
        action="store_true",
        help="rerun (scenario, replicate) pairs already cached",
    )
    ap.add_argument("names", nargs="*", help="scenario names (as --rows)")
    args = ap.parse_args()
    names = selection(ap, args)
    if args.jobs < 1:
        ap.error(f"--jobs must be >= 1, got {args.jobs}")
    rows_order = names or [s.name for s in SCENARIOS]
    with locked():
        have = read_rows()
    if args.replicates is None:
        # the kit's original behaviour: rerun replicate 0 of the rows named
        jobs = [(n, 0) for n in rows_order]
    else:
        jobs = [
            (n, k)
            for k in range(args.replicates)
            for n in rows_order
            if args.force or (n, k) not in have
        ]
    print(f"{len(jobs)} ns-3 runs: {jobs}", flush=True)
    failed = 0
    lock = threading.Lock()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_one, args.python, n, k): (n, k) for n, k in jobs}
        for fut in as_completed(futures):
            try:
                row = fut.result()
            except RuntimeError as e:
                failed += 1
                print(f"FAILED {e}", file=sys.stderr, flush=True)
                continue
            with lock, locked():
                rows = read_rows()
                rows[row_key(row)] = row
                write_rows(rows)
            print(json.dumps(row), flush=True)
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
