"""``scalewall fit``: fit every constant the published runs determine; write a profile."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from scalewall.calibrate import Calibration, write_profile
from scalewall.calibrate.published import (
    FIXED,
    fit_published,
    provenance,
)
from scalewall.cli.output import console, print_json
from scalewall.validation.runs import read_runs, shipped_runs_paths


def fit_command(
    inputs: Annotated[
        list[Path] | None,
        typer.Argument(help="scalewall-runs/1 files (default: the shipped ones)."),
    ] = None,
    output: Annotated[Path, typer.Option("--output", "-o", help="Profile to write (TOML).")] = Path(
        "scalewall-fit.toml"
    ),
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Fit the constants that only whole training steps determine (and each accelerator's
    sustained clock) over published runs; write a calibration profile with provenance. The
    shipped defaults are this command's output over the shipped runs."""
    paths = list(inputs) if inputs else list(shipped_runs_paths())
    cases = [c for p in paths for c in read_runs(p)]
    result = fit_published(cases)
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    cal = Calibration.from_fit(result, created_utc=now, provenance=provenance(paths, cases))
    write_profile(cal, output)
    rows = {
        n: {
            "default": result.defaults[n],
            "value": result.values[n],
            "standard_error": result.standard_errors[n],
        }
        for n in result.names
    }
    if as_json:
        print_json({"profile": str(output), "fitted": rows, "fixed": FIXED}, "fit")
        return
    table = Table("constant", "default", "fitted", "std. error", title="Fitted on published runs")
    for n, r in rows.items():
        table.add_row(n, f"{r['default']:.4g}", f"{r['value']:.4g}", f"{r['standard_error']:.2g}")
    console.print(table)
    fixed = Table("constant", "why it is not fitted here", title="Kept at their defaults")
    for n, why in FIXED.items():
        fixed.add_row(n, why)
    console.print(fixed)
    console.print(f"{len(cases)} runs from {len(paths)} files; profile written to {output}")


def register(app: typer.Typer) -> None:
    app.command("fit")(fit_command)
