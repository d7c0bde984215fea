"""aqmlab vs ns-3 3.44 on the nine fqcodel-l4s-example scenarios.

    cargo build --release
    python3 compare_l4s.py [--device kit|example] [--out DIR]

Runs `aqmlab run` on scenarios/l4s/ns3-fqcodel-l4s/scenario-N.toml, reduces
its `throughput.csv` and `events.csv` (port n2->n3) to the same per-window,
per-flow summary as the ns-3 side (`l4s_scenarios.summarize`), reads the
ns-3 side from `ns3_l4s_results.csv` and prints the Markdown table of
docs/src/l4s-ns3.md. The assertions are in
crates/aqmlab/tests/ns3_fqcodel_l4s.rs.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import tempfile
from pathlib import Path

from l4s_scenarios import BIN_S, L4S_SCENARIOS, L4sScenario, summarize

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CACHE = HERE / "ns3_l4s_results.csv"


def aqmlab_rows(s: L4sScenario, out: Path) -> list[dict[str, object]]:
    run_dir = out / s.name
    toml = ROOT / "scenarios/l4s/ns3-fqcodel-l4s" / f"{s.name}.toml"
    subprocess.run(
        [str(ROOT / "target/release/aqmlab"), "run", str(toml), "--out", str(run_dir)],
        check=True,
        capture_output=True,
    )
    nb = round(s.duration_s / BIN_S) + 1
    nf = len(s.flows())
    bins = {
        k: [[0.0] * nb for _ in range(nf)]
        for k in ("rx_bytes", "soj_s", "dequeued", "marks", "drops")
    }
    with (run_dir / "throughput.csv").open() as fh:
        for r in csv.DictReader(fh):
            b = round(float(r["time_s"]) / BIN_S)
            bins["rx_bytes"][int(r["flow"])][b] += (
                float(r["throughput_bps"]) * BIN_S / 8
            )
    key = {"dequeue": "dequeued", "mark": "marks", "drop": "drops"}
    with (run_dir / "events.csv").open() as fh:
        for r in csv.DictReader(fh):
            if r["event"] not in key:
                continue
            f, b = int(r["flow"]), min(int(float(r["time_s"]) / BIN_S), nb - 1)
            bins[key[r["event"]]][f][b] += 1
            if r["event"] == "dequeue":
                bins["soj_s"][f][b] += float(r["sojourn_s"])
    return summarize(s, bins)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="kit", choices=["kit", "example"])
    ap.add_argument("--out", type=Path, default=None, help="keep aqmlab's runs here")
    args = ap.parse_args()
    with CACHE.open() as fh:
        ns3 = {
            (int(r["scenario"]), r["window"], r["flow"]): r
            for r in csv.DictReader(fh)
            if r["device"] == args.device
        }
    out = args.out or Path(tempfile.mkdtemp(prefix="aqmlab-l4s-"))
    print(
        "| scenario | window | flow | goodput Mbit/s ns-3 / aqmlab | sojourn ms ns-3 / aqmlab "
        "| marks per 100 ms ns-3 / aqmlab | drops per 100 ms ns-3 / aqmlab |"
    )
    print("|---|---|---|---|---|---|---|")
    for s in L4S_SCENARIOS:
        for a in aqmlab_rows(s, out):
            n = ns3.get((s.num, str(a["window"]), str(a["flow"])))
            if n is None:
                continue

            cells = [
                f"{float(n[k]):{fmt}} / {float(a[k]):{fmt}}"  # type: ignore[arg-type]
                for k, fmt in [
                    ("goodput_mbps", ".1f"),
                    ("sojourn_ms", ".2f"),
                    ("marks_per_100ms", ".1f"),
                    ("drops_per_100ms", ".2f"),
                ]
            ]
            print(
                f"| {s.num} | {a['window']} | {a['flow']} | " + " | ".join(cells) + " |"
            )


if __name__ == "__main__":
    main()
