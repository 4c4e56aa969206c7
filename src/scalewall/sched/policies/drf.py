"""Dominant-resource fair share (Ghodsi et al., "Dominant Resource Fairness", NSDI'11).

A tenant's dominant share is the largest of its GPU, CPU and memory shares of the cluster,
divided by its weight (its quota's share of all quotas). The pending job of the tenant with
the smallest dominant share goes next; a tenant whose next job does not fit waits this round.
"""

from __future__ import annotations

from scalewall.sched.policies.queueing import SchedulerView, register_queue


@register_queue("drf")
class DominantResourceFairQueue:
    """Weighted DRF across tenants, arrival order within a tenant."""

    name = "drf"

    def schedule(self, view: SchedulerView) -> None:
        jobs = view.jobs
        queues: dict[int, list[int]] = {}
        for job in view.pending:
            queues.setdefault(int(jobs.tenant[job]), []).append(job)
        quotas = view.quota_gpu_milli
        weight = quotas / max(int(quotas.sum()), 1)
        while queues:
            share = {
                t: float(view.usage_vector(t).max()) / max(float(weight[t]), 1e-12) for t in queues
            }
            tenant = min(share, key=lambda t: (share[t], t))
            job = queues[tenant][0]
            if view.try_start(job):
                queues[tenant].pop(0)
                if not queues[tenant]:
                    del queues[tenant]
            else:
                del queues[tenant]
