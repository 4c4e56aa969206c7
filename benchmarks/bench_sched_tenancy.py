"""Jobs per CPU second of the quota policies with hierarchical queues and per-GPU-type quotas
on a synthetic month with long queues.

python benchmarks/bench_sched_tenancy.py [num_jobs] [num_nodes] [policy ...]

As ``bench_sched_month.py`` (Seren-like jobs over 30 days on 128 nodes of 8 GPUs, BestFit,
priority classes 0/1/2), with eight tenants, an eighth of the GPUs each: ``tree`` puts them in two
cohorts under one root; ``flavors`` gives every tenant half of that of each of two GPU types on a
cluster of half H100, half A100 nodes (jobs over 512 GPUs, more than one type holds, left out).
"""

from __future__ import annotations

import dataclasses
import platform
import sys
import time

import numpy as np

from scalewall import sched
from scalewall.sched.cluster import SyntheticClusterSpec, cluster_from_nodes, synthetic_nodes

PRIORITY_CLASSES = (0, 1, 2)
PRIORITY_SHARES = (0.7, 0.2, 0.1)
"""As ``bench_sched_month.py``: most jobs best effort, a tenth urgent (an assumption)."""
TENANTS = tuple(f"tenant-{i}" for i in range(8))


def _tree(share: int) -> sched.SimConfig:
    queues = tuple(
        sched.TenantQueue(name=t, nominal_gpus=share, cohort="ml" if i < 4 else "research")
        for i, t in enumerate(TENANTS)
    )
    cohorts = (
        sched.Cohort(name="org"),
        sched.Cohort(name="ml", parent="org"),
        sched.Cohort(name="research", parent="org"),
    )
    return sched.SimConfig(tenant_queues=queues, cohorts=cohorts)


def _flavors(share: int) -> sched.SimConfig:
    split = (
        sched.FlavorQuota(name="H100", nominal_gpus=share / 2),
        sched.FlavorQuota(name="A100", nominal_gpus=share / 2),
    )
    queues = tuple(sched.TenantQueue(name=t, nominal_gpus=share, flavors=split) for t in TENANTS)
    return sched.SimConfig(tenant_queues=queues)


def main() -> None:
    num_jobs = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    num_nodes = int(sys.argv[2]) if len(sys.argv) > 2 else 128
    policies = sys.argv[3:] or ["quota", "quota-priority"]
    frame = sched.load_trace(f"synthetic:Seren:{num_jobs}:30", seed=0).frame
    rng = np.random.default_rng(1)
    frame["priority"] = rng.choice(PRIORITY_CLASSES, size=len(frame), p=PRIORITY_SHARES)
    nodes = synthetic_nodes(SyntheticClusterSpec(num_nodes=num_nodes, gpus_per_node=8))
    mixed = cluster_from_nodes(
        [dataclasses.replace(n, gpu_model="A100" if i % 2 else "H100") for i, n in enumerate(nodes)]
    )
    share = num_nodes * 8 // len(TENANTS)  # the cluster split evenly
    setups = {
        "tree": (cluster_from_nodes(nodes), _tree(share), frame),
        "flavors": (mixed, _flavors(share), frame[frame["num_gpu"] <= num_nodes * 4]),
    }
    print(f"{num_jobs} Seren-like jobs over 30 days, {num_nodes * 8} GPUs, bestfit")
    for name, (cluster, config, jobs) in setups.items():
        for queue in policies:
            cpu_start = time.process_time()
            result = sched.simulate(
                cluster, jobs, queue=queue, placement="bestfit", seed=0, config=config
            )
            cpu = time.process_time() - cpu_start
            print(
                f"{name:>8} {queue:>15}: {len(jobs) / cpu:8.0f} jobs/s ({cpu:6.1f} s CPU, "
                f"finished {result.summary['finished']} of {len(jobs)})",
                flush=True,
            )
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, python {platform.python_version()}, numpy {np.__version__}")


if __name__ == "__main__":
    main()
