"""Tenant quotas with borrowing, lending and reclaim, as Kueue's ClusterQueues in cohorts do.

Each tenant queue has a nominal GPU quota in a cohort (``sched.tenancy``). A job is admitted
within its tenant's quota, or on capacity borrowed from the cohort: its queue's borrowed GPUs
stay within its ``borrowing_limit``, and the cohort's borrowed GPUs within what its queues
leave unused of their nominal quotas, each at most its ``lending_limit``. When a tenant wants
its own quota back, the cohort's other tenants' jobs that run on borrowed capacity are
preempted to reclaim it, only when their GPUs, on the placement found, let the job start (the
engine's ``start_by_preempting`` picks the fewest and cheapest). A tenant's non-borrowed usage
never exceeds its quota. Queues of higher priority go first; within a tenant, jobs go in
arrival order (``quota``) or by priority, then arrival (``quota-priority``, as Kueue orders a
ClusterQueue's workloads). Cohorts may nest: borrowing is served by the own cohort's unused
quota first, then by the parent's subtree, and reclaim preempts the nearest borrowers first.
"""

from __future__ import annotations

import heapq

import numpy as np
import numpy.typing as npt

from scalewall.sched.policies.queueing import (
    SchedulerView,
    gpu_milli,
    register_queue,
    tenant_queues,
)
from scalewall.sched.tenancy import Tenancy, borrowing_fits


@register_queue("quota")
class QuotaQueue:
    """Kueue-style quotas, borrowing, lending and reclaim; a tenant's jobs in arrival order."""

    name = "quota"
    within = "tenant"
    """The pending order inside a tenant (``SchedulerView.pending_in_order``)."""

    def _key(self, view: SchedulerView, job: int, tenant: int) -> tuple[int, ...]:
        return (-int(view.tenancy.priority[tenant]), job)

    def schedule(self, view: SchedulerView) -> None:
        """Pending jobs over all tenants by queue priority, then in the tenants' order (a
        merge of the tenants' queues); a tenant whose job cannot start waits for the rest of
        the pass."""
        queues = tenant_queues(view, self.within)
        heads = [
            (self._key(view, job, t), job, t)
            for t, q in queues.items()
            if (job := next(q, None)) is not None
        ]
        heapq.heapify(heads)
        while heads:
            _, job, tenant = heapq.heappop(heads)
            if view.tenancy.flavors:
                started = self._admit_flavored(view, job, tenant)
            else:
                started = self._admit(view, job, tenant)
            if started and (following := next(queues[tenant], None)) is not None:
                heapq.heappush(heads, (self._key(view, following, tenant), following, tenant))

    def _admit(self, view: SchedulerView, job: int, tenant: int) -> bool:
        """Start ``job`` within its queue's quota (reclaiming lent quota if need be) or on
        borrowed capacity."""
        need = gpu_milli(view.jobs, job)
        if self._own_use(view, tenant) + need <= view.quota_gpu_milli[tenant]:
            return view.try_start(job) or self._reclaim(view, job)
        return self._may_borrow(view, tenant, need) and view.try_start(job, borrowed=True)

    def _admit_flavored(self, view: SchedulerView, job: int, tenant: int) -> bool:
        """As :meth:`_admit`, per GPU type: the queue's flavors the job's models allow, in
        the queue's order; the first that admits it within its quota or by borrowing, else
        the first where reclaiming makes room (Kueue's default flavor fungibility: borrow
        rather than try the next flavor, try the next flavor rather than preempt)."""
        need = gpu_milli(view.jobs, job)
        held = view.tenant_flavor_gpu_milli
        borrowed = view.tenant_flavor_borrowed_gpu_milli
        within = []
        for k in self._flavors_for(view, job, tenant):
            ten = view.tenancy.by_flavor[k]
            if held[tenant, k] - borrowed[tenant, k] + need <= ten.quota[tenant]:
                if view.try_start(job, flavor=k):
                    return True
                within.append(k)
            elif self._fits(ten, held[:, k], borrowed[:, k], tenant, need) and view.try_start(
                job, borrowed=True, flavor=k
            ):
                return True
        return any(self._reclaim(view, job, flavor=k) for k in within)

    def _flavors_for(self, view: SchedulerView, job: int, tenant: int) -> list[int]:
        """The tenant's flavors, in its queue's order, that the job's ``gpu_models`` allow."""
        ten = view.tenancy
        models = view.jobs.gpu_models[job]
        order = ten.flavor_order[tenant]
        if not models:
            return list(order)
        allowed = set(models.split("|"))
        return [k for k in order if ten.flavors[k] in allowed]

    def _own_use(self, view: SchedulerView, tenant: int) -> int:
        """GPUs the tenant holds within its quota (not borrowed), in milli-GPU."""
        return int(view.tenant_gpu_milli[tenant] - view.tenant_borrowed_gpu_milli[tenant])

    def _may_borrow(self, view: SchedulerView, tenant: int, need: int) -> bool:
        """``need`` more borrowed milli-GPU keep the tenant within its borrowing limit and the
        cohort tree able to serve every queue's borrowed GPUs, from siblings first, then up
        (``tenancy.borrowing_fits``; with flat cohorts: the cohort's borrowed total within
        what its queues lend of their unused quota)."""
        return self._fits(
            view.tenancy, view.tenant_gpu_milli, view.tenant_borrowed_gpu_milli, tenant, need
        )

    @staticmethod
    def _fits(
        ten: Tenancy,
        held: npt.NDArray[np.int64],
        borrowed: npt.NDArray[np.int64],
        tenant: int,
        need: int,
    ) -> bool:
        """``need`` more borrowed milli-GPU for ``tenant`` keep its borrowing limit and the
        tree's lending (``tenancy.borrowing_fits``)."""
        if borrowed[tenant] + need > ten.borrow_limit[tenant]:
            return False
        return borrowing_fits(ten, held, borrowed, tenant=tenant, need=need)

    def _reclaim(self, view: SchedulerView, job: int, *, flavor: int = -1) -> bool:
        """Start ``job`` on other tenants' borrowed GPUs (of ``flavor`` when >= 0), nearest in
        the cohort tree first (its own cohort's borrowers, then its parent's subtree's, up to
        the root); False when they would not do."""
        jobs = view.jobs
        tenant = jobs.tenant[job]
        ten = view.tenancy
        if flavor < 0:
            lent = view.tenant_borrowed_gpu_milli
        else:
            lent = view.tenant_flavor_borrowed_gpu_milli[:, flavor]
        if int(lent.sum()) == int(lent[tenant]):
            return False  # nobody else borrows (of this flavor): no running job to scan
        borrowers = [
            j
            for j in view.running
            if view.borrowed(j)
            and jobs.tenant[j] != tenant
            and (flavor < 0 or view.running_flavor(j) == flavor)
        ]
        tried = 0
        for level in ten.ancestors[ten.cohort[tenant]]:
            victims = [j for j in borrowers if level in ten.ancestors[ten.cohort[jobs.tenant[j]]]]
            if len(victims) > tried and view.start_by_preempting(job, victims, flavor=flavor):
                return True
            tried = len(victims)
        return False


@register_queue("quota-priority")
class QuotaPriorityQueue(QuotaQueue):
    """As ``quota``; a tenant's jobs by priority (highest first), then arrival."""

    name = "quota-priority"
    within = "tenant_priority"

    def _key(self, view: SchedulerView, job: int, tenant: int) -> tuple[int, ...]:
        return (-int(view.tenancy.priority[tenant]), -int(view.jobs.priority[job]), job)
