"""Run the nine fqcodel-l4s-example scenarios in ns-3 3.44 and write their
per-window summary to `ns3_l4s_results.csv` (the cache `compare_l4s.py` and
`crates/aqmlab/tests/ns3_fqcodel_l4s.rs` read).

    python run_ns3_l4s.py --python ../../.venv-ns3/bin/python [--device kit example]

One ns-3 process per (scenario, device), one at a time (about 45 s each on
one core). `--raw FILE...` summarises JSON lines `ns3_fqcodel_l4s.py`
printed earlier instead of running ns-3.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from pathlib import Path

from l4s_scenarios import BY_NUM, L4S_SCENARIOS, WINDOW_COLUMNS, summarize

HERE = Path(__file__).resolve().parent
CACHE = HERE / "ns3_l4s_results.csv"
COLUMNS = ["device", *WINDOW_COLUMNS, "qdisc_sojourn_ms"]


def rows_of(raw: dict[str, object]) -> list[dict[str, object]]:
    s = BY_NUM[int(raw["scenario"])]  # type: ignore[call-overload]
    tx = summarize(s, {**raw, "soj_s": raw["soj_tx_s"]})  # type: ignore[dict-item]
    qd = summarize(s, {**raw, "soj_s": raw["soj_qd_s"]})  # type: ignore[dict-item]
    out = []
    for a, b in zip(tx, qd):
        out.append({"device": raw["device"], **a, "qdisc_sojourn_ms": b["sojourn_ms"]})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=sys.executable, help="a Python with ns3 3.44")
    ap.add_argument("--device", nargs="+", default=["kit"], choices=["kit", "example"])
    ap.add_argument(
        "--raw", nargs="*", type=Path, help="summarise these JSON-line files"
    )
    args = ap.parse_args()
    raws: list[dict[str, object]] = []
    if args.raw:
        for f in args.raw:
            raws += [json.loads(line) for line in f.read_text().splitlines() if line]
    else:
        for device in args.device:
            for s in L4S_SCENARIOS:
                cmd = [args.python, str(HERE / "ns3_fqcodel_l4s.py"), str(s.num)]
                out = subprocess.run(
                    [*cmd, "--device", device],
                    check=True,
                    capture_output=True,
                    text=True,
                    cwd=HERE,
                ).stdout
                raws.append(json.loads(out.strip().splitlines()[-1]))
                print(
                    f"scenario {s.num} ({device}): {raws[-1]['run_wall_s']} s",
                    flush=True,
                )
    rows = [r for raw in raws for r in rows_of(raw)]
    rows.sort(
        key=lambda r: (r["device"] != "kit", r["scenario"], r["window"], r["flow"])
    )
    with CACHE.open("w", newline="") as fh:
        w = csv.DictWriter(fh, COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow(
                {k: f"{v:.4f}" if isinstance(v, float) else v for k, v in r.items()}
            )
    print(f"wrote {CACHE} ({len(rows)} rows)")


if __name__ == "__main__":
    main()
