"""Side by side: the whole ``scalewall search`` command for Llama 3.1 405B on 16,384 H100 (every
valid plan) against one ``llm-analysis`` process that answers a single plan.

Both are timed as whole processes (start-up included), wall clock and CPU (user + system), the
median of ``RUNS`` after one untimed run. Both run with bytecode caching on
(``PYTHONDONTWRITEBYTECODE`` removed from their environment), so the untimed run leaves the
compiled modules an installed package has and neither side is timed compiling its sources.
llm-analysis (https://github.com/cli99/llm-analysis) runs from its own interpreter,
``LLM_ANALYSIS_PYTHON`` (default: ``python`` on PATH), so its pinned dependencies stay out of
this environment; when it is not importable there the script says so and prints
scalewall's figure alone.

    pip install llm-analysis   # in any environment; point LLM_ANALYSIS_PYTHON at its python
    python benchmarks/bench_vs_llm_analysis.py
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 5
GPUS = 16384
SCALEWALL = [
    sys.executable,
    "-c",
    "from scalewall.cli.app import main; main()",
    "search",
    "--model",
    "llama3.1-405b",
    "--gpu",
    "h100-sxm-80gb",
    "--gpus",
    str(GPUS),
    "--json",
]
# The plan llm-analysis is asked about: Llama 3 405B's pre-training plan on 16,384 H100
# (arXiv 2407.21783, Table 4: TP 8, PP 16, DP 128, 8,192-token sequences, 16M tokens a step).
PLAN = {
    "tp_size": 8,
    "pp_size": 16,
    "seq_len": 8192,
    "global_batch_size": 2048,
    "batch_size_per_gpu": 1,
}


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""The timed processes' environment: this one's, with bytecode caching on."""


def timed(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one process, its children included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env=ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def median_of(cmd: list[str]) -> tuple[float, float]:
    timed(cmd)  # warm the file cache and write the bytecode
    runs = [timed(cmd) for _ in range(RUNS)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def llm_analysis_config(folder: Path) -> Path:
    """Llama 3.1 405B in llm-analysis's model-config format, from scalewall's catalog entry.

    llm-analysis 0.2.2 needs the FFN width to be a whole multiple of the hidden size, which
    405B's (53,248 = 3.25 x 16,384) is not; it is given the nearest multiple below (49,152).
    The figure here is the time to answer, which does not depend on that width."""
    from scalewall.workload.user import model_from_args

    m = model_from_args("llama3.1-405b")
    path = folder / "llama3.1-405b.json"
    config = {
        "name": "llama3.1-405b",
        "num_layers": m.layers,
        "n_head": m.heads,
        "num_key_value_heads": m.kv_heads,
        "hidden_dim": m.hidden,
        "ffn_embed_dim": m.ffn_hidden // m.hidden * m.hidden,
        "vocab_size": m.vocab,
        "max_seq_len": m.max_seq_len,
        "model_type": "llama",
    }
    path.write_text(json.dumps(config))
    return path


def llm_analysis_command(python: str, config: Path, out: Path) -> list[str]:
    flags = [f"--{k}={v}" for k, v in PLAN.items()]
    return [
        python,
        "-m",
        "llm_analysis.analysis",
        "train",
        f"--model_name={config}",
        "--gpu_name=h100-sxm-80gb",
        f"--total_num_gpus={GPUS}",
        "--flops_efficiency=0.5",
        "--hbm_memory_efficiency=0.9",
        f"--output_dir={out}",
        *flags,
    ]


def main() -> None:
    machine = f"{platform.machine()} cores={os.cpu_count()}"
    print(f"machine: {machine} python {platform.python_version()}")
    sw_wall, sw_cpu = median_of(SCALEWALL)
    print(
        f"scalewall search, 405B on {GPUS:,} H100, every plan: {sw_wall:.2f} s wall, "
        f"{sw_cpu:.2f} s CPU (median of {RUNS})"
    )
    python = os.environ.get("LLM_ANALYSIS_PYTHON", "python")
    probe = subprocess.run([python, "-c", "import llm_analysis"], capture_output=True)
    if probe.returncode:
        print(
            f"llm-analysis is not importable by {python!r} (pip install llm-analysis, then set "
            "LLM_ANALYSIS_PYTHON to that interpreter): no side-by-side figure"
        )
        return
    with tempfile.TemporaryDirectory() as tmp:
        cmd = llm_analysis_command(python, llm_analysis_config(Path(tmp)), Path(tmp))
        la_wall, la_cpu = median_of(cmd)
    print(
        f"llm-analysis train, one plan (tp 8, pp 16, dp 128): {la_wall:.2f} s wall, "
        f"{la_cpu:.2f} s CPU (median of {RUNS})"
    )
    print(
        f"ratio scalewall search / llm-analysis one plan: {sw_wall / la_wall:.2f} (wall), "
        f"{sw_cpu / la_cpu:.2f} (CPU); below 1 means the whole search is faster"
    )


if __name__ == "__main__":
    main()
