"""Multi-tenant GPU cluster scheduler simulator: discrete-event engine, queueing and placement
policies, trace readers, failures, the FGD experiment.

    >>> from scalewall import sched
    >>> cluster = sched.load_cluster("openb")
    >>> jobs = sched.load_trace("openb").frame
    >>> result = sched.simulate(cluster, jobs, queue="fifo", placement="fgd", seed=0)
"""

from __future__ import annotations

from scalewall.sched.api import (
    catalog_cluster_spec,
    describe,
    load_cluster,
    load_trace,
    scale_demand,
    simulate,
    synthetic_cluster,
)
from scalewall.sched.cluster import Cluster, NodeSpec, SyntheticClusterSpec
from scalewall.sched.duration import DurationModel, PlacementSummary, TierSlowdownModel
from scalewall.sched.engine import FailureModel, SimConfig
from scalewall.sched.experiments import FgdExperimentConfig, fgd_experiment, fgd_summary
from scalewall.sched.jobs import JobTable, job_table
from scalewall.sched.metrics import SimResult
from scalewall.sched.policies import placement_names, queue_names
from scalewall.sched.quota_sources import resolve_quotas
from scalewall.sched.step_duration import StepModelDuration
from scalewall.sched.tenancy import Cohort, FlavorQuota, Quotas, TenantQueue, load_quotas
from scalewall.sched.traces._common import TraceRead
from scalewall.sched.workload import WorkloadSpec, synthetic_jobs

__all__ = [
    "Cluster",
    "Cohort",
    "DurationModel",
    "FailureModel",
    "FgdExperimentConfig",
    "FlavorQuota",
    "JobTable",
    "NodeSpec",
    "PlacementSummary",
    "Quotas",
    "SimConfig",
    "SimResult",
    "StepModelDuration",
    "SyntheticClusterSpec",
    "TenantQueue",
    "TierSlowdownModel",
    "TraceRead",
    "WorkloadSpec",
    "catalog_cluster_spec",
    "describe",
    "fgd_experiment",
    "fgd_summary",
    "job_table",
    "load_cluster",
    "load_quotas",
    "load_trace",
    "placement_names",
    "queue_names",
    "resolve_quotas",
    "scale_demand",
    "simulate",
    "synthetic_cluster",
    "synthetic_jobs",
]
