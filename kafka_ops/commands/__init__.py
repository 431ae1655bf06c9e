"""The ``kafka-ops`` commands: one module per command, each a thin layer over the library."""

from __future__ import annotations

import importlib
import pkgutil
from enum import StrEnum
from typing import Annotated, NoReturn

import typer

from kafka_ops import __version__

app = typer.Typer(
    name="kafka-ops",
    help="Say what a Kafka broker will do with the files on its disks at its next start, why, and the fix.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


def fail(message: str, code: int = 2) -> NoReturn:
    """One line on stderr, then exit: bad input never gets a traceback."""
    typer.echo(f"kafka-ops: {message}", err=True)
    raise typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kafka-ops {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """kafka-ops: preflight and remediation for self-managed Kafka brokers."""


def load_all() -> typer.Typer:
    for m in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{m.name}")
    return app
