"""The Python the shipped collector needs on a broker host, checked statically: RHEL 9 and Debian 11 ship
Python 3.9, Ubuntu 22.04 3.10 (issue 22). The collector (roles/kafka_preflight/files/kafka_ops_collector.py)
carries its modules compressed; they are unpacked and read as a 3.9 interpreter would compile them (syntax), then
by vermin (the standard library's API: a keyword, a member or a module added after 3.9) and by a walk for `X | Y`
evaluated at run time (isinstance, aliases). tests/test_collector_py39.py runs it on a real 3.9 (Debian 11's).

The payload runs on 3.9 (its guard says so): what 3.10+ gives it (dataclass slots) comes through
kafka_ops.engine.compat, which vermin does not count. KNOWN_ABOVE_39 is empty and stays so: a post-3.9 use fails
these tests, and must be lowered (or the guard, `kafka_preflight_python`'s documented floor and the roles' platforms
raised with it).
"""

from __future__ import annotations

import ast
import base64
import json
import re
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
COLLECTOR = REPO / "roles" / "kafka_preflight" / "files" / "kafka_ops_collector.py"
VERMIN = Path(sys.executable).parent / "vermin"
# what the payload uses from after 3.9, by kind (vermin's wording; the walk's for run-time unions)
KNOWN_ABOVE_39: set[str] = set()


def _payload() -> dict[str, str]:
    tree = ast.parse(COLLECTOR.read_text())
    (blob,) = [
        n.args[0].value
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "b85decode"
    ]
    files: dict[str, str] = json.loads(zlib.decompress(base64.b85decode(blob)).decode())
    return files


@pytest.fixture(scope="module")
def payload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("collector-payload")
    for name, source in _payload().items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(source)
    return root


def _guard() -> tuple[int, int]:
    m = re.search(r"^if sys\.version_info < \((\d+), (\d+)\):", COLLECTOR.read_text(), re.M)
    assert m, "the collector's version guard is gone"
    return int(m.group(1)), int(m.group(2))


def _runtime_unions(source: str) -> list[int]:
    """Lines where `X | Y` of types is evaluated when the module runs: isinstance/issubclass's second argument,
    or an operand that is None (an alias such as `Opt = int | None`). Annotations are strings under
    `from __future__ import annotations` and are skipped then."""
    tree = ast.parse(source)
    lazy = any(
        isinstance(n, ast.ImportFrom)
        and n.module == "__future__"
        and any(a.name == "annotations" for a in n.names)
        for n in tree.body
    )
    skip: set[int] = set()
    if lazy:
        for n in ast.walk(tree):
            for ann in (getattr(n, "annotation", None), getattr(n, "returns", None)):
                if ann is not None:
                    skip.update(id(x) for x in ast.walk(ann))
    lines = []
    for n in ast.walk(tree):
        if id(n) in skip:
            continue
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id in ("isinstance", "issubclass")
        ):
            if len(n.args) == 2 and isinstance(n.args[1], ast.BinOp) and isinstance(n.args[1].op, ast.BitOr):
                lines.append(n.lineno)
        elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr):
            if any(isinstance(x, ast.Constant) and x.value is None for x in (n.left, n.right)):
                lines.append(n.lineno)
    return lines


def test_the_payload_has_no_syntax_a_39_interpreter_rejects(payload: Path) -> None:
    bad = []
    for name, source in _payload().items():
        try:
            ast.parse(source, filename=name, feature_version=(3, 9))
        except SyntaxError as exc:
            bad.append(f"{name}:{exc.lineno}: {exc.msg}")
    assert bad == []
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if Path(ruff).exists():  # ruff knows more of 3.10+'s grammar than ast's best-effort feature_version
        # (ruff reports version-dependent syntax whatever rules are selected: `invalid-syntax: Cannot use ...`)
        with_py39 = subprocess.run(
            [ruff, "check", "--isolated", "--no-cache", "--target-version", "py39", "--select", "F821", "."],
            cwd=payload, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert "invalid-syntax" not in with_py39.stdout and "SyntaxError" not in with_py39.stdout, (
            with_py39.stdout
        )


@pytest.fixture(scope="module")
def above_39(payload: Path) -> tuple[set[str], str, str]:
    """(kinds of post-3.9 use, vermin's minimum version line, vermin's whole output); vermin takes about 10 s."""
    if not VERMIN.exists():
        pytest.skip("vermin is not installed: pip install -e '.[dev]'")
    r = subprocess.run(
        [str(VERMIN), "-t=3.9-", "--violations", "--eval-annotations", "--no-tips", "--no-parse-comments", "."],
        cwd=payload, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    out = r.stdout + r.stderr
    kinds = {line.strip() for line in out.splitlines() if " requires " in line and line.startswith("  ")}
    if any(_runtime_unions(source) for source in _payload().values()):
        kinds.add("X | Y evaluated at run time requires 3.10")
    (minimum,) = [line for line in out.splitlines() if line.startswith("Minimum required versions:")]
    return kinds, minimum, out


def test_the_guard_is_true_and_no_new_kind_of_post_39_use_comes_in(
    above_39: tuple[set[str], str, str],
) -> None:
    kinds, minimum, out = above_39
    assert kinds <= KNOWN_ABOVE_39, (
        f"new post-3.9 uses in the collector's modules: {kinds - KNOWN_ABOVE_39}\n{out}"
    )
    need = tuple(int(x) for x in minimum.split(":")[1].strip().split("."))
    assert _guard() >= need, f"the collector's guard admits Python {_guard()}, its modules need {need}"


def test_the_collector_runs_on_python_39(above_39: tuple[set[str], str, str]) -> None:
    kinds, minimum, out = above_39
    assert kinds == set(), out
    assert minimum.split(":")[1].strip() == "3.9", out
    assert _guard() <= (3, 9)
