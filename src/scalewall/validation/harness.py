"""Predict every published run and compare with what its authors measured.

A null plan field means the source did not publish it: the authors tuned it, so the harness
evaluates every candidate value in one batch and keeps the fastest plan that fits in memory,
reporting the values it chose.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from scalewall.perf.assumptions import Efficiency
from scalewall.perf.batch import PlanBatch
from scalewall.perf.step import StepArrays, step_model
from scalewall.plan.plan import ParallelPlan, stage_layers, validate
from scalewall.units import GIB
from scalewall.validation.runs import Case, case_cluster

MICRO_BATCH_CANDIDATES = (1, 2, 4, 8, 16)
NEAR_BEST_FRAC = 0.02
"""Plans within 2% of the fastest are treated as equally fast when filling null fields."""
PER_REPLICA_BATCH_MULTIPLES = (1, 2, 4, 8)
FP8_RECIPES = {"per-tensor": "fp8", "blockwise": "fp8-block", "mxfp8": "mxfp8"}
"""A case's ``training.fp8_recipe`` (an extension key) to the plan's precision."""
"""Candidate per-replica batches (in units of pp micro-batches) when a source gives no batch."""


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """One published metric of one case against its prediction."""

    id: str
    group: str
    metric: str
    published: float
    predicted: float
    chosen: dict[str, Any] = field(default_factory=dict)

    @property
    def error_frac(self) -> float:
        return (self.predicted - self.published) / self.published

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "group": self.group,
            "metric": self.metric,
            "published": self.published,
            "predicted": self.predicted,
            "error_frac": self.error_frac,
            "chosen": self.chosen,
        }


def _options(case: Case) -> dict[str, list[Any]]:
    """Candidate values per plan field: the published value, or every sensible one if null."""
    plan, training, model = case.plan, case.training, case.model
    tp, pp, dp = plan.get("tp") or 1, plan.get("pp") or 1, plan.get("dp") or 1
    opts: dict[str, list[Any]] = {
        "tp": [tp],
        "pp": [pp],
        "dp": [dp],
        "cp": [plan.get("cp") or 1],
        "ep": [plan.get("ep") or 1],
        "etp": [plan.get("etp") or 1],
        "cp_mode": [plan.get("cp_mode") or "ring"],
        "seq_len": [training["seq_len"]],
    }
    gb = training.get("global_batch")
    opts["global_batch"] = [gb] if gb else [dp * pp * k for k in PER_REPLICA_BATCH_MULTIPLES]
    mb = training.get("micro_batch")
    opts["micro_batch"] = [mb] if mb else list(MICRO_BATCH_CANDIDATES)
    vpp = plan.get("vpp")
    per_stage = model.layers // pp if model.layers % pp == 0 else (model.layers + 2) // pp
    opts["vpp"] = [vpp] if vpp else [v for v in range(1, per_stage + 1) if per_stage % v == 0]
    sp = plan.get("sequence_parallel")
    opts["sequence_parallel"] = [sp] if sp is not None else ([True, False] if tp > 1 else [False])
    rc = plan.get("recompute")
    opts["recompute"] = [rc] if rc else ["none", "selective", "full"]
    zero, dist = plan.get("zero"), plan.get("distributed_optimizer")
    if zero is None and dist is None:
        opts["zero"] = [0, 1]
    else:
        opts["zero"] = [max(zero or 0, 1 if dist else 0)]
    prec = training.get("precision") or "bf16"
    opts["precision"] = [FP8_RECIPES.get(training.get("fp8_recipe") or "", prec)]
    if plan.get("first_stage_layers") and plan.get("last_stage_layers"):
        opts["first_stage_layers"] = [plan["first_stage_layers"]]
        opts["last_stage_layers"] = [plan["last_stage_layers"]]
    elif model.layers % pp and pp > 1:
        # uneven stages: first and last one layer fewer, as Llama 3 does
        middle = (model.layers + 2) // pp
        opts["first_stage_layers"] = [model.layers - middle * (pp - 2) - (middle - 1)]
        opts["last_stage_layers"] = [middle - 1]
    return opts


def candidate_plans(case: Case) -> tuple[list[ParallelPlan], list[str]]:
    """Every valid plan for the case, and the names of the fields that were null."""
    opts = _options(case)
    free = [k for k, v in opts.items() if len(v) > 1]
    plans = []
    names = list(opts)
    for values in itertools.product(*(opts[k] for k in names)):
        plan = ParallelPlan(**dict(zip(names, values, strict=True)))
        try:
            validate(case.model, plan, case.hardware["gpus"])
            stage_layers(case.model, plan)
        except ValueError:
            continue
        plans.append(plan)
    return plans, free


@dataclass(frozen=True, kw_only=True)
class CasePrediction:
    case: Case
    plan: ParallelPlan
    chosen: dict[str, Any]
    row: dict[str, float]
    memory_gib: dict[str, float]
    fits: bool
    """Predicted to fit, within ``Efficiency.memory_fit_margin_frac`` over the limit."""
    near_memory_limit: bool
    """Within the margin of the limit either way (``StepArrays.near_memory_limit``)."""
    full_recompute_mfu: float


def _row(out: StepArrays, i: int) -> dict[str, float]:
    return {
        "step_time_s": float(out.step_time_s[i]),
        "tokens_per_s": float(out.tokens_per_s[i]),
        "mfu": float(out.mfu[i]),
        "hfu": float(out.hfu[i]),
        "model_tflops": float(out.model_tflops_per_gpu[i]),
        "hardware_tflops": float(out.hardware_tflops_per_gpu[i]),
    }


def predict_case(case: Case, eff: Efficiency | None = None) -> CasePrediction:
    """The prediction for one case, with null plan fields chosen by the model."""
    eff = eff or Efficiency()
    cluster = case_cluster(case.hardware)
    plans, free = candidate_plans(case)
    if not plans:
        raise ValueError(f"{case.id}: no valid plan for the published configuration")
    batch = PlanBatch.from_plans(case.model, plans)
    out = step_model(case.model, cluster, batch, eff, case.stack)
    # Admissible: within the memory model's margin over the limit (a published run ran, so a
    # plan the model cannot tell from fitting counts). Among admissible plans (all of them
    # for memory-only cases where none is), those within NEAR_BEST_FRAC of the fastest count
    # as equally good; of these a clear fit wins, then the simplest (fewest virtual stages,
    # then least memory), as practitioners avoid interleaving for no gain.
    admissible = out.memory_headroom_frac >= -eff.memory_fit_margin_frac
    pool = admissible if admissible.any() else np.ones_like(admissible)
    speed = np.where(pool, out.tokens_per_s, -np.inf)
    near = speed >= speed.max() * (1.0 - NEAR_BEST_FRAC)
    order = np.lexsort((out.memory_total_bytes, batch.vpp, ~out.fits, ~near))
    best = int(order[0])
    plan = plans[best]
    full = replace(plan, recompute="full", sequence_parallel=False)
    full_out = step_model(
        case.model, cluster, PlanBatch.from_plans(case.model, [full]), eff, case.stack
    )
    return CasePrediction(
        case=case,
        plan=plan,
        chosen={k: getattr(plan, k) for k in free},
        row=_row(out, best),
        memory_gib={k: float(v[best]) / GIB for k, v in out.memory_bytes.items()},
        fits=bool(admissible[best]),
        near_memory_limit=bool(out.near_memory_limit[best]),
        full_recompute_mfu=float(full_out.mfu[0]),
    )


def compare(pred: CasePrediction) -> list[Comparison]:
    """One comparison per published numeric metric."""
    case, pub, row = pred.case, pred.case.published, pred.row
    peak_tflops = case_cluster(case.hardware).accelerator.peak_bf16_flop_per_s / 1e12
    convention = pub.get("tflops_convention", "model")
    tflops = row["hardware_tflops"] if convention == "hardware" else row["model_tflops"]
    predicted = {
        "step_time_s": row["step_time_s"],
        "tokens_per_s": row["tokens_per_s"],
        "tflops_per_gpu": tflops,
        "mfu": row["mfu"],
        "hfu": row["hfu"],
        "fraction_of_peak": tflops / peak_tflops,
        "mfu_with_full_recompute": pred.full_recompute_mfu,
    }
    out = []
    for metric, value in pub.items():
        if metric in predicted and isinstance(value, int | float):
            out.append(
                Comparison(
                    id=case.id,
                    group=case.group,
                    metric=metric,
                    published=float(value),
                    predicted=predicted[metric],
                    chosen=pred.chosen,
                )
            )
    memory = pub.get("memory_gib") or {}
    wgo = sum(pred.memory_gib[k] for k in ("weights", "gradients", "optimizer_state"))
    mem_pred = {"weights_grads_optimizer": wgo, "activations": pred.memory_gib["activations"]}
    for part, value in memory.items():
        out.append(
            Comparison(
                id=case.id,
                group=case.group,
                metric=f"memory_gib.{part}",
                published=float(value),
                predicted=mem_pred[part],
                chosen=pred.chosen,
            )
        )
    return out


@dataclass(frozen=True, kw_only=True)
class ValidationReport:
    comparisons: list[Comparison]
    fits: dict[str, tuple[bool, bool]]
    """Case id -> (published fits, predicted fits) where the source states it."""

    def groups(self) -> dict[str, dict[str, float]]:
        """MAPE and worst absolute error per group, over time/throughput metrics."""
        by_group: dict[str, list[float]] = defaultdict(list)
        for c in self.comparisons:
            if not c.metric.startswith("memory"):
                by_group[c.group].append(abs(c.error_frac))
        return {
            g: {
                "mape": float(np.mean(e)),
                "max_abs_error": float(np.max(e)),
                "metrics": float(len(e)),
            }
            for g, e in sorted(by_group.items())
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "cases": [c.to_dict() for c in self.comparisons],
            "groups": self.groups(),
            "fits": {k: {"published": v[0], "predicted": v[1]} for k, v in self.fits.items()},
        }


def validate_cases(cases: Sequence[Case], eff: Efficiency | None = None) -> ValidationReport:
    comparisons: list[Comparison] = []
    fits: dict[str, tuple[bool, bool]] = {}
    for case in cases:
        pred = predict_case(case, eff)
        comparisons.extend(compare(pred))
        if "fits" in case.published:
            fits[case.id] = (bool(case.published["fits"]), pred.fits)
    return ValidationReport(comparisons=comparisons, fits=fits)
