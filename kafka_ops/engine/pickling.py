"""Cheap pickling for the slots dataclasses the audit's worker processes send to their parent (facts.pool)."""

from __future__ import annotations

from dataclasses import fields
from operator import attrgetter
from typing import Any, TypeVar

from kafka_ops.engine.compat import SLOTS

T = TypeVar("T", bound=type)


def by_constructor(cls: T) -> T:
    """Pickle instances of a ``@dataclass(slots=True)`` whose fields are all ``__init__`` arguments as one
    constructor call on their field values (read in C by ``attrgetter``): pickle's default for a slots class,
    ``__getstate__``/``__setstate__`` over ``dataclasses.fields``, costs several times more, and the audit's
    workers send a few dozen of them per partition. New fields are included by themselves."""
    # a slots dataclass's __slots__ are its fields in order; on 3.9 (no slots, engine.compat) its fields
    names = cls.__slots__ if SLOTS else tuple(f.name for f in fields(cls))  # type: ignore[attr-defined]
    if len(names) < 2:  # attrgetter of one name returns the value, not a 1-tuple
        raise TypeError(f"{cls.__name__}: needs two fields or more")
    values = attrgetter(*names)

    def __reduce__(self: Any) -> tuple[type, tuple[Any, ...]]:
        return cls, values(self)

    cls.__reduce__ = __reduce__  # type: ignore[assignment]
    return cls
