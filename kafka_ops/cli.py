"""Entry point of the ``kafka-ops`` command (the commands live in kafka_ops.commands)."""

from __future__ import annotations

import sys

import typer


def main() -> None:
    from kafka_ops.commands import load_all

    try:
        load_all()()
    except KeyboardInterrupt:
        typer.echo("kafka-ops: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)


if __name__ == "__main__":
    main()
