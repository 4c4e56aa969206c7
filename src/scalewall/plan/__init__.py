"""Parallel plans, their validity rules, and cluster topologies."""

from __future__ import annotations

from scalewall.plan.format import format_plan
from scalewall.plan.plan import (
    ParallelPlan,
    default_stage_split,
    pipeline_layout,
    stage_layers,
    validate,
)
from scalewall.plan.topology import Cluster, Tier, cluster_from_spec, make_cluster

__all__ = [
    "Cluster",
    "ParallelPlan",
    "Tier",
    "cluster_from_spec",
    "default_stage_split",
    "format_plan",
    "make_cluster",
    "pipeline_layout",
    "stage_layers",
    "validate",
]
