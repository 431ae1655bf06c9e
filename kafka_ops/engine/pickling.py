"""Cheap pickling for the slots dataclasses the audit's worker processes send to their parent (facts.pool)."""

from __future__ import annotations

from operator import attrgetter
from typing import Any, TypeVar

T = TypeVar("T", bound=type)


def by_constructor(cls: T) -> T:
    """Pickle instances of a ``@dataclass(slots=True)`` whose fields are all ``__init__`` arguments as one
    constructor call on their field values (read in C by ``attrgetter``): pickle's default for a slots class,
    ``__getstate__``/``__setstate__`` over ``dataclasses.fields``, costs several times more, and the audit's
    workers send a few dozen of them per partition. New fields are included by themselves."""
    names = cls.__slots__  # type: ignore[attr-defined]  # a slots dataclass
    if len(names) < 2:  # attrgetter of one name returns the value, not a 1-tuple
        raise TypeError(f"{cls.__name__}: needs two fields or more")
    values = attrgetter(*names)

    def __reduce__(self: Any) -> tuple[type, tuple[Any, ...]]:
        return cls, values(self)

    cls.__reduce__ = __reduce__  # type: ignore[assignment]
    return cls
