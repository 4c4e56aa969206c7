"""``scalewall probe``: measure this cluster with PyTorch; import nccl-tests logs; show a file."""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from scalewall.cli.common import check_output_path
from scalewall.cli.output import console, err_console, print_json
from scalewall.errors import SpecError
from scalewall.probe import (
    Measurements,
    ProbeConfig,
    cpu_config,
    load_measurements,
    merge_measurements,
    quick_config,
    run_probe,
    write_measurements,
)
from scalewall.probe.config import PARTS, check_config
from scalewall.probe.nccl_tests import PROGRAMS, read_nccl_tests
from scalewall.probe.runtime import import_torch, pick_device
from scalewall.units import GB, TERA

probe_app = typer.Typer(
    help="Measure GEMM, attention, device memory and collectives (needs the probe extra).",
    add_completion=False,
)

_SIZE = re.compile(r"^\s*(\d+)\s*([KMGT]?)i?B?\s*$", re.IGNORECASE)
_SUFFIX = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_bytes(option: str, text: str) -> int:
    """``4096``, ``64K``, ``1M``, ``2G`` (binary multiples, as nccl-tests reads them)."""
    match = _SIZE.match(text)
    if not match:
        raise SpecError(option, text, "a byte count such as 4096, 64K, 16M or 1G")
    return int(match.group(1)) * _SUFFIX[match.group(2).upper()]


def parse_shape(option: str, text: str, dims: int, layout: str) -> tuple[int, ...]:
    """``4096x4096x4096`` as a tuple of ``dims`` positive integers."""
    parts = text.lower().split("x")
    if len(parts) != dims or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        raise SpecError(option, text, f"{dims} positive integers {layout}")
    return tuple(int(p) for p in parts)


class _Bar:
    """The runner's progress reports as a rich progress bar on stderr."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._task = progress.add_task("probe", total=None)

    def begin(self, total: int) -> None:
        self._progress.update(self._task, total=total)

    def advance(self, label: str) -> None:
        self._progress.update(self._task, advance=1, description=label)


def _overrides(**options: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if options["parts"]:
        out["parts"] = tuple(p.strip() for p in options["parts"].split(",") if p.strip())
    if options["gemm_shape"]:
        out["gemm_shapes"] = tuple(
            parse_shape("--gemm-shape", s, 3, "MxNxK") for s in options["gemm_shape"]
        )
    if options["attention_shape"]:
        out["attention_shapes"] = tuple(
            parse_shape("--attention-shape", s, 4, "BxHxTxD") for s in options["attention_shape"]
        )
    if options["dtype"]:
        out["gemm_dtypes"] = out["attention_dtypes"] = tuple(options["dtype"])
    if options["hbm_size"]:
        out["hbm_sizes_bytes"] = tuple(parse_bytes("--hbm-size", s) for s in options["hbm_size"])
    for key in ("min_bytes", "max_bytes"):
        if options[key]:
            out[f"collective_{key}"] = parse_bytes(f"--{key.replace('_', '-')}", options[key])
    if options["group_size"]:
        out["group_sizes"] = tuple(options["group_size"])
    for key in ("step_factor", "iters", "warmup", "repeats"):
        if options[key] is not None:
            name = {"step_factor": "collective_step_factor", "warmup": "warmup_iters"}
            out[name.get(key, key)] = options[key]
    return out


def _config(device_type: str, quick: bool, overrides: dict[str, Any]) -> ProbeConfig:
    base = quick_config() if quick else ProbeConfig() if device_type == "cuda" else cpu_config()
    return check_config(dataclasses.replace(base, **overrides))


def probe_command(
    ctx: typer.Context,
    out: Path = typer.Option(Path("measurements.jsonl"), "--out", "-o", help="File to write."),
    device: str = typer.Option("auto", help="auto, cuda or cpu."),
    parts: str = typer.Option("", help=f"Comma list of parts (default all): {','.join(PARTS)}."),
    quick: bool = typer.Option(False, "--quick", help="Tiny sizes: a smoke test in seconds."),
    gemm_shape: list[str] = typer.Option([], help="GEMM MxNxK; repeat for more."),
    attention_shape: list[str] = typer.Option([], help="Attention BxHxTxD; repeat for more."),
    dtype: list[str] = typer.Option([], help="fp32, bf16, fp16, fp8_e4m3; repeat for more."),
    hbm_size: list[str] = typer.Option([], help="Copy buffer size, e.g. 4G; repeat for more."),
    min_bytes: str = typer.Option("", help="Smallest collective message, e.g. 64K."),
    max_bytes: str = typer.Option("", help="Largest collective message, e.g. 1G."),
    step_factor: int | None = typer.Option(None, help="Message size multiplier per step."),
    group_size: list[int] = typer.Option([], help="Collective group size; repeat for more."),
    collective_dtype: str = typer.Option("", help="Collective element type: fp32, bf16, fp16."),
    iters: int | None = typer.Option(None, help="Operations per timed repeat."),
    warmup: int | None = typer.Option(None, help="Untimed warm-up operations."),
    repeats: int | None = typer.Option(None, help="Timed repeats (median is kept)."),
    all_ranks: bool = typer.Option(False, "--all-ranks", help="Compute parts on every rank."),
) -> None:
    """Measure this machine; under torchrun, the cluster. Rank 0 writes the file.

    Subcommands import nccl-tests logs and check files. Eight GPUs on one node:
    torchrun --nproc-per-node 8 $(which scalewall) probe -o m.jsonl
    """
    if ctx.invoked_subcommand is not None:
        return
    check_output_path("--out", out)
    torch = import_torch()
    device_type = pick_device(torch, device)
    overrides = _overrides(
        parts=parts,
        gemm_shape=gemm_shape,
        attention_shape=attention_shape,
        dtype=dtype,
        hbm_size=hbm_size,
        min_bytes=min_bytes,
        max_bytes=max_bytes,
        group_size=group_size,
        step_factor=step_factor,
        iters=iters,
        warmup=warmup,
        repeats=repeats,
    )
    overrides["compute_on_all_ranks"] = all_ranks
    if collective_dtype:
        overrides["collective_dtype"] = collective_dtype
    config = _config(device_type, quick, overrides)
    rank0 = os.environ.get("RANK", "0") == "0"
    command = shlex.join(["scalewall", *sys.argv[1:]])
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        disable=not rank0,
        transient=True,
    ) as progress:
        result = run_probe(config, device=device_type, progress=_Bar(progress), command=command)
    if rank0:
        write_measurements(result, out)
        _print_summary(result, str(out))


def import_nccl_command(
    logs: list[Path] = typer.Argument(..., help="nccl-tests output files (all_reduce_perf ...)."),
    out: Path = typer.Option(Path("measurements.jsonl"), "--out", "-o", help="File to write."),
    kind: str = typer.Option("", help=f"If the logs do not say: {', '.join(PROGRAMS.values())}."),
    group_size: int | None = typer.Option(None, help="Ranks, if the logs list none."),
) -> None:
    """Import nccl-tests text output into one measurements file."""
    parts = [read_nccl_tests(p, kind=kind or None, group_size=group_size) for p in logs]
    merged = merge_measurements(parts)
    write_measurements(merged, out)
    _print_summary(merged, str(out))


def show_command(
    files: list[Path] = typer.Argument(..., help="Measurements files or nccl-tests logs."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Check measurements files (or nccl-tests logs) and summarise them."""
    for path in files:
        m = load_measurements(path)
        if as_json:
            print_json(
                {
                    "file": str(path),
                    "format": m.format,
                    "source": m.source,
                    "created_utc": m.created_utc,
                    "machine": dataclasses.asdict(m.machine),
                    "versions": dataclasses.asdict(m.versions),
                    "num_records": len(m.records),
                    "summary": summary_rows(m),
                    "notes": list(m.notes),
                }
            )
        else:
            _print_summary(m, str(path), verb="read")


def summary_rows(m: Measurements) -> list[dict[str, Any]]:
    """Per (kind, variant, dtype, group size): record count and best rates."""
    frame = m.to_frame()
    if frame.empty:
        return []
    keys = ["kind", "variant", "dtype", "group_size", "num_nodes"]
    grouped = frame.groupby(keys, sort=False, dropna=False)
    table = grouped.agg(
        num_records=("time_s", "size"),
        best_flop_per_s=("flop_per_s", "max"),
        best_bytes_per_s=("bytes_per_s", "max"),
        best_busbw_bytes_per_s=("busbw_bytes_per_s", "max"),
    ).reset_index()
    return [{str(k): v for k, v in row.items()} for row in table.to_dict(orient="records")]


def _best(row: dict[str, Any]) -> str:
    if row["best_flop_per_s"] == row["best_flop_per_s"] and row["best_flop_per_s"] is not None:
        return f"{row['best_flop_per_s'] / TERA:.2f} TFLOP/s"
    if row["kind"] == "hbm":
        return f"{row['best_bytes_per_s'] / GB:.1f} GB/s"
    return f"busbw {row['best_busbw_bytes_per_s'] / GB:.2f} GB/s"


def _print_summary(m: Measurements, where: str, verb: str = "wrote") -> None:
    mach = m.machine
    console.print(
        f"{verb} {len(m.records)} records: {where} ({mach.device_name or 'unknown device'}, "
        f"{mach.world_size} ranks on {mach.num_nodes} node(s), {m.source} {m.created_utc})"
    )
    table = Table(show_header=True)
    for col in ("kind", "variant", "dtype", "ranks", "nodes", "records", "best"):
        table.add_column(col)
    for row in summary_rows(m):
        table.add_row(
            row["kind"],
            row["variant"],
            row["dtype"],
            str(row["group_size"]),
            str(row["num_nodes"]),
            str(row["num_records"]),
            _best(row),
        )
    console.print(table)
    for note in m.notes:
        console.print(f"note: {note}")


def register(app: typer.Typer) -> None:
    probe_app.callback(invoke_without_command=True)(probe_command)
    probe_app.command("import-nccl")(import_nccl_command)
    probe_app.command("show")(show_command)
    app.add_typer(probe_app, name="probe")
