"""``scalewall wall``: the scale-wall sweep: best plan per cluster size, the knee and its cause."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

from scalewall.cli.common import (
    CalibrationOpt,
    CudaGraphsOpt,
    ExecutorOpt,
    GlobalBatchTokensOpt,
    GpuOpt,
    JsonOpt,
    ModelOpt,
    RayAddressOpt,
    StackOpt,
    StackSetOpt,
    WideOpt,
    check_output_path,
    load_calibration,
    load_model,
    load_stack,
    parse_sizes,
)
from scalewall.cli.output import column, console, print_json, print_table, progress
from scalewall.errors import ScalewallError
from scalewall.plan.defaults import DEFAULT_MODEL
from scalewall.plan.format import format_plan, modules_suffix
from scalewall.search import DEFAULT_TOKEN_BUDGET, SearchSpace
from scalewall.stack import DEFAULT_STACK
from scalewall.sweep import (
    DEFAULT_KNEE_THRESHOLD,
    LOSS_PARTS,
    WallResult,
    cluster_design,
    default_sizes,
    wall,
)
from scalewall.sweep.executor import executor_from_options
from scalewall.units import DAY_S


def _pct(value: Any) -> str:
    return (
        ""
        if value is None or (isinstance(value, float) and math.isnan(value))
        else (f"{value:.1%}")
    )


def print_wall(result: WallResult, *, wide: bool = False) -> None:
    console.print(
        f"[bold]{result.model}[/bold] on {result.cluster}; sequence {result.settings['seq_len']}; "
        f"token budget {result.token_budget:.3g}"
    )
    columns = [
        column("GPUs", right=True),
        column("batch", 5, right=True),
        column("best plan"),
        column("tokens/s", right=True),
        column("MFU", right=True),
        column("scaling", 2, right=True),
        column("marginal", 1, right=True),
        column("days", 3, right=True),
        column("largest loss", 4),
    ]
    rows = []
    for row in result.rows:
        if not row["found"]:
            rows.append(
                [str(row["gpus"]), str(row["global_batch"]), f"[red]{row['reason']}[/red]"]
                + [""] * 6
            )
            continue
        rows.append(
            [
                str(row["gpus"]),
                str(row["global_batch"]),
                format_plan(row["plan"], short=True)
                + modules_suffix(row.get("recompute_modules") or ()),
                f"{row['tokens_per_s']:,.0f}",
                _pct(row["mfu"]),
                _pct(row["scaling_efficiency_frac"]),
                _pct(row["marginal_efficiency_frac"]),
                f"{row['time_to_train_s'] / DAY_S:,.1f}",
                row["limiter"],
            ]
        )
    print_table(columns, rows, wide=wide)
    _print_losses(result.rows, wide)
    _print_goodput_causes(result.rows, wide)
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


def _largest_first(found: Sequence[dict[str, Any]], key: str, parts: Sequence[str]) -> list[str]:
    """``parts`` by their largest value over the rows' ``key`` mapping, largest first."""

    def largest(part: str) -> float:
        values = [r[key][part] for r in found]
        return max((v for v in values if v is not None and not math.isnan(v)), default=0.0)

    return sorted(parts, key=largest, reverse=True)


def _print_losses(rows: Sequence[dict[str, Any]], wide: bool) -> None:
    """The loss attribution per size; the parts that cost most (at any size) come first and
    the narrow console drops the smallest."""
    found = [r for r in rows if r["found"]]
    if not found:
        return
    parts = _largest_first(found, "loss_fracs", LOSS_PARTS)
    columns = [column("GPUs", right=True), column("MFU", right=True)]
    columns += [column(p, k + 1, right=True) for k, p in enumerate(parts)]
    cells = [
        [str(r["gpus"]), _pct(r["mfu"]), *(_pct(r["loss_fracs"][p]) for p in parts)] for r in found
    ]
    print_table(
        columns, cells, title="Loss attribution (fraction of step time), largest first", wide=wide
    )


def _print_goodput_causes(rows: Sequence[dict[str, Any]], wide: bool) -> None:
    """The goodput loss of every size split by cause (absent with --no-goodput)."""
    found = [r for r in rows if r["found"] and r.get("goodput_loss_fracs")]
    if not found:
        return
    causes = _largest_first(found, "goodput_loss_fracs", list(found[0]["goodput_loss_fracs"]))
    columns = [column("GPUs", right=True), column("goodput", right=True)]
    columns += [column(c, k + 1, right=True) for k, c in enumerate(causes)]
    cells = [
        [
            str(r["gpus"]),
            _pct(r["goodput_frac"]),
            *(_pct(r["goodput_loss_fracs"][c]) for c in causes),
        ]
        for r in found
    ]
    print_table(columns, cells, title="Goodput loss by cause (fraction of wall time)", wide=wide)


def _print_band(band: Any, wide: bool) -> None:
    validation = band.basis == "validation"
    columns = [
        column("GPUs", right=True),
        column("tokens/s low", right=True),
        column("tokens/s high", right=True),
        column("band width", right=True),
    ]
    title = f"Calibrated {band.level:.0%} prediction band"
    if validation:
        columns.append(column("errors of", 1))
        title = (
            f"{band.level:.0%} band from the out-of-sample errors of the closest validation "
            "group (not calibrated)"
        )
    rows = []
    for r in band.rows:
        low, high = r["tokens_per_s_interval"]
        cells = [str(r["gpus"]), f"{low:,.0f}", f"{high:,.0f}", f"{r['relative_width']:.0%}"]
        rows.append(cells + ([r["group"]] if validation else []))
    print_table(columns, rows, title=title, wide=wide)
    if band.too_wide_from_gpus is None:
        console.print(f"The band stays within {band.max_relative_width:.0%} at every size.")
    else:
        console.print(
            f"[bold]Too wide to trust from {band.too_wide_from_gpus} GPUs[/bold]: the band "
            f"exceeds {band.max_relative_width:.0%} of the prediction; "
            + (
                "calibrate on runs measured on your cluster to narrow it."
                if validation
                else "measure at a larger scale."
            )
        )
    if band.extrapolated_from_gpus is not None:
        console.print(
            f"From {band.extrapolated_from_gpus} GPUs the sizes are larger than every "
            "validation run of this kind: the band there is an extrapolation. Calibrating on "
            "your own runs (scalewall calibrate) gives a band that widens with the distance."
        )


def wall_command(
    model: ModelOpt = DEFAULT_MODEL,
    cluster: Annotated[
        str | None, typer.Option("--cluster", "-c", help="Cluster design (id or TOML) to resize.")
    ] = None,
    gpu: GpuOpt = None,
    sizes: Annotated[
        str | None, typer.Option(help="GPU counts, e.g. 96,192,384 (default: powers of two).")
    ] = None,
    max_gpus: Annotated[int, typer.Option(help="Largest default size.")] = 32768,
    global_batch: Annotated[int | None, typer.Option(help="Sequences per step.")] = None,
    global_batch_tokens: GlobalBatchTokensOpt = None,
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
        bool,
        typer.Option(
            "--goodput/--no-goodput",
            help="Include the goodput loss (failures, checkpoints) per size, by cause.",
        ),
    ] = True,
    precision: Annotated[str, typer.Option(help="Precisions to try, e.g. bf16,fp8.")] = "bf16",
    stack: StackOpt = DEFAULT_STACK,
    stack_set: StackSetOpt = None,
    cuda_graphs: CudaGraphsOpt = None,
    workers: Annotated[
        int, typer.Option(help="Worker processes (1: serial; 0: one per core).")
    ] = 0,
    executor: ExecutorOpt = "local",
    ray_address: RayAddressOpt = None,
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
    wide: WideOpt = False,
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
    with progress(*columns, disabled=as_json) as bar:
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
            executor=executor_from_options(executor, workers=workers, ray_address=ray_address),
            results_path=results,
            reuse=not fresh,
            on_row=lambda _row: bar.advance(task),
        )
    band: Any = None
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
    elif result.band is not None:
        from scalewall.calibrate.band import validation_wall_band

        band = validation_wall_band(
            result,
            spec,
            design,
            load_stack(stack, cuda_graphs, stack_set),
            max_relative_width=band_width,
        )
    if band is not None:
        result = dataclasses.replace(result, band=band.to_dict())
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
        print_json(result.to_dict(), "wall")
    else:
        print_wall(result, wide=wide)
        if band is not None:
            _print_band(band, wide)
    if not any(row["found"] for row in result.rows):
        raise ScalewallError(
            f"no size has a plan that fits; first reason: {result.rows[0]['reason']}"
        )


def register(app: typer.Typer) -> None:
    app.command("wall")(wall_command)
