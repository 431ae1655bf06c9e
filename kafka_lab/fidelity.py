"""The model against the broker: the audit's ``next_start`` for a lab broker's stopped files, and a field-by-field
comparison with what that broker then did at its start (kafka_lab.observe).

When they disagree the broker is right: the differences are what the model must learn (tests/lab asserts there
are none, scenario by scenario and version by version).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from kafka_ops.rehearse.compare import DEFAULT_TOLERANCE_S, differences

__all__ = ["DEFAULT_TOLERANCE_S", "compare", "predict"]


def predict(
    log_dirs: list[Path], server_properties: Path, version: str, broker_user: str | None, *,
    now_ms: int | None = None, horizon_ms: int = 120_000, topic_configs: Path | None = None,
) -> dict[str, Any]:  # fmt: skip
    """The audit's report for a stopped lab broker (its ``next_start`` is the prediction); ``topic_configs``: a
    ``--topic-configs`` file with the overrides the topics were created with (cleanup.policy, retention.bytes)."""
    from kafka_ops.audit import run_audit
    from kafka_ops.facts.model import AuditOptions

    opts = AuditOptions(
        log_dirs=[str(d) for d in log_dirs], server_properties=str(server_properties), kafka_version=version,
        broker_user=broker_user, broker_state="stopped",
        now_ms=now_ms if now_ms is not None else int(time.time() * 1000), horizon_ms=horizon_ms,
        topic_configs=str(topic_configs) if topic_configs is not None else None,
    )  # fmt: skip
    return run_audit(opts)


def compare(
    predicted: dict[str, Any], observed: dict[str, Any], *, observed_until_ms: int | None = None,
    tolerance_s: float = DEFAULT_TOLERANCE_S,
) -> list[str]:  # fmt: skip
    """Differences between the plan and what the broker did, one line each (empty: the model was right): the
    product's own comparison (kafka_ops.rehearse.compare, which the rehearsal reports), the lab reads its lines.

    ``observed_until_ms``: when the observation ended; a deletion the plan puts later could not be seen, so it is
    not compared. The KRaft metadata log (re-read at every start by design) is left out on both sides.
    """
    return [
        d["text"]
        for d in differences(
            predicted, observed, observed_until_ms=observed_until_ms, tolerance_s=tolerance_s
        )
    ]
