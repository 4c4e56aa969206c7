"""Per-GPU-type quotas (Kueue ResourceFlavors): each flavor's quota and limits hold at every
event; flexible jobs take the queue's flavors in order; constrained jobs only theirs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scalewall.errors import SpecError
from scalewall.sched.cluster import SyntheticClusterSpec, cluster_from_nodes, synthetic_nodes
from scalewall.sched.duration import TierSlowdownModel
from scalewall.sched.engine import SimConfig, Simulation
from scalewall.sched.jobs import job_table
from scalewall.sched.metrics import collect
from scalewall.sched.tenancy import FlavorQuota, TenantQueue, load_quotas


def _cluster():  # type: ignore[no-untyped-def]
    """Two A100 nodes and two H100 nodes of 8 GPUs."""
    nodes = synthetic_nodes(SyntheticClusterSpec(num_nodes=4, gpus_per_node=8))
    models = ["A100", "A100", "H100", "H100"]
    return cluster_from_nodes(
        [dataclasses.replace(n, gpu_model=m) for n, m in zip(nodes, models, strict=True)]
    )


def _jobs(tenant: list[str], submit: list[float], models: list[str]):  # type: ignore[no-untyped-def]
    n = len(tenant)
    run = [3_000.0 + 100.0 * i for i in range(n)]
    return job_table(
        pd.DataFrame(
            {
                "job_id": [f"j{i}" for i in range(n)],
                "submit_s": submit,
                "run_s": run,
                "num_gpu": 4,
                "gpu_milli": 1000,
                "cpu_milli": 4000,
                "memory_bytes": 0,
                "gpu_models": models,
                "priority": 0,
                "tenant": tenant,
                "est_run_s": run,
            }
        )
    )


def _run(jobs, queues: tuple[TenantQueue, ...]):  # type: ignore[no-untyped-def]
    """Run with every invariant checked; (sim, held, borrowed) per event, GPUs by
    (event, tenant, flavor)."""
    config = SimConfig(queue="quota", check_invariants=True, tenant_queues=queues)
    sim = Simulation(_cluster(), jobs, config, duration=TierSlowdownModel(slowdown_per_tier_frac=0))
    held: list[np.ndarray] = []
    borrowed: list[np.ndarray] = []
    check = sim._check

    def watched() -> None:
        check()
        held.append(sim.tenant_flavor_gpu_milli.copy() / 1000)
        borrowed.append(sim.tenant_flavor_borrowed_gpu_milli.copy() / 1000)

    sim._check = watched  # type: ignore[method-assign]
    sim.run()
    return sim, np.array(held), np.array(borrowed)


def _queue(name: str, a100: float, h100: float, **limits: float) -> TenantQueue:
    return TenantQueue(
        name=name,
        nominal_gpus=a100 + h100,
        flavors=(
            FlavorQuota(name="A100", nominal_gpus=a100, borrowing_limit=limits.get("a100_bl", 0)),
            FlavorQuota(name="H100", nominal_gpus=h100, borrowing_limit=limits.get("h100_bl", 0)),
        ),
    )


@pytest.mark.parametrize("order", [("A100", "H100"), ("H100", "A100")])
def test_flexible_jobs_fill_the_queues_flavors_in_order_within_each_quota(
    order: tuple[str, str],
) -> None:
    jobs = _jobs(["a"] * 8, [float(i) for i in range(8)], [""] * 8)
    a_queue = _queue("a", 8, 8)
    a_queue = dataclasses.replace(
        a_queue, flavors=tuple(sorted(a_queue.flavors, key=lambda f: order.index(f.name)))
    )
    sim, held, borrowed = _run(jobs, (a_queue, _queue("b", 8, 8)))
    a = sim.jobs.tenant_names.index("a")
    first, second = (sim.tenancy.flavors.index(m) for m in order)
    assert held[:, a, first].max() == 8 and held[:, a, second].max() == 8  # each quota binds
    assert borrowed.max() == 0  # borrowing limits of 0 per flavor
    # The first two jobs take the queue's first flavor, the next two its second.
    full = held[:, a].sum(axis=1)
    assert held[np.argmax(full >= 8), a, first] == 8
    assert held[np.argmax(full >= 16), a, second] == 8
    assert collect(sim).jobs["finished"].all()


def test_constrained_jobs_borrow_only_their_flavor() -> None:
    jobs = _jobs(["a"] * 6, [float(i) for i in range(6)], ["H100"] * 6)
    queues = (_queue("a", 8, 8, h100_bl=8, a100_bl=16), _queue("b", 8, 8))
    sim, held, borrowed = _run(jobs, queues)
    a = sim.jobs.tenant_names.index("a")
    assert held[:, a, 0].max() == 0  # never on A100, though a's A100 quota is free
    assert held[:, a, 1].max() == 16 and borrowed[:, a, 1].max() == 8  # b's idle H100 8
    assert collect(sim).jobs["finished"].all()


def test_reclaim_preempts_borrowers_of_the_same_flavor() -> None:
    """a borrows b's H100 quota and holds its own A100; b's H100 job reclaims from a's
    borrowed H100 jobs, never from a's A100 ones."""
    jobs = _jobs(
        ["a"] * 6 + ["b"],
        [*[float(i) for i in range(6)], 1_000.0],
        ["H100"] * 4 + ["A100"] * 2 + ["H100"],
    )
    queues = (_queue("a", 8, 8, h100_bl=8), _queue("b", 8, 8))
    sim, _, borrowed = _run(jobs, queues)
    a = sim.jobs.tenant_names.index("a")
    assert borrowed[:, a, 1].max() == 8
    b_job = 6
    victims = [v for _, v, p, _ in sim.preemption_log if p == b_job]
    assert victims and all(sim.jobs.gpu_models[v] == "H100" for v in victims)
    assert sim.state.first_start_s[b_job] == pytest.approx(1_000.0)


FLAVORED = """
[[queue]]
name = "a"
[[queue.flavor]]
name = "A100"
nominal_gpus = 8
[[queue.flavor]]
name = "H100"
nominal_gpus = 4
lending_limit = 2
"""


def test_quota_file_with_flavors(tmp_path: Path) -> None:
    path = tmp_path / "q.toml"
    path.write_text(FLAVORED)
    (queue,) = load_quotas(path).queues
    assert queue.nominal_gpus == 12
    assert [(f.name, f.nominal_gpus, f.lending_limit) for f in queue.flavors] == [
        ("A100", 8, float("inf")),
        ("H100", 4, 2),
    ]


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (FLAVORED.replace('name = "A100"\nnominal_gpus = 8', 'name = "A100"'), "nominal_gpus"),
        (FLAVORED.replace("lending_limit = 2", "lending_limt = 2"), "lending_limt"),
        (FLAVORED.replace('name = "a"\n', 'name = "a"\nnominal_gpus = 20\n'), "nominal_gpus"),
        (FLAVORED.replace('"H100"', '"A100"'), "flavor"),
        (FLAVORED.replace("nominal_gpus = 4", "nominal_gpus = -4"), "nominal_gpus"),
    ],
)
def test_bad_flavor_tables_name_the_field(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "q.toml"
    path.write_text(text)
    with pytest.raises(SpecError) as err:
        load_quotas(path)
    assert err.value.field == field


def test_unknown_flavor_and_bare_queue_are_errors() -> None:
    jobs = _jobs(["a"], [0.0], [""])
    bad = (
        TenantQueue(name="a", nominal_gpus=8, flavors=(FlavorQuota(name="B200", nominal_gpus=8),)),
    )
    with pytest.raises(SpecError, match="B200") as err:
        Simulation(_cluster(), jobs, SimConfig(queue="quota", tenant_queues=bad))
    assert err.value.field == "flavor"
    bare = (_queue("a", 8, 8), TenantQueue(name="b", nominal_gpus=8))
    with pytest.raises(SpecError) as err:
        Simulation(_cluster(), jobs, SimConfig(queue="quota", tenant_queues=bare))
    assert err.value.field == "flavor"
