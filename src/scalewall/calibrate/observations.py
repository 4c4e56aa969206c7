"""Measurements turned into observations the fit can compare with the model.

An observation set holds measured values and a function that predicts the same quantities from a
set of parameter values: GEMM and attention records through ``perf.compute``, device-memory
copies through the memory-bound kernel time, collective records through ``perf.collectives`` on
the measuring cluster, and step times of real runs through ``perf.step.step_model``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scalewall import catalog
from scalewall.calibrate.parameters import apply
from scalewall.catalog.schema import Accelerator
from scalewall.cluster import resolve_cluster
from scalewall.perf import collectives as coll
from scalewall.perf.assumptions import Efficiency
from scalewall.perf.batch import PlanBatch
from scalewall.perf.compute import Device, gemm_time_s, memory_bound_time_s
from scalewall.perf.step import StepArrays, step_model
from scalewall.plan.plan import PRECISIONS, ParallelPlan
from scalewall.plan.topology import Cluster
from scalewall.probe.measurements import Measurements, Record
from scalewall.validation.harness import predict_cases
from scalewall.validation.runs import PUBLISHED_METRICS, Case, case_cluster

FloatArray = NDArray[np.float64]
Predictor = Callable[[Mapping[str, Any], Efficiency], FloatArray]
ManyPredictor = Callable[[Mapping[str, FloatArray], Efficiency], FloatArray]

#: Measurement dtypes the step model has a tensor peak for (index into PRECISIONS).
DTYPE_PRECISION = {"bf16": "bf16", "fp16": "fp16", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8"}
#: Published step metrics, most direct first (the runs format's own order); a case contributes
#: its first one only, as the others are the same measurement in another unit. The MFU a run
#: would have had with full recompute is not its step.
STEP_METRICS = tuple(m for m in PUBLISHED_METRICS if m != "mfu_with_full_recompute")
COLLECTIVE_TIME = {
    "all_reduce": coll.allreduce_time_s,
    "reduce_scatter": coll.reduce_scatter_time_s,
    "all_gather": coll.allgather_time_s,
    "all_to_all": coll.alltoall_time_s,
}


@dataclass(frozen=True, kw_only=True)
class Observations:
    """Measured values of one kind from one source, and the model's prediction of them."""

    kind: str
    """``gemm``, ``attention``, ``hbm``, ``collective`` or ``step``."""
    source: str
    labels: tuple[str, ...]
    measured: FloatArray
    predict: Predictor
    """Parameter values (fitted names only) and the base Efficiency -> predicted values."""
    gpus: tuple[int, ...] = ()
    """GPUs per observation (step and collective kinds), for reports."""
    accelerators: tuple[str, ...] = ()
    """Catalog ids of the accelerators the observations ran on."""
    clocks: Mapping[str, float] = field(default_factory=dict)
    """Accelerator id -> the ``training_clock_frac`` the predictions start from where it is not
    the catalog's (a refitted baseline's clocks); a fitted clock's default."""
    predict_many: ManyPredictor | None = None
    """Parameter values as arrays of k points -> predictions, shape (k, observations), in one
    step-model call per group (the Jacobian's points); None: call ``predict`` per point."""

    def __len__(self) -> int:
        return len(self.labels)

    def predictions(self, values: Mapping[str, FloatArray], base: Efficiency) -> FloatArray:
        """Predictions at k parameter points (arrays of length k), shape (k, observations)."""
        if self.predict_many is not None:
            return self.predict_many(values, base)
        k = len(next(iter(values.values()))) if values else 1
        rows = [self.predict({n: float(v[i]) for n, v in values.items()}, base) for i in range(k)]
        return np.vstack(rows)


@dataclass(frozen=True, kw_only=True)
class Collected:
    """Everything read from the inputs: the observation sets and what was skipped, and why."""

    sets: tuple[Observations, ...] = ()
    notes: tuple[str, ...] = ()
    sources: tuple[dict[str, Any], ...] = field(default_factory=tuple)


# ---------------------------------------------------------------- accelerator and cluster


def match_accelerator(device_name: str, memory_bytes: int = 0) -> Accelerator | None:
    """The catalog accelerator a driver's device name describes (``NVIDIA H100 80GB HBM3``)."""
    name = device_name.lower()
    hits = [a for a in catalog.accelerators().values() if a.id.split("-")[0] in name]
    if not hits:
        return None
    if memory_bytes > 0:
        return min(hits, key=lambda a: (abs(a.hbm_bytes - memory_bytes), a.id))
    return sorted(hits, key=lambda a: a.id)[0]


def _device(
    acc: Accelerator, codes: FloatArray, values: Mapping[str, Any], base: Efficiency
) -> tuple[Device, Efficiency]:
    eff, _ = apply(values, base)
    if "training_clock_frac" in values:
        acc = dataclasses.replace(acc, training_clock_frac=values["training_clock_frac"])
    return Device.of(acc, codes, eff), eff


# ---------------------------------------------------------------- compute and memory records


def _gemm_set(records: Sequence[Record], acc: Accelerator, source: str) -> Observations:
    shape = np.array([r.shape for r in records], dtype=np.float64)
    codes = np.array(
        [PRECISIONS.index(DTYPE_PRECISION[r.dtype]) for r in records], dtype=np.float64
    )

    def predict(values: Mapping[str, Any], base: Efficiency) -> FloatArray:
        dev, eff = _device(acc, codes, values, base)
        bytes_el = np.where(codes == 2, 1.0, 2.0)
        out: FloatArray = gemm_time_s(shape[:, 0], shape[:, 1], shape[:, 2], dev, eff) + 0.0
        # gemm_time_s takes one element size; fp8 streams half the bytes, which only matters
        # for memory-bound shapes, so recompute those with 1-byte elements.
        if (bytes_el == 1.0).any():
            fp8 = gemm_time_s(
                shape[:, 0], shape[:, 1], shape[:, 2], dev, eff, bytes_per_element=1.0
            )
            out = np.where(bytes_el == 1.0, fp8, out)
        return out

    return Observations(
        kind="gemm",
        source=source,
        labels=tuple(f"gemm {r.dtype} {'x'.join(map(str, r.shape))}" for r in records),
        measured=np.array([r.time_s for r in records]),
        predict=predict,
        accelerators=(acc.id,),
    )


def attention_flop(record: Record) -> float:
    """FLOPs of a causal attention record, the FlashAttention-2 benchmark convention."""
    b, h, t, d = record.shape
    forward = 4.0 * b * h * t * t * d / 2.0
    return forward * (3.5 if record.variant == "causal_fwd_bwd" else 1.0)


def _attention_set(records: Sequence[Record], acc: Accelerator, source: str) -> Observations:
    flop = np.array([attention_flop(r) for r in records])
    codes = np.zeros(len(records))

    def predict(values: Mapping[str, Any], base: Efficiency) -> FloatArray:
        dev, _ = _device(acc, codes, values, base)
        result: FloatArray = flop / (dev.peak_bf16_flop_per_s * dev.attention_frac)
        return result

    return Observations(
        kind="attention",
        source=source,
        labels=tuple(f"attention {r.variant} {'x'.join(map(str, r.shape))}" for r in records),
        measured=np.array([r.time_s for r in records]),
        predict=predict,
        accelerators=(acc.id,),
    )


def _hbm_set(records: Sequence[Record], acc: Accelerator, source: str) -> Observations:
    moved = np.array([2.0 * r.size_bytes for r in records])  # copy: one read, one write
    codes = np.zeros(len(records))

    def predict(values: Mapping[str, Any], base: Efficiency) -> FloatArray:
        dev, eff = _device(acc, codes, values, base)
        return memory_bound_time_s(moved, dev, eff)

    return Observations(
        kind="hbm",
        source=source,
        labels=tuple(f"hbm copy {r.size_bytes} B" for r in records),
        measured=np.array([r.time_s for r in records]),
        predict=predict,
        accelerators=(acc.id,),
    )


def _collective_set(records: Sequence[Record], cluster: Cluster, source: str) -> Observations:
    kinds = [r.kind for r in records]
    n = np.array([r.group_size for r in records], dtype=np.float64)
    size = np.array([r.size_bytes for r in records], dtype=np.float64)

    def predict(values: Mapping[str, Any], base: Efficiency) -> FloatArray:
        eff, _ = apply(values, base)
        out = np.zeros(len(kinds))
        for kind, fn in COLLECTIVE_TIME.items():
            rows = np.array([k == kind for k in kinds])
            if rows.any():
                one = np.ones(int(rows.sum()))
                out[rows] = fn(cluster, eff, n[rows], one, size[rows])
        return out

    return Observations(
        kind="collective",
        source=source,
        labels=tuple(
            f"{r.kind} {r.variant} n={r.group_size} nodes={r.num_nodes} {r.size_bytes} B"
            for r in records
        ),
        measured=np.array([r.time_s for r in records]),
        predict=predict,
        gpus=tuple(r.group_size for r in records),
        accelerators=(cluster.accelerator.id,),
    )


def from_measurements(
    m: Measurements,
    source: str,
    *,
    accelerator: Accelerator | None = None,
    cluster: Cluster | None = None,
) -> Collected:
    """Observation sets from one measurements file (probe output or an nccl-tests import).

    The accelerator comes from ``accelerator``, else ``cluster``, else the device name in the
    header; records the model cannot express (fp32 GEMMs, broadcast, a CPU device) are skipped
    with a note.
    """
    notes: list[str] = []
    acc = accelerator or (cluster.accelerator if cluster else None)
    if acc is None:
        acc = match_accelerator(m.machine.device_name, m.machine.device_memory_bytes)
    if acc is None:
        notes.append(
            f"{source}: no catalog accelerator matches device {m.machine.device_name!r}; "
            f"its {len(m.records)} records are skipped (give --gpu)"
        )
        return Collected(notes=tuple(notes))
    sets: list[Observations] = []
    gemm = [r for r in m.of_kind("gemm") if r.dtype in DTYPE_PRECISION]
    attention = [r for r in m.of_kind("attention") if r.dtype in ("bf16", "fp16")]
    hbm = list(m.of_kind("hbm"))
    colls = [r for r in m.records if r.kind in COLLECTIVE_TIME and r.group_size > 1]
    skipped = len(m.records) - len(gemm) - len(attention) - len(hbm) - len(colls)
    if skipped:
        notes.append(
            f"{source}: {skipped} records skipped (dtype without a tensor peak, broadcast/reduce, "
            "or one-rank collectives)"
        )
    if gemm:
        sets.append(_gemm_set(gemm, acc, source))
    if attention:
        sets.append(_attention_set(attention, acc, source))
    if hbm:
        sets.append(_hbm_set(hbm, acc, source))
    if colls:
        if cluster is None:
            gpus = max(m.machine.world_size, max(r.group_size for r in colls))
            cluster = resolve_cluster(None, gpu=acc.id, gpus=gpus)
        if cluster.gpus_per_node != m.machine.devices_per_node:
            notes.append(
                f"{source}: measured with {m.machine.devices_per_node} devices per node, modelled "
                f"on {cluster.gpus_per_node} per node ({cluster.system.id}); give --cluster"
            )
        sets.append(_collective_set(colls, cluster, source))
    return Collected(sets=tuple(sets), notes=tuple(notes))


# ---------------------------------------------------------------- step times of real runs


def step_metric(case: Case) -> str | None:
    """The published metric a case contributes, or None if it has no time-like one."""
    for metric in STEP_METRICS:
        if isinstance(case.published.get(metric), int | float):
            return metric
    return None


def metric_values(case: Case, cluster: Cluster, out: StepArrays, metric: str) -> FloatArray:
    """The model's value of a published metric, per row of ``out``."""
    if metric == "tflops_per_gpu" or metric == "fraction_of_peak":
        hardware = case.published.get("tflops_convention", "model") == "hardware"
        tflops = out.hardware_tflops_per_gpu if hardware else out.model_tflops_per_gpu
        if metric == "tflops_per_gpu":
            return tflops
        result: FloatArray = tflops * 1e12 / cluster.accelerator.peak_16bit_flop_per_s
        return result
    if metric == "tokens_per_s_per_gpu":
        per_gpu: FloatArray = out.tokens_per_s / float(case.hardware["gpus"])
        return per_gpu
    values: FloatArray = getattr(out, metric)
    return values


@dataclass(frozen=True, kw_only=True)
class _Group:
    """Cases that share a model shape, a cluster and a stack: one step-model call."""

    rows: list[int]
    cases: list[Case]
    plans: list[ParallelPlan]
    cluster: Cluster


def _group_key(case: Case) -> str:
    shape = dataclasses.replace(case.model, id="", name="")
    return repr((shape, json.dumps(case.hardware, sort_keys=True), case.stack))


def case_plans(
    cases: Sequence[Case], base: Efficiency, clocks: Mapping[str, float] | None = None
) -> list[ParallelPlan]:
    """The plan each case ran: published fields, null ones chosen by the model under ``base``
    (and ``clocks``, accelerator id -> ``training_clock_frac``, where given), once per scaling
    series as ``validate`` chooses them (``predict_cases``)."""
    plans = []
    for pred in predict_cases(cases, base, clocks):
        if isinstance(pred, Exception):
            raise pred
        plans.append(pred.plan)
    return plans


def from_cases(
    cases: Sequence[Case],
    source: str,
    base: Efficiency,
    plans: Sequence[ParallelPlan] | None = None,
    clocks: Mapping[str, float] | None = None,
) -> Collected:
    """One observation set of the cases' published step metric (cases without one skipped).

    Plans are fixed before fitting (null fields chosen under ``base``) so the fit is smooth.
    ``clocks`` (accelerator id -> ``training_clock_frac``) replaces the catalog's sustained
    clocks, as ``predict_case`` takes them: a baseline refitted without these cases.
    """
    clocks = dict(clocks or {})
    usable = [c for c in cases if step_metric(c)]
    notes = []
    if len(usable) < len(cases):
        notes.append(f"{source}: {len(cases) - len(usable)} runs without a step-time metric")
    if not usable:
        return Collected(notes=tuple(notes))
    if plans is None:
        chosen = case_plans(usable, base, clocks)
    else:
        by_id = {c.id: p for c, p in zip(cases, plans, strict=True)}
        chosen = [by_id[c.id] for c in usable]
    groups: dict[str, _Group] = {}
    for row, (case, plan) in enumerate(zip(usable, chosen, strict=True)):
        key = _group_key(case)
        if key not in groups:
            groups[key] = _Group(
                rows=[], cases=[], plans=[], cluster=case_cluster(case.hardware, clocks)
            )
        groups[key].rows.append(row)
        groups[key].cases.append(case)
        groups[key].plans.append(plan)
    batches = {k: PlanBatch.from_plans(g.cases[0].model, g.plans) for k, g in groups.items()}

    def predict(values: Mapping[str, Any], base_eff: Efficiency) -> FloatArray:
        out = np.zeros(len(usable))
        for key, g in groups.items():
            eff, cluster = apply(values, base_eff, g.cluster)
            assert cluster is not None
            arrays = step_model(g.cases[0].model, cluster, batches[key], eff, g.cases[0].stack)
            by_metric: dict[str, FloatArray] = {}
            for i, (row, case) in enumerate(zip(g.rows, g.cases, strict=True)):
                metric = step_metric(case)
                assert metric is not None
                if metric not in by_metric:
                    by_metric[metric] = metric_values(case, cluster, arrays, metric)
                out[row] = by_metric[metric][i]
        return out

    def predict_many(values: Mapping[str, FloatArray], base_eff: Efficiency) -> FloatArray:
        # Row r of a group's batch is plan r // k at point r % k: the plans replicated, the
        # parameter arrays tiled, one step-model call per group.
        k = len(next(iter(values.values()))) if values else 1
        out = np.zeros((k, len(usable)))
        for key, g in groups.items():
            m = len(g.plans)
            tiled = {n: np.tile(np.asarray(v, dtype=np.float64), m) for n, v in values.items()}
            eff, cluster = apply(tiled, base_eff, g.cluster)
            assert cluster is not None
            batch = batches[key].take(np.repeat(np.arange(m, dtype=np.intp), k))
            arrays = step_model(g.cases[0].model, cluster, batch, eff, g.cases[0].stack)
            for i, (row, case) in enumerate(zip(g.rows, g.cases, strict=True)):
                metric = step_metric(case)
                assert metric is not None
                out[:, row] = metric_values(case, cluster, arrays, metric).reshape(m, k)[i]
        return out

    measured = np.array([float(c.published[step_metric(c) or ""]) for c in usable])
    return Collected(
        sets=(
            Observations(
                kind="step",
                source=source,
                labels=tuple(c.id for c in usable),
                measured=measured,
                predict=predict,
                gpus=tuple(int(c.hardware["gpus"]) for c in usable),
                accelerators=tuple(sorted({g.cluster.accelerator.id for g in groups.values()})),
                clocks=clocks,
                predict_many=predict_many,
            ),
        ),
        notes=tuple(notes),
    )


def merge(parts: Sequence[Collected]) -> Collected:
    return Collected(
        sets=tuple(s for p in parts for s in p.sets),
        notes=tuple(n for p in parts for n in p.notes),
        sources=tuple(s for p in parts for s in p.sources),
    )
