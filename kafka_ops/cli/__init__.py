"""Entry point of the ``kafka-ops`` command (the commands live in kafka_ops.cli.framework, whose Group turns every
error into one line on stderr and the exit codes of the contract: 0 pass, 1 findings, 2 bad input, 3 a bug)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    from kafka_ops.cli.framework import PROG, app  # each command's module is imported when it is run

    try:
        app(args=argv, prog_name=PROG)
    except KeyboardInterrupt:  # before a command runs (while importing): commands handle their own
        sys.stderr.write(f"{PROG}: interrupted\n")
        sys.exit(130)
