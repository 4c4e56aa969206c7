"""scalewall: plan AI training clusters from a hundred to a hundred thousand accelerators.

Plain functions take catalog ids, files or objects alike and return frozen results with
``.to_dict()`` (the command's ``--json`` document), ``.to_pandas()`` and a notebook view::

    import scalewall
    est = scalewall.estimate("llama3-70b", "dgx-h100-superpod-1024",
                             {"tp": 8, "pp": 4, "global_batch": 512, "seq_len": 8192})
    best = scalewall.search("llama3.1-405b", gpu="h100-sxm-80gb", gpus=16384)
    curve = scalewall.wall("llama3-70b", gpu="h100-sxm-80gb", sizes=[512, 4096, 32768])
    gp = scalewall.goodput("llama3-70b", gpu="h100-sxm-80gb", gpus=1024, best_plan=True)
    tco = scalewall.cost("dgx-h100-superpod-1024", model="llama3-70b", mfu=0.4)
    sim = scalewall.simulate("openb", "synthetic:Seren:1000")
    page = scalewall.report()            # the built-in scenario, or a scenario TOML
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from scalewall._entry import CostRun, GoodputRun
    from scalewall._entry import cost as cost
    from scalewall._entry import estimate as estimate
    from scalewall._entry import goodput as goodput
    from scalewall._entry import report as report
    from scalewall._entry import simulate as simulate
    from scalewall.api import StepEstimate
    from scalewall.cluster import resolve_cluster
    from scalewall.plan.plan import ParallelPlan
    from scalewall.search.engine import SearchResult
    from scalewall.search.engine import search as search
    from scalewall.sweep.wall import WallResult
    from scalewall.sweep.wall import wall as wall
    from scalewall.validation.harness import validate_cases

# Every entry point loads on first use, so ``import scalewall`` (and the CLI's start, which
# imports this package) stays quick.
_LAZY = {
    "CostRun": ("scalewall._entry", "CostRun"),
    "GoodputRun": ("scalewall._entry", "GoodputRun"),
    "ParallelPlan": ("scalewall.plan.plan", "ParallelPlan"),
    "SearchResult": ("scalewall.search.engine", "SearchResult"),
    "StepEstimate": ("scalewall.api", "StepEstimate"),
    "WallResult": ("scalewall.sweep.wall", "WallResult"),
    "cost": ("scalewall._entry", "cost"),
    "estimate": ("scalewall._entry", "estimate"),
    "goodput": ("scalewall._entry", "goodput"),
    "report": ("scalewall._entry", "report"),
    "resolve_cluster": ("scalewall.cluster", "resolve_cluster"),
    "search": ("scalewall.search.engine", "search"),
    "simulate": ("scalewall._entry", "simulate"),
    "validate_cases": ("scalewall.validation.harness", "validate_cases"),
    "wall": ("scalewall.sweep.wall", "wall"),
}
# Names that are also subpackages (scalewall/search/, report/, cost/): importing a subpackage
# sets the package attribute of the same name to the module, so these are properties of the
# package's class, which the import system's assignment cannot replace.
_SHADOWED = ("search", "report", "cost")


def _load(name: str) -> Any:
    from importlib import import_module

    module, attr = _LAZY[name]
    return getattr(import_module(module), attr)


def __getattr__(name: str) -> Any:
    """Load an entry point on first use."""
    if name in _LAZY:
        return _load(name)
    raise AttributeError(f"module 'scalewall' has no attribute {name!r}")


def _function_property(name: str) -> property:
    def get(_: types.ModuleType) -> Any:
        return _load(name)

    def set_(_: types.ModuleType, value: Any) -> None:
        """The import system records the subpackage here; it stays in ``sys.modules``."""

    return property(get, set_)


class _Package(types.ModuleType):
    pass


for _name in _SHADOWED:
    setattr(_Package, _name, _function_property(_name))
sys.modules[__name__].__class__ = _Package

__all__ = [
    "CostRun",
    "GoodputRun",
    "ParallelPlan",
    "SearchResult",
    "StepEstimate",
    "WallResult",
    "__version__",
    "cost",
    "estimate",
    "goodput",
    "report",
    "resolve_cluster",
    "search",
    "simulate",
    "validate_cases",
    "wall",
]
