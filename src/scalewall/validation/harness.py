"""Predict every published run and compare with what its authors measured.

A null plan field means the source did not publish it: the authors tuned it, so the harness
evaluates every candidate value in one batch and keeps the fastest plan that fits in memory,
reporting the values it chose. The cases of one scaling series (``series_key``: one model, stack,
accelerator and plan, grown in data parallelism) get one choice for the whole series, as a
scaling experiment tunes its plan once and grows the data-parallel width.
"""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scalewall import catalog
from scalewall.errors import ScalewallError, SpecError
from scalewall.perf.assumptions import Efficiency
from scalewall.perf.batch import RECOMPUTE, PlanBatch
from scalewall.perf.memory import host_bytes_per_gpu, offload_to_fit
from scalewall.perf.step import StepArrays, step_model
from scalewall.plan.plan import (
    PRECISIONS,
    STACK_PLAN_FIELDS,
    ParallelPlan,
    balanced_stage_split,
    check_precision,
    default_stage_split,
    module_ladder,
    recompute_module_flags,
    rule_stage_split,
    stack_allows,
    stage_layers,
    validate,
)
from scalewall.plan.topology import Cluster
from scalewall.stack import resolve_stack
from scalewall.units import GIB
from scalewall.validation.runs import (
    MEMORY_PARTS,
    PUBLISHED_METRICS,
    Case,
    CaseMessage,
    case_cluster,
)
from scalewall.workload import counts

MICRO_BATCH_CANDIDATES = (1, 2, 4, 8, 16)
MAX_OPEN_MICRO_BATCH = 64
"""Largest micro-batch an open ``micro_batch`` tries beyond the candidates: the divisors of
the per-replica batch up to this (LLM Foundry's tables run up to 40 sequences at a time)."""
LAYOUT_FIELDS = ("tp", "pp", "cp", "ep", "etp")
"""The plan fields of a parallel layout; with ``dp`` they multiply to the GPU count."""
OPEN_LAYOUTS = 4
"""Where a source leaves the layout open (tp, pp or cp, or ep of an MoE model), how many of
the best layouts the plan search (``search.search``, restricted to the stated widths) finds
are then evaluated with every other open field, as the published plans are."""
OPEN_LAYOUT_PLANS = 40
"""How many of the search's best plans the layouts are taken from (plans differing only in
micro-batch, schedule or recompute share a layout)."""
NEAR_BEST_FRAC = 0.02
"""Plans within 2% of the fastest are treated as equally fast when filling null fields."""
PER_REPLICA_BATCH_MULTIPLES = (1, 2, 4, 8)
"""Candidate per-replica batches (in units of pp micro-batches) when a source gives no batch."""
FP8_RECIPES = {
    "per-tensor": "fp8",
    "blockwise": "fp8-block",
    "mxfp8": "mxfp8",
    "nvfp4": "nvfp4",
}
"""A case's ``training.fp8_recipe`` (an extension key) to the plan's precision."""
FloatArray = NDArray[np.float64]
CASE_ERRORS = (ValueError, KeyError, TypeError, ArithmeticError)
"""What a case the model cannot evaluate raises (a zero dimension, say)."""
KNOWN_PUBLISHED = frozenset((*PUBLISHED_METRICS, "memory_gib", "fits", "tflops_convention"))


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """One published metric of one case against its prediction."""

    id: str
    group: str
    metric: str
    published: float
    predicted: float
    stack: str = ""
    """The software-stack preset the case was predicted with."""
    chosen: dict[str, Any] = field(default_factory=dict)
    """Plan fields the case left open and the values the harness chose."""

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
            "stack": self.stack,
            "chosen": self.chosen,
        }


def _zero_stage(case: Case) -> int:
    """The case's ZeRO stage: the stated one (the distributed optimizer at least 1), or where
    the source says neither, the sharding the stack runs (FSDP full shard is ZeRO-3,
    Megatron-Core's recipes use the distributed optimizer, Megatron-LM 2021 neither)."""
    zero, dist = case.plan.get("zero"), case.plan.get("distributed_optimizer")
    if zero is None and dist is None:
        return int(case.stack.zero_stage)
    return max(zero or 0, 1 if dist else 0)


def layout_open(case: Case) -> bool:
    """Whether the source leaves the parallel layout open: tp, pp or cp null, or ep null for
    an MoE model (a dense model's ep is 1)."""
    plan = case.plan
    if any(plan.get(k) is None for k in ("tp", "pp", "cp")):
        return True
    return case.model.is_moe and plan.get("ep") is None


def open_layouts(case: Case, cluster: Cluster, eff: Efficiency) -> list[dict[str, int]]:
    """The layouts (``LAYOUT_FIELDS``) to evaluate: the stated one ({} : the case's own
    fields), or, where the source leaves the layout open, those of the plan search's best
    plans with the stated widths and micro-batch held (``OPEN_LAYOUTS`` of them, the best
    first), as the authors tuned it: ranked at another micro-batch, a layout can lead there
    and trail at the stated one. A search that finds no plan that fits leaves the stated
    fields, whose error then names the reason."""
    if not layout_open(case):
        return [{}]
    from scalewall.search.engine import search
    from scalewall.search.space import SearchSpace

    plan, training = case.plan, case.training
    derived = _derived_width(case)

    def held(name: str) -> tuple[int, ...]:
        value = plan.get(name) or derived.get(name)
        return (int(value),) if value else ()

    etp = plan.get("etp")
    micro = int(training.get("micro_batch") or 0)
    dp_values = held("dp") or _local_batch_dps(case)
    space = SearchSpace(
        precisions=(_precision(case),),
        tp_beyond_scale_up="tp" in derived,
        tp_values=held("tp"),
        pp_values=held("pp") or _split_stages(case),
        cp_values=held("cp"),
        dp_values=dp_values,
        vpp_values=held("vpp"),
        max_vpp=max(SearchSpace.max_vpp, int(plan.get("vpp") or 1)),
        ep_values=held("ep") if case.model.is_moe else (1,),
        micro_batch_values=(micro,) if micro else (),
        max_micro_batch=max(SearchSpace.max_micro_batch, micro),
        expert_tp=("1", "tp") if not etp else (("1",) if etp == 1 else ("tp",)),
        zero=(_zero_stage(case),),
    )
    try:
        result = search(
            case.model,
            cluster,
            global_batch=training.get("global_batch") or None,
            seq_len=training["seq_len"],
            space=space,
            top_k=OPEN_LAYOUT_PLANS,
            stack=case.stack,
            efficiency=eff,
        )
    except (ScalewallError, ValueError):
        return [{}]
    layouts: list[dict[str, int]] = []
    dp = plan.get("dp")
    for ranked in result.top:
        layout = {k: int(getattr(ranked.plan, k)) for k in LAYOUT_FIELDS}
        if dp and ranked.plan.dp != dp:
            continue
        if layout not in layouts:
            layouts.append(layout)
        if len(layouts) == OPEN_LAYOUTS:
            break
    return layouts or [{}]


def _local_batch_dps(case: Case) -> tuple[int, ...]:
    """Data-parallel widths an open layout may take beside a stated ``local_batch`` (the
    sequences one replica runs per forward-backward call, which must divide its share of the
    global batch): the divisors of the GPUs whose share of the batch it divides; () where the
    case states no local batch or no global batch, or none divides (any width: the case's
    error then names the reason)."""
    local = int(case.training.get("local_batch") or 0)
    batch = int(case.training.get("global_batch") or 0)
    gpus = int(case.hardware["gpus"])
    if not local or not batch:
        return ()
    return tuple(
        d
        for d in range(1, gpus + 1)
        if gpus % d == 0 and batch % d == 0 and (batch // d) % local == 0
    )


def _options(case: Case, layout: Mapping[str, int] | None = None) -> dict[str, list[Any]]:
    """Candidate values per plan field: the published value, or every sensible one if null;
    ``layout`` fills the open layout fields (``open_layouts``)."""
    plan, training, model = case.plan, case.training, case.model
    layout = layout or {}

    def width(name: str) -> int:
        return int(layout.get(name) or plan.get(name) or 1)

    tp, pp, cp = width("tp"), width("pp"), width("cp")
    # A data-parallel width left open fills the GPUs the other widths leave (dp = n / (tp pp
    # cp)), as every framework derives it; a non-whole quotient is the plan's error below.
    dp = plan.get("dp") or max(1, case.hardware["gpus"] // (tp * pp * cp))
    opts: dict[str, list[Any]] = {
        "tp": [tp],
        "pp": [pp],
        "dp": [dp],
        "cp": [cp],
        "ep": [width("ep")],
        "etp": [width("etp")],
        "cp_mode": [plan.get("cp_mode") or "ring"],
        "seq_len": [training["seq_len"]],
    }
    gb = training.get("global_batch")
    mb = training.get("micro_batch")
    # An open batch: per replica, 1-8 times pp micro-batches of the stated micro-batch, or of
    # the stated local batch (what one forward-backward call of a replica runs).
    local = training.get("local_batch")
    unit = dp * (local or pp * (mb or 1))
    opts["global_batch"] = [gb] if gb else [unit * k for k in PER_REPLICA_BATCH_MULTIPLES]
    opts["micro_batch"] = [mb] if mb else _open_micro_batches(gb, dp, pp)
    opts["local_batch"] = [training.get("local_batch") or 0]
    splits = _stage_splits(case, pp)
    fulls = set()
    for first, last in splits:
        split = ParallelPlan(pp=pp, first_stage_layers=first, last_stage_layers=last)
        first_layers, middle, _ = stage_layers(model, split)
        fulls.add(middle or first_layers)
    vpp = plan.get("vpp") or case.stack.usual_vpp
    divisors = sorted({v for full in fulls for v in range(1, full + 1) if full % v == 0})
    opts["vpp"] = [vpp] if vpp else divisors
    sp = plan.get("sequence_parallel")
    opts["sequence_parallel"] = [sp] if sp is not None else ([True, False] if tp > 1 else [False])
    stated = plan.get("recompute")
    # An open mode: the stack's usual one, or a heavier one where it does not fit.
    opts["recompute"] = [stated] if stated else list(AT_LEAST[case.stack.usual_recompute])
    opts["zero"] = [_zero_stage(case)]
    opts["precision"] = [_precision(case)]
    # The stage split travels as one option: a (first, last) pair.
    opts["stage_split"] = splits
    # A stated offload count is kept; an open one starts at none and takes the fewest layers
    # that fit where the plan needs them (``_evaluate``).
    opts["offload_layers"] = [plan.get("offload_layers") or 0]
    # What the case's stack runs: an open field takes only values the stack implements. A
    # stated one is a fact of the run and is kept (``stack_conflicts`` warns of it).
    for name in STACK_PLAN_FIELDS:
        if plan.get(name) is None:
            opts[name] = [v for v in opts[name] if stack_allows(case.stack, name, v) is None]
    return opts


AT_LEAST = {
    "": ("none", "selective", "full"),
    "none": ("none", "selective", "full"),
    "selective": ("selective", "full"),
    "full": ("full",),
}
"""Recompute modes an open recompute may take, by the stack's ``usual_recompute``: that mode
or one that keeps fewer activations (``""``: no convention, any mode)."""


def _open_micro_batches(global_batch: int | None, dp: int, pp: int) -> list[int]:
    """Micro-batches an open ``micro_batch`` may take: ``MICRO_BATCH_CANDIDATES``, and without
    a pipeline every divisor of the per-replica batch up to ``MAX_OPEN_MICRO_BATCH`` (a replica
    of 26 sequences runs 26 or 13 at a time, not only 1 or 2: with no bubble to trade against,
    data-parallel stacks run the largest micro-batch that fits, as LLM Foundry's
    ``device_train_microbatch_size: auto`` searches for). A pipeline keeps the candidates: its
    micro-batches trade size against the bubble, and its recipes use powers of two."""
    per_replica = global_batch // dp if global_batch and global_batch % dp == 0 else 0
    if pp > 1:
        per_replica = 0
    top = min(per_replica, MAX_OPEN_MICRO_BATCH)
    divisors = {d for d in range(1, top + 1) if per_replica % d == 0}
    return sorted(set(MICRO_BATCH_CANDIDATES) | divisors)


def stack_conflicts(case: Case) -> list[CaseMessage]:
    """One warning per stated plan field the case's stack is catalogued as unable to run: the
    run states it, so it is predicted as stated, and either the catalogue or the case is off."""
    out = []
    for name in STACK_PLAN_FIELDS:
        stated = case.plan.get(name)
        valid = None if stated is None else stack_allows(case.stack, name, stated)
        if valid is not None:
            why = valid.split(": ", 1)[-1]
            text = f"plan.{name}={stated!r} is stated but {why}; predicted as stated"
            out.append(CaseMessage(id=case.id, text=text))
    return out


def _precision(case: Case) -> str:
    """The plan precision of a case: its ``fp8_recipe`` where given, else its ``precision``;
    a recipe or precision the model does not know, or one the accelerator has no tensor cores
    for, is that case's error."""
    training = case.training
    recipe = training.get("fp8_recipe")
    if recipe is not None and recipe not in FP8_RECIPES:
        raise SpecError("training.fp8_recipe", recipe, f"one of {', '.join(FP8_RECIPES)}")
    precision = FP8_RECIPES[recipe] if recipe else (training.get("precision") or "bf16")
    if precision not in PRECISIONS:
        raise SpecError("training.precision", precision, f"one of {', '.join(PRECISIONS)}")
    try:
        check_precision(catalog.accelerator(case.hardware["gpu"]), precision)
    except SpecError as exc:
        raise SpecError("training.precision", precision, exc.valid) from None
    return str(precision)


def _derived_width(case: Case) -> dict[str, int]:
    """The one width of tp, pp and cp a case leaves open when it states the others and dp:
    the GPUs they leave (a TP width across nodes included, as the run had it)."""
    plan, gpus = case.plan, int(case.hardware["gpus"])
    names = ("tp", "pp", "cp")
    open_names = [k for k in names if plan.get(k) is None]
    if len(open_names) != 1 or not plan.get("dp"):
        return {}
    stated = int(plan["dp"])
    for k in names:
        if k not in open_names:
            stated *= int(plan[k])
    if gpus % stated:
        return {}
    return {open_names[0]: gpus // stated}


def _split_stages(case: Case) -> tuple[int, ...]:
    """The pipeline widths that can hold what a case states with its ``pp`` open: its first
    and last stage layers, or an interleaved schedule (``vpp`` > 1 needs stages to
    interleave); empty where it states neither, every width may."""
    first, last = case.plan.get("first_stage_layers"), case.plan.get("last_stage_layers")
    vpp = int(case.plan.get("vpp") or 1)
    if not (first or last or vpp > 1):
        return ()
    out = []
    for pp in range(2, min(case.model.layers, case.hardware["gpus"]) + 1):
        if case.hardware["gpus"] % pp:
            continue
        # The stated split, or the candidates an open one takes (``_stage_splits``).
        if any(_holds(case, pp, a, b, vpp) for a, b in _safe_splits(case, pp)):
            out.append(pp)
    return tuple(out)


def _safe_splits(case: Case, pp: int) -> list[tuple[int, int]]:
    """``_stage_splits``, or none where ``pp`` cannot split the layers at all."""
    try:
        return _stage_splits(case, pp)
    except SpecError:
        return []


def _holds(case: Case, pp: int, first: int, last: int, vpp: int) -> bool:
    """Whether ``pp`` stages split (first, last) hold the model's layers and ``vpp`` virtual
    stages each (``plan.validate``'s rule: an even split's stages divide into vpp chunks, an
    uneven one's busiest stage has a layer per chunk)."""
    split = ParallelPlan(pp=pp, first_stage_layers=first, last_stage_layers=last)
    try:
        first_layers, middle, _ = stage_layers(case.model, split)
    except SpecError:
        return False
    full = middle or first_layers
    if vpp <= 1:
        return True
    return full >= vpp if (first or last) else full % vpp == 0


def _stage_splits(case: Case, pp: int) -> list[tuple[int, int]]:
    """Candidate (first, last) stage layers: the case's ``pipeline_layout`` or
    ``first_stage_layers`` / ``last_stage_layers`` when given (either alone, as Megatron-Core's
    ``decoder_first_pipeline_num_layers`` allows); else Megatron-Core's default rules
    (``default_stage_split``) where one of them divides; else, where a run needed a layout of
    its own (``--pipeline-model-parallel-layout``), every split whose middle stages hold the
    fewest layers they can and whose first and last stages hold at most as many, among which
    the validator takes the fastest, as a tuned layout would (``candidate_splits``)."""
    plan, layers = case.plan, case.model.layers
    layout = plan.get("pipeline_layout")
    if layout is not None:
        return [_layout_split(layout, layers, pp)]
    first, last = plan.get("first_stage_layers") or 0, plan.get("last_stage_layers") or 0
    if first or last:
        return [(first, last)]
    if case.stack.pipeline_split == "compute-balanced":
        return [balanced_stage_split(case.model, pp)]
    return candidate_splits(layers, pp)


def candidate_splits(layers: int, pp: int) -> list[tuple[int, int]]:
    """(first, last) splits a run with ``pp`` stages could have used when the source gives
    none: Megatron-Core's rule where one divides (``rule_stage_split``); otherwise its fallback
    (``default_stage_split``) and every split with the middle stages at ceil(layers / pp)
    layers and the first and last at 1 to as many (DeepSeek-V3's 61 layers on 16 stages:
    (4, 1) as its recipes lay them out, (3, 2), (2, 3), (1, 4))."""
    out = [default_stage_split(layers, pp)]
    if rule_stage_split(layers, pp) is not None:
        return out
    middle = -(-layers // pp)
    rest = layers - (pp - 2) * middle
    for first in range(1, middle + 1):
        last = rest - first
        if 1 <= last <= middle and (first, last) not in out:
            out.append((first, last))
    return out


def _layout_split(layout: list[int], layers: int, pp: int) -> tuple[int, int]:
    """(first, last) of a ``pipeline_layout`` the plan can hold: pp stages of at least a layer
    adding to the model's layers, middle stages a layer apart at most (the step model runs
    them all at the busiest one's pace)."""
    if len(layout) != pp or sum(layout) != layers or min(layout) < 1:
        raise SpecError(
            "plan.pipeline_layout",
            layout,
            f"needs pp = {pp} stages of at least a layer adding to the {layers} layers",
        )
    middle = layout[1:-1]
    if middle and max(middle) - min(middle) > 1:
        raise SpecError(
            "plan.pipeline_layout", layout, "middle stages more than a layer apart are not modelled"
        )
    return (layout[0], layout[-1]) if pp > 1 else (0, 0)


def candidate_plans(
    case: Case, layouts: Sequence[Mapping[str, int]] = ({},)
) -> tuple[list[ParallelPlan], list[str]]:
    """Every valid plan for the case over ``layouts`` (``open_layouts``; the stated layout by
    default), and the names of the fields the harness chose (null in the case, or a stage
    split it filled in). Raises SpecError with the first reason a candidate was invalid when
    none is valid."""
    moe = case.model.is_moe
    # Every layout width the case leaves open is the harness's choice, whether the plan search
    # filled it or, finding no plan that fits, left it at 1.
    free: list[str] = [
        k for k in LAYOUT_FIELDS if case.plan.get(k) is None and (moe or k not in ("ep", "etp"))
    ]
    plans = []
    reason = ""
    for layout in layouts:
        opts = _options(case, layout)
        free += [k for k, v in opts.items() if len(v) > 1 and k != "stage_split"]
        if case.plan.get("recompute") is None:
            free.append("recompute")  # the stack's usual mode counts as a choice too
        if opts["stage_split"][0][0] and not _split_given(case):
            free += ["first_stage_layers", "last_stage_layers"]
        names = list(opts)
        for values in itertools.product(*(opts[k] for k in names)):
            fields = dict(zip(names, values, strict=True))
            first, last = fields.pop("stage_split")
            plan = ParallelPlan(**fields, first_stage_layers=first, last_stage_layers=last)
            try:
                validate(case.model, plan, case.hardware["gpus"])
            except ValueError as exc:
                reason = reason or str(exc)
                continue
            plans.append(plan)
    if not plans:
        raise ScalewallError(f"no valid plan for the published configuration: {reason}")
    return plans, list(dict.fromkeys(free))


def _split_given(case: Case) -> bool:
    keys = ("pipeline_layout", "first_stage_layers", "last_stage_layers")
    return any(case.plan.get(k) for k in keys)


@dataclass(frozen=True, kw_only=True)
class CasePrediction:
    case: Case
    plan: ParallelPlan
    chosen: dict[str, Any]
    row: dict[str, float]
    memory_gib: dict[str, float]
    fits: bool
    """Predicted to fit, within ``Efficiency.memory.memory_fit_margin_frac`` over the limit."""
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


@dataclass(frozen=True, kw_only=True)
class _Evaluated:
    """Every candidate plan of one case, evaluated in one batch."""

    case: Case
    cluster: Cluster
    plans: list[ParallelPlan]
    free: list[str]
    batch: PlanBatch
    out: StepArrays
    admissible: NDArray[np.bool_]
    """Within the memory model's margin over the limit (a published run ran, so a plan the
    model cannot tell from fitting counts)."""
    margin: float
    """``Efficiency.memory.memory_fit_margin_frac``."""
    modules: tuple[str, ...] = ()
    """Recompute modules the validator added for a plan to fit (``module_ladder``)."""

    @property
    def speed(self) -> FloatArray:
        """Tokens/s of the admissible plans, -inf elsewhere. Where none is admissible (the
        memory model is wrong for this case, or it states memory only), the plans within the
        margin of the nearest to fitting stand in: the run fitted, so it was one of the plans
        that need least, not the fastest of those that need most."""
        pool = self.admissible
        if not pool.any():
            headroom = self.out.memory_headroom_frac
            pool = headroom >= headroom.max() - self.margin
        if not pool.any():  # no finite headroom to rank by
            pool = np.ones_like(pool)
        return np.where(pool, self.out.tokens_per_s, -np.inf)


def _evaluate(case: Case, eff: Efficiency, clocks: Mapping[str, float] | None) -> _Evaluated:
    """Every candidate plan of the case; where its stack adds recompute modules until a plan
    fits (``Stack.selective_modules``), a selective recompute the case does not spell out that
    fits no plan is the first rung of ``module_ladder`` that does."""
    ev = _evaluate_with(case, eff, clocks)
    stated = case.plan.get("recompute")
    if (
        not case.stack.selective_modules
        or case.recompute_modules
        or stated not in (None, "selective")
    ):
        return ev
    selective = ev.batch.recompute == RECOMPUTE["selective"]
    if not selective.any() or (ev.admissible & selective).any():
        return ev
    for rung in module_ladder(case.model):
        flags = recompute_module_flags(list(rung))
        if all(getattr(case.stack, name) for name in flags):
            continue
        variant = replace(case, stack=resolve_stack(case.stack, flags))
        trial = _evaluate_with(variant, eff, clocks)
        # The variant's candidates are its own: an open layout is searched with its stack.
        if (trial.admissible & (trial.batch.recompute == RECOMPUTE["selective"])).any():
            # The modules change only the selective plans: where another one is taken, the
            # case keeps its own stack.
            chosen = trial.plans[_choose(trial)]
            return replace(trial, modules=rung) if chosen.recompute == "selective" else ev
    return ev


def _evaluate_with(case: Case, eff: Efficiency, clocks: Mapping[str, float] | None) -> _Evaluated:
    cluster = case_cluster(case.hardware, clocks)
    plans, free = candidate_plans(case, open_layouts(case, cluster, eff))
    batch = PlanBatch.from_plans(case.model, plans)
    if case.plan.get("offload_layers") is None:
        plans, batch, free = _offload_open(case, cluster, plans, batch, free, eff)
    out = step_model(case.model, cluster, batch, eff, case.stack)
    admissible = out.memory_headroom_frac >= -eff.memory.memory_fit_margin_frac
    return _Evaluated(
        case=case,
        cluster=cluster,
        plans=plans,
        free=free,
        batch=batch,
        out=out,
        admissible=admissible,
        margin=eff.memory.memory_fit_margin_frac,
    )


def _offload_open(
    case: Case,
    cluster: Cluster,
    plans: list[ParallelPlan],
    batch: PlanBatch,
    free: list[str],
    eff: Efficiency,
) -> tuple[list[ParallelPlan], PlanBatch, list[str]]:
    """Candidates with an open ``offload_layers``: the fewest offloaded layers that fit
    (``offload_to_fit``), as a run that offloads sets ``cpu_offloading_num_layers``, added as
    further candidates beside the plans without it."""
    system = cluster.system
    host = host_bytes_per_gpu(system.host_memory_bytes, system.gpus_per_node, eff)
    need = offload_to_fit(
        case.model, batch, eff, case.stack, cluster.accelerator.hbm_capacity_bytes, host
    )
    rows = np.flatnonzero(need > 0)
    if not len(rows):
        return plans, batch, free
    extra = [replace(plans[i], offload_layers=int(need[i])) for i in rows]
    plans = plans + extra
    return plans, PlanBatch.from_plans(case.model, plans), [*free, "offload_layers"]


def _choose(ev: _Evaluated) -> int:
    """The plan a case ran: among plans within NEAR_BEST_FRAC of the fastest admissible one
    (equally good), a clear fit wins, then the simplest (fewest virtual stages, then least
    memory), as practitioners avoid interleaving for no gain."""
    return _choose_within(ev, np.arange(len(ev.plans), dtype=np.int64))


def _simplest(
    near: NDArray[np.bool_], fits: NDArray[np.bool_], vpp: FloatArray, memory: FloatArray
) -> int:
    """The first of the equally fast (``near``) candidates: a clear fit, then the fewest
    virtual stages, then the least memory."""
    return int(np.lexsort((memory, vpp, ~fits, ~near))[0])


def _prediction(ev: _Evaluated, best: int, eff: Efficiency) -> CasePrediction:
    case, out, plan = ev.case, ev.out, ev.plans[best]
    chosen: dict[str, Any] = {k: getattr(plan, k) for k in ev.free}
    if ev.modules and plan.recompute == "selective":
        chosen["recompute_modules"] = list(ev.modules)
    full = replace(plan, recompute="full", sequence_parallel=False)
    full_out = step_model(
        case.model, ev.cluster, PlanBatch.from_plans(case.model, [full]), eff, case.stack
    )
    return CasePrediction(
        case=case,
        plan=plan,
        chosen=chosen,
        row=_row(out, best),
        memory_gib={k: float(v[best]) / GIB for k, v in out.memory_bytes.items()},
        fits=bool(ev.admissible[best]),
        near_memory_limit=bool(out.near_memory_limit[best]),
        full_recompute_mfu=float(full_out.mfu[0]),
    )


def predict_case(
    case: Case, eff: Efficiency | None = None, clocks: Mapping[str, float] | None = None
) -> CasePrediction:
    """The prediction for one case, with null plan fields chosen by the model; ``clocks``
    (accelerator id -> ``training_clock_frac``) replaces the catalog's sustained clocks."""
    eff = eff or Efficiency()
    ev = _evaluate(case, eff, clocks)
    return _prediction(ev, _choose(ev), eff)


def series_key(case: Case) -> str:
    """Cases with equal keys are one scaling series: the same model, stack, accelerator and
    training settings, and the same published plan fields but the data-parallel width, on
    clusters that differ only in size (and the global batch with it)."""
    shape = replace(case.model, id="", name="")
    hardware = {k: v for k, v in case.hardware.items() if k != "gpus"}
    training = {k: v for k, v in case.training.items() if k != "global_batch"}
    plan = {k: v for k, v in case.plan.items() if k != "dp"}
    return repr((shape, case.stack, json.dumps([hardware, training, plan], sort_keys=True)))


SERIES_RETUNED = ("micro_batch",)
"""Open fields a scaling series shares only where every case has the same candidates. Without
a pipeline the micro-batch candidates are the divisors of each case's own per-replica batch
(``_open_micro_batches``), which the data-parallel width changes, and the sources re-tune it
(LLM Foundry's H100 table runs MPT-1B at 20 sequences per micro-batch on 8 to 64 GPUs but
MPT-30B at 3 on 8 GPUs and 14 on 32): each case then takes its own (``_choose_within``). With
a pipeline every case has the same power-of-two candidates and the series shares one, as
MegaScale's Megatron-LM series from 256 to 12,288 GPUs was run."""


def _choose_within(ev: _Evaluated, rows: NDArray[np.int64]) -> int:
    """``_choose`` among the candidate ``rows`` of one case (the rows of a series' other fields,
    or all of them)."""
    speed = ev.speed[rows]
    near = speed >= speed.max() * (1.0 - NEAR_BEST_FRAC)
    fits, vpp = ev.out.fits[rows], ev.batch.vpp[rows]
    return int(rows[_simplest(near, fits, vpp, ev.out.memory_total_bytes[rows])])


def _choose_series(evs: Sequence[_Evaluated]) -> list[int] | None:
    """One choice of the null fields for a whole series, as a scaling experiment is run: the
    plan tuned once and the data-parallel width grown. The choice is admissible in every case
    and the best by mean log throughput relative to each case's own best; among choices
    within NEAR_BEST_FRAC of it, the same tie-breaks as ``_choose``. None where no choice is
    admissible in every case (each case then chooses alone)."""
    free = evs[0].free
    if "global_batch" in free or any(ev.free != free for ev in evs):
        return None
    # An open micro-batch whose candidates differ between the cases is tuned again in every
    # case (``SERIES_RETUNED``): for each choice of the other fields, the case's own pick.
    retuned = [
        k
        for k in SERIES_RETUNED
        if k in free and len({frozenset(getattr(p, k) for p in ev.plans) for ev in evs}) > 1
    ]
    shared = [k for k in free if k not in retuned]
    index: list[dict[tuple[Any, ...], int]] = []
    for ev in evs:
        by_key: dict[tuple[Any, ...], list[int]] = defaultdict(list)
        for i, p in enumerate(ev.plans):
            by_key[tuple(getattr(p, k) for k in shared)].append(i)
        if not retuned:  # the last plan of a key, as the series shares every field
            index.append({k: v[-1] for k, v in by_key.items()})
        else:
            index.append({k: _choose_within(ev, np.array(v)) for k, v in by_key.items()})
    keys = [k for k in index[0] if all(k in ix for ix in index[1:])]
    rows = np.array([[ix[k] for ix in index] for k in keys], dtype=np.int64).reshape(
        len(keys), len(evs)
    )
    if rows.size == 0:
        return None
    speed = np.stack([ev.speed[rows[:, j]] / ev.speed.max() for j, ev in enumerate(evs)], 1)
    ok = np.all(np.isfinite(speed) & (speed > 0), axis=1)
    if not ok.any():
        return None
    score = np.where(ok, np.mean(np.log(np.where(ok[:, None], speed, 1.0)), axis=1), -np.inf)
    near = score >= score.max() + np.log1p(-NEAR_BEST_FRAC)
    fits = np.all(np.stack([ev.out.fits[rows[:, j]] for j, ev in enumerate(evs)], 1), axis=1)
    vpp = evs[0].batch.vpp[rows[:, 0]]
    memory = np.sum([ev.out.memory_total_bytes[rows[:, j]] for j, ev in enumerate(evs)], axis=0)
    return [int(i) for i in rows[_simplest(near, fits, vpp, memory)]]


def predict_cases(
    cases: Sequence[Case],
    eff: Efficiency | None = None,
    clocks: Mapping[str, float] | None = None,
    on_case: Callable[[int, int], None] | None = None,
) -> list[CasePrediction | Exception]:
    """``predict_case`` for every case, with the null fields of a scaling series
    (``series_key``) chosen once for the whole series (``_choose_series``). A case the model
    cannot evaluate is its exception in the list; the others still run."""
    eff = eff or Efficiency()
    evaluated: list[_Evaluated | Exception] = []
    for done, case in enumerate(cases):
        if on_case is not None:
            on_case(done, len(cases))
        try:
            evaluated.append(_evaluate(case, eff, clocks))
        except CASE_ERRORS as exc:
            evaluated.append(exc)
    chosen: dict[int, int] = {}
    series: dict[str, list[int]] = defaultdict(list)
    for i, ev in enumerate(evaluated):
        if isinstance(ev, _Evaluated):
            series[series_key(ev.case)].append(i)
    for members in series.values():
        group = [ev for i in members if isinstance(ev := evaluated[i], _Evaluated)]
        picks = _choose_series(group) if len(group) > 1 else None
        chosen.update(zip(members, picks or [_choose(e) for e in group], strict=True))
    out: list[CasePrediction | Exception] = []
    for i, ev in enumerate(evaluated):
        if isinstance(ev, Exception):
            out.append(ev)
            continue
        try:
            out.append(_prediction(ev, chosen[i], eff))
        except CASE_ERRORS as exc:
            out.append(exc)
    return out


def predicted_metrics(pred: CasePrediction) -> dict[str, float]:
    """The prediction of every numeric metric the runs format documents."""
    case, row = pred.case, pred.row
    peak_tflops = case_cluster(case.hardware).accelerator.peak_16bit_flop_per_s / 1e12
    convention = case.published.get("tflops_convention", "model")
    tflops = row["hardware_tflops"] if convention == "hardware" else row["model_tflops"]
    if convention == "model-causal":
        seq = int(case.training["seq_len"])
        full = counts.model_flop_per_token(case.model, seq)
        masked = 3.0 * counts.attention_flop_per_token(case.model, seq, causal_half=True)
        tflops *= (full - masked) / full
    out = {
        "step_time_s": row["step_time_s"],
        "tokens_per_s": row["tokens_per_s"],
        "tokens_per_s_per_gpu": row["tokens_per_s"] / case.hardware["gpus"],
        "tflops_per_gpu": tflops,
        "mfu": row["mfu"],
        "hfu": row["hfu"],
        "fraction_of_peak": tflops / peak_tflops,
        "mfu_with_full_recompute": pred.full_recompute_mfu,
    }
    assert set(out) == set(PUBLISHED_METRICS)
    wgo = sum(pred.memory_gib[k] for k in ("weights", "gradients", "optimizer_state"))
    memory = {"weights_grads_optimizer": wgo, "activations": pred.memory_gib["activations"]}
    assert set(memory) == set(MEMORY_PARTS)
    out |= {f"memory_gib.{k}": v for k, v in memory.items()}
    return out


def compare(pred: CasePrediction) -> list[Comparison]:
    """One comparison per published numeric metric (memory parts as ``memory_gib.PART``)."""
    case = pred.case
    predicted = predicted_metrics(pred)
    memory = case.published.get("memory_gib") or {}
    published = {k: v for k, v in case.published.items() if k in PUBLISHED_METRICS}
    published |= {f"memory_gib.{k}": v for k, v in memory.items()}
    return [
        Comparison(
            id=case.id,
            group=case.group,
            metric=metric,
            published=float(value),
            predicted=predicted[metric],
            stack=case.stack.id,
            chosen=pred.chosen,
        )
        for metric, value in published.items()
        if metric in predicted and value is not None
    ]


def unknown_published(case: Case) -> list[CaseMessage]:
    """One warning per ``published`` key (or memory part) the format does not document: it
    is not compared."""
    memory = case.published.get("memory_gib") or {}
    if not any(k in case.published for k in KNOWN_PUBLISHED if k != "tflops_convention"):
        return [CaseMessage(id=case.id, text="published states no metric: nothing compared")]
    keys = [k for k in case.published if k not in KNOWN_PUBLISHED]
    keys += [f"memory_gib.{k}" for k in memory if k not in MEMORY_PARTS]
    return [
        CaseMessage(
            id=case.id, text=f"published.{k} is not a metric the format documents; not compared"
        )
        for k in keys
    ]


@dataclass(frozen=True, kw_only=True)
class ValidationReport:
    comparisons: list[Comparison]
    fits: dict[str, tuple[bool, bool]]
    """Case id -> (published fits, predicted fits) where the source states it or, publishing a
    time or a throughput, shows the run ran (``ran_fit``)."""
    errors: list[CaseMessage] = field(default_factory=list)
    """One per case that could not be read or modelled; the other cases are compared."""
    warnings: list[CaseMessage] = field(default_factory=list)
    """Published figures that were not compared, one per key."""
    stacks: dict[str, str] = field(default_factory=dict)
    """Case id -> the software-stack preset it was predicted with."""

    @property
    def fit_mismatches(self) -> list[str]:
        """Cases whose predicted fit differs from the published one."""
        return [k for k, (published, predicted) in self.fits.items() if published != predicted]

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
            "fits": {
                k: {"published": v[0], "predicted": v[1], "mismatch": v[0] != v[1]}
                for k, v in self.fits.items()
            },
            "stacks": self.stacks,
            "errors": [e.to_dict() for e in self.errors],
            "warnings": [w.to_dict() for w in self.warnings],
        }


def validate_cases(
    cases: Sequence[Case],
    eff: Efficiency | None = None,
    read_errors: Sequence[CaseMessage] = (),
    clocks: Mapping[str, float] | None = None,
    on_case: Callable[[int, int], None] | None = None,
) -> ValidationReport:
    """Predict and compare every case; a case that cannot be modelled becomes one error (with
    ``read_errors``, those of cases that could not be read) and the others still run.
    ``clocks`` as in ``predict_case``; ``on_case(done, total)`` after each case."""
    comparisons: list[Comparison] = []
    fits: dict[str, tuple[bool, bool]] = {}
    errors, warnings = list(read_errors), []
    stacks: dict[str, str] = {}
    predictions = predict_cases(cases, eff, clocks, on_case)
    for case, pred in zip(cases, predictions, strict=True):
        if isinstance(pred, Exception):
            # A shape or plan the model cannot evaluate (a zero dimension, say) is that case's
            # error; the others still run.
            errors.append(CaseMessage(id=case.id, text=_one_line(pred)))
            continue
        if not all(np.isfinite(v) for v in pred.row.values()):
            errors.append(CaseMessage(id=case.id, text="the prediction is not finite"))
            continue
        comparisons.extend(compare(pred))
        warnings.extend(unknown_published(case))
        warnings.extend(stack_conflicts(case))
        warnings.extend(
            CaseMessage(id=case.id, text=f"{k} is not a field of the runs format; not read")
            for k in case.ignored
        )
        warnings.extend(CaseMessage(id=case.id, text=text) for text in case.read_warnings)
        stacks[case.id] = case.stack.id
        published_fit = ran_fit(case.published)
        if published_fit is not None:
            fits[case.id] = (published_fit, pred.fits)
    return ValidationReport(
        comparisons=comparisons, fits=fits, errors=errors, warnings=warnings, stacks=stacks
    )


def ran_fit(published: Mapping[str, Any]) -> bool | None:
    """Whether the source says the configuration fitted in memory: its ``fits`` where it states
    one, else true where it publishes a time or a throughput (the run ran), else None."""
    if published.get("fits") is not None:
        return bool(published["fits"])
    if any(published.get(name) is not None for name in PUBLISHED_METRICS):
        return True
    return None


def _one_line(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"required key {exc.args[0]!r} is missing"
    if isinstance(exc, ValueError):
        return " ".join(str(exc).split())
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"
