"""GoodputInputs from a model, a resolved cluster and a plan."""

from __future__ import annotations

from scalewall import catalog
from scalewall.cluster import resolve_cluster
from scalewall.plan.plan import ParallelPlan
from scalewall.reliability import goodput
from scalewall.reliability.adapter import goodput_inputs, job_footprint
from scalewall.units import DAY_S
from scalewall.workload import param_count


def test_footprint_counts_nodes_and_spines() -> None:
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=4096)
    small = job_footprint(cluster, 8)
    big = job_footprint(cluster, 4096)
    assert small.nodes == 1 and small.spines == 0
    assert big.nodes == 512 and big.leaves > small.leaves and big.spines > 0


def test_inputs_follow_plan_sharding() -> None:
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=1024)
    model = catalog.model("llama3-70b")
    sharded = goodput_inputs(model, cluster, ParallelPlan(tp=8, pp=4, dp=32), run_s=DAY_S)
    replica0 = goodput_inputs(model, cluster, ParallelPlan(tp=8, pp=4, dp=32, zero=0), run_s=DAY_S)
    assert sharded.layout.params == param_count(model)
    assert sharded.layout.writers == 1024 and replica0.layout.writers == 32
    fast = goodput(sharded).checkpoint.write_s
    assert goodput(replica0).checkpoint.write_s > fast
