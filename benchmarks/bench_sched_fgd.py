"""Time the FGD experiment on openb: one FGD run (one seed), or ``--all``: six policies x 10 seeds.

python benchmarks/bench_sched_fgd.py [--all]
"""

from __future__ import annotations

import platform
import sys
import time

import numpy as np

from scalewall import sched
from scalewall.sched.experiments import FGD_PAPER_POLICIES, FgdExperimentConfig, run_fgd_once
from scalewall.sched.jobs import job_table


def main() -> None:
    cluster = sched.load_cluster("openb")
    jobs = job_table(sched.load_trace("openb").frame)
    config = FgdExperimentConfig()
    runs = (
        [(p, s) for p in FGD_PAPER_POLICIES for s in config.seeds]
        if "--all" in sys.argv
        else [("fgd", 0)]
    )
    start, cpu_start = time.perf_counter(), time.process_time()
    for policy, seed in runs:
        run_fgd_once(cluster, jobs, policy, seed, config)
    took, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    # CPU seconds are the one-core figure; wall seconds grow when other work shares the core.
    print(
        f"{len(runs)} run(s) ({cluster.total_gpus} GPUs, openb default): {took:.2f} s wall, "
        f"{cpu:.2f} s CPU"
    )
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, python {platform.python_version()}, numpy {np.__version__}")


if __name__ == "__main__":
    main()
