"""What the shipped collector needs to run on a broker host's own Python from 3.9 (RHEL 9 and Debian 11 ship 3.9,
Ubuntu 22.04 3.10; issue 22), kept in one place. The CLI and the Spark job run on 3.11+, where these are the
plain standard library.

``slotted`` is ``dataclasses.dataclass(slots=True)`` on 3.10+ (the keyword came in 3.10: less memory per
instance, faster attribute reads, and the same classes as before on 3.11) and a plain ``dataclass`` on 3.9."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

__all__ = ["SLOTS", "slotted"]

SLOTS = sys.version_info >= (3, 10)  # dataclass(slots=...) exists

if TYPE_CHECKING:  # mypy checks @slotted(...) classes as the dataclasses they are
    from dataclasses import dataclass as slotted
else:
    from dataclasses import dataclass as _dataclass

    def slotted(cls: Any = None, /, **kw: Any) -> Any:
        """``@slotted`` or ``@slotted(frozen=True, ...)``: a dataclass with ``__slots__`` where Python has them."""
        if SLOTS:
            kw["slots"] = True
        return _dataclass(cls, **kw)
