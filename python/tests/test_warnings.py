"""Warnings: a valid scenario that does not do what its names say runs with an
``aqmlab.ScenarioWarning`` per cause; ``strict=True`` refuses it."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import aqmlab

PRAGUE = """
name = "w"
duration = "200ms"
[nodes]
hosts = ["h1", "h2"]
routers = ["r1"]
[[links]]
a = "h1"
b = "r1"
rate = "10Mbps"
delay = "5ms"
[[links]]
a = "r1"
b = "h2"
rate = "10Mbps"
delay = "5ms"
queue = { kind = "step", k = 20 }
[[flows]]
group = "l4s"
src = "h1"
dst = "h2"
cc = "prague"
"""


def test_run_warns_once_per_cause_and_lists_them() -> None:
    sc = aqmlab.Scenario.from_toml(PRAGUE, "w.toml")
    assert [c for c, _, _ in sc.warnings()] == [
        "prague-without-accecn",
        "ecn-queue-without-ecn-flows",
    ]
    with pytest.warns(aqmlab.ScenarioWarning) as caught:
        res = aqmlab.run(sc)
    got = [w.message for w in caught if isinstance(w.message, aqmlab.ScenarioWarning)]
    assert [(w.cause, w.key) for w in got] == [
        ("prague-without-accecn", "flows[0].cc"),
        ("ecn-queue-without-ecn-flows", "links[1].queue"),
    ]
    assert [(w.cause, w.key, w.reason) for w in res.warnings] == [
        (w["cause"], w["key"], w["message"]) for w in res.summary["warnings"]
    ]
    assert "ecn_feedback" in str(got[0])


def test_strict_refuses_before_running(tmp_path: Path) -> None:
    sc = aqmlab.Scenario.from_toml(PRAGUE, "w.toml")
    out = tmp_path / "out"
    with pytest.raises(aqmlab.ScenarioError) as info:
        aqmlab.run(sc, out=out, strict=True)
    e = info.value
    assert e.path == "flows[0].cc"
    assert str(e).startswith("w.toml: strict: 2 warnings: [prague-without-accecn] flows[0].cc: ")
    assert not out.exists()
    with pytest.raises(ValueError, match="strict must be True or False"):
        aqmlab.run(sc, strict="yes")  # type: ignore[arg-type]


def test_a_scenario_that_does_what_it_says_is_quiet() -> None:
    fixed = PRAGUE.replace(
        'cc = "prague"', 'cc = "prague"\ntcp = { ecn = true, ecn_feedback = "accecn" }'
    )
    sc = aqmlab.Scenario.from_toml(fixed, "w.toml")
    with warnings.catch_warnings():
        warnings.simplefilter("error", aqmlab.ScenarioWarning)
        res = aqmlab.run(sc, strict=True)
    assert res.warnings == [] and res.summary["warnings"] == []
