"""`sweep()`: the cartesian product of parameter values × seeds, one row per run.

Runs go to a Dask ``Client`` or any ``concurrent.futures``-style executor
(anything with ``submit(fn, arg)`` returning a future with ``result()``);
without one, to local processes. A run is shipped as its effective scenario
(TOML text), its seed and the text of every file the scenario names (traces,
CDF files; by absolute path, with its SHA-256, which the worker checks), so a
worker on another machine needs only the ``aqmlab`` package, and the result
depends only on what is shipped: the same sweep gives the same table
wherever it runs (only ``wall_s`` differs).
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import numbers
import os
import signal
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from typing import Any

import pandas as pd

from . import _native
from ._errors import ScenarioError
from ._scenario import PathLike, Scenario, as_scenario

Files = dict[str, tuple[str, str]]
"""The files a scenario names: absolute path -> (SHA-256, text)."""

Task = tuple[str, str, int, str | None, str, str, Files]
"""(scenario as TOML text, its name for errors, seed, run folder or None,
point label, provenance.json text, the files it names)."""


def _files(sc: Scenario) -> Files:
    """The files ``sc`` read, to send with its runs."""
    return {path: (sha, text) for _, path, sha, text in sc._native.input_files()}


def _label(v: Any) -> str:
    """A value's label, as ``aqmlab sweep`` names it: a table by its ``kind``."""
    if isinstance(v, Mapping) and isinstance(v.get("kind"), str):
        return str(v["kind"])
    return str(v)


def _cell(v: Any, label: str) -> Any:
    """The value an axis column holds: scalars as they are, tables by label."""
    if isinstance(v, (bool, int, float, str)):
        return v
    return label


def _value(x: str) -> int | float | str | None:
    """A CSV cell as Rust wrote it: empty is None, then int, float, text."""
    if x == "":
        return None
    try:
        return int(x)
    except ValueError:
        pass
    try:
        return float(x)
    except ValueError:
        return x


def _rows(data: bytes, text: set[str]) -> list[dict[str, Any]]:
    """A table's rows as dicts: the columns in ``text`` as strings, the others parsed."""
    reader = csv.DictReader(io.StringIO(data.decode()))
    return [{k: v if k in text else _value(v) for k, v in r.items()} for r in reader]


def _run_task(task: Task) -> dict[str, Any]:
    """Run one sweep point (in a worker) and reduce it to what a row needs.

    With a run folder: skip the run when the folder holds it complete (same
    scenario hash and seed), else run it into the folder; either way the row
    comes from the files on disk (``aqmlab._native.run_job``).
    """
    text, name, seed, folder, label, prov, files = task
    if folder is None:
        out = _native.NativeScenario.from_toml(text, name, files).run(seed)
        s = json.loads(out.summary_json())
        monitored = out.monitored_links()
        files = out.files()
        flows_csv, links_csv = files["flows.csv"], files["links.csv"]
        ran = True
    else:
        summary, monitored, ran = _native.run_job(text, name, seed, folder, label, prov, files)
        s = json.loads(summary)
        with open(os.path.join(folder, "flows.csv"), "rb") as fh:
            flows_csv = fh.read()
        with open(os.path.join(folder, "links.csv"), "rb") as fh:
            links_csv = fh.read()
    # Per-flow and per-link records live in the tables, not in summary.json.
    flows = _rows(flows_csv, {"label", "group", "src", "dst", "cc"})
    links = _rows(links_csv, {"label", "link", "from", "to", "kind"})
    # goodput of a group and of all flows: bytes delivered over the one
    # measured interval, as ``aqmlab sweep`` computes it
    interval = s["sim_seconds"] - (s.get("warmup_s") or 0.0)
    scale = 8.0 / interval if interval > 0 else 0.0
    groups: dict[str, float] = {}
    for f in flows:
        groups[f["group"]] = groups.get(f["group"], 0.0) + f["bytes_acked"] * scale
    tcp = [f["goodput_bps"] for f in flows if f["cc"] != "cbr"]
    cbr = [f["mean_owd_s"] for f in flows if f["cc"] == "cbr" and f["mean_owd_s"] is not None]
    return {
        "ran": ran,
        "monitored": monitored,
        # links.csv holds each link's and its queue's counters in one row.
        "queues": links,
        "links": links,
        "goodput_bps": sum(f["bytes_acked"] for f in flows) * scale,
        "groups": groups,
        "jain_tcp": _jain(tcp),
        "cbr_owd_s": sum(cbr) / len(cbr) if cbr else math.nan,
        "events": s["events"],
        "wall_s": s["wall_seconds"],
    }


def _jain(xs: Sequence[float]) -> float:
    """Jain's index (Σx)²/(n·Σx²), 1 for an empty set or all zeros: the native one."""
    return _native.jain(list(xs))


def _ignore_sigint() -> None:
    """Worker initializer: Ctrl-C is the parent's to handle (no worker tracebacks)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class _Bar:
    """A tqdm progress bar over runs, or nothing when disabled or tqdm is missing."""

    def __init__(self, total: int, enabled: bool) -> None:
        self._bar: Any = None
        if enabled and total > 1:
            try:
                # A notebook widget where Jupyter's widgets are installed (the
                # [notebook] extra), else text lines (tqdm.auto would warn).
                import ipywidgets  # noqa: F401
                from tqdm.auto import tqdm
            except ImportError:
                from tqdm import tqdm
            self._bar = tqdm(total=total, desc="aqmlab.sweep", unit="run")

    def update(self) -> None:
        if self._bar is not None:
            self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _interrupted(futures: list[Any], total: int, out: PathLike | None) -> KeyboardInterrupt:
    """Cancel the runs not started; the one KeyboardInterrupt that says what is kept."""
    cancelled = sum(1 for f in futures if f.cancel())
    done = sum(1 for f in futures if f.done() and not f.cancelled())
    kept = (
        f"; completed runs are kept in {os.fspath(out)} and the same call resumes"
        if out is not None
        else "; pass out=DIR to keep completed runs"
    )
    return KeyboardInterrupt(
        f"aqmlab.sweep interrupted: {done} of {total} runs complete, "
        f"{cancelled} not started cancelled{kept}"
    )


def _execute(
    tasks: list[Task],
    client: Any,
    jobs: int | None,
    progress: bool = True,
    out: PathLike | None = None,
) -> list[dict[str, Any]]:
    fn: Callable[[Task], dict[str, Any]] = _run_task
    if client is not None and not callable(getattr(client, "submit", None)):
        raise TypeError(
            "client must be a dask.distributed.Client or a concurrent.futures "
            f"executor (with submit()), got {type(client).__name__}"
        )
    bar = _Bar(len(tasks), progress)
    try:
        if client is None:
            n = min(len(tasks), jobs or os.cpu_count() or 1)
            if n <= 1:
                results = []
                for t in tasks:
                    try:
                        results.append(fn(t))
                        bar.update()
                    except KeyboardInterrupt:
                        done = len(results)
                        raise KeyboardInterrupt(
                            f"aqmlab.sweep interrupted: {done} of {len(tasks)} runs complete"
                        ) from None
                return results
            ex = ProcessPoolExecutor(max_workers=n, initializer=_ignore_sigint)
            futures: list[Any] = []
            try:
                futures = [ex.submit(fn, t) for t in tasks]
                for _ in as_completed(futures):
                    bar.update()
                return [f.result() for f in futures]
            except KeyboardInterrupt:
                err = _interrupted(futures, len(tasks), out)
                # Runs in progress finish in their workers (and are kept with out=).
                ex.shutdown(wait=False, cancel_futures=True)
                raise err from None
            finally:
                ex.shutdown(wait=False, cancel_futures=True)
        futures = [client.submit(fn, t) for t in tasks]
        try:
            if all(isinstance(f, Future) for f in futures):
                for _ in as_completed(futures):
                    bar.update()
            results = []
            for f in futures:
                results.append(f.result())
                if not isinstance(f, Future):
                    bar.update()
            return results
        except KeyboardInterrupt:
            raise _interrupted(futures, len(tasks), out) from None
    finally:
        bar.close()


def _axes(sc: Scenario, vary: Mapping[str, Any] | None) -> list[tuple[str, list[str], list[Any]]]:
    if vary is None:
        spec = sc._native.sweep_spec()
        if spec is None or not spec[2]:
            raise ScenarioError(
                f"{sc.file}: `sweep.vary`: give vary={{'key.path': [values]}} "
                "or a [sweep] table with [[sweep.vary]] axes",
                "sweep.vary",
                sc.file,
                "no axes to sweep",
            )
        return [(k, list(labels), list(values)) for k, labels, values in spec[2]]
    axes = []
    for key, vals in vary.items():
        if isinstance(vals, Mapping):
            labels = [str(x) for x in vals.keys()]
            values = list(vals.values())
        elif isinstance(vals, (str, bytes)) or not isinstance(vals, Iterable):
            raise ScenarioError(
                f"{sc.file}: `{key}`: vary needs a list of values or a dict label -> value, "
                f"got {vals!r}",
                key,
                sc.file,
                "vary needs a list of values or a dict label -> value",
            )
        else:
            values = list(vals)
            labels = [_label(v) for v in values]
        if not values:
            raise ScenarioError(
                f"{sc.file}: `{key}`: give at least one value", key, sc.file, "no values"
            )
        if len(set(labels)) != len(labels):
            raise ScenarioError(
                f"{sc.file}: `{key}`: two values have the same label; pass a dict label -> value",
                key,
                sc.file,
                "duplicate labels",
            )
        axes.append((key, labels, values))
    return axes


MAX_SEEDS = 100_000
"""Most seeds one sweep takes (a count, or a list's length): each is a run per
combination, shipped as a task held in memory until it is done."""

MAX_SEED = 2**63 - 1
"""The largest seed: a TOML integer, as a run's `scenario.toml` records it."""


def _shown(x: Any) -> str:
    """``repr(x)``, cut to 60 characters (a seed list can be long)."""
    r = repr(x)
    return r if len(r) <= 60 else r[:57] + "..."


def _bad_seeds(sc: Scenario, seeds: Any, why: str) -> ScenarioError:
    allowed = (
        f"give a count from 1 to {MAX_SEEDS} or a list of 1 to {MAX_SEEDS} "
        f"integers from 0 to 2**63 - 1"
    )
    return ScenarioError(
        f"{sc.file}: `seeds`: {_shown(seeds)} {why}; {allowed}",
        "seeds",
        sc.file,
        f"{why}; {allowed}",
    )


def _seeds(sc: Scenario, seeds: int | Iterable[int] | None) -> list[int]:
    if seeds is None:
        spec = sc._native.sweep_spec()
        seeds = spec[0] if spec is not None else 1
    if isinstance(seeds, bool):
        raise _bad_seeds(sc, seeds, "is not a number")
    if isinstance(seeds, numbers.Integral):
        seeds = int(seeds)
        if seeds < 1:
            raise _bad_seeds(sc, seeds, "is below 1")
        if seeds > MAX_SEEDS:
            raise _bad_seeds(sc, seeds, f"is above {MAX_SEEDS}")
        return list(range(1, seeds + 1))
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        raise _bad_seeds(sc, seeds, "is neither a count nor a list of seeds")
    out: list[int] = []
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, numbers.Integral):
            raise _bad_seeds(sc, s, "is not an integer seed")
        if not 0 <= s <= MAX_SEED:
            raise _bad_seeds(sc, s, "is out of range")
        out.append(int(s))
        if len(out) > MAX_SEEDS:
            raise _bad_seeds(sc, seeds, f"holds more than {MAX_SEEDS} seeds")
    if not out:
        raise _bad_seeds(sc, seeds, "is empty")
    return out


MAX_JOBS = 1024
"""Most local worker processes (``aqmlab sweep --jobs``'s limit)."""


def _jobs(sc: Scenario, jobs: Any) -> int | None:
    """``jobs`` checked: None (all cores) or a whole number of processes from 1 to 1024."""
    if jobs is None:
        return None
    if (
        isinstance(jobs, bool)
        or not isinstance(jobs, numbers.Integral)
        or not 1 <= jobs <= MAX_JOBS
    ):
        why = (
            f"must be a whole number of worker processes from 1 to {MAX_JOBS}, "
            "or None for all cores"
        )
        raise ScenarioError(f"{sc.file}: `jobs`: {_shown(jobs)} {why}", "jobs", sc.file, why)
    return int(jobs)


def _check_stale(out: str, run_dirs: list[str], force: bool) -> None:
    """Refuse (or, with ``force``, delete) run folders of another sweep in ``out``."""
    stale = _native.stale_runs(out, run_dirs)
    if not stale:
        return
    shown = ", ".join(stale[:5]) + (", …" if len(stale) > 5 else "")
    if not force:
        raise ValueError(
            f"out={out!r} holds {len(stale)} run folder(s) that are not part of this sweep "
            f"({shown}); they would be mixed with its results: use another out, remove them, "
            "or pass force=True to delete them"
        )
    _native.remove_stale_runs(out, stale)
    warnings.warn(
        f"sweep: force=True: deleted {len(stale)} run folder(s) not part of this sweep: {shown}",
        stacklevel=3,
    )


def sweep(
    scenario: Scenario | PathLike,
    vary: Mapping[str, Any] | None = None,
    seeds: int | Iterable[int] | None = None,
    client: Any = None,
    *,
    link: str | None = None,
    jobs: int | None = None,
    out: PathLike | None = None,
    force: bool = False,
    progress: bool = True,
    format: str | None = None,
) -> pd.DataFrame:
    """Run every combination of ``vary``'s values with every seed; one row per run.

    - ``vary``: ``{"key.path": [values]}`` or ``{"key.path": {label: value}}``
      (key paths as in :meth:`Scenario.set`); default: the scenario's
      ``[sweep]`` axes.
    - ``seeds``: a count N (seeds 1..N, as ``aqmlab sweep --seeds N``) or a
      list of seeds; default: the scenario's ``sweep.seeds``, else 1.
    - ``client``: a ``dask.distributed.Client`` or any ``concurrent.futures``
      executor; default: a local process pool of ``jobs`` processes (all cores).
    - ``link``: the link direction (``"r1->r2"``) whose queue the row reports;
      default ``sweep.link``, else the monitored queue that enqueued most
      packets in the first run.

    Columns: one per axis (the value, or its label for a table value such as a
    queue: its ``kind``), ``seed``, ``link``, ``kind`` (queue discipline),
    the queue's ``arrivals``, ``enqueued``, ``dropped``, ``marked``,
    ``drop_rate`` and ``mark_rate`` (per arrival), ``mean_len_pkts``,
    ``mean_delay_s``, ``p99_delay_s``, the link's ``utilization``,
    ``goodput_bps`` (all flows), ``goodput_bps_<group>`` per flow group,
    ``jain_tcp`` (Jain's index over the TCP flows), ``cbr_owd_s`` (CBR flows'
    mean one-way delay), ``events`` and ``wall_s``.

    With ``out``, every run is written to ``out/<label>/seed-<n>/`` as
    ``aqmlab sweep`` writes it (the files of ``aqmlab run``, pcap traces,
    ``scenario.toml``, ``provenance.json``), renamed into place as soon as it
    finishes, and the table gains a ``run_dir`` column. Calling the same
    sweep again (after an interruption, or with more seeds) skips the runs
    whose folder holds a complete run of the same effective scenario and
    seed and runs the rest; the rows come from the files on disk, so the
    table equals an uninterrupted sweep's (but ``wall_s`` of the runs computed again). Run folders
    under ``out`` that are not part of this sweep raise :class:`ValueError`
    listing them, unless ``force=True``, which deletes them (with a warning).

    With ``out``, the runs' tables are also gathered into one Parquet
    dataset per table, ``out/parquet/<table>/``, which
    ``pandas.read_parquet(out / "parquet" / "flows")`` (polars, DuckDB) reads
    whole, as ``aqmlab sweep`` writes it, when ``format`` (default: the
    scenario's ``output.format``, ``"csv"`` unless it says otherwise) is
    ``"parquet"``; under ``"csv"`` there is none. The runs' own tables stay
    CSV. The parts of a dataset may differ in their columns (a DualPI2
    queue's ``queues`` has its L and C queues' columns): the dataset has
    every column of every part, null where a part has none.

    ``progress`` shows a progress bar over the runs (tqdm: in a notebook or
    on the terminal's stderr). Ctrl-C (or interrupting the kernel) cancels
    the runs not started and raises one :class:`KeyboardInterrupt` saying how
    many are complete; runs already going finish in their workers, and with
    ``out`` every completed run is kept, so the same call resumes.

    Every combination is validated before any run: a bad value raises
    :class:`aqmlab.ScenarioError` naming the key.
    """
    sc = as_scenario(scenario)
    jobs = _jobs(sc, jobs)
    seed_list = _seeds(sc, seeds)
    axes = _axes(sc, vary)
    if format is not None:
        # checked as the scenario's own `output.format` (ScenarioError naming
        # the key and the allowed values), before any run
        sc = sc.copy().set("output.format", format)
    # The dataset's format, as `aqmlab sweep` chooses it over the points
    # (whose values the scenario has validated).
    formats = {sc.get("output.format") or "csv"} | {
        v for key, _, values in axes if key == "output.format" for v in values
    }
    if format is not None:
        formats = {format}
    dataset = "parquet" if "parquet" in formats else "csv"
    if dataset == "parquet" and out is None:
        raise ValueError(
            'a Parquet dataset (format="parquet" or output.format = "parquet") '
            "is written into the sweep's folder: pass out=DIR"
        )
    if link is None:
        spec = sc._native.sweep_spec()
        link = spec[1] if spec is not None else None
    # One point per combination: (axis cells, scenario, TOML, name, label).
    points: list[tuple[dict[str, Any], Scenario, str, str, str]] = []
    for combo in itertools.product(*[range(len(values)) for _, _, values in axes]):
        chosen = [(key, labels[j], values[j]) for (key, labels, values), j in zip(axes, combo)]
        # a sweep's runs write CSV tables, as `aqmlab sweep`'s do
        p = sc.copy().set_many({**{key: value for key, _, value in chosen}, "output.format": "csv"})
        cells = {key: _cell(value, label) for key, label, value in chosen}
        label = "_".join(label for _, label, _ in chosen)
        points.append((cells, p, p.to_toml(), f"{sc.file} [sweep point {label}]", label))
    if link is not None:
        directions = [
            f"{x}->{y}"
            for lk in sc.to_dict().get("links", [])
            for x, y in ((lk.get("a"), lk.get("b")), (lk.get("b"), lk.get("a")))
        ]
        if link not in directions:
            raise ScenarioError(
                f"{sc.file}: `sweep.link`: no link direction `{link}`; "
                f"allowed: {', '.join(directions)}",
                "sweep.link",
                sc.file,
                f"no link direction `{link}`",
            )
    tasks: list[Task] = []
    run_dirs: list[str] = []
    call = (
        f"aqmlab.sweep({sc._call()}, vary={vary!r}, seeds={seeds!r}, link={link!r}, "
        f"out={os.fspath(out) if out is not None else None!r})"
    )
    for _, p, text, name, label in points:
        files = _files(p)
        for s in seed_list:
            rel = f"{label}/seed-{s}"
            run_dirs.append(rel)
            if out is None:
                tasks.append((text, name, s, None, label, "", files))
            else:
                _, prov = p._native.provenance(s, list(sys.orig_argv), call)
                folder = os.path.abspath(os.path.join(os.fspath(out), rel))
                tasks.append((text, name, s, folder, label, prov, files))
    if out is not None:
        _check_stale(os.fspath(out), run_dirs, force)
    kept = (
        f"completed runs are kept in {os.fspath(out)} and the same call resumes"
        if out is not None
        else "pass out=DIR to keep completed runs"
    )
    try:
        results = _execute(tasks, client, jobs, progress, out)
    except KeyboardInterrupt as e:
        if str(e):
            raise
        # between the last run and the end of the work loop (the progress
        # bar's closing, the pool's shutdown)
        raise KeyboardInterrupt(f"aqmlab.sweep interrupted as its runs ended; {kept}") from None
    try:
        return _table(sc, results, points, seed_list, run_dirs, link, out, dataset)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(
            f"aqmlab.sweep interrupted after all {len(tasks)} runs were complete, "
            f"while gathering their table; {kept}"
        ) from None


def _table(
    sc: Scenario,
    results: list[dict[str, Any]],
    points: list[tuple[dict[str, Any], Scenario, str, str, str]],
    seed_list: list[int],
    run_dirs: list[str],
    link: str | None,
    out: PathLike | None,
    dataset: str,
) -> pd.DataFrame:
    """The sweep's table from its runs' results (and its dataset under ``out``)."""
    if out is not None:
        _native.write_dataset(os.fspath(out), run_dirs, dataset)
    first = results[0]
    if link is None:
        monitored = [q for q in first["queues"] if q["link"] in set(first["monitored"])]
        if not monitored:
            raise ScenarioError(
                f"{sc.file}: `sweep.link`: no monitored queue to report; pass link='a->b'",
                "sweep.link",
                sc.file,
                "no monitored queue",
            )
        link = max(monitored, key=lambda q: q["enqueued"])["link"]
    groups: list[str] = []
    for r in results:
        for g in r["groups"]:
            if g not in groups:
                groups.append(g)
    rows = []
    cells_per_run = [cells for cells, _, _, _, _ in points for _ in seed_list]
    for k, (cells, s, r) in enumerate(zip(cells_per_run, seed_list * len(points), results)):
        q = next(x for x in r["queues"] if x["link"] == link)
        lk = next(x for x in r["links"] if x["link"] == link)
        arrivals = q["arrivals"]
        row: dict[str, Any] = dict(cells)
        row["seed"] = s
        if out is not None:
            row["run_dir"] = run_dirs[k]
        row.update(
            link=link,
            kind=q["kind"],
            arrivals=arrivals,
            enqueued=q["enqueued"],
            dropped=q["dropped"],
            marked=q["marked"],
            drop_rate=q["dropped"] / arrivals if arrivals else math.nan,
            mark_rate=q["marked"] / arrivals if arrivals else math.nan,
            mean_len_pkts=q["mean_len_pkts"],
            mean_delay_s=q["mean_delay_s"],
            p99_delay_s=q["p99_delay_s"],
            utilization=lk["utilization"],
            goodput_bps=r["goodput_bps"],
        )
        for g in groups:
            row[f"goodput_bps_{g}"] = r["groups"].get(g, math.nan)
        row.update(
            jain_tcp=r["jain_tcp"],
            cbr_owd_s=r["cbr_owd_s"],
            events=r["events"],
            wall_s=r["wall_s"],
        )
        rows.append(row)
    return pd.DataFrame.from_records(rows)
