"""FIFO: jobs start in arrival order; a job that does not fit blocks the ones behind it."""

from __future__ import annotations

from scalewall.sched.policies.queueing import SchedulerView, register_queue, start_in_order


@register_queue("fifo")
class FifoQueue:
    """Strict first-in first-out."""

    name = "fifo"

    def schedule(self, view: SchedulerView) -> None:
        start_in_order(view, list(view.pending))
