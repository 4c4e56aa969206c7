"""Results of a time-based replay: per-job table, time series, and summary figures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scalewall.sched.cluster import GPU_MILLI
from scalewall.sched.engine import Simulation
from scalewall.sched.tenancy import jain_index

HOUR_S = 3600.0


@dataclass(frozen=True, kw_only=True, eq=False)
class SimResult:
    """What a replay produced."""

    jobs: pd.DataFrame
    """One row per job: times, queueing delay, JCT, slowdown, GPU-hours metered and lost."""
    timeseries: pd.DataFrame
    """One row per sample: allocation, fragmentation, nodes up, queue, per-tenant GPUs."""
    summary: dict[str, Any]
    events: pd.DataFrame
    """The event log: time, event, job or node index."""


def _pct(values: np.ndarray, q: float) -> float:
    return float(np.percentile(values, q)) if values.size else float("nan")


def goodput_fracs(metered_gpu_s: np.ndarray, wasted_gpu_s: np.ndarray) -> np.ndarray:
    """Share of the GPU time held that made lasting progress: 1 - (work lost since the last
    checkpoint + restart overhead) / GPU time metered, as ETTR counts it (Kokolis et al.,
    HPCA'25); NaN where nothing was metered."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(metered_gpu_s > 0, 1.0 - wasted_gpu_s / metered_gpu_s, np.nan)


def _goodput_summary(jobs: pd.DataFrame) -> dict[str, Any]:
    """Cluster goodput (GPU-time weighted) and the spread over jobs that ran."""
    metered = float(jobs["gpu_hours_metered"].sum())
    wasted = float((jobs["gpu_hours_lost"] + jobs["gpu_hours_restart"]).sum())
    per_job = jobs["goodput_frac"].dropna().to_numpy()
    return {
        "goodput_frac": 1.0 - wasted / metered if metered > 0 else None,
        "job_goodput_frac": {
            "mean": float(per_job.mean()) if per_job.size else None,
            "p5": _pct(per_job, 5) if per_job.size else None,
            "p50": _pct(per_job, 50) if per_job.size else None,
        },
    }


def job_frame(sim: Simulation) -> pd.DataFrame:
    """Per-job results."""
    jobs, st = sim.jobs, sim.state
    start, end = st.first_start_s, st.end_s
    frame = jobs.to_frame()[
        ["job_id", "tenant", "priority", "num_gpu", "gpu_milli", "submit_s", "run_s"]
    ]
    frame["first_start_s"] = start
    frame["end_s"] = end
    frame["queue_delay_s"] = start - jobs.submit_s
    frame["jct_s"] = end - jobs.submit_s
    frame["slowdown"] = frame["jct_s"] / np.maximum(jobs.run_s, 1.0)
    frame["tiers_crossed"] = st.tiers
    frame["restarts"] = st.restarts
    frame["preemptions"] = st.preemptions
    frame["gpu_hours_metered"] = st.metered_gpu_s / HOUR_S
    frame["gpu_hours_lost"] = st.lost_gpu_s / HOUR_S
    frame["gpu_hours_restart"] = st.restart_gpu_s / HOUR_S
    frame["goodput_frac"] = goodput_fracs(st.metered_gpu_s, st.lost_gpu_s + st.restart_gpu_s)
    frame["finished"] = np.isfinite(end)
    frame["timed_out"] = st.timed_out
    frame["skipped"] = st.skipped
    return frame


def summarize_run(sim: Simulation, jobs: pd.DataFrame, series: pd.DataFrame) -> dict[str, Any]:
    """Headline figures of a replay."""
    done = jobs[jobs["finished"]]
    delay = done["queue_delay_s"].to_numpy()
    horizon = float(series["time_s"].max()) if len(series) else 0.0
    metered = jobs.groupby("tenant")["gpu_hours_metered"].sum()
    capacity_gpu_h = sim.cluster.total_gpus * horizon / HOUR_S
    share = {t: float(v) / capacity_gpu_h if capacity_gpu_h else 0.0 for t, v in metered.items()}
    quota_share = sim.quota_gpu_milli / max(sim.total_gpu_milli, 1)
    total_metered = float(metered.sum())
    tenant_slowdown = done.groupby("tenant")["slowdown"].mean()
    return {
        "queue": sim.config.queue,
        "placement": sim.config.placement,
        "seed": sim.config.seed,
        "jobs": len(jobs),
        "finished": int(jobs["finished"].sum()),
        "unfinished": int((~jobs["finished"] & ~jobs["skipped"]).sum()),
        "skipped_never_fit": int(jobs["skipped"].sum()),
        "warnings": list(sim.warnings),
        "queue_delay_s": {
            "mean": float(delay.mean()) if delay.size else float("nan"),
            "p50": _pct(delay, 50),
            "p95": _pct(delay, 95),
            "p99": _pct(delay, 99),
        },
        "jct_s": {
            "mean": float(done["jct_s"].mean()),
            "p50": _pct(done["jct_s"].to_numpy(), 50),
            "p99": _pct(done["jct_s"].to_numpy(), 99),
        },
        "slowdown": {
            "mean": float(done["slowdown"].mean()),
            "p50": _pct(done["slowdown"].to_numpy(), 50),
        },
        "makespan_s": horizon,
        "gpu_alloc_frac_mean": float(series["gpu_alloc_frac"].mean()) if len(series) else 0.0,
        "partial_gpu_free_frac_mean": float(series["partial_gpu_free_frac"].mean())
        if len(series)
        else 0.0,
        "gpu_hours_metered": {t: float(v) for t, v in metered.items()},
        "tenant_share_of_capacity": share,
        "tenant_quota_share": {
            t: float(quota_share[i]) for i, t in enumerate(sim.jobs.tenant_names)
        },
        "tenant_gpu_time_share": {
            t: float(v) / total_metered if total_metered else 0.0 for t, v in metered.items()
        },
        "tenant_slowdown_mean": {t: float(v) for t, v in tenant_slowdown.items()},
        "jain_index_tenant_slowdown": jain_index(tenant_slowdown.to_numpy(dtype=float)),
        "gpu_hours_lost_failures": sim.lost_by_kind["failure"] / HOUR_S,
        "gpu_hours_lost_preemption": sim.lost_by_kind["preemption"] / HOUR_S,
        "gpu_hours_restart": float(jobs["gpu_hours_restart"].sum()),
        **_goodput_summary(jobs),
        "node_failures": sum(1 for e in sim.events if e[1] == "node_fail"),
        "recorded_failures": sum(sim.recorded_faults.values()),
        "machines_with_recorded_failures": len(sim.recorded_faults),
        "nodes_isolated": len(sim.isolated),
        "total_gpus": sim.total_gpu_milli // GPU_MILLI,
    }


def collect(sim: Simulation) -> SimResult:
    """Tables and summary from a finished :class:`Simulation`."""
    jobs = job_frame(sim)
    series = pd.DataFrame(sim.samples)
    events = pd.DataFrame(sim.events, columns=["time_s", "event", "index"])
    return SimResult(
        jobs=jobs, timeseries=series, summary=summarize_run(sim, jobs, series), events=events
    )
