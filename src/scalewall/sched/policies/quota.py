"""Tenant quotas with borrowing and reclaim, as Kueue's ClusterQueues in one cohort do.

Each tenant has a nominal GPU quota. A job is admitted within its tenant's quota, or on
capacity borrowed from the cohort (the sum of all quotas) while other tenants leave theirs
unused. When a tenant wants its own quota back, other tenants' jobs that run on borrowed
capacity are preempted to reclaim it, only when their GPUs, on the placement found, let the
job start (the engine's ``start_by_preempting`` picks the fewest and cheapest). A tenant's
non-borrowed usage never exceeds its quota. Within a tenant, jobs go in arrival order.
"""

from __future__ import annotations

import heapq

from scalewall.sched.policies.queueing import (
    SchedulerView,
    gpu_milli,
    register_queue,
    tenant_queues,
)


@register_queue("quota")
class QuotaQueue:
    """Kueue-style quotas, borrowing and reclaim."""

    name = "quota"

    def schedule(self, view: SchedulerView) -> None:
        """Pending jobs in arrival order over all tenants (a merge of the tenants' queues);
        a tenant whose job cannot start waits for the rest of the pass."""
        jobs = view.jobs
        queues = tenant_queues(view)
        heads = [(job, t) for t, q in queues.items() if (job := next(q, None)) is not None]
        heapq.heapify(heads)
        while heads:
            job, tenant = heapq.heappop(heads)
            need = gpu_milli(jobs, job)
            own = self._own_use(view, tenant) + need <= view.quota_gpu_milli[tenant]
            cohort_free = view.cohort_gpu_milli - int(view.tenant_gpu_milli.sum())
            if own:
                started = view.try_start(job) or self._reclaim(view, job)
            else:
                started = need <= cohort_free and view.try_start(job, borrowed=True)
            if started and (following := next(queues[tenant], None)) is not None:
                heapq.heappush(heads, (following, tenant))

    def _own_use(self, view: SchedulerView, tenant: int) -> int:
        """GPUs the tenant holds within its quota (not borrowed), in milli-GPU."""
        return int(view.tenant_gpu_milli[tenant] - view.tenant_borrowed_gpu_milli[tenant])

    def _reclaim(self, view: SchedulerView, job: int) -> bool:
        """Start ``job`` on other tenants' borrowed GPUs; False when they would not do."""
        jobs = view.jobs
        tenant = jobs.tenant[job]
        victims = [j for j in view.running if view.borrowed(j) and jobs.tenant[j] != tenant]
        return bool(victims) and view.start_by_preempting(job, victims)
