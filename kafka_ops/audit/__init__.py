"""The audit as a library: gather facts, run every check, return the report (a JSON-ready dict); its context,
waivers and options. Standard library only (shipped to broker hosts in the collector).

``kafka_ops.audit`` keeps the names it had as one module (``run_audit``, ``AuditContext``, ``waivers_from``, ...).
"""

from kafka_ops.audit.context import AuditContext
from kafka_ops.audit.run import (
    INPUT_REASONS,
    REPORT_SCHEMA_VERSION,
    apply_gate,
    cluster_findings,
    finding_line,
    finding_order,
    log_dir_summary,
    partition_row,
    prepare_partition,
    run_audit,
    run_summary,
    unusable,
    update_aggregate,
)
from kafka_ops.audit.waivers import Waiver, apply_waivers, close_ids, parse_waiver, read_waivers, waivers_from

__all__ = [
    "INPUT_REASONS",
    "REPORT_SCHEMA_VERSION",
    "AuditContext",
    "Waiver",
    "apply_gate",
    "apply_waivers",
    "close_ids",
    "cluster_findings",
    "finding_line",
    "finding_order",
    "log_dir_summary",
    "parse_waiver",
    "partition_row",
    "prepare_partition",
    "read_waivers",
    "run_audit",
    "run_summary",
    "unusable",
    "update_aggregate",
    "waivers_from",
]
