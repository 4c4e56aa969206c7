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
ClusterQueue's workloads).
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
        """``need`` more borrowed milli-GPU keep the tenant within its borrowing limit and its
        cohort's borrowed total within what the cohort's queues lend of their unused quota."""
        ten = view.tenancy
        borrowed = view.tenant_borrowed_gpu_milli
        if borrowed[tenant] + need > ten.borrow_limit[tenant]:
            return False
        cohort = int(ten.cohort[tenant])
        members = ten.members[cohort]
        unused = ten.quota[members] - (view.tenant_gpu_milli[members] - borrowed[members])
        lendable = int(ten.lend_limit[members].clip(max=unused).sum())
        lendable += int(ten.cohort_idle_lendable[cohort])
        return int(borrowed[members].sum()) + need <= lendable

    def _reclaim(self, view: SchedulerView, job: int) -> bool:
        """Start ``job`` on its cohort's other tenants' borrowed GPUs; False when they would
        not do."""
        jobs = view.jobs
        tenant = jobs.tenant[job]
        cohort = view.tenancy.cohort
        victims = [
            j
            for j in view.running
            if view.borrowed(j)
            and jobs.tenant[j] != tenant
            and cohort[jobs.tenant[j]] == cohort[tenant]
        ]
        return bool(victims) and view.start_by_preempting(job, victims)


@register_queue("quota-priority")
class QuotaPriorityQueue(QuotaQueue):
    """As ``quota``; a tenant's jobs by priority (highest first), then arrival."""

    name = "quota-priority"
    within = "tenant_priority"

    def _key(self, view: SchedulerView, job: int, tenant: int) -> tuple[int, ...]:
        return (-int(view.tenancy.priority[tenant]), -int(view.jobs.priority[job]), job)
