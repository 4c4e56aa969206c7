"""``scalewall estimate``: one plan's step time, throughput, MFU, memory and where time goes."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from scalewall.api import StepEstimate, estimate
from scalewall.cli.common import (
    CalibrationOpt,
    ClusterOpt,
    CpOpt,
    CudaGraphsOpt,
    DpOpt,
    EpOpt,
    GpuOpt,
    GpusOpt,
    JsonOpt,
    MicroBatchOpt,
    ModelOpt,
    PpOpt,
    PrecisionOpt,
    RecomputeOpt,
    SeqLenOpt,
    SequenceParallelOpt,
    StackOpt,
    StackSetOpt,
    TpOpt,
    VppOpt,
    load_calibration,
    load_cluster,
    load_model,
    load_stack,
    plan_from_options,
)
from scalewall.cli.output import console, print_json
from scalewall.stack import DEFAULT_STACK
from scalewall.units import GIB


def estimate_json(result: StepEstimate) -> dict[str, object]:
    """The documented ``--json`` object."""
    return result.to_dict()


def print_estimate(result: StepEstimate) -> None:
    plan = result.plan
    console.print(
        f"[bold]{result.model}[/bold] on {result.cluster}: tp={plan.tp} pp={plan.pp} "
        f"vpp={plan.vpp} dp={plan.dp} cp={plan.cp} ({plan.cp_mode}) ep={plan.ep} etp={plan.etp} "
        f"micro-batch={plan.micro_batch} "
        f"global-batch={plan.global_batch} seq={plan.seq_len} recompute={plan.recompute} "
        f"zero={plan.zero} sp={plan.sequence_parallel} {plan.precision} stack={result.stack}"
    )
    head = Table(show_header=False)
    head.add_row("step time", f"{result.step_time_s:.3f} s")
    head.add_row("tokens/s", f"{result.tokens_per_s:,.0f}")
    head.add_row("MFU / HFU", f"{result.mfu:.1%} / {result.hfu:.1%}")
    head.add_row(
        "TFLOP/s per GPU (model / hardware)",
        f"{result.model_tflops_per_gpu:.1f} / {result.hardware_tflops_per_gpu:.1f}",
    )
    verdict = "fits" if result.fits else "[red]does NOT fit[/red]"
    head.add_row(
        "memory per GPU",
        f"{result.memory_total_bytes / GIB:.1f} GiB of {result.hbm_bytes / GIB:.1f} GiB: {verdict}",
    )
    head.add_row("largest loss", result.limiter)
    console.print(head)
    parts = Table("step part", "seconds", "share")
    for name, seconds in result.breakdown_s.items():
        parts.add_row(name, f"{seconds:.4f}", f"{seconds / result.step_time_s:.1%}")
    mem = Table("memory part", "GiB")
    for name, value in result.memory_bytes.items():
        mem.add_row(name, f"{value / GIB:.2f}")
    console.print(parts)
    console.print(mem)


def estimate_command(
    model: ModelOpt = "llama3-70b",
    cluster: ClusterOpt = None,
    gpu: GpuOpt = None,
    gpus: GpusOpt = None,
    tp: TpOpt = 8,
    pp: PpOpt = 4,
    vpp: VppOpt = 1,
    dp: DpOpt = None,
    cp: CpOpt = 1,
    ep: EpOpt = 1,
    etp: Annotated[int, typer.Option(help="Expert tensor-parallel width (MoE).")] = 1,
    cp_mode: Annotated[
        str, typer.Option(help="Context parallelism: ring (KV ring) or a2a (Ulysses).")
    ] = "ring",
    first_stage_layers: Annotated[
        int, typer.Option(help="Layers on the first pipeline stage (0: even split).")
    ] = 0,
    last_stage_layers: Annotated[
        int, typer.Option(help="Layers on the last pipeline stage (0: even split).")
    ] = 0,
    micro_batch: MicroBatchOpt = 1,
    global_batch: Annotated[int, typer.Option(help="Sequences per step.")] = 512,
    seq_len: SeqLenOpt = 8192,
    recompute: RecomputeOpt = "selective",
    zero: Annotated[
        int | None,
        typer.Option(
            help="0 all-reduce, 1 distributed optimizer, 2, 3 (default: the stack's sharding)."
        ),
    ] = None,
    sequence_parallel: SequenceParallelOpt = True,
    precision: PrecisionOpt = "bf16",
    stack: StackOpt = DEFAULT_STACK,
    stack_set: StackSetOpt = None,
    cuda_graphs: CudaGraphsOpt = None,
    calibration: CalibrationOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Estimate one training step: time, tokens/s, MFU, memory and its breakdown."""
    if cluster is None and gpu is None:
        gpu, gpus = "h100-sxm-80gb", 1024 if gpus is None else gpus
    spec = load_model(model)
    resolved = load_cluster(cluster, gpu, gpus)
    software = load_stack(stack, cuda_graphs, stack_set)
    plan = plan_from_options(
        resolved,
        spec,
        tp=tp,
        pp=pp,
        dp=dp,
        cp=cp,
        ep=ep,
        vpp=vpp,
        micro_batch=micro_batch,
        global_batch=global_batch,
        seq_len=seq_len,
        recompute=recompute,
        zero=software.zero_stage if zero is None else zero,
        sequence_parallel=sequence_parallel,
        precision=precision,
        etp=etp,
        cp_mode=cp_mode,
        first_stage_layers=first_stage_layers,
        last_stage_layers=last_stage_layers,
    )
    cal = load_calibration(calibration)
    if cal is not None:
        resolved = cal.apply_cluster(resolved)
    eff = cal.efficiency() if cal else None
    result = estimate(spec, resolved, plan, stack=software, efficiency=eff)
    band = None
    if cal is not None and result.fits:
        from scalewall.calibrate import step_interval

        band = step_interval(spec, resolved, plan, cal, stack=software)
    if as_json:
        data = estimate_json(result)
        if band is not None:
            data["step_time_interval_s"] = list(band.step_time_interval_s)
            data["tokens_per_s_interval"] = list(band.tokens_per_s_interval)
            data["interval_level"] = band.level
            data["interval_basis"] = f"calibration {calibration}"
        print_json(data, "estimate")
    else:
        print_estimate(result)
        if band is None and result.step_time_interval_s is not None:
            low, high = result.step_time_interval_s
            console.print(
                f"90% interval: step {low:.3f}-{high:.3f} s, from the {result.interval_basis}",
                markup=False,
            )
        if band is not None:
            low, high = band.step_time_interval_s
            t_low, t_high = band.tokens_per_s_interval
            console.print(
                f"calibrated {band.level:.0%} prediction interval: step {low:.3f}-{high:.3f} s, "
                f"{t_low:,.0f}-{t_high:,.0f} tokens/s ({calibration})"
            )


def register(app: typer.Typer) -> None:
    app.command("estimate")(estimate_command)
