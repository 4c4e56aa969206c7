"""``scalewall validate``: predict published training runs and show the errors; with ``--cv
source`` (or ``--holdout GROUP``) refit the fitted constants without each source group and show
its out-of-sample error; with ``--calibration FILE`` check a profile against the runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from scalewall.cli.common import JsonOpt, WideOpt, check_output_path
from scalewall.cli.output import column, console, print_json, print_table, progress
from scalewall.errors import SpecError
from scalewall.validation.harness import ValidationReport, validate_cases
from scalewall.validation.runs import (
    Case,
    held_out_runs_paths,
    read_runs_file,
    read_runs_files,
)

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
    held_out: Annotated[
        bool,
        typer.Option(
            "--held-out",
            help="Instead of the built-in fitted files, the built-in files no constant is "
            "fitted to (torchtitan, gpt-oss, ModelZoo, nanotron, NeMo AutoModel, ...): the "
            "out-of-sample check.",
        ),
    ] = False,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Predict every case of a scalewall-runs/1 file; print published vs predicted. A case that
    cannot be read or modelled is one error line and the others run (exit 0); an unreadable
    file exits 2."""
    if cv is not None and cv not in CV_MODES:
        raise SpecError("--cv", cv, f"one of: {', '.join(CV_MODES)}")
    check_output_path("--write-errors", write_errors)
    if held_out:
        if cases is not None:
            raise SpecError("--held-out", "on", "not with --cases (it names the files itself)")
        if cv or holdout:
            raise SpecError("--held-out", "on", "not with --cv or --holdout (nothing is fitted)")
        runs = read_runs_files(held_out_runs_paths())
    else:
        runs = read_runs_file(cases)
    if cv or holdout:
        if calibration is not None:
            raise SpecError("--calibration", str(calibration), "not with --cv or --holdout")
        _cross_validate(runs.cases, holdout or None, as_json, write_errors)
        return
    if calibration is not None:
        _check_calibration(runs.cases, calibration, as_json, wide)
        return
    with progress(disabled=as_json) as bar:
        task = bar.add_task("cases", total=len(runs.cases))
        report = validate_cases(
            runs.cases,
            read_errors=runs.errors,
            on_case=lambda done, _total: bar.update(task, completed=done),
        )
    if as_json:
        print_json(report.to_dict(), "validation")
        return
    _print_report(report, wide=wide)


def _print_report(
    report: ValidationReport, baseline: ValidationReport | None = None, wide: bool = False
) -> None:
    columns = [
        column("case"),
        column("stack", 2),
        column("metric"),
        column("published", right=True),
        column("predicted", right=True),
        column("error", right=True),
        column("chosen", 1),
    ]
    rows = [
        [
            escape(c.id),
            escape(c.stack),
            escape(c.metric),
            f"{c.published:.4g}",
            f"{c.predicted:.4g}",
            f"{c.error_frac:+.1%}",
            escape(" ".join(f"{k}={_value(v)}" for k, v in c.chosen.items())),
        ]
        for c in report.comparisons
    ]
    print_table(columns, rows, wide=wide)
    base = baseline.groups() if baseline else {}
    group_columns = [
        column("group"),
        column("metrics", right=True),
        column("MAPE", right=True),
        column("worst |error|", 1, right=True),
        *([column("MAPE, defaults", right=True)] if baseline else []),
    ]
    group_rows = []
    for name, g in report.groups().items():
        row = [name, f"{g['metrics']:.0f}", f"{g['mape']:.1%}", f"{g['max_abs_error']:.1%}"]
        if baseline:
            row.append(f"{base[name]['mape']:.1%}" if name in base else "-")
        group_rows.append(row)
    print_table(group_columns, group_rows, wide=wide)
    # Only the mismatches: every run that published a time or a throughput is a fit check.
    for case_id in report.fit_mismatches:
        published, predicted = report.fits[case_id]
        console.print(
            f"{case_id}: published fits={published}, predicted fits={predicted}  MISMATCH",
            markup=False,
        )
    for w in report.warnings:
        console.print(f"warning: {w.id}: {w.text}", markup=False, soft_wrap=True)
    for e in report.errors:
        console.print(f"error: {e.id}: {e.text}", markup=False, soft_wrap=True)
    compared = len({c.id for c in report.comparisons})
    console.print(
        f"{compared} cases compared, {len(report.fit_mismatches)} fit mismatches of "
        f"{len(report.fits)} fits checked, "
        f"{len(report.warnings)} warnings, {len(report.errors)} errors",
        markup=False,
    )


def _check_calibration(cases: list[Case], path: Path, as_json: bool, wide: bool) -> None:
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
    _print_report(report, baseline, wide)
    console.print(f"predicted with calibration {path}", markup=False)


def _cross_validate(
    cases: list[Case], holdout: list[str] | None, as_json: bool, write_errors: Path | None
) -> None:
    import sys

    from scalewall.calibrate.published import cross_validate, out_of_sample_groups
    from scalewall.validation.error_bars import write_groups

    groups = sorted(set(holdout) if holdout else {c.group for c in cases})
    with progress(disabled=as_json) as bar:
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


def print_cross_validation(result: CrossValidation, wide: bool = False) -> None:
    columns = [
        column("held-out group"),
        column("n", 3, right=True),
        column("defaults", 1, right=True),
        column("in-sample", 2, right=True),
        column("out-of-sample", right=True),
        column("worst out", 4, right=True),
    ]
    rows = [
        [
            name,
            f"{g['metrics']:.0f}",
            f"{g['defaults_mape']:.1%}",
            f"{g['in_sample_mape']:.1%}",
            f"{g['out_of_sample_mape']:.1%}",
            f"{g['out_of_sample_max_abs_error']:.1%}",
        ]
        for name, g in result.groups().items()
    ]
    o = result.overall()
    rows.append(
        [
            "overall",
            f"{o['metrics']:.0f}",
            f"{o['defaults_mape']:.1%}",
            f"{o['in_sample_mape']:.1%}",
            f"{o['out_of_sample_mape']:.1%}",
            "",
        ]
    )
    print_table(
        columns,
        rows,
        title="MAPE, leaving one source group out (refit without it, predict it)",
        wide=wide,
    )
    fit = result.full_fit
    print_table(
        [
            column("constant"),
            column("default", right=True),
            column("fitted on every group", right=True),
            column("std. error", 1, right=True),
        ],
        [
            [n, f"{fit.defaults[n]:.4g}", f"{fit.values[n]:.4g}", f"{fit.standard_errors[n]:.2g}"]
            for n in fit.names
        ],
        wide=wide,
    )
    console.print(
        "n: metrics compared; defaults: the constants the model uses today; in-sample: fitted "
        "on every group; out-of-sample: fitted without the group (the error to expect on runs "
        "not in the files); worst out: the largest out-of-sample |error|",
        markup=False,
    )


def register(app: typer.Typer) -> None:
    app.command("validate")(validate_command)


def _value(value: object) -> str:
    """A chosen value as the CLI takes it (a list of modules as ``layernorm,moe``)."""
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)
