"""Every ```python block of the book runs as a reader would run it.

A block runs in a fresh folder holding `scenarios/` and `examples/` (links to
the repository's), after the page's `aqmlab` commands shown above it (the
CLI built from this checkout), with simulated time shortened to 1 s and one
seed, as `crates/aqmlab-cli/tests/docs_cli.rs` shortens the commands. The
README's and the Python guide's blocks are run by test_readme.py, which
checks their results too.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COVERED = {"docs/src/guide/python.md"}  # test_readme.py runs it


def blocks(text: str) -> list[tuple[int, str, str]]:
    """(line of the fence, info string, body) of each fenced block."""
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append((i + 1, lines[i][3:].strip(), "\n".join(lines[i + 1 : j]) + "\n"))
            i = j
        i += 1
    return out


def aqmlab_commands(body: str) -> list[list[str]]:
    """The `aqmlab ...` commands of a shell block, as argument lists."""
    out = []
    for line in body.replace("\\\n", " ").split("\n"):
        for part in line.split("&&"):
            words = shlex.split(part, comments=True)
            if words and words[0] in ("aqmlab", "./target/release/aqmlab"):
                out.append(words[1:])
    return out


def shortened(args: list[str]) -> list[str]:
    args = list(args)
    if args and args[0] == "run" and "--duration" not in args:
        args += ["--duration", "1s"]
    if args and args[0] == "sweep":
        args += ["--seeds", "1", "--set", 'duration="1s"']
    return args


def short_python(body: str) -> str:
    """Simulated time 1 s, one seed."""
    body = re.sub(r'(set\(\s*"duration",\s*)"[^"]*"', r'\1"1s"', body)
    return re.sub(r"\bseeds=\d+", "seeds=1", body)


def cases() -> list[tuple[str, int]]:
    found = []
    for page in sorted((REPO / "docs/src").rglob("*.md")):
        rel = page.relative_to(REPO).as_posix()
        if rel in COVERED:
            continue
        for line, info, _ in blocks(page.read_text()):
            if info == "python":
                found.append((rel, line))
    return found


def test_the_book_has_python_blocks() -> None:
    assert len(cases()) >= 3


@pytest.mark.parametrize(("page", "line"), cases())
def test_python_block_runs(
    page: str, line: int, tmp_path: Path, cli: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for d in ("scenarios", "examples"):
        (tmp_path / d).symlink_to(REPO / d)
    monkeypatch.chdir(tmp_path)
    body = ""
    for at, info, text in blocks((REPO / page).read_text()):
        if at > line:
            break
        if info in ("sh", "bash", "") and at < line:
            for args in aqmlab_commands(text):
                r = subprocess.run(
                    [cli, *shortened(args)], capture_output=True, text=True, timeout=600
                )
                assert r.returncode == 0, f"{page}:{at}: aqmlab {' '.join(args)}: {r.stderr[-500:]}"
        if at == line:
            body = text
    ns: dict = {}
    try:
        exec(compile(short_python(body), f"{page}:{line}", "exec"), ns)
    except Exception as e:  # noqa: BLE001 - the message names the page and line
        raise AssertionError(
            f"{page}:{line}: the python block fails ({type(e).__name__}: {e}); "
            "docs/src/contributing.md says how the book's examples are checked"
        ) from e
