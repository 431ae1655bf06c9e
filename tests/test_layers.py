"""The package's floors: every module of kafka_ops imports only from its own floor or below, and the
subpackages and top-level modules import each other without a loop (issue 24: "no arrow up, no loop").

Every import counts, wherever it is written: at module level, inside a function (the old upward imports hid
there), under ``if TYPE_CHECKING:``, ``from . import x`` and other relative forms. A module's floor is that of
its subpackage or, for a module at the package root, its own (``UNITS``); a ``__main__`` module is an entry point
(a door, like ``kafka_ops/__main__.py``): it is on the top floor whatever folder it sits in.

A new subpackage or top-level module must be given its floor in ``UNITS``. An import that runs up the floors
fails, naming both modules and both floors; one that cannot be moved yet goes in ``ALLOWED`` with why, and an
entry that no longer occurs fails too (so the list only shrinks).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import kafka_ops

# The floors, lowest first: a module may import from its floor and the ones below it.
FLOORS = (
    "ground",  # bytes on disk and units of measure: engine/, units.py (and the package's __version__)
    "facts",  # what is gathered on a host: facts/ (the broker's own logs too: facts/brokerlogs.py)
    "broker",  # the broker model: what Kafka will do with the facts
    "checks",  # the rules: facts and model in, findings out
    "audit",  # running the checks: audit/ (context, run, waivers, the options of an audit, declared and read)
    "remediate",  # the fixes: remediate/
    # the rehearsal: the audit's plan beside a sandboxed broker start (kafka_ops/rehearse/, standard library only:
    # the collector ships it to broker hosts for the roll's rehearsal step)
    "rehearse",
    "collector",  # what runs on the host (collector/remote.py) and its build (collector/ship.py)
    "render",  # render/: the report's renderers, its model and the catalogue generated from the registry
    "services",  # the other engines as they stand today: cluster client, spark helpers
    "apps",  # jobs built on the audit and the services: fleet, qos, simulator
    "cli",  # the entry points: cli/ (the app, its framework, one module per command), kafka_ops/__main__.py and
    # every other __main__ module
)
# (kafka_ops/fleet/__main__.py is spark-submit's program, `kafka-ops fleet` run by Spark: it calls the CLI's
# commands, as a door does; its path is in docs/fleet.md, so it stays in fleet/ and counts as an entry point.)
UNITS = {
    "kafka_ops": "ground",  # the package's __init__: __version__ only
    "engine": "ground",
    "units": "ground",
    "facts": "facts",
    "brokerlogs": "facts",  # a deprecated shim of facts.brokerlogs (a documented path)
    "broker": "broker",
    "checks": "checks",
    "audit": "audit",
    "remediate": "remediate",
    "collector": "collector",
    "render": "render",
    "cluster": "services",
    "spark": "services",
    "fleet": "apps",
    "rehearse": "rehearse",  # the rehearsal: the audit and a sandboxed broker start (kafka_ops/rehearse/)
    "qos": "apps",
    "simulator": "apps",
    "cli": "cli",
    "__main__": "cli",
}
ENTRY = "__main__"

# Upward imports that are known and not moved yet: (importing module, imported module) -> why. None today: one
# that cannot be moved at once goes here with why, and comes out when it is moved.
ALLOWED: dict[tuple[str, str], str] = {}
# Imports between units that close a loop and are known: (importing unit, imported unit) -> why.
ALLOWED_LOOPS: dict[tuple[str, str], str] = {}
# Module-level loops inside one unit, known: (importing module, imported module) -> why. None: the package's
# modules import each other without a loop.
ALLOWED_MODULE_LOOPS: dict[tuple[str, str], str] = {}

PACKAGE = Path(kafka_ops.__file__).resolve().parent
# The broker lab: a development package beside kafka_ops (not in the wheel). It may import kafka_ops; kafka_ops
# never imports it, or an installed kafka-ops would fail where the lab is absent.
LAB = PACKAGE.parent / "kafka_lab"


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package at ``root``: dotted name -> file."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """(imported module, line) for every import of the package's own modules in one module, wherever written."""
    top = name.split(".")[0]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            if module.split(".")[0] != top:
                continue
            yield module, node.lineno
            for alias in node.names:  # `from pkg import module` imports the module too
                if f"{module}.{alias.name}" in known:
                    yield f"{module}.{alias.name}", node.lineno


def unit(module: str) -> str:
    """The subpackage or top-level module a module belongs to; an entry point (``__main__``) is its own."""
    parts = module.split(".")
    if parts[-1] == ENTRY:
        return ENTRY if len(parts) == 2 else module
    return parts[1] if len(parts) > 1 else parts[0]


def floor(module: str) -> str:
    u = unit(module)
    return UNITS[ENTRY] if u.endswith(ENTRY) else UNITS[u]


def edges(root: Path) -> list[tuple[str, str, int]]:
    """(importer, imported, line) for every import of the package's own modules by one of them."""
    known = modules(root)
    top = root.name
    return [
        (name, target, line)
        for name, path in known.items()
        for target, line in imports(name, path, known)
        if target == top or target.startswith(top + ".")
    ]


def upward(found: list[tuple[str, str, int]], allowed: dict[tuple[str, str], str]) -> list[str]:
    rank = {f: i for i, f in enumerate(FLOORS)}
    return [
        f"{a} (floor {floor(a)}) imports {b} (floor {floor(b)}, above it) at line {line}"
        for a, b, line in found
        if rank[floor(b)] > rank[floor(a)] and (a, b) not in allowed
    ]


def loops(
    found: list[tuple[str, str, int]], allowed: dict[tuple[str, str], str], key: Callable[[str], str] = unit
) -> list[list[str]]:
    """The import loops among units (or among modules, ``key=str``): each strongly connected set of two or more
    (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for a, b, _ in found:
        ua, ub = key(a), key(b)
        graph.setdefault(ua, set())
        graph.setdefault(ub, set())
        if ua != ub and (ua, ub) not in allowed:
            graph[ua].add(ub)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


FOUND = edges(PACKAGE)


def test_every_unit_has_a_floor() -> None:
    missing = sorted({unit(m) for m in modules(PACKAGE) if not unit(m).endswith(ENTRY)} - set(UNITS))
    assert missing == [], f"give these a floor in tests/test_layers.py UNITS: {missing}"
    assert set(UNITS.values()) <= set(FLOORS)


def test_no_module_imports_from_a_floor_above_its_own() -> None:
    assert len(FOUND) > 500  # the walk sees the package (about 1,100 imports of its own modules today)
    bad = upward(FOUND, ALLOWED)
    why = "upward imports (move the code down, or list it in ALLOWED with why):\n"
    assert bad == [], why + "\n".join(bad)


def test_allowed_upward_imports_still_occur() -> None:
    present = {(a, b) for a, b, _ in FOUND}
    stale = sorted(set(ALLOWED) - present)
    assert stale == [], f"no longer imported: remove from ALLOWED in tests/test_layers.py: {stale}"


def test_no_import_loop_among_subpackages_and_top_level_modules() -> None:
    found = loops(FOUND, ALLOWED_LOOPS)
    assert found == [], f"import loops among kafka_ops's units: {found}"
    present = {(unit(a), unit(b)) for a, b, _ in FOUND}
    assert set(ALLOWED_LOOPS) <= present, "no longer imported: remove from ALLOWED_LOOPS"


def test_no_import_loop_among_modules() -> None:
    assert loops(FOUND, ALLOWED_MODULE_LOOPS, key=str) == []
    present = {(a, b) for a, b, _ in FOUND}
    assert set(ALLOWED_MODULE_LOOPS) <= present, "no longer imported: remove from ALLOWED_MODULE_LOOPS"


def test_the_walk_finds_function_body_relative_and_type_checking_imports(tmp_path: Path) -> None:
    """The rules above fail on what they are meant to catch (a package written here with one of each)."""
    pkg = tmp_path / "kafka_ops"
    for d in ("engine", "facts", "checks"):
        (pkg / d).mkdir(parents=True)
        (pkg / d / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "engine" / "low.py").write_text("def f():\n    from kafka_ops.checks import base\n")
    (pkg / "checks" / "base.py").write_text("from ..facts import gather\nfrom . import other\n")
    (pkg / "checks" / "other.py").write_text("")
    (pkg / "facts" / "gather.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kafka_ops.checks.base import X\n"
    )
    found = edges(pkg)
    assert ("kafka_ops.checks.base", "kafka_ops.facts.gather", 1) in found  # relative, resolved
    assert ("kafka_ops.checks.base", "kafka_ops.checks.other", 2) in found  # from . import
    assert upward(found, {}) == [
        "kafka_ops.engine.low (floor ground) imports kafka_ops.checks (floor checks, above it) at line 2",
        "kafka_ops.engine.low (floor ground) imports kafka_ops.checks.base (floor checks, above it) at line 2",
        "kafka_ops.facts.gather (floor facts) imports kafka_ops.checks.base (floor checks, above it) at line 3",
    ]
    assert loops(found, {}) == [["checks", "facts"]]
    assert loops(found, {("facts", "checks"): "known"}) == []


@pytest.mark.parametrize(
    "entry", ["kafka_ops.__main__", "kafka_ops.cli.__main__", "kafka_ops.fleet.__main__"]
)
def test_entry_points_are_on_the_top_floor(entry: str) -> None:
    assert floor(entry) == "cli"


def imported_tops(path: Path) -> Iterator[tuple[str, int]]:
    """(top-level package, line) of every absolute import in one file, wherever written."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0], node.lineno
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            yield node.module.split(".")[0], node.lineno


def test_the_package_never_imports_the_broker_lab() -> None:
    assert not (PACKAGE / "lab").exists(), "the broker lab lives in kafka_lab/ beside the package, not in it"
    assert (LAB / "broker.py").is_file()
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for top, line in imported_tops(path)
        if top == LAB.name
    ]
    assert found == [], f"kafka_ops imports the broker lab (kafka_lab, not installed with kafka-ops): {found}"
    # the other way is the lab's purpose: it runs the package's audit against real brokers
    assert any(top == "kafka_ops" for path in LAB.rglob("*.py") for top, _ in imported_tops(path))


def test_the_walk_finds_an_import_of_the_lab(tmp_path: Path) -> None:
    """The rule above fails on what it is meant to catch (an import inside a function body)."""
    (tmp_path / "m.py").write_text("def f():\n    from kafka_lab.broker import LabBroker\n")
    assert list(imported_tops(tmp_path / "m.py")) == [("kafka_lab", 2)]
