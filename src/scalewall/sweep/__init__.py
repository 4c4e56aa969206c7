"""Cluster-size sweeps: the best plan at each size, the scale-wall knee and what causes it.

Entry point: ``wall(model, cluster, sizes=..., ...) -> WallResult`` (``.to_pandas()``).
Sizes run through an ``Executor`` (local processes by default, ``SerialExecutor`` in-process).
"""

from __future__ import annotations

from scalewall.sweep.executor import Executor, ProcessExecutor, SerialExecutor
from scalewall.sweep.wall import (
    DEFAULT_KNEE_THRESHOLD,
    LOSS_PARTS,
    ClusterDesign,
    Knee,
    WallResult,
    batch_schedule,
    cluster_design,
    comm_tiers,
    default_sizes,
    find_knee,
    wall,
    with_efficiency,
)

__all__ = [
    "DEFAULT_KNEE_THRESHOLD",
    "LOSS_PARTS",
    "ClusterDesign",
    "Executor",
    "Knee",
    "ProcessExecutor",
    "SerialExecutor",
    "WallResult",
    "batch_schedule",
    "cluster_design",
    "comm_tiers",
    "default_sizes",
    "find_knee",
    "wall",
    "with_efficiency",
]
