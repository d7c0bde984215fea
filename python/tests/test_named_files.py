"""Files a scenario names (traces, CDF files): paths from the scenario's folder,
SHA-256 in provenance, and their bytes shipped with a sweep's runs."""

from __future__ import annotations

import hashlib
import json
import pickle
import shutil
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

import aqmlab
from aqmlab import _sweep

SCENARIO = """
name = "files"
duration = "1s"
[nodes]
hosts = ["a", "b"]
[[links]]
name = "l"
a = "a"
b = "b"
delay = "5ms"
trace = "one.trace"
queue = { kind = "codel", limit = 200 }
[[flows]]
group = "bulk"
src = "a"
dst = "b"
"""

# one and two 1504-byte opportunities a millisecond (12 and 24 Mbit/s)
ONE = "".join(f"{t}\n" for t in range(1, 11))
TWO = "".join(f"{t}\n{t}\n" for t in range(1, 11))


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "scen"
    d.mkdir()
    (d / "s.toml").write_text(SCENARIO)
    (d / "one.trace").write_text(ONE)
    (d / "two.trace").write_text(TWO)
    return d


class Remote:
    """An executor standing for workers on another machine: each task is
    pickled (as Dask sends it) and run after the scenario's folder has gone."""

    def __init__(self, gone: Path) -> None:
        self.gone = gone

    def submit(self, fn: Callable[[Any], Any], task: Any) -> Future:
        if self.gone.exists():
            shutil.move(str(self.gone), str(self.gone) + ".away")
        f: Future = Future()
        try:
            f.set_result(fn(pickle.loads(pickle.dumps(task))))
        except Exception as e:  # the worker's error, as Dask returns it
            f.set_exception(e)
        return f


def test_paths_from_the_scenario_folder_and_hashes(folder: Path, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # not the scenario's folder
    sc = aqmlab.Scenario.from_file(folder / "s.toml")
    assert sc.get("links.l.trace") == str(folder / "one.trace")
    r = aqmlab.run(sc, out=tmp_path / "run")
    prov = json.loads((tmp_path / "run" / "provenance.json").read_text())
    assert prov["files"] == [
        {
            "key": "links[0].trace",
            "path": str(folder / "one.trace"),
            "sha256": sha(ONE),
            "bytes": len(ONE),
        }
    ]
    assert r.summary["events"] > 0
    # a path set from Python is relative to the working directory
    (tmp_path / "here.trace").write_text(TWO)
    sc2 = sc.set("links.l.trace", "here.trace")
    assert sc2.get("links.l.trace") == str(tmp_path / "here.trace")
    with pytest.raises(aqmlab.ScenarioError, match=r"links\[0\]\.trace"):
        sc.set("links.l.trace", "two.trace")  # only in the scenario's folder


def test_a_sweep_ships_the_files_with_its_runs(folder: Path, tmp_path: Path):
    sc = aqmlab.Scenario.from_file(folder / "s.toml")
    # values given to sweep() from Python are relative to the working
    # directory: name the files by absolute path
    vary = {"links.l.trace": {n: str(folder / f"{n}.trace") for n in ("one", "two")}}
    local = aqmlab.sweep(sc, vary=vary, seeds=1, link="a->b", jobs=1, progress=False)
    remote = aqmlab.sweep(
        sc,
        vary=vary,
        seeds=1,
        link="a->b",
        client=Remote(folder),
        progress=False,
        out=tmp_path / "out",
    )
    assert not folder.exists()  # the runs read the shipped copies
    cols = ["links.l.trace", "goodput_bps", "dropped", "events"]
    assert remote[cols].equals(local[cols])
    # two opportunities a ms carry more than one
    g = local.set_index("links.l.trace")["goodput_bps"]
    paths = vary["links.l.trace"]  # the column holds the values (paths)
    assert g[paths["two"]] > 1.1 * g[paths["one"]]
    for label, text in (("one", ONE), ("two", TWO)):
        prov = json.loads((tmp_path / "out" / label / "seed-1" / "provenance.json").read_text())
        assert [f["sha256"] for f in prov["files"]] == [sha(text)]


def test_a_changed_copy_is_refused(folder: Path):
    sc = aqmlab.Scenario.from_file(folder / "s.toml")
    files = _sweep._files(sc)
    path = str(folder / "one.trace")
    assert files == {path: (sha(ONE), ONE)}
    bad = {path: (sha(ONE), ONE + "11\n")}
    shutil.move(str(folder), str(folder) + ".away")
    with pytest.raises(aqmlab.ScenarioError, match="SHA-256"):
        _sweep._run_task((sc.to_toml(), sc.file, 1, None, "x", "", bad))
    # without the copy and without the file: the missing file is named
    with pytest.raises(aqmlab.ScenarioError, match="one.trace"):
        _sweep._run_task((sc.to_toml(), sc.file, 1, None, "x", "", {}))
    # with the right copy it runs
    row = _sweep._run_task((sc.to_toml(), sc.file, 1, None, "x", "", files))
    assert row["events"] > 0
