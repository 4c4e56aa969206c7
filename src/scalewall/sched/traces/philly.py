"""Microsoft Philly job log reader (``cluster_job_log``, a JSON list of jobs).

Jeon et al., "Analysis of Large-Scale Multi-Tenant GPU Clusters for DNN Training Workloads",
USENIX ATC'19 (msr-fiddle/philly-traces). Each job: ``jobid, user, vc, status, submitted_time,
attempts[{start_time, end_time, detail[{ip, gpus[...]}]}]``, times as ``YYYY-MM-DD HH:MM:SS``.
GPUs = GPUs of the first attempt; run time = last attempt's end - first attempt's start; the
tenant is the virtual cluster ``vc``. A "row" in error messages is the job's position (1-based).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scalewall.errors import SpecError
from scalewall.sched.cluster import GPU_MILLI
from scalewall.sched.traces._common import TraceRead, check_rows, seconds_since


def _flatten(job: Any) -> dict[str, Any]:
    attempts = job.get("attempts") or [] if isinstance(job, dict) else []
    first = attempts[0] if attempts and isinstance(attempts[0], dict) else {}
    last = attempts[-1] if attempts and isinstance(attempts[-1], dict) else {}
    detail = first.get("detail") or []
    gpus = sum(len(d.get("gpus") or []) for d in detail if isinstance(d, dict))
    get = job.get if isinstance(job, dict) else (lambda _k, _d=None: None)
    return {"jobid": str(get("jobid", "") or ""), "vc": str(get("vc", "") or "default"),
            "submitted_time": str(get("submitted_time", "") or ""),
            "start_time": str(first.get("start_time", "") or ""),
            "end_time": str(last.get("end_time", "") or ""), "gpus": gpus}


def read_philly(path: Path, *, skip_bad_rows: bool = False) -> TraceRead:
    """Jobs of a Philly ``cluster_job_log``."""
    if not path.is_file():
        raise SpecError("trace", str(path), "no such file")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        why = f"not valid JSON ({exc.msg} at line {exc.lineno})"
        raise SpecError("trace", str(path), why) from None
    if not isinstance(data, list):
        raise SpecError("trace", str(path), "a Philly job log is a JSON list of jobs")
    raw = pd.DataFrame([_flatten(j) for j in data],
                       columns=["jobid", "vc", "submitted_time", "start_time", "end_time", "gpus"])
    submit, origin = seconds_since(raw["submitted_time"], None)
    start, _ = seconds_since(raw["start_time"], origin)
    end, _ = seconds_since(raw["end_time"], origin)
    gpus = raw["gpus"].to_numpy(np.float64)
    bad = {"jobid": (raw["jobid"] == "").to_numpy(), "submitted_time": np.isnan(submit),
           "start_time": np.isnan(start) | (start < submit),
           "end_time": np.isnan(end) | (end < start)}
    valid = {"jobid": "must not be empty", "submitted_time": "must be a timestamp",
             "start_time": "first attempt needs a start time, not before submission",
             "end_time": "last attempt needs an end time, not before the start"}
    keep = check_rows(path, raw, bad, valid, skip_bad_rows=skip_bad_rows, header_lines=0)
    run = end - start
    frame = pd.DataFrame({
        "job_id": raw["jobid"], "submit_s": submit, "run_s": run, "num_gpu": gpus,
        "gpu_milli": np.where(gpus > 0, GPU_MILLI, 0), "cpu_milli": 0, "memory_bytes": 0,
        "gpu_models": "", "priority": 0, "tenant": raw["vc"], "est_run_s": run,
    })[keep].reset_index(drop=True)
    for col in ("num_gpu", "gpu_milli", "cpu_milli", "memory_bytes", "priority"):
        frame[col] = frame[col].astype(np.int64)
    return TraceRead(frame=frame, bad_rows=int((~keep).sum()), source=str(path))
