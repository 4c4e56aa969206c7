"""``scalewall goodput``: interruptions, checkpoint cost, optimal interval and goodput of a job.

The job is a model, a cluster and a plan given like ``scalewall estimate`` (or ``--best-plan``:
the search's best plan by goodput-adjusted tokens/s); its step time comes from the step model
unless ``--step-s`` is given.
"""

from __future__ import annotations

from typing import Annotated, Any

import pandas as pd
import typer

from scalewall._entry import Job
from scalewall._entry import goodput as run_goodput
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
    WideOpt,
    ZeroOpt,
    load_calibration,
    load_cluster,
    load_stack,
)
from scalewall.cli.output import column, console, print_json, print_table
from scalewall.errors import SpecError
from scalewall.plan.defaults import DEFAULT_MODEL, PLAN_DEFAULTS
from scalewall.plan.format import format_plan
from scalewall.reliability import (
    GoodputResult,
    bandwidth_table,
    failure_rate_table,
    required_spares,
    restart_table,
    spares_table,
)
from scalewall.reliability.catalog import DEFAULT_FAILURE_RATES, DEFAULT_STORAGE
from scalewall.stack import DEFAULT_STACK, with_recompute_modules
from scalewall.units import DAY_S, HOUR_S


def _interval(text: str) -> float | None:
    if text == "auto":
        return None
    try:
        return float(text)
    except ValueError:
        raise SpecError("interval", text, "give seconds or 'auto'") from None


def _summary(result: GoodputResult, job: Job, wide: bool) -> None:
    d = result.to_dict()
    p = job.plan
    title = f"goodput: {d['gpus']} GPUs, {d['storage']}, {d['failure_rates']}"
    rows = [
        (
            f"plan ({job.plan_source})",
            format_plan(p) + ("" if job.fits else " [red](does NOT fit in memory)[/red]"),
        ),
        (f"step time ({job.step_source})", f"{job.step_time_s:.3f} s"),
        (
            "tokens/s (raw / x goodput)",
            f"{job.tokens_per_s:,.0f} / {job.tokens_per_s * result.goodput_frac:,.0f}",
        ),
        ("job MTTF", f"{d['mttf_s'] / HOUR_S:.2f} h"),
        ("unexpected interruptions / day", f"{d['interruptions_per_day']:.2f}"),
        ("planned interruptions / day", f"{d['planned_interruptions_per_day']:.2f}"),
        ("checkpoint size", f"{d['checkpoint_bytes'] / 1e12:.2f} TB"),
        (
            "checkpoint write / stall",
            f"{d['checkpoint_write_s']:.1f} s / {d['checkpoint_stall_s']:.1f} s",
        ),
        ("checkpoint restore", f"{d['checkpoint_restore_s']:.1f} s"),
        ("restart overhead", f"{d['restart_s'] / 60:.1f} min"),
        *(
            (f"  restart: {phase}", f"{seconds:.1f} s")
            for phase, seconds in d["restart_phases_s"].items()
        ),
        (
            "interval (Young / Daly / optimum)",
            " / ".join(
                f"{d[k]:.0f}" for k in ("young_interval_s", "daly_interval_s", "optimal_interval_s")
            )
            + " s",
        ),
        ("interval used", f"{d['interval_s']:.0f} s"),
        ("goodput (analytic)", f"{d['goodput_frac']:.2%}"),
    ]
    if d["goodput_mc_frac"] is not None:
        low, high = d["goodput_ci"]
        rows.append(
            ("goodput (Monte Carlo, 95% CI)", f"{d['goodput_mc_frac']:.2%} [{low:.2%}, {high:.2%}]")
        )
    for kind, hours in d["lost_gpu_hours_per_day"].items():
        rows.append((f"lost GPU-h/day: {kind}", f"{hours:,.0f}"))
    columns = [column("quantity"), column("value", right=True)]
    print_table(columns, [list(r) for r in rows], title=title, wide=wide)


def _print_frame(title: str, frame: pd.DataFrame, wide: bool) -> None:
    """A what-if frame: its first two columns always, the others left to right as they fit."""
    columns = [column(str(c), max(0, k - 1), right=True) for k, c in enumerate(frame.columns)]
    rows = [
        [f"{v:.4g}" if isinstance(v, float) else str(v) for v in row]
        for row in frame.itertuples(index=False)
    ]
    print_table(columns, rows, title=title, wide=wide)


def goodput_command(
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
    global_batch: Annotated[
        int | None,
        typer.Option(
            help=f"Sequences per step (default {PLAN_DEFAULTS.global_batch}; with --best-plan, "
            "16M tokens)."
        ),
    ] = None,
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
    best_plan: Annotated[
        bool,
        typer.Option(
            "--best-plan", help="Use the search's best plan by tokens/s x goodput (ignores tp..)."
        ),
    ] = False,
    storage: Annotated[str, typer.Option(help="Storage tier id.")] = DEFAULT_STORAGE,
    failure_rates: Annotated[
        str, typer.Option(help="Failure-rate profile id.")
    ] = DEFAULT_FAILURE_RATES,
    interval: Annotated[str, typer.Option(help="Seconds of compute, or 'auto'.")] = "auto",
    run_days: Annotated[float, typer.Option(help="Wall-clock length of the run.")] = 30.0,
    step_s: Annotated[
        float | None, typer.Option(help="Step time (default: the step model's estimate).")
    ] = None,
    spare_nodes: Annotated[
        int | None, typer.Option(help="Hot spares; default: always one at hand.")
    ] = None,
    asynchronous: Annotated[
        bool, typer.Option("--async", help="Asynchronous checkpoints.")
    ] = False,
    mc_runs: Annotated[int, typer.Option(help="Monte Carlo runs (0: analytic only).")] = 10_000,
    seed: Annotated[int, typer.Option(help="Monte Carlo seed.")] = 0,
    what_if: Annotated[bool, typer.Option(help="Add the what-it-would-take tables.")] = False,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Failures, checkpoint cost, optimal interval and goodput of one training job."""
    interval_s = _interval(interval)
    if not run_days > 0:
        raise SpecError("run_days", run_days, "must be > 0")
    software = load_stack(stack, cuda_graphs, stack_set)
    recompute, software = with_recompute_modules(recompute, software, "--recompute")
    cal = load_calibration(calibration)
    where: Any = load_cluster(cluster, gpu, gpus)
    if cal is not None:
        where = cal.apply_cluster(where)
    plan = dict(
        tp=tp,
        pp=pp,
        dp=dp,
        cp=cp,
        ep=ep,
        etp=etp,
        cp_mode=cp_mode,
        first_stage_layers=first_stage_layers,
        last_stage_layers=last_stage_layers,
        offload_layers=offload_layers,
        vpp=vpp,
        micro_batch=micro_batch,
        local_batch=local_batch,
        recompute=recompute,
        zero=zero,
        sequence_parallel=sequence_parallel,
        precision=precision,
    )
    run = run_goodput(
        model,
        where,
        None if best_plan else plan,
        best_plan=best_plan,
        run_s=run_days * DAY_S,
        storage=storage,
        failure_rates=failure_rates,
        interval_s=interval_s,
        step_s=step_s,
        spare_nodes=spare_nodes,
        asynchronous=asynchronous,
        monte_carlo_runs=mc_runs,
        seed=seed,
        stack=software,
        global_batch=global_batch,
        global_batch_tokens=global_batch_tokens,
        seq_len=seq_len,
        efficiency=cal.efficiency() if cal else None,
    )
    result, job, inputs = run.result, run.job, run.inputs
    tables = {}
    if what_if:
        tables = {
            "failure_rate": failure_rate_table(inputs),
            "checkpoint_bandwidth": bandwidth_table(inputs),
            "restart_time": restart_table(inputs),
            "spare_nodes": spares_table(inputs),
        }
    spares_needed = required_spares(inputs) if what_if else None
    if as_json:
        out = run.to_dict()
        if tables:
            out["what_if"] = {k: v.to_dict(orient="records") for k, v in tables.items()}
            out["required_spare_nodes"] = spares_needed
        print_json(out, "goodput")
        return
    _summary(result, job, wide)
    for name, frame in tables.items():
        _print_frame(f"what it would take: {name}", frame, wide)
    if spares_needed is not None:
        console.print(f"hot spares the repair queue requires: {spares_needed} nodes")


def register(app: typer.Typer) -> None:
    app.command("goodput")(goodput_command)
