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

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from scalewall import search
    from scalewall.api import StepEstimate, estimate
    from scalewall.cluster import resolve_cluster
    from scalewall.plan.plan import ParallelPlan
    from scalewall.reliability import goodput
    from scalewall.sched import simulate
    from scalewall.sweep.wall import WallResult
    from scalewall.sweep.wall import wall as wall
    from scalewall.validation.harness import validate_cases

# Every entry point loads on first use, so ``import scalewall`` (and the CLI's start, which
# imports this package) stays quick.
_LAZY = {
    "ParallelPlan": ("scalewall.plan.plan", "ParallelPlan"),
    "StepEstimate": ("scalewall.api", "StepEstimate"),
    "WallResult": ("scalewall.sweep", "WallResult"),
    "estimate": ("scalewall.api", "estimate"),
    "resolve_cluster": ("scalewall.cluster", "resolve_cluster"),
    "search": ("scalewall.search", ""),
    "wall": ("scalewall.sweep", "wall"),
    "goodput": ("scalewall.reliability", "goodput"),
    "simulate": ("scalewall.sched", "simulate"),
    "validate_cases": ("scalewall.validation.harness", "validate_cases"),
}


def __getattr__(name: str) -> Any:
    """Load an entry point on first use (``search`` is the callable package itself)."""
    if name in _LAZY:
        from importlib import import_module

        module, attr = _LAZY[name]
        loaded = import_module(module)
        return getattr(loaded, attr) if attr else loaded
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
