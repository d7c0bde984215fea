"""Plot BBR's and CUBIC's goodput per buffer size from the sweep of
scenarios/bbr/coexistence.toml (standard library only; writes an SVG).

Usage: python3 scenarios/bbr/plot_coexistence.py DIR/sweep.csv OUT.svg [LABEL]

LABEL names the BBR version in the title and legend (default "BBR v1"; the
sweep of `aqmlab sweep ... --set flows.1.cc.variant=v3` is "BBR v3").
"""

import csv
import sys
from collections import defaultdict


def main(src: str, dst: str, bbr_label: str = "BBR v1") -> None:
    runs: dict[str, list[tuple[float, float]]] = defaultdict(list)
    with open(src, newline="") as f:
        for r in csv.DictReader(f):
            runs[r["links.bottleneck.queue_ab"]].append(
                (float(r["goodput_bps_bbr"]) / 1e6, float(r["goodput_bps_cubic"]) / 1e6)
            )
    labels = list(runs)
    means = [(sum(b for b, _ in v) / len(v), sum(c for _, c in v) / len(v)) for v in runs.values()]
    w, h, left, bottom, top = 640, 360, 60, 50, 40
    ymax = 50.0
    slot = (w - left - 20) / len(labels)
    out = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
            'font-family="sans-serif" font-size="12">'
        ),
        (
            f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">'
            f"1 {bbr_label} + 1 CUBIC, 50 Mbit/s, 30 ms: goodput by buffer (mean of seeds)</text>"
        ),
    ]
    plot_h = h - bottom - top
    for tick in range(0, 51, 10):
        y = h - bottom - plot_h * tick / ymax
        out.append(f'<line x1="{left}" y1="{y}" x2="{w - 20}" y2="{y}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4}" text-anchor="end">{tick}</text>')
    out.append(
        f'<text x="15" y="{h / 2}" transform="rotate(-90 15 {h / 2})" '
        'text-anchor="middle">goodput (Mbit/s)</text>'
    )
    for i, (label, (bbr, cubic)) in enumerate(zip(labels, means)):
        x0 = left + i * slot + slot * 0.15
        bw = slot * 0.35
        for j, (v, colour) in enumerate(((bbr, "#1f77b4"), (cubic, "#d62728"))):
            bh = plot_h * v / ymax
            out.append(
                f'<rect x="{x0 + j * bw}" y="{h - bottom - bh}" width="{bw - 2}" '
                f'height="{bh}" fill="{colour}"/>'
            )
        out.append(f'<text x="{x0 + bw}" y="{h - bottom + 16}" text-anchor="middle">{label}</text>')
    out.append(f'<rect x="{w - 150}" y="{top}" width="10" height="10" fill="#1f77b4"/>')
    out.append(f'<text x="{w - 135}" y="{top + 9}">{bbr_label}</text>')
    out.append(f'<rect x="{w - 150}" y="{top + 16}" width="10" height="10" fill="#d62728"/>')
    out.append(f'<text x="{w - 135}" y="{top + 25}">CUBIC</text>')
    out.append(f'<text x="{w / 2}" y="{h - 10}" text-anchor="middle">DropTail buffer</text>')
    out.append("</svg>")
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:4])
