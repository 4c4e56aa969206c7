"""Job frames in the canonical trace columns (``jobs.JOB_COLUMNS``) for the scheduler tests."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

Column = float | int | str | Sequence[float] | Sequence[int] | Sequence[str]


def job_frame(
    num_gpu: Sequence[int],
    *,
    submit_s: Sequence[float] | None = None,
    run_s: Column = 100.0,
    est_run_s: Column | None = None,
    cpu_milli: Column = 1000,
    tenant: Column = "a",
    priority: Column = 0,
    **extra: Sequence[object],
) -> pd.DataFrame:
    """One whole-GPU job per entry of ``num_gpu``, submitted a second apart unless ``submit_s``
    says otherwise; a scalar column holds for every job; ``est_run_s`` defaults to the run time;
    ``extra`` adds optional columns (the gang shape, say)."""
    n = len(num_gpu)
    frame = pd.DataFrame(
        {
            "job_id": [f"j{i}" for i in range(n)],
            "submit_s": list(submit_s) if submit_s is not None else [float(i) for i in range(n)],
            "run_s": run_s,
            "num_gpu": list(num_gpu),
            "gpu_milli": 1000,
            "cpu_milli": cpu_milli,
            "memory_bytes": 0,
            "gpu_models": "",
            "priority": priority,
            "tenant": tenant,
            "est_run_s": run_s if est_run_s is None else est_run_s,
        }
    )
    for name, values in extra.items():
        frame[name] = list(values)
    return frame
