"""``scalewall explore``: one plan search per point of models x designs x sizes x fabrics x
batch rules, written to a Parquet dataset as points finish (resumable)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from scalewall.cli.common import (
    ExecutorOpt,
    JsonOpt,
    RayAddressOpt,
    StackSetOpt,
    check_output_path,
)
from scalewall.cli.output import console, err_console, print_json
from scalewall.errors import SpecError
from scalewall.explore import ExploreSpec, explore, load, load_spec
from scalewall.explore.grid import check_spec
from scalewall.sweep.executor import executor_from_options
from scalewall.units import DAY_S


def _words(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(w.strip() for w in text.split(",") if w.strip())


def _ints(text: str | None, field: str) -> tuple[int, ...] | None:
    words = _words(text)
    if words is None:
        return None
    try:
        return tuple(int(w) for w in words)
    except ValueError:
        raise SpecError(field, text, "comma-separated positive integers") from None


def _spec(grid: Path | None, flags: dict[str, Any]) -> ExploreSpec:
    """The grid file's spec with every flag given on the command line replacing its field."""
    base = load_spec(grid) if grid is not None else ExploreSpec()
    given = {k: v for k, v in flags.items() if v is not None}
    return dataclasses.replace(base, **given)


def _print(summary: dict[str, Any]) -> None:
    console.print(
        f"{summary['points']:,} points: {summary['written']:,} written, {summary['skipped']:,} "
        f"already in {summary['out']}, {summary['failed']:,} failed; {summary['found']:,} with "
        f"a plan; {summary['points_per_task']} points per task, "
        f"{summary['points_per_s']:,.1f} points/s"
    )
    for f in summary["failures"]:
        console.print(f"[red]failed {f['point_key']}: {f['error']}[/red]")
    for r in summary["frontier"]:
        console.print(
            f"frontier: {r['model']} on {r['gpus']} x {r['accelerator']} ({r['fabric']}, "
            f"{r['batch_rule']}): {r['time_to_train_s'] / DAY_S:,.1f} days, "
            f"{r['tokens_per_usd']:,.3g} tokens/USD"
        )


def _write_counts(path: Path, **counts: int) -> None:
    """Replace ``path`` with the counts in one step, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(counts))
    os.replace(temporary, path)


def explore_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Dataset folder (Parquet).")],
    grid: Annotated[
        Path | None, typer.Option("--grid", help="TOML file of the axes (flags override it).")
    ] = None,
    models: Annotated[str | None, typer.Option("--models", help="Model ids or files.")] = None,
    gpus: Annotated[str | None, typer.Option("--gpus", help="Accelerator or system ids.")] = None,
    clusters: Annotated[
        str | None, typer.Option("--clusters", help="Cluster designs (ids or TOML) to resize.")
    ] = None,
    sizes: Annotated[str | None, typer.Option("--sizes", help="GPU counts, e.g. 64,128.")] = None,
    fabrics: Annotated[
        str | None, typer.Option("--fabrics", help="Fabric ids (default: each design's own).")
    ] = None,
    batch: Annotated[
        str | None,
        typer.Option("--batch", help="Batch rules: tokens=N, seqs=N, per-gpu=N (comma list)."),
    ] = None,
    seq_len: Annotated[int | None, typer.Option("--seq-len", help="Sequence length.")] = None,
    precision: Annotated[str | None, typer.Option(help="Precisions, e.g. bf16,fp8.")] = None,
    max_cp: Annotated[int | None, typer.Option(help="Largest context-parallel width.")] = None,
    max_micro_batch: Annotated[int | None, typer.Option(help="Largest micro-batch.")] = None,
    tp: Annotated[str | None, typer.Option("--tp", help="Only these TP widths.")] = None,
    pp: Annotated[str | None, typer.Option("--pp", help="Only these PP widths.")] = None,
    stack: Annotated[str | None, typer.Option(help="Software stack id.")] = None,
    stack_set: StackSetOpt = None,
    token_budget: Annotated[float | None, typer.Option(help="Tokens to train on.")] = None,
    executor: ExecutorOpt = "local",
    ray_address: RayAddressOpt = None,
    workers: Annotated[int, typer.Option(help="Local worker processes (0: one per core).")] = 0,
    chunk: Annotated[
        int, typer.Option(help="Points per task (0: chosen from the measured task overhead).")
    ] = 0,
    fresh: Annotated[bool, typer.Option(help="Replace the dataset instead of resuming.")] = False,
    plot: Annotated[Path | None, typer.Option(help="Write the frontier as HTML.")] = None,
    progress_file: Annotated[
        Path | None,
        typer.Option(help="Keep the done, running and failed counts in this JSON file."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Search every point of models x clusters x sizes x fabrics x batch rules into a dataset."""
    check_output_path("--out", out, directory=True)
    check_output_path("--plot", plot)
    check_output_path("--progress-file", progress_file)
    if chunk < 0:
        raise SpecError("chunk", chunk, "0 (automatic) or a positive number of points per task")
    spec = _spec(
        grid,
        {
            "models": _words(models), "gpus": _words(gpus), "clusters": _words(clusters),
            "sizes": _ints(sizes, "sizes"), "fabrics": _words(fabrics), "batch": _words(batch),
            "seq_len": seq_len, "precisions": _words(precision), "max_cp": max_cp,
            "max_micro_batch": max_micro_batch, "tp": _ints(tp, "tp"), "pp": _ints(pp, "pp"),
            "stack": stack, "stack_set": tuple(stack_set) if stack_set else None,
            "token_budget": token_budget,
        },
    )  # fmt: skip
    check_spec(spec)
    runner = executor_from_options(executor, workers=workers, ray_address=ray_address)
    columns = (
        TextColumn("points"),
        BarColumn(),
        TextColumn("{task.fields[done]:,} done, {task.fields[running]:,} running, "
                   "{task.fields[failed]:,} failed"),
        TimeElapsedColumn(),
    )  # fmt: skip
    with Progress(*columns, console=err_console, transient=True, disable=as_json) as bar:
        task = bar.add_task("points", total=None, done=0, running=0, failed=0)

        def progress(done: int, running: int, failed: int) -> None:
            total = done + running + failed
            bar.update(task, total=total, completed=done + failed, done=done, running=running,
                       failed=failed)  # fmt: skip
            if progress_file is not None:
                _write_counts(progress_file, done=done, running=running, failed=failed)

        result = explore(spec, out, executor=runner, chunk=chunk, fresh=fresh, progress=progress)
    if plot is not None:
        from scalewall.explore.plot import write_frontier_html

        plot.parent.mkdir(parents=True, exist_ok=True)
        write_frontier_html(load(out), plot)
    summary = {**result.to_dict(), "executor": executor}
    if as_json:
        print_json(summary, "explore")
    else:
        _print(summary)


def register(app: typer.Typer) -> None:
    app.command("explore")(explore_command)
