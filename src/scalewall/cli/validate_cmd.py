"""``scalewall validate``: predict published training runs and show the errors."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from scalewall.cli.common import JsonOpt
from scalewall.cli.output import console, print_json
from scalewall.validation.harness import validate_cases
from scalewall.validation.runs import read_runs


def validate_command(
    cases: Annotated[
        Path | None, typer.Option("--cases", help="A scalewall-runs/1 file (default: built-in).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Predict every case of a scalewall-runs/1 file; print published vs predicted."""
    report = validate_cases(read_runs(cases))
    if as_json:
        print_json(report.to_dict())
        return
    table = Table("case", "metric", "published", "predicted", "error", "chosen")
    for c in report.comparisons:
        chosen = " ".join(f"{k}={v}" for k, v in c.chosen.items())
        table.add_row(
            c.id,
            c.metric,
            f"{c.published:.4g}",
            f"{c.predicted:.4g}",
            f"{c.error_frac:+.1%}",
            chosen,
        )
    console.print(table)
    groups = Table("group", "metrics", "MAPE", "worst |error|")
    for name, g in report.groups().items():
        groups.add_row(name, f"{g['metrics']:.0f}", f"{g['mape']:.1%}", f"{g['max_abs_error']:.1%}")
    console.print(groups)
    for case_id, (published, predicted) in report.fits.items():
        console.print(f"{case_id}: published fits={published}, predicted fits={predicted}")


def register(app: typer.Typer) -> None:
    app.command("validate")(validate_command)
