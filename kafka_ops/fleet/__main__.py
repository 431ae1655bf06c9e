"""``spark-submit`` entry point: ``spark-submit --master spark://HOST:7077 $(python -c 'import kafka_ops.fleet.__main__ as
m; print(m.__file__)') audit --inventory INV ...`` runs ``kafka-ops fleet audit`` on the master spark-submit set."""

from __future__ import annotations

import sys


def main() -> None:
    from kafka_ops.commands import load_all

    load_all()(["fleet", *sys.argv[1:]], prog_name="kafka-ops fleet")


if __name__ == "__main__":
    main()
