"""Design-space exploration: models x cluster designs x sizes x fabrics x batch rules.

``explore(spec, out, executor=...)`` runs one plan search per point (locally or on a Ray
cluster, ``sweep.ray_executor``) and writes rows to a Parquet dataset partitioned by model and
accelerator as chunks finish; a rerun resumes. ``load(out)`` reads it into one DataFrame.
"""

from __future__ import annotations

from scalewall.explore.dataset import load
from scalewall.explore.grid import BatchRule, ExploreConfig, ExploreSpec, Point, build, load_spec
from scalewall.explore.run import (
    MAX_OVERHEAD_FRAC,
    ExploreResult,
    explore,
    pareto_frontier,
    points_per_task,
)

__all__ = [
    "MAX_OVERHEAD_FRAC",
    "BatchRule",
    "ExploreConfig",
    "ExploreResult",
    "ExploreSpec",
    "Point",
    "build",
    "explore",
    "load",
    "load_spec",
    "pareto_frontier",
    "points_per_task",
]
