"""Objectives the search ranks plans by: a Protocol and a registry other packages add to.

An objective turns the step model's arrays into one score per plan, higher is better, and says
how to show the score to a person. Built in: ``tokens_per_s`` (default) and ``time_to_train``
(a token budget over the throughput). Cost- or goodput-aware objectives register themselves
with ``register_objective`` from their own packages, so the search never imports them; the
modules in ``PLUGIN_MODULES`` are imported the first time the registry is read.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from scalewall.catalog.schema import ModelSpec
from scalewall.errors import SpecError
from scalewall.perf.batch import PlanBatch
from scalewall.perf.step import StepArrays
from scalewall.plan.topology import Cluster
from scalewall.units import DAY_S

FloatArray = NDArray[np.float64]

DEFAULT_TOKEN_BUDGET = 15e12
"""Tokens to train on when none is given: Llama 3 was pre-trained on about 15T tokens
(Llama Team, arXiv 2407.21783, 2024, Sec. 1)."""


@dataclass(frozen=True, kw_only=True)
class ObjectiveContext:
    """What an objective may look at besides the step arrays."""

    model: ModelSpec
    cluster: Cluster
    token_budget: float = DEFAULT_TOKEN_BUDGET
    """Tokens to train on (for time- and cost-to-train objectives)."""

    def __post_init__(self) -> None:
        check_token_budget(self.token_budget)


def check_token_budget(tokens: float) -> None:
    """Raise SpecError unless ``tokens`` is a finite positive number of tokens."""
    if not 0 < tokens < math.inf:
        raise SpecError("token_budget", tokens, "a positive finite number of tokens, e.g. 15e12")


class Objective(Protocol):
    """Scores plans; higher is better."""

    @property
    def name(self) -> str: ...

    @property
    def unit(self) -> str:
        """How ``display`` values read (for tables)."""
        ...

    def score(self, ctx: ObjectiveContext, plans: PlanBatch, out: StepArrays) -> FloatArray:
        """One score per plan; higher ranks first."""
        ...

    def display(self, score: float) -> float:
        """The score in the objective's natural unit (for example days, not minus seconds)."""
        ...


@dataclass(frozen=True, kw_only=True)
class TokensPerSecond:
    """Training throughput in tokens per second."""

    name: str = "tokens_per_s"
    unit: str = "tokens/s"

    def score(self, ctx: ObjectiveContext, plans: PlanBatch, out: StepArrays) -> FloatArray:
        return out.tokens_per_s

    def display(self, score: float) -> float:
        return score


@dataclass(frozen=True, kw_only=True)
class TimeToTrain:
    """Wall-clock days to train ``ctx.token_budget`` tokens (scored as minus seconds)."""

    name: str = "time_to_train"
    unit: str = "days"

    def score(self, ctx: ObjectiveContext, plans: PlanBatch, out: StepArrays) -> FloatArray:
        result: FloatArray = -ctx.token_budget / out.tokens_per_s
        return result

    def display(self, score: float) -> float:
        return -score / DAY_S


ObjectiveFactory = Callable[[], Objective]
_REGISTRY: dict[str, ObjectiveFactory] = {
    "tokens_per_s": TokensPerSecond,
    "time_to_train": TimeToTrain,
}


PLUGIN_OBJECTIVES = {"goodput_tokens_per_s": "scalewall.reliability.objective"}
"""Objectives whose module registers them on import, by name: the names are listed (``--help``)
without importing those modules (reliability pulls in scipy), which load only when asked for."""


def _load_plugin(name: str) -> None:
    module = PLUGIN_OBJECTIVES.get(name)
    if module is not None and name not in _REGISTRY:
        importlib.import_module(module)


def register_objective(name: str, factory: ObjectiveFactory) -> None:
    """Make ``factory()`` available as ``objective(name)`` (for cost, goodput, ...)."""
    _REGISTRY[name] = factory


def objective_names() -> list[str]:
    """Every objective's name, the plugins' included (without importing them)."""
    return sorted(set(_REGISTRY) | set(PLUGIN_OBJECTIVES))


def objective(name: str) -> Objective:
    """The registered objective called ``name``."""
    _load_plugin(name)
    if name not in _REGISTRY:
        raise SpecError("objective", name, f"one of {', '.join(objective_names())}")
    return _REGISTRY[name]()
