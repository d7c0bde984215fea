"""aqmlab: a packet-level simulator for TCP congestion control and AQM.

>>> import aqmlab
>>> res = aqmlab.run("scenarios/aqm-compare.toml", seed=1)      # doctest: +SKIP
>>> res.flows[["group", "goodput_bps"]]                          # doctest: +SKIP

- :class:`Scenario` — load (file, TOML text, dict), change (``set``), validate;
- :func:`run` — one run, results as pandas DataFrames (:class:`Result`);
- :func:`sweep` — parameters × seeds on local processes, a Dask cluster or any
  ``concurrent.futures`` executor, one row per run;
- :func:`reproduce` — a paper's tables, paper vs aqmlab;
- :class:`ScenarioError` — a bad scenario, with the key path and the CLI's message;
- :class:`ScenarioWarning` — a valid scenario that does not do what its names say.
"""

from __future__ import annotations

from ._errors import ScenarioError, ScenarioWarning
from ._native import __version__
from ._reproduce import reproduce
from ._result import Result, run
from ._scenario import Scenario
from ._sweep import sweep

__all__ = [
    "Result",
    "Scenario",
    "ScenarioError",
    "ScenarioWarning",
    "__version__",
    "reproduce",
    "run",
    "sweep",
]
