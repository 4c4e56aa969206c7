"""Monte Carlo goodput speed: simulated runs per second on this machine.

Run: python benchmarks/bench_goodput_mc.py [--runs N]
Prints the machine, the library versions and the figure; not a test.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np
import scipy

from scalewall.reliability import (
    CheckpointLayout,
    GoodputInputs,
    JobFootprint,
    goodput_model,
    simulate,
)
from scalewall.units import DAY_S


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--gpus", type=int, default=16_384)
    args = parser.parse_args()
    gpus = args.gpus
    inputs = GoodputInputs(
        job=JobFootprint(gpus=gpus, gpus_per_node=8, nics_per_node=8, gpus_per_leaf=16),
        layout=CheckpointLayout(params=405e9, gpus=gpus, gpus_per_node=8, tp=8, pp=16),
        run_s=54 * DAY_S,
    )
    model = goodput_model(inputs)[0]
    simulate(model, interval_s=600.0, run_s=inputs.run_s, runs=100, seed=0)  # warm-up
    start = time.perf_counter()
    result = simulate(model, interval_s=600.0, run_s=inputs.run_s, runs=args.runs, seed=0)
    elapsed = time.perf_counter() - start
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
        f"{platform.system()} {platform.release()}"
    )
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, scipy {scipy.__version__}")
    print(
        f"job: Llama 3 405B shape on {gpus} GPUs, 54-day runs, "
        f"{result.interruptions_mean:.0f} interruptions per run"
    )
    print(
        f"monte carlo: {args.runs} runs in {elapsed:.2f} s "
        f"({args.runs / elapsed:,.0f} runs/s); goodput {result.goodput_frac:.4f} "
        f"CI [{result.goodput_ci[0]:.4f}, {result.goodput_ci[1]:.4f}], "
        f"analytic {model.goodput_frac(600.0):.4f}"
    )


if __name__ == "__main__":
    main()
