"""``scalewall estimate``: one plan's step time, throughput, MFU, memory and where time goes."""

from __future__ import annotations

import typer
from rich.table import Table

from scalewall.api import StepEstimate, estimate
from scalewall.cli.common import (
    CalibrationOpt,
    ClusterOpt,
    CpModeOpt,
    CpOpt,
    CudaGraphsOpt,
    DpOpt,
    EpOpt,
    EtpOpt,
    FirstStageLayersOpt,
    GlobalBatchOpt,
    GlobalBatchTokensOpt,
    GpuOpt,
    GpusOpt,
    JsonOpt,
    LastStageLayersOpt,
    LocalBatchOpt,
    MicroBatchOpt,
    ModelOpt,
    OffloadLayersOpt,
    PpOpt,
    PrecisionOpt,
    RecomputeOpt,
    SeqLenOpt,
    SequenceParallelOpt,
    StackOpt,
    StackSetOpt,
    TpOpt,
    VppOpt,
    ZeroOpt,
    load_calibration,
    load_cluster,
    load_model,
    load_stack,
    plan_from_options,
)
from scalewall.cli.output import console, print_json
from scalewall.plan.defaults import DEFAULT_MODEL, PLAN_DEFAULTS, layout_widths
from scalewall.plan.format import format_plan
from scalewall.stack import DEFAULT_STACK, with_recompute_modules
from scalewall.units import GIB


def estimate_json(result: StepEstimate) -> dict[str, object]:
    """The documented ``--json`` object."""
    return result.to_dict()


def print_estimate(result: StepEstimate) -> None:
    plan = result.plan
    console.print(
        f"[bold]{result.model}[/bold] on {result.cluster}: {format_plan(plan)} "
        f"global-batch={plan.global_batch} seq={plan.seq_len} stack={result.stack}"
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
    model: ModelOpt = DEFAULT_MODEL,
    cluster: ClusterOpt = None,
    gpu: GpuOpt = None,
    gpus: GpusOpt = None,
    tp: TpOpt = None,
    pp: PpOpt = None,
    vpp: VppOpt = None,
    dp: DpOpt = None,
    cp: CpOpt = None,
    ep: EpOpt = None,
    etp: EtpOpt = PLAN_DEFAULTS.etp,
    cp_mode: CpModeOpt = PLAN_DEFAULTS.cp_mode,
    first_stage_layers: FirstStageLayersOpt = None,
    last_stage_layers: LastStageLayersOpt = None,
    offload_layers: OffloadLayersOpt = None,
    micro_batch: MicroBatchOpt = PLAN_DEFAULTS.micro_batch,
    local_batch: LocalBatchOpt = PLAN_DEFAULTS.local_batch,
    global_batch: GlobalBatchOpt = None,
    global_batch_tokens: GlobalBatchTokensOpt = None,
    seq_len: SeqLenOpt = PLAN_DEFAULTS.seq_len,
    recompute: RecomputeOpt = None,
    zero: ZeroOpt = None,
    sequence_parallel: SequenceParallelOpt = None,
    precision: PrecisionOpt = PLAN_DEFAULTS.precision,
    stack: StackOpt = DEFAULT_STACK,
    stack_set: StackSetOpt = None,
    cuda_graphs: CudaGraphsOpt = None,
    calibration: CalibrationOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Estimate one training step: time, tokens/s, MFU, memory and its breakdown."""
    spec = load_model(model)
    resolved = load_cluster(cluster, gpu, gpus)
    software = load_stack(stack, cuda_graphs, stack_set)
    recompute, software = with_recompute_modules(recompute, software, "--recompute")
    cal = load_calibration(calibration)
    if cal is not None:
        resolved = cal.apply_cluster(resolved)
    eff = cal.efficiency() if cal else None
    plan = plan_from_options(
        resolved,
        spec,
        software,
        global_batch_tokens=global_batch_tokens,
        efficiency=eff,
        tp=tp,
        pp=pp,
        dp=dp,
        cp=cp,
        ep=ep,
        vpp=vpp,
        micro_batch=micro_batch,
        local_batch=local_batch,
        global_batch=global_batch,
        seq_len=seq_len,
        recompute=recompute,
        zero=zero,
        sequence_parallel=sequence_parallel,
        precision=precision,
        etp=etp,
        cp_mode=cp_mode,
        first_stage_layers=first_stage_layers,
        last_stage_layers=last_stage_layers,
        offload_layers=offload_layers,
    )
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
        given = {"tp": tp, "pp": pp, "ep": ep}
        widths = layout_widths(spec)
        left_out = [name for name in widths if given[name] is None]
        if left_out:
            how = "the fastest layout that fits" if result.fits else "no layout fits, the fallback"
            flags = ", ".join(f"--{name}" for name in left_out)
            console.print(f"{', '.join(left_out)} left out: {how} ({flags} to set)", markup=False)
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
