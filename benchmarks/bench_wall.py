"""Scale-wall sweep time: the default ``wall()`` (Llama-3-70B on H100, 8..32,768 GPUs) serial and
with local processes, from scratch, and a rerun that reuses the results file.

Run: python benchmarks/bench_wall.py
Prints the machine, the library versions, the figures and the knee; not a test.
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from scalewall import __version__
from scalewall.sweep import ProcessExecutor, SerialExecutor, wall


def main() -> None:
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
        f"{platform.system()} {platform.release()}"
    )
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, scalewall {__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, executor in (("serial", SerialExecutor()), ("processes", ProcessExecutor())):
            path = Path(tmp) / f"{name}.jsonl"
            start = time.perf_counter()
            result = wall(executor=executor, results_path=path)
            print(
                f"default wall, {name}: {time.perf_counter() - start:.2f} s, "
                f"{len(result.rows)} sizes"
            )
        start = time.perf_counter()
        wall(results_path=path)
        print(f"rerun reusing the results file: {time.perf_counter() - start:.3f} s")
    knee = result.knee
    print(f"knee: {knee.gpus} GPUs, cause {knee.cause} ({knee.detail})" if knee else "no knee")


if __name__ == "__main__":
    main()
