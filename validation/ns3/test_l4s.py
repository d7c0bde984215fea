"""Checks of the fqcodel-l4s-example part of the kit that need no ns-3:
the committed scenario files are the table's, `summarize` reduces bins as
documented, and the ns-3 cache covers every scenario's windows. (The
scenarios' expected results and the agreement with ns-3 are asserted in
crates/aqmlab/tests/ns3_fqcodel_l4s.rs.)"""

from __future__ import annotations

import csv
import tomllib
from pathlib import Path

import pytest

from l4s_scenarios import BY_NUM, L4S_SCENARIOS, summarize, write_toml

HERE = Path(__file__).resolve().parent
COMMITTED = HERE.parents[1] / "scenarios/l4s/ns3-fqcodel-l4s"


def test_committed_scenarios_are_the_tables(tmp_path: Path) -> None:
    for s in L4S_SCENARIOS:
        written = write_toml(s, tmp_path).read_text()
        assert (COMMITTED / f"{s.name}.toml").read_text() == written, s.name


def test_scenarios_follow_the_example() -> None:
    for s in L4S_SCENARIOS:
        doc = tomllib.loads((COMMITTED / f"{s.name}.toml").read_text())
        q = next(lk for lk in doc["links"] if lk.get("name") == "bottleneck")[
            "queue_ab"
        ]
        assert q["kind"] == "fq_codel"
        # CeThreshold 1 ms in 3, 4, 7, 8, 9; UseL4s in 4, 8, 9
        assert ("ce_threshold" in q) == (s.num in (3, 4, 7, 8, 9))
        assert q.get("use_l4s", False) == (s.num in (4, 8, 9))
        assert doc["tcp"]["ecn"] == (s.num not in (1, 5))
        kinds = [f["cc"]["kind"] for f in doc["flows"]]
        assert kinds == {
            1: ["bic"], 2: ["bic"], 3: ["dctcp"], 4: ["dctcp"],
            5: ["bic", "bic"], 6: ["bic", "bic"], 7: ["dctcp", "dctcp"],
            8: ["dctcp", "dctcp"], 9: ["bic", "dctcp"],
        }[s.num]  # fmt: skip
        for f in doc["flows"]:
            if f["cc"]["kind"] == "dctcp":
                assert f["cc"]["ect1"] == s.use_l4s


def test_summarize_windows_and_means() -> None:
    s = BY_NUM[9]
    nb = round(s.duration_s / 0.1) + 1
    bins: dict[str, list[list[float]]] = {
        "rx_bytes": [[1250.0] * nb, [625.0] * nb],  # 0.1 and 0.05 Mbit/s
        "soj_s": [[0.004] * nb, [0.001] * nb],
        "dequeued": [[2.0] * nb, [1.0] * nb],
        "marks": [[0.0] * nb, [3.0] * nb],
        "drops": [[1.0] * nb, [0.0] * nb],
    }
    rows = summarize(s, bins)
    # window "one" (3-11 s) has only n0 (n1 starts at 11 s); "two" 16-26 s both
    assert [(r["window"], r["flow"]) for r in rows] == [
        ("one", "n0"),
        ("two", "n0"),
        ("two", "n1"),
    ]
    n0, n1 = rows[1], rows[2]
    assert n0["goodput_mbps"] == pytest.approx(0.1)
    assert n1["goodput_mbps"] == pytest.approx(0.05)
    assert n0["sojourn_ms"] == pytest.approx(2.0)
    assert n1["sojourn_ms"] == pytest.approx(1.0)
    assert n1["marks_per_100ms"] == pytest.approx(3.0)
    assert n0["drops_per_100ms"] == pytest.approx(1.0)


def test_ns3_cache_covers_every_window() -> None:
    with (HERE / "ns3_l4s_results.csv").open() as fh:
        rows = [r for r in csv.DictReader(fh) if r["device"] == "kit"]
    for s in L4S_SCENARIOS:
        want = {
            (w, src)
            for w, _a, b in s.windows()
            for _cc, src, start in s.flows()
            if start < b
        }
        got = {(r["window"], r["flow"]) for r in rows if int(r["scenario"]) == s.num}
        assert got == want, s.num
