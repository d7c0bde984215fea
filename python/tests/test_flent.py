"""flent data files read by flent itself (PyPI's `flent`).

`aqmlab run --flent` and `Result.to_flent` write the same bytes; flent's own
loader opens the file, finds its `tcp_nup` series, and reads per-flow
throughput that matches `throughput.csv`, and the traced flow's TCP RTT.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import aqmlab

resultset = pytest.importorskip("flent.resultset")

SETS = ["duration=5s", "output.throughput_bin=200ms", "flows.0.trace_cwnd=true"]


def test_flent_opens_the_cli_file_and_python_writes_the_same(
    cli: str, repo: Path, tmp_path: Path
) -> None:
    scen = repo / "scenarios/bbr/coexistence.toml"
    args = [cli, "run", str(scen), "--out", str(tmp_path / "run"), "--flent"]
    for s in SETS:
        args += ["--set", s]
    subprocess.run(args, check=True, capture_output=True, timeout=300)
    path = tmp_path / "run/run.flent.gz"

    rs = resultset.load(str(path))
    assert rs.meta("NAME") == "tcp_nup"
    names = rs.series_names
    assert {"TCP upload::1", "TCP upload::2", "TCP upload sum"} <= set(names)
    assert len(rs.x_values) == 25

    sc = aqmlab.Scenario.from_file(scen)
    for s in SETS:
        key, value = s.split("=", 1)
        sc.set(key, {"true": True}.get(value, value))
    res = aqmlab.run(sc)
    py = tmp_path / "py.flent.gz"
    res.to_flent(py)
    assert py.read_bytes() == path.read_bytes()

    # Flow 1's series is its throughput bins in Mbit/s, stamped at each
    # bin's end.
    df = res.throughput
    first = df[df["flow"] == 0].sort_values("time_s")["throughput_bps"].to_list()
    series = rs.series("TCP upload::1")
    assert series == pytest.approx([v / 1e6 for v in first[: len(series)]], rel=1e-12)
    rtt = [v for _, v in rs.raw_series("TCP upload::1", raw_key="tcp_rtt")]
    assert rtt and min(rtt) >= 30.0  # ms: the 30 ms base RTT at least


def test_to_flent_needs_throughput_bins(repo: Path, tmp_path: Path) -> None:
    res = aqmlab.run(
        aqmlab.Scenario.from_file(repo / "scenarios/bbr/coexistence.toml").set("duration", "1s")
    )
    with pytest.raises(ValueError, match="output.throughput_bin"):
        res.to_flent(tmp_path / "x.flent.gz")
    assert not list(tmp_path.iterdir())
