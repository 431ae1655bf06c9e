"""Fill the template: the page data as JSON and Apache ECharts inline (kafka_ops/report/vendor/README.md)."""

from __future__ import annotations

import importlib.resources as res
import json
from typing import Any

ECHARTS_VERSION = "6.1.0"


def _asset(name: str) -> str:
    return (res.files(__package__) / name).read_text(encoding="utf-8")


def _json_for_script(data: dict[str, Any]) -> str:
    """JSON that cannot end its <script> element early: '<', '>' and '&' as \\u escapes (still valid JSON)."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str)
    return (
        text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    )  # fmt: skip


def render(reports: list[dict[str, Any]], sources: list[str] | None = None) -> str:
    """The HTML page for ``reports`` (validated report dicts)."""
    import html

    from kafka_ops.report.data import build

    data = build(reports, sources)
    page = _asset("template.html")
    # order matters: the data and the library may contain the other placeholders' text
    page = page.replace("__TITLE__", html.escape(data["title"]))
    page = page.replace("__ECHARTS_VERSION__", ECHARTS_VERSION)
    head, tail = page.split("__DATA__", 1)
    lib_head, lib_tail = tail.split("__ECHARTS__", 1)
    return head + _json_for_script(data) + lib_head + _asset("vendor/echarts.common.min.js") + lib_tail
