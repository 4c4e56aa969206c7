"""``scalewall goodput``: interruptions, checkpoint cost, optimal interval and goodput of a job."""

from __future__ import annotations

import pandas as pd
import typer
from rich.table import Table

from scalewall import catalog
from scalewall.cli.output import console, print_json
from scalewall.cluster import resolve_cluster
from scalewall.errors import SpecError
from scalewall.plan.plan import ParallelPlan
from scalewall.reliability import (
    CheckpointSpec,
    GoodputResult,
    bandwidth_table,
    failure_rate_table,
    goodput,
    spares_table,
)
from scalewall.reliability.adapter import goodput_inputs
from scalewall.reliability.catalog import DEFAULT_FAILURE_RATES, DEFAULT_STORAGE
from scalewall.units import DAY_S, HOUR_S


def _interval(text: str) -> float | None:
    if text == "auto":
        return None
    try:
        return float(text)
    except ValueError:
        raise SpecError("interval", text, "give seconds or 'auto'") from None


def _plan(gpus: int, tp: int, pp: int, cp: int, zero: int) -> ParallelPlan:
    if tp * pp * cp <= 0 or gpus % (tp * pp * cp):
        raise SpecError("tp*pp*cp", tp * pp * cp, f"must be >= 1 and divide the GPUs ({gpus})")
    return ParallelPlan(tp=tp, pp=pp, cp=cp, dp=gpus // (tp * pp * cp), zero=zero)


def _summary(result: GoodputResult) -> None:
    d = result.to_dict()
    table = Table(title=f"goodput: {d['gpus']} GPUs, {d['storage']}, {d['failure_rates']}")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    rows = [
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
    for name, value in rows:
        table.add_row(name, value)
    console.print(table)


def _print_frame(title: str, frame: pd.DataFrame) -> None:
    table = Table(title=title)
    for col in frame.columns:
        table.add_column(str(col), justify="right")
    for row in frame.itertuples(index=False):
        table.add_row(*(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row))
    console.print(table)


def goodput_command(
    model: str = typer.Option(..., "--model", help="Catalog model id."),
    cluster: str | None = typer.Option(None, "--cluster", help="Catalog cluster id or TOML."),
    gpu: str | None = typer.Option(None, "--gpu", help="Accelerator or system id."),
    gpus: int | None = typer.Option(None, "--gpus", help="GPUs of the job."),
    tp: int = typer.Option(8, "--tp"),
    pp: int = typer.Option(1, "--pp"),
    cp: int = typer.Option(1, "--cp"),
    zero: int = typer.Option(1, "--zero", help="0: replica 0 writes; >=1 every rank writes."),
    storage: str = typer.Option(DEFAULT_STORAGE, "--storage", help="Storage tier id."),
    failure_rates: str = typer.Option(DEFAULT_FAILURE_RATES, "--failure-rates"),
    interval: str = typer.Option("auto", "--interval", help="Seconds of compute, or 'auto'."),
    run_days: float = typer.Option(30.0, "--run-days", help="Wall-clock length of the run."),
    step_s: float | None = typer.Option(None, "--step-s", help="Step time (shortest interval)."),
    spare_nodes: int | None = typer.Option(
        None, "--spare-nodes", help="Hot spares; default: always one at hand."
    ),
    asynchronous: bool = typer.Option(False, "--async", help="Asynchronous checkpoints."),
    mc_runs: int = typer.Option(10_000, "--mc-runs", help="Monte Carlo runs (0: analytic only)."),
    seed: int = typer.Option(0, "--seed"),
    what_if: bool = typer.Option(False, "--what-if", help="Add the what-it-would-take tables."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Failures, checkpoint cost, optimal interval and goodput of one training job."""
    if mc_runs < 0:
        raise SpecError("mc_runs", mc_runs, "must be >= 0")
    resolved = resolve_cluster(cluster, gpu=gpu, gpus=gpus)
    plan = _plan(gpus or resolved.num_gpus, tp, pp, cp, zero)
    inputs = goodput_inputs(
        catalog.model(model),
        resolved,
        plan,
        run_s=run_days * DAY_S,
        storage=storage,
        failure_rates=failure_rates,
        checkpoint=CheckpointSpec(asynchronous=asynchronous),
        interval_s=_interval(interval),
        step_s=step_s,
        spare_nodes=spare_nodes,
    )
    result = goodput(inputs, monte_carlo_runs=mc_runs, seed=seed)
    tables = {}
    if what_if:
        tables = {
            "failure_rate": failure_rate_table(inputs),
            "checkpoint_bandwidth": bandwidth_table(inputs),
            "spare_nodes": spares_table(inputs),
        }
    if as_json:
        out = result.to_dict()
        if tables:
            out["what_if"] = {k: v.to_dict(orient="records") for k, v in tables.items()}
        print_json(out)
        return
    _summary(result)
    for name, frame in tables.items():
        _print_frame(f"what it would take: {name}", frame)


def register(app: typer.Typer) -> None:
    app.command("goodput")(goodput_command)
