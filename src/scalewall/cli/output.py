"""Shared output helpers for subcommands: rich tables and progress bars for people; JSON to
stdout (``plain``, re-exported here)."""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from scalewall.cli.plain import JSON_VERSION, NullProgress, plain, print_json

if TYPE_CHECKING:
    from rich.progress import Progress

__all__ = [
    "JSON_VERSION",
    "Column",
    "NullProgress",
    "column",
    "console",
    "err_console",
    "fitting_columns",
    "plain",
    "print_json",
    "print_table",
    "progress",
]

console = Console()
err_console = Console(stderr=True)


@dataclass(frozen=True, kw_only=True)
class Column:
    """One column of a terminal table."""

    header: str
    priority: int = 0
    """0: always shown; larger numbers are dropped first when the console is too narrow."""
    justify: Literal["left", "right"] = "left"


def column(header: str, priority: int = 0, *, right: bool = False) -> Column:
    """A column; ``right`` right-justifies it (numbers)."""
    return Column(header=header, priority=priority, justify="right" if right else "left")


def _table(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], keep: Sequence[int], title: str | None
) -> Table:
    # No outer border: two characters per table that an 80-column terminal needs for data.
    table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, collapse_padding=True)
    for i in keep:
        c = columns[i]
        # fold, never ellipsis: a cell too long for its column wraps onto the next line.
        table.add_column(c.header, justify=c.justify, overflow="fold")
    for row in rows:
        table.add_row(*(row[i] for i in keep))
    return table


def _natural_width(table: Table, out: Console) -> int:
    return Measurement.get(out, out.options.update(width=10**6), table).maximum


def fitting_columns(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int
) -> list[int]:
    """Indices, in table order, of the columns shown in ``width`` characters: every
    priority-0 column, then the others by priority (ties left to right) while the table's
    natural width still fits; a column that does not fit is skipped, a narrower later one
    may still fit."""
    keep = [i for i, c in enumerate(columns) if c.priority == 0]
    optional = sorted((c.priority, i) for i, c in enumerate(columns) if c.priority > 0)
    measure = Console(width=10**6, file=io.StringIO())
    for _, i in optional:
        trial = sorted([*keep, i])
        if _natural_width(_table(columns, rows, trial, None), measure) <= width:
            keep = trial
    return keep


PIPED_WIDTH = 80
"""Table width when stdout is not a terminal and ``COLUMNS`` is not set."""


def table_width(out: Console) -> int:
    """The width tables are fitted to: the terminal's, else ``COLUMNS``, else 80. (Rich's own
    ``console.width`` reads the size of any terminal among stdin/stdout/stderr, so a piped
    command run from a wide terminal would otherwise get that terminal's width.)"""
    if out.is_terminal:
        return out.width
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else PIPED_WIDTH


def print_table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    wide: bool = False,
    out: Console | None = None,
) -> None:
    """Print a table that fits the console (``table_width``: the terminal's, else
    ``COLUMNS``, else 80): low-priority columns are dropped rather than squeezed, and one line
    says how many are hidden. ``wide`` shows every column (cells may wrap)."""
    out = out or console
    width = table_width(out)
    keep = list(range(len(columns))) if wide else fitting_columns(columns, rows, width)
    out.print(_table(columns, rows, keep, title), width=width)
    hidden = len(columns) - len(keep)
    if hidden:
        out.print(
            f"{hidden} column{'s' if hidden > 1 else ''} hidden; --wide shows all", style="dim"
        )


def progress(*columns: Any, disabled: bool = False) -> Progress | NullProgress:
    """A transient progress bar on stderr, shown only when stderr is a terminal (never in
    ``--json`` runs, which pass ``disabled``); otherwise a ``NullProgress``."""
    if disabled or not err_console.is_terminal:
        return NullProgress()
    from rich.progress import Progress

    return Progress(*columns, console=err_console, transient=True)
