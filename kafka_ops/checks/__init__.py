"""The catalogue of checks: one module per check id (``perm001.py`` holds PERM001), each with a doc page in
``checks/docs/<ID>.md`` (the incident it prevents, how it is detected, the fix, a bad and a good example).

Modules are discovered by name, so adding a check is adding a file. Ids are public and stable.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

from kafka_ops.checks.base import REGISTRY, SEVERITIES, CheckSpec, Finding, check

_MODULE = re.compile(r"^[a-z]+\d{3}$")


def load_all() -> dict[str, CheckSpec]:
    for m in pkgutil.iter_modules(__path__):
        if _MODULE.match(m.name):
            importlib.import_module(f"{__name__}.{m.name}")
    return dict(sorted(REGISTRY.items()))


def doc_page(check_id: str) -> str | None:
    """The Markdown doc page of a check (shipped as package data)."""
    import importlib.resources as res

    try:
        return (res.files(__name__) / "docs" / f"{check_id}.md").read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return None


__all__ = ["REGISTRY", "SEVERITIES", "CheckSpec", "Finding", "check", "doc_page", "load_all"]
