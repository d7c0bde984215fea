"""The exception raised for a bad scenario."""

from __future__ import annotations


class ScenarioError(ValueError):
    """A scenario that aqmlab refuses: bad TOML, an unknown key, a value out of range.

    ``str(err)`` is the message the ``aqmlab`` command prints after ``error:``
    (file, key path and what is allowed). The parts are also attributes:

    - ``path``: the key path, e.g. ``links[1].queue_ab.max_p`` (``None`` when the
      error is not about one key: a file that cannot be read, invalid TOML);
    - ``file``: the file name, or the name given to ``from_toml``/``from_dict``;
    - ``reason``: what is wrong, without the file and path.
    """

    def __init__(
        self,
        message: str,
        path: str | None = None,
        file: str | None = None,
        reason: str | None = None,
    ) -> None:
        # All four go to args so that the error pickles (Dask, processes).
        super().__init__(message, path, file, reason)
        self.message = message
        self.path = path
        self.file = file
        self.reason = reason if reason is not None else message

    def __str__(self) -> str:
        return self.message
