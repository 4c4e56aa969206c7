"""``run_probe``: measure this machine (and, under torchrun, its peers) into ``Measurements``.

Single process: the compute parts (gemm, attention, hbm) run; collectives need two ranks or more
and are skipped with a note. Under ``torchrun`` (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR set),
every rank joins the group, collectives sweep the group sizes, and every rank returns the same
``Measurements`` (rank 0 gathers them); only rank 0 should write the file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from scalewall.probe import attention, gemm
from scalewall.probe.collectives import measure_collectives, num_collective_steps
from scalewall.probe.config import ProbeConfig, check_config, cpu_config
from scalewall.probe.hbm import measure_hbm
from scalewall.probe.measurements import Measurements, Record
from scalewall.probe.runtime import (
    Context,
    all_gather_objects,
    broadcast_object,
    finish,
    hostname,
    machine,
    now_utc,
    start,
    versions,
)


class Progress(Protocol):
    """Where the probe reports how far it is (a rich progress bar in the CLI)."""

    def begin(self, total: int) -> None: ...

    def advance(self, label: str) -> None: ...


class _Silent:
    def begin(self, total: int) -> None:
        del total

    def advance(self, label: str) -> None:
        del label


def _measure_compute(
    ctx: Context, config: ProbeConfig, notes: list[str], tick: Callable[[str], None]
) -> list[Record]:
    records: list[Record] = []
    if "gemm" in config.parts:
        dtypes = config.gemm_dtypes or gemm.default_dtypes(ctx)
        for dtype in dtypes:
            records += gemm.measure_gemm(ctx, config, (dtype,), notes)
            tick(f"gemm {dtype}")
    if "attention" in config.parts:
        dtypes = config.attention_dtypes or attention.default_dtypes(ctx)
        records += attention.measure_attention(ctx, config, dtypes, notes)
        tick("attention")
    if "hbm" in config.parts:
        records += measure_hbm(ctx, config, notes)
        tick("hbm")
    return records


def _steps(ctx: Context, config: ProbeConfig, computes: bool) -> int:
    steps = 0
    if computes:
        steps += sum(1 for p in ("gemm", "attention", "hbm") if p in config.parts)
        if "gemm" in config.parts:
            steps += len(config.gemm_dtypes or gemm.default_dtypes(ctx)) - 1
    if "collectives" in config.parts and ctx.world_size > 1:
        steps += num_collective_steps(config, ctx.world_size)
    return steps


def _run(ctx: Context, config: ProbeConfig, progress: Progress, command: str) -> Measurements:
    created = now_utc()
    hosts = [str(h) for h in all_gather_objects(ctx, hostname())]
    notes: list[str] = []
    computes = ctx.rank == 0 or config.compute_on_all_ranks
    progress.begin(_steps(ctx, config, computes))
    records = _measure_compute(ctx, config, notes, progress.advance) if computes else []
    if ctx.world_size > 1:
        # gather compute records to rank 0 in rank order before the collectives start
        records = [r for part in all_gather_objects(ctx, records) for r in part]
        if "collectives" in config.parts:
            records += measure_collectives(ctx, config, hosts, notes, progress.advance)
    elif "collectives" in config.parts:
        notes.append("collectives skipped: one rank; launch with torchrun --nproc-per-node N")
    result = Measurements(
        created_utc=created,
        source="probe",
        machine=machine(ctx, hosts),
        versions=versions(ctx),
        records=tuple(records),
        command=command,
        notes=tuple(notes),
    )
    return broadcast_object(ctx, result) if ctx.world_size > 1 else result


def run_probe(
    config: ProbeConfig | None = None,
    *,
    device: str = "auto",
    progress: Progress | None = None,
    command: str = "",
) -> Measurements:
    """Measure gemm, attention, device memory and collectives; needs PyTorch (``[probe]``).

    ``config`` None takes ``ProbeConfig()`` on GPUs and ``cpu_config()`` on CPUs. Raises
    ``ProbeUnavailable`` without torch and ``SpecError`` for a config that cannot run.
    """
    if config is not None:
        check_config(config)
    ctx = start(device, config.timeout_s if config else ProbeConfig().timeout_s)
    try:
        chosen = config or (ProbeConfig() if ctx.device_type == "cuda" else cpu_config())
        return _run(ctx, chosen, progress or _Silent(), command)
    finally:
        finish(ctx)
