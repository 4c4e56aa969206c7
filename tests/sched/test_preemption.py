"""Preemption that helps: victims only when their GPUs let the job start, no thrash."""

from __future__ import annotations

import numpy as np
from tests.sched.frames import job_frame

from scalewall.sched.cluster import SyntheticClusterSpec, synthetic_cluster
from scalewall.sched.duration import TierSlowdownModel
from scalewall.sched.engine import SimConfig, Simulation
from scalewall.sched.jobs import job_table


def _jobs(
    submit: list[float], run: list[float], gpus: list[int], tenant: list[str], prio: list[int]
):  # type: ignore[no-untyped-def]
    cpu = [1000 * g for g in gpus]
    frame = job_frame(gpus, submit_s=submit, run_s=run, cpu_milli=cpu, tenant=tenant, priority=prio)
    return job_table(frame)


def _run(jobs, queue: str, **config: object) -> Simulation:  # type: ignore[no-untyped-def]
    cluster = synthetic_cluster(SyntheticClusterSpec(num_nodes=4, gpus_per_node=8))
    sim = Simulation(
        cluster,
        jobs,
        SimConfig(queue=queue, placement="bestfit", check_invariants=True, **config),  # type: ignore[arg-type]
        duration=TierSlowdownModel(slowdown_per_tier_frac=0.0),
    )
    sim.run()
    return sim


def _reclaim_case() -> object:
    # Tenant b fills the 32 GPUs on borrowed quota with 100 jobs of 1-8 GPUs; tenant a (half the
    # quota) arrives later with 50 jobs and reclaims. 150 jobs in all.
    rng = np.random.default_rng(5)
    sizes = [int(x) for x in rng.choice([1, 2, 4, 8], size=150)]
    submit = [float(i) for i in range(100)] + [500.0 + 20 * i for i in range(50)]
    run = [float(x) for x in rng.uniform(2_000, 20_000, size=150)]
    tenant = ["b"] * 100 + ["a"] * 50
    return _jobs(submit, run, sizes, tenant, [0] * 150)


def _assert_every_preemption_starts_its_job(sim: Simulation) -> None:
    starts = {(t, j) for t, e, j in sim.events if e == "start"}
    for time_s, _victim, job, shared in sim.preemption_log:
        assert shared, "a victim off the placement it made room for"
        assert (time_s, job) in starts


def test_quota_reclaim_does_not_thrash() -> None:
    sim = _run(_reclaim_case(), "quota")
    assert np.isfinite(sim.state.end_s).all()
    # Each reclaim frees what one job of tenant a needs, and a victim restarted on borrowed
    # capacity is not stopped again within the minimum run time: 31 preemptions, at most 5 of
    # one job (preempting until the job started, blind to placement: 180, one job 40 times).
    assert int(sim.state.preemptions.max()) <= 5
    assert len(sim.preemption_log) <= 50
    _assert_every_preemption_starts_its_job(sim)


def test_no_preemption_for_a_job_that_still_cannot_fit() -> None:
    # Four 8-GPU low-priority jobs hold every GPU. A 24-GPU job (priority 5) needs three of
    # them; a 40-GPU one (priority 4) can never fit on 32 GPUs and must preempt nothing.
    jobs = _jobs(
        [0, 0, 0, 0, 1000, 1000],
        [5000] * 4 + [100, 100],
        [8, 8, 8, 8, 40, 24],
        ["a"] * 6,
        [0, 0, 0, 0, 4, 5],
    )
    sim = _run(jobs, "priority")
    assert [j for _, _, j, _ in sim.preemption_log] == [5, 5, 5]
    _assert_every_preemption_starts_its_job(sim)


def test_minimum_run_time_protects_a_restarted_job() -> None:
    # Low-priority job 0 holds one node; high-priority 8-GPU jobs arrive every 100 s on a
    # one-node cluster's worth of room. With a 600 s minimum run, job 0 is preempted at most
    # once per 600 s of running.
    submit = [0.0] + [100.0 * k for k in range(1, 9)]
    jobs = _jobs(submit, [5000.0] + [50.0] * 8, [32] + [8] * 8, ["a"] * 9, [0] + [9] * 8)
    sim = _run(jobs, "priority")
    assert sim.state.preemptions[0] <= 2
    _assert_every_preemption_starts_its_job(sim)
