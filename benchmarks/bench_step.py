"""Step-model speed: estimates per second for a batch of 10^5 plans, and one estimate's latency.

Targets: >= 10^6 plans per second on one core (the project's standing target); <= 1 ms per
estimate in process. Also printed: the rate on a plan search's own batch (the Llama-3.1-405B
plans that fit on 16,384 H100, all distinct). Times are CPU seconds of this process
(``time.process_time``), so other work on the machine does not count against it. Prints the
figures with the machine and library versions.

    python benchmarks/bench_step.py
"""

from __future__ import annotations

import os
import platform
import time

import numpy as np
import scipy

from scalewall import catalog
from scalewall.api import estimate
from scalewall.cluster import resolve_cluster
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import PlanBatch
from scalewall.perf.memory import memory_model
from scalewall.perf.step import step_model
from scalewall.plan.plan import ParallelPlan
from scalewall.search.space import enumerate_plans

BATCH = 100_000


def main() -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    model = catalog.model("llama3-70b")
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=1024)
    plans = [
        ParallelPlan(
            tp=tp,
            pp=pp,
            dp=1024 // (tp * pp),
            vpp=vpp,
            micro_batch=mb,
            global_batch=1024,
            seq_len=8192,
            recompute=rc,
            zero=z,
        )
        for tp in (2, 4, 8)
        for pp in (1, 2, 4, 8)
        for vpp in (1, 2)
        for mb in (1, 2)
        for rc in ("none", "selective", "full")
        for z in (0, 1, 3)
        if not (vpp > 1 and pp == 1)
    ]
    base = PlanBatch.from_plans(model, plans)
    batch = base.take(np.arange(BATCH) % len(base))
    eff, stack = Efficiency(), Stack()
    step_model(model, cluster, batch, eff, stack)
    start = time.process_time()
    step_model(model, cluster, batch, eff, stack)
    batch_s = time.process_time() - start

    # A search's own batch: every plan of Llama-3.1-405B on 16,384 H100 that fits, all distinct
    # (the batch above repeats 378 plans, so it shares more layer configurations).
    big = catalog.model("llama3.1-405b")
    big_cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=16384)
    space = enumerate_plans(big, 16384, big_cluster.system.scale_up_domain_gpus, 2048, 8192)
    _, need = memory_model(
        big, space, eff, stack, space.global_batch / (space.dp * space.micro_batch)
    )
    search_batch = space.take(np.flatnonzero(need <= big_cluster.accelerator.hbm_capacity_bytes))
    step_model(big, big_cluster, search_batch, eff, stack)
    start = time.process_time()
    step_model(big, big_cluster, search_batch, eff, stack)
    search_s = time.process_time() - start

    one = plans[0]
    estimate(model, cluster, one)
    runs = 500
    start = time.process_time()
    for _ in range(runs):
        estimate(model, cluster, one)
    single_ms = (time.process_time() - start) / runs * 1e3

    print(f"machine: {platform.machine()} {platform.processor() or ''} cores={os.cpu_count()}")
    print(f"python {platform.python_version()} numpy {np.__version__} scipy {scipy.__version__}")
    print(
        f"batch of {BATCH} plans: {batch_s:.3f} s = {BATCH / batch_s:,.0f} estimates/s "
        f"(target >= 1,000,000)"
    )
    print(
        f"405B search batch of {len(search_batch)} plans: {search_s:.3f} s = "
        f"{len(search_batch) / search_s:,.0f} estimates/s"
    )
    print(f"one estimate (scalewall.api.estimate): {single_ms:.3f} ms (target <= 1 ms)")


if __name__ == "__main__":
    main()
