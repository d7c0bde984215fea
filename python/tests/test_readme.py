"""The README's and the Python guide's examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[2]


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_readme_python_example_writes_nothing(tmp_path, monkeypatch):
    text = (REPO / "README.md").read_text()
    section = text.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = python_blocks(section)
    assert len(blocks) == 1
    (tmp_path / "scenarios").symlink_to(REPO / "scenarios")
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), ns)
    kinds = 8  # the queue kinds of scenarios/aqm-compare.toml's [sweep]
    assert isinstance(ns["df"], pd.DataFrame) and len(ns["df"]) == kinds * 3
    # The README's example keeps nothing on disk (it would land in the clone).
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scenarios"]


def test_python_guide_example(tmp_path, monkeypatch):
    text = (REPO / "docs/src/guide/python.md").read_text()
    blocks = python_blocks(text)
    assert blocks, "docs/src/guide/python.md has no ```python block"
    (tmp_path / "scenarios").symlink_to(REPO / "scenarios")
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    exec(compile(blocks[0], "docs/src/guide/python.md", "exec"), ns)
    assert isinstance(ns["df"], pd.DataFrame) and len(ns["df"]) == 3 * 2 * 3
    assert (tmp_path / "out/b1/flows.csv").exists()
    assert ns["res"].seed == 7
    assert (ns["tables"]["Fig. 5"]["n"] == 2).all()
