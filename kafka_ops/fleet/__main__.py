"""``spark-submit`` entry point: ``kafka-ops fleet submit --master spark://HOST:7077 audit --inventory INV ...`` (or
``spark-submit --master ... $(python -c 'import kafka_ops.fleet.__main__ as m; print(m.__file__)') audit ...``) runs
``kafka-ops fleet audit`` on the master spark-submit set (``kafka_ops.fleet.submit`` finds pyspark's spark-submit)."""

from __future__ import annotations

import os
import sys


def _stderr_to_spark_submit() -> None:
    """spark-submit runs this driver with its stderr merged into its stdout (Spark's ``PythonRunner``), so notes,
    progress and errors would land in ``-f json > report.json``: write them to spark-submit's own stderr (the
    parent JVM's fd 2) instead, and keep stdout the report's alone."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return
    try:
        fd = os.open(f"/proc/{os.getppid()}/fd/2", os.O_WRONLY | os.O_APPEND)
    except OSError:  # not Linux, or not allowed: stderr stays merged (use -o FILE for the report)
        return
    sys.stderr.flush()
    os.dup2(fd, 2)
    os.close(fd)


def main() -> None:
    from kafka_ops.cli.framework import load_all

    _stderr_to_spark_submit()
    load_all()(["fleet", *sys.argv[1:]], prog_name="kafka-ops")


if __name__ == "__main__":
    main()
