"""Waivers: acknowledged findings stay in the report, marked waived, and do not fail the gate (``--waive``,
``--waive-file``, the kafka_preflight role's ``kafka_preflight_waived_checks``). Standard library only (shipped)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Waiver:
    """An acknowledged finding: reported (``waived: true``) but not failing the gate. As the kafka_preflight role's
    ``kafka_preflight_waived_checks`` (a check id waives all its findings), plus an optional glob over the
    finding's path (fnmatch: ``*`` also matches ``/``; a finding without a path is matched on its log dir)."""

    check: str
    glob: str | None
    reason: str | None
    source: str  # where it was given: "--waive" or "FILE:LINE"

    @property
    def rule(self) -> str:
        return f"{self.check}:{self.glob}" if self.glob else self.check

    def matches(self, f: dict[str, Any]) -> bool:
        if f["check"] != self.check:
            return False
        if self.glob is None:
            return True
        import fnmatch

        where = f.get("path") or f.get("log_dir")
        return where is not None and fnmatch.fnmatchcase(where, self.glob)


def close_ids(word: str, ids: list[str]) -> list[str]:
    """The check ids someone typing ``word`` most likely meant: its family first (PERM -> PERM001, ...), then
    near spellings (PREM001 -> PERM001)."""
    import difflib

    w = word.strip().upper()
    stem = w.rstrip("0123456789")
    family = [i for i in ids if stem and i.startswith(stem) and i.rstrip("0123456789") == stem]
    near = difflib.get_close_matches(w, ids, n=3, cutoff=0.5)
    return list(dict.fromkeys(family[:4] + near))[:4]


def parse_waiver(text: str, source: str, known: Iterable[str]) -> Waiver:
    """'CHECK[:PATH-GLOB] [reason]' (a '#' before the reason is dropped). ValueError names what is wrong."""
    rule, *rest = text.strip().split(None, 1)
    reason = (rest[0] if rest else "").strip().lstrip("#").strip() or None
    check, sep, glob = rule.partition(":")
    check = check.strip().upper()
    known = list(known)
    if check not in known:
        near = close_ids(check, known)
        hint = f" (did you mean {', '.join(near)}?)" if near else " (`kafka-ops checks` lists them)"
        raise ValueError(f"no check {rule.partition(':')[0]!r}{hint}")
    if sep and not glob:
        raise ValueError(
            f"{rule!r}: the path glob after ':' is empty (give CHECK alone to waive all its findings)"
        )
    return Waiver(check, glob or None, reason, source)


def read_waivers(path: str, known: Iterable[str]) -> list[Waiver]:
    """A waiver file: one waiver per line, blank lines and '#' comment lines ignored."""
    from kafka_ops.engine.errors import EngineError
    from kafka_ops.engine.fileio import read_bytes

    known = list(known)
    try:
        text = read_bytes(path, follow=True).decode("utf-8")  # a FIFO is refused, never waited on
    except EngineError as exc:
        raise ValueError(str(exc)) from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            out.append(parse_waiver(line, f"{path}:{n}", known))
        except ValueError as exc:
            raise ValueError(f"{path}:{n}: {exc}") from None
    return out


def waivers_from(texts: Iterable[str], path: str | None) -> list[Waiver]:
    """The waivers of --waive (``texts``) and --waive-file (``path``), as the CLI and the collector take them;
    ValueError names the option and what is wrong (an unknown check id too: a waiver that silently matches
    nothing is a gate that fails for no visible reason)."""
    from kafka_ops.checks import load_all

    known = list(load_all())
    out = []
    for text in texts:
        try:
            out.append(parse_waiver(text, "--waive", known))
        except ValueError as exc:
            raise ValueError(f"--waive: {exc}") from None
    if path is not None:
        try:
            out += read_waivers(path, known)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"--waive-file: {exc}") from None
        except OSError as exc:
            raise ValueError(
                f"--waive-file: {path}: cannot read: {(exc.strerror or str(exc)).lower()}"
            ) from None
    return out


def apply_waivers(report: dict[str, Any], waivers: list[Waiver]) -> list[dict[str, Any]]:
    """Mark the findings the waivers match (``waived``, ``waived_reason``, ``waived_by``; the first matching
    waiver wins); returns each waiver with the number of findings it matched (for the gate)."""
    used = [0] * len(waivers)
    for f in report["findings"]:
        f["waived"] = False
        for i, w in enumerate(waivers):
            if w.matches(f):
                f.update(waived=True, waived_reason=w.reason, waived_by=f"{w.rule} ({w.source})")
                used[i] += 1
                break
    return [
        {"rule": w.rule, "reason": w.reason, "source": w.source, "matched": n} for w, n in zip(waivers, used)
    ]
