"""``scalewall catalog``: list entries, or show one."""

from __future__ import annotations

import dataclasses

import typer
from rich.table import Table

from scalewall import catalog
from scalewall.catalog.loader import KINDS
from scalewall.cli.output import console, print_json
from scalewall.errors import SpecError


def catalog_command(
    kind: str = typer.Argument("", help=f"One of: {', '.join(KINDS)}. Empty: list every kind."),
    entry_id: str = typer.Argument("", help="Show this entry in full."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the built-in catalog (accelerators, systems, links, fabrics, clusters, models)."""
    if kind and kind not in KINDS:
        raise SpecError("kind", kind, f"valid kinds: {', '.join(KINDS)}")
    kinds = [kind] if kind else list(KINDS)
    if entry_id:
        entry = catalog.lookup(kind, _catalog_id(kind, entry_id))
        data = dataclasses.asdict(entry)
        if as_json:
            print_json(data, "catalog-entry")
        else:
            for key, value in data.items():
                console.print(f"[bold]{key}[/bold] = {value}")
        return
    listing = {k: {i: e.name for i, e in catalog.entries(k).items()} for k in kinds}
    if as_json:
        print_json(listing, "catalog")
        return
    for k, items in listing.items():
        table = Table(title=k, show_header=True)
        table.add_column("id")
        table.add_column("name")
        for i, name in items.items():
            table.add_row(i, name)
        console.print(table)


def _catalog_id(kind: str, name: str) -> str:
    """The catalog id a name the other commands accept stands for: an accelerator's or a
    model's alias, a stack's alias or release (``torchtitan``, ``megatron-core-0.13``), as
    ``--gpu``, ``--model`` and ``--stack`` read them; other kinds by id."""
    if kind == "stacks":
        from scalewall.stack import preset

        return preset(name).id
    if kind == "accelerators":
        return catalog.accelerator(name).id
    if kind == "models" and catalog.find_by_file(kind, name) is None:
        return catalog.model(name).id
    return name


def register(app: typer.Typer) -> None:
    app.command("catalog")(catalog_command)
