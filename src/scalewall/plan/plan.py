"""The parallel plan: how a model's training step is split over GPUs, and its validity rules."""

from __future__ import annotations

import re
from dataclasses import dataclass

from scalewall.catalog.schema import Accelerator, ModelSpec, Stack, spelling_key
from scalewall.errors import SpecError
from scalewall.workload.counts import layer_kinds

RECOMPUTE_MODES = ("none", "selective", "full")
PRECISIONS = ("bf16", "fp16", "fp8", "fp8-block", "mxfp8", "nvfp4")
"""GEMM precision of the linear layers: ``fp8`` is FP8 with per-tensor scaling (Transformer
Engine delayed/current scaling), ``fp8-block`` FP8 with 1x128 / 128x128 block scales in software
(DeepSeek-V3), ``mxfp8`` the OCP microscaling format Blackwell tensor cores scale in hardware,
``nvfp4`` NVIDIA's 4-bit E2M1 format with an FP8 scale per 16 elements and a per-tensor FP32
scale (Transformer Engine ``NVFP4BlockScaling``; NVIDIA, "Pretraining Large Language Models with
NVFP4", arXiv 2509.25149), which Blackwell tensor cores scale in hardware. Codes are positions in
this tuple: append, never reorder."""
FP8_PRECISIONS = ("fp8", "fp8-block", "mxfp8")
FP4_PRECISIONS = ("nvfp4",)
QUANTIZED_PRECISIONS = FP8_PRECISIONS + FP4_PRECISIONS
"""Precisions whose linear layers quantize their operands (FP8 or FP4 recipes)."""
CP_MODES = ("ring", "a2a")

PRECISION_SPELLINGS = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "fp8-delayed": "fp8",
    "fp8-delayed-scaling": "fp8",
    "fp8-current": "fp8",
    "fp8-current-scaling": "fp8",
    "fp8-cs": "fp8",
    "fp8-ds": "fp8",
    "fp8-per-tensor": "fp8",
    "fp8-tensorwise": "fp8",
    "fp8-hybrid": "fp8",
    "fp8-blockwise": "fp8-block",
    "fp8-block-scaling": "fp8-block",
    "fp8-mx": "mxfp8",
    "fp4": "nvfp4",
    "fp8-nvfp4": "nvfp4",
}
"""How sources write a training precision -> ``PRECISIONS``. Matching ignores case, ``_``,
spaces and a trailing ``mixed``, ``mixed precision`` or ``amp`` (``bf16-mixed``, ``FP16 mixed
precision``): the precision names the GEMMs' dtype, and every recipe here keeps FP32 master
weights or accumulators. Transformer Engine's delayed and current scaling (``hybrid``: E4M3
forward, E5M2 backward) are both per-tensor scales, ``fp8``."""

RECOMPUTE_SPELLINGS = {
    "full": "full",
    "uniform": "full",
    "block": "full",
    "activation-checkpointing": "full",
    "checkpoint-activations": "full",
    "gradient-checkpointing": "full",
    "selective": "selective",
    "none": "none",
    "no": "none",
    "off": "none",
}
"""How sources write activation recompute -> ``RECOMPUTE_MODES``: Megatron's
``--recompute-method uniform`` and ``block`` (with ``--recompute-granularity full``), its older
``--checkpoint-activations`` and Hugging Face's gradient checkpointing rebuild whole layers."""


RECOMPUTE_MODULES = {
    "core_attn": "",
    "moe_act": "recompute_moe_act",
    "layernorm": "recompute_layernorm",
    "mla_up_proj": "recompute_mla_up_proj",
    "mlp": "recompute_mlp",
    "moe": "recompute_moe",
    "shared_experts": "recompute_shared_experts",
}
"""Megatron-Core's ``--recompute-modules`` names (``TransformerConfig.recompute_modules``) ->
the ``Stack`` field that models each under selective recompute (``core_attn``, the default
module, is what ``selective`` always rebuilds). A run that lists modules recomputes selectively
with those fields set."""


RECOMPUTE_MODULE_SPELLINGS = {
    "norm": "layernorm",
    "act": "moe_act",
    "shared_expert": "shared_experts",
    "attn": "core_attn",
    "core_attention": "core_attn",
}
"""Short names sources give the modules (Megatron-MoE-ModelZoo's tables write ``norm, act,
shared_expert``) -> ``RECOMPUTE_MODULES``."""


def recompute_module(name: object) -> str | None:
    """The ``RECOMPUTE_MODULES`` name for a spelling of one module, or None if unknown."""
    key = spelling_key(name).replace("-", "_")
    key = RECOMPUTE_MODULE_SPELLINGS.get(key, key)
    return key if key in RECOMPUTE_MODULES else None


def recompute_modules_of(value: object) -> list[str] | None:
    """The modules a plan's ``recompute`` lists (a list, or a string of names separated by
    commas, semicolons, ``+`` or spaces: ``"layernorm, moe"``), or None where it is a mode
    (``selective``) or not a list of known modules."""
    if isinstance(value, str):
        if canonical_recompute(value):
            return None
        value = [part for part in re.split(r"[,;+\s]+", value) if part]
    if not isinstance(value, list | tuple) or not value:
        return None
    names = [recompute_module(v) if isinstance(v, str) else None for v in value]
    return None if None in names else [str(n) for n in names]


def recompute_module_flags(names: list[str] | tuple[str, ...]) -> dict[str, bool]:
    """The ``Stack`` fields a list of ``RECOMPUTE_MODULES`` sets (true each)."""
    return {RECOMPUTE_MODULES[n]: True for n in names if RECOMPUTE_MODULES[n]}


def module_ladder(model: ModelSpec) -> list[tuple[str, ...]]:
    """Megatron-Core recompute modules a run adds, cheapest first, until its plan fits
    (``Stack.selective_modules``; Megatron-Bridge's activation-recompute guide): the MLA up
    projections and the experts' activation, then the norms feeding separate modules, then the
    whole MoE block, then the dense MLP blocks. Only modules that act on the model's layers."""
    mla, moe = bool(model.kv_lora_rank), model.is_moe
    dense = any(kind.ffn == "dense" for kind in layer_kinds(model))
    first = (("mla_up_proj",) if mla else ()) + (("moe_act",) if moe else ())
    norms = ("layernorm",) if (mla or moe) else ()
    rungs = [first, first + norms]
    if moe:
        rungs.append((*(m for m in first + norms if m != "moe_act"), "moe"))
    if dense:
        rungs.append((*rungs[-1], "mlp"))
    out: list[tuple[str, ...]] = []
    for rung in rungs:
        if rung and rung not in out:
            out.append(rung)
    return out


def canonical_precision(text: str) -> str | None:
    """``PRECISIONS`` entry for a spelling of a training precision, or None if unknown."""
    key = spelling_key(text)
    for tail in ("-mixed-precision", "-mixed", "-amp"):
        key = key.removesuffix(tail)
    if key in PRECISIONS:
        return key
    return PRECISION_SPELLINGS.get(key)


def canonical_recompute(text: str) -> str | None:
    """``RECOMPUTE_MODES`` entry for a spelling of a recompute mode, or None if unknown."""
    return RECOMPUTE_SPELLINGS.get(spelling_key(text))


@dataclass(frozen=True, kw_only=True)
class ParallelPlan:
    """One training configuration. Rank order (innermost first) is TP, CP, EP, DP, PP, as in
    Megatron-Core's default ``tp-cp-ep-dp-pp``; EP is carved out of DP x CP for expert layers."""

    tp: int = 1
    """Tensor-parallel width (splits heads and FFN columns)."""
    pp: int = 1
    """Pipeline stages."""
    dp: int = 1
    """Data-parallel replicas."""
    cp: int = 1
    """Context-parallel width (splits the sequence)."""
    ep: int = 1
    """Expert-parallel width (MoE only). Expert layers use their own rank order, expert TP
    innermost then EP (Megatron-Core's ``etp-ep-edp``): ep x etp divides tp x cp x dp, and the
    rest, ``tp x cp x dp / (ep x etp)``, is the experts' data-parallel width."""
    vpp: int = 1
    """Virtual stages per pipeline rank (1: plain 1F1B; >1: interleaved 1F1B)."""
    micro_batch: int = 1
    """Sequences per micro-batch per replica."""
    global_batch: int = 1
    """Sequences per optimizer step over all replicas."""
    local_batch: int = 0
    """Sequences per replica in one forward-backward call (torchtitan's and NeMo AutoModel's
    ``local_batch_size``): the step runs global_batch / (dp x local_batch) such calls,
    gradient accumulation outside the pipeline schedule where the stack runs it so
    (``Stack.pipeline_schedule_per_local_batch``). 0: the whole per-replica batch
    global_batch / dp in one call, as Megatron and DeepSpeed always run it."""
    seq_len: int = 2048
    recompute: str = "selective"
    """``none``, ``selective`` (attention core only, Korthikanti et al.) or ``full``."""
    zero: int = 1
    """0: plain all-reduce; 1: distributed optimizer (optimizer state sharded over DP);
    2: gradients sharded too; 3: parameters sharded too (FSDP)."""
    sequence_parallel: bool = True
    precision: str = "bf16"
    cp_mode: str = "ring"
    """``ring`` (ring attention, KV passed around) or ``a2a`` (all-to-all head exchange)."""
    first_stage_layers: int = 0
    """Layers on the first pipeline stage (0: not given). Like Megatron-Core's
    ``decoder_first_pipeline_num_layers``: the stages not given share the other layers."""
    last_stage_layers: int = 0
    """Layers on the last pipeline stage (0: not given; ``decoder_last_pipeline_num_layers``)."""
    etp: int = 1
    """Expert tensor-parallel width (MoE only): splits each expert's FFN columns."""
    offload_layers: int = 0
    """Layers whose activations go to host memory in forward and come back for backward
    (Megatron-Core ``cpu_offloading`` with ``cpu_offloading_num_layers``): fewer than the
    model's layers, only without pipeline stages and without recompute, as Megatron-Core's
    ``TransformerConfig`` requires."""

    @property
    def num_gpus(self) -> int:
        return self.tp * self.pp * self.dp * self.cp

    @property
    def expert_dp(self) -> int:
        """Data-parallel width of the expert weights: tp x cp x dp / (ep x etp)."""
        return self.tp * self.cp * self.dp // (self.ep * self.etp)

    @property
    def num_micro_batches(self) -> int:
        return self.global_batch // (self.dp * self.micro_batch)

    @property
    def tokens_per_step(self) -> int:
        return self.global_batch * self.seq_len


def pipeline_layout(model: ModelSpec, plan: ParallelPlan) -> tuple[int, ...]:
    """Decoder layers on each of the ``pp`` stages, first to last; they add to the model's
    layers. Raises SpecError if the plan's stage fields cannot hold them.

    With neither ``first_stage_layers`` nor ``last_stage_layers`` set the split is even and pp
    must divide the layers (Megatron-Core's default). Otherwise the set ones are fixed, as
    Megatron-Core's ``decoder_first_pipeline_num_layers`` / ``decoder_last_pipeline_num_layers``
    (``get_num_layers_to_build`` in megatron/core/transformer/transformer_block.py), and the
    other stages share the rest. Megatron-Core asks the rest to divide evenly; here the stages
    may differ by a layer, as a ``pipeline_model_parallel_layout`` can place them, the heavier
    ones in the middle (the first stage holds the embedding, the last the output layer)."""
    layers, pp = model.layers, plan.pp
    if pp < 1:
        raise SpecError("pp", pp, "a positive number of pipeline stages")
    if layers < 1:
        raise SpecError("layers", layers, "a positive number of layers")
    first, last = plan.first_stage_layers or 0, plan.last_stage_layers or 0
    if pp == 1:
        return (layers,)
    if not first and not last:
        if layers % pp:
            raise SpecError(
                "pp", pp, f"must divide the {layers} layers, or set first/last stage layers"
            )
        return (layers // pp,) * pp
    free = pp - (first > 0) - (last > 0)
    rest = layers - first - last
    if first < 0 or last < 0 or rest < free or (not free and rest):
        raise SpecError(
            "first_stage_layers",
            (first, last),
            f"the other {free} stages need at least a layer each of the {layers} layers",
        )
    if not free:
        return (first, last)
    base, extra = divmod(rest, free)
    shares = [base + 1] * extra + [base] * (free - extra)
    # Heavier shares first: the middle stages take them, a first or last stage not given the
    # lightest.
    middle, spare = shares[: pp - 2], shares[pp - 2 :]
    return (first or spare[0], *middle, last or spare[0])


def stage_layers(model: ModelSpec, plan: ParallelPlan) -> tuple[int, int, int]:
    """Layers on the first, the busiest middle (0 when pp <= 2), and the last stage of
    ``pipeline_layout``; raises if they do not add up. The step model runs every middle stage at
    the busiest one's pace, which is the pipeline's pace; for the bubble, which sums the other
    stages, this overstates it by at most a layer per lighter middle stage."""
    layout = pipeline_layout(model, plan)
    if plan.pp == 1:
        return model.layers, 0, model.layers
    return layout[0], max(layout[1:-1], default=0), layout[-1]


def rule_stage_split(layers: int, pp: int) -> tuple[int, int] | None:
    """(first, last) stage layers by the first of Megatron-Core's rules that divides (an even
    split, then ``--account-for-loss-in-pipeline-split``, then that and
    ``--account-for-embedding-in-pipeline-split``; see ``default_stage_split``); (0, 0) for an
    even split, None where no rule divides and a run needs a layout of its own."""
    if pp == 1 or layers % pp == 0:
        return 0, 0
    if (layers + 1) % pp == 0:
        return (layers + 1) // pp, (layers + 1) // pp - 1
    if (layers + 2) % pp == 0:
        return (layers + 2) // pp - 1, (layers + 2) // pp - 1
    return None


def balanced_stage_split(model: ModelSpec, pp: int) -> tuple[int, int]:
    """(first, last) stage layers as nanotron balances them (``Stack.pipeline_split``
    ``compute-balanced``): block costs 4 heads d_qkv hidden + 3 ffn hidden per decoder layer
    and vocab hidden for the output layer (nanotron's ``get_block_compute_costs``), each block
    joining the current stage, which closes once the running total passes total x (r + 1) / pp.
    ``first`` is the first stage's layers and ``last`` those of the stage that takes the output
    layer; stages after it hold only the loss and the middle stages share the rest a layer
    apart (the step model runs them at the busiest one's pace). (0, 0) where that is the even
    split; Megatron-Core's split where the walk leaves the first or the output stage without a
    layer."""
    layers = model.layers
    if pp == 1:
        return 0, 0
    # nanotron's d_qkv is hidden // heads whatever the model's head width.
    d_qkv = model.hidden // model.heads
    layer_cost = 4.0 * model.heads * d_qkv * model.hidden + 3.0 * model.ffn_hidden * model.hidden
    costs = [layer_cost] * layers + [float(model.vocab * model.hidden)]
    total = sum(costs)
    stage, running, counts = 0, 0.0, [0] * pp
    head_stage = pp - 1
    for index, cost in enumerate(costs):
        running += cost
        if index < layers:
            counts[stage] += 1
        else:
            head_stage = stage
        if running > total * (stage + 1) / pp and stage < pp - 1:
            stage += 1
    first, last = counts[0], counts[head_stage]
    if head_stage == 0 or min(first, last) < 1 or layers - first - last < pp - 2:
        return default_stage_split(layers, pp)
    if first == last and layers % pp == 0 and first == layers // pp:
        return 0, 0
    return first, last


def default_stage_split(layers: int, pp: int) -> tuple[int, int]:
    """(first, last) stage layers for a source that gives none, (0, 0) for an even split.

    Megatron-Core's rules (megatron/core/transformer/transformer_block.py,
    ``get_num_layers_to_build``; arguments ``--account-for-embedding-in-pipeline-split`` and
    ``--account-for-loss-in-pipeline-split``): without them pp must divide the layers; with them
    the embedding and the loss each count as a layer, so ``layers + 1`` (loss only) or
    ``layers + 2`` units split evenly over the stages (over pp x vpp virtual stages when
    interleaved) and the first and last stages build one layer fewer. In that order the first
    rule that divides is taken. Where none does, the ``layers + 2`` units are spread as evenly
    as they go (stages differ by one unit, the heavier ones in the middle, then the first), a
    split ``--pipeline-model-parallel-layout`` expresses. The stages' totals do not depend on
    vpp: interleaving deals each stage's units out over its vpp chunks, evenly where
    ``pp x vpp`` divides them and a layer apart (a layout) where it does not. Raises SpecError
    when a stage would be left without a layer."""
    if pp > layers:
        raise SpecError("pp", pp, f"at most the model's {layers} layers, a layer per stage")
    rule = rule_stage_split(layers, pp)
    if rule == (0, 0):
        return rule
    if rule is not None:
        first, last = rule
    else:
        base, extra = divmod(layers + 2, pp)
        units = [base] * pp
        for stage in [*range(1, pp - 1), 0, pp - 1][:extra]:
            units[stage] += 1
        first, last = units[0] - 1, units[-1] - 1
    if min(first, last) < 1:
        raise SpecError(
            "pp", pp, f"leaves the first or last stage without a layer of the {layers} layers"
        )
    return first, last


def _positive(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SpecError(name, value, "must be a positive integer")


def check_precision(accelerator: Accelerator, precision: str) -> None:
    """Raise SpecError if ``precision`` needs BF16, FP8 or FP4 tensor cores ``accelerator``
    lacks."""
    if precision == "bf16" and accelerator.peak_bf16_flop_per_s <= 0:
        raise SpecError(
            "precision", precision, f"the {accelerator.id} has no BF16 tensor cores: fp16"
        )
    if precision in FP8_PRECISIONS and accelerator.peak_fp8_flop_per_s <= 0:
        raise SpecError(
            "precision",
            precision,
            f"the {accelerator.id} has no FP8 tensor cores: bf16 or fp16",
        )
    if precision in FP4_PRECISIONS and accelerator.peak_fp4_flop_per_s <= 0:
        valid = "bf16, fp16, fp8, fp8-block or mxfp8"
        if accelerator.peak_fp8_flop_per_s <= 0:
            valid = "bf16 or fp16"
        raise SpecError(
            "precision", precision, f"the {accelerator.id} has no FP4 tensor cores: {valid}"
        )


def validate(model: ModelSpec, plan: ParallelPlan, num_gpus: int | None = None) -> None:
    """Raise SpecError naming the first invalid field; return None if the plan is valid."""
    for name in (
        "tp",
        "pp",
        "dp",
        "cp",
        "ep",
        "vpp",
        "micro_batch",
        "global_batch",
        "seq_len",
        "etp",
    ):
        _positive(name, getattr(plan, name))
    if model.heads % plan.tp:
        divisors = [d for d in range(1, model.heads + 1) if model.heads % d == 0]
        raise SpecError("tp", plan.tp, f"must divide the {model.heads} heads: one of {divisors}")
    if not model.kv_lora_rank and model.kv_heads % plan.tp and plan.tp % model.kv_heads:
        raise SpecError(
            "tp", plan.tp, f"must divide or be a multiple of the {model.kv_heads} kv heads"
        )
    if num_gpus is not None and plan.num_gpus != num_gpus:
        raise SpecError(
            "dp",
            plan.dp,
            f"tp x pp x dp x cp = {plan.num_gpus} must equal the cluster's {num_gpus} GPUs",
        )
    per_replica = plan.global_batch / plan.dp
    if plan.global_batch % plan.dp or int(per_replica) % plan.micro_batch:
        raise SpecError(
            "micro_batch",
            plan.micro_batch,
            f"must divide the per-replica batch "
            f"global_batch/dp = {per_replica:g} (a whole number of sequences)",
        )
    if plan.local_batch and (
        plan.local_batch < 0
        or int(per_replica) % plan.local_batch
        or plan.local_batch % plan.micro_batch
    ):
        raise SpecError(
            "local_batch",
            plan.local_batch,
            f"0 or a multiple of micro_batch {plan.micro_batch} that divides the per-replica "
            f"batch global_batch/dp = {per_replica:g}",
        )
    if plan.recompute not in RECOMPUTE_MODES:
        modules = ", ".join(RECOMPUTE_MODULES)
        raise SpecError(
            "recompute",
            plan.recompute,
            f"one of {', '.join(RECOMPUTE_MODES)}, or Megatron-Core recompute modules: {modules}",
        )
    if plan.precision not in PRECISIONS:
        raise SpecError("precision", plan.precision, f"one of {', '.join(PRECISIONS)}")
    if plan.cp_mode not in CP_MODES:
        raise SpecError("cp_mode", plan.cp_mode, f"one of {', '.join(CP_MODES)}")
    if not 0 <= plan.zero <= 3:
        raise SpecError("zero", plan.zero, "one of 0, 1, 2, 3")
    if plan.seq_len % plan.cp:
        raise SpecError("cp", plan.cp, f"must divide seq_len {plan.seq_len}")
    if plan.offload_layers:
        _check_offload(model, plan)
    first, middle, _ = stage_layers(model, plan)
    if plan.vpp > 1:
        if plan.pp == 1:
            raise SpecError("vpp", plan.vpp, "needs pp > 1")
        # An even split cuts each stage into vpp equal chunks. An uneven one keeps vpp chunks
        # per stage, some a layer short (Megatron-Core's pipeline_model_parallel_layout), so
        # the busiest stage needs a layer per chunk.
        full = middle or first
        uneven = plan.first_stage_layers or plan.last_stage_layers
        if uneven and full < plan.vpp:
            raise SpecError("vpp", plan.vpp, f"at most the {full} layers of the busiest stage")
        if not uneven and full % plan.vpp:
            raise SpecError("vpp", plan.vpp, f"must divide the {full} layers of a full stage")
        if plan.num_micro_batches % plan.pp:
            raise SpecError(
                "vpp",
                plan.vpp,
                "interleaving needs the number of micro-batches "
                f"({plan.num_micro_batches}) to be a multiple of pp ({plan.pp})",
            )
    if plan.ep > 1 or plan.etp > 1:
        if not model.is_moe:
            raise SpecError(
                "ep" if plan.ep > 1 else "etp",
                max(plan.ep, plan.etp),
                "must be 1 for a dense model",
            )
        ranks = plan.tp * plan.cp * plan.dp
        if ranks % (plan.ep * plan.etp) or model.routed_experts % plan.ep:
            raise SpecError(
                "ep",
                plan.ep,
                f"ep x etp must divide tp x cp x dp = {ranks}, and ep the "
                f"{model.routed_experts} routed experts",
            )
        if model.expert_ffn_hidden % plan.etp:
            raise SpecError(
                "etp", plan.etp, f"must divide the expert FFN width {model.expert_ffn_hidden}"
            )
    if plan.cp_mode == "a2a" and plan.cp > 1 and model.heads % (plan.tp * plan.cp):
        raise SpecError(
            "cp",
            plan.cp,
            f"all-to-all context parallelism exchanges heads: tp x cp = {plan.tp * plan.cp} "
            f"must divide the {model.heads} heads (or use cp_mode ring)",
        )


def _check_offload(model: ModelSpec, plan: ParallelPlan) -> None:
    """Megatron-Core's rules for activation offloading (``TransformerConfig.__post_init__`` in
    megatron/core/transformer/transformer_config.py): fewer layers than the model has, no
    pipeline parallelism, no activation recomputation."""
    if not 0 <= plan.offload_layers < model.layers:
        raise SpecError(
            "offload_layers",
            plan.offload_layers,
            f"0 to {model.layers - 1} (fewer than the layers)",
        )
    if plan.pp > 1:
        raise SpecError("offload_layers", plan.offload_layers, "0 with pipeline stages (pp > 1)")
    if plan.recompute != "none":
        raise SpecError("offload_layers", plan.offload_layers, f"0 with recompute {plan.recompute}")


def stack_allows(stack: Stack, field_name: str, value: object) -> str | None:
    """Why ``stack`` cannot run a plan whose ``field_name`` is ``value`` (the valid values, as
    a SpecError states them), or None where it can: tensor, pipeline and context parallelism, an
    interleaved schedule, sequence parallelism and selective recompute only where the stack
    implements them (``Stack.tensor_parallel``, ``pipeline_parallel``, ``context_parallel``,
    ``expert_parallel``,
    ``interleaved_pipeline``, ``sequence_parallel_support``, ``selective_recompute``) and
    activation offloading (``Stack.activation_offload``)."""
    several = isinstance(value, int) and value > 1
    if field_name == "tp" and several and not stack.tensor_parallel:
        return f"1: {stack.id} runs no tensor parallelism"
    if field_name == "pp" and several and not stack.pipeline_parallel:
        return f"1: {stack.id} runs no pipeline parallelism"
    if field_name == "ep" and several and not stack.expert_parallel:
        return f"1: {stack.id} runs no expert parallelism"
    if field_name == "cp" and several and not stack.context_parallel:
        return f"1: {stack.id} runs no context parallelism"
    if field_name == "vpp" and several and not stack.interleaved_pipeline:
        return f"1: {stack.id} runs no interleaved pipeline schedule"
    if field_name == "sequence_parallel" and value and not stack.sequence_parallel_support:
        return f"false: {stack.id} has no sequence parallelism"
    if field_name == "recompute" and value == "selective" and stack.selective_recompute == "none":
        return f"none or full: {stack.id} checkpoints whole layers only"
    offloads = isinstance(value, int) and not isinstance(value, bool) and value > 0
    if field_name == "offload_layers" and offloads and not stack.activation_offload:
        return f"0: {stack.id} does not offload activations"
    return None


STACK_PLAN_FIELDS = (
    "tp",
    "pp",
    "cp",
    "ep",
    "vpp",
    "sequence_parallel",
    "recompute",
    "offload_layers",
)
"""The plan fields a stack's capabilities restrict (``stack_allows``)."""
STACK_FALLBACKS: dict[str, object] = {
    "tp": 1,
    "pp": 1,
    "cp": 1,
    "ep": 1,
    "vpp": 1,
    "sequence_parallel": False,
    "recompute": "full",
    "offload_layers": 0,
}
"""What a default plan field becomes where the stack cannot run the default: no tensor,
pipeline, context or expert parallelism, one stage per rank, no sequence parallelism, and the
whole-layer checkpointing a stack without a selective mode runs."""


def validate_for_stack(plan: ParallelPlan, stack: Stack) -> None:
    """Raise SpecError naming the first plan field ``stack`` cannot run."""
    for name in STACK_PLAN_FIELDS:
        value = getattr(plan, name)
        valid = stack_allows(stack, name, value)
        if valid is not None:
            raise SpecError(name, value, valid)
