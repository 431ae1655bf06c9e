"""The Ansible roles' variables are defaulted in one place each: the shared inventory variables in the role
kafka_common (which every other role depends on), every other variable in the one role it belongs to. A second
default for the same variable is how the roles drift apart (one role's kafka_preflight_python left at another
value than the next); so is an argument spec that documents a variable its role does not default."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import yaml

ROLES = Path(__file__).resolve().parents[1] / "roles"
DEPENDENTS = ("kafka_datadirs", "kafka_preflight", "kafka_rolling_restart", "kafka_systemd")


def _defaults(role: str) -> dict[str, object]:
    return yaml.safe_load((ROLES / role / "defaults" / "main.yml").read_text()) or {}


def _spec_options(role: str) -> set[str]:
    specs = yaml.safe_load((ROLES / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    return {name for entry in specs.values() for name in entry.get("options", {})}


def test_every_variable_is_defaulted_by_one_role() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for role in sorted(p.name for p in ROLES.iterdir() if (p / "defaults" / "main.yml").is_file()):
        for name in _defaults(role):
            where[name].append(role)
    twice = {name: roles for name, roles in where.items() if len(roles) > 1}
    assert twice == {}, f"defaulted in more than one role (shared ones belong in kafka_common): {twice}"
    shared = set(_defaults("kafka_common"))
    assert {"kafka_broker_user", "kafka_server_properties", "kafka_log_dirs", "kafka_systemd_unit", "kafka_version",
            "kafka_preflight_python", "kafka_ops_report_dir"} <= shared  # fmt: skip


def test_every_role_depends_on_kafka_common_and_documents_what_it_defaults() -> None:
    for role in DEPENDENTS:
        meta = yaml.safe_load((ROLES / role / "meta" / "main.yml").read_text())
        assert {"role": "kafka_common"} in meta["dependencies"], role
    for role in (*DEPENDENTS, "kafka_common"):
        assert _spec_options(role) == set(_defaults(role)), role
        readme = (ROLES / role / "README.md").read_text()
        missing = [name for name in _defaults(role) if f"`{name}`" not in readme]
        assert missing == [], f"{role}/README.md does not document {missing}"


def test_the_platforms_claimed_are_what_molecule_runs_and_the_docs_say_so() -> None:
    """meta/main.yml claims what the roles' Molecule scenarios run on (Debian 12 bookworm: tests/molecule's image),
    nothing more; the READMEs and docs/ansible.md say the same, and name bullseye only as where the collector alone
    is tested (tests/test_collector_py39.py), never as a platform of the roles."""
    import re

    docs = ROLES.parent / "docs" / "ansible.md"
    build = (ROLES.parent / "tests" / "molecule" / "build_image.sh").read_text()
    assert re.search(r"\bbookworm\b", build)  # the one image Molecule's hosts boot
    for role in ("kafka_common", *DEPENDENTS):
        meta = yaml.safe_load((ROLES / role / "meta" / "main.yml").read_text())
        assert meta["galaxy_info"]["platforms"] == [{"name": "Debian", "versions": ["bookworm"]}], role
        readme = (ROLES / role / "README.md").read_text()
        section = " ".join(readme.split("## Platforms", 1)[1].split("\n## ", 1)[0].split())
        assert "Claimed (`meta/main.yml`" in section and "Debian 12 bookworm" in section, role
        assert "bullseye" in section and "tests/test_collector_py39.py" in section, role
        assert (
            "not claimed" in section or "none of them is claimed" in section or "is not a claim" in section
        ), role
    text = " ".join(docs.read_text().split("## Platforms", 1)[1].split("\n## ", 1)[0].split())
    assert "Debian 12 bookworm, and only that" in text and "none of them is claimed" in text
    assert "RHEL 9's" not in docs.read_text()  # no platform named as if it were tested
