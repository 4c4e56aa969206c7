"""Alibaba openb (cluster-trace-gpu-v2023) readers: node list and pod list.

Source: Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
Gradient Descent", USENIX ATC'23; files from alibaba/clusterdata ``cluster-trace-gpu-v2023/csv``.
Pods: ``name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,qos,pod_phase,creation_time,
deletion_time,scheduled_time]`` (times in seconds). Nodes: ``sn,cpu_milli,memory_mib,gpu,model``.

Mapping: tenant = the QoS class (openb has no tenants; QoS is its service class), priority
Guaranteed 3 > LS 2 > Burstable 1 > BE 0; run time = deletion - scheduled (deletion - creation
for pods never scheduled); a pod list without times (``multigpu50``) has NaN run times.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from scalewall.sched.cluster import GPU_MILLI, NodeSpec
from scalewall.sched.traces._common import (
    MIB_BYTES,
    TraceRead,
    blank,
    check_rows,
    not_whole,
    numeric,
    read_csv_text,
    require_columns,
)

QOS_PRIORITY = {"Guaranteed": 3, "LS": 2, "Burstable": 1, "BE": 0}
"""openb QoS classes, highest first."""

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "openb"
"""The openb files shipped with the package (with their licence notice)."""

POD_COLUMNS = ["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"]
NODE_COLUMNS = ["sn", "cpu_milli", "memory_mib", "gpu", "model"]


def openb_path(name: str) -> Path:
    """A shipped openb file by short name: ``default``, ``gpushare100``, ``nodes`` ..."""
    if name == "nodes":
        return DATA_DIR / "openb_node_list_gpu_node.csv"
    return DATA_DIR / f"openb_pod_list_{name}.csv"


def read_openb_pods(path: Path, *, skip_bad_rows: bool = False) -> TraceRead:
    """Pods of an openb pod list as canonical job columns."""
    raw = read_csv_text(path)
    require_columns(path, raw, POD_COLUMNS)
    cpu, mem, num, milli = (numeric(raw[c]) for c in POD_COLUMNS[1:])
    bad = {
        "name": blank(raw["name"]),
        "cpu_milli": not_whole(cpu),
        "memory_mib": not_whole(mem),
        "num_gpu": not_whole(num),
        "gpu_milli": not_whole(milli)
        | (milli > GPU_MILLI)
        | ((num == 0) != (milli == 0))
        | ((num > 1) & (milli != GPU_MILLI)),
    }
    valid = {
        "name": "must not be empty",
        "cpu_milli": "must be a whole number >= 0",
        "memory_mib": "must be a whole number >= 0",
        "num_gpu": "must be a whole number >= 0",
        "gpu_milli": "must be 1..1000 with num_gpu 1, 1000 with num_gpu > 1, 0 with num_gpu 0",
    }
    submit = np.zeros(len(raw))
    run = np.full(len(raw), np.nan)
    if "creation_time" in raw.columns:
        created, deleted = numeric(raw["creation_time"]), numeric(raw["deletion_time"])
        scheduled = numeric(raw["scheduled_time"])
        begin = np.where(np.isnan(scheduled), created, scheduled)
        bad["creation_time"] = np.isnan(created) | (created < 0)
        bad["deletion_time"] = np.isnan(deleted) | (deleted < begin)
        valid["creation_time"] = "must be a time in seconds >= 0"
        valid["deletion_time"] = "must be a time in seconds, not before scheduling"
        submit, run = created, deleted - begin
    keep = check_rows(path, raw, bad, valid, skip_bad_rows=skip_bad_rows)
    qos = raw["qos"] if "qos" in raw.columns else pd.Series(["LS"] * len(raw))
    spec = raw["gpu_spec"] if "gpu_spec" in raw.columns else pd.Series([""] * len(raw))
    frame = pd.DataFrame(
        {
            "job_id": raw["name"],
            "submit_s": submit,
            "run_s": run,
            "num_gpu": num,
            "gpu_milli": milli,
            "cpu_milli": cpu,
            "memory_bytes": mem * MIB_BYTES,
            "gpu_models": spec.str.strip(),
            "priority": qos.map(QOS_PRIORITY).fillna(0).to_numpy(),
            "tenant": qos.replace("", "default"),
            "est_run_s": run,
        }
    )[keep]
    for col in ("num_gpu", "gpu_milli", "cpu_milli", "memory_bytes", "priority"):
        frame[col] = frame[col].astype(np.int64)
    return TraceRead(
        frame=frame.reset_index(drop=True), bad_rows=int((~keep).sum()), source=str(path)
    )


def read_openb_nodes(
    path: Path, *, skip_bad_rows: bool = False, nodes_per_rack: int = 16, racks_per_pod: int = 16
) -> list[NodeSpec]:
    """Nodes of an openb node list; racks are assigned in file order, ``nodes_per_rack`` each
    and pods ``racks_per_pod`` racks each (openb publishes no topology)."""
    raw = read_csv_text(path)
    require_columns(path, raw, NODE_COLUMNS)
    cpu, mem, gpu = numeric(raw["cpu_milli"]), numeric(raw["memory_mib"]), numeric(raw["gpu"])
    bad = {
        "sn": blank(raw["sn"]),
        "cpu_milli": not_whole(cpu),
        "memory_mib": not_whole(mem),
        "gpu": not_whole(gpu),
        "model": (gpu > 0) & blank(raw["model"]),
    }
    valid = {
        "sn": "must not be empty",
        "cpu_milli": "must be a whole number >= 0",
        "memory_mib": "must be a whole number >= 0",
        "gpu": "must be a whole number >= 0",
        "model": "a node with GPUs needs a GPU model",
    }
    keep = check_rows(path, raw, bad, valid, skip_bad_rows=skip_bad_rows)
    rows = np.flatnonzero(keep)
    return [
        NodeSpec(
            name=str(raw["sn"].iloc[r]),
            cpu_milli=int(cpu[r]),
            memory_bytes=int(mem[r]) * MIB_BYTES,
            num_gpus=int(gpu[r]),
            gpu_model=str(raw["model"].iloc[r]).strip(),
            rack=i // nodes_per_rack,
            pod=i // (nodes_per_rack * racks_per_pod),
        )
        for i, r in enumerate(rows)
    ]
