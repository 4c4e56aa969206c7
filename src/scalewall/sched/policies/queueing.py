"""Shared shape of queueing policies and their registry.

A queueing policy decides which pending jobs start now (and, for some, which running jobs are
preempted). It talks to the engine through :class:`SchedulerView`; placement is delegated to the
run's placement policy by ``try_start``, so any queueing policy combines with any placement.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

import numpy as np
import numpy.typing as npt

from scalewall.errors import SpecError
from scalewall.sched.jobs import JobTable
from scalewall.sched.pending import PendingOrder
from scalewall.sched.tenancy import Tenancy


class SchedulerView(Protocol):
    """What the engine offers a queueing policy."""

    @property
    def now_s(self) -> float: ...

    @property
    def jobs(self) -> JobTable: ...

    @property
    def pending(self) -> list[int]:
        """Pending job indices in arrival order (a job index grows with its submit time)."""

    @property
    def running(self) -> dict[int, float]:
        """Running job index -> time it (re)started."""

    @property
    def tenant_gpu_milli(self) -> npt.NDArray[np.int64]:
        """GPU capacity each tenant holds now, in milli-GPU."""

    @property
    def tenant_borrowed_gpu_milli(self) -> npt.NDArray[np.int64]:
        """The part of ``tenant_gpu_milli`` admitted on borrowed capacity."""

    @property
    def quota_gpu_milli(self) -> npt.NDArray[np.int64]:
        """Each tenant's nominal quota in milli-GPU."""

    @property
    def tenant_flavor_gpu_milli(self) -> npt.NDArray[np.int64]:
        """GPU capacity each tenant (rows) holds of each flavor (columns), milli-GPU."""

    @property
    def tenant_flavor_borrowed_gpu_milli(self) -> npt.NDArray[np.int64]:
        """The part of ``tenant_flavor_gpu_milli`` admitted on borrowed capacity."""

    def running_flavor(self, job: int) -> int:
        """The flavor (index in ``tenancy.flavors``) a running job runs on; -1 for none."""

    @property
    def tenancy(self) -> Tenancy:
        """The tenants' queues: quotas, borrowing and lending limits, cohorts, priorities."""

    @property
    def free_gpu_milli(self) -> int: ...

    @property
    def total_gpu_milli(self) -> int: ...

    def pending_in_order(self, order: str) -> PendingOrder:
        """The pending jobs kept sorted by ``order``: ``priority`` (highest first),
        ``est_run`` (shortest estimate first), ``tenant`` (by tenant index) or
        ``tenant_priority`` (by tenant, then highest priority first); ties in arrival order.
        Kept up to date as jobs arrive, start and wait again."""

    def try_start(
        self,
        job: int,
        *,
        borrowed: bool = False,
        avoid: frozenset[int] | set[int] = frozenset(),
        flavor: int = -1,
    ) -> bool:
        """Place and start ``job`` now if the placement policy finds room (off the nodes in
        ``avoid``; only on GPUs of ``flavor``, an index in ``tenancy.flavors``, when >= 0)."""

    def reservation(self, job: int, taken: frozenset[int] | set[int]) -> tuple[float, set[int]]:
        """When and where ``job`` would first start by the running jobs' runtime estimates
        (nodes in ``taken``, reserved already, left out): (shadow time, its nodes); (inf,
        set()) when it never would."""

    def preempt(self, job: int) -> None:
        """Stop a running job; work since its last checkpoint is lost; it waits again."""

    def start_by_preempting(
        self, job: int, candidates: list[int], *, borrowed: bool = False, flavor: int = -1
    ) -> bool:
        """Start ``job`` (on GPUs of ``flavor`` when >= 0) by preempting the fewest, cheapest
        ``candidates`` whose GPUs, on the placement found, let it start; False (and nothing
        preempted) when none do."""

    def borrowed(self, job: int) -> bool:
        """True when a running job was admitted on capacity borrowed from other tenants."""

    def expected_end_s(self, job: int) -> float:
        """When a running job would end by its runtime estimate."""

    def usage_vector(self, tenant: int) -> npt.NDArray[np.float64]:
        """A tenant's (GPU, CPU, memory) in use as shares of the cluster's capacity."""


class QueuePolicy(Protocol):
    """Decides which pending jobs start (and which running jobs yield)."""

    name: str

    def schedule(self, view: SchedulerView) -> None:
        """Start what should start now."""


_QUEUES: dict[str, Callable[[], QueuePolicy]] = {}


def register_queue(name: str) -> Callable[[type], type]:
    """Class decorator: make a queueing policy available by ``name``."""

    def wrap(cls: type) -> type:
        _QUEUES[name] = cls
        return cls

    return wrap


def queue_names() -> tuple[str, ...]:
    """Registered queueing policy names."""
    return tuple(sorted(_QUEUES))


def make_queue(name: str) -> QueuePolicy:
    """A fresh queueing policy by name; a :class:`SpecError` lists the valid names."""
    if name not in _QUEUES:
        raise SpecError("queue", name, f"valid: {', '.join(queue_names())}")
    return _QUEUES[name]()


def gpu_milli(jobs: JobTable, job: int) -> int:
    """A job's GPU demand in milli-GPU."""
    return int(jobs.num_gpu[job] * jobs.gpu_milli[job])


def start_in_order(view: SchedulerView, order: Iterable[int]) -> None:
    """Start jobs in ``order`` until one does not fit (no job overtakes a blocked one)."""
    for job in order:
        if not view.try_start(job):
            return


def tenant_queues(view: SchedulerView, within: str = "tenant") -> dict[int, Iterator[int]]:
    """Each tenant with jobs -> its pending jobs in arrival order (``within="tenant"``) or
    by priority (``"tenant_priority"``), read lazily from that order, so a pass touches only
    the jobs it looks at."""
    order = view.pending_in_order(within)
    return {tenant: order.between(lo, hi) for tenant, (lo, hi) in order.groups.items()}
