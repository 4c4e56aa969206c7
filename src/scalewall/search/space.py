"""The plan space: every valid parallel plan for a model, a GPU count and a global batch, as arrays.

Enumeration runs in two levels. The structural level (TP, CP, PP, DP, micro-batch, virtual stages,
layer split) is a few thousand rows at most and is built with plain loops over divisors; the
categorical level (recompute, ZeRO stage, sequence parallelism, precision, CP mode) multiplies it
by at most a few dozen and is built with ``np.repeat``/``np.tile``, never per plan in Python.

Validity follows ``scalewall.plan.plan.validate``: TP divides the heads and divides or is a multiple
of the KV heads; tp x cp x pp x dp equals the GPU count; dp divides the global batch and the
micro-batch divides the per-replica batch; CP divides the sequence; vpp > 1 needs pp > 1 and a
micro-batch count that is a multiple of pp; the middle stages
hold equal layers, the first and last may hold fewer (uneven split); vpp divides the layers of a
full stage.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scalewall.catalog.schema import ModelSpec, Stack
from scalewall.errors import SpecError
from scalewall.perf.batch import CP_MODE, PlanBatch
from scalewall.plan.plan import CP_MODES, PRECISIONS, RECOMPUTE_MODES, stack_allows

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, kw_only=True)
class SearchSpace:
    """Which plans the search enumerates. Every bound is a named, documented field."""

    precisions: tuple[str, ...] = ("bf16",)
    """Precisions to try (``bf16``, ``fp16``, ``fp8``); only bf16 unless asked."""
    tp_beyond_scale_up: bool = False
    """Allow TP groups larger than the scale-up domain (TP across the network is rarely worth
    it: two all-reduces per layer forward and two backward on the critical path)."""
    max_cp: int = 32
    """Largest context-parallel width. Llama 3 trained its 128K-token stage with CP 16
    (arXiv 2407.21783, Sec. 3.3.2); 32 leaves one doubling of headroom."""
    max_micro_batch: int = 16
    """Largest micro-batch in sequences; larger ones only add activation memory once GEMMs are
    large enough (Megatron recipes use 1-4 for models above 7B)."""
    max_stage_trim: int = 2
    """Uneven pipeline splits: the first and last stages may hold up to this many layers fewer
    than a middle stage, to balance the embedding, the output layer and the first stage's extra
    activations (Llama 3 405B: 126 layers on 16 stages, first and last one layer fewer)."""
    max_vpp: int = 16
    """Largest number of virtual stages per pipeline rank."""
    recompute: tuple[str, ...] = RECOMPUTE_MODES
    zero: tuple[int, ...] = (0, 1, 2, 3)
    """ZeRO stages (1 = Megatron's distributed optimizer, 3 = FSDP)."""
    sequence_parallel: tuple[bool, ...] = (False, True)
    cp_modes: tuple[str, ...] = CP_MODES
    tp_values: tuple[int, ...] = ()
    """Only these TP widths (empty: every valid one)."""
    pp_values: tuple[int, ...] = ()
    """Only these pipeline depths (empty: every valid one)."""
    cp_values: tuple[int, ...] = ()
    """Only these context-parallel widths (empty: every valid one up to ``max_cp``)."""
    dp_values: tuple[int, ...] = ()
    """Only these data-parallel widths (empty: whatever the other widths leave)."""
    vpp_values: tuple[int, ...] = ()
    """Only these virtual stages per pipeline rank (empty: every valid one up to
    ``max_vpp``)."""
    ep_values: tuple[int, ...] = ()
    """MoE models: only these expert-parallel widths (empty: every divisor of the routed
    experts that divides tp x cp x dp / etp, up to ``max_ep``). Dense models: 1."""
    micro_batch_values: tuple[int, ...] = ()
    """Only these micro-batches in sequences (empty: every divisor of the per-replica batch up
    to ``max_micro_batch``)."""
    max_ep: int = 256
    """Largest expert-parallel width (DeepSeek-V3 trained with 64, serves with up to 320)."""
    expert_tp: tuple[str, ...] = ("1", "tp")
    """Expert tensor-parallel widths to try: ``1`` (experts whole, Megatron-Core MoE recipes)
    and ``tp`` (experts split like the dense layers)."""
    offload: bool = True
    """A plan with one pipeline stage and no recompute that does not fit may offload the
    activations of the fewest layers that make it fit (``ParallelPlan.offload_layers``), where
    the stack can (``Stack.activation_offload``)."""

    def for_stack(self, stack: Stack) -> SearchSpace:
        """This space less the plans ``stack`` cannot run (``plan.stack_allows``): no tensor,
        pipeline, context or expert parallelism, no interleaved schedule, no sequence
        parallelism or no selective recompute where the stack has none; a space left with
        nothing to try is the error of the field that emptied it."""
        changes: dict[str, Any] = {}
        for width in ("tp", "pp", "cp", "ep"):
            why = stack_allows(stack, width, 2)
            if why is None:
                continue
            values: tuple[int, ...] = getattr(self, f"{width}_values")
            if values and 1 not in values:
                raise SpecError(width, values[0], why)
            changes[f"{width}_values"] = (1,)
        if stack_allows(stack, "vpp", 2) is not None:
            changes["max_vpp"] = 1
        if stack_allows(stack, "sequence_parallel", True) is not None:
            changes["sequence_parallel"] = (False,)
        no_selective = stack_allows(stack, "recompute", "selective")
        if no_selective is not None:
            kept = tuple(r for r in self.recompute if r != "selective")
            if not kept:
                raise SpecError("recompute", "selective", no_selective)
            changes["recompute"] = kept
        if stack_allows(stack, "offload_layers", 1) is not None:
            changes["offload"] = False
        return replace(self, **changes) if changes else self

    def allows(self, name: str, value: int) -> bool:
        """Whether ``value`` passes the optional ``<name>_values`` filter."""
        chosen: tuple[int, ...] = getattr(self, f"{name}_values")
        return not chosen or value in chosen

    def __post_init__(self) -> None:
        for name, values, valid in (
            ("precisions", self.precisions, PRECISIONS),
            ("recompute", self.recompute, RECOMPUTE_MODES),
            ("cp_modes", self.cp_modes, CP_MODES),
            ("zero", self.zero, (0, 1, 2, 3)),
            ("sequence_parallel", self.sequence_parallel, (False, True)),
        ):
            bad = [v for v in values if v not in valid]
            if bad or not values:
                raise SpecError(name, ",".join(map(str, values)), f"one or more of {valid}")
        bad_etp = [v for v in self.expert_tp if v not in ("1", "tp")]
        if bad_etp or not self.expert_tp:
            raise SpecError("expert_tp", ",".join(self.expert_tp), "one or more of 1, tp")
        if any(v < 1 for v in self.micro_batch_values):
            raise SpecError(
                "micro_batch_values",
                ",".join(map(str, self.micro_batch_values)),
                "positive integers (sequences per micro-batch)",
            )
        for name in ("max_cp", "max_micro_batch", "max_vpp", "max_ep"):
            if getattr(self, name) < 1:
                raise SpecError(name, getattr(self, name), "must be a positive integer")
        if self.max_stage_trim < 0:
            raise SpecError("max_stage_trim", self.max_stage_trim, "must be >= 0")


STRUCTURE_COLUMNS = (
    "tp",
    "cp",
    "pp",
    "dp",
    "micro_batch",
    "vpp",
    "layers_first",
    "layers_middle",
    "layers_last",
)
"""The columns of a structural row: the shape of a plan before the categorical choices."""


def divisors(n: int) -> list[int]:
    """The positive divisors of ``n`` in increasing order."""
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def stage_splits(layers: int, pp: int, trim: int) -> list[tuple[int, int, int]]:
    """(first, middle, last) layer counts per stage: the even split when pp divides the layers,
    and uneven ones whose first and last stages hold at most ``trim`` layers fewer than a middle
    stage (pp = 2: the two stages differ by at most 2 x trim layers)."""
    if pp == 1:
        return [(layers, 0, layers)]
    if pp > layers:
        return []
    out: set[tuple[int, int, int]] = set()
    if pp == 2:
        for first in range(layers // 2 - trim, (layers + 1) // 2 + trim + 1):
            if 1 <= first < layers:
                out.add((first, 0, layers - first))
        return sorted(out)
    # Middle stages hold m layers; first + last = rest = L - (pp-2) m with each in [m - trim, m]:
    # ceil(L / pp) <= m <= floor((L + 2 trim) / pp).
    for middle in range(-(-layers // pp), (layers + 2 * trim) // pp + 1):
        rest = layers - (pp - 2) * middle
        low = rest // 2
        for first, last in ((low, rest - low), (rest - low, low)):
            if max(1, middle - trim) <= min(first, last) and max(first, last) <= middle:
                out.add((first, middle, last))
    return sorted(out)


def tp_candidates(
    model: ModelSpec, num_gpus: int, scale_up_gpus: int, space: SearchSpace
) -> list[int]:
    """TP widths: divide the heads and the GPU count, divide or are a multiple of the KV heads
    (MLA models have no KV-head constraint), within the scale-up domain unless asked."""
    out = []
    for tp in divisors(num_gpus):
        if model.heads % tp:
            continue
        if not model.kv_lora_rank and model.kv_heads % tp and tp % model.kv_heads:
            continue
        if tp > scale_up_gpus and not space.tp_beyond_scale_up:
            continue
        if not space.allows("tp", tp):
            continue
        out.append(tp)
    return out


def _vpp_candidates(full_stage_layers: int, pp: int, micro_batches: int, max_vpp: int) -> list[int]:
    """Virtual stages: vpp > 1 needs pp > 1, vpp dividing the layers of a full stage (a middle
    one, or the first when pp = 2) and a micro-batch count that is a multiple of pp."""
    out = [1]
    if pp > 1 and micro_batches % pp == 0:
        out += [v for v in divisors(full_stage_layers) if 1 < v <= max_vpp]
    return out


def parallel_shapes(
    model: ModelSpec, num_gpus: int, scale_up_gpus: int, seq_len: int, space: SearchSpace
) -> list[tuple[int, int, int, int]]:
    """(tp, cp, pp, dp) with tp x cp x pp x dp = num_gpus, ignoring the batch."""
    shapes = []
    for tp in tp_candidates(model, num_gpus, scale_up_gpus, space):
        for cp in divisors(num_gpus // tp):
            if cp > space.max_cp or seq_len % cp or not space.allows("cp", cp):
                continue
            for pp in divisors(num_gpus // (tp * cp)):
                if not space.allows("pp", pp) or not space.allows("dp", num_gpus // (tp * cp * pp)):
                    continue
                if stage_splits(model.layers, pp, space.max_stage_trim):
                    shapes.append((tp, cp, pp, num_gpus // (tp * cp * pp)))
    return shapes


def structures(
    model: ModelSpec,
    num_gpus: int,
    scale_up_gpus: int,
    global_batch: int,
    seq_len: int,
    space: SearchSpace,
) -> NDArray[np.float64]:
    """Every structural row (one per row, ``STRUCTURE_COLUMNS``); raises SpecError when the
    GPU count or the batch admits none."""
    shapes = parallel_shapes(model, num_gpus, scale_up_gpus, seq_len, space)
    if not shapes:
        raise SpecError(
            "gpus",
            num_gpus,
            f"no tp x cp x pp x dp split of {num_gpus} GPUs suits {model.id} "
            f"({model.heads} heads, {model.layers} layers, TP <= {scale_up_gpus} per scale-up "
            f"domain); use a multiple of a TP width that divides the heads",
        )
    rows: list[tuple[int, ...]] = []
    for tp, cp, pp, dp in shapes:
        if global_batch % dp:
            continue
        per_replica = global_batch // dp
        splits = stage_splits(model.layers, pp, space.max_stage_trim)
        for mb in divisors(per_replica):
            if mb > space.max_micro_batch:
                break
            if space.micro_batch_values and mb not in space.micro_batch_values:
                continue
            for first, middle, last in splits:
                full = middle or first
                vpps = _vpp_candidates(full, pp, per_replica // mb, space.max_vpp)
                for vpp in (v for v in vpps if space.allows("vpp", v)):
                    rows.append((tp, cp, pp, dp, mb, vpp, first, middle, last))
    if not rows:
        raise _batch_error(global_batch, num_gpus, sorted({dp for *_, dp in shapes}))
    return np.asarray(rows, dtype=np.float64)


def _batch_error(global_batch: int, num_gpus: int, dps: list[int]) -> SpecError:
    """Why no data-parallel width fits the batch: too small, or no common divisor."""
    if global_batch < dps[0]:
        return SpecError(
            "global_batch",
            global_batch,
            f"is too small for {num_gpus} GPUs: every tp x cp x pp split leaves at least "
            f"{dps[0]} data-parallel replicas; use at least {dps[0]} sequences or fewer GPUs",
        )
    shown = ", ".join(map(str, dps[:8])) + (", ..." if len(dps) > 8 else "")
    return SpecError(
        "global_batch",
        global_batch,
        f"cannot be split over {num_gpus} GPUs: the data-parallel width must divide it, and "
        f"the widths a tp x cp x pp split leaves are {shown}",
    )


CATEGORICAL_COLUMNS = ("recompute", "zero", "sequence_parallel", "precision", "cp_mode")
"""The columns of a categorical row (as codes)."""


def _categorical(space: SearchSpace) -> NDArray[np.float64]:
    """Every categorical row (``CATEGORICAL_COLUMNS``)."""
    combos = itertools.product(
        [RECOMPUTE_MODES.index(r) for r in space.recompute],
        list(space.zero),
        [float(s) for s in space.sequence_parallel],
        [PRECISIONS.index(p) for p in space.precisions],
        [CP_MODES.index(c) for c in space.cp_modes],
    )
    return np.asarray(list(combos), dtype=np.float64)


def enumerate_plans(
    model: ModelSpec,
    num_gpus: int,
    scale_up_gpus: int,
    global_batch: int,
    seq_len: int,
    space: SearchSpace | None = None,
) -> PlanBatch:
    """Every valid plan as one PlanBatch (see the module docstring for the rules): structural
    rows by categorical rows by expert options, in that (row-major) order.

    Validity is decided on the small (structure x categorical) grid and the expert options per
    structure; each plan column is then gathered once from the index of its row in each."""
    space = space or SearchSpace()
    shape = structures(model, num_gpus, scale_up_gpus, global_batch, seq_len, space)
    cats = _categorical(space)
    tp, cp, dp = shape[:, 0:1], shape[:, 1:2], shape[:, 3:4]
    zero, sp, cp_mode = cats[:, 1], cats[:, 2], cats[:, 4]
    # SP means nothing without TP, a CP mode nothing without CP, a ZeRO stage nothing without a
    # data-parallel group (dp x cp = 1): keep one copy of such rows (the first listed value,
    # stored as off / ring / the first stage). All-to-all CP (Ulysses) exchanges heads, so
    # tp x cp must divide the heads.
    keep = ~((tp == 1) & (sp != cats[0, 2]))
    keep &= ~((cp == 1) & (cp_mode != cats[0, 4]))
    keep &= ~((dp * cp == 1) & (zero != cats[0, 1]))
    keep &= ~((cp_mode == CP_MODE["a2a"]) & (np.mod(model.heads, tp * cp) != 0))
    rows, cat_rows = np.nonzero(keep)
    ep_options, etp_options, valid = _expert_options(model, shape, space)
    if valid is not None:
        plan_of, option = np.nonzero(valid[rows])
        rows, cat_rows = rows[plan_of], cat_rows[plan_of]
        flat = rows * valid.shape[1] + option
        ep, etp = np.take(ep_options, flat), np.take(etp_options, flat)
    else:
        ep, etp = np.ones(len(rows)), np.ones(len(rows))
    # One contiguous source column per plan column, each gathered once.
    s = {n: np.take(c, rows) for n, c in zip(STRUCTURE_COLUMNS, shape.T.copy(), strict=True)}
    c = dict(zip(CATEGORICAL_COLUMNS, (np.take(v, cat_rows) for v in cats.T.copy()), strict=True))
    c["sequence_parallel"] = np.where(s["tp"] == 1, 0.0, c["sequence_parallel"])
    c["cp_mode"] = np.where(s["cp"] == 1, 0.0, c["cp_mode"])
    n = len(rows)
    return PlanBatch(
        **s,
        **c,
        ep=ep,
        etp=etp,
        global_batch=np.full(n, float(global_batch)),
        local_batch=np.zeros(n),
        seq_len=np.full(n, float(seq_len)),
        offload_layers=np.zeros(n),
    )


def _expert_options(
    model: ModelSpec, shape: NDArray[np.float64], space: SearchSpace
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_] | None]:
    """EP and expert-TP widths per structural row and option, and which are valid (None for
    a dense model: one option, ep = etp = 1): ep divides the routed experts, ep x etp divides
    tp x cp x dp, etp divides the expert FFN width."""
    n = len(shape)
    if not model.is_moe or n == 0:
        return np.ones((n, 1)), np.ones((n, 1)), None
    eps = [e for e in divisors(model.routed_experts) if e <= space.max_ep]
    eps = [e for e in eps if not space.ep_values or e in space.ep_values] or [1]
    tp, ranks = shape[:, 0], shape[:, 0] * shape[:, 1] * shape[:, 3]
    ep_out: list[NDArray[np.float64]] = []
    etp_out: list[NDArray[np.float64]] = []
    ok_out: list[NDArray[np.bool_]] = []
    options = [(float(e), choice) for e in eps for choice in space.expert_tp]
    for e, choice in options:
        etp = tp if choice == "tp" else np.ones(n)
        ok = (np.mod(ranks, e * etp) == 0) & (np.mod(model.expert_ffn_hidden, etp) == 0)
        if choice == "tp" and "1" in space.expert_tp:
            ok &= tp > 1
        ep_out.append(np.full(n, e))
        etp_out.append(etp)
        ok_out.append(ok)
    return np.stack(ep_out, axis=1), np.stack(etp_out, axis=1), np.stack(ok_out, axis=1)
