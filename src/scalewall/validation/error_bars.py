"""Prediction intervals without calibration: the out-of-sample errors of the closest
validation group.

``scalewall validate --cv source --write-errors FILE`` refits the shipped constants without
each source group, predicts the group, and writes the log errors of its step times (format
``scalewall-out-of-sample/1``; the package ships ``data/out_of_sample.json``). An estimate
without ``--calibration`` takes the group closest to it: fewest mismatches among software
stack id, accelerator generation and MoE or dense, then the nearest cluster size (log2 GPUs
outside the group's range). Its 90% interval is the step time divided by the 95th and 5th
percentiles of exp(error), error = log(predicted / published); with fewer than
``EMPIRICAL_MIN`` errors a normal with their mean and standard deviation stands in for the
percentiles. The interval says what the model missed on runs like this one that it never
saw: it is not a statement about the plan's own variance.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

from scalewall.errors import ScalewallError

FORMAT = "scalewall-out-of-sample/1"
LEVEL = 0.9
EMPIRICAL_MIN = 20
"""Errors needed to read the interval off their percentiles rather than a normal fit."""

GENERATIONS = {
    "a100": "ampere",
    "h100": "hopper",
    "h200": "hopper",
    "h800": "hopper",
    "b200": "blackwell",
    "gb200": "blackwell",
    "gb300": "blackwell",
    "mi300x": "cdna3",
    "mi325x": "cdna3",
    "ascend": "ascend",
}
"""Accelerator id prefix -> architecture generation (dies that share a tensor core design)."""


def generation(accelerator: str) -> str:
    """The architecture generation of a catalog accelerator id (its id when unknown)."""
    for prefix, gen in GENERATIONS.items():
        if accelerator.startswith(prefix):
            return gen
    return accelerator


@dataclass(frozen=True, kw_only=True)
class ErrorGroup:
    """The out-of-sample step-time errors of one validation group and what its runs were."""

    name: str
    stacks: tuple[str, ...]
    generations: tuple[str, ...]
    moe: tuple[bool, ...]
    """Which of dense (False) and MoE (True) the group's runs include."""
    gpus_min: int
    gpus_max: int
    step_log_errors: tuple[float, ...]
    """log(predicted / published step time), one per run, from the fit without the group."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "stacks": list(self.stacks),
            "generations": list(self.generations),
            "moe": list(self.moe),
            "gpus_min": self.gpus_min,
            "gpus_max": self.gpus_max,
            "step_log_errors": list(self.step_log_errors),
        }

    def mismatches(self, stack: str, accelerator: str, moe: bool) -> int:
        return (
            (stack not in self.stacks)
            + (generation(accelerator) not in self.generations)
            + (moe not in self.moe)
        )

    def scale_distance(self, gpus: int) -> float:
        """log2 distance of ``gpus`` from the group's range of cluster sizes (0 inside)."""
        x = math.log2(max(gpus, 1))
        return max(math.log2(self.gpus_min) - x, x - math.log2(self.gpus_max), 0.0)


@dataclass(frozen=True, kw_only=True)
class ValidationInterval:
    step_time_interval_s: tuple[float, float]
    level: float
    group: str
    """The validation group whose out-of-sample errors gave the interval."""

    @property
    def basis(self) -> str:
        return f"out-of-sample errors of validation group {self.group} (not calibrated)"


@cache
def out_of_sample_path() -> Path:
    # Resolved once: every estimate's interval reads the groups (cached by path).
    return Path(str(resources.files("scalewall.validation") / "data" / "out_of_sample.json"))


def write_groups(groups: dict[str, ErrorGroup], path: Path, command: str = "") -> Path:
    data = {
        "format": FORMAT,
        "command": command,
        "groups": {k: g.to_dict() for k, g in groups.items()},
    }
    try:
        path.write_text(json.dumps(data, indent=1) + "\n")
    except OSError as exc:
        raise ScalewallError(f"{path}: cannot write: {exc.strerror}") from None
    return path


def read_groups(path: Path | None = None) -> dict[str, ErrorGroup]:
    """The error groups of a ``scalewall-out-of-sample/1`` file (default: the shipped one)."""
    return _read(str(path or out_of_sample_path()))


@cache
def _read(path: str) -> dict[str, ErrorGroup]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ScalewallError(f"{path}: cannot read out-of-sample errors: {exc}") from None
    if data.get("format") != FORMAT:
        raise ScalewallError(f"{path}: format {data.get('format')!r}, expected {FORMAT!r}")
    return {
        name: ErrorGroup(
            name=name,
            stacks=tuple(g["stacks"]),
            generations=tuple(g["generations"]),
            moe=tuple(bool(m) for m in g["moe"]),
            gpus_min=int(g["gpus_min"]),
            gpus_max=int(g["gpus_max"]),
            step_log_errors=tuple(float(e) for e in g["step_log_errors"]),
        )
        for name, g in data["groups"].items()
        if g["step_log_errors"]
    }


def closest_group(
    groups: dict[str, ErrorGroup], *, stack: str, accelerator: str, moe: bool, gpus: int
) -> ErrorGroup:
    """Fewest mismatches (stack, generation, MoE or dense), then the nearest scale, then the
    name (a fixed order for ties)."""
    return min(
        groups.values(),
        key=lambda g: (g.mismatches(stack, accelerator, moe), g.scale_distance(gpus), g.name),
    )


def error_quantiles(errors: tuple[float, ...], level: float = LEVEL) -> tuple[float, float]:
    """The (1 - level) / 2 and (1 + level) / 2 quantiles of the log errors."""
    e = np.asarray(errors, dtype=np.float64)
    tail = (1.0 - level) / 2.0
    if len(e) >= EMPIRICAL_MIN:
        lo, hi = np.quantile(e, [tail, 1.0 - tail])
        return float(lo), float(hi)
    z = NormalDist().inv_cdf(1.0 - tail)
    sd = float(np.std(e, ddof=1)) if len(e) > 1 else abs(float(e[0]))
    return float(e.mean() - z * sd), float(e.mean() + z * sd)


def validation_interval(
    step_time_s: float,
    *,
    stack: str,
    accelerator: str,
    moe: bool,
    gpus: int,
    level: float = LEVEL,
    groups: dict[str, ErrorGroup] | None = None,
) -> ValidationInterval:
    """The step time's interval from the closest group's out-of-sample errors: published =
    predicted / exp(error), so the low end divides by the high error quantile."""
    if groups is None:
        name, lo, hi = _shipped_band(stack.split("+", 1)[0], accelerator, moe, gpus, level)
    else:
        name, lo, hi = _band(groups, stack.split("+", 1)[0], accelerator, moe, gpus, level)
    interval = (step_time_s * math.exp(-hi), step_time_s * math.exp(-lo))
    return ValidationInterval(step_time_interval_s=interval, level=level, group=name)


def _band(
    groups: dict[str, ErrorGroup], stack: str, accelerator: str, moe: bool, gpus: int, level: float
) -> tuple[str, float, float]:
    """The closest group's name and its error quantiles."""
    group = closest_group(groups, stack=stack, accelerator=accelerator, moe=moe, gpus=gpus)
    lo, hi = error_quantiles(group.step_log_errors, level)
    return group.name, lo, hi


@cache
def _shipped_band(
    stack: str, accelerator: str, moe: bool, gpus: int, level: float
) -> tuple[str, float, float]:
    """``_band`` of the shipped groups, once per question (an estimate asks it every call)."""
    return _band(read_groups(), stack, accelerator, moe, gpus, level)
