"""``python -m kafka_ops.cli``: the CLI, as ``python -m kafka_ops`` and the ``kafka-ops`` script run it."""

from kafka_ops.cli import main

main()
