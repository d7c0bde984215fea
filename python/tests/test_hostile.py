"""Hostile inputs raise ScenarioError and never crash the interpreter (issue 35).

A self-referencing dict or list, or one nested about 7 000 deep, was a
segmentation fault in ``Scenario.from_dict``; ``Scenario.from_file`` read
``/dev/zero`` without bound where the CLI refuses at once.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

import aqmlab

MINI: dict[str, Any] = {
    "name": "mini",
    "duration": "1s",
    "nodes": {"hosts": ["a", "b"], "routers": ["r"]},
    "links": [
        {"a": "a", "b": "r", "rate": "10Mbps", "delay": "1ms"},
        {"a": "r", "b": "b", "rate": "10Mbps", "delay": "1ms"},
    ],
    "flows": [{"group": "x", "src": "a", "dst": "b"}],
}


def test_a_dict_that_contains_itself_is_an_error() -> None:
    d: dict[str, Any] = dict(MINI)
    d["x"] = d
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.Scenario.from_dict(d)
    # from_dict converts a shallow copy of d, so the loop is met one level
    # down: copy["x"] is d, whose "x" is d again
    assert e.value.path == "x.x"
    assert "cycle" in str(e.value)


def test_a_list_that_contains_itself_is_an_error() -> None:
    d: dict[str, Any] = dict(MINI)
    loop: list[Any] = [1]
    loop.append(loop)
    d["flows"] = [{"group": "x", "src": "a", "dst": "b", "tcp": {"k": loop}}]
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.Scenario.from_dict(d)
    assert e.value.path == "flows[0].tcp.k[1]"
    assert "cycle" in str(e.value)


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    deep: Any = 1
    for _ in range(7000):
        deep = {"x": deep}
    d = dict(MINI)
    d["tcp"] = deep
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.Scenario.from_dict(d)
    assert "nested deeper than" in str(e.value)
    assert e.value.path is not None and e.value.path.startswith("tcp.x.x")
    deep_list: Any = 1
    for _ in range(7000):
        deep_list = [deep_list]
    with pytest.raises(aqmlab.ScenarioError):
        aqmlab.Scenario.from_dict(dict(MINI, flows=deep_list))
    # the same value through `set`
    sc = aqmlab.Scenario.from_dict(MINI)
    with pytest.raises(aqmlab.ScenarioError):
        sc.set("tcp", deep)


def test_shared_but_acyclic_values_are_fine() -> None:
    # the same dict twice is a DAG, not a cycle
    link = {"rate": "10Mbps", "delay": "1ms"}
    d = dict(MINI)
    d["links"] = [dict(link, a="a", b="r"), dict(link, a="r", b="b")]
    tcp = {"mss": 1000}
    d["flows"] = [
        {"group": "x", "src": "a", "dst": "b", "tcp": tcp},
        {"group": "y", "src": "a", "dst": "b", "tcp": tcp},
    ]
    assert aqmlab.Scenario.from_dict(d).to_dict()["flows"][1]["tcp"]["mss"] == 1000


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_from_file_refuses_a_device_at_once() -> None:
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.Scenario.from_file("/dev/zero")
    assert "not a regular file" in str(e.value)


@pytest.mark.skipif(sys.platform == "win32", reason="no FIFOs")
def test_from_file_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "s.toml"
    os.mkfifo(fifo)
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.Scenario.from_file(fifo)
    assert "FIFO" in str(e.value)


def test_from_file_has_the_cli_size_limit(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * (5 << 20))
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.Scenario.from_file(big)
    assert "at most 4194304 bytes" in str(e.value)


def test_a_typo_gets_a_suggestion() -> None:
    d = dict(MINI)
    d["links"] = [
        MINI["links"][0],
        dict(MINI["links"][1], queue={"kind": "red", "limit": 100, "max_pp": 0.1}),
    ]
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.Scenario.from_dict(d)
    assert e.value.path == "links[1].queue.max_pp"
    assert "did you mean `max_p`?" in str(e.value)


def test_long_names_are_refused() -> None:
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.Scenario.from_dict(dict(MINI, name="n" * 100_000))
    assert e.value.path == "name"
