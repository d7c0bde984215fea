"""Shared fixtures: the repository root and the `aqmlab` command to compare against."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session", autouse=True)
def _sigint_raises() -> None:
    """SIGINT raises KeyboardInterrupt, as at a terminal, even when the test
    run inherited it ignored (``nohup python/test.sh &``: a background job's
    SIGINT is ignored, and Python then installs no handler for it)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def cli() -> str:
    """The `aqmlab` binary built from this checkout (AQMLAB_CLI overrides)."""
    env = os.environ.get("AQMLAB_CLI")
    if env:
        return env
    cargo = shutil.which("cargo") or str(Path.home() / ".cargo/bin/cargo")
    subprocess.run(
        [cargo, "build", "--release", "--locked", "-q", "-p", "aqmlab-cli"],
        cwd=REPO,
        check=True,
        timeout=1800,
    )
    return str(REPO / "target/release/aqmlab")
