"""``scalewall calibrate``: fit the step model's constants to measurements; write a profile."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from scalewall import catalog
from scalewall.calibrate import Calibration, FitResult, collect, fit, summary, write_profile
from scalewall.calibrate.parameters import PARAMETERS
from scalewall.calibrate.profile import software_provenance
from scalewall.cli.common import check_output_path, load_cluster
from scalewall.cli.output import console, print_json


def _provenance(paths: list[Path], sources: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    return {**software_provenance(), "inputs": list(sources)}


def fit_json(result: FitResult, cal: Calibration, output: Path) -> dict[str, Any]:
    """The documented ``--json`` object."""
    return {
        "profile": str(output),
        "fitted": {
            n: {
                "value": result.values[n],
                "standard_error": result.standard_errors[n],
                "default": result.defaults[n],
            }
            for n in result.names
        },
        "not_identifiable": result.not_identifiable,
        "residuals": summary(result),
        "observations": [
            {
                "label": r.label,
                "kind": r.kind,
                "source": r.source,
                "measured": r.measured,
                "default": r.default,
                "fitted": r.fitted,
            }
            for r in result.residuals
        ],
        "notes": list(result.notes),
        "converged": result.converged,
    }


def print_fit(result: FitResult, output: Path) -> None:
    table = Table("parameter", "default", "fitted", "std. error", title="Fitted constants")
    for n in result.names:
        table.add_row(
            n,
            f"{result.defaults[n]:.4g}",
            f"{result.values[n]:.4g}",
            f"{result.standard_errors[n]:.2g}",
        )
    console.print(table)
    if result.not_identifiable:
        kept = Table("parameter", "kept at", "why", title="Not identifiable: kept at defaults")
        for n, why in result.not_identifiable.items():
            kept.add_row(n, f"{result.defaults.get(n, float('nan')):.4g}", why)
        console.print(kept)
    res = Table(
        "kind",
        "observations",
        "error before",
        "error after",
        "scatter",
        title="Mean absolute log error (about the relative error)",
    )
    for kind, s in summary(result).items():
        res.add_row(
            kind,
            str(s["observations"]),
            f"{s['default_mean_abs_log_error']:.1%}",
            f"{s['fitted_mean_abs_log_error']:.1%}",
            f"{s['residual_log_sd']:.1%}",
        )
    console.print(res)
    for note in result.notes:
        console.print(f"note: {note}")
    console.print(f"profile written to {output}")


def calibrate_command(
    inputs: Annotated[
        list[Path],
        typer.Argument(help="Measurements files, nccl-tests logs, scalewall-runs/1 files."),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Calibration profile to write (TOML).")
    ] = Path("calibration.toml"),
    gpu: Annotated[
        str | None,
        typer.Option(
            help="Accelerator id the measurements ran on (default: the device name in the file)."
        ),
    ] = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster",
            "-c",
            help="Cluster (id or TOML) the collectives "
            "ran on (default: the accelerator's standard system).",
        ),
    ] = None,
    gpus: Annotated[int | None, typer.Option(help="GPUs of --cluster measured.")] = None,
    params: Annotated[
        str | None,
        typer.Option(
            help=f"Parameters to consider (default: what the data can inform): "
            f"{', '.join(PARAMETERS)}."
        ),
    ] = None,
    max_gpus: Annotated[
        int | None, typer.Option(help="Use only runs on at most this many GPUs.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Fit the step model's efficiency constants to your measurements; write a profile that
    estimate, search and wall accept with --calibration."""
    check_output_path("--output", output)
    resolved = load_cluster(cluster, gpu, gpus) if cluster else None
    acc = catalog.accelerator(gpu) if gpu and not cluster else None
    collected = collect(inputs, accelerator=acc, cluster=resolved, max_gpus=max_gpus)
    names = [p.strip() for p in params.split(",") if p.strip()] if params else None
    result = fit(collected, params=names)
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    cal = Calibration.from_fit(
        result, created_utc=now, provenance=_provenance(inputs, collected.sources)
    )
    write_profile(cal, output)
    if as_json:
        print_json(fit_json(result, cal, output), "calibration-fit")
    else:
        print_fit(result, output)


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate_command)
