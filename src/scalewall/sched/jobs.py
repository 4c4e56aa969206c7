"""Jobs as columns: one numpy array per field, one row per job, read once from a trace.

A job asks for a gang of ``num_gpu`` GPUs, each ``gpu_milli``/1000 of a GPU (``gpu_milli`` < 1000
only with ``num_gpu == 1``: GPU sharing as in openb), plus CPU and memory, optionally restricted to
some GPU models. It belongs to a tenant (queue / virtual cluster), has a priority and a submit
time, and a run time measured on the trace (or NaN when the trace has none).

Optional gang columns (:data:`GANG_COLUMNS`) shape a gang as Kueue's topology-aware scheduling
does (https://kueue.sigs.k8s.io/docs/concepts/topology_aware_scheduling/, podset annotations
``kueue.x-k8s.io/podset-required-topology`` and ``podset-preferred-topology``): ``workers`` x
``gpus_per_worker`` GPUs, each worker on one node, and a ``topology_level`` (``node``, ``domain``,
``rack`` or ``pod``) the whole gang must (``topology_required``) or should stay within. Without
them, placement is as before.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
import pandas as pd

from scalewall.errors import SpecError
from scalewall.sched.cluster import GPU_MILLI, TOPOLOGY_LEVELS, Cluster

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

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

GANG_COLUMNS: tuple[str, ...] = (
    "workers",
    "gpus_per_worker",
    "topology_level",
    "topology_required",
)
"""Optional columns shaping a gang (see the module docstring); any may be absent."""

_TRUE = frozenset({"true", "1", "1.0", "yes"})
_FALSE = frozenset({"false", "0", "0.0", "no", "", "nan", "none"})


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
    workers: int = 0
    """Workers in the gang, each on one node; 0 when the job gives no worker shape."""
    gpus_per_worker: int = 0
    """GPUs of each worker (``workers * gpus_per_worker == num_gpu``); 0 with no shape."""
    topology_level: int = 0
    """Index in ``TOPOLOGY_LEVELS`` of the group the gang should stay within (0: none)."""
    topology_required: bool = False
    """The gang waits rather than leave one group of ``topology_level`` (else it prefers one)."""
    shaped: bool = False
    """A worker shape or a topology level is set (placement takes the gang path that honours
    them; unshaped requests skip it)."""

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
    gang: GangColumns | None = None
    """The optional gang columns, ``None`` when the frame has none."""

    def __len__(self) -> int:
        return len(self.job_id)

    @property
    def gpu_demand(self) -> FloatArray:
        """GPUs each job asks for (a fraction for shared GPUs)."""
        return self.num_gpu * self.gpu_milli / GPU_MILLI

    def requests(self, cluster: Cluster) -> list[Request]:
        """One :class:`Request` per job, with GPU-model masks resolved against ``cluster``."""
        masks = {m: cluster.model_mask(m) for m in set(self.gpu_models)}
        plain = self._plain_requests(masks)
        if self.gang is None:
            return plain
        return [self.gang.shape(i, r) for i, r in enumerate(plain)]

    def _plain_requests(self, masks: dict[str, int]) -> list[Request]:
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
            gang=None if self.gang is None else self.gang.subset(rows),
        )

    def to_frame(self) -> pd.DataFrame:
        """The canonical columns (and the gang columns, when set) as a DataFrame."""
        frame = pd.DataFrame(
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
        if self.gang is not None:
            for name, values in self.gang.columns().items():
                frame[name] = values
        return frame


@dataclass(frozen=True, kw_only=True, eq=False)
class GangColumns:
    """The gang columns of a job table, validated (0 / "" / False where a job sets none)."""

    workers: IntArray
    gpus_per_worker: IntArray
    topology_level: IntArray
    topology_required: BoolArray

    def shape(self, row: int, request: Request) -> Request:
        """``request`` with row ``row``'s gang shape."""
        workers = int(self.workers[row])
        level = int(self.topology_level[row])
        if workers == 0 and level == 0:
            return request
        return replace(
            request,
            workers=workers,
            gpus_per_worker=int(self.gpus_per_worker[row]),
            topology_level=level,
            topology_required=bool(self.topology_required[row]),
            shaped=True,
        )

    def subset(self, rows: npt.NDArray[np.int64]) -> GangColumns:
        return GangColumns(
            workers=self.workers[rows],
            gpus_per_worker=self.gpus_per_worker[rows],
            topology_level=self.topology_level[rows],
            topology_required=self.topology_required[rows],
        )

    def columns(self) -> dict[str, npt.NDArray[np.generic] | list[str]]:
        """The columns as a frame holds them."""
        return {
            "workers": self.workers,
            "gpus_per_worker": self.gpus_per_worker,
            "topology_level": [TOPOLOGY_LEVELS[i] for i in self.topology_level],
            "topology_required": self.topology_required,
        }


def _count_column(frame: pd.DataFrame, name: str) -> IntArray:
    """An optional non-negative integer column (absent or NaN: 0, to be derived)."""
    if name not in frame.columns:
        return np.zeros(len(frame), dtype=np.int64)
    values = pd.to_numeric(frame[name], errors="coerce").to_numpy(np.float64)
    given = frame[name].notna().to_numpy()
    bad = (given & np.isnan(values)) | (values < 0) | (values != np.round(values))
    bad &= given
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise SpecError(
            name,
            frame[name].iloc[row],
            "must be a positive integer (empty or 0: derived from the other)",
            where=f"job {row}",
        )
    return np.asarray(np.nan_to_num(values, nan=0.0), dtype=np.int64)


def _worker_shape(frame: pd.DataFrame, num_gpu: IntArray) -> tuple[IntArray, IntArray]:
    """``workers`` and ``gpus_per_worker``, one derived from the other where only one is
    given; both 0 where neither is. Their product must be ``num_gpu``."""
    given_workers = workers = _count_column(frame, "workers")
    given_per = per = _count_column(frame, "gpus_per_worker")
    only_w = (workers > 0) & (per == 0)
    only_p = (per > 0) & (workers == 0)
    per = np.where(only_w, num_gpu // np.maximum(workers, 1), per)
    workers = np.where(only_p, num_gpu // np.maximum(per, 1), workers)
    bad = ((workers > 0) | (per > 0)) & ((workers * per != num_gpu) | (per == 0))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        name = "workers" if given_workers[row] > 0 else "gpus_per_worker"
        raise SpecError(
            name,
            int((given_workers if name == "workers" else given_per)[row]),
            f"workers x gpus_per_worker must equal num_gpu ({int(num_gpu[row])}), both positive",
            where=f"job {row}",
        )
    return workers, per


def _topology_columns(frame: pd.DataFrame) -> tuple[IntArray, BoolArray]:
    """``topology_level`` as an index in ``TOPOLOGY_LEVELS`` and ``topology_required``."""
    n = len(frame)
    level = np.zeros(n, dtype=np.int64)
    if "topology_level" in frame.columns:
        names = frame["topology_level"].fillna("").astype(str).str.strip().str.lower()
        codes = {name: i for i, name in enumerate(TOPOLOGY_LEVELS)}
        unknown = ~names.isin(list(codes))
        if unknown.any():
            row = int(np.flatnonzero(unknown.to_numpy())[0])
            valid = ", ".join(repr(x) for x in TOPOLOGY_LEVELS)
            raise SpecError(
                "topology_level", names.iloc[row], f"valid: {valid}", where=f"job {row}"
            )
        level = np.asarray(names.map(codes).to_numpy(), dtype=np.int64)
    required = np.zeros(n, dtype=bool)
    if "topology_required" in frame.columns:
        text = frame["topology_required"].astype(str).str.strip().str.lower()
        unknown = ~text.isin(list(_TRUE | _FALSE))
        if unknown.any():
            row = int(np.flatnonzero(unknown.to_numpy())[0])
            raise SpecError(
                "topology_required",
                frame["topology_required"].iloc[row],
                "valid: true or false",
                where=f"job {row}",
            )
        required = text.isin(list(_TRUE)).to_numpy()
        orphan = required & (level == 0)
        if orphan.any():
            row = int(np.flatnonzero(orphan)[0])
            raise SpecError(
                "topology_required",
                True,
                "needs a topology_level (node, domain, rack or pod)",
                where=f"job {row}",
            )
    return level, required


def _gang_columns(frame: pd.DataFrame, num_gpu: IntArray) -> GangColumns | None:
    """The validated gang columns, or ``None`` when the frame has none of them."""
    if not any(c in frame.columns for c in GANG_COLUMNS):
        return None
    workers, per = _worker_shape(frame, num_gpu)
    level, required = _topology_columns(frame)
    return GangColumns(
        workers=workers, gpus_per_worker=per, topology_level=level, topology_required=required
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
    gang = _gang_columns(frame, num_gpu)
    shape_cols = ["num_gpu", "gpu_milli", "cpu_milli", "memory_bytes", "gpu_models"]
    keyed = frame
    if gang is not None:
        # Jobs of one shape must ask the same gang too (the engine caches "no room" per shape).
        keyed = frame.assign(
            _workers=gang.workers, _level=gang.topology_level, _req=gang.topology_required
        )
        shape_cols += ["_workers", "_level", "_req"]
    shape_id = np.asarray(
        keyed.groupby(shape_cols, sort=True, dropna=False).ngroup(), dtype=np.int64
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
        gang=gang,
    )
