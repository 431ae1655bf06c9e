"""Deprecated path: the broker's own logs moved to ``kafka_ops.facts.brokerlogs`` (issue 24)."""

import warnings

from kafka_ops.facts.brokerlogs import *  # noqa: F403
from kafka_ops.facts.brokerlogs import CleanerDeath, cleaner_deaths  # noqa: F401 (the documented names)

warnings.warn("kafka_ops.brokerlogs moved to kafka_ops.facts.brokerlogs", DeprecationWarning, stacklevel=2)
