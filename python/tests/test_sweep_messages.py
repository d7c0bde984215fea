"""`aqmlab.sweep`'s own arguments: a bad `jobs` or `seeds` is a ScenarioError
naming it and what is allowed, and an interrupt at any moment says what happened."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

import aqmlab
from aqmlab import _sweep


@pytest.fixture(scope="module")
def small(repo: Path) -> aqmlab.Scenario:
    return aqmlab.Scenario.from_file(repo / "scenarios/aqm-compare.toml").set("duration", "50ms")


VARY = {"links.bottleneck.queue_ab.limit": [50, 400]}


@pytest.mark.parametrize("jobs", [-1, 0, 1025, 2.5, True, "4"])
def test_bad_jobs_is_refused_naming_jobs(small: aqmlab.Scenario, jobs: Any) -> None:
    with pytest.raises(aqmlab.ScenarioError) as info:
        aqmlab.sweep(small, vary=VARY, seeds=1, jobs=jobs, progress=False)
    e = info.value
    assert isinstance(e, ValueError) and e.path == "jobs"
    msg = str(e)
    assert "`jobs`" in msg and "from 1 to 1024" in msg and repr(jobs) in msg, msg
    assert "\n" not in msg


@pytest.mark.parametrize(
    ("seeds", "why"),
    [
        (10**20, "is above 100000"),
        (0, "is below 1"),
        (-3, "is below 1"),
        ([], "is empty"),
        ([1, -1], "is out of range"),
        ([2**63], "is out of range"),
        ([1, 2.5], "is not an integer seed"),
        ("3", "neither a count nor a list"),
    ],
)
def test_bad_seeds_say_the_bound(small: aqmlab.Scenario, seeds: Any, why: str) -> None:
    with pytest.raises(aqmlab.ScenarioError) as info:
        aqmlab.sweep(small, vary=VARY, seeds=seeds, progress=False)
    e = info.value
    msg = str(e)
    assert e.path == "seeds" and why in msg, msg
    assert "from 1 to 100000" in msg and "2**63 - 1" in msg, msg
    assert "ssize_t" not in msg and len(msg) < 300, msg


def test_a_long_seed_list_is_refused_without_echoing_it(small: aqmlab.Scenario) -> None:
    with pytest.raises(aqmlab.ScenarioError) as info:
        aqmlab.sweep(small, vary=VARY, seeds=range(200_000), progress=False)
    msg = str(info.value)
    assert "holds more than 100000 seeds" in msg and len(msg) < 300, msg


def test_the_largest_seed_runs(small: aqmlab.Scenario) -> None:
    df = aqmlab.sweep(small, vary=VARY, seeds=[2**63 - 1], jobs=1, progress=False)
    assert list(df["seed"]) == [2**63 - 1] * 2


def _sigint(*_: object, **__: object) -> None:
    os.kill(os.getpid(), signal.SIGINT)


def test_an_interrupt_as_the_runs_end_has_a_message(
    small: aqmlab.Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ctrl-C while the progress bar closes, after the last run.
    monkeypatch.setattr(_sweep._Bar, "close", lambda self: _sigint())
    with pytest.raises(KeyboardInterrupt) as info:
        aqmlab.sweep(small, vary=VARY, seeds=1, jobs=1, progress=False)
    msg = str(info.value)
    assert msg.startswith("aqmlab.sweep interrupted as its runs ended"), msg
    assert "pass out=DIR" in msg


def test_an_interrupt_after_the_last_run_has_a_message(
    small: aqmlab.Scenario, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Ctrl-C while the dataset is gathered, after every run is complete.
    monkeypatch.setattr(_sweep._native, "write_dataset", _sigint)
    out = tmp_path / "sw"
    with pytest.raises(KeyboardInterrupt) as info:
        aqmlab.sweep(small, vary=VARY, seeds=1, jobs=1, out=out, progress=False)
    msg = str(info.value)
    assert "after all 2 runs were complete" in msg and str(out) in msg, msg
    assert info.value.__suppress_context__
    monkeypatch.undo()
    # the same call gathers the kept runs
    df = aqmlab.sweep(small, vary=VARY, seeds=1, jobs=1, out=out, progress=False)
    assert len(df) == 2


def test_an_interrupt_between_serial_runs_counts_them(
    small: aqmlab.Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ctrl-C as the progress bar counts the first of two runs (one process).
    monkeypatch.setattr(_sweep._Bar, "update", lambda self: _sigint())
    with pytest.raises(KeyboardInterrupt) as info:
        aqmlab.sweep(small, vary=VARY, seeds=1, jobs=1, progress=False)
    assert "interrupted: 1 of 2 runs complete" in str(info.value), str(info.value)
