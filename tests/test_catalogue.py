"""The check catalogue is a public interface: stable ids, a doc page for each, listed in docs/checks.md (generated
from the registry by kafka_ops.render.catalogue, never by hand) and linked from the README."""

from __future__ import annotations

import re
from pathlib import Path

from kafka_ops.checks import doc_page, load_all
from kafka_ops.checks.base import SEVERITIES
from kafka_ops.render.catalogue import render

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = [
    "## The incident",
    "## What the broker does",
    "## How kafka-ops detects it",
    "## The fix",
    "## Bad",
    "## Good",
]
# The ids the issues promised; removing or renaming one needs a deprecation, never a silent change.
PUBLIC_IDS = {
    "PERM001", "PERM002", "PERM003", "RET001", "RET002", "RET003", "RET004", "IDX001", "IDX002", "IDX003",
    "IDX004", "IDX005", "SHUT001", "SHUT002", "SHUT003", "SYSD001", "SYSD002", "SYSD003", "SYSD004", "CLN001",
    "CLN002", "CLN003", "CLN004", "CONF001", "DIR001", "DIR002", "DIR003", "DIR004",
}  # fmt: skip


def test_every_public_id_is_registered_once_with_a_valid_spec() -> None:
    checks = load_all()
    assert PUBLIC_IDS <= set(checks)
    for cid, spec in checks.items():
        assert re.fullmatch(r"[A-Z]+\d{3}", cid)
        assert spec.severity in SEVERITIES
        assert spec.title and spec.incident
        assert spec.run.__module__.endswith(cid.lower()), "one module per check, named for its id"


def test_every_check_has_a_doc_page_with_every_section() -> None:
    for cid in load_all():
        page = doc_page(cid)
        assert page is not None, f"kafka_ops/checks/docs/{cid}.md is missing"
        assert page.startswith(f"# {cid}"), cid
        positions = [page.find(s) for s in SECTIONS]
        assert all(p >= 0 for p in positions), (
            cid,
            [s for s, p in zip(SECTIONS, positions, strict=True) if p < 0],
        )
        assert positions == sorted(positions), f"{cid}: sections out of order"
        assert f"**Severity:** {load_all()[cid].severity}" in page, f"{cid}: the page must state the severity"
        assert page.count("```") % 2 == 0, f"{cid}: unbalanced code fences"


def test_docs_checks_md_is_the_generated_catalogue() -> None:
    text = render()
    for cid, spec in load_all().items():  # every check, its severity, title and doc page
        assert f"| [{cid}](../kafka_ops/checks/docs/{cid}.md) | {spec.severity} | " in text, cid
        assert (ROOT / "kafka_ops" / "checks" / "docs" / f"{cid}.md").is_file()
    on_disk = (ROOT / "docs" / "checks.md").read_text(encoding="utf-8")
    assert on_disk == text, "docs/checks.md is stale: python -m kafka_ops.render.catalogue > docs/checks.md"


def test_readme_links_the_catalogue() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/checks.md)" in readme
