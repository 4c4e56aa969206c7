"""Tenant queues: borrowing and lending limits hold at every event; priority inside a tenant."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.sched.frames import job_frame

from scalewall.errors import SpecError
from scalewall.sched.cluster import GPU_MILLI, SyntheticClusterSpec, synthetic_cluster
from scalewall.sched.duration import TierSlowdownModel
from scalewall.sched.engine import SimConfig, Simulation
from scalewall.sched.jobs import job_table
from scalewall.sched.metrics import collect
from scalewall.sched.tenancy import (
    Cohort,
    TenantQueue,
    borrowing_fits,
    build_tenancy,
    jain_index,
    load_quotas,
)


def _jobs(tenant: list[str], gpus: list[int], submit: list[float], prio: list[int] | None = None):  # type: ignore[no-untyped-def]
    n = len(tenant)
    run = [3_000.0 + 100.0 * i for i in range(n)]
    cpu = [1000 * g for g in gpus]
    frame = job_frame(
        gpus, submit_s=submit, run_s=run, cpu_milli=cpu, tenant=tenant, priority=prio or [0] * n
    )
    return job_table(frame)


def _run(jobs, queues: tuple[TenantQueue, ...], queue: str = "quota", cohorts=()):  # type: ignore[no-untyped-def]
    """Run on 4 x 8 GPUs, recording each tenant's borrowed GPUs after every event."""
    cluster = synthetic_cluster(SyntheticClusterSpec(num_nodes=4, gpus_per_node=8))
    config = SimConfig(
        queue=queue, check_invariants=True, tenant_queues=queues, cohorts=tuple(cohorts)
    )
    sim = Simulation(cluster, jobs, config, duration=TierSlowdownModel(slowdown_per_tier_frac=0))
    seen: list[np.ndarray] = []
    check = sim._check

    def watched() -> None:
        check()
        seen.append(sim.tenant_borrowed_gpu_milli.copy() / GPU_MILLI)

    sim._check = watched  # type: ignore[method-assign]
    sim.run()
    return sim, np.array(seen)


def _burst(tenant: str, count: int, at: float = 0.0) -> tuple[list[str], list[int], list[float]]:
    return [tenant] * count, [4] * count, [at + i for i in range(count)]


def test_borrowing_limit_is_never_exceeded_and_binds() -> None:
    t, g, s = _burst("a", 12)
    jobs = _jobs(t, g, s)
    limited = (
        TenantQueue(name="a", nominal_gpus=8, borrowing_limit=8),
        TenantQueue(name="b", nominal_gpus=24),
    )
    sim, borrowed = _run(jobs, limited)
    a = sim.jobs.tenant_names.index("a")
    assert borrowed[:, a].max() == 8  # the limit binds and is never passed
    assert collect(sim).jobs["finished"].all()
    _, free = _run(jobs, (TenantQueue(name="a", nominal_gpus=8), limited[1]))
    assert free[:, a].max() == 24  # without a limit it borrows all of b's idle quota


def test_lending_limit_is_respected() -> None:
    t, g, s = _burst("b", 10)
    jobs = _jobs(["a", *t], [1, *g], [5_000.0, *s])
    queues = (
        TenantQueue(name="a", nominal_gpus=16, lending_limit=4),
        TenantQueue(name="b", nominal_gpus=8),
        TenantQueue(name="idle", nominal_gpus=8, lending_limit=4),  # no jobs: lends 4
    )
    sim, borrowed = _run(jobs, queues)
    b = sim.jobs.tenant_names.index("b")
    assert borrowed[:, b].max() == 8  # 4 lent by a + 4 by the idle queue, never more


def test_cohorts_do_not_borrow_from_each_other() -> None:
    t, g, s = _burst("a", 6)
    jobs = _jobs([*t, "b"], [*g, 1], [*s, 9_000.0])
    queues = (
        TenantQueue(name="a", nominal_gpus=8, cohort="x"),
        TenantQueue(name="b", nominal_gpus=24, cohort="y"),
    )
    _, borrowed = _run(jobs, queues)
    assert borrowed.max() == 0


# A two-level tree: org -> {ml: a (8), b (8, no jobs)}, {research: c (16)}.
TREE_QUEUES = (
    TenantQueue(name="a", nominal_gpus=8, cohort="ml"),
    TenantQueue(name="b", nominal_gpus=8, cohort="ml"),
    TenantQueue(name="c", nominal_gpus=16, cohort="research"),
)


@pytest.mark.parametrize(
    ("cohorts", "most"),
    [
        ((), 8),  # ml and research are separate roots: only b's idle 8
        (
            (
                Cohort(name="org"),
                Cohort(name="ml", parent="org"),
                Cohort(name="research", parent="org"),
            ),
            24,
        ),
        (
            (
                Cohort(name="org"),
                Cohort(name="ml", parent="org", borrowing_limit=4),
                Cohort(name="research", parent="org"),
            ),
            12,
        ),
        (
            (
                Cohort(name="org"),
                Cohort(name="ml", parent="org"),
                Cohort(name="research", parent="org", lending_limit=8),
            ),
            16,
        ),
    ],
)
def test_unused_quota_flows_to_siblings_first_then_up(
    cohorts: tuple[Cohort, ...], most: int
) -> None:
    """a (nominal 8) bursts 48 GPUs of jobs: it borrows its sibling b's idle 8 first, then what
    research lends through org, within ml's borrowing and research's lending limits."""
    t, g, s = _burst("a", 12)
    c_job = 1e6  # c's one job arrives long after, so c's quota is unused meanwhile
    jobs = _jobs([*t, "c"], [*g, 1], [*s, c_job])
    sim, borrowed = _run(jobs, TREE_QUEUES, cohorts=cohorts)
    a = sim.jobs.tenant_names.index("a")
    assert borrowed[:, a].max() == most
    assert collect(sim).jobs["finished"].all()


def test_reclaim_reaches_up_the_tree_for_a_cousins_borrowed_quota() -> None:
    """a borrows all 32 GPUs (8 own, b's 8, c's 16 through org); when c's job arrives, its own
    cohort has no borrower, so reclaim goes up to org and preempts one of a's jobs."""
    t, g, s = _burst("a", 8)
    jobs = _jobs([*t, "c"], [*g, 4], [*s, 1_000.0])
    cohorts = (
        Cohort(name="org"),
        Cohort(name="ml", parent="org"),
        Cohort(name="research", parent="org"),
    )
    sim, borrowed = _run(jobs, TREE_QUEUES, cohorts=cohorts)
    a, c = sim.jobs.tenant_names.index("a"), sim.jobs.tenant_names.index("c")
    assert borrowed[:, a].max() == 24
    c_job = int(np.flatnonzero(sim.jobs.tenant == c)[0])
    assert sim.state.first_start_s[c_job] == pytest.approx(1_000.0)
    victims = {int(sim.jobs.tenant[v]) for _, v, p, _ in sim.preemption_log if p == c_job}
    assert victims == {a}


def test_reclaim_takes_the_own_cohorts_borrowers_first() -> None:
    """Both a (ml) and d (research) borrow; c (research) reclaims from d, its cohort-mate,
    not from a, though org's subtree holds both and a's jobs are cheaper to preempt."""
    queues = (
        TenantQueue(name="a", nominal_gpus=8, cohort="ml"),
        TenantQueue(name="b", nominal_gpus=8, cohort="ml"),
        TenantQueue(name="c", nominal_gpus=8, cohort="research"),
        TenantQueue(name="d", nominal_gpus=8, cohort="research"),
    )
    cohorts = (
        Cohort(name="org"),
        Cohort(name="ml", parent="org"),
        Cohort(name="research", parent="org"),
    )
    # a starts last, so its jobs lose the least work: the cheapest victims in org's subtree.
    td, gd, sd = _burst("d", 4)
    ta, ga, sa = _burst("a", 4, at=10.0)
    jobs = _jobs([*ta, *td, "c"], [*ga, *gd, 4], [*sa, *sd, 1_000.0])
    sim, borrowed = _run(jobs, queues, cohorts=cohorts)
    names = sim.jobs.tenant_names
    assert borrowed[:, names.index("a")].max() == 8 and borrowed[:, names.index("d")].max() == 8
    c_job = int(np.flatnonzero(sim.jobs.tenant == names.index("c"))[0])
    victims = {names[int(sim.jobs.tenant[v])] for _, v, p, _ in sim.preemption_log if p == c_job}
    assert victims == {"d"}


def test_priority_orders_jobs_inside_a_tenant() -> None:
    # One 32-GPU job holds the cluster; then a low- and a high-priority job of one tenant wait.
    jobs = _jobs(["a", "a", "a"], [32, 32, 32], [0.0, 1.0, 2.0], prio=[0, 0, 5])
    queues = (TenantQueue(name="a", nominal_gpus=32),)
    by_arrival, _ = _run(jobs, queues, "quota")
    by_priority, _ = _run(jobs, queues, "quota-priority")
    assert by_arrival.state.first_start_s[1] < by_arrival.state.first_start_s[2]
    assert by_priority.state.first_start_s[2] < by_priority.state.first_start_s[1]


def test_jain_index() -> None:
    assert jain_index(np.array([2.0, 2.0, 2.0])) == pytest.approx(1.0)
    assert jain_index(np.array([1.0, 0.0, 0.0, 0.0])) == pytest.approx(0.25)  # 1/n


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('[[queue]]\nname = "a"\nnominal_gpus = -1\n', "nominal_gpus"),
        ('[[queue]]\nname = "a"\nnominal_gpus = 8\nborrowing_limt = 2\n', "borrowing_limt"),
        ('[[queue]]\nname = "a"\n', "nominal_gpus"),
        ('[[queue]]\nname = "a"\nnominal_gpus = 8\npriority = "high"\n', "priority"),
        (
            '[[queue]]\nname = "a"\nnominal_gpus = 8\n[[queue]]\nname = "a"\nnominal_gpus = 1\n',
            "name",
        ),
        ("[[queue]\n", "quotas"),
        (
            '[[queue]]\nname = "a"\nnominal_gpus = 8\n[[cohort]]\nname = "x"\nparent = "y"\n',
            "parent",
        ),
        (
            '[[queue]]\nname = "a"\nnominal_gpus = 8\n[[cohort]]\nname = "x"\nparent = "y"\n'
            '[[cohort]]\nname = "y"\nparent = "x"\n',
            "parent",
        ),
        (
            '[[queue]]\nname = "a"\nnominal_gpus = 8\n[[cohort]]\nname = "x"\nlending_limit = -2\n',
            "lending_limit",
        ),
        ('[[queue]]\nname = "a"\nnominal_gpus = 8\n[[cohort]]\nname = "x"\nparnt = "y"\n', "parnt"),
        ('[[queue]]\nname = "a"\nnominal_gpus = 8\n[[cohort]]\nparent = "y"\n', "name"),
        ('[[queue]]\nname = "a"\nnominal_gpus = 8\n[[cohorts]]\nname = "x"\n', "cohorts"),
    ],
)
def test_bad_quota_file_names_the_field(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "q.toml"
    path.write_text(text)
    with pytest.raises(SpecError) as err:
        load_quotas(path)
    assert err.value.field == field


@pytest.mark.parametrize("name", ["quotas.toml", "quotas-tree.toml"])
def test_example_quota_files_load(name: str) -> None:
    path = Path(__file__).resolve().parents[2] / "docs" / "examples" / name
    quotas = load_quotas(path)
    assert {q.name for q in quotas.queues} == {f"tenant-{i}" for i in range(8)}
    if name == "quotas-tree.toml":
        assert {c.parent for c in quotas.cohorts} == {None, "org"}


@settings(max_examples=60, deadline=None)
@given(
    quota=st.lists(st.integers(0, 16), min_size=1, max_size=6),
    data=st.data(),
)
def test_one_level_tree_is_the_flat_cohort_rule(quota: list[int], data: st.DataObject) -> None:
    """With one cohort, ``borrowing_fits`` is Kueue's flat rule: the cohort's borrowed GPUs
    within what its queues lend of their unused quota, min(lending limit, nominal - own)."""
    n = len(quota)
    lend = data.draw(st.lists(st.integers(0, 16), min_size=n, max_size=n))
    own = [data.draw(st.integers(0, q)) for q in quota]
    borrowed = data.draw(st.lists(st.integers(0, 16), min_size=n, max_size=n))
    names = tuple(f"t{i}" for i in range(n))
    queues = [
        TenantQueue(name=t, nominal_gpus=q, lending_limit=lend_i)
        for t, q, lend_i in zip(names, quota, lend, strict=True)
    ]
    ten = build_tenancy(names, queues)
    milli = np.array(borrowed, dtype=np.int64) * GPU_MILLI
    held = np.array(own, dtype=np.int64) * GPU_MILLI + milli
    unused = [min(cap, q - o) for cap, q, o in zip(lend, quota, own, strict=True)]
    flat = sum(borrowed) <= sum(unused)
    assert borrowing_fits(ten, held, milli) == flat
