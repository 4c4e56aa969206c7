"""Build `GoodputInputs` from a model, a resolved cluster and a parallel plan."""

from __future__ import annotations

import math
from typing import Any

from scalewall.catalog.schema import ModelSpec
from scalewall.plan.plan import ParallelPlan
from scalewall.plan.topology import Cluster, leaf_span_gpus
from scalewall.reliability.api import GoodputInputs
from scalewall.reliability.checkpoint import CheckpointLayout
from scalewall.reliability.failures import JobFootprint
from scalewall.workload import param_count


def job_footprint(cluster: Cluster, gpus: int) -> JobFootprint:
    """The GPUs, nodes, NICs, leaves and spines a ``gpus``-GPU job touches on ``cluster``.

    Rail wiring: a rail group of ``nics_per_node`` leaves spans ``leaf_span_gpus``, so one leaf
    switch carries ``span / nics_per_node`` GPUs' traffic. Spines: a leaf sends half its radix
    up (divided by the tier's oversubscription), spread over spines of the same radix; upper
    tiers beyond the spine are not counted.
    """
    system, fabric, link = cluster.system, cluster.fabric, cluster.link
    span = leaf_span_gpus(system, fabric, link)
    rail = fabric.wiring == "rail-optimized"
    per_leaf = max(span // system.nics_per_node, 1) if rail else span
    leaves = math.ceil(gpus / per_leaf)
    radix = fabric.switch_radix or link.switch_radix
    oversub = fabric.oversubscription[0] if fabric.oversubscription else 1.0
    uplinks = leaves * (radix // 2) / oversub
    spines = 0 if gpus <= span else math.ceil(uplinks / radix)
    return JobFootprint(
        gpus=gpus,
        gpus_per_node=system.gpus_per_node,
        nics_per_node=system.nics_per_node,
        gpus_per_leaf=per_leaf,
        spines=spines,
        rail_optimized=rail,
        gpus_per_scale_up=system.scale_up_domain_gpus,
    )


def goodput_inputs(
    model: ModelSpec, cluster: Cluster, plan: ParallelPlan, *, run_s: float, **options: Any
) -> GoodputInputs:
    """Inputs for `goodput` of ``plan`` (its GPUs, not the whole cluster) on ``cluster``.

    ``options`` are the other `GoodputInputs` fields (storage, failure_rates, interval_s, step_s,
    spare_nodes, ...).
    """
    return sharded_inputs(
        model,
        cluster,
        gpus=plan.num_gpus,
        tp=plan.tp,
        pp=plan.pp,
        zero=plan.zero,
        run_s=run_s,
        **options,
    )


def sharded_inputs(
    model: ModelSpec,
    cluster: Cluster,
    *,
    gpus: int,
    tp: int,
    pp: int,
    zero: int,
    run_s: float,
    **options: Any,
) -> GoodputInputs:
    """`GoodputInputs` from the only plan fields goodput depends on besides the step time.

    The checkpoint is written by every rank when the optimizer state is sharded (ZeRO >= 1,
    Megatron's distributed optimizer), else by data-parallel replica 0 (``tp x pp`` ranks).
    """
    layout = CheckpointLayout(
        params=param_count(model),
        gpus=gpus,
        gpus_per_node=cluster.gpus_per_node,
        tp=tp,
        pp=pp,
        fully_parallel_save=zero >= 1,
        cluster_gpus=cluster.num_gpus,
        host_link_bytes_per_s_per_gpu=cluster.system.host_link_bytes_per_s_per_gpu,
    )
    return GoodputInputs(job=job_footprint(cluster, gpus), layout=layout, run_s=run_s, **options)
