"""Microsoft Philly job log reader (``cluster_job_log``, a JSON list of jobs).

Jeon et al., "Analysis of Large-Scale Multi-Tenant GPU Clusters for DNN Training Workloads",
USENIX ATC'19 (msr-fiddle/philly-traces). Each job: ``jobid, user, vc, status, submitted_time,
attempts[{start_time, end_time, detail[{ip, gpus[...]}]}]``, times as ``YYYY-MM-DD HH:MM:SS``.
GPUs = GPUs of the first attempt; the tenant is the virtual cluster ``vc``. A "row" in error
messages is the job's position (1-based).

Run time = the attempts' run times (end - start) summed: the gaps between attempts were waits
in Philly's queue, which a replay simulates itself. Philly retries a job after a failed
attempt, so every attempt followed by another one ended in a failure; such jobs come with
their attempts (``TraceRead.attempts``) so that a replay stops the job where each failed
attempt ended, in its own run time, instead of adding failures on top of a run time that
already spans them. The log does not say which machine caused a failure (or whether the job
itself did), so each one is charged to the first machine its attempt lists. An attempt
without both times (a logging gap the trace's README mentions) adds no run time. The
machine list ``cluster_machine_list`` (``machineId,number of GPUs,single GPU mem``) gives
the cluster, with node names matching the attempts' ``ip``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from scalewall.errors import SpecError
from scalewall.sched.cluster import GPU_MILLI, NodeSpec
from scalewall.sched.traces._common import (
    RecordedAttempt,
    TraceRead,
    blank,
    check_rows,
    not_whole,
    numeric,
    read_csv_text,
    seconds_since,
)

MACHINE_COLUMNS = ["machineId", "number of GPUs", "single GPU mem"]


def _attempt_rows(job: Any) -> list[tuple[str, str, str]]:
    """(start_time, end_time, first machine) of each attempt of one job, in order."""
    if not isinstance(job, dict):
        return []
    rows = []
    for attempt in job.get("attempts") or []:
        if not isinstance(attempt, dict):
            continue
        machines = [
            d.get("ip") for d in attempt.get("detail") or [] if isinstance(d, dict) and d.get("ip")
        ]
        start, end = attempt.get("start_time"), attempt.get("end_time")
        rows.append((str(start or ""), str(end or ""), str(machines[0]) if machines else ""))
    return rows


def _attempts(
    data: list[Any], origin: pd.Timestamp | None
) -> tuple[npt.NDArray[np.float64], dict[int, tuple[RecordedAttempt, ...]]]:
    """Per job: the attempts' run times summed, and, for jobs with more than one attempt, the
    attempts (every one but the last failed: it was retried)."""
    per_job = [_attempt_rows(job) for job in data]
    counts = np.array([len(rows) for rows in per_job], dtype=np.int64)
    flat = [row for rows in per_job for row in rows]
    starts, _ = seconds_since(pd.Series([r[0] for r in flat], dtype=object), origin)
    ends, _ = seconds_since(pd.Series([r[1] for r in flat], dtype=object), origin)
    runs = np.where(ends >= starts, ends - starts, np.nan)  # NaN where a time is missing
    owner = np.repeat(np.arange(len(data)), counts)
    totals = np.bincount(owner, weights=np.nan_to_num(runs), minlength=len(data)).astype(np.float64)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    recorded: dict[int, tuple[RecordedAttempt, ...]] = {}
    for j in np.flatnonzero(counts > 1).tolist():
        rows, at = per_job[j], int(first[j])
        attempts = tuple(
            RecordedAttempt(run_s=float(runs[at + i]), machine=row[2], failed=i < len(rows) - 1)
            for i, row in enumerate(rows)
            if np.isfinite(runs[at + i])
        )
        if len(attempts) > 1:
            recorded[j] = attempts
    return totals, recorded


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
    run, recorded = _attempts(data, origin)
    job_ids = raw["jobid"].tolist()
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
        attempts=tuple((job_ids[j], attempts) for j, attempts in recorded.items() if keep[j]),
    )
