"""Checks of the kit's replicate machinery that need neither ns-3 nor a
long run: `python3 -m pytest validation/ns3` (the aqmlab test is skipped
when target/release/aqmlab is not built)."""

from __future__ import annotations

import csv
import subprocess
import tomllib
from decimal import Decimal
from pathlib import Path

import pytest

import run_ns3
from compare import in_target, verdict
from scenarios import BY_NAME, MAX_JITTER_US, SCENARIOS, write_toml

HERE = Path(__file__).resolve().parent
AQMLAB = HERE.parents[1] / "target/release/aqmlab"


def test_replicate_0_starts_are_the_original_ones() -> None:
    for s in SCENARIOS:
        assert s.starts_us(0) == [100_000 + 200_000 * i for i in range(s.flows)]
        assert s.starts(0) == [round(0.1 + 0.2 * i, 3) for i in range(s.flows)]


def test_replicate_jitter_is_deterministic_bounded_and_varies() -> None:
    for s in SCENARIOS:
        seen = set()
        for k in range(1, 6):
            starts = s.starts_us(k)
            assert starts == s.starts_us(k)
            for i, us in enumerate(starts):
                assert 0 <= us - s.starts_us(0)[i] < MAX_JITTER_US
            seen.add(tuple(starts))
        assert len(seen) == 5, s.name
    # pinned: the draw depends on (scenario, k, flow) only
    assert BY_NAME["cu-bdp500-red-3"].starts_us(3) == [101354, 301389, 502803]


def test_negative_replicate_is_an_error() -> None:
    with pytest.raises(ValueError, match="replicate must be >= 0"):
        BY_NAME["cu-bdp500-red-3"].starts_us(-1)


def test_replicate_0_toml_is_the_committed_file(tmp_path: Path) -> None:
    for s in SCENARIOS:
        p = write_toml(s, tmp_path)
        assert p.read_text() == (HERE / "scenarios" / f"{s.name}.toml").read_text()


def test_replicate_toml_carries_starts_and_seed(tmp_path: Path) -> None:
    s = BY_NAME["nr-bdp250-fqcodel-10"]
    for k in (1, 4):
        p = write_toml(s, tmp_path, replicate=k)
        assert p.name == f"{s.name}-r{k}.toml"
        doc = tomllib.loads(p.read_text())
        assert doc["seed"] == k + 1
        got = [f["start"] for f in doc["flows"]]
        assert all(x.endswith("s") for x in got)
        assert [Decimal(x[:-1]) * 10**6 for x in got] == s.starts_us(k)


def test_results_file_keeps_replicate_0_last_and_numeric(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    row = {f: "1" for f in run_ns3.FIELDS}
    rows: dict[run_ns3.Key, dict[str, str]] = {}
    for name in ("cu-bdp500-red-3", "nr-bdp10-droptail-1"):
        for k in (0, 2, 1):
            rows[(name, k)] = {
                **row,
                "scenario": name,
                "replicate": str(k),
                "utilisation": str(k),
                "flow_goodput_mbps": "1;2",
            }
    run_ns3.write_rows(rows, path)
    assert run_ns3.read_rows(path) == rows
    with path.open() as f:
        listed = [(r["scenario"], r["replicate"]) for r in csv.DictReader(f)]
    assert listed == [
        ("nr-bdp10-droptail-1", "1"),
        ("nr-bdp10-droptail-1", "2"),
        ("nr-bdp10-droptail-1", "0"),
        ("cu-bdp500-red-3", "1"),
        ("cu-bdp500-red-3", "2"),
        ("cu-bdp500-red-3", "0"),
    ]
    # a reader keyed on the scenario alone gets replicate 0, all numeric
    with path.open() as f:
        last = {r["scenario"]: r for r in csv.DictReader(f)}
    for r in last.values():
        assert r["utilisation"] == "0"
        for k, v in r.items():
            if k not in ("scenario", "flow_goodput_mbps"):
                float(v)


def test_results_file_without_replicate_column_is_replicate_0(tmp_path: Path) -> None:
    path = tmp_path / "old.csv"
    path.write_text("scenario,utilisation\ncu-bdp500-red-3,0.9\n")
    rows = run_ns3.read_rows(path)
    assert list(rows) == [("cu-bdp500-red-3", 0)]
    assert rows[("cu-bdp500-red-3", 0)]["replicate"] == "0"


def test_targets() -> None:
    assert in_target("utilisation", 0.90, 0.949)
    assert not in_target("utilisation", 0.90, 0.951)
    assert in_target("goodput_mbps", 109.0, 100.0)
    assert not in_target("goodput_mbps", 111.0, 100.0)
    assert in_target("jain", 0.80, 0.89)
    assert not in_target("jain", 0.80, 0.91)
    assert in_target("mean_qdelay_ms", 11.9, 10.0)
    assert not in_target("mean_qdelay_ms", 12.1, 10.0)


def test_verdict() -> None:
    assert verdict([], ["util"], 5) == "agree"
    assert verdict(["util", "qdelay"], ["util"], 5) == (
        "differs: util; within spread: qdelay"
    )
    assert verdict(["Jain"], [], 5) == "within spread: Jain"
    assert verdict(["util"], [], 1) == "differs: util (n = 1)"


@pytest.mark.skipif(not AQMLAB.exists(), reason="aqmlab release binary not built")
def test_aqmlab_runs_the_replicate_starts_and_seed(tmp_path: Path) -> None:
    s = BY_NAME["nr-bdp33-red-5"]
    toml = write_toml(s, tmp_path, replicate=2)
    out = tmp_path / "out"
    subprocess.run([str(AQMLAB), "run", str(toml), "--out", str(out)], check=True)
    with (out / "flows.csv").open() as f:
        flows = list(csv.DictReader(f))
    assert [round(float(r["start_s"]) * 1e6) for r in flows] == s.starts_us(2)
    assert {r["seed"] for r in flows} == {"3"}
