"""PendingOrder keeps the pending jobs in a policy's order as they come and go."""

from __future__ import annotations

import numpy as np

from scalewall.sched.pending import PendingOrder


def test_order_matches_a_full_sort_under_random_adds_and_removes() -> None:
    rng = np.random.default_rng(3)
    prio = rng.integers(0, 4, size=200)
    order = PendingOrder([-prio], [])
    pending: set[int] = set()
    for _ in range(2_000):
        job = int(rng.integers(200))
        if job in pending:
            order.remove(job)
            pending.discard(job)
        else:
            order.add(job)
            pending.add(job)
    assert list(order) == sorted(pending, key=lambda j: (-prio[j], j))


def test_iteration_survives_starting_and_requeueing_jobs() -> None:
    order = PendingOrder([np.array([5, 1, 3, 1, 2])], range(5))
    seen = []
    for job in order:
        seen.append(job)
        order.remove(job)  # started
        if job == 1:
            order.add(0)  # a job that sorts after the current one waits again
            order.remove(0)
            order.add(0)
    assert seen == [1, 3, 4, 2, 0]


def test_groups_give_each_tenants_rank_range() -> None:
    tenant = np.array([1, 0, 1, 2, 0])
    order = PendingOrder([tenant], [0, 3, 4], groups=tenant)
    assert {t: list(order.between(*order.groups[t])) for t in order.groups} == {
        0: [4],
        1: [0],
        2: [3],
    }
