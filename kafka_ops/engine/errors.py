"""Structured errors: every failure names the file and, when it applies, the byte position."""

from __future__ import annotations


class EngineError(Exception):
    """A file could not be read or is not what it should be.

    ``str(err)`` is a single line: ``<path>: <reason>`` or ``<path>: at byte <n>: <reason>``.
    """

    def __init__(self, path: str, reason: str, position: int | None = None) -> None:
        self.path = str(path)
        self.reason = reason.replace("\n", " ")
        self.position = position
        where = f" at byte {position}" if position is not None else ""
        # one line, whatever the file is called
        shown = self.path.replace("\n", "\\n").replace("\r", "\\r")
        super().__init__(f"{shown}:{where} {self.reason}" if where else f"{shown}: {self.reason}")

    def __reduce__(self) -> tuple[object, ...]:
        # Exception pickles its args (the one-line message), which __init__ does not take: the audit's
        # workers send errors to the parent with the fields instead
        return self.__class__, (self.path, self.reason, self.position)

    def to_dict(self) -> dict[str, object]:
        return {"file": self.path, "position": self.position, "error": self.reason}


class FormatError(EngineError):
    """The bytes do not follow the format Kafka writes."""


def os_error(path: str, exc: OSError) -> EngineError:
    """Turn an OSError into a one-line EngineError (e.g. 'permission denied')."""
    reason = (exc.strerror or exc.__class__.__name__).lower()
    return EngineError(path, f"cannot read: {reason}")
