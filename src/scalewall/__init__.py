"""scalewall: plan AI training clusters from a hundred to a hundred thousand accelerators.

The Python API returns plain frozen objects; tables come with ``.to_pandas()``::

    import scalewall
    est = scalewall.estimate("llama3-70b", "dgx-h100-superpod-1024",
                             scalewall.ParallelPlan(tp=8, pp=4, dp=32, global_batch=512,
                                                    seq_len=8192))
    best = scalewall.search("llama3.1-405b", gpu="h100-sxm-80gb", gpus=16384)
    curve = scalewall.wall("llama3-70b", gpu="h100-sxm-80gb", sizes=[512, 4096, 32768])
    gp = scalewall.goodput(...)          # reliability: failures, checkpoints, goodput
    sim = scalewall.simulate(...)        # multi-tenant cluster scheduler on a trace
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

from scalewall import search
from scalewall.api import StepEstimate, estimate
from scalewall.cluster import resolve_cluster
from scalewall.plan.plan import ParallelPlan
from scalewall.sweep import WallResult, wall

_LAZY = {
    "goodput": ("scalewall.reliability", "goodput"),
    "simulate": ("scalewall.sched", "simulate"),
    "validate_cases": ("scalewall.validation.harness", "validate_cases"),
}


def __getattr__(name: str) -> Any:
    """Heavier entry points load on first use, so ``import scalewall`` stays quick."""
    if name in _LAZY:
        from importlib import import_module

        module, attr = _LAZY[name]
        return getattr(import_module(module), attr)
    raise AttributeError(f"module 'scalewall' has no attribute {name!r}")


__all__ = [
    "ParallelPlan",
    "StepEstimate",
    "WallResult",
    "__version__",
    "estimate",
    "goodput",
    "resolve_cluster",
    "search",
    "simulate",
    "validate_cases",
    "wall",
]
