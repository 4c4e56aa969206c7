"""The scheduler's fast paths give the schedules of the plain algorithms they replace.

Each fast path is run against a plain reference on a small trace with long queues: the
reservation walk against releasing jobs one by one with a placement call after each, a
reservation carried over a release against recomputing it, DRF's heap against taking the
minimum share over every tenant per job, the gang slot table against listing the slots.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from scalewall import sched
from scalewall.sched.cluster import GPU_MILLI, Placement
from scalewall.sched.engine import SimConfig, Simulation
from scalewall.sched.jobs import Request, job_table
from scalewall.sched.policies.base import ScoredPlacement, fill_gang
from scalewall.sched.policies.best_fit import BestFitPlacement
from scalewall.sched.policies.queueing import SchedulerView, tenant_queues


def _month(num_jobs: int, days: int = 1) -> pd.DataFrame:
    """Seren-like jobs on few nodes, so queues grow long and the head is often a gang."""
    frame = sched.load_trace(f"synthetic:Seren:{num_jobs}:{days}", seed=3).frame
    frame["run_s"] *= 4  # offered load about twice the 32 GPUs
    rng = np.random.default_rng(1)
    # Estimates above the run time, as users' limits are, so jobs end out of estimate order.
    frame["est_run_s"] = frame["run_s"] * rng.choice((1.0, 1.0, 1.5, 3.0), size=len(frame))
    frame["priority"] = rng.choice((0, 1, 2), size=len(frame))
    return frame


def _sim(queue: str, placement: str = "bestfit", num_jobs: int = 250) -> Simulation:
    cluster = sched.synthetic_cluster(num_nodes=4, gpus_per_node=8)
    config = SimConfig(queue=queue, placement=placement, seed=2)
    return Simulation(cluster, job_table(_month(num_jobs)), config)


def _schedule(sim: Simulation) -> str:
    """The event log, the preemptions and every job's end, as text (NaN for skipped jobs)."""
    return repr((sim.events, sim.preemption_log, sim.state.end_s.tolist()))


def _walk(sim: Simulation, request: Request, taken: set[int]) -> tuple[float, frozenset[int]]:
    """The plain reservation: release running jobs by expected end, one by one, and ask the
    placement after each; then allocate them back."""
    cluster = sim.cluster
    found: tuple[float, frozenset[int]] = (math.inf, frozenset())
    released = []
    for end_s, job in list(sim._ends):
        cluster.release(sim.where[job])
        released.append(job)
        placement = sim._place_avoiding(request, taken)
        if placement is not None:
            found = (end_s, frozenset(placement.nodes))
            break
    for job in released:
        cluster.allocate(sim.where[job])
    return found


@pytest.mark.parametrize("placement", ["bestfit", "fgd"])
def test_reservation_equals_the_plain_walk(placement: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = Simulation.reservation
    checked = []

    def compared(sim: Simulation, job: int, taken: set[int]) -> tuple[float, set[int]]:
        before = (sim.cluster.gpu_free_milli.copy(), sim.cluster.cpu_free.copy())
        generation = sim.cluster.generation
        answer = fast(sim, job, taken)
        assert sim.cluster.generation == generation
        assert np.array_equal(sim.cluster.gpu_free_milli, before[0])
        assert np.array_equal(sim.cluster.cpu_free, before[1])
        sim.cluster.check_aggregates()
        end_s, nodes = _walk(sim, sim.requests[job], taken)
        assert answer == (max(end_s, sim.now), set(nodes))
        checked.append(end_s < math.inf)
        return answer

    monkeypatch.setattr(Simulation, "reservation", compared)
    sim = _sim("backfill-conservative", placement, num_jobs=120)
    sim.run()
    assert len(checked) > 50 and any(checked) and not all(checked)


@pytest.mark.parametrize("queue", ["backfill", "backfill-conservative"])
def test_cached_and_carried_reservations_equal_a_fresh_walk(
    queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    cached = Simulation.reservation
    reused = []

    def compared(sim: Simulation, job: int, taken: set[int]) -> tuple[float, set[int]]:
        request = sim.requests[job]
        held = (request.shape_id, frozenset(taken)) in sim._reservations
        held &= sim._reservation_generation == sim.cluster.generation
        answer = cached(sim, job, taken)
        end_s, nodes, _ = sim._find_reservation(request, taken)
        assert answer == (max(end_s, sim.now), set(nodes))
        reused.append(held)
        return answer

    monkeypatch.setattr(Simulation, "reservation", compared)
    sim = _sim(queue, num_jobs=160)
    sim.run()
    assert sum(reused) > 20  # answers from the cache, some carried over a release


@pytest.mark.parametrize("queue", ["backfill", "backfill-conservative"])
def test_carried_reservations_give_the_same_schedule(
    queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = {}
    for pure in (True, False):
        monkeypatch.setattr(BestFitPlacement, "pure", pure)
        sim = _sim(queue, num_jobs=160)
        sim.run()
        runs[pure] = _schedule(sim)
    assert runs[True] == runs[False]


class _PlainDrf:
    """DRF as first written: every tenant's share recomputed for every job looked at."""

    name = "drf"

    def schedule(self, view: SchedulerView) -> None:
        queues = tenant_queues(view)
        heads = {t: job for t, q in queues.items() if (job := next(q, None)) is not None}
        quotas = view.quota_gpu_milli
        weight = quotas / max(int(quotas.sum()), 1)
        while heads:
            share = {
                t: float(view.usage_vector(t).max()) / max(float(weight[t]), 1e-12) for t in heads
            }
            tenant = min(share, key=lambda t: (share[t], t))
            if view.try_start(heads[tenant]):
                job = next(queues[tenant], None)
                if job is None:
                    del heads[tenant]
                else:
                    heads[tenant] = job
            else:
                del heads[tenant]


def test_drf_heap_equals_the_plain_minimum() -> None:
    fast, plain = _sim("drf"), _sim("drf")
    plain.queue = _PlainDrf()
    fast.run()
    plain.run()
    assert _schedule(fast) == _schedule(plain)
    assert len({t for _, e, t in fast.events if e == "start"}) > 100


def test_gang_slots_equal_the_listed_slots() -> None:
    rng = np.random.default_rng(5)
    cluster = sched.synthetic_cluster(num_nodes=12, gpus_per_node=8)
    request = Request(
        num_gpu=40, gpu_milli=GPU_MILLI, cpu_milli=40_000, memory_bytes=0, model_mask=1, shape_id=0
    )
    policy = ScoredPlacement()
    policy.prepare(cluster, None, rng)
    for _ in range(30):
        cluster.gpu_free_milli[:] = rng.choice([0, 500, GPU_MILLI], size=(12, 8), p=[0.2, 0.2, 0.6])
        cluster.whole_free[:] = (cluster.gpu_free_milli == GPU_MILLI).sum(axis=1)
        cap = policy.gang_capacity(cluster, request)
        if cap.sum() < request.num_gpu:
            continue
        order = policy.gang_order(cluster, cap, np.flatnonzero(cap), request.num_gpu)
        placement = fill_gang(cluster, request, cap, order)
        assert placement.gpu_slots == _listed_slots(cluster, placement)


def _listed_slots(cluster: sched.Cluster, placement: Placement) -> tuple[tuple[int, ...], ...]:
    """Each node's lowest-numbered whole free slots, as many as the placement takes there."""
    free = cluster.gpu_free_milli
    return tuple(
        tuple(itertools.islice((s for s in range(8) if free[n, s] == GPU_MILLI), len(slots)))
        for n, slots in zip(placement.nodes, placement.gpu_slots, strict=True)
    )


def test_apply_many_and_free_all_keep_the_books() -> None:
    sim = _sim("fifo", num_jobs=200)
    sim.run()  # leaves nothing running; start a few jobs by hand
    cluster = sim.cluster
    placements = []
    for request in sim.requests[:60]:
        found = sim.placement.place(cluster, request)
        if found is not None:
            cluster.allocate(found)
            placements.append(found)
    snapshot = cluster.snapshot()
    versions = cluster.version.copy()
    cluster.apply_many(placements[::2], +1)
    cluster.check_aggregates()
    cluster.apply_many(placements[::2], -1)
    assert np.array_equal(cluster.gpu_free_milli, snapshot.gpu_free_milli)
    cluster.free_all()
    cluster.check_aggregates()
    assert cluster.allocated_gpu_milli() == 0
    cluster.restore(snapshot)
    cluster.check_aggregates()
    assert cluster.generation == snapshot.generation
    touched = {n for p in placements for n in p.nodes}
    # A node whose capacity moved in the probe has a new version (caches refresh).
    assert all(cluster.version[n] > versions[n] for n in touched)
