"""Priority with preemption: higher priority first; a waiting job may preempt lower-priority
running jobs, the lowest priority class first and within it the engine's cheapest victims
(``start_by_preempting``: only when the victims' GPUs, on the placement found, let the job
start). Preemption is checkpoint-aware: a victim loses the work done since its last checkpoint
and waits again."""

from __future__ import annotations

from scalewall.sched.policies.queueing import SchedulerView, gpu_milli, register_queue


@register_queue("priority")
class PriorityPreemptQueue:
    """Strict priority, preemptive."""

    name = "priority"

    def schedule(self, view: SchedulerView) -> None:
        for job in view.pending_in_order("priority"):
            if view.try_start(job):
                continue
            if not self._preempt_for(view, job):
                return

    def _preempt_for(self, view: SchedulerView, job: int) -> bool:
        """Start ``job`` on lower-priority jobs' GPUs, lowest class first; False when even
        all of them would not let it start (then nothing is preempted)."""
        prio = view.jobs.priority
        lower = [j for j in view.running if prio[j] < prio[job]]
        if view.free_gpu_milli + sum(gpu_milli(view.jobs, v) for v in lower) < gpu_milli(
            view.jobs, job
        ):
            return False
        for level in sorted({int(prio[j]) for j in lower}):
            # Each class is tried with all classes below it, so a higher class is touched only
            # when the lower ones together cannot make room.
            if view.start_by_preempting(job, [j for j in lower if prio[j] <= level]):
                return True
        return False
