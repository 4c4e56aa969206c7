"""Shortest job first by the runtime estimate (``est_run_s``; the trace's run time when the
trace gives no estimate, i.e. a perfect predictor). Ties keep arrival order; a job that does
not fit blocks longer ones."""

from __future__ import annotations

from scalewall.sched.policies.queueing import SchedulerView, register_queue, start_in_order


@register_queue("sjf")
class ShortestJobFirstQueue:
    """Shortest estimated job first."""

    name = "sjf"

    def schedule(self, view: SchedulerView) -> None:
        start_in_order(view, view.pending_in_order("est_run"))
