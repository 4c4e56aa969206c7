"""EASY and conservative backfilling with placement-aware reservations (Lifka, "The ANL/IBM SP
scheduling system", JSSPP 1995; Mu'alem and Feitelson, IEEE TPDS 2001).

Jobs start in arrival order. When the head job does not fit it gets a reservation: the
*shadow time*, when, by the running jobs' runtime estimates, the placement policy first finds
room for it, and the nodes of that placement (``SchedulerView.reservation``). A later job may
jump ahead if it fits now and either ends (by its estimate) before the shadow time or runs on
nodes outside the reservation, so a backfilled job never sits where the head job will start.
``backfill`` (EASY) reserves for the head job only; ``backfill-conservative`` reserves for
every job it passes over, so a backfilled job delays none of them.
"""

from __future__ import annotations

from typing import ClassVar

from scalewall.sched.policies.queueing import SchedulerView, register_queue


@register_queue("backfill")
class EasyBackfillQueue:
    """FIFO with EASY backfilling."""

    name = "backfill"
    depth: ClassVar[int] = 256
    """Pending jobs behind the head looked at per pass (bounds the cost on long queues)."""
    reservations: ClassVar[int] = 1
    """Jobs that get a reservation per pass: 1 is EASY; more is conservative backfilling."""

    def schedule(self, view: SchedulerView) -> None:
        pending = list(view.pending)
        while pending and view.try_start(pending[0]):
            pending.pop(0)
        if not pending:
            return
        shadows: list[float] = []
        reserved: set[int] = set()
        first = view.reservation(pending[0], reserved)
        shadows.append(first[0])
        reserved |= first[1]
        for job in pending[1 : 1 + self.depth]:
            ends_s = view.now_s + float(view.jobs.est_run_s[job])
            if ends_s <= min(shadows) and view.try_start(job):
                continue
            if view.try_start(job, avoid=reserved):
                continue
            if len(shadows) < self.reservations:
                shadow_s, nodes = view.reservation(job, reserved)
                shadows.append(shadow_s)
                reserved |= nodes


@register_queue("backfill-conservative")
class ConservativeBackfillQueue(EasyBackfillQueue):
    """FIFO with conservative backfilling: every job passed over keeps a reservation."""

    name = "backfill-conservative"
    reservations: ClassVar[int] = 256
