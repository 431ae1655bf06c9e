"""Library paths documented to users keep working after the package took its folders (issue 24): the old
``kafka_ops.brokerlogs`` is a shim that warns, ``kafka_ops.audit`` (a module once, a package now) still has its
names, and the command's entry points are where pyproject and ``python -m`` look for them."""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import kafka_ops

ROOT = Path(kafka_ops.__file__).resolve().parent.parent

# what `kafka_ops.audit` defined when it was one module (audit.py at dacdac6)
AUDIT_NAMES = [
    "REPORT_SCHEMA_VERSION", "INPUT_REASONS", "AuditContext", "prepare_partition", "finding_order",
    "cluster_findings", "update_aggregate", "run_audit", "log_dir_summary", "apply_gate", "unusable",
    "run_summary", "finding_line", "Waiver", "close_ids", "parse_waiver", "read_waivers", "waivers_from",
    "apply_waivers", "partition_row",
]  # fmt: skip


def test_the_old_brokerlogs_path_warns_and_is_the_same_module_s_names() -> None:
    sys.modules.pop("kafka_ops.brokerlogs", None)
    with pytest.warns(
        DeprecationWarning, match=r"kafka_ops\.brokerlogs moved to kafka_ops\.facts\.brokerlogs"
    ):
        old = importlib.import_module("kafka_ops.brokerlogs")
    from kafka_ops.facts import brokerlogs

    assert old.cleaner_deaths is brokerlogs.cleaner_deaths  # the documented one (checks/docs/CLN001.md)
    assert old.CleanerDeath is brokerlogs.CleanerDeath
    assert all(getattr(old, n) is getattr(brokerlogs, n) for n in brokerlogs.__all__)


def test_kafka_ops_audit_keeps_every_name_it_had_as_a_module() -> None:
    import kafka_ops.audit as audit
    from kafka_ops.audit import context, run, waivers

    assert sorted(audit.__all__) == sorted(AUDIT_NAMES)
    for name in AUDIT_NAMES:
        home = next(
            m for m in (run, context, waivers) if name in vars(m) and vars(m)[name] is getattr(audit, name)
        )
        assert getattr(home, name) is getattr(audit, name)


def test_the_entry_points_are_where_pyproject_and_python_m_look() -> None:
    script = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["kafka-ops"]
    module, _, attr = script.partition(":")
    assert callable(getattr(importlib.import_module(module), attr))
    r = subprocess.run(
        [sys.executable, "-m", "kafka_ops", "--version"], capture_output=True, text=True, cwd=ROOT
    )
    assert r.returncode == 0 and r.stdout.strip().endswith(kafka_ops.__version__), r.stderr
