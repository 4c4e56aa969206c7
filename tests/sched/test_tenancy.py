"""Tenant queues: borrowing and lending limits hold at every event; priority inside a tenant."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scalewall.errors import SpecError
from scalewall.sched.cluster import GPU_MILLI, SyntheticClusterSpec, synthetic_cluster
from scalewall.sched.duration import TierSlowdownModel
from scalewall.sched.engine import SimConfig, Simulation
from scalewall.sched.jobs import job_table
from scalewall.sched.metrics import collect
from scalewall.sched.tenancy import TenantQueue, jain_index, load_quotas


def _jobs(tenant: list[str], gpus: list[int], submit: list[float], prio: list[int] | None = None):  # type: ignore[no-untyped-def]
    n = len(tenant)
    run = [3_000.0 + 100.0 * i for i in range(n)]
    return job_table(
        pd.DataFrame(
            {
                "job_id": [f"j{i}" for i in range(n)],
                "submit_s": submit,
                "run_s": run,
                "num_gpu": gpus,
                "gpu_milli": 1000,
                "cpu_milli": [1000 * g for g in gpus],
                "memory_bytes": 0,
                "gpu_models": "",
                "priority": prio or [0] * n,
                "tenant": tenant,
                "est_run_s": run,
            }
        )
    )


def _run(jobs, queues: tuple[TenantQueue, ...], queue: str = "quota"):  # type: ignore[no-untyped-def]
    """Run on 4 x 8 GPUs, recording each tenant's borrowed GPUs after every event."""
    cluster = synthetic_cluster(SyntheticClusterSpec(num_nodes=4, gpus_per_node=8))
    config = SimConfig(queue=queue, check_invariants=True, tenant_queues=queues)
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
    ],
)
def test_bad_quota_file_names_the_field(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "q.toml"
    path.write_text(text)
    with pytest.raises(SpecError) as err:
        load_quotas(path)
    assert err.value.field == field
