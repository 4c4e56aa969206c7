"""``scalewall fgd``: the FGD experiment on openb (Weng et al., USENIX ATC'23)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import typer
from rich.progress import TaskID

from scalewall.cli.common import ExecutorOpt, RayAddressOpt, check_output_path
from scalewall.cli.output import column, console, print_json, print_table, progress
from scalewall.cli.simulate_cmd import write_tables
from scalewall.errors import SpecError
from scalewall.sched import api
from scalewall.sched.experiments import (
    FGD_PAPER_POLICIES,
    FgdExperimentConfig,
    fgd_experiment,
    fgd_summary,
)
from scalewall.sched.jobs import job_table
from scalewall.sweep.executor import executor_from_options


def plot_fgd(curves: pd.DataFrame, path: Path) -> None:
    """Mean allocation against arrived demand, one line per policy, one panel per workload."""
    import plotly.express as px

    keys = ["workload", "policy", "demand_frac"]
    mean = curves.groupby(keys, as_index=False)["alloc_frac"].mean()
    fig = px.line(
        mean,
        x="demand_frac",
        y="alloc_frac",
        color="policy",
        facet_col="workload",
        labels={
            "demand_frac": "arrived GPU demand / cluster GPUs",
            "alloc_frac": "GPUs allocated / cluster GPUs",
        },
    )
    fig.write_html(path, include_plotlyjs=True, full_html=True)


def fgd_command(
    workloads: str = typer.Option(
        "default", "--workload", help="Comma-separated openb variants, or 'all'."
    ),
    trace: str = typer.Option("", "--trace", help="A pod list file instead of openb variants."),
    cluster: str = typer.Option("openb", "--cluster", help="openb or a node-list CSV."),
    policies: str = typer.Option(",".join(FGD_PAPER_POLICIES), "--policies"),
    seeds: int = typer.Option(10, "--seeds", help="Seeds 0..N-1 (paper: 10)."),
    max_demand: float = typer.Option(1.3, "--max-demand", help="Arrived demand to stop at."),
    at: float = typer.Option(1.0, "--at", help="Demand step for the summary (paper: 100%)."),
    skip_bad_rows: bool = typer.Option(False, "--skip-bad-rows"),
    as_json: bool = typer.Option(False, "--json", help="Allocation per policy at each step."),
    out: Path | None = typer.Option(None, "--out"),
    out_format: str = typer.Option("parquet", "--out-format"),
    plot: Path | None = typer.Option(None, "--plot"),
    executor: ExecutorOpt = "local",
    ray_address: RayAddressOpt = None,
) -> None:
    """GPU allocation against arrived demand for Random, DotProd, GpuClustering, GpuPacking,
    BestFit and FGD; FGD's cut in unallocated GPUs against DotProd."""
    check_output_path("--out", out, directory=True)
    check_output_path("--plot", plot)
    if out_format not in ("parquet", "csv"):
        raise SpecError("out-format", out_format, "parquet or csv")
    if seeds < 1:
        raise SpecError("seeds", seeds, "must be >= 1")
    names = list(api.OPENB_WORKLOADS) if workloads == "all" else workloads.split(",")
    sources = {trace: trace} if trace else {n: f"openb:{n}" for n in names}
    cl = api.load_cluster(cluster, skip_bad_rows=skip_bad_rows)
    policy_list = [p.strip() for p in policies.split(",") if p.strip()]
    config = FgdExperimentConfig(max_demand_frac=max_demand, seeds=tuple(range(seeds)))
    if not 0 < at <= max_demand:
        raise SpecError("at", at, f"a demand step in (0, --max-demand {max_demand:g}]")
    # local: in this process (one run is short); ray: the (policy, seed) runs as Ray tasks.
    runner = executor_from_options(executor, ray_address=ray_address) if executor == "ray" else None
    if executor != "ray":
        executor_from_options(executor, workers=1, ray_address=ray_address)  # checks the flags
    frames, summaries = [], {}
    with progress(disabled=as_json) as bar:
        for name, source in sources.items():
            read = api.load_trace(source, fmt="openb", skip_bad_rows=skip_bad_rows)
            task = bar.add_task(name, total=len(policy_list) * seeds)

            def advance(_policy: str, _seed: int, task: TaskID = task) -> None:
                bar.advance(task)

            runs = fgd_experiment(
                cl, job_table(read.frame), policies=policy_list, config=config, progress=advance,
                executor=runner,
            )  # fmt: skip
            runs.insert(0, "workload", name)
            frames.append(runs)
            summaries[name] = {
                **fgd_summary(runs, cl.total_gpus, demand_frac=at),
                "bad_rows_skipped": read.bad_rows,
            }
    curves = pd.concat(frames, ignore_index=True)
    if out is not None:
        write_tables({"fgd_runs": curves}, out, out_format)
    if plot is not None:
        plot.parent.mkdir(parents=True, exist_ok=True)
        plot_fgd(curves, plot)
    if as_json:
        mean = curves.groupby(["workload", "policy", "demand_frac"])["alloc_frac"].mean()
        steps = {
            w: {
                p: [
                    {"demand_frac": float(d), "alloc_frac": float(v)}
                    for d, v in mean.loc[(w, p)].items()
                ]
                for p in policy_list
            }
            for w in sources
        }
        print_json(
            {
                "total_gpus": cl.total_gpus,
                "seeds": seeds,
                "summary": summaries,
                "allocation": steps,
            },
            "fgd",
        )
        return
    for name, summary in summaries.items():
        allocs = summary["alloc_frac"]
        unalloc = summary["unallocated_gpus"]
        assert isinstance(allocs, dict) and isinstance(unalloc, dict)
        print_table(
            [
                column("policy"),
                column("GPU alloc", right=True),
                column("unallocated GPUs", right=True),
            ],
            [[p, f"{allocs[p]:.2%}", f"{unalloc[p]:.0f}"] for p in policy_list],
            title=f"openb {name}: allocation at {at:.0%} arrived demand",
        )
        if "reduction_frac" in summary:
            console.print(
                f"FGD vs dotprod: {summary['reduction_frac']:.1%} fewer unallocated GPUs "
                f"({summary['extra_gpus_in_use']:.0f} more in use); largest cut up to "
                f"this step {summary['max_reduction_frac']:.1%}"
            )


def register(app: typer.Typer) -> None:
    app.command("fgd")(fgd_command)
