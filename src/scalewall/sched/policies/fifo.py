"""FIFO: jobs start in arrival order; a job that does not fit blocks the ones behind it."""

from __future__ import annotations

from scalewall.sched.policies.queueing import SchedulerView, register_queue


@register_queue("fifo")
class FifoQueue:
    """Strict first-in first-out."""

    name = "fifo"

    def schedule(self, view: SchedulerView) -> None:
        pending = view.pending  # try_start removes a started job from it
        while pending and view.try_start(pending[0]):
            pass
