"""Run the aqmlab side of every scenario and print the comparison with the
cached ns-3 results (`ns3_results.csv`, written by `run_ns3.py`).

Usage: python compare.py [--aqmlab PATH] [--out DIR] [--cubic VARIANT]
                         [--replicates N] [--rows A,B,...] [NAME ...]

Targets (issue 12): utilisation within +-0.05, total goodput within +-10 %,
Jain within +-0.1, mean queueing delay within +-20 % of ns-3. Every row is
printed, in or out of target; `ok` marks a metric within its target.

The one-run table compares replicate 0 of each side (the kit's original
runs). With `--replicates N`, aqmlab also runs every replicate k < N that
`ns3_results.csv` holds for the row (same jittered starts, seed k + 1; see
`scenarios.py`), and a second table gives, per row and metric, each side's
mean +- sample standard deviation and min-max over those replicates,
whether the means are within the targets, and whether the two min-max
ranges overlap. Per-replicate values of both sides go to
`DIR/replicates.csv`.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from run_ns3 import read_rows, selection
from scenarios import BY_NAME, SCENARIOS, Scenario, write_toml

HERE = Path(__file__).resolve().parent


def jain(xs: list[float]) -> float:
    s, s2 = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * s2) if s2 > 0 else 1.0


METRICS = ["utilisation", "goodput_mbps", "jain", "mean_qdelay_ms"]
LABEL = {
    "utilisation": "util",
    "goodput_mbps": "goodput",
    "jain": "Jain",
    "mean_qdelay_ms": "qdelay",
}


def in_target(metric: str, a: float, n: float) -> bool:
    """aqmlab value (or mean) `a` within the issue's target around ns-3's `n`."""
    if metric == "utilisation":
        return abs(a - n) <= 0.05
    if metric == "goodput_mbps":
        return abs(rel(a, n)) <= 0.10
    if metric == "jain":
        return abs(a - n) <= 0.10
    return abs(rel(a, n)) <= 0.20


def run_aqmlab(
    exe: str, s: Scenario, out: Path, cubic: str, replicate: int = 0, bbr: str = "ns3"
) -> dict[str, float]:
    toml = write_toml(s, out, cubic, replicate, bbr)
    res = out / toml.stem
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


def fmt(metric: str, x: float) -> str:
    if metric in ("utilisation", "jain"):
        return f"{x:.3f}"
    if metric == "goodput_mbps":
        return f"{x:.1f}"
    return f"{x:.2f}"


def spread(metric: str, xs: list[float]) -> str:
    """`mean ± sd (min–max)` of one side's replicates."""
    m = statistics.fmean(xs)
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return f"{fmt(metric, m)} ± {fmt(metric, sd)} ({fmt(metric, min(xs))}–{fmt(metric, max(xs))})"


def verdict(out_means: list[str], apart: list[str], n: int) -> str:
    """The row's reading: "agree" when every mean is within target;
    otherwise each metric outside target is "differs" when the two sides'
    min-max ranges do not overlap (n >= 2: the gap exceeds what the
    replicates spread over) and "within spread" when they overlap."""
    if not out_means:
        return "agree"
    if n < 2:
        return "differs: " + ", ".join(out_means) + " (n = 1)"
    differs = [m for m in out_means if m in apart]
    spread_ = [m for m in out_means if m not in apart]
    parts = []
    if differs:
        parts.append("differs: " + ", ".join(differs))
    if spread_:
        parts.append("within spread: " + ", ".join(spread_))
    return "; ".join(parts)


def multi_seed(
    names: list[str],
    ns3_reps: dict[str, dict[int, dict[str, float]]],
    aq_reps: dict[str, dict[int, dict[str, float]]],
) -> None:
    """Print the multi-seed table: per row, each side's spread per metric,
    which means are outside their targets, which min-max ranges do not
    overlap (rows with one replicate: none counted), in how many replicates
    (paired: same starts and seed index) all four metrics are within
    target, and the verdict (see `verdict`)."""
    print(
        "| scenario | n | util ns-3 / aqmlab | goodput Mbit/s ns-3 / aqmlab "
        "| Jain ns-3 / aqmlab | mean qdelay ms ns-3 / aqmlab | drops (mean) ns-3 / aqmlab "
        "| means in target | ranges overlap | pairs in target | verdict |"
    )
    print("|" + "---|" * 11)
    counts = {"agree": 0, "differs": 0, "within spread only": 0}
    for name in names:
        ks = sorted(aq_reps.get(name, {}))
        if not ks:
            continue
        n = [ns3_reps[name][k] for k in ks]
        a = [aq_reps[name][k] for k in ks]
        cells = []
        out_means = []
        apart = []
        for m in METRICS:
            xs = [r[m] for r in n]
            ys = [r[m] for r in a]
            cells.append(f"{spread(m, xs)} / {spread(m, ys)}")
            if not in_target(m, statistics.fmean(ys), statistics.fmean(xs)):
                out_means.append(LABEL[m])
            if len(ks) > 1 and (max(xs) < min(ys) or max(ys) < min(xs)):
                apart.append(LABEL[m])
        drops = (
            f"{statistics.fmean(r['drops'] for r in n):.0f} / "
            f"{statistics.fmean(r['drops'] for r in a):.0f}"
        )
        pairs = sum(
            all(in_target(m, ar[m], nr[m]) for m in METRICS) for nr, ar in zip(n, a)
        )
        if len(ks) < 2:
            overlap = "– (n = 1)"
        else:
            overlap = "all 4" if not apart else "apart: " + ", ".join(apart)
        v = verdict(out_means, apart, len(ks))
        if v == "agree":
            counts["agree"] += 1
        elif "differs" in v:
            counts["differs"] += 1
        else:
            counts["within spread only"] += 1
        print(
            f"| {name} | {len(ks)} | " + " | ".join(cells) + f" | {drops} "
            f"| {'all 4' if not out_means else 'out: ' + ', '.join(out_means)} "
            f"| {overlap} | {pairs} of {len(ks)} | {v} |",
            flush=True,
        )
    print(
        f"\n{sum(counts.values())} scenarios: {counts['agree']} with all four means "
        f"within target, {counts['differs']} with a metric outside target whose "
        f"ranges do not overlap, {counts['within spread only']} outside target only "
        "within overlapping ranges.\n"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--aqmlab", default=str(HERE.parents[1] / "target/release/aqmlab"))
    ap.add_argument("--out", default=None, help="keep aqmlab outputs here")
    ap.add_argument(
        "--cubic",
        default="ns3",
        help='aqmlab CUBIC variant for the CUBIC rows ("ns3" models ns-3\'s TcpCubic)',
    )
    ap.add_argument(
        "--bbr",
        default="ns3",
        help='aqmlab BBR variant for the BBR rows ("ns3" models ns-3\'s TcpBbr, "v1" is Linux\'s)',
    )
    ap.add_argument(
        "--replicates",
        type=int,
        default=None,
        help="also compare replicates 0..N-1 (those ns3_results.csv holds)",
    )
    ap.add_argument("--rows", default="", help="comma-separated scenario names")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    wanted = selection(ap, args)
    rows = read_rows(HERE / "ns3_results.csv")
    ns3 = {name: r for (name, k), r in rows.items() if k == 0}
    ns3_reps: dict[str, dict[int, dict[str, float]]] = {}
    for (name, k), r in rows.items():
        ns3_reps.setdefault(name, {})[k] = {m: float(r[m]) for m in [*METRICS, "drops"]}
    aq_reps: dict[str, dict[int, dict[str, float]]] = {}
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
        if wanted and s.name not in wanted:
            continue
        if s.name not in ns3:
            print(f"| {s.name} | no ns-3 result cached |")
            continue
        n = {
            k: float(v)
            for k, v in ns3[s.name].items()
            if k not in ("scenario", "flow_goodput_mbps", "starts_us") and v != ""
        }
        a = run_aqmlab(args.aqmlab, s, out, args.cubic, bbr=args.bbr)
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
        aq_reps.setdefault(s.name, {})[0] = a
    print(f"\n{n_ok} of {n_rows} scenarios within all four targets.\n")
    if args.replicates is not None:
        names = []
        for s in SCENARIOS:
            if (wanted and s.name not in wanted) or s.name not in ns3_reps:
                continue
            names.append(s.name)
            for k in sorted(ns3_reps[s.name]):
                if k < args.replicates and k not in aq_reps.get(s.name, {}):
                    aq_reps.setdefault(s.name, {})[k] = run_aqmlab(
                        args.aqmlab, s, out, args.cubic, k, args.bbr
                    )
        multi_seed(names, ns3_reps, aq_reps)
        write_replicates(out / "replicates.csv", names, ns3_reps, aq_reps)
    print(
        "| scenario | ns-3 run wall s / CPU s | ns-3 process wall s / CPU s (incl. import) | aqmlab wall s / CPU s "
        "| retransmits ns-3 / aqmlab | timeouts ns-3 / aqmlab |"
    )
    print("|---|---|---|---|---|---|")
    for name, n, a in perf:
        nretx = f"{n['retransmits']:.0f}" if "retransmits" in n else "–"
        nrto = f"{n['rtos']:.0f}" if "rtos" in n else "–"
        # a row run with ns3_dumbbell.py directly has no process times
        proc = (
            f"{n['process_wall_s']:.0f} / {n['process_cpu_s']:.1f}"
            if "process_wall_s" in n
            else "–"
        )
        print(
            f"| {name} | {n['run_wall_s']:.1f} / {n['run_cpu_s']:.1f} | {proc} "
            f"| {a['wall_s']:.2f} / {a['cpu_s']:.2f} | {nretx} / {a['retransmits']:.0f} | {nrto} / {a['timeouts']:.0f} |"
        )
    print(f"\naqmlab outputs in {out}")


def write_replicates(
    path: Path,
    names: list[str],
    ns3_reps: dict[str, dict[int, dict[str, float]]],
    aq_reps: dict[str, dict[int, dict[str, float]]],
) -> None:
    """Both sides' values for every compared (scenario, replicate)."""
    cols = [*METRICS, "drops"]
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            ["scenario", "replicate", "starts_us"]
            + [f"ns3_{c}" for c in cols]
            + [f"aqmlab_{c}" for c in cols]
        )
        for name in names:
            for k in sorted(aq_reps.get(name, {})):
                starts = ";".join(str(us) for us in BY_NAME[name].starts_us(k))
                w.writerow(
                    [name, k, starts]
                    + [f"{ns3_reps[name][k][c]:.6g}" for c in cols]
                    + [f"{aq_reps[name][k][c]:.6g}" for c in cols]
                )


if __name__ == "__main__":
    main()
