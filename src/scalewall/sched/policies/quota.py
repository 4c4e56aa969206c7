"""Tenant quotas with borrowing and reclaim, as Kueue's ClusterQueues in one cohort do.

Each tenant has a nominal GPU quota. A job is admitted within its tenant's quota, or on
capacity borrowed from the cohort (the sum of all quotas) while other tenants leave theirs
unused. When a tenant wants its own quota back, other tenants' jobs that run on borrowed
capacity are preempted to reclaim it, only when their GPUs, on the placement found, let the
job start (the engine's ``start_by_preempting`` picks the fewest and cheapest). A tenant's
non-borrowed usage never exceeds its quota. Within a tenant, jobs go in arrival order.
"""

from __future__ import annotations

from scalewall.sched.policies.queueing import SchedulerView, gpu_milli, register_queue


@register_queue("quota")
class QuotaQueue:
    """Kueue-style quotas, borrowing and reclaim."""

    name = "quota"

    def schedule(self, view: SchedulerView) -> None:
        jobs = view.jobs
        blocked: set[int] = set()
        for job in list(view.pending):
            tenant = int(jobs.tenant[job])
            if tenant in blocked:
                continue
            need = gpu_milli(jobs, job)
            own = self._own_use(view, tenant) + need <= view.quota_gpu_milli[tenant]
            cohort_free = view.cohort_gpu_milli - int(view.tenant_gpu_milli.sum())
            if own:
                if view.try_start(job) or self._reclaim(view, job):
                    continue
            elif need <= cohort_free and view.try_start(job, borrowed=True):
                continue
            blocked.add(tenant)

    def _own_use(self, view: SchedulerView, tenant: int) -> int:
        jobs = view.jobs
        return sum(
            gpu_milli(jobs, j)
            for j in view.running
            if jobs.tenant[j] == tenant and not view.borrowed(j)
        )

    def _reclaim(self, view: SchedulerView, job: int) -> bool:
        """Start ``job`` on other tenants' borrowed GPUs; False when they would not do."""
        jobs = view.jobs
        tenant = jobs.tenant[job]
        victims = [j for j in view.running if view.borrowed(j) and jobs.tenant[j] != tenant]
        return bool(victims) and view.start_by_preempting(job, victims)
