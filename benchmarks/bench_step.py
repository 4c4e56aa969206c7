"""Step-model speed: estimates per second for a batch of 10^5 plans, and one estimate's latency.

Targets: >= 10^6 plans per second on one core (the project's standing target); <= 1 ms per
estimate in process. Times are CPU seconds of this process (``time.process_time``), so other
work on the machine does not count against it. Prints the figures with the machine and library
versions.

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
from scalewall.perf.step import step_model
from scalewall.plan.plan import ParallelPlan

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
    print(f"one estimate (scalewall.api.estimate): {single_ms:.3f} ms (target <= 1 ms)")


if __name__ == "__main__":
    main()
