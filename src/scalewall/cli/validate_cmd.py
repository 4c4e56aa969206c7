"""``scalewall validate``: predict published training runs and show the errors."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from scalewall.cli.common import JsonOpt
from scalewall.cli.output import console, print_json
from scalewall.validation.harness import validate_cases
from scalewall.validation.runs import read_runs_file


def validate_command(
    cases: Annotated[
        Path | None, typer.Option("--cases", help="A scalewall-runs/1 file (default: built-in).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Predict every case of a scalewall-runs/1 file; print published vs predicted. A case that
    cannot be read or modelled is one error line and the others run (exit 0); an unreadable
    file exits 2."""
    runs = read_runs_file(cases)
    report = validate_cases(runs.cases, read_errors=runs.errors)
    if as_json:
        print_json(report.to_dict())
        return
    table = Table("case", "stack", "metric", "published", "predicted", "error", "chosen")
    for c in report.comparisons:
        chosen = " ".join(f"{k}={v}" for k, v in c.chosen.items())
        table.add_row(
            c.id,
            c.stack,
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
        mismatch = "  MISMATCH" if published != predicted else ""
        console.print(
            f"{case_id}: published fits={published}, predicted fits={predicted}{mismatch}",
            markup=False,
        )
    for w in report.warnings:
        console.print(f"warning: {w.id}: {w.text}", markup=False, soft_wrap=True)
    for e in report.errors:
        console.print(f"error: {e.id}: {e.text}", markup=False, soft_wrap=True)
    compared = len({c.id for c in report.comparisons})
    console.print(
        f"{compared} cases compared, {len(report.fit_mismatches)} fit mismatches, "
        f"{len(report.warnings)} warnings, {len(report.errors)} errors",
        markup=False,
    )


def register(app: typer.Typer) -> None:
    app.command("validate")(validate_command)
