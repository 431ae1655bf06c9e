"""Issue 20, the output side: names in a log dir are hostile (the broker user makes them; we run as root).

* every command a finding prints runs, pasted into bash, with each path or name as one literal argument: the
  ``$(touch${IFS}PWNED)`` and backquote payloads do not run and ``*`` does not expand;
* text, brief and Markdown show control characters escaped (no forged line, no terminal sequence) and rich
  does not take ``[bold red]`` in a name as markup; the JUnit XML parses;
* a checkpoint the broker user linked to a root-only file does not put that file's line in the report.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from kafka_ops.engine.shell import content_free, printable, q

from .hostile_hosts import (
    DELETE_DIR,
    HOSTILE_TOPIC,
    NOT_UTF8_DIR,
    SHELL_DIR,
    SHELL_PAYLOAD,
    HostileHost,
    hostile_host,
)
from .osusers import Users, broker_users  # noqa: F401
from .retention_hosts import cli

SECRET = "root:$6$SECRETHASH$abc:19000:0:99999:7:::"
RAW_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")  # anything but the line feeds of the output itself
VERBS = (
    "mv", "rm", "cp", "chown", "chmod", "find", "kafka-ops", "kafka-configs", "kafka-configs.sh", "kafka-dump-log",
    "kafka-console-producer", "kafka-delete-records", "echo", "touch", "mkdir", "setfacl", "install", "findmnt",
    "cat", "mount", "journalctl", "systemctl",
)  # fmt: skip
STUB = '#!/bin/bash\n{ printf "%s\\0" "${0##*/}" "$@"; printf "\\n--END--\\n"; } >> "$STUBLOG"\n'


# the checks that print a command with a path or a topic of this host
COMMAND_CHECKS = {
    "DIR003",
    "IDX001",
    "IDX002",
    "IDX004",
    "PERM001",
    "RET002",
    "SHUT002",
    "SHUT003",
    "SYSD001",
}


@pytest.fixture(scope="module")
def hostile(broker_users: Users) -> Iterator[HostileHost]:  # noqa: F811
    root = Path(tempfile.mkdtemp(prefix="kafka-ops-hostile-"))
    u = broker_users.broker
    h = hostile_host(root, u.uid, u.gid, u.name)
    # a checkpoint the broker user replaced by a link to a root-only file
    secret = root / "shadow"
    secret.write_text(SECRET + "\n")
    secret.chmod(0o600)
    ckpt = Path(h.host.log_dirs[0]) / "log-start-offset-checkpoint"
    ckpt.unlink()
    ckpt.symlink_to(secret)
    yield h
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def outputs(hostile: HostileHost, broker_users: Users) -> dict[str, str]:  # noqa: F811
    out = {}
    for fmt in ("json", "brief", "table", "markdown", "junit", "prometheus"):
        r = cli("audit", *hostile.audit_args(broker_users.broker.name), "--format", fmt)
        assert r.returncode == 1, (fmt, r.stderr)  # critical findings: the gate fails
        assert "Traceback" not in r.stderr
        out[fmt] = r.stdout
    return out


def commands(text: str) -> Iterator[str]:
    """The shell commands inside a remediation: from a command's name to the end of its clause (a bracket,
    a backquote, ';', ', ', '. ', ' — ' outside quotes), single-quoted and $'...' words kept whole;
    placeholders such as <broker:9092> outside quotes made one plain word."""
    start = re.compile(r"(?:^|(?<=[\s(`:]))(?:" + "|".join(map(re.escape, VERBS)) + r")(?=\s)")
    # quoted words (as engine.shell.q writes them, or quotes in the prose): a name inside one is not a command
    quoted = [m.span() for m in re.finditer(r"\$'(?:[^'\\]|\\.)*'|(?<![\w'])'[^']*'(?:\"'\"'[^']*')*", text)]
    # nor is the `touch PWNED2` of a name the prose shows as it is ("move <path> out of the log dir")
    quoted += [m.span() for m in re.finditer(re.escape(SHELL_DIR), text)]
    for m in start.finditer(text):
        if any(a < m.start() < b for a, b in quoted):
            continue
        out, i, state = [], m.start(), ""
        while i < len(text):
            c = text[i]
            if state == "'":
                state = "" if c == "'" else state
            elif state == "$'":
                if c == "\\":
                    out.append(text[i : i + 2])
                    i += 2
                    continue
                state = "" if c == "'" else state
            elif text.startswith("$'", i):
                out.append("$'")
                i, state = i + 2, "$'"
                continue
            elif c == "'":
                state = "'"
            elif c in "()`;" or text.startswith((", ", ". ", " — "), i) or text[i:] == ".":
                break
            elif c == "<":
                out.append("PLACEHOLDER")
                i = text.index(">", i) + 1
                continue
            out.append(c)
            i += 1
        yield "".join(out).strip()


def run_stubbed(cmd: str, tmp: Path) -> tuple[subprocess.CompletedProcess[str], list[list[bytes]]]:
    """``bash -c cmd`` in an empty work dir (but two files a glob would find) with only stub commands on the
    PATH: each records its argv, none does anything."""
    stubs, work, log = tmp / "stubs", tmp / "work", tmp / "argv.log"
    for d in (stubs, work):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
    log.write_bytes(b"")
    for v in VERBS:
        (stubs / v).write_text(STUB)
        (stubs / v).chmod(0o755)
    (work / "a").write_text("")
    (work / "b").write_text("")
    env = {"PATH": str(stubs), "STUBLOG": str(log), "HOME": str(work)}
    r = subprocess.run(["/bin/bash", "-c", cmd], cwd=work, env=env, capture_output=True, text=True)
    calls = [rec.split(b"\0")[:-1] for rec in log.read_bytes().split(b"\n--END--\n") if rec]
    assert sorted(p.name for p in work.iterdir() if not p.name.startswith("delete-")) == ["a", "b"], cmd
    return r, calls


def test_every_printed_command_takes_each_name_as_one_literal_word(
    outputs: dict[str, str], tmp_path: Path
) -> None:
    report = json.loads(outputs["json"])
    tried: dict[str, int] = {}
    for f in report["findings"]:
        for cmd in commands(f["remediation"]):
            if "PWNED" not in cmd:
                continue
            r, calls = run_stubbed(cmd, tmp_path)
            assert "syntax error" not in r.stderr, (f["check"], cmd, r.stderr)
            # the payloads did not run: no `touch PWNED`, no file made; the glob did not expand to a, b
            assert not any(c[0] == b"touch" and c[1:] in ([b"PWNED"], [b"PWNED2"]) for c in calls), (
                cmd,
                calls,
            )
            args = [a for c in calls for a in c[1:]]
            assert b"a" not in args and b"b" not in args, (cmd, calls)
            # and the name reached the command whole, payload and all
            assert calls and calls[0][0] == cmd.split()[0].encode(), (cmd, r.stderr)
            assert any(os.fsencode(SHELL_PAYLOAD) in a for a in args), (cmd, calls)
            tried[f["check"]] = tried.get(f["check"], 0) + 1
    # the checks that print a command with a path or a topic of this host, each tried at least once
    assert COMMAND_CHECKS <= set(tried), tried


def test_the_delete_dirs_remove_command_removes_exactly_them(outputs: dict[str, str], tmp_path: Path) -> None:
    """The issue's example: `rm -rf` of the -delete dirs, one of them named t$(touch${IFS}X)-0.<uuid>-delete and
    one not UTF-8 with an escape sequence, names exactly those dirs (as bytes) and nothing else."""
    report = json.loads(outputs["json"])
    [f] = [f for f in report["findings"] if f["check"] == "DIR003" and f["details"].get("kind") == "delete"]
    assert len(f["details"]["paths"]) == 2
    [cmd] = [c for c in commands(f["remediation"]) if c.startswith("rm ")]
    assert "\x1b" not in cmd and "\n" not in cmd  # shown as $'...\x1b...', not as a raw escape
    r, calls = run_stubbed(cmd, tmp_path)
    assert r.returncode == 0, r.stderr
    assert calls == [[b"rm", b"-rf", *(os.fsencode(p) for p in f["details"]["paths"])]]
    assert any(p.endswith(NOT_UTF8_DIR) for p in calls[0][2:])


def test_text_outputs_show_control_characters_escaped(outputs: dict[str, str]) -> None:
    report = json.loads(outputs["json"])
    shown = printable(HOSTILE_TOPIC)  # t$(touch${IFS}PWNED)*\e[31m\n[bold red]forged\r
    assert shown == "t$(touch${IFS}PWNED)*\\e[31m\\n[bold red]forged\\r"
    for fmt in ("brief", "table", "markdown"):
        text = outputs[fmt]
        assert not RAW_CONTROL.search(text), (fmt, RAW_CONTROL.search(text))
        # the topic's forecast finding names it escaped, on its own line, with the markup shown as written
        assert shown in text, fmt
        assert not any(x.lstrip("| ").startswith("[bold red]forged") for x in text.splitlines()), fmt
    # brief: one line per finding, then the verdict; no name added a line
    assert len(outputs["brief"].splitlines()) == len(report["findings"]) + 1
    # a name that is not UTF-8 is shown by its bytes
    assert "bad\\xff\\e[2J-0." in outputs["brief"]


def test_junit_stays_valid_xml(outputs: dict[str, str]) -> None:
    root = ET.fromstring(outputs["junit"].encode("utf-8"))
    text = "".join(root.itertext()) + "".join(v for e in root.iter() for v in e.attrib.values())
    assert not RAW_CONTROL.search(text.replace("\n", ""))
    assert "$(touch${IFS}PWNED)" in text and printable(HOSTILE_TOPIC) in text


def test_forecast_table_takes_no_markup_from_names(hostile: HostileHost) -> None:
    r = cli("forecast", *hostile.audit_args(None))
    assert r.returncode == 0, r.stderr
    assert not RAW_CONTROL.search(r.stdout)
    # rich would have made "[bold red]" a style and swallowed it; escaped, it is shown as written
    # (a folded cell may break "[bold red]" at its space: "red]forged" stays whole)
    assert "red]forged" in r.stdout and "\\e[31m" in r.stdout


def test_a_checkpoint_linked_to_a_secret_file_does_not_print_it(outputs: dict[str, str]) -> None:
    for fmt, text in outputs.items():
        assert "SECRETHASH" not in text, fmt
        assert "19000:0:99999" not in text, fmt
    # a malformed line is named by its number, not by its content (the line forged into kafka-1's)
    report = json.loads(outputs["json"])
    errs = [e["error"] for e in report["errors"]]
    assert any("(content not shown)" in e for e in errs), errs
    assert not any("forged" in e for e in errs), errs


@pytest.mark.parametrize(
    "name",
    [
        "plain", "a b", "it's", '"x"', "$(touch X)", "`touch X`", "*", "-rf", "a\nb", "\x1b[31m", "\r", "\x7f",
        "é", "bad\udcff", "\\", "$'x'", "tab\there", "\u202eevil",
    ],
)  # fmt: skip
def test_q_is_one_bash_word_for_exactly_the_name(name: str, tmp_path: Path) -> None:
    word = q(name)
    assert not RAW_CONTROL.search(word) and "\n" not in word
    r = subprocess.run(
        ["/bin/bash", "-c", f"printf '%s\\0' {word}"],
        cwd=tmp_path,
        capture_output=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0 and r.stdout == os.fsencode(name) + b"\0"
    assert list(tmp_path.iterdir()) == []


def test_content_free_keeps_the_line_number_and_drops_the_bytes() -> None:
    assert content_free("malformed line 7: 'root:$6$x'") == "malformed line 7 (content not shown)"
    assert content_free("malformed version line 'root:x': out of int range") == (
        "malformed version line (content not shown): out of int range"
    )
    assert (
        content_free("Expected [2] entries but found only [1]") == "Expected [2] entries but found only [1]"
    )


def test_dump_shows_a_hostile_file_name_escaped(hostile: HostileHost) -> None:
    part = hostile.host.partitions[f"{HOSTILE_TOPIC}-0"]
    r = cli("dump", os.path.join(part, "00000000000000000000.log"))
    assert r.returncode == 0, r.stderr
    assert not RAW_CONTROL.search(r.stdout) and not RAW_CONTROL.search(r.stderr)
    assert r.stdout.startswith("Dumping ") and printable(HOSTILE_TOPIC) in r.stdout.splitlines()[0]


# ------------------------------------------------------------------ issue 37: every remediation, every output
_ANSI_C = re.compile(r"\$'((?:[^'\\]|\\.)*)'")
# each hostile name and a piece of it that only it holds
_NAMES = {
    HOSTILE_TOPIC: "forged", SHELL_DIR: "PWNED2", DELETE_DIR: DELETE_DIR[-12:],
    os.fsdecode(NOT_UTF8_DIR): os.fsdecode(NOT_UTF8_DIR)[-12:],
}  # fmt: skip


def _ansi_c(body: str) -> str:
    """What bash makes of a $'...' word's body (the escapes engine.shell.q writes), as a surrogateescape'd str."""
    out, i = bytearray(), 0
    while i < len(body):
        if body[i] == "\\" and body[i + 1] == "x":
            out.append(int(body[i + 2 : i + 4], 16))
            i += 4
        elif body[i] == "\\":
            out += body[i + 1].encode()
            i += 2
        else:
            out += body[i].encode()
            i += 1
    return os.fsdecode(bytes(out))


def shell_words(cmd: str) -> list[str]:
    """The words of a command as bash splits them: shlex (POSIX), with bash's $'...' words decoded first."""
    import shlex

    return shlex.split(_ANSI_C.sub(lambda m: shlex.quote(_ansi_c(m.group(1))), cmd))


def test_every_remediation_quotes_every_name_in_text_markdown_and_json(outputs: dict[str, str]) -> None:
    """Every command of every check's remediation, from the JSON report (decoded, as `jq -r` shows it), the
    Markdown and the text table: no line starts with the broker user's text (a name's newline would make its rest
    a command of its own when pasted) and, in each command, every hostile name is one shell word, whole."""
    report = json.loads(outputs["json"])
    remediations = {fmt: [] for fmt in ("json", "markdown")}  # type: dict[str, list[tuple[str, str]]]
    for f in report["findings"]:
        remediations["json"].append((f["check"], f["remediation"]))
    for line in outputs["markdown"].splitlines():
        if line.startswith("| ") and not line.startswith("| check |") and not line.startswith("|---"):
            cells = re.split(r"(?<!\\) \| ", line[2:-2])
            remediations["markdown"].append((cells[0], cells[-1].replace("\\|", "|")))
    assert remediations["markdown"] and len(remediations["json"]) == len(report["findings"])
    # no line of any output (a remediation decoded from JSON included) starts with a name's text after its newline
    texts = [outputs["table"], outputs["markdown"], outputs["brief"]]
    texts += [f[k] for f in report["findings"] for k in ("remediation", "message")]
    for text in texts:
        assert not RAW_CONTROL.search(text), RAW_CONTROL.search(text)
        for line in text.splitlines():
            assert not line.lstrip("|│ ").startswith("[bold red]forged"), line
    tried: set[str] = set()
    for fmt, rems in remediations.items():
        for check_id, rem in rems:
            for cmd in commands(rem):
                words = shell_words(cmd)
                for name, marker in _NAMES.items():
                    # a word with a piece of the name holds the name whole (a path ending in it, or the name)
                    for w in words:
                        if marker in w:
                            assert name in w, (fmt, check_id, name, cmd, words)
                            tried.add(check_id)
                # and no word is a piece of a name cut off: the payload never stands alone
                assert not any(w.startswith(("$(touch", "`touch", "[bold", "forged")) for w in words), (
                    fmt,
                    cmd,
                )
    assert COMMAND_CHECKS <= tried, tried
