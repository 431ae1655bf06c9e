"""The HTML report: one self-contained page (data, template and the vendored charting library inline) built
from one or more audit reports. ``kafka-ops report`` and ``kafka-ops audit --format html`` write it."""

from __future__ import annotations

from kafka_ops.render.report.data import ReportError, build, load_report
from kafka_ops.render.report.html import render

__all__ = ["ReportError", "build", "load_report", "render"]
