"""Plans as arrays: the step model evaluates a whole batch of plans in one call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import NDArray

from scalewall.catalog.schema import ModelSpec
from scalewall.plan.plan import (
    CP_MODES,
    PRECISIONS,
    QUANTIZED_PRECISIONS,
    RECOMPUTE_MODES,
    ParallelPlan,
    stage_layers,
)

FloatArray = NDArray[np.float64]

RECOMPUTE = {name: float(code) for code, name in enumerate(RECOMPUTE_MODES)}
"""Code of each recompute mode in ``PlanBatch.recompute``: compare by name,
``p.recompute == RECOMPUTE["full"]``, never by order."""
PRECISION = {name: float(code) for code, name in enumerate(PRECISIONS)}
"""Code of each precision in ``PlanBatch.precision``."""
CP_MODE = {name: float(code) for code, name in enumerate(CP_MODES)}
"""Code of each context-parallel mode in ``PlanBatch.cp_mode``."""
QUANTIZED_CODES = tuple(PRECISION[name] for name in QUANTIZED_PRECISIONS)
"""The precision codes whose linear layers quantize their operands (FP8 and FP4 recipes)."""


def is_quantized(precision: FloatArray) -> NDArray[np.bool_]:
    """Rows whose precision code is one of the FP8 or FP4 recipes."""
    # A comparison per code: np.isin costs tens of microseconds per call on a short batch.
    result: NDArray[np.bool_] = np.asarray(precision) == QUANTIZED_CODES[0]
    for code in QUANTIZED_CODES[1:]:
        result = result | (precision == code)
    return result


def is_fp4(precision: FloatArray) -> NDArray[np.bool_]:
    """Rows whose precision code is NVFP4."""
    result: NDArray[np.bool_] = np.asarray(precision) == PRECISION["nvfp4"]
    return result


@dataclass(frozen=True, kw_only=True)
class PlanBatch:
    """One array per plan field (float64; categorical fields as codes), all of one length."""

    tp: FloatArray
    pp: FloatArray
    dp: FloatArray
    cp: FloatArray
    ep: FloatArray
    etp: FloatArray
    vpp: FloatArray
    micro_batch: FloatArray
    global_batch: FloatArray
    local_batch: FloatArray
    """Sequences per replica in one forward-backward call (``ParallelPlan.local_batch``; 0: the
    whole per-replica batch)."""
    seq_len: FloatArray
    recompute: FloatArray
    """Code of the recompute mode (``RECOMPUTE``)."""
    zero: FloatArray
    sequence_parallel: FloatArray
    precision: FloatArray
    """Code of the GEMM precision (``PRECISION``; ``is_quantized`` for the FP8 and FP4 recipes)."""
    cp_mode: FloatArray
    """Code of the context-parallel mode (``CP_MODE``)."""
    layers_first: FloatArray
    layers_middle: FloatArray
    layers_last: FloatArray
    offload_layers: FloatArray
    """Layers whose activations go to host memory (``ParallelPlan.offload_layers``)."""

    def __len__(self) -> int:
        return int(self.tp.shape[0])

    @classmethod
    def from_plans(cls, model: ModelSpec, plans: Sequence[ParallelPlan]) -> PlanBatch:
        """Stack validated plans into arrays."""

        def col(values: Sequence[float]) -> FloatArray:
            return np.asarray(values, dtype=np.float64)

        stages = [stage_layers(model, p) for p in plans]
        return cls(
            tp=col([p.tp for p in plans]),
            pp=col([p.pp for p in plans]),
            dp=col([p.dp for p in plans]),
            cp=col([p.cp for p in plans]),
            ep=col([p.ep for p in plans]),
            etp=col([p.etp for p in plans]),
            vpp=col([p.vpp for p in plans]),
            micro_batch=col([p.micro_batch for p in plans]),
            global_batch=col([p.global_batch for p in plans]),
            local_batch=col([p.local_batch for p in plans]),
            seq_len=col([p.seq_len for p in plans]),
            recompute=col([RECOMPUTE_MODES.index(p.recompute) for p in plans]),
            zero=col([p.zero for p in plans]),
            sequence_parallel=col([float(p.sequence_parallel) for p in plans]),
            precision=col([PRECISIONS.index(p.precision) for p in plans]),
            cp_mode=col([CP_MODES.index(p.cp_mode) for p in plans]),
            layers_first=col([s[0] for s in stages]),
            layers_middle=col([s[1] for s in stages]),
            layers_last=col([s[2] for s in stages]),
            offload_layers=col([p.offload_layers for p in plans]),
        )

    def take(self, index: NDArray[np.intp]) -> PlanBatch:
        """A sub-batch of the given rows."""
        return PlanBatch(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

    def plan(self, row: int) -> ParallelPlan:
        """Row ``row`` as a ParallelPlan."""

        def i(name: str) -> int:
            return int(getattr(self, name)[row])

        pp = i("pp")
        even = pp > 1 and i("layers_first") == i("layers_middle") == i("layers_last")
        return ParallelPlan(
            tp=i("tp"),
            pp=pp,
            dp=i("dp"),
            cp=i("cp"),
            ep=i("ep"),
            etp=i("etp"),
            vpp=i("vpp"),
            micro_batch=i("micro_batch"),
            global_batch=i("global_batch"),
            local_batch=i("local_batch"),
            seq_len=i("seq_len"),
            recompute=RECOMPUTE_MODES[i("recompute")],
            zero=i("zero"),
            sequence_parallel=bool(i("sequence_parallel")),
            precision=PRECISIONS[i("precision")],
            cp_mode=CP_MODES[i("cp_mode")],
            first_stage_layers=0 if even or pp == 1 else i("layers_first"),
            last_stage_layers=0 if even or pp == 1 else i("layers_last"),
            offload_layers=i("offload_layers"),
        )
