"""The exception raised for a bad scenario, and the warning for a surprising one."""

from __future__ import annotations

import errno as _errno
import re

# The library's message for a file it could not read ends with the OS error,
# e.g. "No such file or directory (os error 2)".
_OS_ERROR = re.compile(r"\(os error (\d+)\)\s*$")


class ScenarioError(ValueError):
    """A scenario that aqmlab refuses: bad TOML, an unknown key, a value out of range.

    ``str(err)`` is the message the ``aqmlab`` command prints after ``error:``
    (file, key path and what is allowed). The parts are also attributes:

    - ``path``: the key path, e.g. ``links[1].queue_ab.max_p`` (``None`` when the
      error is not about one key: a file that cannot be read, invalid TOML);
    - ``file``: the file name, or the name given to ``from_toml``/``from_dict``;
    - ``reason``: what is wrong, without the file and path.

    When the cause is a file that cannot be read, the error is also an
    :class:`OSError` with ``errno`` and ``filename`` set: a missing file is a
    :class:`FileNotFoundError`, a denied one a :class:`PermissionError`, so
    ``except FileNotFoundError`` and ``except ValueError`` both catch it.
    """

    def __new__(
        cls,
        message: str,
        path: str | None = None,
        file: str | None = None,
        reason: str | None = None,
    ) -> ScenarioError:
        if cls is ScenarioError and path is None and reason is not None:
            m = _OS_ERROR.search(reason)
            if m is not None:
                code = int(m.group(1))
                sub = _OS_SUBCLASS.get(code, ScenarioOSError)
                err = sub(message, path, file, reason)
                err.errno = code
                return err
        return super().__new__(cls, message, path, file, reason)

    def __init__(
        self,
        message: str,
        path: str | None = None,
        file: str | None = None,
        reason: str | None = None,
    ) -> None:
        # All four go to args so that the error pickles (Dask, processes).
        super().__init__(message, path, file, reason)
        self.args = (message, path, file, reason)
        self.message = message
        self.path = path
        self.file = file
        self.reason = reason if reason is not None else message

    def __reduce__(self) -> tuple[type[ScenarioError], tuple[str, str | None, str | None, str]]:
        # Rebuilt through ScenarioError, which picks the OSError subclass again.
        return (ScenarioError, (self.message, self.path, self.file, self.reason))

    def __str__(self) -> str:
        return self.message


class ScenarioOSError(ScenarioError, OSError):
    """A scenario file that cannot be read: a :class:`ScenarioError` and an :class:`OSError`."""

    def __new__(
        cls,
        message: str,
        path: str | None = None,
        file: str | None = None,
        reason: str | None = None,
    ) -> ScenarioOSError:
        # OSError's constructor owns the instance layout; give it the message only.
        return OSError.__new__(cls, message)

    def __init__(
        self,
        message: str,
        path: str | None = None,
        file: str | None = None,
        reason: str | None = None,
    ) -> None:
        ScenarioError.__init__(self, message, path, file, reason)
        self.strerror = self.reason
        self.filename = file


class ScenarioFileNotFoundError(ScenarioOSError, FileNotFoundError):
    """A scenario file that does not exist."""


class ScenarioPermissionError(ScenarioOSError, PermissionError):
    """A scenario file that may not be read."""


_OS_SUBCLASS: dict[int, type[ScenarioOSError]] = {
    _errno.ENOENT: ScenarioFileNotFoundError,
    _errno.EACCES: ScenarioPermissionError,
    _errno.EPERM: ScenarioPermissionError,
}


class ScenarioWarning(UserWarning):
    """A valid scenario that does not do what its names say.

    For example ``cc = "prague"`` without ``tcp.ecn_feedback = "accecn"`` runs
    Prague's Reno fallback. :func:`aqmlab.run` issues one per warning
    (``warnings.warn``) and ``run(..., strict=True)`` raises a
    :class:`ScenarioError` instead; ``Result.warnings`` and
    ``summary["warnings"]`` list them. Attributes: ``cause`` (one of the causes
    listed in the running guide), ``key`` (the scenario key) and ``reason``.
    """

    def __init__(self, cause: str, key: str, reason: str) -> None:
        super().__init__(f"[{cause}] {key}: {reason}")
        self.cause = cause
        self.key = key
        self.reason = reason
