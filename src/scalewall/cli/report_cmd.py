"""``scalewall report``: one self-contained HTML page comparing cluster options for a model, and
its summary (``--json``: the same content as data)."""

from __future__ import annotations

import dataclasses
import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer

from scalewall.cli.common import CudaGraphsOpt, JsonOpt, StackSetOpt, check_output_path
from scalewall.cli.output import console, err_console, print_json
from scalewall.errors import SpecError
from scalewall.report.scenario import ClusterOption, Scenario, load_scenario
from scalewall.report.strings import LANGUAGES
from scalewall.stack import parse_assignments
from scalewall.units import DAY_S


def parse_option(text: str) -> ClusterOption:
    """``CLUSTER:GPUS`` (a catalog cluster id or TOML) or ``GPU:GPUS`` (an accelerator id)."""
    name, sep, count = text.rpartition(":")
    if not sep or not name or not count.isdigit() or int(count) < 1:
        raise SpecError("cluster", text, "CLUSTER:GPUS, e.g. h100-16k-ndr:16384")
    from scalewall import catalog

    is_cluster = name.endswith(".toml") or name in catalog.entries("clusters")
    gpus = int(count)
    return ClusterOption(
        name=f"{gpus:,} x {name}",
        cluster=name if is_cluster else None,
        gpu=None if is_cluster else name,
        gpus=gpus,
    )


def _scenario(
    scenario: Path | None,
    model: str | None,
    clusters: list[str],
    token_budget: float | None,
    target_days: float | None,
    stack: str | None = None,
    stack_set: list[str] | None = None,
    value_of_time: float | None = None,
    late_penalty: float | None = None,
) -> Scenario:
    base = load_scenario(scenario) if scenario else Scenario()
    overrides = {**base.stack_overrides, **parse_assignments(stack_set or [])}
    return dataclasses.replace(
        base,
        stack=stack or base.stack,
        stack_overrides=overrides,
        model=model or base.model,
        options=tuple(parse_option(c) for c in clusters) if clusters else base.options,
        token_budget=base.token_budget if token_budget is None else token_budget,
        target_s=base.target_s if target_days is None else target_days * DAY_S,
        value_of_time_usd_per_day=base.value_of_time_usd_per_day
        if value_of_time is None
        else value_of_time,
        late_penalty_usd_per_day=base.late_penalty_usd_per_day
        if late_penalty is None
        else late_penalty,
    )


def report_command(
    scenario: Annotated[
        Path | None, typer.Option("--scenario", "-s", help="Scenario TOML (see docs).")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Model id, config.json or TOML.")
    ] = None,
    cluster: Annotated[
        list[str] | None,
        typer.Option("--cluster", "-c", help="CLUSTER:GPUS or GPU:GPUS; repeat to compare."),
    ] = None,
    token_budget: Annotated[float | None, typer.Option(help="Tokens to train on.")] = None,
    target_days: Annotated[
        float | None, typer.Option(help="Days from the start by which the model is needed.")
    ] = None,
    value_of_time: Annotated[
        float | None,
        typer.Option(
            "--value-of-time", help="Dollars per day of calendar time (default 0: see docs)."
        ),
    ] = None,
    late_penalty: Annotated[
        float | None,
        typer.Option("--late-penalty", help="Dollars per day past the target date."),
    ] = None,
    stack: Annotated[
        str | None,
        typer.Option("--stack", help="Software stack id or alias (default: the scenario's)."),
    ] = None,
    stack_set: StackSetOpt = None,
    cuda_graphs: CudaGraphsOpt = None,
    lang: Annotated[str, typer.Option(help=f"Language: {', '.join(LANGUAGES)}.")] = "en",
    out: Annotated[Path, typer.Option("--out", "-o", help="HTML file to write.")] = Path(
        "report.html"
    ),
    as_json: JsonOpt = False,
) -> None:
    """Write one HTML page (opens offline) comparing cluster options for a model: first the
    verdict (which option meets the target date, at what total cost = compute + time, and
    why) and the break-even model size, then the four growth stages, the scale wall and its
    knee, MFU/goodput/cost per token against size, losses, memory, failures and
    checkpoints, network bill of materials, a side-by-side and a staged growth path. Default:
    Llama-3-70B on 512 vs 16,384 H100."""
    if lang not in LANGUAGES:
        raise SpecError("lang", lang, f"valid: {', '.join(LANGUAGES)}")
    check_output_path("--out", out)
    if cuda_graphs is not None:
        stack_set = [*(stack_set or []), f"cuda_graphs={cuda_graphs}"]
    spec = _scenario(
        scenario,
        model,
        cluster or [],
        token_budget,
        target_days,
        stack,
        stack_set,
        value_of_time,
        late_penalty,
    )
    # the models behind the report load only when it is built (the command starts fast)
    from scalewall.report.build import build_report
    from scalewall.report.content import content, summary_lines
    from scalewall.report.html import write_html

    spinner = not as_json and err_console.is_terminal
    with err_console.status("building the report", spinner="dots") if spinner else _null():
        report = build_report(spec)
    command = "scalewall " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv else ""
    path = write_html(report, out, lang, command=command if "report" in command else "")
    if as_json:
        print_json({**content(report, lang), "html": str(path)}, "report")
        return
    for line in summary_lines(report, lang):
        console.print(line, highlight=False, markup=False)
    console.print(f"{path}", highlight=False, markup=False)


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> None:
        return None


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
