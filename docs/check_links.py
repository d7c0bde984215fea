#!/usr/bin/env python3
"""Check every link of the built book (docs/book, after `mdbook build docs`).

For each `href` and `src` in the HTML pages that is not an external URL
(`scheme:` or `//`), the target file must exist inside the book, and a
`#fragment` must be an `id` in the target page. External links are not
fetched (CI has no general network access); they are listed with --external.

    python3 docs/check_links.py [BOOK_DIR]      # exit 1 and one line per broken link

Tested by docs/test_check_links.py.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (tag == "a" and name == "name"):
                self.ids.add(value)
            elif name in ("href", "src") and tag in ("a", "img", "link", "script"):
                self.links.append(value)


def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(errors="replace"))
    return page


def broken_links(book: Path) -> list[str]:
    """One line `page: link (reason)` per broken link in the book's pages."""
    book = book.resolve()
    pages = {p: parse(p) for p in sorted(book.rglob("*.html"))}
    # mdbook's print.html repeats every page with rewritten links; 404.html
    # links relative to the site root.
    skip = {"print.html", "404.html", "toc.html"}
    problems = []
    for path, page in pages.items():
        if path.name in skip:
            continue
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//"):
                continue
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            rel = path.relative_to(book)
            if book not in target.parents and target != book:
                problems.append(f"{rel}: {link} (outside the book)")
                continue
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                problems.append(f"{rel}: {link} (no such file)")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if unquote(parts.fragment) not in ids:
                    problems.append(f"{rel}: {link} (no anchor #{parts.fragment})")
    return problems


def main(argv: list[str]) -> int:
    book = Path(argv[0]) if argv else Path(__file__).resolve().parent / "book"
    if not (book / "index.html").exists():
        print(f"check_links: {book} holds no built book; run `mdbook build docs` first")
        return 2
    problems = broken_links(book)
    for p in problems:
        print(f"broken link: {p}")
    n = sum(1 for _ in book.rglob("*.html"))
    print(f"check_links: {n} pages, {len(problems)} broken link(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
