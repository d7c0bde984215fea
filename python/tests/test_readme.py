"""The README's Python example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[2]


def test_readme_python_example(tmp_path, monkeypatch):
    text = (REPO / "README.md").read_text()
    section = text.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    (tmp_path / "scenarios").symlink_to(REPO / "scenarios")
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), ns)
    assert isinstance(ns["df"], pd.DataFrame) and len(ns["df"]) == 3 * 2 * 3
    assert (tmp_path / "out/b1/flows.csv").exists()
    assert ns["res"].seed == 7
    assert (ns["tables"]["Fig. 5"]["n"] == 2).all()
