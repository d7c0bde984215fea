"""`aqmlab.sweep` as a user at a terminal or in a notebook meets it: a progress
bar, and Ctrl-C that cancels what has not started, keeps what is complete and
raises one KeyboardInterrupt."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import aqmlab


def test_progress_bar_counts_the_runs(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sc = aqmlab.Scenario.from_file(repo / "scenarios/aqm-compare.toml").set("duration", "1s")
    aqmlab.sweep(sc, vary={"links.bottleneck.queue_ab.limit": [50, 400]}, seeds=2, jobs=2)
    err = capsys.readouterr().err
    assert "aqmlab.sweep" in err and "4/4" in err, err
    aqmlab.sweep(sc, vary={"links.bottleneck.queue_ab.limit": [50, 400]}, seeds=2, progress=False)
    assert "aqmlab.sweep" not in capsys.readouterr().err


@pytest.mark.timeout(120)
def test_ctrl_c_cancels_pending_runs_and_keeps_completed_ones(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sc = aqmlab.Scenario.from_file(repo / "scenarios/aqm-compare.toml").set("duration", "10s")
    out = tmp_path / "sweep"
    vary = {"links.bottleneck.queue_ab.limit": list(range(50, 450, 10))}  # 40 runs × 2 seeds
    # Ctrl-C as the terminal sends it (SIGINT to the process), as soon as the
    # first run is complete.
    from aqmlab import _sweep

    update = _sweep._Bar.update

    def update_then_interrupt(self: _sweep._Bar) -> None:
        update(self)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(_sweep._Bar, "update", update_then_interrupt)
    with pytest.raises(KeyboardInterrupt) as info:
        aqmlab.sweep(sc, vary=vary, seeds=2, jobs=2, out=out)
    monkeypatch.undo()
    msg = str(info.value)
    assert "aqmlab.sweep interrupted" in msg and "the same call resumes" in msg, msg
    assert info.value.__cause__ is None and info.value.__suppress_context__
    done = int(msg.split("interrupted: ")[1].split(" of ")[0])
    assert 0 < done < 80, msg
    assert "not started cancelled" in msg
    # Every completed run is on disk, whole; the call resumes to the full table.
    df = aqmlab.sweep(sc, vary=vary, seeds=2, jobs=2, out=out, progress=False)
    assert len(df) == 80
    assert len(list(out.glob("*/seed-*/summary.json"))) == 80


def test_missing_file_is_a_file_not_found_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(FileNotFoundError) as info:
        aqmlab.Scenario.from_file(missing)
    e = info.value
    assert isinstance(e, aqmlab.ScenarioError) and isinstance(e, ValueError)
    assert e.errno == 2 and e.filename == str(missing) and e.path is None
    assert str(e).startswith(f"{missing}: cannot read:")
    with pytest.raises(aqmlab.ScenarioError):
        aqmlab.run(missing)
    # A bad key is a ScenarioError but not an OSError.
    with pytest.raises(aqmlab.ScenarioError) as bad:
        aqmlab.Scenario.from_toml('name = "x"\nduration = "1s"\nnope = 1\n')
    assert not isinstance(bad.value, OSError)


def test_reproduce_without_out_names_no_folder(capfd: pytest.CaptureFixture[str]) -> None:
    aqmlab.reproduce("maxnet-mice", seeds=1, duration="25s")
    printed = capfd.readouterr().out
    assert "temporary folder that is removed" in printed, printed[-400:]
    assert "/tmp" not in printed


def test_ctrl_c_test_passes_with_sigint_ignored(repo: Path) -> None:
    """``nohup python/test.sh &`` starts the tests with SIGINT ignored; the
    Ctrl-C test above must still see its KeyboardInterrupt."""
    name = "test_ctrl_c_cancels_pending_runs_and_keeps_completed_ones"
    test = f"python/tests/test_interrupt.py::{name}"
    # from the repository root, whose folder holds no `aqmlab` source tree to
    # shadow the installed package
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
        cwd=repo,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout, done.stdout[-2000:]
