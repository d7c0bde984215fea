"""The per-packet event log (`output.log`) as a DataFrame.

`Result.event_log` reads the file `aqmlab run` writes (`events.csv`, or
`events.parquet`); its counts are the queue's counters in `summary.json`,
and the CSV and Parquet forms hold the same rows.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest

import aqmlab

SETS = {
    "duration": "5s",
    "links.bottleneck.queue_ab": {"kind": "codel", "limit": 100},
    "output.log": ["bottleneck"],
    # the CSV form (auto would write this log of > 1 MiB as Parquet)
    "output.log_format": "csv",
}


def _scenario(repo: Path) -> aqmlab.Scenario:
    sc = aqmlab.Scenario.from_file(repo / "scenarios/aqm-compare.toml")
    for k, v in SETS.items():
        sc.set(k, v)
    return sc


def test_the_log_counts_what_the_queue_counts(repo: Path) -> None:
    res = aqmlab.run(_scenario(repo))
    log = res.event_log
    q = next(x for x in res.summary["queues"] if x["link"] == "r1->r2")
    fwd = log[log["link"] == "r1->r2"]
    counts = fwd["event"].value_counts()
    assert counts["enqueue"] == q["enqueued"]
    assert counts["dequeue"] == q["dequeued"]
    assert counts.get("drop", 0) == q["dropped"]
    assert q["dropped_aqm"] > 0
    assert (fwd[fwd["event"] == "drop"]["reason"] == "codel").sum() == q["dropped_aqm"]
    assert log["time_s"].is_monotonic_increasing
    assert set(log["link"]) == {"r1->r2", "r2->r1"}
    assert res.summary["event_log"] == {
        "file": "events.csv",
        "events": len(log),
        "lost": 0,
        "max_events_per_port": 5_000_000,
    }


def test_cli_csv_and_python_parquet_hold_the_same_rows(
    cli: str, repo: Path, tmp_path: Path
) -> None:
    args = [cli, "run", str(repo / "scenarios/aqm-compare.toml"), "--out", str(tmp_path)]
    args += ["--set", "duration=5s", "--set", 'links.bottleneck.queue_ab={kind="codel",limit=100}']
    args += ["--set", 'output.log=["bottleneck"]', "--set", 'output.log_format="csv"']
    subprocess.run(args, check=True, capture_output=True, timeout=300)
    csv = pd.read_csv(tmp_path / "events.csv", keep_default_na=False)
    pytest.importorskip("pyarrow")
    sc = _scenario(repo).set("output.log_format", "parquet")
    pq = aqmlab.run(sc).event_log
    assert "events.csv" not in aqmlab.run(sc).files
    assert list(pq.columns) == list(csv.columns)
    pd.testing.assert_frame_equal(pq, csv, check_dtype=False)


def test_parquet_tables_hold_the_csv_tables(repo: Path) -> None:
    pytest.importorskip("pyarrow")
    sc = _scenario(repo).set("output.throughput_bin", "100ms")
    as_csv = aqmlab.run(sc.copy().set("output.format", "csv"))
    pq = sc.copy().set("output.format", "parquet").set("output.log_format", "parquet")
    as_pq = aqmlab.run(pq)
    names = {n for n in as_pq.files if n.endswith(".parquet")}
    assert names == {
        "flows.parquet",
        "links.parquet",
        "queues.parquet",
        "throughput.parquet",
        "events.parquet",
    }
    assert not any(n.endswith(".csv") for n in as_pq.files)
    for table in ("flows", "links", "queue_series", "throughput", "event_log"):
        pd.testing.assert_frame_equal(
            getattr(as_pq, table), getattr(as_csv, table), check_dtype=False
        )


def test_a_parquet_sweep_needs_a_folder(repo: Path) -> None:
    sc = _scenario(repo).set("output.format", "parquet")
    with pytest.raises(ValueError, match="out=DIR"):
        aqmlab.sweep(sc, vary={"links.bottleneck.queue_ab.limit": [50, 100]})
    with pytest.raises(aqmlab.ScenarioError, match="output.format"):
        aqmlab.sweep(_scenario(repo), vary={"links.bottleneck.queue_ab.limit": [50]}, format="xml")
