"""Tests of docs/check_links.py on small books made here.

Run: python3 -m unittest docs/test_check_links.py
"""

from __future__ import annotations

import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_links  # noqa: E402


class CheckLinks(unittest.TestCase):
    def book(self, pages: dict[str, str]) -> Path:
        root = Path(tempfile.mkdtemp())
        for name, body in pages.items():
            p = root / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f"<html><body>{body}</body></html>")
        return root

    def test_good_links_pass(self) -> None:
        root = self.book(
            {
                "index.html": '<a href="guide/a.html#sec">a</a> <a href="https://x.org/y">e</a>'
                '<a href="#top">t</a><h1 id="top">T</h1>',
                "guide/a.html": '<h2 id="sec">S</h2><a href="../index.html">up</a>'
                '<img src="../img.png">',
                "img.png": "",
            }
        )
        self.assertEqual(check_links.broken_links(root), [])

    def test_missing_file_and_anchor_are_reported(self) -> None:
        root = self.book(
            {
                "index.html": '<a href="missing.html">m</a><a href="b.html#nope">n</a>'
                '<a href="#here">h</a>',
                "b.html": '<h2 id="yes">Y</h2>',
            }
        )
        problems = check_links.broken_links(root)
        self.assertEqual(len(problems), 3, problems)
        self.assertIn("index.html: missing.html (no such file)", problems)
        self.assertIn("index.html: b.html#nope (no anchor #nope)", problems)
        self.assertIn("index.html: #here (no anchor #here)", problems)

    def test_link_out_of_the_book_is_reported(self) -> None:
        root = self.book({"index.html": '<a href="../../ARCHITECTURE.md">arch</a>'})
        self.assertEqual(len(check_links.broken_links(root)), 1)


if __name__ == "__main__":
    unittest.main()
