"""`Scenario`: a scenario file, TOML text or dict, validated by the Rust library."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import _native

if TYPE_CHECKING:
    from ._result import Result

PathLike = str | os.PathLike[str]


class Scenario:
    """A validated scenario.

    Build one with :meth:`from_file`, :meth:`from_toml` or :meth:`from_dict`;
    change values with :meth:`set` (the key-path syntax of the command line's
    ``--set``). Every change is validated at once: a bad value raises
    :class:`aqmlab.ScenarioError` naming the key, and the scenario keeps its
    previous content.
    """

    __slots__ = ("_native",)

    def __init__(self, native: _native.NativeScenario) -> None:
        self._native = native

    # -- construction -------------------------------------------------------

    @classmethod
    def from_file(cls, path: PathLike) -> Scenario:
        """Load and validate a TOML scenario file."""
        return cls(_native.NativeScenario.from_file(os.fspath(path)))

    @classmethod
    def from_toml(cls, text: str, name: str = "<string>") -> Scenario:
        """Parse and validate scenario text; ``name`` stands for the file in errors."""
        return cls(_native.NativeScenario.from_toml(text, name))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], name: str = "<dict>") -> Scenario:
        """Build from nested dicts and lists laid out as the TOML file.

        Values are the TOML file's: ``"10Mbps"``, ``"5ms"``, ``{"kind": "red", ...}``.
        """
        if not isinstance(d, Mapping):
            from ._errors import ScenarioError

            reason = f"a scenario is a dict of keys, not a {type(d).__name__}"
            raise ScenarioError(f"{name}: {reason}", None, name, reason)
        return cls(_native.NativeScenario.from_dict(dict(d), name))

    # -- changing -----------------------------------------------------------

    def set(self, path: str, value: Any) -> Scenario:
        """Set ``value`` at ``path`` (``"links.bottleneck.queue_ab.max_p"``) and return self.

        A numeric path segment indexes an array; a name selects the link
        (``name``, or ``a-b`` for an unnamed link) or flow group (``group``).
        ``value`` is a bool, int, float, str, list or dict, as in the TOML
        file (``"10ms"``, ``{"kind": "codel"}``).
        """
        self._native = self._native.set(path, value)
        return self

    def set_many(self, values: Mapping[str, Any]) -> Scenario:
        """Set several paths, validating once at the end, and return self.

        For values that are only valid together, e.g. RED's ``min_th`` and ``max_th``.
        """
        self._native = self._native.set_many(list(values.items()))
        return self

    def copy(self) -> Scenario:
        """An independent copy (changes to one do not reach the other)."""
        return Scenario(self._native)

    # -- reading ------------------------------------------------------------

    def get(self, path: str) -> Any:
        """The value at ``path`` as written in the scenario (None when absent)."""
        return self._native.get(path)

    def to_toml(self) -> str:
        """The scenario as TOML text (comments of a file are not kept)."""
        return self._native.to_toml()

    def to_dict(self) -> dict[str, Any]:
        """The scenario as nested dicts and lists."""
        return self._native.to_dict()

    @property
    def name(self) -> str:
        return self._native.name

    @property
    def file(self) -> str:
        """The file the scenario came from, or the name given to it."""
        return self._native.file

    @property
    def seed(self) -> int:
        """The scenario's seed (used by :func:`aqmlab.run` when none is given)."""
        return self._native.seed

    @property
    def duration_s(self) -> float:
        return self._native.duration_s

    def _call(self) -> str:
        """Python code that rebuilds this scenario (for ``provenance.json``)."""
        n = self._native
        if n.loaded_from_file:
            head = f"aqmlab.Scenario.from_file({n.file!r})"
        else:
            head = f"aqmlab.Scenario.from_toml(<{len(n.to_toml())} characters>, {n.file!r})"
        sets = "".join(f".set({o.split('=', 1)[0]!r}, {o.split('=', 1)[1]})" for o in n.overrides)
        return head + sets

    def run(self, seed: int | None = None, strict: bool = False) -> Result:
        """Run the scenario; same as :func:`aqmlab.run`."""
        from ._result import run

        return run(self, seed=seed, strict=strict)

    def warnings(self) -> list[tuple[str, str, str]]:
        """What a run of this scenario would not do as its names say, as
        ``(cause, key, message)``; empty when nothing. :func:`aqmlab.run` issues
        them as :class:`aqmlab.ScenarioWarning` (or refuses them with
        ``strict=True``)."""
        return self._native.warnings()

    # -- Python protocol ----------------------------------------------------

    def __getstate__(self) -> tuple[str, str]:
        return (self._native.to_toml(), self._native.file)

    def __setstate__(self, state: tuple[str, str]) -> None:
        self._native = _native.NativeScenario.from_toml(state[0], state[1])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Scenario):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Scenario(name={self.name!r}, file={self.file!r}, duration_s={self.duration_s})"


def as_scenario(scenario: Scenario | PathLike) -> Scenario:
    """A :class:`Scenario`, loading a path when given one."""
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, (str, os.PathLike)):
        return Scenario.from_file(scenario)
    raise TypeError(f"expected an aqmlab.Scenario or a path, got {type(scenario).__name__}")
