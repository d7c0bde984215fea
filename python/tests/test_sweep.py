"""`aqmlab.sweep`: one row per run; the same table locally, on threads and on a Dask cluster."""

from __future__ import annotations

import math
import os
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest

import aqmlab

COMPARE = "scenarios/aqm-compare.toml"
VARY = {
    "links.bottleneck.queue_ab": {
        "red": {"kind": "red", "limit": 400, "min_th": 20, "max_th": 60, "gentle": True},
        "codel": {"kind": "codel", "limit": 400},
    },
    "links.bottleneck.rate": ["10Mbps", "20Mbps"],
}
SEEDS = [1, 2]


@pytest.fixture(scope="module")
def base(repo: Path) -> aqmlab.Scenario:
    return aqmlab.Scenario.from_file(repo / COMPARE).set("duration", "4s")


@pytest.fixture(scope="module")
def local(base: aqmlab.Scenario) -> pd.DataFrame:
    return aqmlab.sweep(base, vary=VARY, seeds=SEEDS, jobs=2)


def deterministic(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=["wall_s"])


def test_one_row_per_run_one_column_per_axis(local):
    assert len(local) == 2 * 2 * 2
    assert list(local.columns[:3]) == ["links.bottleneck.queue_ab", "links.bottleneck.rate", "seed"]
    combos = set(
        zip(local["links.bottleneck.queue_ab"], local["links.bottleneck.rate"], local["seed"])
    )
    assert len(combos) == 8
    assert set(local["links.bottleneck.queue_ab"]) == {"red", "codel"}
    assert set(local["kind"]) == {"red", "codel"}
    assert (local["link"] == "r1->r2").all()  # the file's sweep.link
    assert {"goodput_bps_bulk", "goodput_bps_sparse"} <= set(local.columns)


def test_rows_match_single_runs(local, base):
    for _, row in local.iterrows():
        sc = base.copy().set_many(
            {
                "links.bottleneck.queue_ab": VARY["links.bottleneck.queue_ab"][
                    row["links.bottleneck.queue_ab"]
                ],
                "links.bottleneck.rate": row["links.bottleneck.rate"],
            }
        )
        r = aqmlab.run(sc, seed=int(row["seed"]))
        q = r.queues.set_index("link").loc["r1->r2"]
        assert row["dropped"] == q["dropped"] and row["arrivals"] == q["arrivals"]
        assert row["mean_delay_s"] == q["mean_delay_s"]
        assert row["drop_rate"] == q["dropped"] / q["arrivals"]
        # a group's and all flows' goodput: bytes delivered over the one
        # measured interval (not a sum of per-flow rates over their own lives)
        interval = r.summary["sim_seconds"] - (r.summary.get("warmup_s") or 0.0)
        groups = r.flows.groupby("group")["bytes_acked"].sum() * 8 / interval
        assert row["goodput_bps_bulk"] == pytest.approx(groups["bulk"], rel=1e-12)
        total = r.flows["bytes_acked"].sum() * 8 / interval
        assert row["goodput_bps"] == pytest.approx(total, rel=1e-12)
        assert row["jain_tcp"] == pytest.approx(r.summary["fairness"]["bulk"], rel=1e-12)
        assert row["events"] == r.events


def test_seeds_differ_and_rate_matters(local):
    red10 = local[
        (local["links.bottleneck.queue_ab"] == "red") & (local["links.bottleneck.rate"] == "10Mbps")
    ]
    red20 = local[
        (local["links.bottleneck.queue_ab"] == "red") & (local["links.bottleneck.rate"] == "20Mbps")
    ]
    assert red10["goodput_bps"].iloc[0] != red10["goodput_bps"].iloc[1]
    assert red20["goodput_bps"].mean() > 1.5 * red10["goodput_bps"].mean()


def test_thread_executor_and_serial_give_the_same_table(local, base):
    with ThreadPoolExecutor(2) as ex:
        threads = aqmlab.sweep(base, vary=VARY, seeds=SEEDS, client=ex)
    serial = aqmlab.sweep(base, vary=VARY, seeds=SEEDS, jobs=1)
    pd.testing.assert_frame_equal(deterministic(threads), deterministic(local), check_exact=True)
    pd.testing.assert_frame_equal(deterministic(serial), deterministic(local), check_exact=True)


def test_default_axes_and_seeds_from_the_file(repo):
    sc = aqmlab.Scenario.from_file(repo / COMPARE).set("duration", "2s")
    df = aqmlab.sweep(sc, seeds=1, jobs=2)
    kinds = [v["kind"] for v in sc.to_dict()["sweep"]["vary"][0]["values"]]
    assert len(kinds) >= 7 and kinds[:2] == ["droptail", "red"]
    assert list(df["links.bottleneck.queue_ab"]) == kinds
    assert list(df["kind"]) == kinds
    assert (df["seed"] == 1).all()
    df2 = aqmlab.sweep(sc, vary={"links.bottleneck.queue_ab.limit": [50, 400]}, jobs=1)
    assert list(df2["seed"]) == [1, 2, 3, 1, 2, 3]  # sweep.seeds = 3
    assert list(df2["links.bottleneck.queue_ab.limit"]) == [50, 50, 50, 400, 400, 400]
    assert not math.isnan(df2["cbr_owd_s"].iloc[0])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
    deadline = time.monotonic() + 15
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=10)


@pytest.mark.timeout(240)
def test_dask_cluster_gives_the_local_table(local, base, tmp_path):
    distributed = pytest.importorskip("distributed")
    # The `dask` command of this interpreter's environment (as a user types
    # `dask scheduler`), else the same programs as modules.
    dask = Path(sys.executable).with_name("dask")
    if dask.exists():
        dask_cli, worker_cli = [str(dask), "scheduler"], [str(dask), "worker"]
    else:
        dask_cli = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
        worker_cli = [sys.executable, "-m", "distributed.cli.dask_worker"]
    port = free_port()
    addr = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs: list[subprocess.Popen] = []
    logs = [open(tmp_path / f"{n}.log", "w") for n in ("scheduler", "worker1", "worker2")]
    try:
        procs.append(
            subprocess.Popen(
                [*dask_cli, "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                stdout=logs[0],
                stderr=subprocess.STDOUT,
                env=env,
            )
        )
        for i in (1, 2):
            procs.append(
                subprocess.Popen(
                    [
                        *worker_cli,
                        addr,
                        "--host",
                        "127.0.0.1",
                        "--nworkers",
                        "1",
                        "--nthreads",
                        "1",
                        "--no-dashboard",
                        "--name",
                        f"w{i}",
                    ],
                    stdout=logs[i],
                    stderr=subprocess.STDOUT,
                    env=env,
                )
            )
        with distributed.Client(addr, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
            workers = set(client.scheduler_info()["workers"])
            assert len(workers) == 2
            with distributed.get_task_stream(client) as ts:
                remote = aqmlab.sweep(base, vary=VARY, seeds=SEEDS, client=client)
            ran_on = {t["worker"] for t in ts.data}
        pd.testing.assert_frame_equal(deterministic(remote), deterministic(local), check_exact=True)
        assert len(ts.data) == len(local)
        assert ran_on <= workers and ran_on
    finally:
        stop(procs)
        for f in logs:
            f.close()


def test_jain_is_the_native_one() -> None:
    """The sweep's Jain index is the Rust one that every report uses."""
    from aqmlab import _native
    from aqmlab._sweep import _jain

    for xs in ([5.0, 5.0], [1.0, 2.0], [1.0, 0.0, 0.0, 0.0], [], [0.0, 0.0], [3e6, 1e6, 7e5]):
        s, s2 = sum(xs), sum(x * x for x in xs)
        expected = 1.0 if not xs or s2 == 0.0 else s * s / (len(xs) * s2)
        assert _jain(xs) == _native.jain(list(xs)) == pytest.approx(expected, rel=1e-15)
