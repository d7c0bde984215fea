"""CPU time of the Python package's result tables on a star of N hosts.

For each table: `res.arrow(name)` (typed columns built in Rust, handed over
through the Arrow C stream interface) and the DataFrame built from it, the
median of `--repeat` tries in process CPU time. The star is `aqmlab bench
--scale`'s (one bulk flow per host, 10 s).

    python scripts/bench_tables.py --hosts 10000
"""

from __future__ import annotations

import argparse
import resource
import statistics
from collections.abc import Callable

import aqmlab
from aqmlab._result import Result

STAR = """name = "scale-star-{n}"
duration = "10s"
seed = 1
[tcp]
mss = 1000
max_window = 1000
[topology]
kind = "star"
hosts = {n}
access_rate = "1Gbps"
access_delay = "1ms"
bottleneck_rate = "100Mbps"
bottleneck_delay = "10ms"
queue = {{ kind = "red", limit = 1000, min_th = 100, max_th = 300 }}
[[flows]]
group = "bulk"
src = "h*"
dst = "sink"
start_spread = "1s"
"""


def cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def median_ms(f: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = cpu()
        f()
        times.append(cpu() - t)
    return statistics.median(times) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()
    res: Result = aqmlab.run(aqmlab.Scenario.from_toml(STAR.format(n=a.hosts)))
    print("table   rows  cols  arrow_ms  dataframe_ms")
    for name in ("flows", "links"):
        t = res.arrow(name)
        arrow = median_ms(lambda n=name: res.arrow(n), a.repeat)
        frame = median_ms(lambda n=name: res.arrow(n).to_pandas(), a.repeat)
        print(f"{name:6} {t.num_rows:6} {t.num_columns:5} {arrow:9.1f} {frame:13.1f}")


if __name__ == "__main__":
    main()
