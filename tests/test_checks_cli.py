"""`kafka-ops checks` lists the catalogue; `kafka-ops checks ID` prints a check's doc page; an unknown id is one
line naming the closest ids (exit 2)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from kafka_ops.checks import doc_page, load_all

from .test_cli_contract import assert_one_line

Cli = Callable[..., tuple[int, str, str]]


def test_the_catalogue_lists_every_check_once_with_severity_and_title(cli: Cli) -> None:
    code, out, err = cli("checks")
    assert code == 0 and err == ""
    lines = out.splitlines()
    catalogue = load_all()
    assert [line.split()[0] for line in lines] == list(catalogue)
    for line, spec in zip(lines, catalogue.values(), strict=True):
        assert line.split(None, 2) == [spec.id, spec.severity, spec.title]
    code, out, _ = cli("checks", "-f", "json")
    rows = json.loads(out)
    assert code == 0 and [r["id"] for r in rows] == list(catalogue)
    assert rows[0].keys() == {"id", "severity", "scope", "title", "incident", "needs"}


@pytest.mark.parametrize("given", ["PERM001", "perm001", " Conf001 ", "RET001"])
def test_an_id_prints_its_doc_page(cli: Cli, given: str) -> None:
    code, out, err = cli("checks", given)
    cid = given.strip().upper()
    assert code == 0 and err == "" and out == doc_page(cid)
    assert out.startswith(f"# {cid}\n") and "## The fix" in out


@pytest.mark.parametrize(
    ("given", "near"),
    [
        ("PERM", "PERM001, PERM002, PERM003"),
        ("RET01", "RET001, RET002, RET003, RET004"),
        ("PREM001", "PERM001"),
        ("SYSD005", "SYSD001"),
        ("CONF1", "CONF001"),
    ],
)
def test_an_unknown_id_is_one_line_with_the_closest(cli: Cli, given: str, near: str) -> None:
    code, out, err = cli("checks", given)
    assert code == 2 and out == ""
    assert_one_line(err, f"kafka-ops checks: no check {given!r} (did you mean {near}")


def test_an_id_like_nothing_points_at_the_list(cli: Cli) -> None:
    code, out, err = cli("checks", "hello")
    assert (
        code == 2
        and out == ""
        and err == "kafka-ops checks: no check 'hello' (`kafka-ops checks` lists them)\n"
    )
