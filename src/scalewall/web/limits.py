"""What one request to ``scalewall serve`` may ask for. Every bound is a named field; the
server refuses a request past one with a 4xx naming the field, the value and the bound."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from scalewall.errors import SpecError


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Bounds on requests and on the work they start."""

    max_gpus: int = 131_072
    """Largest cluster a request may name (GPUs): the largest clusters the catalog's fabrics
    build are of this order."""
    max_sizes: int = 12
    """Cluster sizes in one scale-wall sweep (and in one exploration)."""
    max_explore_points: int = 256
    """Points (searches) in one exploration: models x designs x sizes x batch rules."""
    max_options: int = 4
    """Cluster options in one report."""
    max_top: int = 50
    """Plans a search may return."""
    max_monte_carlo_runs: int = 100_000
    """Monte Carlo runs of one goodput request."""
    max_synthetic_jobs: int = 20_000
    """Jobs of a synthetic scheduler trace."""
    max_body_bytes: int = 1_000_000
    """Bytes of one request body (an uploaded config.json included)."""
    max_uploads: int = 1_000
    """Uploaded model configs kept in the database."""
    request_time_s: float = 120.0
    """Wall-clock limit of a synchronous request (estimate, search, goodput, cost); the worker
    process is killed past it."""
    job_time_s: float = 600.0
    """Wall-clock limit of a background job (wall, report, simulate, explore)."""
    max_running_jobs: int = 2
    """Background jobs that run at once; later ones wait in the queue."""
    max_queued_jobs: int = 16
    """Background jobs waiting or running; past it a new job is refused (429)."""
    max_sync_requests: int = 2
    """Synchronous requests computed at once; later ones wait their turn."""

    @classmethod
    def from_options(cls, flags: dict[str, str] | None = None, **given: Any) -> Limits:
        """Limits with the fields given (not None) replacing the defaults; each must be
        positive (``scalewall serve --max-gpus ...``; ``flags`` names a field's option)."""
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in given.items() if v is not None}
        for name, value in values.items():
            if name not in names:
                raise SpecError("limit", name, f"one of {', '.join(sorted(names))}")
            if not value > 0:
                flag = (flags or {}).get(name, "--" + name.replace("_", "-"))
                raise SpecError(flag, value, "a positive number")
        return cls(**values)
