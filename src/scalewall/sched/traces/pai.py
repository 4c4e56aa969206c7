"""Alibaba PAI 2020 readers: machine spec (cluster) and task table (jobs).

Weng et al., "MLaaS in the Wild: Workload Analysis and Scheduling in Large-Scale Heterogeneous
GPU Clusters", NSDI'22 (alibaba/clusterdata ``cluster-trace-gpu-v2020``). The files have no
header. ``pai_machine_spec.csv``: ``machine, gpu_type, cap_cpu, cap_mem, cap_gpu`` (cores, GB,
GPUs). ``pai_task_table.csv``: ``job_name, task_name, inst_num, status, start_time, end_time,
plan_cpu, plan_mem, plan_gpu, gpu_type`` (times in seconds; ``plan_cpu`` and ``plan_gpu`` in
percent of one core / one GPU per instance; ``plan_mem`` in GB). A job's GPUs are the sum over
its tasks of ``inst_num * plan_gpu / 100``; fractions below one GPU are GPU sharing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from scalewall.sched.cluster import GPU_MILLI, NodeSpec
from scalewall.sched.traces._common import (
    GIB_BYTES,
    TraceRead,
    blank,
    check_rows,
    not_whole,
    numeric,
    read_csv_text,
)

MACHINE_COLUMNS = ["machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu"]
TASK_COLUMNS = [
    "job_name",
    "task_name",
    "inst_num",
    "status",
    "start_time",
    "end_time",
    "plan_cpu",
    "plan_mem",
    "plan_gpu",
    "gpu_type",
]
PERCENT = 100.0
CORE_MILLI = 1000


def read_pai_machines(
    path: Path, *, skip_bad_rows: bool = False, nodes_per_rack: int = 16, racks_per_pod: int = 16
) -> list[NodeSpec]:
    """Nodes from ``pai_machine_spec.csv`` (racks assigned in file order)."""
    raw = read_csv_text(path, names=MACHINE_COLUMNS)
    cpu, mem, gpu = numeric(raw["cap_cpu"]), numeric(raw["cap_mem"]), numeric(raw["cap_gpu"])
    bad = {
        "machine": blank(raw["machine"]),
        "cap_cpu": not_whole(cpu),
        "cap_mem": np.isnan(mem) | (mem < 0),
        "cap_gpu": not_whole(gpu),
    }
    valid = {
        "machine": "must not be empty",
        "cap_cpu": "must be a whole number of cores",
        "cap_mem": "must be GB >= 0",
        "cap_gpu": "must be a whole number >= 0",
    }
    keep = check_rows(path, raw, bad, valid, skip_bad_rows=skip_bad_rows, header_lines=0)
    out = []
    for i, r in enumerate(np.flatnonzero(keep)):
        model = str(raw["gpu_type"].iloc[r]).strip()
        out.append(
            NodeSpec(
                name=str(raw["machine"].iloc[r]),
                cpu_milli=int(cpu[r]) * CORE_MILLI,
                memory_bytes=int(mem[r] * GIB_BYTES),
                num_gpus=int(gpu[r]),
                gpu_model=model if gpu[r] > 0 and model != "CPU" else "",
                rack=i // nodes_per_rack,
                pod=i // (nodes_per_rack * racks_per_pod),
            )
        )
    return out


def read_pai_tasks(path: Path, *, skip_bad_rows: bool = False) -> TraceRead:
    """Jobs from ``pai_task_table.csv``: one job per ``job_name``, its tasks gang-scheduled."""
    raw = read_csv_text(path, names=TASK_COLUMNS)
    inst, start = numeric(raw["inst_num"]), numeric(raw["start_time"])
    end = numeric(raw["end_time"])
    cpu, mem, gpu = numeric(raw["plan_cpu"]), numeric(raw["plan_mem"]), numeric(raw["plan_gpu"])
    bad = {
        "job_name": blank(raw["job_name"]),
        "inst_num": not_whole(inst) | (inst < 1),
        "start_time": np.isnan(start),
        "end_time": np.isnan(end) | (end < start),
        "plan_gpu": np.isnan(gpu) | (gpu < 0),
    }
    valid = {
        "job_name": "must not be empty",
        "inst_num": "must be a whole number >= 1",
        "start_time": "must be seconds",
        "end_time": "must be seconds, not before start",
        "plan_gpu": "must be a percentage of a GPU >= 0",
    }
    keep = check_rows(path, raw, bad, valid, skip_bad_rows=skip_bad_rows, header_lines=0)
    tasks = pd.DataFrame(
        {
            "job_id": raw["job_name"],
            "start": start,
            "end": end,
            "gpu": inst * np.nan_to_num(gpu) / PERCENT,
            "cpu": inst * np.nan_to_num(cpu) / PERCENT,
            "mem": inst * np.nan_to_num(mem),
            "model": raw["gpu_type"].str.strip(),
        }
    )[keep]
    jobs = (
        tasks.groupby("job_id", sort=False)
        .agg(
            start=("start", "min"),
            end=("end", "max"),
            gpu=("gpu", "sum"),
            cpu=("cpu", "sum"),
            mem=("mem", "sum"),
            model=("model", "first"),
        )
        .reset_index()
    )
    share = (jobs["gpu"] > 0) & (jobs["gpu"] < 1)
    num_gpu = np.where(share, 1, np.ceil(jobs["gpu"])).astype(np.int64)
    milli = np.where(share, np.round(jobs["gpu"] * GPU_MILLI), np.where(num_gpu > 0, GPU_MILLI, 0))
    frame = pd.DataFrame(
        {
            "job_id": jobs["job_id"],
            "submit_s": jobs["start"] - jobs["start"].min(),
            "run_s": jobs["end"] - jobs["start"],
            "num_gpu": num_gpu,
            "gpu_milli": milli.astype(np.int64),
            "cpu_milli": np.round(jobs["cpu"] * CORE_MILLI).astype(np.int64),
            "memory_bytes": np.round(jobs["mem"] * GIB_BYTES).astype(np.int64),
            "gpu_models": jobs["model"].replace({"MISC": "", "CPU": ""}).fillna(""),
            "priority": 0,
            "tenant": "default",
            "est_run_s": jobs["end"] - jobs["start"],
        }
    )
    return TraceRead(frame=frame, bad_rows=int((~keep).sum()), source=str(path))
