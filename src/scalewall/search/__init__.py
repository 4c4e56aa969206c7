"""Plan search: enumerate every valid parallel plan as arrays, prune what cannot fit, rank.

Entry point: ``search(model, cluster, global_batch=..., ...) -> SearchResult`` (``.to_pandas()``).
Objectives are pluggable: ``register_objective(name, factory)``.
"""

from __future__ import annotations

from scalewall.search.engine import (
    DEFAULT_GLOBAL_BATCH_TOKENS,
    DEFAULT_SEQ_LEN,
    RankedPlan,
    SearchCounts,
    SearchResult,
    limit_line,
    search,
)
from scalewall.search.objective import (
    DEFAULT_TOKEN_BUDGET,
    Objective,
    ObjectiveContext,
    TimeToTrain,
    TokensPerSecond,
    objective,
    objective_names,
    register_objective,
)
from scalewall.search.space import SearchSpace, enumerate_plans, stage_splits

__all__ = [
    "DEFAULT_GLOBAL_BATCH_TOKENS",
    "DEFAULT_SEQ_LEN",
    "DEFAULT_TOKEN_BUDGET",
    "Objective",
    "ObjectiveContext",
    "RankedPlan",
    "SearchCounts",
    "SearchResult",
    "SearchSpace",
    "TimeToTrain",
    "TokensPerSecond",
    "enumerate_plans",
    "limit_line",
    "objective",
    "objective_names",
    "register_objective",
    "search",
    "stage_splits",
]
