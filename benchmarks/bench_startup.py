"""Start-up cost of the CLI: CPU seconds (user + system) of whole ``scalewall`` processes.

Target (issue 15, item 4): ``scalewall --help`` and ``scalewall estimate`` under 0.5 s CPU.
Each command runs ``RUNS`` times in a fresh interpreter; the median is printed, with the
machine and library versions.

    python benchmarks/bench_startup.py
"""

from __future__ import annotations

import os
import platform
import resource
import statistics
import subprocess
import sys
from importlib.metadata import version

RUNS = 5
COMMANDS = {
    "scalewall --help": ["--help"],
    "scalewall estimate": ["estimate"],
    "scalewall search (16,384 H100, 405B)": [
        "search",
        "--model",
        "llama3.1-405b",
        "--gpu",
        "h100-sxm-80gb",
        "--gpus",
        "16384",
    ],
}
ENTRY = "from scalewall.cli.app import main; main()"


def cpu_s(args: list[str]) -> float:
    """CPU seconds one ``scalewall`` process spends, its children included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", ENTRY, *args], check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    print(f"machine: {platform.machine()} {platform.processor() or ''} cores={os.cpu_count()}")
    libs = " ".join(f"{n} {version(n)}" for n in ("typer", "rich", "numpy", "pandas", "scipy"))
    print(f"python {platform.python_version()} {libs}")
    for name, args in COMMANDS.items():
        cpu_s(args)  # warm the file cache
        median = statistics.median(cpu_s(args) for _ in range(RUNS))
        print(f"{name}: {median:.2f} s CPU (median of {RUNS}; target < 0.5 s for --help, estimate)")


if __name__ == "__main__":
    main()
