"""The defaults of a plan asked for by its fields: one place that the CLI options, the Python
API and the web request bodies read, so a question with fields left out gets the same plan
everywhere.

``ParallelPlan`` itself is the step model's complete input and keeps neutral defaults (every
width 1); a question stated by fields (``--tp 8``, ``{"tp": 8}``) is completed from
``PLAN_DEFAULTS`` by ``plan_from_fields``.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from scalewall.catalog.schema import ModelSpec, Stack
from scalewall.errors import SpecError
from scalewall.plan.plan import (
    STACK_FALLBACKS,
    STACK_PLAN_FIELDS,
    ParallelPlan,
    balanced_stage_split,
    default_stage_split,
    stack_allows,
)
from scalewall.plan.topology import Cluster

if TYPE_CHECKING:
    from scalewall.perf.assumptions import Efficiency

DEFAULT_MODEL = "llama3-70b"
"""The model a command asks about without ``--model``."""
DEFAULT_GPU = "h100-sxm-80gb"
"""The accelerator of a question that names no cluster and no GPU."""
DEFAULT_GPUS = 1024
"""Its GPU count when ``--gpus`` is not given either."""


@dataclass(frozen=True, kw_only=True)
class PlanDefaults:
    """The value of each plan field a question leaves out. ``dp`` fills the cluster and
    ``zero`` is the stack's sharding (``zero_stage``), so neither has an entry."""

    tp: int = 8
    """Tensor-parallel width where a question leaves it out and no layout fits in memory
    (``open_layout`` otherwise chooses the fastest that fits): one 8-GPU NVLink node, giving way
    to the largest width below it (halving) that divides the model's heads and the node and
    lays out on the cluster (``open_widths``)."""
    pp: int = 4
    """Pipeline stages where a question leaves them out and no layout fits: the largest of 4,
    2, 1 that lays out on the cluster with tp."""
    vpp: int = 1
    cp: int = 1
    ep: int = 1
    etp: int = 1
    cp_mode: str = "ring"
    first_stage_layers: int = 0
    """0: an even split, or where pp does not divide the layers Megatron-Core's
    (``default_stage_split``)."""
    last_stage_layers: int = 0
    offload_layers: int = 0
    """0: every layer's activations stay in HBM."""
    micro_batch: int = 1
    local_batch: int = 0
    """0: the whole per-replica batch in one forward-backward call (one pipeline schedule)."""
    global_batch: int = 512
    """Sequences per step: 512 x 8,192 = 4M tokens, the order of published pre-training
    batches (Llama 3 starts at 4M tokens; arXiv 2407.21783, Sec. 3.4.1)."""
    seq_len: int = 8192
    """Llama 3's pre-training sequence length (arXiv 2407.21783, Sec. 3.4)."""
    recompute: str = "selective"
    sequence_parallel: bool = True
    precision: str = "bf16"

    def fields(self) -> dict[str, Any]:
        """The defaults as ParallelPlan fields."""
        return asdict(self)


PLAN_DEFAULTS = PlanDefaults()


def check_widths(model: ModelSpec, tp: int, pp: int, cp: int) -> None:
    """Raise SpecError for a width below 1 or a tp that does not divide the heads (before
    anything divides by them)."""
    for name, value in (("tp", tp), ("pp", pp), ("cp", cp)):
        if value < 1:
            raise SpecError(name, value, "must be a positive integer")
    if model.heads % tp:
        divisors = [d for d in range(1, model.heads + 1) if model.heads % d == 0]
        raise SpecError("tp", tp, f"must divide the {model.heads} heads: one of {divisors}")


def fill_dp(cluster: Cluster, tp: int, pp: int, cp: int) -> int:
    """The data-parallel width that fills ``cluster`` with tp x pp x cp model replicas;
    raises SpecError when they do not divide it."""
    denom = tp * pp * cp
    if cluster.num_gpus % denom:
        raise SpecError(
            "tp", tp, f"tp x pp x cp = {denom} must divide the cluster's {cluster.num_gpus} GPUs"
        )
    return cluster.num_gpus // denom


def open_widths(
    cluster: Cluster, model: ModelSpec, merged: Mapping[str, Any], given: Mapping[str, Any]
) -> tuple[int, int]:
    """``tp`` and ``pp`` for a question that leaves either out: the defaults where they lay out
    on the cluster and the model, else the largest widths up to them that do, as a question on
    a small cluster or a model whose heads 8 does not divide means. A tp that the question
    gives is kept (its errors are the question's); an open tp divides the heads and fits in
    one node, an open pp leaves every stage a layer and, with tp and cp, divides the GPUs."""
    tp, pp, cp = int(merged["tp"]), int(merged["pp"]), int(merged["cp"])
    gpus = cluster.num_gpus

    def lays_out(t: int, p: int) -> bool:
        return t * p * cp > 0 and gpus % (t * p * cp) == 0

    tps = (
        [tp]
        if "tp" in given
        else [
            t
            for t in range(min(tp, cluster.gpus_per_node), 0, -1)
            if model.heads % t == 0 and tp % t == 0
        ]
        or [1]
    )
    pps = [pp] if "pp" in given else [p for p in range(min(pp, model.layers), 0, -1) if pp % p == 0]
    for t in tps:
        for p in pps:
            if lays_out(t, p):
                return t, p
    return tps[0], pps[0]


MOE_WIDTHS = ("tp", "pp", "ep")
"""The widths ``open_layout`` chooses for a mixture-of-experts question that leaves them out."""
DENSE_WIDTHS = ("tp", "pp")
"""The widths ``open_layout`` chooses for a dense question that leaves them out."""


def layout_widths(model: ModelSpec) -> tuple[str, ...]:
    """The widths ``open_layout`` chooses where a question leaves them out: ``MOE_WIDTHS`` for
    a mixture-of-experts model, ``DENSE_WIDTHS`` otherwise."""
    return MOE_WIDTHS if model.is_moe else DENSE_WIDTHS


MOE_TP_WIDTHS = (1, 2)
"""Tensor-parallel widths an MoE question's open tp takes, smallest first: MoE models are sized
by their activated parameters, a few billion to a few tens of billions, and run with TP 1 or 2
while expert parallelism shards the experts (NVIDIA's Megatron-Core MoE parallel-folding
guidance and the Megatron-Bridge performance recipes: Qwen3-30B-A3B, Qwen3-235B-A22B,
DeepSeek-V3, gpt-oss and Nemotron 3 at TP 1 or 2, EP 8 to 64)."""
DENSE_TP_WIDTHS = (1, 2, 4, 8)
"""Tensor-parallel widths a dense question's open tp takes, smallest first: powers of two up to
one 8-GPU NVLink node, as tensor parallelism is laid out (Narayanan et al., SC'21, Sec. 3.3:
tensor parallelism inside a node, pipeline parallelism across nodes; the Llama 3 405B run at
TP 8, arXiv 2407.21783 Table 4; FSDP recipes at TP 1)."""


def open_layout(
    cluster: Cluster,
    model: ModelSpec,
    merged: Mapping[str, Any],
    given: Mapping[str, Any],
    stack: Stack,
    efficiency: Efficiency | None = None,
) -> dict[str, Any]:
    """``tp`` and ``pp`` (and ``ep`` for a mixture-of-experts model, ``recompute`` where that
    too is open) for a question that leaves any of the widths out, as a practitioner sizes
    them: tensor parallelism within a node (``DENSE_TP_WIDTHS``; ``MOE_TP_WIDTHS`` for an MoE
    model), pipeline and expert widths in powers of two, full recompute as well where recompute
    is open too (none or full where the stack has no selective mode); only widths the stack
    runs (``stack_allows``), and widths the question gives are kept. Of the candidates whose
    memory lies within usable HBM less ``Efficiency.memory.memory_fit_margin_frac``, the
    fastest by the step model with the question's ``efficiency`` (a calibration's, or the
    defaults) is taken (tens to hundreds of plans: milliseconds). Where none fits, {} (the
    caller keeps ``PLAN_DEFAULTS`` and the estimate reports the plan that does not fit)."""
    from scalewall.perf.assumptions import Efficiency
    from scalewall.perf.batch import PlanBatch
    from scalewall.perf.step import memory_model, step_model
    from scalewall.plan.plan import validate

    def pow2(limit: int) -> list[int]:
        return [1 << i for i in range(limit.bit_length()) if (1 << i) <= limit]

    def runs(name: str, values: list[int]) -> list[int]:
        return [v for v in values if stack_allows(stack, name, v) is None]

    moe = model.is_moe
    widths = layout_widths(model)
    tp_widths = MOE_TP_WIDTHS if moe else DENSE_TP_WIDTHS
    tps = [int(given["tp"])] if "tp" in given else runs("tp", [
        t for t in tp_widths if model.heads % t == 0 and t <= cluster.gpus_per_node
    ])  # fmt: skip
    pps = (
        [int(given["pp"])]
        if "pp" in given
        else runs("pp", pow2(min(model.layers, cluster.num_gpus)))
    )
    if not moe or "ep" in given:
        eps = [int(merged["ep"])]
    else:
        eps = runs("ep", [e for e in pow2(model.routed_experts) if model.routed_experts % e == 0])
    recomputes = [str(merged["recompute"])]
    if "recompute" not in given:
        if stack_allows(stack, "recompute", PLAN_DEFAULTS.recompute) is not None:
            # A stack that checkpoints whole layers only runs without recompute where that
            # fits, and recomputes every layer where it does not.
            recomputes = ["none", "full"]
        elif merged["recompute"] != "full":
            recomputes.append("full")
    domain = max(cluster.system.scale_up_domain_gpus, cluster.gpus_per_node)
    cp = int(merged["cp"])
    ranked: list[tuple[tuple[int, ...], ParallelPlan]] = []
    open_split = not any(f in given for f in STACK_SPLIT_FIELDS)
    for r_index, recompute in enumerate(recomputes):
        for pp in pps:
            for tp in tps:
                if cluster.num_gpus % (tp * pp * cp):
                    continue
                dp = int(given.get("dp", cluster.num_gpus // (tp * pp * cp)))
                for ep in eps:
                    fields = {**merged, "tp": tp, "pp": pp, "ep": ep, "dp": dp}
                    fields["recompute"] = recompute
                    try:
                        if pp > 1 and model.layers % pp and open_split:
                            first, last = default_stage_split(model.layers, pp)
                            fields.update(first_stage_layers=first, last_stage_layers=last)
                        plan = ParallelPlan(**fields)
                        validate(model, plan, cluster.num_gpus)
                    except SpecError:
                        continue
                    rank = (r_index, pp, int(ep > domain), tp, ep)
                    ranked.append((rank, plan))
    if not ranked:
        return {}
    ranked.sort(key=lambda item: item[0])
    plans = [plan for _, plan in ranked]
    eff = efficiency or Efficiency()
    batch = PlanBatch.from_plans(model, plans)
    micro_batches = batch.global_batch / (batch.dp * batch.micro_batch)
    _, total = memory_model(model, batch, eff, stack, micro_batches)
    limit = cluster.accelerator.hbm_capacity_bytes * (1.0 - eff.memory.memory_fit_margin_frac)
    fitting = np.flatnonzero(total <= limit)
    if not fitting.size:
        return {}
    # The fastest of the plans that fit; ties (and near ties) go to the earlier in the
    # practitioner's order above, as ``argmin`` keeps the first.
    step = step_model(model, cluster, batch.take(fitting), eff, stack).step_time_s
    plan = plans[int(fitting[int(np.argmin(step))])]
    chosen: dict[str, Any] = {name: getattr(plan, name) for name in widths}
    if plan.recompute != merged["recompute"]:
        chosen["recompute"] = plan.recompute
    return chosen


STACK_SPLIT_FIELDS = ("first_stage_layers", "last_stage_layers")
"""Plan fields a question may leave open for the stack to lay out (``Stack.pipeline_split``)."""


def plan_from_fields(
    cluster: Cluster,
    model: ModelSpec,
    fields: Mapping[str, Any],
    *,
    zero: int = 1,
    global_batch_tokens: int | None = None,
    stack: Stack | None = None,
    efficiency: Efficiency | None = None,
) -> ParallelPlan:
    """A plan from the fields a question gives, the others from ``PLAN_DEFAULTS``: ``dp``
    (absent or None) fills the cluster, ``zero`` (absent or None) is the given stack's
    sharding, and ``global_batch_tokens`` (tokens per step) sets ``global_batch`` to
    tokens / seq_len when the batch is not given in sequences. A default ``stack`` cannot run
    takes the value it runs instead (``plan.STACK_FALLBACKS``), and with the pipeline split left
    open a stack that balances it by compute (``Stack.pipeline_split``) lays it out its way;
    otherwise stages that cannot hold equal layers take ``default_stage_split``. Open widths
    are the fastest layout that fits, ranked with ``efficiency`` (``open_layout``); where no
    layout fits, ``PLAN_DEFAULTS``' widths as they lay out (``open_widths``)."""
    given = {k: v for k, v in fields.items() if v is not None}
    unknown = set(given) - set(ParallelPlan.__dataclass_fields__)
    if unknown:
        valid = ", ".join(sorted(ParallelPlan.__dataclass_fields__))
        raise SpecError("plan", sorted(unknown)[0], f"a plan field: one of {valid}")
    merged: dict[str, Any] = {**PLAN_DEFAULTS.fields(), "zero": zero, **given}
    if global_batch_tokens is not None and "global_batch" not in given:
        if global_batch_tokens < merged["seq_len"]:
            raise SpecError(
                "global_batch_tokens",
                global_batch_tokens,
                f"at least one sequence of {merged['seq_len']} tokens",
            )
        merged["global_batch"] = global_batch_tokens // merged["seq_len"]
    if stack is not None:
        # A default the stack cannot run gives way to what it runs (a pipeline, an
        # interleaved schedule, sequence parallelism, selective recompute); a value the
        # question gives is the question's, and ``validate_for_stack`` refuses it.
        for name in STACK_PLAN_FIELDS:
            if name not in given and stack_allows(stack, name, merged[name]) is not None:
                merged[name] = STACK_FALLBACKS[name]
    for name in ("tp", "pp", "cp", "ep", "etp", "dp"):
        # A width the question gives is checked before any layout is built around it.
        value = given.get(name)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1
        ):
            raise SpecError(name, value, "must be a positive integer")
    widths = layout_widths(model)
    if stack is not None and not set(widths) <= set(given):
        chosen = open_layout(cluster, model, merged, given, stack, efficiency)
        merged.update(chosen)
        given = {**given, **chosen}
    merged["tp"], merged["pp"] = open_widths(cluster, model, merged, given)
    tp, pp, cp = int(merged["tp"]), int(merged["pp"]), int(merged["cp"])
    check_widths(model, tp, pp, cp)
    open_split = not any(name in given for name in STACK_SPLIT_FIELDS)
    if stack is not None and stack.pipeline_split == "compute-balanced" and open_split and pp > 1:
        # The split the stack lays out when the question leaves it open, as ``validate`` does.
        merged["first_stage_layers"], merged["last_stage_layers"] = balanced_stage_split(model, pp)
    elif open_split and pp > 1 and model.layers % pp:
        # Stages that cannot hold equal layers take Megatron-Core's split, as ``validate``
        # lays out a source that states none (61 layers on 4 or 16 stages, 95 on 8, ...).
        merged["first_stage_layers"], merged["last_stage_layers"] = default_stage_split(
            model.layers, pp
        )
    if "dp" not in given:
        merged["dp"] = fill_dp(cluster, tp, pp, cp)
    return ParallelPlan(**merged)
