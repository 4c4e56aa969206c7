"""Priority with preemption: higher priority first; a waiting job may preempt lower-priority
running jobs (lowest priority, most recently started first). Preemption is checkpoint-aware:
the victim loses the work done since its last checkpoint and waits again."""

from __future__ import annotations

from scalewall.sched.policies.queueing import SchedulerView, gpu_milli, register_queue


@register_queue("priority")
class PriorityPreemptQueue:
    """Strict priority, preemptive."""

    name = "priority"

    def schedule(self, view: SchedulerView) -> None:
        prio = view.jobs.priority
        for job in sorted(view.pending, key=lambda j: (-prio[j], j)):
            if view.try_start(job):
                continue
            if not self._preempt_for(view, job):
                return

    def _preempt_for(self, view: SchedulerView, job: int) -> bool:
        """Preempt lower-priority jobs until ``job`` starts; False when it cannot."""
        prio = view.jobs.priority
        victims = sorted(
            (j for j in view.running if prio[j] < prio[job]),
            key=lambda j: (prio[j], -view.running[j], -j),
        )
        reachable = view.free_gpu_milli + sum(gpu_milli(view.jobs, v) for v in victims)
        if reachable < gpu_milli(view.jobs, job):
            return False
        for victim in victims:
            view.preempt(victim)
            if view.try_start(job):
                return True
        return False
