"""Open a report in Debian's headless Chromium (driven by playwright, which never downloads a browser here):
record console messages, page errors and every request, take a screenshot, and count what each chart drew."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip

# per chart series: the SVG elements in the chart's own container painted in the series' colour
# (bars: fill; lines: stroke); ECharts' SVG renderer writes the colours as given, lower case
COUNT_JS = """
() => window.kafkaOpsCharts.map((c) => {
  const root = document.getElementById(c.id);
  const svg = root && root.querySelector("svg");
  const els = svg ? Array.from(svg.querySelectorAll("path, rect")) : [];
  return Object.assign({}, c, {svg: !!svg, width: svg ? svg.getBoundingClientRect().width : 0,
    series: c.series.map((s) => Object.assign({}, s, {
      fill: els.filter((e) => (e.getAttribute("fill") || "").toLowerCase() === s.color).length,
      stroke: els.filter((e) => (e.getAttribute("stroke") || "").toLowerCase() === s.color).length,
      // the most vertices of one line in the series' colour (a line of n points has n, more when stepped)
      vertices: Math.max(0, ...els.filter((e) => (e.getAttribute("stroke") || "").toLowerCase() === s.color)
        .map((e) => ((e.getAttribute("d") || "").match(/[MLC]/g) || []).length)),
    }))});
})
"""


@dataclass
class PageRun:
    console: list[tuple[str, str]] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    charts: list[dict[str, Any]] = field(default_factory=list)
    ready: bool = False
    text: str = ""
    values: dict[str, Any] = field(default_factory=dict)


def open_report(
    html: Path,
    screenshot: Path | None = None,
    width: int = 1360,
    evaluate: dict[str, str] | None = None,
    clips: list[tuple[Path, int, int]] | None = None,
) -> PageRun:
    """Open ``html``; ``screenshot`` of the full page, ``clips`` of (path, top, height) pieces of it."""
    from playwright.sync_api import sync_playwright

    run = PageRun()
    with tempfile.TemporaryDirectory(prefix="kafka-ops-chromium-") as profile, sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": width, "height": 900}, device_scale_factor=1,
        )  # fmt: skip
        try:
            page = ctx.new_page()
            page.on("console", lambda m: run.console.append((m.type, m.text)))
            page.on("pageerror", lambda e: run.page_errors.append(str(e)))
            ctx.on("request", lambda r: run.requests.append(r.url))
            page.goto(html.resolve().as_uri(), wait_until="load")
            page.wait_for_selector("body[data-ready='1']", timeout=30_000)
            run.ready = True
            run.charts = page.evaluate(COUNT_JS)
            run.text = page.inner_text("body")
            for name, js in (evaluate or {}).items():
                run.values[name] = page.evaluate(js)
            if screenshot is not None:
                page.screenshot(path=str(screenshot), full_page=True)
            for path, top, height in clips or []:
                clip = {"x": 0, "y": top, "width": width, "height": height}
                page.screenshot(path=str(path), full_page=True, clip=clip)
        finally:
            ctx.close()
    return run
