"""`run()` and its `Result`: one run's tables as pandas DataFrames."""

from __future__ import annotations

import io
import json
import os
import sys
import warnings as _warnings
from functools import cached_property
from typing import Any

import pandas as pd

from . import _native
from ._errors import ScenarioError, ScenarioWarning
from ._scenario import PathLike, Scenario, as_scenario


def run(
    scenario: Scenario | PathLike,
    seed: int | None = None,
    out: PathLike | None = None,
    threads: int = 1,
    strict: bool = False,
) -> Result:
    """Run a scenario (a :class:`Scenario` or a path to a TOML file).

    ``seed`` defaults to the scenario's ``seed``. The simulation runs without
    the GIL, so threads can run several at once. With ``out``, the run's
    files are also written there as ``aqmlab run --out DIR`` writes them,
    pcap traces (``output.pcap``) included (see :meth:`Result.write`).
    ``threads`` > 1 runs one simulation over several worker threads, as
    ``aqmlab run --threads N`` does: the results are byte-identical to one
    thread (``summary["parallel"]`` records the partition, or why the run
    stayed sequential). Raises :class:`aqmlab.ScenarioError` for a bad
    scenario.

    A valid scenario that does not do what its names say (``cc = "prague"``
    without AccECN, ...) issues one :class:`aqmlab.ScenarioWarning` per cause
    and key, listed again in :attr:`Result.warnings`; with ``strict=True`` it
    raises :class:`aqmlab.ScenarioError` before running, as ``aqmlab run
    --strict`` exits 2.
    """
    sc = as_scenario(scenario)
    if seed is not None and (not isinstance(seed, int) or seed < 0):
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 256:
        raise ValueError(f"threads must be an integer from 1 to 256, got {threads!r}")
    if not isinstance(strict, bool):
        raise ValueError(f"strict must be True or False, got {strict!r}")
    if strict:
        _refuse_warnings(sc)
    shown = seed if seed is not None else sc.seed
    argv = list(sys.orig_argv)
    extra = f", threads={threads}" if threads != 1 else ""
    if out is None:
        call = f"aqmlab.run({sc._call()}, seed={shown}{extra})"
        res = Result(sc._native.run(seed, argv, call, threads), sc)
    else:
        call = f"aqmlab.run({sc._call()}, seed={shown}, out={os.fspath(out)!r}{extra})"
        res = Result(sc._native.run_into(os.fspath(out), seed, argv, call, threads), sc)
    for cause, key, reason in res._native.warnings():
        _warnings.warn(ScenarioWarning(cause, key, reason), stacklevel=2)
    return res


def _refuse_warnings(sc: Scenario) -> None:
    """``strict=True``: a scenario with warnings is a :class:`ScenarioError`
    naming the first one's key and every one's cause and message."""
    found = sc._native.warnings()
    if not found:
        return
    lines = "; ".join(f"[{c}] {k}: {m}" for c, k, m in found)
    n = len(found)
    msg = f"{sc.file}: strict: {n} warning{'s' if n > 1 else ''}: {lines}"
    raise ScenarioError(msg, found[0][1], sc.file, lines)


_QUEUE_COLUMNS = (
    "link",
    "kind",
    "arrivals",
    "enqueued",
    "dequeued",
    "dropped",
    "dropped_early",
    "dropped_forced",
    "dropped_overflow",
    "dropped_aqm",
    "dropped_link_down",
    "marked",
    "mean_len_pkts",
    "mean_len_bytes",
    "mean_delay_s",
    "p50_delay_s",
    "p99_delay_s",
    "max_delay_s",
)
"""The columns of ``links.csv`` that describe a link's queue (``summary.json``'s
former ``queues[]`` records)."""


try:
    import pyarrow as pa

    # the Arrow PyCapsule interface's reader (pyarrow 15 and later)
    _HAVE_PYARROW = hasattr(pa.RecordBatchReader, "from_stream")
except ImportError:
    _HAVE_PYARROW = False


class _ArrowStream:
    """One table's Arrow C stream (a PyCapsule named ``arrow_array_stream``),
    handed out once through the Arrow PyCapsule interface."""

    def __init__(self, capsule: object) -> None:
        self._capsule: object | None = capsule

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        capsule, self._capsule = self._capsule, None
        if capsule is None:
            raise RuntimeError("this Arrow stream has been read already")
        return capsule


def _read_csv(data: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data))


class Result:
    """The results of one run.

    The tables are those ``aqmlab run`` writes, with the same columns, so
    column names carry units as in the CSVs (``goodput_bps``, ``time_s``,
    ``delay_s``). With pyarrow installed (``pip install aqmlab[parquet]``)
    each is built from the run's typed columns, received as Arrow arrays
    (:meth:`arrow`; a column's dtype is that of its values in Rust, no text
    is parsed); without, the table's CSV text is read with
    :func:`pandas.read_csv`, whatever ``output.format`` the run's files have:

    - :attr:`flows` (``flows.csv``), :attr:`links` (``links.csv``),
      :attr:`queue_series` (``queues.csv``), :attr:`cwnd` (``cwnd.csv``),
      :attr:`throughput` (``throughput.csv``), :attr:`requests` (``requests.csv``),
      :attr:`event_log` (``events.csv`` or ``events.parquet``);
    - :attr:`queues`: the queue columns of ``links.csv`` (one row per link
      direction), :attr:`queue_classes` their per-class counters (``classes.csv``);
    - :attr:`summary`: ``summary.json`` as a dict.

    A table the run did not record (``cwnd`` without ``trace_cwnd``) is an
    empty DataFrame.
    """

    def __init__(self, native: _native.RunOutput, scenario: Scenario) -> None:
        self._native = native
        self.scenario = scenario
        """The scenario that was run."""

    @property
    def seed(self) -> int:
        return self._native.seed

    @property
    def events(self) -> int:
        """Events the simulator processed."""
        return self._native.events

    @cached_property
    def files(self) -> dict[str, bytes]:
        """Every file ``aqmlab run`` writes for this run, name -> content.

        pcap traces (``output.pcap``) are recorded while a run goes: ask for
        them with ``aqmlab.run(..., out=DIR)`` or ``aqmlab.sweep(..., out=DIR)``.
        """
        return self._native.files()

    def arrow(self, table: str) -> pa.Table:
        """Result table ``table`` (``"flows"``, ``"links"``, ``"queues"``, ...:
        the names of the run's CSV or Parquet files) as a :class:`pyarrow.Table`
        of typed columns, received through the Arrow C stream interface: no
        file, no text, the buffers Rust built. ``pl.from_arrow`` (polars) and
        DuckDB read it as it is. ``KeyError`` when the run has no such table;
        needs pyarrow 15 or later (``pip install aqmlab[parquet]``).
        """
        if not _HAVE_PYARROW:
            raise ImportError(
                "Result.arrow needs pyarrow 15 or later: pip install 'aqmlab[parquet]'"
            )
        capsule = self._native.table_arrow(table)
        if capsule is None:
            raise KeyError(f"this run has no table {table!r}; it has {self._native.tables()}")
        return pa.RecordBatchReader.from_stream(_ArrowStream(capsule)).read_all()

    def _table(self, name: str) -> pd.DataFrame:
        table = name.removesuffix(".csv")
        if _HAVE_PYARROW:
            # typed columns straight from the run, no text in between
            capsule = self._native.table_arrow(table)
            if capsule is None:
                return pd.DataFrame()
            return pa.RecordBatchReader.from_stream(_ArrowStream(capsule)).read_all().to_pandas()
        # without pyarrow: the table's CSV text, whatever `output.format` the
        # run wrote its files in
        data = self._native.table_csv(table)
        return _read_csv(data) if data is not None else pd.DataFrame()

    @property
    def warnings(self) -> list[ScenarioWarning]:
        """What the scenario asks for that the run did not do as its names say
        (``summary.json``'s ``warnings``), one :class:`aqmlab.ScenarioWarning`
        per cause and key; empty when there is none."""
        return [ScenarioWarning(c, k, m) for c, k, m in self._native.warnings()]

    @cached_property
    def summary(self) -> dict[str, Any]:
        """``summary.json`` as a dict."""
        out: dict[str, Any] = json.loads(self._native.summary_json())
        return out

    @cached_property
    def flows(self) -> pd.DataFrame:
        """One row per flow (``flows.csv``)."""
        return self._table("flows.csv")

    @cached_property
    def links(self) -> pd.DataFrame:
        """One row per link direction with its queue's counters (``links.csv``)."""
        return self._table("links.csv")

    @cached_property
    def queue_series(self) -> pd.DataFrame:
        """Time series of the monitored queues (``queues.csv``)."""
        return self._table("queues.csv")

    @cached_property
    def cwnd(self) -> pd.DataFrame:
        """cwnd traces of flows with ``trace_cwnd = true`` (``cwnd.csv``)."""
        return self._table("cwnd.csv")

    @cached_property
    def throughput(self) -> pd.DataFrame:
        """Per-flow throughput series with ``output.throughput_bin`` (``throughput.csv``)."""
        return self._table("throughput.csv")

    @cached_property
    def requests(self) -> pd.DataFrame:
        """One row per workload connection (``requests.csv``)."""
        return self._table("requests.csv")

    @cached_property
    def event_log(self) -> pd.DataFrame:
        """The per-packet event log of ``output.log`` (``events.csv``, or
        ``events.parquet`` with ``output.log_format = "parquet"``): one row
        per enqueue, dequeue, drop and mark. Read from Parquet with pyarrow,
        else from the log's CSV text, whatever its format.
        """
        if _HAVE_PYARROW:
            data = self.files.get("events.parquet")
            if data is not None:
                return pd.read_parquet(io.BytesIO(data))
        csv = self._native.table_csv("events")
        # An empty `reason` (enqueue, dequeue) stays "" as in Parquet.
        return pd.read_csv(io.BytesIO(csv), keep_default_na=False) if csv else pd.DataFrame()

    @cached_property
    def queues(self) -> pd.DataFrame:
        """Per-queue records, one row per link direction: the queue columns of ``links.csv``."""
        links = self.links
        return links[[c for c in _QUEUE_COLUMNS if c in links.columns]]

    @cached_property
    def queue_classes(self) -> pd.DataFrame:
        """Per-class counters of classifier links (``classes.csv``), with ``link``."""
        return self._table("classes.csv")

    def write(self, out: PathLike) -> None:
        """Write the files of ``aqmlab run --out DIR`` into ``out``.

        With them ``scenario.toml`` (the effective scenario, the run's seed
        included) and ``provenance.json`` (aqmlab's version and git commit,
        the scenario file, the changes made with :meth:`Scenario.set` as
        ``path=value``, the seed, the scenario's SHA-256, the interpreter's
        ``command_line`` and the Python ``call``). Files land complete or not
        at all (temporary names renamed into place).
        """
        self._native.write(os.fspath(out))

    def to_flent(self, path: PathLike) -> None:
        """Write the run as a flent data file (``aqmlab run --flent``'s
        ``run.flent.gz``), which ``flent -i PATH -p upload`` plots. Needs
        ``output.throughput_bin`` in the scenario (``ValueError`` otherwise).
        """
        data = self._native.flent()
        tmp = f"{os.fspath(path)}.tmp-{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)

    def __repr__(self) -> str:
        return f"Result(scenario={self.scenario.name!r}, seed={self.seed}, events={self.events})"
