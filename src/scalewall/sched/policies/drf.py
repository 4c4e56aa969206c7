"""Dominant-resource fair share (Ghodsi et al., "Dominant Resource Fairness", NSDI'11).

A tenant's dominant share is the largest of its GPU, CPU and memory shares of the cluster,
divided by its weight (its quota's share of all quotas). The pending job of the tenant with
the smallest dominant share goes next; a tenant whose next job does not fit waits this round.
"""

from __future__ import annotations

import heapq

from scalewall.sched.policies.queueing import SchedulerView, register_queue, tenant_queues


@register_queue("drf")
class DominantResourceFairQueue:
    """Weighted DRF across tenants, arrival order within a tenant."""

    name = "drf"

    def schedule(self, view: SchedulerView) -> None:
        """Tenants in a heap by (dominant share, index): a start changes only the starting
        tenant's usage, so only its share is recomputed (a pass costs log(tenants) per job
        looked at instead of every tenant's share per job)."""
        queues = tenant_queues(view)
        heads = {t: job for t, q in queues.items() if (job := next(q, None)) is not None}
        quotas = view.quota_gpu_milli
        weight = quotas / max(int(quotas.sum()), 1)

        def share(t: int) -> float:
            return float(view.usage_vector(t).max()) / max(float(weight[t]), 1e-12)

        heap = [(share(t), t) for t in heads]
        heapq.heapify(heap)
        while heap:
            _, tenant = heapq.heappop(heap)
            if not view.try_start(heads[tenant]):
                continue
            job = next(queues[tenant], None)
            if job is not None:
                heads[tenant] = job
                heapq.heappush(heap, (share(tenant), tenant))
