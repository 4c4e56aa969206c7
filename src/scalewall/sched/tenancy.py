"""Tenant queues as a platform team configures them (Kueue's ClusterQueues and cohorts).

Each tenant queue has a nominal GPU quota and belongs to a cohort. A queue may borrow its
cohort's unused nominal quota for jobs above its own, up to its ``borrowing_limit``; it lends
at most ``lending_limit`` of its nominal quota to the cohort (Kueue's ``borrowingLimit`` and
``lendingLimit``, https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/). A queue reclaims
lent quota by preempting borrowers (``quota`` policies). Queues come from a TOML file::

    [[queue]]
    name = "research"        # the trace's tenant
    cohort = "ml"            # default: "default"
    nominal_gpus = 64
    borrowing_limit = 32     # GPUs above nominal; default: no limit
    lending_limit = 16       # GPUs of nominal others may use; default: all of it
    priority = 1             # higher: its jobs are considered first; default 0
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from scalewall.errors import SpecError

DEFAULT_COHORT = "default"
QUEUE_FIELDS = ("name", "cohort", "nominal_gpus", "borrowing_limit", "lending_limit", "priority")


@dataclass(frozen=True, kw_only=True)
class TenantQueue:
    """One tenant's queue: quota, limits, cohort and priority."""

    name: str
    """The tenant (the trace's ``tenant`` column) whose jobs this queue admits."""
    nominal_gpus: float
    """GPUs guaranteed to the queue (reclaimed from borrowers when it needs them)."""
    cohort: str = DEFAULT_COHORT
    """Queues of one cohort borrow each other's unused nominal quota."""
    borrowing_limit: float = math.inf
    """Most GPUs the queue may hold above its nominal quota (inf: no limit)."""
    lending_limit: float = math.inf
    """Most GPUs of its nominal quota the cohort's other queues may borrow (inf: all)."""
    priority: int = 0
    """Queues with a higher priority have their pending jobs considered first."""

    def __post_init__(self) -> None:
        where = f"queue {self.name!r}"
        if not isinstance(self.name, str) or not self.name:
            raise SpecError("name", self.name, "a non-empty tenant name", where="queue")
        if not isinstance(self.cohort, str) or not self.cohort:
            raise SpecError("cohort", self.cohort, "a non-empty cohort name", where=where)
        for field in ("nominal_gpus", "borrowing_limit", "lending_limit"):
            value = getattr(self, field)
            finite = field == "nominal_gpus"
            ok = _is_number(value) and value >= 0 and (math.isfinite(value) or not finite)
            if not ok:
                raise SpecError(field, value, "a number of GPUs >= 0", where=where)
        if isinstance(self.priority, bool) or not isinstance(self.priority, int):
            raise SpecError("priority", self.priority, "an integer", where=where)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def queues_from_mapping(data: Mapping[str, Any], *, where: str = "quotas") -> list[TenantQueue]:
    """Tenant queues from a parsed quota file (``{"queue": [{...}, ...]}``)."""
    unknown = sorted(set(data) - {"queue"})
    if unknown:
        raise SpecError(unknown[0], data[unknown[0]], "valid top-level key: [[queue]]", where=where)
    rows = data.get("queue")
    if not isinstance(rows, list) or not rows:
        raise SpecError("queue", rows, "one or more [[queue]] tables", where=where)
    queues = []
    for i, row in enumerate(rows):
        at = f"{where}: queue[{i}]"
        if not isinstance(row, dict):
            raise SpecError("queue", row, "a [[queue]] table", where=at)
        bad = sorted(set(row) - set(QUEUE_FIELDS))
        if bad:
            raise SpecError(bad[0], row[bad[0]], f"valid: {', '.join(QUEUE_FIELDS)}", where=at)
        if "nominal_gpus" not in row:
            raise SpecError("nominal_gpus", None, "required: the queue's GPU quota", where=at)
        try:
            queues.append(TenantQueue(**row))
        except TypeError as err:  # a missing name
            raise SpecError(
                "name", None, "required: the tenant the queue serves", where=at
            ) from err
    check_unique(queues, where=where)
    return queues


def check_unique(queues: Iterable[TenantQueue], *, where: str = "quotas") -> None:
    """One queue per tenant."""
    seen: set[str] = set()
    for queue in queues:
        if queue.name in seen:
            raise SpecError("name", queue.name, "each tenant has one [[queue]]", where=where)
        seen.add(queue.name)


def load_quotas(path: Path) -> list[TenantQueue]:
    """Tenant queues from a TOML quota file; one-line :class:`SpecError` on a bad file."""
    where = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise SpecError("quotas", where, f"a readable TOML file ({err.strerror})") from err
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise SpecError("quotas", where, f"valid TOML ({err})") from err
    return queues_from_mapping(data, where=where)


MILLI = 1000
"""Milli-GPU per GPU (as ``cluster.GPU_MILLI``; kept here so the file reader stays light)."""
NO_LIMIT = np.iinfo(np.int64).max // 4
"""An unlimited borrowing or lending limit in milli-GPU (far above any cluster, no overflow)."""


@dataclass(frozen=True, kw_only=True, eq=False)
class Tenancy:
    """The queues of a replay's tenants as arrays (tenant index as the trace's tenants)."""

    quota: npt.NDArray[np.int64]
    """Nominal quota per tenant, milli-GPU."""
    borrow_limit: npt.NDArray[np.int64]
    lend_limit: npt.NDArray[np.int64]
    """Lendable part of the nominal quota: min(lending limit, nominal), milli-GPU."""
    cohort: npt.NDArray[np.int64]
    """Cohort index per tenant."""
    priority: npt.NDArray[np.int64]
    """Queue priority per tenant."""
    cohort_capacity: npt.NDArray[np.int64]
    """Sum of the nominal quotas of each cohort's queues (those without jobs too), milli-GPU."""
    cohort_idle_lendable: npt.NDArray[np.int64]
    """What each cohort's queues without jobs in the trace lend, milli-GPU."""
    members: tuple[npt.NDArray[np.int64], ...]
    """Tenant indices of each cohort."""


def _milli(gpus: float) -> int:
    return NO_LIMIT if math.isinf(gpus) else round(gpus * MILLI)


def build_tenancy(tenants: tuple[str, ...], queues: Iterable[TenantQueue]) -> Tenancy:
    """Arrays for ``tenants``; a trace tenant without a queue is a one-line error."""
    by_name = {q.name: q for q in queues}
    missing = [t for t in tenants if t not in by_name]
    if missing:
        raise SpecError(
            "quotas",
            missing[0],
            f"every tenant of the trace needs a [[queue]] ({len(missing)} lack one)",
        )
    cohorts = sorted({q.cohort for q in by_name.values()})
    index = {c: i for i, c in enumerate(cohorts)}
    rows = [by_name[t] for t in tenants]
    quota = np.array([_milli(q.nominal_gpus) for q in rows], dtype=np.int64)
    capacity = np.zeros(len(cohorts), dtype=np.int64)
    idle = np.zeros(len(cohorts), dtype=np.int64)
    for q in by_name.values():
        capacity[index[q.cohort]] += _milli(q.nominal_gpus)
        if q.name not in tenants:
            idle[index[q.cohort]] += min(_milli(q.lending_limit), _milli(q.nominal_gpus))
    cohort = np.array([index[q.cohort] for q in rows], dtype=np.int64)
    return Tenancy(
        quota=quota,
        borrow_limit=np.array([_milli(q.borrowing_limit) for q in rows], dtype=np.int64),
        lend_limit=np.minimum(
            np.array([_milli(q.lending_limit) for q in rows], dtype=np.int64), quota
        ),
        cohort=cohort,
        priority=np.array([q.priority for q in rows], dtype=np.int64),
        cohort_capacity=capacity,
        cohort_idle_lendable=idle,
        members=tuple(np.flatnonzero(cohort == c).astype(np.int64) for c in range(len(cohorts))),
    )


def jain_index(values: npt.NDArray[np.float64]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all equal, 1/n when one takes
    all (Jain, Chiu and Hawe, "A Quantitative Measure of Fairness and Discrimination for
    Resource Allocation in Shared Computer Systems", DEC TR-301, 1984); nan without values."""
    x = values[np.isfinite(values)]
    square_sum = float((x**2).sum())
    return float(x.sum() ** 2 / (x.size * square_sum)) if x.size and square_sum else math.nan
