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

from scalewall.sched.policies.queueing import (
    SchedulerView,
    gpu_milli,
    register_queue,
    tenant_queues,
)
from scalewall.sched.tenancy import borrowing_fits


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
        jobs = view.jobs
        queues = tenant_queues(view, self.within)
        heads = [
            (self._key(view, job, t), job, t)
            for t, q in queues.items()
            if (job := next(q, None)) is not None
        ]
        heapq.heapify(heads)
        while heads:
            _, job, tenant = heapq.heappop(heads)
            need = gpu_milli(jobs, job)
            own = self._own_use(view, tenant) + need <= view.quota_gpu_milli[tenant]
            if own:
                started = view.try_start(job) or self._reclaim(view, job)
            else:
                started = self._may_borrow(view, tenant, need) and view.try_start(
                    job, borrowed=True
                )
            if started and (following := next(queues[tenant], None)) is not None:
                heapq.heappush(heads, (self._key(view, following, tenant), following, tenant))

    def _own_use(self, view: SchedulerView, tenant: int) -> int:
        """GPUs the tenant holds within its quota (not borrowed), in milli-GPU."""
        return int(view.tenant_gpu_milli[tenant] - view.tenant_borrowed_gpu_milli[tenant])

    def _may_borrow(self, view: SchedulerView, tenant: int, need: int) -> bool:
        """``need`` more borrowed milli-GPU keep the tenant within its borrowing limit and the
        cohort tree able to serve every queue's borrowed GPUs, from siblings first, then up
        (``tenancy.borrowing_fits``; with flat cohorts: the cohort's borrowed total within
        what its queues lend of their unused quota)."""
        ten = view.tenancy
        borrowed = view.tenant_borrowed_gpu_milli
        if borrowed[tenant] + need > ten.borrow_limit[tenant]:
            return False
        held = view.tenant_gpu_milli.copy()
        after = borrowed.copy()
        held[tenant] += need
        after[tenant] += need
        return borrowing_fits(ten, held, after)

    def _reclaim(self, view: SchedulerView, job: int) -> bool:
        """Start ``job`` on other tenants' borrowed GPUs, nearest in the cohort tree first
        (its own cohort's borrowers, then its parent's subtree's, up to the root); False when
        they would not do."""
        jobs = view.jobs
        tenant = jobs.tenant[job]
        ten = view.tenancy
        borrowers = [j for j in view.running if view.borrowed(j) and jobs.tenant[j] != tenant]
        tried = 0
        for level in ten.ancestors[ten.cohort[tenant]]:
            victims = [j for j in borrowers if level in ten.ancestors[ten.cohort[jobs.tenant[j]]]]
            if len(victims) > tried and view.start_by_preempting(job, victims):
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
