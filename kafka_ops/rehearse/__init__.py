"""Rehearse a stopped node's next start: its own Kafka, on a copy-on-write view of its log dirs, in a sandbox
(kafka_ops.rehearse.sandbox says how and why), compared with the audit's plan (docs/rehearse.md)."""

from kafka_ops.rehearse.run import RehearsalRefused, RehearseOptions, failed, rehearse

__all__ = ["RehearsalRefused", "RehearseOptions", "failed", "rehearse"]
