"""Jobs per CPU second of every queueing policy on a synthetic month with long queues.

python benchmarks/bench_sched_month.py [num_jobs] [num_nodes] [policy ...]

Defaults: 100,000 Seren-like jobs over 30 days on 128 nodes of 8 GPUs (1,024 GPUs, the
largest job's size, so whole-cluster jobs drain the cluster and queues grow long), BestFit
placement. Jobs get priority classes 0/1/2 (70/20/10%) so ``priority`` preempts. A policy is
timed on CPU seconds (the one-core figure; wall seconds grow when other work shares the core).
"""

from __future__ import annotations

import platform
import sys
import time

import numpy as np

from scalewall import sched

PRIORITY_CLASSES = (0, 1, 2)
PRIORITY_SHARES = (0.7, 0.2, 0.1)
"""Benchmark's own priority mix (an assumption: most jobs best effort, a tenth urgent)."""


def main() -> None:
    num_jobs = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    num_nodes = int(sys.argv[2]) if len(sys.argv) > 2 else 128
    policies = sys.argv[3:] or list(sched.queue_names())
    cluster = sched.synthetic_cluster(num_nodes=num_nodes, gpus_per_node=8)
    frame = sched.load_trace(f"synthetic:Seren:{num_jobs}:30", seed=0).frame
    rng = np.random.default_rng(1)
    frame["priority"] = rng.choice(PRIORITY_CLASSES, size=len(frame), p=PRIORITY_SHARES)
    print(f"{num_jobs} Seren-like jobs over 30 days, {cluster.total_gpus} GPUs, bestfit")
    for queue in policies:
        cpu_start = time.process_time()
        result = sched.simulate(cluster, frame, queue=queue, placement="bestfit", seed=0)
        cpu = time.process_time() - cpu_start
        print(
            f"{queue:>22}: {num_jobs / cpu:8.0f} jobs/s ({cpu:6.1f} s CPU, "
            f"finished {result.summary['finished']})",
            flush=True,
        )
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, python {platform.python_version()}, numpy {np.__version__}")


if __name__ == "__main__":
    main()
