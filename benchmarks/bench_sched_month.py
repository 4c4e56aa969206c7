"""Time a synthetic month: N jobs (default 1,000,000, Seren-like) on a 100,000-GPU cluster.

python benchmarks/bench_sched_month.py [num_jobs]
"""

from __future__ import annotations

import platform
import sys
import time

import numpy as np

from scalewall import sched


def main() -> None:
    num_jobs = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    cluster = sched.synthetic_cluster(num_nodes=12_500, gpus_per_node=8)
    frame = sched.load_trace(f"synthetic:Seren:{num_jobs}:30", seed=0).frame
    start, cpu_start = time.perf_counter(), time.process_time()
    result = sched.simulate(cluster, frame, queue="fifo", placement="bestfit", seed=0)
    took, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    # CPU seconds are the one-core figure; wall seconds grow when other work shares the core.
    print(
        f"{num_jobs} jobs, {cluster.total_gpus} GPUs, fifo+bestfit: {took:.1f} s wall, "
        f"{cpu:.1f} s CPU (finished {result.summary['finished']})"
    )
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, python {platform.python_version()}, numpy {np.__version__}")


if __name__ == "__main__":
    main()
