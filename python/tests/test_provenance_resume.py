"""Provenance in every output folder, and `aqmlab.sweep(out=...)` that resumes.

- `Result.write` writes `scenario.toml` and `provenance.json`; the command
  line run on that `scenario.toml` repeats the run byte for byte.
- A sweep into a folder that is killed part-way, then called again, skips
  the runs that were complete (their files are not rewritten), runs the rest,
  and ends with the files and the table of an uninterrupted sweep.
- Run folders of another sweep are refused, or deleted with `force=True`.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import aqmlab

COMPARE = "scenarios/aqm-compare.toml"
VARY = {
    "links.bottleneck.queue_ab": [{"kind": "codel", "limit": 400}, {"kind": "pie", "limit": 400}]
}
SEEDS = [1, 2, 3]


def test_write_records_provenance_and_scenario_toml_repeats_the_run(cli, repo, tmp_path):
    sc = aqmlab.Scenario.from_file(repo / COMPARE).set("duration", "2s")
    sc.set("links.bottleneck.queue_ab.limit", 77)
    r = aqmlab.run(sc, seed=4)
    out = tmp_path / "py"
    r.write(out)
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["aqmlab_version"] == aqmlab.__version__
    assert prov["git_commit"]  # a commit hash, or "unknown" outside a checkout
    assert prov["scenario_file"] == str(repo / COMPARE)
    assert prov["overrides"] == ['duration="2s"', "links.bottleneck.queue_ab.limit=77"]
    assert prov["seed"] == 4
    assert prov["command_line"] == list(sys.orig_argv)
    assert prov["call"].startswith("aqmlab.run(aqmlab.Scenario.from_file(")
    assert ".set('links.bottleneck.queue_ab.limit', 77)" in prov["call"]
    assert prov["call"].endswith("seed=4)")
    text = (out / "scenario.toml").read_text()
    assert "seed = 4" in text and "limit = 77" in text and "[sweep]" not in text
    import hashlib

    assert prov["scenario_sha256"] == hashlib.sha256(text.encode()).hexdigest()
    # The command line on the effective scenario repeats the run.
    again = tmp_path / "cli"
    subprocess.run(
        [cli, "run", str(out / "scenario.toml"), "--out", str(again)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    for f in ["flows.csv", "queues.csv", "links.csv", "scenario.toml"]:
        assert (again / f).read_bytes() == (out / f).read_bytes(), f
    cli_prov = json.loads((again / "provenance.json").read_text())
    assert cli_prov["scenario_sha256"] == prov["scenario_sha256"]
    assert "call" not in cli_prov
    # the files a Result holds are the ones written
    assert r.files["provenance.json"] == (out / "provenance.json").read_bytes()


def test_per_run_csvs_carry_label_and_seed(repo):
    sc = aqmlab.Scenario.from_file(repo / COMPARE).set("duration", "1s")
    a, b = aqmlab.run(sc, seed=1), aqmlab.run(sc, seed=2)
    both = pd.concat([a.flows, b.flows])
    assert list(both.columns[:2]) == ["label", "seed"]
    assert set(both["label"]) == {"aqm-compare"}
    assert sorted(set(both["seed"])) == [1, 2]
    for r in (a, b):
        for t in (r.flows, r.links, r.queue_series):
            assert (t["seed"] == r.seed).all() and (t["label"] == "aqm-compare").all()


def deterministic_files(run_dir: Path, sweep_dir: Path) -> dict[str, bytes]:
    """A run folder's files, without what may differ between two identical runs
    (and with the sweep's folder, which the call names, as `OUT`)."""
    files = {}
    for p in sorted(run_dir.iterdir()):
        data = p.read_bytes()
        if p.name == "summary.json":
            s = json.loads(data)
            s.pop("wall_seconds")
            s.pop("timings")
            data = json.dumps(s, sort_keys=True).encode()
        elif p.name == "provenance.json":
            s = json.loads(data)
            s.pop("command_line")
            s["call"] = s["call"].replace(str(sweep_dir), "OUT")
            data = json.dumps(s, sort_keys=True).encode()
        files[p.name] = data
    return files


def tree(out: Path) -> dict[str, dict[str, bytes]]:
    return {
        str(d.relative_to(out)): deterministic_files(d, out)
        for d in sorted(out.glob("*/seed-*"))
        if d.is_dir()
    }


# A sweep whose process is killed (SIGKILL: no clean-up at all) while its
# third run goes, two runs being complete: its executor runs each task when
# submitted, the third in a thread, and kills the process 20 ms into it.
SWEEP_SCRIPT = """
import os, signal, sys, threading, time
from concurrent.futures import Future
import aqmlab

class KillOnThird:
    n = 0
    def submit(self, fn, task):
        self.n += 1
        f = Future()
        if self.n < 3:
            f.set_result(fn(task))
            return f
        threading.Thread(target=fn, args=(task,), daemon=True).start()
        time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGKILL)

sc = aqmlab.Scenario.from_file(sys.argv[1]).set("duration", "3s")
sc.set("output.pcap", ["bottleneck"])
aqmlab.sweep(sc, vary={vary!r}, seeds={seeds!r}, client=KillOnThird(), out=sys.argv[2])
"""


def killed_sweep(repo: Path, out: Path) -> None:
    code = SWEEP_SCRIPT.format(vary=VARY, seeds=SEEDS)
    p = subprocess.run(
        [sys.executable, "-c", code, str(repo / COMPARE), str(out)],
        capture_output=True,
        cwd=out.parent,  # not python/, whose source tree would shadow the package
        timeout=300,
    )
    assert p.returncode == -signal.SIGKILL, p.stderr.decode()


@pytest.mark.timeout(600)
def test_killed_sweep_resumes_to_the_uninterrupted_result(repo, tmp_path):
    sc = aqmlab.Scenario.from_file(repo / COMPARE).set("duration", "3s")
    sc.set("output.pcap", ["bottleneck"])
    whole = tmp_path / "whole"
    full = aqmlab.sweep(sc, vary=VARY, seeds=SEEDS, jobs=2, out=whole)
    assert list(full["run_dir"]) == [f"{q}/seed-{s}" for q in ("codel", "pie") for s in SEEDS]
    assert len(tree(whole)) == 6
    first = whole / "codel/seed-1"
    assert {"summary.json", "scenario.toml", "provenance.json", "flows.csv"} <= {
        p.name for p in first.iterdir()
    }
    assert any(p.suffix == ".pcap" for p in first.iterdir())
    # the row equals a single run of that point
    one = aqmlab.run(
        sc.copy().set("links.bottleneck.queue_ab", VARY["links.bottleneck.queue_ab"][0]), seed=1
    )
    assert full.loc[0, "dropped"] == one.queues.set_index("link").loc["r1->r2", "dropped"]

    cut = tmp_path / "cut"
    killed_sweep(repo, cut)
    done = sorted(str(p.parent.relative_to(cut)) for p in cut.glob("*/seed-*/summary.json"))
    # (the third may have finished within the 20 ms)
    assert done[:2] == ["codel/seed-1", "codel/seed-2"] and len(done) <= 3, done
    stamps = {d: (cut / d / "summary.json").stat().st_mtime_ns for d in done}

    # The same call again: complete runs are kept, the rest are run.
    resumed = aqmlab.sweep(sc, vary=VARY, seeds=SEEDS, jobs=2, out=cut)
    for d, t in stamps.items():
        assert (cut / d / "summary.json").stat().st_mtime_ns == t, f"{d} was run again"
    assert not list(cut.glob("**/.tmp-*")), "temporary files left behind"
    assert tree(cut) == tree(whole)
    pd.testing.assert_frame_equal(
        resumed.drop(columns="wall_s"), full.drop(columns="wall_s"), check_exact=True
    )

    # A third call runs nothing and gives the same table, wall_s included.
    again = aqmlab.sweep(sc, vary=VARY, seeds=SEEDS, jobs=1, out=cut)
    pd.testing.assert_frame_equal(again, resumed, check_exact=True)

    # A changed scenario is not "complete": every run is computed again.
    changed = sc.copy().set("links.bottleneck.rate", "12Mbps")
    with pytest.raises(ValueError, match="not part of this sweep"):
        aqmlab.sweep(changed, vary=VARY, seeds=[1], jobs=1, out=cut)
    other = aqmlab.sweep(changed, vary=VARY, seeds=SEEDS, jobs=2, out=cut)
    assert (other["dropped"] != full["dropped"]).any()
    for d in stamps:
        assert (cut / d / "summary.json").stat().st_mtime_ns != stamps[d], d


def test_stale_runs_are_refused_or_deleted(repo, tmp_path):
    sc = aqmlab.Scenario.from_file(repo / COMPARE).set("duration", "1s")
    vary = {"links.bottleneck.rate": ["10Mbps"]}
    aqmlab.sweep(sc, vary=vary, seeds=2, jobs=1, out=tmp_path)
    with pytest.raises(ValueError, match=r"1 run folder\(s\).*10Mbps/seed-2"):
        aqmlab.sweep(sc, vary=vary, seeds=1, jobs=1, out=tmp_path)
    assert (tmp_path / "10Mbps/seed-2/summary.json").exists()  # nothing deleted
    with pytest.warns(UserWarning, match="deleted 1 run folder"):
        df = aqmlab.sweep(sc, vary=vary, seeds=1, jobs=1, out=tmp_path, force=True)
    assert list(df["run_dir"]) == ["10Mbps/seed-1"]
    assert not (tmp_path / "10Mbps/seed-2").exists()
