"""Microsoft Philly job log reader (``cluster_job_log``, a JSON list of jobs).

Jeon et al., "Analysis of Large-Scale Multi-Tenant GPU Clusters for DNN Training Workloads",
USENIX ATC'19 (msr-fiddle/philly-traces). Each job: ``jobid, user, vc, status, submitted_time,
attempts[{start_time, end_time, detail[{ip, gpus[...]}]}]``, times as ``YYYY-MM-DD HH:MM:SS``.
GPUs = GPUs of the first attempt; run time = last attempt's end - first attempt's start; the
tenant is the virtual cluster ``vc``. A "row" in error messages is the job's position (1-based).

Node failures: Philly retries a job after a failed attempt, so every attempt followed by
another one, and the last attempt of a job whose status is ``Failed``, ended in a failure at
its ``end_time``. The log does not say which machine caused it (or whether the job itself
did), so each failed attempt counts as one fault of the first machine it lists; this bounds
the node faults from above by the failed attempts, not by the machines they held.
The machine list ``cluster_machine_list`` (``machineId,number of GPUs,single GPU mem``)
gives the cluster, with node names matching the attempts' ``ip``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scalewall.errors import SpecError
from scalewall.sched.cluster import GPU_MILLI, NodeSpec
from scalewall.sched.traces._common import (
    TraceRead,
    blank,
    check_rows,
    not_whole,
    numeric,
    read_csv_text,
    seconds_since,
)

MACHINE_COLUMNS = ["machineId", "number of GPUs", "single GPU mem"]


def _failed_attempts(job: Any) -> list[tuple[str, str]]:
    """(end_time, first machine) of each failed attempt of one job."""
    if not isinstance(job, dict):
        return []
    attempts = [a for a in job.get("attempts") or [] if isinstance(a, dict)]
    failed = attempts[:-1] + (attempts[-1:] if job.get("status") == "Failed" else [])
    out = []
    for attempt in failed:
        machines = [
            d.get("ip") for d in attempt.get("detail") or [] if isinstance(d, dict) and d.get("ip")
        ]
        if machines and attempt.get("end_time"):
            out.append((str(attempt["end_time"]), str(machines[0])))
    return out


def _node_failures(
    data: list[Any], origin: pd.Timestamp | None, keep: np.ndarray
) -> tuple[tuple[float, str], ...]:
    rows = [f for job, kept in zip(data, keep, strict=True) if kept for f in _failed_attempts(job)]
    if not rows or origin is None:
        return ()
    times, _ = seconds_since(pd.Series([t for t, _ in rows]), origin)
    return tuple(
        sorted((float(t), m) for t, (_, m) in zip(times, rows, strict=True) if np.isfinite(t))
    )


def read_philly_machines(
    path: Path, *, skip_bad_rows: bool = False, nodes_per_rack: int = 16, racks_per_pod: int = 16
) -> list[NodeSpec]:
    """Nodes of a Philly ``cluster_machine_list`` (racks assigned in file order; the list has
    no CPU or memory, so CPU and memory never limit a placement)."""
    raw = read_csv_text(path)
    gpus = (
        numeric(raw["number of GPUs"])
        if "number of GPUs" in raw.columns
        else np.full(len(raw), np.nan)
    )
    names = raw["machineId"] if "machineId" in raw.columns else pd.Series([""] * len(raw))
    bad = {"machineId": blank(names), "number of GPUs": not_whole(gpus)}
    valid = {"machineId": "must not be empty", "number of GPUs": "must be a whole number >= 0"}
    keep = check_rows(path, raw, bad, valid, skip_bad_rows=skip_bad_rows)
    return [
        NodeSpec(
            name=str(names.iloc[r]).strip(),
            cpu_milli=2**40,
            memory_bytes=2**50,
            num_gpus=int(gpus[r]),
            gpu_model="philly" if gpus[r] > 0 else "",
            rack=i // nodes_per_rack,
            pod=i // (nodes_per_rack * racks_per_pod),
        )
        for i, r in enumerate(np.flatnonzero(keep))
    ]


def _flatten(job: Any) -> dict[str, Any]:
    attempts = job.get("attempts") or [] if isinstance(job, dict) else []
    first = attempts[0] if attempts and isinstance(attempts[0], dict) else {}
    last = attempts[-1] if attempts and isinstance(attempts[-1], dict) else {}
    detail = first.get("detail") or []
    gpus = sum(len(d.get("gpus") or []) for d in detail if isinstance(d, dict))
    get = job.get if isinstance(job, dict) else (lambda _k, _d=None: None)
    return {
        "jobid": str(get("jobid", "") or ""),
        "vc": str(get("vc", "") or "default"),
        "submitted_time": str(get("submitted_time", "") or ""),
        "start_time": str(first.get("start_time", "") or ""),
        "end_time": str(last.get("end_time", "") or ""),
        "gpus": gpus,
    }


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
    raw = pd.DataFrame(
        [_flatten(j) for j in data],
        columns=["jobid", "vc", "submitted_time", "start_time", "end_time", "gpus"],
    )
    submit, origin = seconds_since(raw["submitted_time"], None)
    start, _ = seconds_since(raw["start_time"], origin)
    end, _ = seconds_since(raw["end_time"], origin)
    gpus = raw["gpus"].to_numpy(np.float64)
    bad = {
        "jobid": (raw["jobid"] == "").to_numpy(),
        "submitted_time": np.isnan(submit),
        "start_time": np.isnan(start) | (start < submit),
        "end_time": np.isnan(end) | (end < start),
    }
    valid = {
        "jobid": "must not be empty",
        "submitted_time": "must be a timestamp",
        "start_time": "first attempt needs a start time, not before submission",
        "end_time": "last attempt needs an end time, not before the start",
    }
    keep = check_rows(path, raw, bad, valid, skip_bad_rows=skip_bad_rows, header_lines=0)
    run = end - start
    frame = pd.DataFrame(
        {
            "job_id": raw["jobid"],
            "submit_s": submit,
            "run_s": run,
            "num_gpu": gpus,
            "gpu_milli": np.where(gpus > 0, GPU_MILLI, 0),
            "cpu_milli": 0,
            "memory_bytes": 0,
            "gpu_models": "",
            "priority": 0,
            "tenant": raw["vc"],
            "est_run_s": run,
        }
    )[keep].reset_index(drop=True)
    for col in ("num_gpu", "gpu_milli", "cpu_milli", "memory_bytes", "priority"):
        frame[col] = frame[col].astype(np.int64)
    return TraceRead(
        frame=frame,
        bad_rows=int((~keep).sum()),
        source=str(path),
        node_failures=_node_failures(data, origin, keep),
    )
