"""``scalewall simulate``: replay a trace on a cluster with a queueing and a placement policy."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import typer
from rich.markup import escape

from scalewall.cli.common import check_output_path
from scalewall.cli.output import column, err_console, print_json, print_table, progress
from scalewall.errors import SpecError
from scalewall.sched import api
from scalewall.sched.duration import DurationModel, TierSlowdownModel
from scalewall.sched.engine import FailureModel, SimConfig
from scalewall.sched.metrics import SimResult
from scalewall.sched.tenancy import load_quotas
from scalewall.sched.traces._common import TraceRead


def write_tables(tables: dict[str, pd.DataFrame], out: Path, fmt: str) -> list[Path]:
    """Write each table as ``<name>.<fmt>`` under ``out``."""
    if fmt not in ("parquet", "csv"):
        raise SpecError("out-format", fmt, "parquet or csv")
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, table in tables.items():
        path = out / f"{name}.{fmt}"
        if fmt == "csv":
            table.to_csv(path, index=False)
        else:
            table.to_parquet(path, index=False)
        paths.append(path)
    return paths


def plot_replay(result: SimResult, path: Path) -> None:
    """Utilisation, fragmentation and per-tenant GPUs over time, as one HTML file."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    ts = result.timeseries
    days = ts["time_s"] / 86_400.0
    fig = make_subplots(
        rows=3,
        cols=1,
        shared_xaxes=True,
        subplot_titles=(
            "GPU allocation",
            "Free GPU capacity on partly used GPUs",
            "GPUs per tenant",
        ),
    )
    fig.add_trace(go.Scatter(x=days, y=ts["gpu_alloc_frac"], name="allocated"), row=1, col=1)
    fig.add_trace(go.Scatter(x=days, y=ts["partial_gpu_free_frac"], name="fragmented"), 2, 1)
    for col in [c for c in ts.columns if c.startswith("gpus_")]:
        fig.add_trace(go.Scatter(x=days, y=ts[col], name=col[5:], stackgroup="t"), row=3, col=1)
    fig.update_xaxes(title_text="days", row=3, col=1)
    fig.write_html(path, include_plotlyjs=True, full_html=True)


def _failure_model(
    read: TraceRead,
    *,
    failures: bool,
    trace_failures: bool,
    rate: float,
    repair_hours: float,
    spare_nodes: int,
    demand: float,
    restart_cost: bool,
) -> FailureModel | None:
    """The rate model (``--failures``), the trace's own failures (``--trace-failures``: the
    recorded attempts of a Philly log, replayed in each job's run time), both, or neither."""
    if trace_failures and demand and read.node_failures:
        raise SpecError(
            "trace-failures",
            True,
            "replays failures on the trace's clock; drop --demand, which rescales that clock",
        )
    if trace_failures and not (read.node_failures or read.attempts):
        raise SpecError(
            "trace-failures",
            read.source,
            "this trace records no failures (only Philly job logs record the attempts of each job)",
        )
    # Built before the early return so that bad rates are refused even without --failures.
    model = FailureModel(
        failures_per_1000_node_days=rate if failures else 0.0,
        repair_time_s=repair_hours * 3600.0,
        spare_nodes=spare_nodes,
        trace_failures=read.node_failures if trace_failures else (),
        recorded_attempts=read.attempts if trace_failures else (),
        charge_restarts=restart_cost,
    )
    if rate < 0 or not math.isfinite(rate):
        raise SpecError("failure_rate", rate, "a finite number of failures >= 0")
    return model if failures or trace_failures else None


def _duration(step_model: str, step_cluster: str, slowdown_per_tier: float) -> DurationModel:
    if not step_model:
        return TierSlowdownModel(slowdown_per_tier_frac=slowdown_per_tier)
    from scalewall.sched.step_duration import StepModelDuration

    # A node-list file (the Philly machine list has no suffix) is not a catalog cluster.
    catalog = (
        step_cluster not in ("", "openb")
        and "/" not in step_cluster
        and not step_cluster.endswith(".csv")
        and not Path(step_cluster).is_file()
    )
    return StepModelDuration(model=step_model, cluster=step_cluster if catalog else "h100-16k-ndr")


def simulate_command(
    trace: str = typer.Option(
        "openb",
        "--trace",
        help="openb[:variant], synthetic:<Seren|Kalos>:<jobs>[:<days>], or a trace file.",
    ),
    fmt: str = typer.Option(
        "",
        "--format",
        help="Trace format: openb, philly, helios, acme, pai (default: from the file name).",
    ),
    cluster: str = typer.Option(
        "openb",
        "--cluster",
        help="openb, a node-list CSV (openb or "
        "PAI 2020 machine spec), or a catalog cluster id or TOML "
        "(scalewall catalog clusters). Ignored with --nodes.",
    ),
    nodes: int = typer.Option(0, "--nodes", help="Synthetic cluster: number of nodes."),
    gpus_per_node: int = typer.Option(8, "--gpus-per-node"),
    nodes_per_domain: int = typer.Option(
        1, "--nodes-per-domain", help="Nodes per scale-up domain (18 for NVL72)."
    ),
    gpu_model: str = typer.Option("H100", "--gpu-model"),
    queue: str = typer.Option("fifo", "--queue"),
    placement: str = typer.Option("bestfit", "--placement"),
    seed: int = typer.Option(0, "--seed"),
    demand: float = typer.Option(
        0.0,
        "--demand",
        help="Rescale arrivals to this offered load "
        "(share of the cluster's GPUs); 0 keeps the trace's times.",
    ),
    failures: bool = typer.Option(False, "--failures/--no-failures", help="Inject node failures."),
    failure_rate: float = typer.Option(
        6.50, "--failure-rate", help="Failures per 1,000 node-days (Kokolis et al. 2024)."
    ),
    repair_hours: float = typer.Option(4.0, "--repair-hours"),
    spare_nodes: int = typer.Option(0, "--spare-nodes"),
    checkpoint_s: float = typer.Option(3600.0, "--checkpoint-interval-s"),
    slowdown_per_tier: float = typer.Option(
        0.05, "--slowdown-per-tier", help="Extra run time per topology tier crossed."
    ),
    step_model: str = typer.Option(
        "",
        "--step-model",
        help="Stretch run times by the step "
        "model's slowdown on each placement, for this catalog model "
        "(instead of --slowdown-per-tier).",
    ),
    step_cluster: str = typer.Option(
        "",
        "--step-cluster",
        help="Catalog cluster whose network "
        "prices the steps (default: --cluster when it is a catalog "
        "id, else h100-16k-ndr).",
    ),
    trace_failures: bool = typer.Option(
        False,
        "--trace-failures/--no-trace-failures",
        help="Replay the failed attempts the trace records (Philly: each job stops where "
        "its attempt failed, charged to the attempt's machine), with --failures' rate model.",
    ),
    restart_cost: bool = typer.Option(
        True,
        "--restart-cost/--no-restart-cost",
        help="Charge a job hit by a node failure the reliability model's restart "
        "(detection, drain, start, communicators, state load, warm-up).",
    ),
    sample_s: float = typer.Option(3600.0, "--sample-interval-s"),
    skip_bad_rows: bool = typer.Option(
        False, "--skip-bad-rows", help="Count and skip malformed trace rows."
    ),
    never_fit: str = typer.Option(
        "skip",
        "--never-fit",
        help="Jobs that cannot fit even the empty cluster: skip (with a warning) or reject.",
    ),
    quotas: Path | None = typer.Option(
        None,
        "--quotas",
        help="TOML of tenant queues ([[queue]] name, cohort, nominal_gpus, borrowing_limit, "
        "lending_limit, priority) for --queue quota or quota-priority.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    out: Path | None = typer.Option(None, "--out", help="Write jobs, timeseries, events here."),
    out_format: str = typer.Option("parquet", "--out-format", help="parquet or csv"),
    plot: Path | None = typer.Option(None, "--plot", help="Write an HTML plot here."),
) -> None:
    """Replay a trace: queueing delay, JCT, utilisation, fragmentation, per-tenant GPU-hours."""
    check_output_path("--out", out, directory=True)
    check_output_path("--plot", plot)
    if out_format not in ("parquet", "csv"):
        raise SpecError("out-format", out_format, "parquet or csv")
    tenant_queues = tuple(load_quotas(quotas)) if quotas is not None else None
    read = api.load_trace(trace, fmt=fmt, skip_bad_rows=skip_bad_rows, seed=seed)
    if nodes:
        cl = api.synthetic_cluster(
            num_nodes=nodes,
            gpus_per_node=gpus_per_node,
            nodes_per_domain=nodes_per_domain,
            gpu_model=gpu_model,
        )
    else:
        cl = api.load_cluster(cluster, skip_bad_rows=skip_bad_rows)
    failure_model = _failure_model(
        read,
        failures=failures,
        trace_failures=trace_failures,
        rate=failure_rate,
        repair_hours=repair_hours,
        spare_nodes=spare_nodes,
        demand=demand,
        restart_cost=restart_cost,
    )
    duration = _duration(step_model, step_cluster or cluster, slowdown_per_tier)
    config = SimConfig(
        checkpoint_interval_s=checkpoint_s,
        sample_interval_s=sample_s,
        never_fit=never_fit,
        tenant_queues=tenant_queues,
    )
    horizon = float(read.frame["submit_s"].max()) if len(read.frame) else 0.0
    with progress(disabled=as_json) as bar:
        task = bar.add_task("simulating", total=max(horizon, 1.0))
        result = api.simulate(
            cl,
            read.frame,
            queue=queue,
            placement=placement,
            seed=seed,
            demand=demand or None,
            failures=failure_model,
            config=config,
            duration=duration,
            progress=lambda t: bar.update(task, completed=min(t, horizon)),
        )
    for warning in result.summary["warnings"]:
        err_console.print(f"warning: {warning}", soft_wrap=True)
    summary = {
        **result.summary,
        "trace": read.source,
        "bad_rows_skipped": read.bad_rows,
        "cluster": api.describe(cl),
    }
    if out is not None:
        write_tables(
            {"jobs": result.jobs, "timeseries": result.timeseries, "events": result.events},
            out,
            out_format,
        )
    if plot is not None:
        plot.parent.mkdir(parents=True, exist_ok=True)
        plot_replay(result, plot)
    if as_json:
        print_json(summary, "simulate")
        return
    print_table(
        [column("quantity"), column("value", right=True)],
        _summary_rows(summary),
        title="simulation summary",
    )


def _summary_rows(summary: dict[str, Any]) -> list[list[str]]:
    """One row per summary value; a mapping is one row per entry (``key: entry``)."""
    rows: list[list[str]] = []
    for key, value in summary.items():
        if isinstance(value, dict):
            rows += [[f"{key}: {k}", _value_text(v)] for k, v in value.items()]
        else:
            rows.append([key, _value_text(value)])
    return rows


def _value_text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e6 else f"{value:,.0f}"
    return escape(str(value))


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate_command)
