"""Exploration throughput: points per second with local processes and with Ray on this machine,
Ray's per-task overhead, the points per task that keep it under 10%, and the throughput that
implies on N machines.

Run: python benchmarks/bench_explore.py [--cores-per-machine 16]
Prints the machine, the library versions and the figures; not a test.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import ray

from scalewall.explore import MAX_OVERHEAD_FRAC, ExploreSpec, build, explore, points_per_task
from scalewall.explore.points import run_point
from scalewall.sweep import ProcessExecutor
from scalewall.sweep.ray_executor import RayExecutor

# 1,024 cheap points (the Ray test's grid): 2 models x 2 accelerators x 64 sizes x 4 batch rules.
SPEC = ExploreSpec(
    models=("megatron-1.7b", "llama3-8b"),
    gpus=("h100-sxm-80gb", "a100-sxm-80gb"),
    sizes=tuple(range(1, 65)),
    batch=("seqs=256", "seqs=192", "per-gpu=2", "per-gpu=4"),
    seq_len=2048,
    max_cp=1,
    max_micro_batch=1,
    tp=(1,),
    pp=(1,),
)


def _rate(executor: object, chunk: int) -> tuple[float, int]:
    out = Path(tempfile.mkdtemp(prefix="bench-explore-"))
    try:
        start = time.perf_counter()
        result = explore(SPEC, out, executor=executor, chunk=chunk)  # type: ignore[arg-type]
        return result.points / (time.perf_counter() - start), result.points_per_task
    finally:
        shutil.rmtree(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cores-per-machine", type=int, default=16)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    config, points = build(SPEC)
    for p in points[:8]:
        run_point(config, p)  # warm-up (imports, caches)
    start = time.perf_counter()
    for p in points:
        run_point(config, p)
    point_s = (time.perf_counter() - start) / len(points)
    local_rate, local_chunk = _rate(ProcessExecutor(), 0)
    ray.init(num_cpus=cores, log_to_driver=False, logging_level="ERROR")
    executor = RayExecutor()
    overhead_s = executor.task_overhead_s(samples=50)
    chunk = points_per_task(overhead_s, point_s, 10**9, 1)  # the overhead bound alone
    ray_rate, _ = _rate(RayExecutor(chunk=chunk), chunk)
    ray.shutdown()
    share = overhead_s / (overhead_s + chunk * point_s)
    per_core = (1.0 - share) / point_s
    print(f"machine: {platform.processor() or platform.machine()}, {cores} cores; "
          f"Python {sys.version.split()[0]}, ray {ray.__version__}")  # fmt: skip
    print(f"grid: {len(points)} points; one point (search + cost) {point_s * 1e3:.2f} ms on one "
          f"core = {1 / point_s:,.0f} points/s")  # fmt: skip
    print(f"local processes ({cores}): {local_rate:,.0f} points/s ({local_chunk} points/task)")
    print(f"Ray local instance ({cores} CPUs): {ray_rate:,.0f} points/s ({chunk} points/task)")
    print(f"Ray per-task overhead: {overhead_s * 1e3:.2f} ms (median empty-task round trip)")
    print(f"points per task for overhead < {MAX_OVERHEAD_FRAC:.0%}: {chunk} "
          f"(overhead share {share:.1%})")  # fmt: skip
    for machines in (1, 4, 16, 64, 256):
        n = machines * args.cores_per_machine
        print(f"expected on {machines:>3} x {args.cores_per_machine} cores: "
              f"{n * per_core:,.0f} points/s")  # fmt: skip


if __name__ == "__main__":
    main()
