"""The doc pages of PERM001-003, DIR001-004, RET001 and SHUT001: present, shipped, and in the catalogue's format."""

from __future__ import annotations

import pytest

from kafka_ops.checks import doc_page, load_all

IDS = ["PERM001", "PERM002", "PERM003", "DIR001", "DIR002", "DIR003", "DIR004", "RET001", "SHUT001"]
SECTIONS = [
    "## The incident",
    "## What the broker does",
    "## How kafka-ops detects it",
    "## The fix",
    "## Bad",
    "## Good",
]


@pytest.mark.parametrize("check_id", IDS)
def test_doc_page(check_id: str) -> None:
    spec = load_all()[check_id]
    page = doc_page(check_id)
    assert page is not None, f"kafka_ops/checks/docs/{check_id}.md is missing"
    lines = page.splitlines()
    assert lines[0] == f"# {check_id}"
    assert f"**Severity:** {spec.severity}" in page
    positions = [page.find(s) for s in SECTIONS]
    assert all(p > 0 for p in positions) and positions == sorted(positions), (
        "sections missing or out of order"
    )
    assert page.count("```") % 2 == 0
