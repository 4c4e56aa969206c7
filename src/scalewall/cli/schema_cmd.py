"""``scalewall schema``: the JSON Schema of a ``--json`` output or of an input file."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from scalewall.schemas import KINDS, schema


def schema_command(
    kind: Annotated[
        str | None,
        typer.Argument(help="Output or input kind; without one, list the kinds."),
    ] = None,
) -> None:
    """Print the JSON Schema of a --json output kind or an input file (no KIND: list them)."""
    if kind is None:
        width = max(len(k) for k in KINDS)
        for name, what in KINDS.items():
            print(f"{name:<{width}}  {what}")
        return
    print(json.dumps(schema(kind), indent=2))


def register(app: typer.Typer) -> None:
    app.command("schema")(schema_command)
