"""`reproduce()`: a paper's experiment, its tables as DataFrames (paper vs aqmlab)."""

from __future__ import annotations

import os

import pandas as pd

from . import _native
from ._scenario import PathLike

COLUMNS = ["row", "column", "unit", "paper", "aqmlab_mean", "aqmlab_sd", "n"]
PAPERS = ("red-gateway", "codel-highspeed-tcp", "markmax", "rio-ps", "maxnet-mice")


def reproduce(
    paper: str,
    seeds: int | None = None,
    duration: str | float | None = None,
    *,
    load: float | None = None,
    out: PathLike | None = None,
) -> dict[str, pd.DataFrame]:
    """Run a paper's experiment as ``aqmlab reproduce PAPER`` does.

    - ``paper``: ``"red-gateway"``, ``"codel-highspeed-tcp"``, ``"markmax"``,
      ``"rio-ps"`` or ``"maxnet-mice"``;
    - ``seeds``: seeds per configuration (default: the paper's number of runs);
    - ``duration``: run length instead of the paper's, as text (``"60s"``,
      ``"10min"``) or seconds (not for red-gateway, whose tables count
      events over the paper's 30 s runs);
    - ``load``: rio-ps's offered web load, a fraction of the bottleneck;
    - ``out``: also write the report, ``tables.csv`` and plots there (default:
      nothing is kept).

    Returns one DataFrame per table of the paper, in the paper's order, keyed
    by the table's name, with the columns of ``tables.csv``: ``row``,
    ``column``, ``unit``, ``paper`` (the published number, NaN where the
    paper gives none), ``aqmlab_mean``, ``aqmlab_sd`` (NaN where the value is
    pooled over seeds) and ``n`` (seeds). ``pd.concat(tables, names=["table"])``
    gives the long table. Runs on all cores without the GIL. Bad options
    raise ``ValueError`` with the message the command prints.
    """
    if isinstance(duration, bool):
        raise TypeError("duration: give a time such as '60s' or a number of seconds")
    text = f"{float(duration)!r}s" if isinstance(duration, (int, float)) else duration
    rows = _native.reproduce(paper, seeds, text, load, None if out is None else os.fspath(out))
    long = pd.DataFrame.from_records(rows, columns=["table", *COLUMNS])
    long["n"] = long["n"].astype("int64")
    tables: dict[str, pd.DataFrame] = {}
    for name in dict.fromkeys(long["table"]):
        tables[name] = long[long["table"] == name][COLUMNS].reset_index(drop=True)
    return tables
