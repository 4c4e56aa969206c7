"""The parallel plan: how a model's training step is split over GPUs, and its validity rules."""

from __future__ import annotations

from dataclasses import dataclass

from scalewall.catalog.schema import ModelSpec
from scalewall.errors import SpecError

RECOMPUTE_MODES = ("none", "selective", "full")
PRECISIONS = ("bf16", "fp16", "fp8", "fp8-block", "mxfp8")
"""GEMM precision of the linear layers: ``fp8`` is FP8 with per-tensor scaling (Transformer
Engine delayed/current scaling), ``fp8-block`` FP8 with 1x128 / 128x128 block scales in software
(DeepSeek-V3), ``mxfp8`` the OCP microscaling format Blackwell tensor cores scale in hardware."""
FP8_PRECISIONS = ("fp8", "fp8-block", "mxfp8")
CP_MODES = ("ring", "a2a")


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
    """Layers on the first pipeline stage (0: an even split)."""
    last_stage_layers: int = 0
    """Layers on the last pipeline stage (0: an even split)."""
    etp: int = 1
    """Expert tensor-parallel width (MoE only): splits each expert's FFN columns."""

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


def stage_layers(model: ModelSpec, plan: ParallelPlan) -> tuple[int, int, int]:
    """Layers on the first, each middle, and the last stage; raises if they do not add up."""
    if plan.pp == 1:
        return model.layers, 0, model.layers
    first = plan.first_stage_layers or 0
    last = plan.last_stage_layers or 0
    if not first and not last:
        if model.layers % plan.pp:
            raise SpecError(
                "pp",
                plan.pp,
                f"must divide the {model.layers} layers, or set first/last stage layers",
            )
        even = model.layers // plan.pp
        return even, even, even
    rest = model.layers - first - last
    middle_stages = plan.pp - 2
    if (
        first < 1
        or last < 1
        or rest < 0
        or (middle_stages and rest % middle_stages)
        or (not middle_stages and rest)
    ):
        raise SpecError(
            "first_stage_layers",
            (first, last),
            f"first + last + (pp-2) x middle must equal {model.layers} layers",
        )
    middle = rest // middle_stages if middle_stages else 0
    return first, middle, last


def _positive(name: str, value: int) -> None:
    if value < 1:
        raise SpecError(name, value, "must be a positive integer")


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
    if plan.recompute not in RECOMPUTE_MODES:
        raise SpecError("recompute", plan.recompute, f"one of {', '.join(RECOMPUTE_MODES)}")
    if plan.precision not in PRECISIONS:
        raise SpecError("precision", plan.precision, f"one of {', '.join(PRECISIONS)}")
    if plan.cp_mode not in CP_MODES:
        raise SpecError("cp_mode", plan.cp_mode, f"one of {', '.join(CP_MODES)}")
    if not 0 <= plan.zero <= 3:
        raise SpecError("zero", plan.zero, "one of 0, 1, 2, 3")
    if plan.seq_len % plan.cp:
        raise SpecError("cp", plan.cp, f"must divide seq_len {plan.seq_len}")
    first, middle, _ = stage_layers(model, plan)
    if plan.vpp > 1:
        if plan.pp == 1:
            raise SpecError("vpp", plan.vpp, "needs pp > 1")
        # Full stages split into vpp equal chunks; shortened first/last stages (as Llama 3
        # runs) keep vpp chunks, some a layer short.
        even = middle or first
        if even % plan.vpp:
            raise SpecError("vpp", plan.vpp, f"must divide the {even} layers of a full stage")
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
