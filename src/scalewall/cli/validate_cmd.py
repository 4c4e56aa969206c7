"""``scalewall validate``: predict published training runs and show the errors; with ``--cv
source`` (or ``--holdout GROUP``) refit the fitted constants without each source group and show
its out-of-sample error; with ``--calibration FILE`` check a profile against the runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import Progress
from rich.table import Table

from scalewall.cli.common import JsonOpt, check_output_path
from scalewall.cli.output import console, print_json
from scalewall.errors import SpecError
from scalewall.validation.harness import ValidationReport, validate_cases
from scalewall.validation.runs import Case, read_runs_file

if TYPE_CHECKING:
    from scalewall.calibrate.published import CrossValidation

CV_MODES = ("source",)


def validate_command(
    cases: Annotated[
        Path | None, typer.Option("--cases", help="A scalewall-runs/1 file (default: built-in).")
    ] = None,
    cv: Annotated[
        str | None,
        typer.Option(
            "--cv",
            help="'source': refit the fitted constants without each source group and predict "
            "it; print in-sample and out-of-sample MAPE per group.",
        ),
    ] = None,
    holdout: Annotated[
        list[str] | None,
        typer.Option("--holdout", help="Hold out only this group (repeatable); implies --cv."),
    ] = None,
    write_errors: Annotated[
        Path | None,
        typer.Option(
            "--write-errors",
            help="With --cv: write each group's out-of-sample step-time errors (the file "
            "estimate draws uncalibrated intervals from).",
        ),
    ] = None,
    calibration: Annotated[
        Path | None,
        typer.Option("--calibration", help="Predict with this calibration profile (TOML)."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Predict every case of a scalewall-runs/1 file; print published vs predicted. A case that
    cannot be read or modelled is one error line and the others run (exit 0); an unreadable
    file exits 2."""
    if cv is not None and cv not in CV_MODES:
        raise SpecError("--cv", cv, f"one of: {', '.join(CV_MODES)}")
    check_output_path("--write-errors", write_errors)
    runs = read_runs_file(cases)
    if cv or holdout:
        if calibration is not None:
            raise SpecError("--calibration", str(calibration), "not with --cv or --holdout")
        _cross_validate(runs.cases, holdout or None, as_json, write_errors)
        return
    if calibration is not None:
        _check_calibration(runs.cases, calibration, as_json)
        return
    report = validate_cases(runs.cases, read_errors=runs.errors)
    if as_json:
        print_json(report.to_dict(), "validation")
        return
    _print_report(report)


def _print_report(report: ValidationReport, baseline: ValidationReport | None = None) -> None:
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
    columns = ["group", "metrics", "MAPE", "worst |error|"]
    base = baseline.groups() if baseline else {}
    groups = Table(*columns, *(["MAPE, defaults"] if baseline else []))
    for name, g in report.groups().items():
        row = [name, f"{g['metrics']:.0f}", f"{g['mape']:.1%}", f"{g['max_abs_error']:.1%}"]
        if baseline:
            row.append(f"{base[name]['mape']:.1%}" if name in base else "-")
        groups.add_row(*row)
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


def _check_calibration(cases: list[Case], path: Path, as_json: bool) -> None:
    """The runs predicted with a profile's constants and clocks, beside the defaults."""
    from scalewall.calibrate import read_profile

    cal = read_profile(path)
    report = validate_cases(cases, cal.efficiency(), clocks=cal.clocks())
    baseline = validate_cases(cases)
    if as_json:
        print_json(
            {
                **report.to_dict(),
                "calibration": str(path),
                "defaults_groups": baseline.groups(),
            },
            "validation",
        )
        return
    _print_report(report, baseline)
    console.print(f"predicted with calibration {path}", markup=False)


def _cross_validate(
    cases: list[Case], holdout: list[str] | None, as_json: bool, write_errors: Path | None
) -> None:
    import sys

    from scalewall.calibrate.published import cross_validate, out_of_sample_groups
    from scalewall.validation.error_bars import write_groups

    groups = sorted(set(holdout) if holdout else {c.group for c in cases})
    with Progress(console=console, transient=True, disable=as_json) as bar:
        task = bar.add_task("fitting", total=len(groups) + 1)

        def step(what: str) -> None:
            bar.update(task, description=what, advance=0 if what.endswith("group") else 1)

        result = cross_validate(cases, holdout=holdout, progress=step)
        bar.update(task, completed=len(groups) + 1)
    if write_errors is not None:
        command = " ".join(["scalewall", *sys.argv[1:]])
        write_groups(out_of_sample_groups(result, cases), write_errors, command)
    if as_json:
        print_json(result.to_dict(), "cross-validation")
        return
    print_cross_validation(result)


def print_cross_validation(result: CrossValidation) -> None:
    table = Table(
        "held-out group",
        "n",
        "defaults",
        "in-sample",
        "out-of-sample",
        "worst out",
        title="MAPE, leaving one source group out (refit without it, predict it)",
    )
    for name, g in result.groups().items():
        table.add_row(
            name,
            f"{g['metrics']:.0f}",
            f"{g['defaults_mape']:.1%}",
            f"{g['in_sample_mape']:.1%}",
            f"{g['out_of_sample_mape']:.1%}",
            f"{g['out_of_sample_max_abs_error']:.1%}",
        )
    o = result.overall()
    table.add_row(
        "overall",
        f"{o['metrics']:.0f}",
        f"{o['defaults_mape']:.1%}",
        f"{o['in_sample_mape']:.1%}",
        f"{o['out_of_sample_mape']:.1%}",
        "",
    )
    console.print(table)
    fit = result.full_fit
    constants = Table("constant", "default", "fitted on every group", "std. error")
    for n in fit.names:
        constants.add_row(
            n, f"{fit.defaults[n]:.4g}", f"{fit.values[n]:.4g}", f"{fit.standard_errors[n]:.2g}"
        )
    console.print(constants)
    console.print(
        "n: metrics compared; defaults: the constants the model uses today; in-sample: fitted "
        "on every group; out-of-sample: fitted without the group (the error to expect on runs "
        "not in the files); worst out: the largest out-of-sample |error|",
        markup=False,
    )


def register(app: typer.Typer) -> None:
    app.command("validate")(validate_command)
