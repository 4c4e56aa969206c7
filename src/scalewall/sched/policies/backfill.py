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
        pending = view.pending  # try_start removes a started job from it
        while pending and view.try_start(pending[0]):
            pass
        if not pending:
            return
        head = pending[0]
        behind = pending[1 : 1 + self.depth]
        shadow_s, nodes = view.reservation(head, set())
        reserved = frozenset(nodes)
        reservations = 1
        requests = view.jobs.shape_id
        # Shapes that found no room since the last start (anywhere / off the reserved nodes):
        # the engine would answer the same, but a long queue repeats few shapes, and asking
        # it costs a call per job.
        full: set[int] = set()
        full_off: set[int] = set()
        # Shapes whose reservation added no nodes, with its shadow time: asking again with the
        # same reserved nodes and cluster gives the same answer (a long queue asks for many).
        known: dict[int, float] = {}
        for job in behind:
            shape = int(requests[job])
            ends_s = view.now_s + float(view.jobs.est_run_s[job])
            if ends_s <= shadow_s and shape not in full:
                if view.try_start(job):
                    full.clear()
                    full_off.clear()
                    known.clear()
                    continue
                full.add(shape)
            if shape not in full_off:
                if view.try_start(job, avoid=reserved):
                    full.clear()
                    full_off.clear()
                    known.clear()
                    continue
                full_off.add(shape)
            if reservations < self.reservations:
                reservations += 1
                if shape in known:
                    continue  # its shadow is in shadow_s already
                job_shadow_s, nodes = view.reservation(job, reserved)
                shadow_s = min(shadow_s, job_shadow_s)
                if nodes <= reserved:
                    known[shape] = job_shadow_s
                else:
                    reserved = reserved | nodes
                    full_off.clear()  # more nodes avoided: a different question
                    known.clear()


@register_queue("backfill-conservative")
class ConservativeBackfillQueue(EasyBackfillQueue):
    """FIFO with conservative backfilling: every job passed over keeps a reservation."""

    name = "backfill-conservative"
    reservations: ClassVar[int] = 256
