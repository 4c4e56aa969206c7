"""EASY backfilling (Lifka, "The ANL/IBM SP scheduling system", JSSPP 1995; Mu'alem and
Feitelson, IEEE TPDS 2001).

Jobs start in arrival order. When the head job does not fit, it gets a reservation at the
*shadow time*, the earliest time enough GPUs free up by the running jobs' runtime estimates; a
later job may jump ahead if it fits now and either ends (by its estimate) before the shadow
time or uses only GPUs the head job will not need then.
"""

from __future__ import annotations

from typing import ClassVar

from scalewall.sched.policies.queueing import SchedulerView, gpu_milli, register_queue


@register_queue("backfill")
class EasyBackfillQueue:
    """FIFO with EASY backfilling."""

    name = "backfill"
    depth: ClassVar[int] = 256
    """Pending jobs behind the head looked at per pass (bounds the cost on long queues)."""

    def schedule(self, view: SchedulerView) -> None:
        pending = list(view.pending)
        while pending and view.try_start(pending[0]):
            pending.pop(0)
        if not pending:
            return
        shadow_s, extra = self._reservation(view, gpu_milli(view.jobs, pending[0]))
        for job in pending[1 : 1 + self.depth]:
            need = gpu_milli(view.jobs, job)
            ends_in_time = view.now_s + float(view.jobs.est_run_s[job]) <= shadow_s
            if (ends_in_time or need <= extra) and view.try_start(job) and not ends_in_time:
                extra -= need

    def _reservation(self, view: SchedulerView, need: int) -> tuple[float, int]:
        """Shadow time and the GPUs (milli) spare at that time beyond the head's need."""
        free = view.free_gpu_milli
        if free >= need:
            return view.now_s, free - need
        ends = sorted((view.expected_end_s(j), gpu_milli(view.jobs, j)) for j in view.running)
        for end_s, gpus in ends:
            free += gpus
            if free >= need:
                return end_s, free - need
        return float("inf"), 0
