"""Hypothesis fuzz of the Python API (issue 35, item 7).

Hostile values (any JSON-like value, NaN and infinities, integers past
2**64, odd Python types, non-string keys, nesting, long strings) are put at
any key path of a valid scenario, at known keys of every registered kind, or
given to ``Scenario.set``, ``Scenario.get`` and :func:`aqmlab.run`. Each call
must either succeed or raise :class:`aqmlab.ScenarioError` (``run``'s
``seed`` and ``threads`` raise ``ValueError``, as documented) — never
another exception, never a crash of the interpreter. A scenario that loads
is run for 5 simulated ms and its results must hold basic invariants.

The default run draws a fixed, derandomized 200 examples per test
(``AQMLAB_HYPOTHESIS_EXAMPLES`` raises it: ``AQMLAB_HYPOTHESIS_EXAMPLES=20000
pytest -m fuzz tests/test_fuzz_hypothesis.py``).
"""

from __future__ import annotations

import copy
import datetime
import decimal
import math
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aqmlab

pytestmark = pytest.mark.fuzz

EXAMPLES = int(os.environ.get("AQMLAB_HYPOTHESIS_EXAMPLES", "200"))
FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

BASE: dict[str, Any] = {
    "name": "fuzz",
    "duration": "20ms",
    "nodes": {"hosts": ["a", "b", "c"], "routers": ["r1", "r2"]},
    "links": [
        {"a": "a", "b": "r1", "rate": "100Mbps", "delay": "100us"},
        {"a": "c", "b": "r1", "rate": "100Mbps", "delay": "100us"},
        {
            "name": "bottleneck",
            "a": "r1",
            "b": "r2",
            "rate": "10Mbps",
            "delay": "1ms",
            "queue": {"kind": "red", "limit": 50, "min_th": 5, "max_th": 15},
        },
        {"a": "r2", "b": "b", "rate": "100Mbps", "delay": "100us"},
    ],
    "tcp": {"mss": 1000, "ecn": True},
    "flows": [
        {"group": "bulk", "src": "a", "dst": "b", "cc": "cubic"},
        {"group": "sized", "src": "c", "dst": "b", "size": "20KB", "cc": {"kind": "dctcp"}},
    ],
    "workloads": [
        {"kind": "http", "name": "mice", "client": "b", "server": "a", "connections": 3},
        {
            "kind": "cdf",
            "name": "arrivals",
            "senders": ["a", "c"],
            "receivers": ["b"],
            "flows": 3,
            "rate": 500.0,
            "sizes": "web-search",
        },
    ],
    "output": {"throughput_bin": "5ms", "warmup": "1ms"},
    "sweep": {"vary": [{"key": "links.bottleneck.queue", "values": [{"kind": "pie"}]}]},
}

KEYS = [
    "name",
    "duration",
    "seed",
    "nodes",
    "hosts",
    "links",
    "rate",
    "delay",
    "queue",
    "kind",
    "limit",
    "tcp",
    "mss",
    "fin",
    "flows",
    "cc",
    "size",
    "workloads",
    "senders",
    "receivers",
    "sizes",
    "output",
    "warmup",
    "pcap",
    "topology",
    "hops",
    "k",
    "lp",
    "sweep",
    "vary",
]


class Odd:
    """An object the converter has no rule for."""

    def __repr__(self) -> str:
        return "Odd()"


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([0, -1, 2**63, 2**64, 2**64 + 1, -(2**63) - 1, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.sampled_from(
        ["1e30s", "-1ms", "18446744073709551615ns", "5 parsecs", "10Mbps", "/dev/zero"]
    ),
    st.binary(max_size=20),
    st.sampled_from(
        [
            Odd(),
            datetime.date(2026, 11, 27),
            decimal.Decimal("1e400"),
            complex(1, 2),
            "x" * 100_000,
            "\x00",
            "\ud800",
        ]
    ),
)

values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.frozensets(st.integers(), max_size=3),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=10)), inner, max_size=4),
        st.dictionaries(st.integers(), inner, max_size=2),
    ),
    max_leaves=12,
)


def paths(v: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path (dict keys and list indices) into a JSON-like value."""
    out = [prefix]
    if isinstance(v, dict):
        for k, x in v.items():
            out += paths(x, (*prefix, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += paths(x, (*prefix, i))
    return out


BASE_PATHS = [p for p in paths(BASE) if p]


def put(d: Any, path: tuple[Any, ...], value: Any) -> None:
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value


def check_result(res: aqmlab.Result) -> None:
    """What every run must hold, whatever it was given."""
    flows = res.flows
    assert len(flows) == 0 or (flows["goodput_bps"] >= 0).all()
    for col in flows.select_dtypes("number").columns:
        assert flows[col].map(lambda x: math.isfinite(x) or math.isnan(x)).all(), col
    links = res.links
    if "utilization" in links:
        assert ((links["utilization"] >= 0) & (links["utilization"] <= 1 + 1e-9)).all()


def load_and_run(d: Any) -> None:
    try:
        sc = aqmlab.Scenario.from_dict(d)
    except aqmlab.ScenarioError as e:
        assert str(e).strip(), "empty message"
        return
    try:
        sc = sc.set("duration", "5ms")
        check_result(aqmlab.run(sc))
    except aqmlab.ScenarioError as e:
        # above a resource limit, or the duration cut below a warm-up
        assert str(e).strip(), "empty message"


def test_the_base_scenario_loads_and_runs() -> None:
    # otherwise every case below would be refused for the same reason
    res = aqmlab.run(aqmlab.Scenario.from_dict(BASE).set("duration", "5ms"))
    check_result(res)
    assert len(res.flows) >= 2
    assert res.summary["scenario"] == "fuzz"


@FUZZ
@given(st.sampled_from(BASE_PATHS), values)
def test_a_hostile_value_at_any_path_is_a_scenario_error(path: tuple[Any, ...], v: Any) -> None:
    d = copy.deepcopy(BASE)
    put(d, path, v)
    load_and_run(d)


@FUZZ
@given(
    st.sampled_from([p for p in BASE_PATHS if isinstance(p[-1], str)] + [()]),
    st.one_of(st.sampled_from(KEYS), st.text(max_size=12)),
    values,
)
def test_a_hostile_key_anywhere_is_a_scenario_error(
    path: tuple[Any, ...], key: str, v: Any
) -> None:
    d = copy.deepcopy(BASE)
    target: Any = d
    for k in path[:-1] if path else ():
        target = target[k]
    if path and isinstance(target[path[-1]], dict):
        target = target[path[-1]]
    if isinstance(target, dict):
        target[key] = v
    load_and_run(d)


@FUZZ
@given(values)
def test_a_hostile_top_level_value_is_a_scenario_error(v: Any) -> None:
    if not isinstance(v, dict):
        with pytest.raises(aqmlab.ScenarioError):
            aqmlab.Scenario.from_dict(v)
        return
    load_and_run(v)


@FUZZ
@given(
    st.one_of(
        st.sampled_from(
            [
                "tcp.fin",
                "links.bottleneck.queue.limit",
                "links.9.rate",
                "flows.bulk.cc",
                "workloads.arrivals.senders",
                "lp.r1",
                "topology.k",
                "output.pcap",
                "sweep.vary.0.values",
                "",
                ".",
                "a..b",
            ]
        ),
        st.text(max_size=30),
    ),
    values,
)
def test_set_and_get_with_hostile_paths_and_values(path: str, v: Any) -> None:
    sc = aqmlab.Scenario.from_dict(BASE)
    try:
        sc.get(path)
    except (aqmlab.ScenarioError, KeyError):
        pass
    try:
        s2 = sc.set(path, v)
    except aqmlab.ScenarioError as e:
        assert str(e).strip()
        return
    try:
        check_result(aqmlab.run(s2.set("duration", "5ms")))
    except aqmlab.ScenarioError as e:
        assert str(e).strip()


# key paths past the bound (32 parts, 500 characters): deep, long, or both
deep_paths = st.one_of(
    st.builds(
        lambda part, n: ".".join([part] * n),
        st.sampled_from(["a", "links", "0", "tcp", "x" * 40]),
        st.integers(min_value=1, max_value=20_000),
    ),
    st.builds(
        lambda head, n: head + "." + "y" * n,
        st.sampled_from(["tcp", "links.bottleneck", "output", "flows.bulk"]),
        st.integers(min_value=1, max_value=100_000),
    ),
)


@FUZZ
@given(deep_paths, values)
def test_long_and_deep_key_paths_are_refused_or_set(path: str, v: Any) -> None:
    sc = aqmlab.Scenario.from_dict(BASE)
    try:
        sc.set(path, v)
    except aqmlab.ScenarioError as e:
        msg = str(e)
        assert msg.strip() and "\n" not in msg
        # no echo of the path or of the document past 200 characters
        assert len(msg) < 1000, len(msg)
        parts = path.count(".") + 1
        if parts > 32 or len(path) > 500:
            assert "at most 32 parts and 500 characters" in msg, msg
    try:
        sc.get(path)
    except aqmlab.ScenarioError as e:
        assert "at most 32 parts" in str(e)


@FUZZ
@given(values, values)
def test_run_arguments_are_checked(seed: Any, threads: Any) -> None:
    sc = aqmlab.Scenario.from_dict(dict(BASE, duration="2ms"))
    try:
        res = aqmlab.run(sc, seed=seed, threads=threads)
    except ValueError:
        # ScenarioError is a ValueError too; `seed` and `threads` are
        # documented to raise ValueError when out of range
        return
    check_result(res)
