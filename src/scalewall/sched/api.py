"""Python entry points: load a cluster and a trace, run a replay or the FGD experiment."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scalewall.errors import SpecError
from scalewall.sched.cluster import Cluster, SyntheticClusterSpec, cluster_from_nodes
from scalewall.sched.cluster import synthetic_cluster as _synthetic_cluster
from scalewall.sched.duration import DurationModel
from scalewall.sched.engine import FailureModel, SimConfig, Simulation
from scalewall.sched.jobs import JobTable, job_table
from scalewall.sched.metrics import SimResult, collect
from scalewall.sched.traces._common import TraceRead
from scalewall.sched.traces.acme import read_acme
from scalewall.sched.traces.helios import read_helios
from scalewall.sched.traces.openb import openb_path, read_openb_nodes, read_openb_pods
from scalewall.sched.traces.pai import read_pai_machines, read_pai_tasks
from scalewall.sched.traces.philly import read_philly, read_philly_machines
from scalewall.sched.workload import WorkloadSpec, synthetic_jobs

TRACE_FORMATS: dict[str, Callable[..., TraceRead]] = {
    "openb": read_openb_pods,
    "philly": read_philly,
    "helios": read_helios,
    "acme": read_acme,
    "pai": read_pai_tasks,
}
OPENB_WORKLOADS = ("default", "cpu250", "gpushare100", "gpuspec33", "multigpu50")


def trace_format(path: Path) -> str:
    """Guess a trace's format from its file name."""
    name = path.name.lower()
    guesses = [
        ("openb_pod_list", "openb"),
        ("cluster_log", "helios"),
        ("trace_seren", "acme"),
        ("trace_kalos", "acme"),
        ("pai_task", "pai"),
        (".json", "philly"),
        ("philly", "philly"),
    ]
    for needle, fmt in guesses:
        if needle in name:
            return fmt
    raise SpecError(
        "format",
        "",
        f"cannot tell the format of {path.name}; pass one of: {', '.join(TRACE_FORMATS)}",
    )


def load_trace(
    trace: str,
    *,
    fmt: str = "",
    skip_bad_rows: bool = False,
    seed: int = 0,
    tenants: tuple[tuple[str, float], ...] = (),
) -> TraceRead:
    """A trace by name: ``openb`` / ``openb:<variant>`` (shipped files), ``synthetic:<Seren|Kalos>:
    <num_jobs>[:<days>]``, or a path (format from ``fmt`` or the file name). ``tenants``:
    (name, weight) pairs a synthetic trace draws its jobs' tenants from (default: eight
    Zipf-weighted ``tenant-i``); a recorded trace keeps its own."""
    if seed < 0:
        raise SpecError("seed", seed, "must be a non-negative integer")
    if trace == "openb" or trace.startswith("openb:"):
        variant = trace.partition(":")[2] or "default"
        if variant not in OPENB_WORKLOADS:
            raise SpecError("trace", trace, f"openb variants: {', '.join(OPENB_WORKLOADS)}")
        return read_openb_pods(openb_path(variant), skip_bad_rows=skip_bad_rows)
    if trace.startswith("synthetic:"):
        parts = trace.split(":")
        try:
            days = float(parts[3]) if len(parts) > 3 else 30.0
            spec = WorkloadSpec(
                like=parts[1], num_jobs=int(parts[2]), span_s=days * 86_400.0, tenants=tenants
            )
        except (IndexError, ValueError):
            raise SpecError("trace", trace, "synthetic:<Seren|Kalos>:<num_jobs>[:<days>]") from None
        return TraceRead(frame=synthetic_jobs(spec, seed), bad_rows=0, source=trace)
    path = Path(trace)
    fmt = fmt or trace_format(path)
    if fmt not in TRACE_FORMATS:
        raise SpecError("format", fmt, f"valid: {', '.join(TRACE_FORMATS)}")
    read = TRACE_FORMATS[fmt](path, skip_bad_rows=skip_bad_rows)
    if read.frame.empty:
        skipped = f" ({read.bad_rows} malformed rows skipped)" if read.bad_rows else ""
        raise SpecError("trace", str(path), f"holds no jobs{skipped}; a trace with job rows")
    return read


def catalog_cluster_spec(cluster_id: str) -> SyntheticClusterSpec:
    """The node layout of a catalog cluster id or cluster TOML file (``scalewall catalog
    clusters``).

    Nodes of ``system.gpus_per_node`` GPUs; a scale-up domain of ``scale_up_domain_gpus``
    (an 8-GPU board, or 18 four-GPU trays in an NVL72 rack); racks span the first scale-out
    tier (leaf / rail group) and pods the second (spine plane), or the whole cluster where the
    fabric has fewer tiers. CPU per node keeps the synthetic default (the catalog has none).
    """
    from scalewall.cluster import resolve_cluster  # the catalog is optional for sched

    return topology_cluster_spec(resolve_cluster(cluster_id))


def topology_cluster_spec(resolved: Any) -> SyntheticClusterSpec:
    """The node layout of a resolved `scalewall.plan.topology.Cluster` (as
    `catalog_cluster_spec`; the report passes a design built at one size)."""
    per_node = resolved.system.gpus_per_node
    scale_out = sorted(t.span_gpus for t in resolved.tiers if not t.scale_up)
    rack_gpus = scale_out[0] if scale_out else resolved.num_gpus
    pod_gpus = scale_out[1] if len(scale_out) > 1 else resolved.num_gpus
    nodes_per_rack = max(rack_gpus // per_node, 1)
    memory = int(resolved.system.host_memory_bytes)
    return SyntheticClusterSpec(
        num_nodes=-(-resolved.num_gpus // per_node),
        gpus_per_node=per_node,
        gpu_model=resolved.accelerator.id,
        nodes_per_rack=nodes_per_rack,
        racks_per_pod=max(pod_gpus // per_node // nodes_per_rack, 1),
        nodes_per_domain=max(resolved.system.scale_up_domain_gpus // per_node, 1),
        memory_bytes_per_node=memory if memory > 0 else SyntheticClusterSpec.memory_bytes_per_node,
    )


def load_cluster(cluster: str = "openb", *, skip_bad_rows: bool = False) -> Cluster:
    """A cluster from ``openb`` (the shipped 1,213-node list), an openb node list CSV, a PAI
    2020 ``pai_machine_spec.csv``, or a catalog cluster id (``scalewall catalog clusters``)."""
    if cluster == "openb":
        return cluster_from_nodes(read_openb_nodes(openb_path("nodes")))
    path = Path(cluster)
    if path.suffix.lower() == ".toml":
        return _synthetic_cluster(catalog_cluster_spec(cluster))
    if not path.is_file():
        if path.suffix.lower() in (".csv", ".toml") or "/" in cluster:
            raise SpecError("cluster", cluster, "no such file")
        try:
            return _synthetic_cluster(catalog_cluster_spec(cluster))
        except SpecError as exc:
            raise SpecError(
                "cluster",
                cluster,
                "openb, a node-list CSV (openb or PAI 2020 "
                f"format), or a catalog cluster id ({exc.valid})",
            ) from None
    try:
        with path.open() as handle:
            first = handle.readline()
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError("cluster", cluster, f"a readable node-list CSV ({exc})") from None
    if first.startswith("sn,"):
        return cluster_from_nodes(read_openb_nodes(path, skip_bad_rows=skip_bad_rows))
    if first.startswith("machineId"):
        return cluster_from_nodes(read_philly_machines(path, skip_bad_rows=skip_bad_rows))
    return cluster_from_nodes(read_pai_machines(path, skip_bad_rows=skip_bad_rows))


def synthetic_cluster(**fields: int | str) -> Cluster:
    """A regular cluster; keyword arguments are :class:`SyntheticClusterSpec` fields."""
    return _synthetic_cluster(SyntheticClusterSpec(**fields))  # type: ignore[arg-type]


def scale_demand(frame: pd.DataFrame, total_gpus: int, load_frac: float) -> pd.DataFrame:
    """Compress or stretch submit times so the offered load (GPU-seconds asked per second over
    the submit window, divided by the cluster's GPUs) equals ``load_frac``."""
    if not 0 < load_frac < math.inf:
        raise SpecError("demand", load_frac, "must be > 0 (offered load as a share of GPUs)")
    span = float(frame["submit_s"].max() - frame["submit_s"].min())
    gpu_s = float((frame["num_gpu"] * frame["gpu_milli"] / 1000.0 * frame["run_s"]).sum())
    if span <= 0 or gpu_s <= 0:
        return frame
    current = gpu_s / span / total_gpus
    out = frame.copy()
    start = float(frame["submit_s"].min())
    out["submit_s"] = start + (frame["submit_s"] - start) * (current / load_frac)
    return out


def simulate(
    cluster: Cluster,
    jobs: JobTable | pd.DataFrame,
    *,
    queue: str = "fifo",
    placement: str = "bestfit",
    seed: int = 0,
    demand: float | None = None,
    failures: FailureModel | None = None,
    config: SimConfig | None = None,
    duration: DurationModel | None = None,
    progress: Callable[[float], None] | None = None,
) -> SimResult:
    """Replay ``jobs`` on ``cluster`` with a queueing and a placement policy.

    ``demand`` rescales arrival times to that offered load (share of the cluster's GPUs);
    ``config`` overrides every other knob. Same inputs and seed, byte-identical results.
    """
    frame = jobs.to_frame() if isinstance(jobs, JobTable) else jobs
    if demand is not None:
        frame = scale_demand(frame, cluster.total_gpus, demand)
    base = config or SimConfig()
    config = replace(
        base,
        queue=queue,
        placement=placement,
        seed=seed,
        failures=failures if failures is not None else base.failures,
    )
    sim = Simulation(cluster, job_table(frame), config, duration=duration, progress=progress)
    sim.run()
    return collect(sim)


def describe(cluster: Cluster) -> dict[str, object]:
    """Node, GPU and model counts of a cluster."""
    return {
        "nodes": cluster.num_nodes,
        "gpus": cluster.total_gpus,
        "models": {
            m: int(cluster.gpu_count[cluster.node_model == i].sum())
            for i, m in enumerate(cluster.model_names)
        },
        "racks": int(np.unique(cluster.rack).size),
    }
