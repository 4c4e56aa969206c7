"""``scalewall wall``: the scale-wall sweep: best plan per cluster size, the knee and its cause."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from scalewall.cli.common import (
    CalibrationOpt,
    CudaGraphsOpt,
    JsonOpt,
    StackOpt,
    StackSetOpt,
    check_output_path,
    load_calibration,
    load_model,
    load_stack,
    parse_sizes,
)
from scalewall.cli.output import console, err_console, print_json
from scalewall.errors import ScalewallError
from scalewall.search import DEFAULT_TOKEN_BUDGET, SearchSpace
from scalewall.stack import DEFAULT_STACK
from scalewall.sweep import (
    DEFAULT_KNEE_THRESHOLD,
    LOSS_PARTS,
    Executor,
    ProcessExecutor,
    SerialExecutor,
    WallResult,
    cluster_design,
    default_sizes,
    wall,
)
from scalewall.units import DAY_S


def _plan_text(plan: dict[str, Any]) -> str:
    return (
        f"tp{plan['tp']} pp{plan['pp']} v{plan['vpp']} cp{plan['cp']} dp{plan['dp']} "
        f"mb{plan['micro_batch']} {plan['recompute'][:3]} z{plan['zero']}"
    )


def _pct(value: Any) -> str:
    return (
        ""
        if value is None or (isinstance(value, float) and math.isnan(value))
        else (f"{value:.1%}")
    )


def print_wall(result: WallResult) -> None:
    console.print(
        f"[bold]{result.model}[/bold] on {result.cluster}; sequence {result.settings['seq_len']}; "
        f"token budget {result.token_budget:.3g}"
    )
    table = Table(
        "GPUs",
        "batch (seq)",
        "best plan",
        "tokens/s",
        "MFU",
        "scaling",
        "marginal",
        "days to train",
        "largest loss",
    )
    for row in result.rows:
        if not row["found"]:
            table.add_row(str(row["gpus"]), str(row["global_batch"]), f"[red]{row['reason']}[/red]")
            continue
        table.add_row(
            str(row["gpus"]),
            str(row["global_batch"]),
            _plan_text(row["plan"]),
            f"{row['tokens_per_s']:,.0f}",
            _pct(row["mfu"]),
            _pct(row["scaling_efficiency_frac"]),
            _pct(row["marginal_efficiency_frac"]),
            f"{row['time_to_train_s'] / DAY_S:,.1f}",
            row["limiter"],
        )
    console.print(table)
    losses = Table("GPUs", "MFU", *LOSS_PARTS, title="Loss attribution (fraction of step time)")
    for row in result.rows:
        if row["found"]:
            losses.add_row(
                str(row["gpus"]),
                _pct(row["mfu"]),
                *(_pct(row["loss_fracs"][p]) for p in LOSS_PARTS),
            )
    console.print(losses)
    knee = result.knee
    if knee is None:
        console.print(
            f"No knee: marginal efficiency stays >= {result.knee_threshold:.0%} at every size."
        )
    else:
        console.print(
            f"[bold]Knee at {knee.gpus} GPUs[/bold]: marginal efficiency "
            f"{knee.marginal_efficiency_frac:.0%} < {result.knee_threshold:.0%}; cause: "
            f"{knee.cause} ({knee.detail})"
        )
    if result.reused_rows:
        console.print(f"{result.reused_rows} rows reused from {result.results_path}")


def _print_band(band: Any) -> None:
    table = Table(
        "GPUs",
        "tokens/s low",
        "tokens/s high",
        "band width",
        title=f"Calibrated {band.level:.0%} prediction band",
    )
    for r in band.rows:
        low, high = r["tokens_per_s_interval"]
        table.add_row(str(r["gpus"]), f"{low:,.0f}", f"{high:,.0f}", f"{r['relative_width']:.0%}")
    console.print(table)
    if band.too_wide_from_gpus is None:
        console.print(f"The band stays within {band.max_relative_width:.0%} at every size.")
    else:
        console.print(
            f"[bold]Too wide to trust from {band.too_wide_from_gpus} GPUs[/bold]: the band "
            f"exceeds {band.max_relative_width:.0%} of the prediction; measure at a larger scale."
        )


def _executor(workers: int) -> Executor:
    return SerialExecutor() if workers == 1 else ProcessExecutor(max_workers=workers)


def wall_command(
    model: Annotated[
        str, typer.Option("--model", "-m", help="Catalog id, config.json or TOML.")
    ] = ("llama3-70b"),
    cluster: Annotated[
        str | None, typer.Option("--cluster", "-c", help="Cluster design (id or TOML) to resize.")
    ] = None,
    gpu: Annotated[str | None, typer.Option(help="Accelerator or system id.")] = None,
    sizes: Annotated[
        str | None, typer.Option(help="GPU counts, e.g. 96,192,384 (default: powers of two).")
    ] = None,
    max_gpus: Annotated[int, typer.Option(help="Largest default size.")] = 32768,
    global_batch: Annotated[int | None, typer.Option(help="Sequences per step.")] = None,
    global_batch_tokens: Annotated[
        int | None, typer.Option(help="Tokens per step (default 16M).")
    ] = None,
    max_global_batch: Annotated[
        int | None,
        typer.Option(help="Let the batch grow with the GPUs up to this many sequences."),
    ] = None,
    seq_len: Annotated[int | None, typer.Option(help="Sequence length.")] = None,
    token_budget: Annotated[float, typer.Option(help="Tokens to train on.")] = DEFAULT_TOKEN_BUDGET,
    knee_threshold: Annotated[
        float, typer.Option(help="Marginal efficiency that marks the knee.")
    ] = DEFAULT_KNEE_THRESHOLD,
    goodput: Annotated[
        bool, typer.Option(help="Add the goodput loss (failures, checkpoints) per size.")
    ] = False,
    precision: Annotated[str, typer.Option(help="Precisions to try, e.g. bf16,fp8.")] = "bf16",
    stack: StackOpt = DEFAULT_STACK,
    stack_set: StackSetOpt = None,
    cuda_graphs: CudaGraphsOpt = None,
    workers: Annotated[
        int, typer.Option(help="Worker processes (1: serial; 0: one per core).")
    ] = 0,
    results: Annotated[
        Path | None, typer.Option(help="Results file (JSON lines); default: a cache file.")
    ] = None,
    fresh: Annotated[bool, typer.Option(help="Recompute every size.")] = False,
    csv: Annotated[Path | None, typer.Option(help="Write the table as CSV.")] = None,
    plot: Annotated[Path | None, typer.Option(help="Write an HTML figure.")] = None,
    calibration: CalibrationOpt = None,
    band_width: Annotated[
        float, typer.Option(help="Relative band width beyond which a size is too wide to trust.")
    ] = 0.25,
    as_json: JsonOpt = False,
) -> None:
    """Sweep cluster sizes, re-searching the best plan at each: where scaling stops, and why."""
    check_output_path("--csv", csv)
    check_output_path("--plot", plot)
    check_output_path("--results", results)
    spec = load_model(model)
    design = cluster_design(cluster, gpu)
    size_list = parse_sizes(sizes) if sizes else default_sizes(design, max_gpus)
    if workers < 0:
        raise ScalewallError(f"workers={workers} is invalid; 0 (one per core) or more")
    if not 0 < band_width < math.inf:
        raise ScalewallError(f"band_width={band_width} is invalid; a positive relative width")
    space = SearchSpace(precisions=tuple(p.strip() for p in precision.split(",") if p.strip()))
    cal = load_calibration(calibration)
    where: Any = cluster
    if cal is not None:
        clocked = cal.apply_cluster(design.at(size_list[0]))
        if clocked.accelerator != design.accelerator:
            where, gpu = clocked, None  # the design with the fitted clock
    columns = (
        TextColumn("sizes"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err_console, transient=True, disable=as_json) as bar:
        task = bar.add_task("sizes", total=len(size_list))
        result = wall(
            spec,
            where,
            gpu=gpu,
            sizes=size_list,
            global_batch=global_batch,
            global_batch_tokens=global_batch_tokens,
            max_global_batch=max_global_batch,
            seq_len=seq_len,
            space=space,
            stack=load_stack(stack, cuda_graphs, stack_set),
            efficiency=cal.efficiency() if cal else None,
            token_budget=token_budget,
            knee_threshold=knee_threshold,
            goodput=goodput,
            executor=_executor(workers),
            results_path=results,
            reuse=not fresh,
            on_row=lambda _row: bar.advance(task),
        )
    band = None
    if cal is not None:
        from scalewall.calibrate.band import wall_band

        band = wall_band(
            result,
            cal,
            spec,
            design,
            load_stack(stack, cuda_graphs, stack_set),
            max_relative_width=band_width,
        )
    if csv is not None:
        csv.parent.mkdir(parents=True, exist_ok=True)
        result.to_pandas().to_csv(csv, index=False)
    if plot is not None:
        plot.parent.mkdir(parents=True, exist_ok=True)
    if plot is not None and band is not None:
        from scalewall.calibrate.band import write_band_html

        write_band_html(result, band, str(plot))
    elif plot is not None:
        from scalewall.sweep.plot import write_wall_html

        write_wall_html(result, plot)
    if as_json:
        print_json({**result.to_dict(), **({"band": band.to_dict()} if band else {})}, "wall")
    else:
        print_wall(result)
        if band is not None:
            _print_band(band)
    if not any(row["found"] for row in result.rows):
        raise ScalewallError(
            f"no size has a plan that fits; first reason: {result.rows[0]['reason']}"
        )


def register(app: typer.Typer) -> None:
    app.command("wall")(wall_command)
