"""Dominant-resource fair share (Ghodsi et al., "Dominant Resource Fairness", NSDI'11).

A tenant's dominant share is the largest of its GPU, CPU and memory shares of the cluster,
divided by its weight (its quota's share of all quotas). The pending job of the tenant with
the smallest dominant share goes next; a tenant whose next job does not fit waits this round.
"""

from __future__ import annotations

from scalewall.sched.policies.queueing import SchedulerView, register_queue, tenant_queues


@register_queue("drf")
class DominantResourceFairQueue:
    """Weighted DRF across tenants, arrival order within a tenant."""

    name = "drf"

    def schedule(self, view: SchedulerView) -> None:
        queues = tenant_queues(view)
        heads = {t: job for t, q in queues.items() if (job := next(q, None)) is not None}
        quotas = view.quota_gpu_milli
        weight = quotas / max(int(quotas.sum()), 1)
        while heads:
            share = {
                t: float(view.usage_vector(t).max()) / max(float(weight[t]), 1e-12) for t in heads
            }
            tenant = min(share, key=lambda t: (share[t], t))
            if view.try_start(heads[tenant]):
                job = next(queues[tenant], None)
                if job is None:
                    del heads[tenant]
                else:
                    heads[tenant] = job
            else:
                del heads[tenant]
