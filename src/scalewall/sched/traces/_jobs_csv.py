"""Shared reader for job logs with one row per job and wall-clock timestamps (Helios, Acme)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from scalewall.sched.cluster import GPU_MILLI
from scalewall.sched.traces._common import (
    TraceRead,
    blank,
    check_rows,
    not_whole,
    numeric,
    read_csv_text,
    require_columns,
    seconds_since,
)

JOB_LOG_COLUMNS = [
    "job_id",
    "user",
    "gpu_num",
    "cpu_num",
    "state",
    "submit_time",
    "start_time",
    "end_time",
]


def read_job_log(
    path: Path, *, tenant_column: str, skip_bad_rows: bool, cpu_milli_per_core: int = 1000
) -> TraceRead:
    """Jobs from a Helios/Acme-style CSV; run time = end - start; tenant from ``tenant_column``."""
    raw = read_csv_text(path)
    require_columns(path, raw, [*JOB_LOG_COLUMNS, tenant_column])
    gpus, cpus = numeric(raw["gpu_num"]), numeric(raw["cpu_num"])
    submit, origin = seconds_since(raw["submit_time"], None)
    start, _ = seconds_since(raw["start_time"], origin)
    end, _ = seconds_since(raw["end_time"], origin)
    bad = {
        "job_id": blank(raw["job_id"]),
        "gpu_num": not_whole(gpus),
        "cpu_num": np.isnan(cpus) | (cpus < 0),
        "submit_time": np.isnan(submit),
        "start_time": np.isnan(start) | (start < submit),
        "end_time": np.isnan(end) | (end < start),
    }
    valid = {
        "job_id": "must not be empty",
        "gpu_num": "must be a whole number >= 0",
        "cpu_num": "must be a number >= 0",
        "submit_time": "must be a timestamp",
        "start_time": "must be a timestamp, not before submit_time",
        "end_time": "must be a timestamp, not before start_time",
    }
    keep = check_rows(path, raw, bad, valid, skip_bad_rows=skip_bad_rows)
    run = end - start
    frame = pd.DataFrame(
        {
            "job_id": raw["job_id"],
            "submit_s": submit - np.nanmin(submit[keep], initial=0.0),
            "run_s": run,
            "num_gpu": gpus,
            "gpu_milli": np.where(gpus > 0, GPU_MILLI, 0),
            "cpu_milli": cpus * cpu_milli_per_core,
            "memory_bytes": 0,
            "gpu_models": "",
            "priority": 0,
            "tenant": raw[tenant_column].replace("", "default"),
            "est_run_s": run,
        }
    )[keep].reset_index(drop=True)
    for col in ("num_gpu", "gpu_milli", "cpu_milli", "memory_bytes", "priority"):
        frame[col] = frame[col].astype(np.int64)
    return TraceRead(frame=frame, bad_rows=int((~keep).sum()), source=str(path))
