"""FGD fragmentation measure on hand examples, and the FGD experiment on the real openb trace."""

from __future__ import annotations

import io
from importlib import resources

import numpy as np
import pandas as pd
import pytest

from scalewall.sched import api
from scalewall.sched.experiments import FgdExperimentConfig, fgd_experiment, fgd_summary
from scalewall.sched.jobs import job_table
from scalewall.sched.policies.fgd import (
    TargetWorkload,
    node_fragmentation,
    node_score,
    target_workload,
)


def _target(cpu: list[int], num: list[int], milli: list[int], w: list[float]) -> TargetWorkload:
    levels, level_of = np.unique(np.array(milli), return_inverse=True)
    return TargetWorkload(
        cpu_milli=np.array(cpu),
        num_gpu=np.array(num),
        gpu_milli=np.array(milli),
        model_mask=np.array([1] * len(cpu)),
        weight=np.array(w),
        levels=levels,
        level_of=level_of,
    )


def test_fragmentation_hand_example() -> None:
    # Node: 4 GPUs free 1000, 500, 200, 0; 8 cores free. Typical: half-GPU pod (p=0.5),
    # one-GPU pod (p=0.5), both 1 core.
    free = np.array([[1000, 500, 200, 0]])
    target = _target([1000, 1000], [1, 1], [500, 1000], [0.5, 0.5])
    # half-GPU pod can't use the 200 -> 200; whole-GPU pod can't use 500 + 200 -> 700.
    got = node_fragmentation(free, np.array([8000]), np.array([1]), target)
    assert got[0] == pytest.approx(0.5 * 200 + 0.5 * 700)
    # Without CPU every GPU is stranded: F = total free = 1700.
    got = node_fragmentation(free, np.array([0]), np.array([1]), target)
    assert got[0] == pytest.approx(1700)


def test_fgd_beats_dotprod_on_openb_and_is_repeatable() -> None:
    cluster = api.load_cluster("openb")
    jobs = job_table(api.load_trace("openb").frame)
    config = FgdExperimentConfig(max_demand_frac=1.0, seeds=(0,))
    runs = fgd_experiment(cluster, jobs, policies=("dotprod", "fgd"), config=config)
    summary = fgd_summary(runs, cluster.total_gpus)
    # Weng et al. (ATC'23) report up to 49% fewer unallocated GPUs; one seed gives ~54%.
    assert 0.30 < summary["reduction_frac"] < 0.60  # type: ignore[operator]
    again = fgd_experiment(cluster, jobs, policies=("fgd",), config=config)
    assert again.equals(runs[runs["policy"] == "fgd"].reset_index(drop=True))


def test_allocation_never_exceeds_demand() -> None:
    cluster = api.load_cluster("openb")
    jobs = job_table(api.load_trace("openb:gpushare100").frame)
    config = FgdExperimentConfig(max_demand_frac=0.3, seeds=(1,))
    runs = fgd_experiment(
        cluster, jobs, policies=("random", "clustering", "packing", "bestfit"), config=config
    )
    # A step is recorded after the pod that crosses it, so arrived demand may pass the step by
    # up to one pod (at most 8 GPUs of 6,212).
    assert (runs["alloc_frac"] <= runs["demand_frac"] + 8 / cluster.total_gpus).all()
    assert (runs.groupby("policy")["alloc_frac"].diff().dropna() >= -1e-12).all()


def test_fragmentation_of_a_state_does_not_depend_on_its_batch() -> None:
    # Equal node states must score equal bit for bit whatever else is scored with them, so ties
    # between nodes go to the run's node order and not to rounding noise.
    cluster = api.load_cluster("openb")
    jobs = job_table(api.load_trace("openb").frame)
    target = target_workload(jobs, cluster, popularity_frac=1.0)
    rng = np.random.default_rng(3)
    free = np.sort(rng.choice([0, 50, 330, 500, 1000], size=(257, 8)), axis=1)
    cpu = rng.integers(0, 96_000, size=257)
    bit = np.ones(257, dtype=np.int64)
    batched = node_fragmentation(free, cpu, bit, target)
    one_by_one = [
        node_fragmentation(free[i : i + 1], cpu[i : i + 1], bit[:1], target)[0] for i in range(257)
    ]
    assert batched.tolist() == one_by_one


def test_node_score_is_the_integer_plugin_score() -> None:
    # floor(100 * sigmoid(-growth / 1 GPU)) as a cost: no growth scores 50, growths within one
    # step tie, big cuts saturate, and a larger growth never scores better.
    growth = np.array([0.0, -10.0, 10.0, 30.0, 45.0, -5000.0, -1e6, 5000.0, 1e9])
    assert node_score(growth).tolist() == [-50, -50, -49, -49, -48, -99, -100, 0, 0]
    ladder = np.linspace(-20000.0, 20000.0, 4001)
    assert np.all(np.diff(node_score(ladder)) >= 0)


def test_fgd_ahead_of_dotprod_on_gpu_sharing() -> None:
    # 100% GPU-sharing pods (openb gpushare100), one seed, up to 100% demand: FGD allocated
    # 86.5% and DotProd 81.5% here; ranking exact growths, FGD had 81.7%, and with ties left
    # to rounding noise 69.7%.
    cluster = api.load_cluster("openb")
    jobs = job_table(api.load_trace("openb:gpushare100").frame)
    config = FgdExperimentConfig(max_demand_frac=1.0, seeds=(0,))
    runs = fgd_experiment(cluster, jobs, policies=("dotprod", "fgd"), config=config)
    alloc = runs[runs["demand_frac"] == 1.0].set_index("policy")["alloc_frac"]
    assert alloc["fgd"] >= alloc["dotprod"] + 0.03


def _authors_alloc() -> dict[tuple[str, str], float]:
    path = resources.files("scalewall.sched") / "data" / "openb" / "authors_alloc_at_100.csv"
    table = pd.read_csv(io.StringIO(path.read_text()))
    return {(r.workload, r.policy): r.alloc_pct / 100 for r in table.itertuples()}


@pytest.mark.parametrize("workload", ["default", "gpuspec33"])
def test_dotprod_and_clustering_reproduce_the_authors(workload: str) -> None:
    # The authors' DotProd (normalised by the largest node) and GpuClustering ("share" vs
    # "N-gpu" affinity) at 100% demand. One seed here against their 10-seed mean: seeds spread
    # by about +-0.3 points, so 1 point is the tolerance, not a loosened one.
    cluster = api.load_cluster("openb")
    trace = "openb" if workload == "default" else f"openb:{workload}"
    jobs = job_table(api.load_trace(trace).frame)
    config = FgdExperimentConfig(max_demand_frac=1.0, seeds=(0,))
    runs = fgd_experiment(cluster, jobs, policies=("dotprod", "clustering"), config=config)
    alloc = runs[runs["demand_frac"] == 1.0].set_index("policy")["alloc_frac"]
    authors = _authors_alloc()
    for policy in ("dotprod", "clustering"):
        assert alloc[policy] == pytest.approx(authors[(workload, policy)], abs=0.01), policy
