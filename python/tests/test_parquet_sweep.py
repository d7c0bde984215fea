"""`aqmlab sweep --format parquet` and ``aqmlab.sweep(..., out=, format="parquet")``:
one Parquet dataset per table that ``pandas.read_parquet(folder)`` reads
whole, equal to the runs' CSVs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest

import aqmlab

SCENARIO = """
name = "pq-sweep"
duration = "2s"
[nodes]
hosts = ["a", "b"]
[[links]]
a = "a"
b = "b"
rate = "10Mbps"
delay = "5ms"
queue = { kind = "codel" }
[[flows]]
group = "g"
src = "a"
dst = "b"
count = 3
[sweep]
seeds = 2
link = "a->b"
[[sweep.vary]]
key = "links.0.queue.kind"
values = ["codel", "pie"]
"""


def _check_dataset(out: Path) -> None:
    runs = sorted(out.glob("*/seed-*"))
    assert len(runs) == 4
    for table in ("flows", "links"):
        ds = pd.read_parquet(out / "parquet" / table)
        csv = pd.concat([pd.read_csv(r / f"{table}.csv") for r in runs], ignore_index=True)
        assert len(ds) == len(csv) > 0
        assert list(ds.columns) == list(csv.columns)
        key = ["label", "seed"] + [c for c in csv.columns if c not in ("label", "seed")][:1]
        a = ds.sort_values(key, kind="stable").reset_index(drop=True)
        b = csv.sort_values(key, kind="stable").reset_index(drop=True)
        pd.testing.assert_frame_equal(a, b, check_dtype=False)
        assert set(ds["label"]) == {"codel", "pie"} and set(ds["seed"]) == {1, 2}


def test_a_sweep_dataset_reads_whole(cli: str, tmp_path: Path) -> None:
    f = tmp_path / "s.toml"
    f.write_text(SCENARIO)
    out = tmp_path / "sw"
    subprocess.run(
        [cli, "sweep", str(f), "--out", str(out), "--format", "parquet", "--jobs", "1"],
        check=True,
        capture_output=True,
    )
    _check_dataset(out)


def test_a_python_sweep_writes_the_same_dataset(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    out = tmp_path / "py"
    sc = aqmlab.Scenario.from_toml(SCENARIO, "pq-sweep")
    table = aqmlab.sweep(sc, out=out, format="parquet", jobs=1, progress=False)
    assert len(table) == 4
    _check_dataset(out)
    # `csv` (the default): the runs' CSVs only, no dataset
    aqmlab.sweep(sc, out=out, jobs=1, progress=False)
    assert not (out / "parquet").exists()
