"""What a report compares: one model on one or more cluster options, read from a scenario TOML.

A scenario file (every key optional except at least one ``[[options]]`` table when any is
given; sizes in GPUs, times in SI seconds or the named human unit)::

    title = "70B on H100: a SuperPOD slice or a super-cluster"
    model = "llama3-70b"            # catalog id, config.json or model TOML
    token_budget = 15e12            # tokens to train on
    target_days = 90.0              # the date the model is needed by (days from the start)
    value_of_time_usd_per_day = 0.0 # what a day of calendar time costs (earlier is worth this)
    late_penalty_usd_per_day = 0.0  # what each day past the target costs on top
    candidate_models = ["llama3-8b", "llama3-70b", "llama3.1-405b"]
    sizes = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]
    growth = [256, 1024, 4096, 16384]  # staged growth path on the largest option's design
    sched_jobs = 600                # jobs the governance stage's scheduler simulation replays
    global_batch_tokens = 16777216
    storage = "parallel-fs"         # checkpoint tier (scalewall goodput --storage)
    failure_rates = "llama3-h100"
    facility = "owned"              # or "colocation"
    prices = ["my-prices.toml"]     # price overrides, relative to the scenario file

    [[options]]
    name = "512 x H100"
    cluster = "dgx-h100-superpod-1024"  # a catalog cluster id or cluster TOML: its design
    gpus = 512                          # built at this size

    [[options]]
    name = "16,384 x H100"
    gpu = "h100-sxm-80gb"           # or an accelerator/system id with its default fabric
    gpus = 16384

Each option's scale-wall sweep runs the ``sizes`` up to ``SWEEP_HEADROOM`` times its own size
that its fabric can build.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scalewall.catalog.loader import build, load_toml
from scalewall.errors import SpecError
from scalewall.stack import DEFAULT_STACK, resolve_stack
from scalewall.units import DAY_S

DEFAULT_SIZES: tuple[int, ...] = tuple(2**k for k in range(6, 17))
"""64 to 65,536 GPUs: from a few nodes to four times the default super-cluster."""
DEFAULT_GROWTH: tuple[int, ...] = (256, 1024, 4096, 16384)
DEFAULT_CANDIDATES: tuple[str, ...] = (
    "llama3-8b",
    "megatron-18b",
    "llama3-70b",
    "gpt3-175b",
    "llama3.1-405b",
)
"""The model sizes of the break-even sweep: 8B to 405B, a factor of 2 to 4 apart."""
DEFAULT_SCHED_JOBS = 600
"""Jobs the governance stage simulates: enough to reach its offered load on 1,024 GPUs
within `MixedWorkloadSpec.max_run_s` per job, about 2.5 s for all five policy pairs on one
core (a scenario may ask for more for steadier means; too few fall short of the load, which
the stage reports as it is)."""
DEFAULT_VALUE_OF_TIME_USD_PER_DAY = 0.0
"""What a day of earlier completion is worth. Zero by default because no published figure is
general: the report does not assume what an earlier model earns, and the target date alone
decides feasibility (an option past it is infeasible, never "cheaper"). The verdict states the
break-even value of time instead: the dollars per day above which the faster option is the
cheaper one. A figure for scale: OpenAI's reported 2024 revenue of $3.7B (CNBC, 27 Sep 2024) is
about $10M a day."""
DEFAULT_LATE_PENALTY_USD_PER_DAY = 0.0
"""Penalty per day past the target, on top of the value of time (zero: lateness is reported as
infeasibility with the days late, not priced)."""
DEFAULT_TARGET_S = 90 * DAY_S
"""A quarter: the pre-training length a roadmap usually allows (Llama 3 405B took about 54 days
of training time; arXiv 2407.21783, Sec. 3.3.4)."""
DEFAULT_GLOBAL_BATCH_TOKENS = 16 * 2**20
"""16M tokens per step, Llama 3 405B's main pre-training batch (arXiv 2407.21783, Sec. 3.4.1)."""
SWEEP_HEADROOM = 4
"""A sweep goes up to this many times an option's size, to show the wall beyond it."""


@dataclass(frozen=True, kw_only=True)
class ClusterOption:
    """One cluster to price and compare: a design built at ``gpus`` accelerators."""

    name: str = ""
    cluster: str | None = None
    """Catalog cluster id or cluster TOML whose system and fabric are used."""
    gpu: str | None = None
    """Accelerator or system id (with its default fabric) instead of ``cluster``."""
    gpus: int

    def __post_init__(self) -> None:
        if self.gpus < 1:
            raise SpecError("gpus", self.gpus, "a positive number of accelerators")
        if self.cluster and self.gpu:
            raise SpecError("gpu", self.gpu, "give either cluster or gpu in an option, not both")

    @property
    def label(self) -> str:
        return self.name or f"{self.gpus:,} x {self.cluster or self.gpu or 'H100'}"


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """Everything ``build_report`` needs; the defaults are the built-in scenario."""

    title: str = ""
    model: str = "llama3-70b"
    options: tuple[ClusterOption, ...] = (
        ClusterOption(name="512 x H100", cluster="dgx-h100-superpod-1024", gpus=512),
        ClusterOption(name="16,384 x H100", cluster="h100-16k-ndr", gpus=16384),
    )
    token_budget: float = 15e12
    target_s: float = DEFAULT_TARGET_S
    value_of_time_usd_per_day: float = DEFAULT_VALUE_OF_TIME_USD_PER_DAY
    """Dollars per day of calendar time the run takes: total cost = compute + days x this."""
    late_penalty_usd_per_day: float = DEFAULT_LATE_PENALTY_USD_PER_DAY
    """Dollars per day past ``target_s``, added to the total cost of a late option."""
    candidate_models: tuple[str, ...] = DEFAULT_CANDIDATES
    sizes: tuple[int, ...] = DEFAULT_SIZES
    growth: tuple[int, ...] = DEFAULT_GROWTH
    sched_jobs: int = DEFAULT_SCHED_JOBS
    """Jobs in the governance stage's synthetic multi-tenant trace (`report.stages`)."""
    global_batch_tokens: int = DEFAULT_GLOBAL_BATCH_TOKENS
    storage: str = "parallel-fs"
    failure_rates: str = "llama3-h100"
    facility: str = "owned"
    stack: str = DEFAULT_STACK
    """The software stack every sweep, search and estimate of the report runs on (a catalog id
    or alias, ``scalewall catalog stacks``)."""
    stack_overrides: dict[str, bool | int | float | str] = field(default_factory=dict)
    """Stack fields the scenario changes (as ``--stack-set``)."""
    prices: tuple[Path, ...] = ()
    source: str = field(default="built-in", compare=False)
    """Where the scenario came from (a file path, or ``built-in``)."""

    def __post_init__(self) -> None:
        if not self.options:
            raise SpecError("options", [], "at least one [[options]] table")
        _positive("token_budget", self.token_budget)
        _positive("target_s", self.target_s)
        _positive("global_batch_tokens", self.global_batch_tokens)
        _positive("sched_jobs", self.sched_jobs)
        _non_negative("value_of_time_usd_per_day", self.value_of_time_usd_per_day)
        _non_negative("late_penalty_usd_per_day", self.late_penalty_usd_per_day)
        for name in ("sizes", "growth"):
            values = getattr(self, name)
            if not values or min(values) < 1:
                raise SpecError(name, list(values), "a list of positive GPU counts")
        if self.facility not in ("owned", "colocation"):
            raise SpecError("facility", self.facility, "valid: owned, colocation")
        resolve_stack(self.stack, self.stack_overrides, where="scenario")

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["options"] = [dataclasses.asdict(o) for o in self.options]
        out["prices"] = [str(p) for p in self.prices]
        out["target_days"] = self.target_s / DAY_S
        return out

    @property
    def largest(self) -> ClusterOption:
        return max(self.options, key=lambda o: o.gpus)


def _positive(name: str, value: float) -> None:
    if not value > 0:
        raise SpecError(name, value, "must be > 0")


def _non_negative(name: str, value: float) -> None:
    if not 0 <= value < math.inf:
        raise SpecError(name, value, "a finite number >= 0 (dollars per day)")


@dataclass(frozen=True, kw_only=True)
class _ScenarioFile:
    """The TOML layout (lists where the scenario holds tuples; days where it holds seconds)."""

    title: str = ""
    model: str = "llama3-70b"
    token_budget: float = 15e12
    target_days: float = DEFAULT_TARGET_S / DAY_S
    value_of_time_usd_per_day: float = DEFAULT_VALUE_OF_TIME_USD_PER_DAY
    late_penalty_usd_per_day: float = DEFAULT_LATE_PENALTY_USD_PER_DAY
    candidate_models: list[str] = field(default_factory=lambda: list(DEFAULT_CANDIDATES))
    sizes: list[int] = field(default_factory=lambda: list(DEFAULT_SIZES))
    growth: list[int] = field(default_factory=lambda: list(DEFAULT_GROWTH))
    sched_jobs: int = DEFAULT_SCHED_JOBS
    global_batch_tokens: int = DEFAULT_GLOBAL_BATCH_TOKENS
    storage: str = "parallel-fs"
    failure_rates: str = "llama3-h100"
    facility: str = "owned"
    stack: str = DEFAULT_STACK
    stack_overrides: dict[str, bool | int | float | str] = field(default_factory=dict)
    prices: list[str] = field(default_factory=list)


def load_scenario(path: Path) -> Scenario:
    """Read a scenario TOML; any mistake raises one `SpecError` naming the file and the key."""
    where = str(path)
    doc = load_toml(path)
    tables = doc.pop("options", [])
    raw = build(_ScenarioFile, doc, where=where)
    if not isinstance(tables, list) or not tables:
        raise SpecError("options", tables, "at least one [[options]] table", where=where)
    options = []
    for i, table in enumerate(tables):
        if not isinstance(table, dict):
            raise SpecError(
                f"options[{i}]", table, "a table with name, cluster|gpu, gpus", where=where
            )
        options.append(_option(table, f"{where}: options[{i}]"))
    try:
        return Scenario(
            title=raw.title,
            model=raw.model,
            options=tuple(options),
            token_budget=raw.token_budget,
            target_s=raw.target_days * DAY_S,
            value_of_time_usd_per_day=raw.value_of_time_usd_per_day,
            late_penalty_usd_per_day=raw.late_penalty_usd_per_day,
            candidate_models=tuple(raw.candidate_models),
            sizes=tuple(raw.sizes),
            growth=tuple(raw.growth),
            sched_jobs=raw.sched_jobs,
            global_batch_tokens=raw.global_batch_tokens,
            stack=raw.stack,
            stack_overrides=dict(raw.stack_overrides),
            storage=raw.storage,
            failure_rates=raw.failure_rates,
            facility=raw.facility,
            prices=tuple(path.parent / p for p in raw.prices),
            source=where,
        )
    except SpecError as exc:
        raise SpecError(exc.field, exc.value, exc.valid, where=where) from None


def _option(table: dict[str, Any], where: str) -> ClusterOption:
    try:
        option = build(ClusterOption, table, where=where)
    except SpecError as exc:
        raise SpecError(exc.field, exc.value, exc.valid, where=exc.where or where) from None
    if not option.cluster and not option.gpu:
        raise SpecError("cluster", None, "give a cluster id/TOML or a gpu id", where=where)
    return option
