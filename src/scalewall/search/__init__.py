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


def _make_callable() -> None:
    """Let ``scalewall.search(...)`` call :func:`search` while ``scalewall.search`` stays this
    package (``scalewall.search.SearchSpace`` and submodule imports keep working)."""
    import sys
    import types

    class _CallableModule(types.ModuleType):
        def __call__(self, *args: object, **kwargs: object) -> SearchResult:
            return search(*args, **kwargs)  # type: ignore[arg-type]

    sys.modules[__name__].__class__ = _CallableModule


_make_callable()
