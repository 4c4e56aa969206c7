"""``scalewall search``: every valid plan for a model on a cluster, ranked, with its limit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from scalewall.cli.common import (
    CalibrationOpt,
    ClusterOpt,
    CudaGraphsOpt,
    GlobalBatchTokensOpt,
    GpuOpt,
    GpusOpt,
    JsonOpt,
    ModelOpt,
    StackOpt,
    StackSetOpt,
    WideOpt,
    load_calibration,
    load_cluster,
    load_model,
    load_stack,
)
from scalewall.cli.plain import NullProgress, print_json
from scalewall.errors import ScalewallError, SpecError
from scalewall.plan.defaults import DEFAULT_MODEL
from scalewall.plan.format import format_plan, modules_suffix
from scalewall.search import (
    DEFAULT_TOKEN_BUDGET,
    SearchResult,
    SearchSpace,
    objective_names,
    search,
)
from scalewall.stack import DEFAULT_STACK
from scalewall.units import GIB

if TYPE_CHECKING:
    from rich.progress import Progress


def _words(text: str, field: str) -> tuple[str, ...]:
    values = tuple(w.strip() for w in text.split(",") if w.strip())
    if not values:
        raise SpecError(field, text, "a comma-separated list")
    return values


def print_search(result: SearchResult, *, wide: bool = False) -> None:
    from scalewall.cli.output import column, console, print_table

    c = result.counts
    console.print(
        f"[bold]{result.model}[/bold] on {result.cluster}: global batch {result.global_batch} x "
        f"{result.seq_len} tokens; {c.enumerated:,} plans enumerated, {c.pruned_memory:,} "
        f"pruned (memory), {c.evaluated:,} evaluated in {result.elapsed_s:.2f} s"
    )
    if not result.top:
        console.print(f"[red]{result.reason}[/red]")
        return
    columns = [
        column("#", right=True),
        column("plan"),
        column(result.objective_unit, right=True),
        column("MFU", 1, right=True),
        column("step s", 2, right=True),
        column("GiB", 3, right=True),
        column("same as", 4, right=True),
    ]
    rows = []
    for r in result.top:
        value = r.objective_value
        rows.append(
            [
                str(r.rank),
                format_plan(r.plan, short=True) + modules_suffix(r.recompute_modules),
                f"{value:,.0f}" if abs(value) >= 100 else f"{value:.2f}",
                f"{r.mfu:.1%}",
                f"{r.step_time_s:.2f}",
                f"{r.memory_total_bytes / GIB:.1f}",
                f"x{len(r.equivalents) + 1} equivalent" if r.equivalents else "",
            ]
        )
    print_table(columns, rows, wide=wide)
    for r in result.top:
        parts = ", ".join(f"{k} {v / r.step_time_s:.0%}" for k, v in r.breakdown.items() if v > 0)
        console.print(f"#{r.rank}: {parts}")
        console.print(f"    limited by: {r.limit_line}")
        if r.equivalents:
            knobs = sorted({k for d in r.equivalent_knobs() for k in d})
            console.print(
                f"    x{len(r.equivalents) + 1} equivalent: the same numbers with other "
                f"{', '.join(knobs)} (--json lists them)"
            )


def _progress(as_json: bool) -> Progress | NullProgress:
    """The plans bar; a ``--json`` run imports neither rich nor the table helpers."""
    if as_json:
        return NullProgress()
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn

    from scalewall.cli.output import progress

    return progress(TextColumn("plans"), BarColumn(), MofNCompleteColumn())


def search_command(
    model: ModelOpt = DEFAULT_MODEL,
    cluster: ClusterOpt = None,
    gpu: GpuOpt = None,
    gpus: GpusOpt = None,
    global_batch: Annotated[
        int | None, typer.Option(help="Sequences per step (default: 16M tokens).")
    ] = None,
    global_batch_tokens: GlobalBatchTokensOpt = None,
    seq_len: Annotated[
        int | None, typer.Option(help="Sequence length (default 8192, capped by the model).")
    ] = None,
    precision: Annotated[str, typer.Option(help="Precisions to try, e.g. bf16,fp8.")] = "bf16",
    tp_beyond_scale_up: Annotated[
        bool, typer.Option(help="Allow TP groups larger than the scale-up domain.")
    ] = False,
    max_cp: Annotated[int, typer.Option(help="Largest context-parallel width.")] = 32,
    max_micro_batch: Annotated[int, typer.Option(help="Largest micro-batch.")] = 16,
    objective: Annotated[
        str, typer.Option(help=f"Rank by: {', '.join(objective_names())}.")
    ] = "tokens_per_s",
    token_budget: Annotated[
        float, typer.Option(help="Tokens to train on (time_to_train).")
    ] = DEFAULT_TOKEN_BUDGET,
    top: Annotated[int, typer.Option(help="How many plans to show.")] = 5,
    stack: StackOpt = DEFAULT_STACK,
    stack_set: StackSetOpt = None,
    cuda_graphs: CudaGraphsOpt = None,
    calibration: CalibrationOpt = None,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Search every valid parallel plan; print the best with breakdown and what limits each."""
    spec = load_model(model)
    resolved = load_cluster(cluster, gpu, gpus)
    cal = load_calibration(calibration)
    if cal is not None:
        resolved = cal.apply_cluster(resolved)
    space = SearchSpace(
        precisions=_words(precision, "precision"),
        tp_beyond_scale_up=tp_beyond_scale_up,
        max_cp=max_cp,
        max_micro_batch=max_micro_batch,
    )
    with _progress(as_json) as bar:
        task = bar.add_task("plans", total=None)
        result = search(
            spec,
            resolved,
            global_batch=global_batch,
            global_batch_tokens=global_batch_tokens,
            seq_len=seq_len,
            space=space,
            objective_name=objective,
            token_budget=token_budget,
            top_k=top,
            stack=load_stack(stack, cuda_graphs, stack_set),
            efficiency=cal.efficiency() if cal else None,
            on_progress=lambda done, total: bar.update(task, completed=done, total=total),
        )
    if as_json:
        print_json(result.to_dict(), "search")
    else:
        print_search(result, wide=wide)
    if not result.top:
        raise ScalewallError(f"{resolved.num_gpus} GPUs: {result.reason}")


def register(app: typer.Typer) -> None:
    app.command("search")(search_command)
