"""Plan-search speed: step-model evaluations per second on one core, the full Llama-3.1-405B
search on 16,384 H100 in process, a DeepSeek-V3 (MoE) search on 1,024 H100, a Nemotron 3
Super (Mamba-2 hybrid MoE) search on 1,024 H100, and the whole ``scalewall search`` command.

Run: python benchmarks/bench_search.py [--repeats N]
Prints the machine, the library versions and the figures; not a test.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

from scalewall import __version__
from scalewall.cluster import resolve_cluster
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.step import step_model
from scalewall.search import enumerate_plans, search
from scalewall.workload.user import model_from_args

MODEL, GPU, GPUS = "llama3.1-405b", "h100-sxm-80gb", 16384


def _median_s(fn: object, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
        f"{platform.system()} {platform.release()}"
    )
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, scalewall {__version__}")

    model = model_from_args(MODEL)
    cluster = resolve_cluster(gpu=GPU, gpus=GPUS)
    plans = enumerate_plans(model, GPUS, 8, 2048, 8192)
    eff, stack = Efficiency(), Stack()
    step_s = _median_s(lambda: step_model(model, cluster, plans, eff, stack), args.repeats)
    print(
        f"step model: {len(plans):,} plans in one call in {step_s:.3f} s = "
        f"{len(plans) / step_s:,.0f} plan evaluations/s (one core; numpy element-wise)"
    )

    cold_start = time.perf_counter()
    result = search(MODEL, gpu=GPU, gpus=GPUS)
    cold = time.perf_counter() - cold_start
    warm = _median_s(lambda: search(MODEL, gpu=GPU, gpus=GPUS), args.repeats)
    c = result.counts
    print(
        f"search {MODEL} on {GPUS} x {GPU}, 16M tokens/step: {c.enumerated:,} enumerated, "
        f"{c.pruned_memory:,} pruned (memory), {c.evaluated:,} evaluated; in process "
        f"{warm:.3f} s (median of {args.repeats}; first call {cold:.3f} s) = "
        f"{c.enumerated / warm:,.0f} plans/s enumerated and ranked"
    )

    moe, moe_gpus = "deepseek-v3", 1024
    search(moe, gpu=GPU, gpus=moe_gpus, seq_len=4096)
    moe_s = _median_s(
        lambda: search(moe, gpu=GPU, gpus=moe_gpus, seq_len=4096), max(args.repeats // 2, 1)
    )
    m = search(moe, gpu=GPU, gpus=moe_gpus, seq_len=4096).counts
    print(
        f"search {moe} on {moe_gpus} x {GPU} (EP, expert TP, both CP forms): {m.enumerated:,} "
        f"enumerated, {m.evaluated:,} evaluated; in process {moe_s:.2f} s"
    )

    hybrid = "nemotron-3-super-120b-a12b"
    search(hybrid, gpu=GPU, gpus=moe_gpus)
    hybrid_s = _median_s(lambda: search(hybrid, gpu=GPU, gpus=moe_gpus), max(args.repeats // 2, 1))
    h = search(hybrid, gpu=GPU, gpus=moe_gpus).counts
    print(
        f"search {hybrid} on {moe_gpus} x {GPU} (Mamba-2 hybrid, latent MoE): "
        f"{h.enumerated:,} enumerated, {h.evaluated:,} evaluated; in process {hybrid_s:.2f} s"
    )

    exe = shutil.which("scalewall")
    command = [exe] if exe else [sys.executable, "-m", "scalewall.cli.app"]
    argv = [*command, "search", "-m", MODEL, "--gpu", GPU, "--gpus", str(GPUS), "--json"]
    cli = _median_s(
        lambda: subprocess.run(argv, check=True, capture_output=True), max(args.repeats // 2, 1)
    )
    print(f"whole command `scalewall search -m {MODEL} --gpu {GPU} --gpus {GPUS}`: {cli:.2f} s")


if __name__ == "__main__":
    main()
