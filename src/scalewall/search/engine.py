"""``search``: enumerate every valid plan, drop those that do not fit, rank the rest.

The step model runs once over all plans that fit (in chunks of ``chunk_rows`` to bound memory);
the memory model, about 30 times cheaper, prunes first. Results carry the top K plans with
their breakdown and one line saying what limits each, the counts of plans enumerated, pruned
and evaluated, and the sorted scores of all feasible plans so any plan's rank can be found.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from scalewall._result import ResultDisplay
from scalewall.catalog.schema import ModelSpec
from scalewall.cluster import resolve_cluster
from scalewall.errors import SpecError
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import RECOMPUTE, PlanBatch
from scalewall.perf.memory import host_bytes_per_gpu, offload_to_fit
from scalewall.perf.step import memory_model, step_model
from scalewall.plan.defaults import PLAN_DEFAULTS
from scalewall.plan.plan import ParallelPlan, module_ladder, recompute_module_flags
from scalewall.plan.topology import Cluster
from scalewall.search.objective import DEFAULT_TOKEN_BUDGET, Objective, ObjectiveContext, objective
from scalewall.search.space import SearchSpace, enumerate_plans
from scalewall.stack import StackSpec, resolve_stack
from scalewall.units import GIB
from scalewall.workload.user import model_from_args

FloatArray = NDArray[np.float64]

DEFAULT_SEQ_LEN = PLAN_DEFAULTS.seq_len
"""Sequence length when none is given (capped by the model's context): the plan default,
Llama 3's pre-training length (arXiv 2407.21783, Sec. 3.4.1)."""
DEFAULT_GLOBAL_BATCH_TOKENS = 16 * 2**20
"""Tokens per optimizer step when no batch is given: Llama 3 405B's 16M tokens per step
(arXiv 2407.21783, Sec. 3.4.1: 2,048 sequences of 8,192 tokens)."""
CHUNK_ROWS = 2**18
"""Plans per step-model call: bounds the temporaries (about 100 arrays of this length)."""
MEMORY_WARN_FRAC = 0.95
"""A plan using more of the HBM than this is called memory-bound in its limiter line."""

PART_LABELS = {
    "compute": "compute",
    "recompute": "activation recomputation",
    "tp_comm": "exposed TP communication",
    "cp_comm": "exposed CP communication",
    "ep_comm": "exposed expert all-to-all",
    "moe_imbalance": "expert load imbalance or padding",
    "host_overhead": "host-bound kernel issue",
    "grad_accumulation": "per-micro-batch gradient accumulation",
    "offload": "exposed activation copies to and from host memory",
    "pp_comm": "exposed pipeline sends",
    "pipeline_bubble": "pipeline bubble",
    "dp_comm": "exposed DP communication",
    "fsdp_comm": "exposed ZeRO-3/FSDP per-layer collectives",
    "step_sync": "per-step synchronisation",
    "optimizer": "optimizer step",
    "straggler": "stragglers",
    "other": "fixed step overhead",
}

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True, kw_only=True)
class RankedPlan:
    """One plan of the top K with its prediction."""

    rank: int
    plan: ParallelPlan
    score: float
    objective_value: float
    """The score in the objective's unit (tokens/s, days, ...)."""
    step_time_s: float
    tokens_per_s: float
    mfu: float
    hfu: float
    memory_total_bytes: float
    hbm_bytes: float
    """Usable HBM the plan was fitted against (the driver's total, ``hbm_capacity_bytes``)."""
    near_memory_limit: bool
    """Fits, but within ``Efficiency.memory.memory_fit_margin_frac`` of the limit: the memory model
    cannot promise it fits."""
    breakdown: dict[str, float]
    """Seconds per step by part; the parts add up to ``step_time_s``."""
    limiter: str
    """The largest part of the step other than compute."""
    limit_line: str
    """One line saying what limits the plan."""
    equivalents: tuple[ParallelPlan, ...] = ()
    """Other plans whose score, step time, memory and every breakdown part equal this one's
    (to ``EQUIVALENT_REL_TOL``): collapsed into this row, best-ordered."""
    recompute_modules: tuple[str, ...] = ()
    """Megatron-Core recompute modules the plan adds to its stack's selective recompute to fit
    (``plan.module_ladder``; empty: the stack's own)."""

    def equivalent_knobs(self) -> list[dict[str, Any]]:
        """For each equivalent plan, the plan fields where it differs from this one."""
        mine = dataclasses.asdict(self.plan)
        return [
            {k: v for k, v in dataclasses.asdict(p).items() if v != mine[k]}
            for p in self.equivalents
        ]

    def to_dict(self) -> dict[str, Any]:
        plan = {k: getattr(self.plan, k) for k in self.plan.__dataclass_fields__}
        return {
            "rank": self.rank,
            "plan": plan,
            "score": self.score,
            "objective_value": self.objective_value,
            "step_time_s": self.step_time_s,
            "tokens_per_s": self.tokens_per_s,
            "mfu": self.mfu,
            "hfu": self.hfu,
            "memory_total_bytes": self.memory_total_bytes,
            "hbm_bytes": self.hbm_bytes,
            "near_memory_limit": self.near_memory_limit,
            "breakdown_s": self.breakdown,
            "limiter": self.limiter,
            "limit_line": self.limit_line,
            "equivalents": self.equivalent_knobs(),
            "recompute_modules": list(self.recompute_modules),
        }


@dataclass(frozen=True, kw_only=True)
class SearchCounts:
    enumerated: int
    """Valid plans generated."""
    pruned_memory: int
    """Plans dropped because they do not fit in HBM."""
    evaluated: int
    """Plans passed through the step model."""


@dataclass(frozen=True, kw_only=True, repr=False)
class SearchResult(ResultDisplay):
    """What a search found; ``top`` is empty when no plan fits (``reason`` says why)."""

    model: str
    cluster: str
    num_gpus: int
    global_batch: int
    """Sequences per step."""
    seq_len: int
    objective: str
    objective_unit: str
    counts: SearchCounts
    top: tuple[RankedPlan, ...]
    elapsed_s: float
    reason: str = ""
    scores: FloatArray = field(default_factory=lambda: np.zeros(0), compare=False, repr=False)
    """Scores of every feasible plan, best first."""

    @property
    def best(self) -> RankedPlan | None:
        return self.top[0] if self.top else None

    @property
    def plans_per_s(self) -> float:
        return self.counts.evaluated / self.elapsed_s if self.elapsed_s > 0 else float("inf")

    def rank_of(self, score: float) -> int:
        """1 + the number of feasible plans that score strictly better than ``score``."""
        return 1 + int(np.count_nonzero(self.scores > score))

    def to_dict(self) -> dict[str, Any]:
        """The ``scalewall-search/1`` document (``scalewall schema search``)."""
        return {
            "format": "scalewall-search/1",
            "model": self.model,
            "cluster": self.cluster,
            "gpus": self.num_gpus,
            "global_batch": self.global_batch,
            "global_batch_tokens": self.global_batch * self.seq_len,
            "seq_len": self.seq_len,
            "objective": self.objective,
            "objective_unit": self.objective_unit,
            "counts": {
                "enumerated": self.counts.enumerated,
                "pruned_memory": self.counts.pruned_memory,
                "evaluated": self.counts.evaluated,
            },
            "elapsed_s": self.elapsed_s,
            "reason": self.reason,
            "top": [r.to_dict() for r in self.top],
        }

    def to_pandas(self) -> pd.DataFrame:
        """One row per top plan: plan fields, metrics and the breakdown (``<part>_s``)."""
        import pandas as pd

        rows = []
        for r in self.top:
            row: dict[str, Any] = {"rank": r.rank}
            row.update({k: getattr(r.plan, k) for k in r.plan.__dataclass_fields__})
            row.update(
                objective_value=r.objective_value,
                step_time_s=r.step_time_s,
                tokens_per_s=r.tokens_per_s,
                mfu=r.mfu,
                hfu=r.hfu,
                memory_total_bytes=r.memory_total_bytes,
                limiter=r.limiter,
                limit_line=r.limit_line,
                equivalent_plans=len(r.equivalents),
            )
            row.update({f"{k}_s": v for k, v in r.breakdown.items()})
            rows.append(row)
        return pd.DataFrame(rows)


def _why(part: str, plan: ParallelPlan) -> str:
    m = plan.num_micro_batches
    texts = {
        "recompute": f"{plan.recompute} recomputation redoes forward work to save memory",
        "tp_comm": f"TP={plan.tp} collectives on the critical path of every layer",
        "cp_comm": f"CP={plan.cp} {plan.cp_mode} exchange not hidden behind attention",
        "ep_comm": f"EP={plan.ep} token dispatch and combine not hidden behind compute",
        "moe_imbalance": "the busiest expert rank (or the padded expert buffers) sets the pace of "
        "the expert GEMMs",
        "host_overhead": "the CPU issues kernels slower than the GPU runs them "
        "(small per-GPU work, many local experts; CUDA graphs remove it)",
        "grad_accumulation": f"each of {m} micro-batches adds its weight gradients into the "
        "reduced buffer in a pass of its own (the stack does not fuse it into the GEMM)",
        "offload": f"{plan.offload_layers} layers' activations cross the host link and back "
        "more slowly than the next layer computes",
        "pp_comm": f"activations sent between {plan.pp} stages for {m} micro-batches "
        "(and tied embedding gradients summed between the first and last stage)",
        "pipeline_bubble": f"{m} micro-batches per replica fill {plan.pp} stages "
        f"(vpp={plan.vpp}): bubble ~ (pp-1)/(vpp m)",
        "dp_comm": f"gradient sync over {plan.dp * plan.cp} ranks not hidden by the backward",
        "fsdp_comm": f"per-layer parameter gathers and gradient reduce-scatters over "
        f"{plan.dp * plan.cp} ranks exceed one layer's compute",
        "step_sync": f"scalar all-reduces (gradient norm, NaN check, loss) over {plan.num_gpus} "
        "ranks every step",
        "optimizer": "Adam step streams the optimizer state through HBM",
        "straggler": f"each collective waits for the slowest of {plan.num_gpus} ranks; "
        "per-layer collectives over the whole data-parallel group (FSDP) wait for every "
        "rank's host stalls",
        "other": "fixed per-step overhead",
    }
    return texts.get(part, part)


def limit_line(
    plan: ParallelPlan, breakdown: dict[str, float], memory_frac: float
) -> tuple[str, str]:
    """The largest non-compute part and one line saying what limits the plan."""
    step = sum(breakdown.values())
    losses = {k: v for k, v in breakdown.items() if k != "compute"}
    part = max(losses, key=lambda k: losses[k])
    share = losses[part] / step if step > 0 else 0.0
    line = f"{PART_LABELS.get(part, part)} {share:.0%} of the step: {_why(part, plan)}"
    if memory_frac > MEMORY_WARN_FRAC:
        line += f"; memory {memory_frac:.0%} full"
    return part, line


def resolve_inputs(
    model: ModelSpec | str,
    cluster: Cluster | str | Path | None,
    gpu: str | None,
    gpus: int | None,
) -> tuple[ModelSpec, Cluster]:
    spec = model if isinstance(model, ModelSpec) else model_from_args(model)
    if isinstance(cluster, Cluster):
        return spec, cluster
    return spec, resolve_cluster(cluster, gpu=gpu, gpus=gpus)


def resolve_batch(
    model: ModelSpec,
    seq_len: int | None,
    global_batch: int | None,
    global_batch_tokens: int | None,
) -> tuple[int, int]:
    """(sequences per step, sequence length) from the user's batch constraint."""
    if seq_len is None:
        seq_len = min(DEFAULT_SEQ_LEN, model.max_seq_len or DEFAULT_SEQ_LEN)
    if seq_len < 1:
        raise SpecError("seq_len", seq_len, "must be a positive number of tokens")
    if global_batch is not None and global_batch_tokens is not None:
        raise SpecError(
            "global_batch", global_batch, "give the batch in sequences or in tokens, not both"
        )
    if global_batch is None:
        tokens = global_batch_tokens or DEFAULT_GLOBAL_BATCH_TOKENS
        if tokens < seq_len:
            raise SpecError(
                "global_batch_tokens", tokens, f"must hold at least one sequence of {seq_len}"
            )
        global_batch = tokens // seq_len
    if global_batch < 1:
        raise SpecError("global_batch", global_batch, "must be a positive number of sequences")
    return global_batch, seq_len


MAX_TOP_K = 1000
"""Most plans one search returns: a bound on the time to rank and print them."""


def search(
    model: ModelSpec | str,
    cluster: Cluster | str | Path | None = None,
    *,
    gpu: str | None = None,
    gpus: int | None = None,
    global_batch: int | None = None,
    global_batch_tokens: int | None = None,
    seq_len: int | None = None,
    space: SearchSpace | None = None,
    objective_name: str | Objective = "tokens_per_s",
    token_budget: float = DEFAULT_TOKEN_BUDGET,
    top_k: int = 5,
    stack: StackSpec = None,
    efficiency: Efficiency | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> SearchResult:
    """Find the best parallel plans of ``model`` on ``cluster`` (or ``gpus`` x ``gpu``).

    The batch constraint is ``global_batch`` sequences or ``global_batch_tokens`` tokens per
    step (default 16M tokens). Raises SpecError when the GPU count or the batch admits no plan;
    a search where no plan fits in memory returns a result with an empty ``top`` and a reason.
    ``on_progress(done, total)`` is called after each chunk of plans through the step model.
    """
    start = time.perf_counter()
    spec, resolved = resolve_inputs(model, cluster, gpu, gpus)
    if not 1 <= top_k <= MAX_TOP_K:
        raise SpecError("top", top_k, f"a number of plans from 1 to {MAX_TOP_K}")
    gb, seq = resolve_batch(spec, seq_len, global_batch, global_batch_tokens)
    obj = objective(objective_name) if isinstance(objective_name, str) else objective_name
    eff, stk = efficiency or Efficiency(), resolve_stack(stack)
    space = (space or SearchSpace()).for_stack(stk)
    plans = enumerate_plans(
        spec, resolved.num_gpus, resolved.system.scale_up_domain_gpus, gb, seq, space
    )
    hbm = resolved.accelerator.hbm_capacity_bytes
    host = host_bytes_per_gpu(resolved.system.host_memory_bytes, resolved.system.gpus_per_node, eff)
    mem_total = _memory_totals(spec, plans, eff, stk, (hbm, host) if space.offload else None)
    fit_rows = np.flatnonzero(mem_total <= hbm)
    ladder = _module_rungs(spec, plans, stk, space, mem_total <= hbm, eff, hbm)
    ladder_rows = sum(len(rows) for _, _, rows, _ in ladder)
    counts = SearchCounts(
        enumerated=len(plans),
        pruned_memory=len(plans) - len(fit_rows) - ladder_rows,
        evaluated=len(fit_rows) + ladder_rows,
    )
    common: dict[str, Any] = dict(
        model=spec.id,
        cluster=resolved.name,
        num_gpus=resolved.num_gpus,
        global_batch=gb,
        seq_len=seq,
        objective=obj.name,
        objective_unit=obj.unit,
        counts=counts,
    )
    if len(fit_rows) == 0 and ladder_rows == 0:
        need = float(np.min(mem_total)) / GIB
        reason = (
            f"no plan fits: the leanest of {len(plans)} plans needs {need:.1f} GiB per GPU, "
            f"the {resolved.accelerator.id} has {hbm / GIB:.1f} GiB; add GPUs or shorten "
            f"the sequence"
        )
        return SearchResult(**common, top=(), elapsed_s=time.perf_counter() - start, reason=reason)
    # Feasible plans are taken a chunk at a time (row i of the feasible order is plan
    # fit_rows[i]), never copied whole.
    ctx = ObjectiveContext(model=spec, cluster=resolved, token_budget=token_budget)
    total = len(fit_rows) + ladder_rows

    def progress(done: int, offset: int) -> None:
        if on_progress is not None:
            on_progress(offset + done, total)

    scores = _scores(spec, resolved, plans, fit_rows, eff, stk, obj, ctx, progress, 0)
    top = list(
        _ranked_groups(
            spec, resolved, plans, fit_rows, scores, mem_total[fit_rows], top_k, obj, eff, stk
        )
        if len(fit_rows)
        else ()
    )
    every = [scores]
    offset = len(fit_rows)
    for rung, variant, rows, rung_mem in ladder:
        rung_scores = _scores(spec, resolved, plans, rows, eff, variant, obj, ctx, progress, offset)
        offset += len(rows)
        every.append(rung_scores)
        ranked = _ranked_groups(
            spec, resolved, plans, rows, rung_scores, rung_mem, top_k, obj, eff, variant
        )
        top.extend(dataclasses.replace(r, recompute_modules=rung) for r in ranked)
    top.sort(key=lambda r: -r.score)
    return SearchResult(
        **common,
        top=tuple(dataclasses.replace(r, rank=i) for i, r in enumerate(top[:top_k], start=1)),
        elapsed_s=time.perf_counter() - start,
        scores=np.sort(np.concatenate(every))[::-1],
    )


def _scores(
    model: ModelSpec,
    cluster: Cluster,
    plans: PlanBatch,
    rows: NDArray[np.intp],
    eff: Efficiency,
    stack: Stack,
    obj: Objective,
    ctx: ObjectiveContext,
    progress: Callable[[int, int], None],
    offset: int,
) -> FloatArray:
    """The objective's score of plans ``rows`` under ``stack`` (-inf where a plan does not
    fit), ``CHUNK_ROWS`` at a time; ``progress(done, offset)`` after each chunk."""
    scores = np.empty(len(rows))
    for lo in range(0, len(rows), CHUNK_ROWS):
        chunk = np.arange(lo, min(lo + CHUNK_ROWS, len(rows)))
        part = plans.take(rows[chunk])
        out = step_model(model, cluster, part, eff, stack)
        scores[chunk] = np.where(out.fits, obj.score(ctx, part, out), -np.inf)
        progress(int(chunk[-1]) + 1, offset)
    return scores


def _module_rungs(
    model: ModelSpec,
    plans: PlanBatch,
    stack: Stack,
    space: SearchSpace,
    fits: NDArray[np.bool_],
    eff: Efficiency,
    hbm: float,
) -> list[tuple[tuple[str, ...], Stack, NDArray[np.intp], FloatArray]]:
    """Where the stack takes Megatron-Core's recompute modules (``Stack.selective_modules``):
    the selective plans that do not fit with the stack's own modules, each under the first
    rung of ``module_ladder`` with which it fits, as a practitioner adds modules until a plan
    fits: (rung, the stack with its modules, rows of ``plans``, their bytes per GPU) for each
    rung that fits any."""
    if not stack.selective_modules or "selective" not in space.recompute:
        return []
    remaining = np.flatnonzero((plans.recompute == RECOMPUTE["selective"]) & ~fits)
    out = []
    for rung in module_ladder(model):
        if not remaining.size:
            break
        flags = recompute_module_flags(list(rung))
        if all(getattr(stack, name) for name in flags):
            continue
        variant = resolve_stack(stack, flags)
        memory = _memory_totals(model, plans.take(remaining), eff, variant)
        ok = memory <= hbm
        if ok.any():
            out.append((rung, variant, remaining[ok], memory[ok]))
        remaining = remaining[~ok]
    return out


def _slice(plans: PlanBatch, lo: int, hi: int) -> PlanBatch:
    """Rows ``lo:hi`` of ``plans`` as views (no copy)."""
    return PlanBatch(**{f.name: getattr(plans, f.name)[lo:hi] for f in dataclasses.fields(plans)})


def _memory_totals(
    model: ModelSpec,
    plans: PlanBatch,
    eff: Efficiency,
    stack: Stack,
    offload_to_fit_bytes: tuple[float, float] | None = None,
) -> FloatArray:
    """Bytes per GPU of every plan, ``CHUNK_ROWS`` plans per memory-model call: the same
    values as one call, with temporaries a chunk long (a few MB that the allocator reuses)
    instead of the whole batch long (a million-plan MoE space: GBs, each page faulted in).

    With ``offload_to_fit_bytes`` (HBM, host memory per GPU), a plan that does not fit in HBM
    and can offload activations (one stage, no recompute, a stack with ``activation_offload``)
    is given the fewest ``offload_layers`` that fit, in place, as a practitioner would set
    them, where the host memory holds them."""
    out = np.empty(len(plans))
    for lo in range(0, len(plans), CHUNK_ROWS):
        part = _slice(plans, lo, min(lo + CHUNK_ROWS, len(plans)))
        micro_batches = part.global_batch / (part.dp * part.micro_batch)
        total = memory_model(model, part, eff, stack, micro_batches)[1]
        if offload_to_fit_bytes is not None and stack.activation_offload:
            hbm, host = offload_to_fit_bytes
            over = (total > hbm) & (part.pp == 1) & (part.recompute == RECOMPUTE["none"])
            rows = np.flatnonzero(over)
            if len(rows):
                part.offload_layers[rows] = offload_to_fit(
                    model, part.take(rows), eff, stack, hbm, host, total[rows]
                )
                rows = rows[part.offload_layers[rows] > 0]
                sub = part.take(rows)
                sub_mb = sub.global_batch / (sub.dp * sub.micro_batch)
                total[rows] = memory_model(model, sub, eff, stack, sub_mb)[1]
        out[lo : lo + len(part)] = total
    return out


def _top_rows(scores: FloatArray, memory_bytes: FloatArray, top_k: int) -> NDArray[np.intp]:
    """Indices of the ``top_k`` best scores; equal scores rank the plan with more memory
    headroom first, so the order never depends on how the partition broke ties."""
    k = min(top_k, len(scores))
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]
    cand = np.flatnonzero(scores >= kth)
    order = np.lexsort((memory_bytes[cand], -scores[cand]))
    result: NDArray[np.intp] = cand[order[:k]]
    return result


EQUIVALENT_REL_TOL = 1e-12
"""Relative difference under which two plans' numbers count as equal: far below any modelled
effect (the step model's float64 sums agree to ~1e-15), so only plans the model cannot tell
apart collapse into one row."""

EQUIVALENT_POOL = 8
"""Candidates examined per requested row before widening: the top K groups are sought among
the ``EQUIVALENT_POOL x K`` best plans, then 4x as many, until K groups are found."""


def _result_key(out: Any, i: int, score: float) -> NDArray[np.float64]:
    parts = [float(v[i]) for _, v in sorted(out.breakdown_s.items())]
    return np.array([score, out.step_time_s[i], out.memory_total_bytes[i], *parts])


def _same(a: NDArray[np.float64], b: NDArray[np.float64]) -> bool:
    return bool(np.all(np.abs(a - b) <= EQUIVALENT_REL_TOL * np.maximum(np.abs(a), np.abs(b))))


def _groups(out: Any, scores: FloatArray, top_k: int) -> list[list[int]]:
    """Rows (in best-first order) grouped by identical results; at most ``top_k`` groups."""
    groups: list[list[int]] = []
    keys: list[NDArray[np.float64]] = []
    for i in range(len(scores)):
        key = _result_key(out, i, float(scores[i]))
        match = next((g for g, k in enumerate(keys) if _same(k, key)), None)
        if match is not None:
            groups[match].append(i)
        elif len(groups) < top_k:
            groups.append([i])
            keys.append(key)
    return groups


def _closed(scores: FloatArray, groups: list[list[int]]) -> bool:
    """Whether no plan outside the pool can join a group: equivalent plans score the same,
    and the pool's last score is below the last group's."""
    last, lowest = float(scores[groups[-1][0]]), float(scores[-1])
    return lowest < last - EQUIVALENT_REL_TOL * abs(last)


def _ranked_groups(
    model: ModelSpec,
    cluster: Cluster,
    plans: PlanBatch,
    fit_rows: NDArray[np.intp],
    scores: FloatArray,
    memory_bytes: FloatArray,
    top_k: int,
    obj: Objective,
    eff: Efficiency,
    stack: Stack,
) -> tuple[RankedPlan, ...]:
    """The ``top_k`` best distinct results, each with the plans equivalent to it. The
    feasible plans are rows ``fit_rows`` of ``plans``; ``scores`` and ``memory_bytes`` are in
    that order."""
    pool = EQUIVALENT_POOL * top_k
    while True:
        rows = _top_rows(scores, memory_bytes, pool)
        batch = plans.take(fit_rows[rows])
        out = step_model(model, cluster, batch, eff, stack)
        groups = _groups(out, scores[rows], top_k)
        if len(rows) == len(scores) or (len(groups) >= top_k and _closed(scores[rows], groups)):
            break
        pool *= 4
    return _ranked(model, cluster, batch, scores[rows], obj, eff, stack, groups, out)


def _ranked(
    model: ModelSpec,
    cluster: Cluster,
    batch: PlanBatch,
    scores: FloatArray,
    obj: Objective,
    eff: Efficiency,
    stack: Stack,
    groups: list[list[int]],
    out: Any,
) -> tuple[RankedPlan, ...]:
    hbm = cluster.accelerator.hbm_capacity_bytes
    ranked = []
    for rank, (i, *same) in enumerate(groups, start=1):
        plan = batch.plan(i)
        breakdown = {k: float(v[i]) for k, v in out.breakdown_s.items()}
        memory = float(out.memory_total_bytes[i])
        part, line = limit_line(plan, breakdown, memory / hbm)
        ranked.append(
            RankedPlan(
                rank=rank,
                plan=plan,
                score=float(scores[i]),
                objective_value=obj.display(float(scores[i])),
                step_time_s=float(out.step_time_s[i]),
                tokens_per_s=float(out.tokens_per_s[i]),
                mfu=float(out.mfu[i]),
                hfu=float(out.hfu[i]),
                memory_total_bytes=memory,
                hbm_bytes=hbm,
                near_memory_limit=bool(out.near_memory_limit[i]),
                breakdown=breakdown,
                limiter=part,
                limit_line=line,
                equivalents=tuple(batch.plan(j) for j in same),
            )
        )
    return tuple(ranked)
