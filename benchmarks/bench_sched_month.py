"""Jobs per CPU second of every queueing policy on a synthetic month with long queues.

python benchmarks/bench_sched_month.py [num_jobs] [num_nodes] [policy ...] [--budget-s S]
    [--topology-level LEVEL [--topology-required]]

Defaults: 100,000 Seren-like jobs over 30 days on 128 nodes of 8 GPUs (1,024 GPUs, the
largest job's size, so whole-cluster jobs drain the cluster and queues grow long), BestFit
placement, every registered queueing policy. Jobs get priority classes 0/1/2 (70/20/10%) so
``priority`` preempts. A policy is timed on CPU seconds (the one-core figure; wall seconds
grow when other work shares the core). A policy still running after ``--budget-s`` CPU
seconds (300) is stopped at its next time-series sample and its rate is printed over the jobs
it finished by then, marked as such. ``--topology-level`` gives every job of whole nodes a
worker shape of one 8-GPU worker per node and that (preferred, or required) topology level,
to time the shaped-gang placement path.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from scalewall import sched
from scalewall.sched.engine import SimConfig, Simulation
from scalewall.sched.jobs import job_table
from scalewall.sched.metrics import collect

PRIORITY_CLASSES = (0, 1, 2)
PRIORITY_SHARES = (0.7, 0.2, 0.1)
"""Benchmark's own priority mix (an assumption: most jobs best effort, a tenth urgent)."""

DAYS = 30
NODE_GPUS = 8


class _OverBudget(Exception):
    """The run used its CPU budget."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("num_jobs", nargs="?", type=int, default=100_000)
    parser.add_argument("num_nodes", nargs="?", type=int, default=128)
    parser.add_argument("policies", nargs="*", default=list(sched.queue_names()))
    parser.add_argument("--budget-s", type=float, default=300.0)
    parser.add_argument(
        "--topology-level", default="", choices=("", "node", "domain", "rack", "pod")
    )
    parser.add_argument("--topology-required", action="store_true")
    args = parser.parse_args()
    cluster = sched.synthetic_cluster(num_nodes=args.num_nodes, gpus_per_node=NODE_GPUS)
    frame = sched.load_trace(f"synthetic:Seren:{args.num_jobs}:{DAYS}", seed=0).frame
    rng = np.random.default_rng(1)
    frame["priority"] = rng.choice(PRIORITY_CLASSES, size=len(frame), p=PRIORITY_SHARES)
    shape = ""
    if args.topology_level:
        whole = (frame["num_gpu"] >= NODE_GPUS) & (frame["num_gpu"] % NODE_GPUS == 0)
        frame["gpus_per_worker"] = np.where(whole, NODE_GPUS, 0)
        frame["topology_level"] = np.where(whole, args.topology_level, "")
        frame["topology_required"] = whole & args.topology_required
        kind = "required" if args.topology_required else "preferred"
        shape = f", {int(whole.sum())} node-worker gangs with {kind} level {args.topology_level}"
    print(
        f"{args.num_jobs} Seren-like jobs over {DAYS} days, {cluster.total_gpus} GPUs, "
        f"bestfit{shape}"
    )
    for queue in args.policies:
        config = SimConfig(queue=queue, placement="bestfit", seed=0)
        cpu_start = time.process_time()

        def check(now_s: float, start: float = cpu_start) -> None:
            if time.process_time() - start > args.budget_s:
                raise _OverBudget

        # Timed as ``sched.simulate`` runs: the job table, the replay, the results.
        sim = Simulation(cluster, job_table(frame), config, progress=check)
        note = ""
        try:
            sim.run()
            collect(sim)
        except _OverBudget:
            note = f", stopped at day {sim.now / 86_400:.1f} of {DAYS}: over the CPU budget"
        cpu = time.process_time() - cpu_start
        finished = int(np.isfinite(sim.state.end_s).sum())
        print(
            f"{queue:>22}: {finished / cpu:8.0f} jobs/s ({cpu:6.1f} s CPU, "
            f"finished {finished}{note})",
            flush=True,
        )
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, python {platform.python_version()}, numpy {np.__version__}")


if __name__ == "__main__":
    main()
