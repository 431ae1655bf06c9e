"""Help, README and docs agree with the code (issue 39): every option a documented `kafka-ops ...` command line
uses is an option of that command (typer's own parameters, introspected), every option of `audit` is on its
page, and what --command-config reads (kafka_ops.cluster.tls) is what its help and the README say."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
    *sorted((ROOT / "roles").glob("*/README.md")),
]


def commands() -> dict[tuple[str, ...], Any]:
    from kafka_ops.cli.framework import load_all

    root = typer.main.get_command(load_all())  # type: ignore[attr-defined]
    out: dict[tuple[str, ...], Any] = {}
    for name, cmd in root.commands.items():
        out[(name,)] = cmd
        out.update({(name, sub): c for sub, c in getattr(cmd, "commands", {}).items()})
    return out


def options(cmd: Any) -> set[str]:
    names = {"--help", "-h"}
    for p in cmd.params:
        names |= {o for o in [*p.opts, *getattr(p, "secondary_opts", [])] if o.startswith("-")}
    return names


def documented_lines() -> list[tuple[str, str]]:
    """(page, command line) for every `kafka-ops ...` command of the pages' code blocks (not their output)."""
    out = []
    for page in PAGES:
        if "docs/dev/" in page.as_posix():
            continue
        for _, body in FENCE.findall(page.read_text(encoding="utf-8")):
            for line in body.replace("\\\n", " ").splitlines():
                line = re.sub(r"^\s*(\$ )?(sudo )?", "", line)
                for part in re.split(r"\|\||&&|;|\||\$\(", line):
                    part = part.strip()
                    if re.match(r"(\S*/)?kafka-ops [a-z]+(?: [a-z]+)?:", part):  # a message it printed
                        continue
                    if re.match(r"(\S*/)?kafka-ops [a-z]", part):
                        out.append((page.relative_to(ROOT).as_posix(), part.split("#", 1)[0]))
    return out


def test_every_documented_command_line_uses_options_the_command_has() -> None:
    cmds = commands()
    lines = documented_lines()
    assert len(lines) > 40
    wrong = []
    for page, line in lines:
        words = line.split()[1:]
        key = tuple(words[:2]) if tuple(words[:2]) in cmds else tuple(words[:1])
        cmd = cmds.get(key)
        if cmd is None:
            wrong.append(f"{page}: no command {' '.join(words[:2])!r}: {line}")
            continue
        if cmd.context_settings.get("ignore_unknown_options") or cmd.context_settings.get("allow_extra_args"):
            continue  # passes its arguments on (fleet submit -> the fleet job)
        text = (ROOT / page).read_text(encoding="utf-8")
        for opt in re.findall(r"(?<![\w'\"=/.-])(--?[a-zA-Z][\w-]*)", " ".join(words[len(key) :])):
            if opt not in options(cmd) and f"no such option: {opt}" not in text:  # a typo shown on purpose
                wrong.append(f"{page}: kafka-ops {' '.join(key)} has no {opt}: {line}")
    assert not wrong, "\n".join(wrong)


def test_every_audit_option_is_on_its_page() -> None:
    page = (ROOT / "docs/commands/audit.md").read_text(encoding="utf-8")
    missing = sorted(o for o in options(commands()[("audit",)]) if o.startswith("--") and o not in page)
    assert not missing, missing


def test_command_config_help_and_readme_name_the_stores_the_code_reads(cli) -> None:  # type: ignore[no-untyped-def]
    from kafka_ops.cluster import tls

    _, helptext, _ = cli("audit", "--help")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    cluster_page = (ROOT / "docs/commands/cluster.md").read_text(encoding="utf-8")
    for store in tls._TYPES:  # JKS, PKCS12, PEM
        assert store in " ".join(helptext.split()), store
        assert store in readme and store in cluster_page, store
    assert "not Java key stores" not in helptext
