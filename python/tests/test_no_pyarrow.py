"""Every table reads without pyarrow (the README's install), whatever the
run's `output.format`: from the table's CSV text, which Rust writes for the
purpose; with pyarrow, from typed columns, with the same values."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import aqmlab

ATTRS = ["flows", "links", "queue_series", "queues", "queue_classes", "cwnd", "event_log"]

# A run of every table the checks read, its tables and its log as Parquet.
SCRIPT = """
import io, json, sys
sys.modules["pyarrow"] = None  # `import pyarrow` raises ImportError, as when it is not installed
import aqmlab
from aqmlab import _result
assert not _result._HAVE_PYARROW
sc = aqmlab.Scenario.from_file(sys.argv[1]).set_many({
    "duration": "2s",
    "links.bottleneck.queue_ab": {"kind": "dualpi2"},
    "flows.0.trace_cwnd": True,
    "output.format": "parquet",
    "output.log": ["bottleneck"],
})
res = aqmlab.run(sc, seed=2)
assert any(n.endswith(".parquet") for n in res.files), sorted(res.files)
out = {}
for attr in sys.argv[2].split(","):
    df = getattr(res, attr)
    out[attr] = df.to_json(orient="split")
print(json.dumps(out))
"""


def _frames(text: str) -> dict[str, pd.DataFrame]:
    import io

    return {k: pd.read_json(io.StringIO(v), orient="split") for k, v in json.loads(text).items()}


def test_every_table_reads_without_pyarrow(repo: Path) -> None:
    scenario = str(repo / "scenarios/aqm-compare.toml")
    p = subprocess.run(
        [sys.executable, "-c", SCRIPT, scenario, ",".join(ATTRS)],
        # the repository root holds no `aqmlab` source tree to shadow the
        # installed package (python/ does)
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    got = _frames(p.stdout)
    # the same run as CSV files, read as a user would
    sc = aqmlab.Scenario.from_file(scenario).set_many(
        {
            "duration": "2s",
            "links.bottleneck.queue_ab": {"kind": "dualpi2"},
            "flows.0.trace_cwnd": True,
            "output.format": "csv",
            "output.log": ["bottleneck"],
        }
    )
    files = aqmlab.run(sc, seed=2).files
    for attr, name in [
        ("flows", "flows.csv"),
        ("links", "links.csv"),
        ("queue_series", "queues.csv"),
        ("queue_classes", "classes.csv"),
        ("cwnd", "cwnd.csv"),
        ("event_log", "events.csv"),
    ]:
        import io

        want = pd.read_csv(io.BytesIO(files[name]), keep_default_na=attr != "event_log")
        assert len(got[attr]) == len(want) > 0, attr
        assert list(got[attr].columns) == list(want.columns), attr
    # DualPI2's L and C queue columns are there
    assert {"l_len_pkts", "c_len_pkts"} <= set(got["queue_series"].columns)
    assert len(got["queues"]) == len(got["links"])


def test_the_pyarrow_path_gives_the_same_values(repo: Path) -> None:
    pytest.importorskip("pyarrow")
    from aqmlab import _result

    sc = aqmlab.Scenario.from_file(repo / "scenarios/aqm-compare.toml").set_many(
        {"duration": "1s", "output.format": "parquet", "output.log": ["bottleneck"]}
    )
    typed = aqmlab.run(sc, seed=1)
    text = aqmlab.run(sc, seed=1)
    _result._HAVE_PYARROW = False
    try:
        for attr in ATTRS:
            a, b = getattr(typed, attr), getattr(text, attr)
            pd.testing.assert_frame_equal(a, b, check_dtype=False, obj=attr)
    finally:
        _result._HAVE_PYARROW = True
