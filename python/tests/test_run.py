"""`aqmlab.run`: the DataFrames hold what `aqmlab run` writes; runs are deterministic."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

import aqmlab

MICE = "scenarios/papers/maxnet-mice/reno-red.toml"
# Overrides that make the run short and switch on every optional table.
# CSV tables (the default): these tests compare them with the CLI's byte for byte
MICE_SET = {"duration": "25s", "flows.0.trace_cwnd": True, "output.format": "csv"}
COMPARE = "scenarios/aqm-compare.toml"

TABLES = {
    "flows": "flows.csv",
    "links": "links.csv",
    "queue_series": "queues.csv",
    "cwnd": "cwnd.csv",
    "throughput": "throughput.csv",
    "requests": "requests.csv",
}


def cli_run(cli: str, repo: Path, out: Path, file: str, seed: int, sets: dict) -> None:
    args = [cli, "run", file, "--out", str(out), "--seed", str(seed)]
    for k, v in sets.items():
        args += ["--set", f"{k}={json.dumps(v)}"]
    subprocess.run(args, cwd=repo, check=True, capture_output=True, timeout=300)


def without_wall(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in ("wall_seconds", "timings")}


@pytest.fixture(scope="module")
def mice(repo: Path) -> aqmlab.Result:
    sc = aqmlab.Scenario.from_file(repo / MICE).set_many(MICE_SET)
    return aqmlab.run(sc, seed=3)


def test_dataframes_equal_cli_csvs(cli, repo, tmp_path, mice):
    cli_run(cli, repo, tmp_path, MICE, 3, MICE_SET)
    for attr, name in TABLES.items():
        want = pd.read_csv(tmp_path / name)
        got = getattr(mice, attr)
        assert len(want) > 0, name
        # the same values; a DataFrame built from typed columns (pyarrow)
        # keeps a float column float where read_csv sees whole numbers
        pd.testing.assert_frame_equal(got, want, check_exact=True, check_dtype=False, obj=name)
        # and the bytes themselves
        assert mice.files[name] == (tmp_path / name).read_bytes(), name
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert without_wall(mice.summary) == without_wall(summary)
    # summary.json stays a summary: per-queue records of every link are in links.csv
    assert "flows" not in summary and "links" not in summary
    assert summary["totals"]["flows"] == len(mice.flows)
    assert len(mice.queues) == len(mice.links)
    assert mice.queues["arrivals"].sum() == summary["totals"]["queue_arrivals"]
    # units in the column names, as in the CSVs
    assert {"goodput_bps", "start_s", "mean_owd_s"} <= set(mice.flows.columns)
    assert {"time_s", "delay_s", "len_pkts"} <= set(mice.queue_series.columns)
    if importlib.util.find_spec("pyarrow") is not None:
        assert mice.throughput["throughput_bps"].dtype == "float64"
        assert mice.flows["bytes_acked"].dtype == "int64"


def test_tables_come_as_typed_columns_not_text(repo):
    pytest.importorskip("pyarrow")
    r = aqmlab.run(aqmlab.Scenario.from_file(repo / MICE).set_many(MICE_SET))
    assert len(r.flows) > 0 and len(r.queue_series) > 0 and len(r.links) > 0
    # the run's files (CSV text) were never made to build them
    assert "files" not in r.__dict__


def test_arrow_tables_are_the_cli_parquet_tables(cli, repo, tmp_path, mice):
    """`Result.arrow` hands over, through the Arrow C stream interface, the
    table `output.format = "parquet"` writes: the same schema and values."""
    pq = pytest.importorskip("pyarrow.parquet")
    cli_run(cli, repo, tmp_path, MICE, 3, {**MICE_SET, "output.format": "parquet"})
    for name in mice._native.tables():
        got = mice.arrow(name)
        want = pq.read_table(tmp_path / f"{name}.parquet")
        assert got.num_rows > 0, name
        assert got.schema.remove_metadata() == want.schema.remove_metadata(), name
        assert got.equals(want.cast(got.schema)), name
    # a flow that did not complete (the long-lived ones) has a null
    # completion time, as its CSV cell is empty
    done = mice.arrow("flows").column("completion_s")
    assert 0 < done.null_count < len(done)
    with pytest.raises(KeyError, match="no table 'nope'"):
        mice.arrow("nope")


def test_an_arrow_stream_is_read_once_and_freed_unread(mice):
    pa = pytest.importorskip("pyarrow")
    from aqmlab._result import _ArrowStream

    s = _ArrowStream(mice._native.table_arrow("links"))
    assert pa.RecordBatchReader.from_stream(s).read_all().num_rows == len(mice.links)
    with pytest.raises(RuntimeError, match="read already"):
        pa.RecordBatchReader.from_stream(s)
    # a capsule nobody reads releases its stream when it is freed
    for _ in range(3):
        capsule = mice._native.table_arrow("queues")
        del capsule
    assert mice._native.table_arrow("nope") is None


def test_write_matches_cli(cli, repo, tmp_path, mice):
    cli_run(cli, repo, tmp_path / "cli", MICE, 3, MICE_SET)
    mice.write(tmp_path / "py")
    cli_names = {p.name for p in (tmp_path / "cli").iterdir()}
    py_names = {p.name for p in (tmp_path / "py").iterdir()}
    assert set(TABLES.values()) | {"summary.json", "scenario.toml", "provenance.json"} <= py_names
    # The same files; every result file and the effective scenario byte for
    # byte; the provenance differs only in how the run was asked for.
    assert py_names == cli_names
    for n in py_names - {"summary.json", "provenance.json"}:
        assert (tmp_path / "cli" / n).read_bytes() == (tmp_path / "py" / n).read_bytes(), n
    prov = {d: json.loads((tmp_path / d / "provenance.json").read_text()) for d in ("cli", "py")}
    # (git_commit: the package and the command may be built at different
    # commits of a working copy)
    invocation = {"command_line", "call", "scenario_file", "git_commit"}
    assert {k: v for k, v in prov["py"].items() if k not in invocation} == {
        k: v for k, v in prov["cli"].items() if k not in invocation
    }
    assert prov["py"]["overrides"] == [
        'duration="25s"',
        "flows.0.trace_cwnd=true",
        'output.format="csv"',
    ]
    assert prov["py"]["scenario_file"] == str(repo / MICE)
    assert prov["cli"]["scenario_file"] == MICE


def test_run_accepts_a_path_and_uses_the_scenario_seed(repo):
    sc = aqmlab.Scenario.from_file(repo / COMPARE).set("duration", "3s")
    r = aqmlab.run(sc)
    assert r.seed == sc.seed == 1
    by_path = aqmlab.run(str(repo / "scenarios/papers/red-gateway/b1.toml"), seed=2)
    assert by_path.seed == 2 and by_path.summary["scenario"] == "red-gateway-b1"


def test_same_seed_same_results_other_seed_differs(repo):
    sc = aqmlab.Scenario.from_file(repo / COMPARE).set("duration", "5s")
    a, b, c = aqmlab.run(sc, seed=4), aqmlab.run(sc, seed=4), aqmlab.run(sc, seed=5)
    for name in a.files:
        if name != "summary.json":
            assert a.files[name] == b.files[name], name
    assert without_wall(a.summary) == without_wall(b.summary)
    pd.testing.assert_frame_equal(a.flows, b.flows, check_exact=True)
    # aqm-compare spreads the flows' starts over 2 s from the seed
    assert not a.flows["start_s"].equals(c.flows["start_s"])


def test_optional_tables_are_empty_when_not_recorded(repo):
    r = aqmlab.run(aqmlab.Scenario.from_file(repo / COMPARE).set("duration", "2s"))
    assert r.cwnd.empty and r.requests.empty and r.throughput.empty
    assert not r.flows.empty and not r.queue_series.empty


def test_queue_classes(repo):
    sc = aqmlab.Scenario.from_file(repo / "scenarios/papers/rio-ps/web.toml")
    r = aqmlab.run(sc.set("duration", "20s"))
    classes = r.queue_classes
    assert set(classes["class"]) >= {"in", "out"}
    for link, g in classes.groupby("link"):
        q = r.queues.set_index("link").loc[link]
        assert g["arrivals"].sum() == q["arrivals"]


def test_run_releases_the_gil(repo):
    """While one thread is inside run(), another runs Python code.

    The switch interval is set far beyond the run's length, so the main thread
    gets the GIL back during the run only if run() gives it up.
    """
    sc = aqmlab.Scenario.from_file(repo / COMPARE).set("duration", "60s")
    started, done = threading.Event(), threading.Event()
    out: list[aqmlab.Result] = []

    def work() -> None:
        started.set()
        out.append(aqmlab.run(sc))
        done.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        t = threading.Thread(target=work)
        t.start()
        started.wait()
        ran_during_run = not done.is_set()
        t.join()
    finally:
        sys.setswitchinterval(old)
    assert ran_during_run
    assert out[0].events > 100_000


def test_threads_give_the_same_results(repo):
    from concurrent.futures import ThreadPoolExecutor

    sc = aqmlab.Scenario.from_file(repo / COMPARE).set("duration", "5s")
    with ThreadPoolExecutor(2) as ex:
        rs = list(ex.map(lambda s: aqmlab.run(sc, seed=s), [1, 2, 1, 2]))
    assert rs[0].files["flows.csv"] == rs[2].files["flows.csv"]
    assert rs[1].files["queues.csv"] == rs[3].files["queues.csv"]


def test_scenario_round_trips(repo):
    sc = aqmlab.Scenario.from_file(repo / COMPARE)
    assert aqmlab.Scenario.from_toml(sc.to_toml()) == sc
    assert aqmlab.Scenario.from_dict(sc.to_dict()) == sc
    import pickle

    back = pickle.loads(pickle.dumps(sc))
    assert back == sc and back.file == sc.file
    assert sc.get("links.bottleneck.rate") == "20Mbps"
    assert sc.get("flows.bulk.count") == 8
    assert sc.get("no.such.key") is None


def test_set_changes_the_run(repo):
    sc = aqmlab.Scenario.from_file(repo / COMPARE).set("duration", "5s")
    red = {"kind": "red", "limit": 400, "min_th": 5, "max_th": 15, "max_p": 0.1}
    base = aqmlab.run(sc)
    changed = aqmlab.run(sc.copy().set("links.bottleneck.queue_ab", red))
    assert sc.get("links.bottleneck.queue_ab.kind") == "droptail"
    q0 = base.queues.set_index("link").loc["r1->r2"]
    q1 = changed.queues.set_index("link").loc["r1->r2"]
    assert q0["kind"] == "droptail" and q1["kind"] == "red"
    assert q1["mean_len_pkts"] < q0["mean_len_pkts"]


def test_flows_head_of_the_readme_example(repo, monkeypatch):
    monkeypatch.chdir(repo)
    head = aqmlab.run("scenarios/aqm-compare.toml").flows.head()
    assert len(head) == 5 and list(head["group"]) == ["bulk"] * 5
    assert (head["goodput_bps"] > 0).all()


MULTI_SITE = "scenarios/multi-site.toml"


def test_threads_give_the_one_thread_results(repo: Path) -> None:
    """`run(..., threads=2)` is a parallel run with the sequential bytes."""
    sc = aqmlab.Scenario.from_file(repo / MULTI_SITE).set("duration", "0.3s")
    one = aqmlab.run(sc, seed=3)
    two = aqmlab.run(sc, seed=3, threads=2)
    assert two.summary["parallel"]["processes"] == 2
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(one, name), getattr(two, name))
    assert without_wall(one.summary) == {
        k: v for k, v in without_wall(two.summary).items() if k != "parallel"
    }
    with pytest.raises(ValueError, match="threads"):
        aqmlab.run(sc, threads=0)
