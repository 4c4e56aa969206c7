"""Jobs as columns: one numpy array per field, one row per job, read once from a trace.

A job asks for a gang of ``num_gpu`` GPUs, each ``gpu_milli``/1000 of a GPU (``gpu_milli`` < 1000
only with ``num_gpu == 1``: GPU sharing as in openb), plus CPU and memory, optionally restricted to
some GPU models. It belongs to a tenant (queue / virtual cluster), has a priority and a submit
time, and a run time measured on the trace (or NaN when the trace has none).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from scalewall.errors import SpecError
from scalewall.sched.cluster import GPU_MILLI, Cluster

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

JOB_COLUMNS: tuple[str, ...] = (
    "job_id",
    "submit_s",
    "run_s",
    "num_gpu",
    "gpu_milli",
    "cpu_milli",
    "memory_bytes",
    "gpu_models",
    "priority",
    "tenant",
    "est_run_s",
)
"""Canonical columns every trace reader returns (``gpu_models``: ``|``-separated, empty = any)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Request:
    """What one job asks the placement policy for."""

    cpu_milli: int
    memory_bytes: int
    num_gpu: int
    gpu_milli: int
    """Per GPU: 1000 for whole GPUs, less for a shared fraction of one GPU, 0 for CPU-only."""
    model_mask: int
    """Bit mask over the cluster's GPU model ids."""
    shape_id: int
    """Index of this request's shape (same resources, same model list) in the job table."""

    @property
    def gpu_demand_milli(self) -> int:
        return self.num_gpu * self.gpu_milli


@dataclass(frozen=True, kw_only=True, eq=False)
class JobTable:
    """All jobs of a workload, column by column (row ``i`` is job ``i``)."""

    job_id: tuple[str, ...]
    submit_s: FloatArray
    run_s: FloatArray
    est_run_s: FloatArray
    num_gpu: IntArray
    gpu_milli: IntArray
    cpu_milli: IntArray
    memory_bytes: IntArray
    gpu_models: tuple[str, ...]
    priority: IntArray
    tenant: IntArray
    tenant_names: tuple[str, ...]
    shape_id: IntArray
    """Jobs with equal resources and model list share a shape id (0..num_shapes-1)."""
    num_shapes: int

    def __len__(self) -> int:
        return len(self.job_id)

    @property
    def gpu_demand(self) -> FloatArray:
        """GPUs each job asks for (a fraction for shared GPUs)."""
        return self.num_gpu * self.gpu_milli / GPU_MILLI

    def requests(self, cluster: Cluster) -> list[Request]:
        """One :class:`Request` per job, with GPU-model masks resolved against ``cluster``."""
        masks = {m: cluster.model_mask(m) for m in set(self.gpu_models)}
        return [
            Request(
                cpu_milli=int(c),
                memory_bytes=int(b),
                num_gpu=int(n),
                gpu_milli=int(g),
                model_mask=masks[m],
                shape_id=int(s),
            )
            for c, b, n, g, m, s in zip(
                self.cpu_milli,
                self.memory_bytes,
                self.num_gpu,
                self.gpu_milli,
                self.gpu_models,
                self.shape_id,
                strict=True,
            )
        ]

    def subset(self, rows: npt.NDArray[np.int64]) -> JobTable:
        """The jobs at ``rows`` (in that order), renumbering nothing but keeping shapes."""
        return JobTable(
            job_id=tuple(self.job_id[i] for i in rows),
            submit_s=self.submit_s[rows],
            run_s=self.run_s[rows],
            est_run_s=self.est_run_s[rows],
            num_gpu=self.num_gpu[rows],
            gpu_milli=self.gpu_milli[rows],
            cpu_milli=self.cpu_milli[rows],
            memory_bytes=self.memory_bytes[rows],
            gpu_models=tuple(self.gpu_models[i] for i in rows),
            priority=self.priority[rows],
            tenant=self.tenant[rows],
            tenant_names=self.tenant_names,
            shape_id=self.shape_id[rows],
            num_shapes=self.num_shapes,
        )

    def to_frame(self) -> pd.DataFrame:
        """The canonical columns as a DataFrame."""
        return pd.DataFrame(
            {
                "job_id": list(self.job_id),
                "submit_s": self.submit_s,
                "run_s": self.run_s,
                "num_gpu": self.num_gpu,
                "gpu_milli": self.gpu_milli,
                "cpu_milli": self.cpu_milli,
                "memory_bytes": self.memory_bytes,
                "gpu_models": list(self.gpu_models),
                "priority": self.priority,
                "tenant": [self.tenant_names[t] for t in self.tenant],
                "est_run_s": self.est_run_s,
            }
        )


def job_table(frame: pd.DataFrame) -> JobTable:
    """Build a :class:`JobTable` from a frame with the canonical columns (:data:`JOB_COLUMNS`)."""
    missing = [c for c in JOB_COLUMNS if c not in frame.columns]
    if missing:
        raise SpecError("columns", missing, f"a job frame needs {', '.join(JOB_COLUMNS)}")
    frame = frame.reset_index(drop=True)
    num_gpu = frame["num_gpu"].to_numpy(np.int64)
    gpu_milli = frame["gpu_milli"].to_numpy(np.int64)
    shared_multi = (gpu_milli < GPU_MILLI) & (num_gpu > 1)
    if shared_multi.any():
        row = int(np.flatnonzero(shared_multi)[0])
        raise SpecError(
            "gpu_milli",
            int(gpu_milli[row]),
            "a fraction of a GPU is only valid with num_gpu == 1",
            where=f"job {row}",
        )
    shape_cols = ["num_gpu", "gpu_milli", "cpu_milli", "memory_bytes", "gpu_models"]
    shape_id = np.asarray(
        frame.groupby(shape_cols, sort=True, dropna=False).ngroup(), dtype=np.int64
    )
    tenants = frame["tenant"].astype(str)
    tenant_names = tuple(sorted(tenants.unique()))
    tenant_code = pd.Categorical(tenants, categories=list(tenant_names)).codes.astype(np.int64)
    run_s = frame["run_s"].to_numpy(np.float64)
    est = frame["est_run_s"].to_numpy(np.float64)
    return JobTable(
        job_id=tuple(frame["job_id"].astype(str)),
        submit_s=frame["submit_s"].to_numpy(np.float64),
        run_s=run_s,
        est_run_s=np.where(np.isnan(est), run_s, est),
        num_gpu=num_gpu,
        gpu_milli=gpu_milli,
        cpu_milli=frame["cpu_milli"].to_numpy(np.int64),
        memory_bytes=frame["memory_bytes"].to_numpy(np.int64),
        gpu_models=tuple(frame["gpu_models"].fillna("").astype(str)),
        priority=frame["priority"].to_numpy(np.int64),
        tenant=tenant_code,
        tenant_names=tenant_names,
        shape_id=shape_id,
        num_shapes=int(shape_id.max(initial=-1)) + 1,
    )
