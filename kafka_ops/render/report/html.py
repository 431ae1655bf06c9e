"""Fill the template: the page data as JSON and Apache ECharts inline (kafka_ops/render/report/vendor/README.md)."""

from __future__ import annotations

import base64
import hashlib
import importlib.resources as res
import json
import re
from typing import Any

from kafka_ops.engine.shell import printable

ECHARTS_VERSION = "6.1.0"


def _asset(name: str) -> str:
    return (res.files(__package__) / name).read_text(encoding="utf-8")


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _json_for_script(data: dict[str, Any]) -> str:
    """JSON that cannot end its <script> element early: '<', '>' and '&' as \\u escapes (still valid JSON)."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str)
    # a name that is not UTF-8 (surrogateescape'd bytes) shown by its bytes, as the text output shows it: the
    # page is UTF-8 and a lone surrogate cannot be written in it
    text = _SURROGATE.sub(lambda m: "\\\\" + printable(m.group())[1:], text)
    return (
        text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    )  # fmt: skip


def script_hashes(page: str) -> list[str]:
    """The CSP source of each inline script that runs (``<script>`` without attributes: the JSON data block is
    not run): ``'sha256-...'`` of its text as the browser hashes it (UTF-8)."""
    return [
        "'sha256-" + base64.b64encode(hashlib.sha256(m.group(1).encode("utf-8")).digest()).decode() + "'"
        for m in re.finditer(r"<script>(.*?)</script>", page, re.S)
    ]


def render(reports: list[dict[str, Any]], sources: list[str] | None = None) -> str:
    """The HTML page for ``reports`` (validated report dicts).

    The page's CSP allows only its own two scripts (ECharts and the page's code), by hash: a name in the data
    that got into the DOM as HTML could not run script."""
    import html

    from kafka_ops.render.report.data import build

    data = build(reports, sources)
    # split the template before anything from the data is put in: a host or path may hold a placeholder's text
    head, tail = _asset("template.html").split("__DATA__", 1)
    lib_head, lib_tail = tail.split("__ECHARTS__", 1)
    body = (
        lib_head.replace("__ECHARTS_VERSION__", ECHARTS_VERSION)
        + _asset("vendor/echarts.common.min.js")
        + lib_tail
    )
    csp = " ".join(script_hashes(body))
    head = head.replace("__SCRIPT_SRC__", csp).replace("__TITLE__", html.escape(printable(data["title"])))
    return head + _json_for_script(data) + body
