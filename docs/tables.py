#!/usr/bin/env python3
"""Regenerate the documentation's figure tables and compare them with the pages.

A table in a page under docs/src is marked

    <!-- table: ID -->
    | ... |
    <!-- end table -->

and ID names a generator below: a command whose output the table is. Only
deterministic tables (same scenario and seeds give the same numbers on any
machine) are generated here; timings (docs/src/performance.md) depend on the
machine, and their pages name the command that measures them instead.

    python3 docs/tables.py            # check: exit 1 and a diff if a table is stale
    python3 docs/tables.py --write    # rewrite the tables in place

The binary is target/release/aqmlab (build it first), or $AQMLAB.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "docs" / "src"
WORK = ROOT / "target" / "doc-tables"
MARK = re.compile(r"<!-- table: ([\w-]+) -->\n(.*?)<!-- end table -->\n", re.S)


def aqmlab(*args: str) -> str:
    exe = os.environ.get("AQMLAB", str(ROOT / "target" / "release" / "aqmlab"))
    done = subprocess.run([exe, *args], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"docs/tables.py: `aqmlab {' '.join(args)}` failed:\n{done.stderr}")
    return done.stdout


def first_table(markdown: str) -> str:
    """The first Markdown table of a text, header and rows."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "\n".join(lines[start:end]) + "\n"


def sweep_table(scenario: str, name: str) -> str:
    out = WORK / name
    shutil.rmtree(out, ignore_errors=True)
    aqmlab("sweep", scenario, "--out", str(out.relative_to(ROOT)))
    return first_table((out / "summary.md").read_text())


GENERATORS = {
    # docs/src/tutorial/first-sweep.md
    "aqm-compare": lambda: sweep_table("scenarios/aqm-compare.toml", "aqm-compare"),
}


def main(argv: list[str]) -> int:
    write = "--write" in argv
    cache: dict[str, str] = {}
    stale = 0
    for page in sorted(SRC.rglob("*.md")):
        text = page.read_text()
        if "<!-- table:" not in text:
            continue

        def fill(m: re.Match[str], page: Path = page) -> str:
            ident = m.group(1)
            if ident not in GENERATORS:
                known = ", ".join(GENERATORS)
                sys.exit(f"{page.relative_to(ROOT)}: unknown table `{ident}`; known: {known}")
            if ident not in cache:
                cache[ident] = GENERATORS[ident]()
            return f"<!-- table: {ident} -->\n{cache[ident]}<!-- end table -->\n"

        new = MARK.sub(fill, text)
        if new != text:
            rel = page.relative_to(ROOT)
            if write:
                page.write_text(new)
                print(f"docs/tables.py: rewrote {rel}")
            else:
                stale += 1
                sys.stdout.writelines(
                    difflib.unified_diff(
                        text.splitlines(True),
                        new.splitlines(True),
                        str(rel),
                        f"{rel} (regenerated)",
                    )
                )
    if stale:
        print(f"docs/tables.py: {stale} page(s) with stale tables; `--write` updates them")
        return 1
    if not write:
        print(f"docs/tables.py: {len(cache)} table(s) regenerated, all equal to the pages")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
