"""Spec dataclasses for the catalog. One TOML file per entry; field names carry their units.

Every entry has ``source`` (the main citation) and may have ``sources``: a table mapping a field
name to the citation of that field when it comes from somewhere else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from scalewall.errors import SpecError


@dataclass(frozen=True, kw_only=True)
class Accelerator:
    """One accelerator (GPU or NPU). Peaks are dense (no sparsity) tensor-core FLOP/s."""

    id: str
    name: str
    vendor: str
    peak_bf16_flop_per_s: float
    peak_fp16_flop_per_s: float
    hbm_bytes: float
    """HBM capacity in bytes as the vendor states it (decimal GB x 1e9)."""
    hbm_bytes_per_s: float
    scale_up_bytes_per_s: float
    """Scale-up (NVLink, XGMI, HCCS) bandwidth per GPU, per direction."""
    scale_up_alltoall_bytes_per_s: float = 0.0
    """Bus bandwidth per GPU that NCCL's all-to-all (grouped sends and receives, one per peer)
    reaches over the scale-up fabric, measured, where it falls short of what the ring
    collectives reach (``scale_up_bytes_per_s`` x ``scale_up_bw_efficiency``); 0: no shortfall
    measured. It bounds the all-to-all token dispatcher's and Ulysses' exchanges inside the
    domain, not DeepEP's or HybridEP's kernels, which move the tokens with their own loads and
    stores."""
    tdp_w: float
    sm_count: int
    """Streaming multiprocessors (compute units): a GEMM runs in waves of output tiles over them."""
    gemm_max_frac: float
    """Largest fraction of the BF16 peak a large square GEMM reaches (measured ceiling)."""
    source: str
    peak_fp8_flop_per_s: float = 0.0
    """0 where the accelerator has no FP8 tensor cores."""
    peak_fp4_flop_per_s: float = 0.0
    training_clock_frac: float = 1.0
    """Tensor throughput sustained over long training steps relative to the microbenchmark
    ceiling's conditions (clocks settle at the board power limit under sustained load)."""
    attention_frac: float = 0.0
    """Fraction of the BF16 peak the widely deployed fused-attention kernel reaches on this part,
    forward and backward, at long sequences (0: use the step model's default)."""
    attention_half_tokens: float = 0.0
    """Key length at which that kernel runs forward and backward at half its long-sequence rate
    (the rate scales as L / (L + L_half)); 0: ``Efficiency.attention.attention_half_tokens``."""
    uncertain: bool = False
    notes: str = ""
    sources: dict[str, str] = field(default_factory=dict)
    hbm_usable_bytes: float = 0.0
    """HBM bytes the driver reports as the device's total (``nvidia-smi`` memory.total,
    ``rocm-smi`` VRAM Total Memory, ``npu-smi`` HBM capacity): what a training process can
    allocate from, its own CUDA context included. 0: ``hbm_bytes``."""
    aliases: tuple[str, ...] = ()
    """Other names users give this part ("h100", "H100 SXM"); case, spaces and underscores are
    ignored when a name is looked up."""

    @property
    def hbm_capacity_bytes(self) -> float:
        """The capacity the memory model fits plans against: the driver's figure if known."""
        return self.hbm_usable_bytes or self.hbm_bytes

    @property
    def peak_16bit_flop_per_s(self) -> float:
        """Dense 16-bit tensor peak, the denominator of MFU and HFU: BF16's, or FP16's on parts
        without BF16 tensor cores (V100)."""
        return max(self.peak_bf16_flop_per_s, self.peak_fp16_flop_per_s)


@dataclass(frozen=True, kw_only=True)
class System:
    """A node (server) design and its scale-up domain."""

    id: str
    name: str
    accelerator: str
    gpus_per_node: int
    scale_up_domain_gpus: int
    """GPUs joined by the scale-up fabric: 8 in a DGX/HGX node, 72 in a GB200 NVL72 rack."""
    nics_per_node: int
    nic_bytes_per_s: float
    """Scale-out bandwidth of one NIC, per direction."""
    scale_up_in_network_reduction: bool
    """NVLink SHARP (NVLS) or equivalent reduction inside the scale-up switches."""
    source: str
    host_memory_bytes: float = 0.0
    host_link_bytes_per_s_per_gpu: float = 0.0
    """Each GPU's share of its link to host memory, per direction (a PCIe x16 uplink shared by
    the GPUs behind one PCIe switch, or NVLink-C2C); 0: not given."""
    default_fabric: str = ""
    """Fabric id used when a cluster is given as ``--gpu NAME --gpus N`` ("": pick a 3-tier
    fabric of the NIC's speed)."""
    power_w: float = 0.0
    """Nameplate power of the whole node (0: derive from accelerator TDP)."""
    notes: str = ""
    sources: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Link:
    """A scale-out link technology (InfiniBand generation, RoCE speed)."""

    id: str
    name: str
    transport: str
    """``infiniband`` or ``roce``."""
    bytes_per_s: float
    """Per port, per direction."""
    switch_latency_s: float
    """Latency through one switch hop (port to port)."""
    switch_radix: int
    """Ports of the standard switch of this generation."""
    in_network_reduction: bool
    """Switches can reduce in the network (SHARP)."""
    source: str
    notes: str = ""
    sources: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Fabric:
    """A scale-out topology: a fat-tree / Clos of 2 or 3 switch tiers built from one link type."""

    id: str
    name: str
    link: str
    wiring: str
    """``rail-optimized`` (NIC k of every node on leaf k of its group) or ``top-of-rack``."""
    tiers: int
    """Switch tiers: 2 (leaf-spine) or 3 (leaf-spine-core)."""
    oversubscription: list[float]
    """Down:up ratio at each tier above the leaf, from leaf->spine upward (1.0 = full bisection)."""
    source: str
    switch_radix: int = 0
    """0: take the link's standard switch radix."""
    leaf_gpus: int = 0
    """GPUs under one leaf (or one rail group); 0: derive from the radix."""
    pod_gpus: int = 0
    """GPUs under one spine plane (pod); 0: derive from the radix."""
    in_network_reduction: bool = False
    """SHARP enabled on this fabric (needs a link that supports it)."""
    notes: str = ""
    sources: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ClusterSpec:
    """A built cluster: a system design, a fabric and a node count."""

    id: str
    name: str
    system: str
    fabric: str
    nodes: int
    source: str
    notes: str = ""
    sources: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """A decoder-only transformer's shape.

    Notation (scaling-book): L layers, D hidden, H heads, K kv heads, F ffn hidden, V vocabulary.
    """

    id: str
    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn_hidden: int
    vocab: int
    activation: str
    """``gelu`` (2 FFN matrices) or ``swiglu`` (3 FFN matrices)."""
    source: str
    head_dim: int = 0
    """0: hidden // heads."""
    tied_embeddings: bool = False
    position_embedding: str = "rope"
    """``rope`` (no parameters) or ``learned`` (max_seq_len x hidden parameters)."""
    max_seq_len: int = 2048
    norm: str = "layernorm"
    """``layernorm`` (weight and bias) or ``rmsnorm`` (weight only)."""
    linear_bias: bool = False
    params_published: float = 0.0
    """Total parameters as the source states them (0: not stated)."""
    # Mixture of experts (routed_experts == 0: dense).
    routed_experts: int = 0
    shared_experts: int = 0
    top_k: int = 0
    expert_ffn_hidden: int = 0
    shared_expert_ffn_hidden: int = 0
    """Width of one shared expert where it is not the routed experts' (Granite 4.0's
    ``shared_intermediate_size``, Qwen2-MoE's ``shared_expert_intermediate_size``); 0: the
    routed experts' width, ``expert_ffn_hidden``."""
    first_dense_layers: int = 0
    moe_layer_freq: int = 1
    """Every n-th layer after the dense ones is MoE (1: all)."""
    moe_latent: int = 0
    """Width the routed experts work in (LatentMoE, Nemotron 3 Super's ``moe_latent_size``):
    each MoE layer projects its tokens from ``hidden`` down to this width before the dispatch
    and back up after the combine, so the experts' matrices and the all-to-all are this wide;
    the router and the shared experts see the hidden width. 0: the hidden width."""
    router_groups: int = 0
    """Group-limited routing (DeepSeek-V2/V3 ``n_group``, Megatron-Core
    ``moe_router_num_groups``): the routed experts form this many equal groups, in expert (and
    so expert-parallel rank) order; 0 or 1: no groups."""
    router_group_topk: int = 0
    """Groups a token's experts may come from (``topk_group``, ``moe_router_group_topk``):
    DeepSeek-V3 routes each token within 4 of 8 groups, one group per node of its 64-way expert
    parallelism, so a token reaches at most 4 nodes (DeepSeek-V3 report Sec. 2.1.2). 0: no
    limit."""
    # Multi-head latent attention (kv_lora_rank == 0: standard attention).
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    mtp_layers: int = 0
    """Multi-token-prediction modules (DeepSeek-V3: 1)."""
    sliding_window: int = 0
    """0: full attention; else tokens each query sees."""
    full_attention_layers: int = 0
    """With a window: layers that attend to the whole sequence anyway (gpt-oss alternates
    windowed and full layers, 18 of 36; Gemma 3 has one full layer in six); 0: every layer
    uses the window."""
    dropout: bool = False
    """Trained with hidden and attention dropout (GPT-era Megatron recipes use 0.1)."""
    # Hybrid state-space models (layer_pattern == "": every layer is attention and an FFN).
    layer_pattern: str = ""
    """One character per layer of a hybrid model, as Megatron-Core's ``hybrid_override_pattern``
    and the HuggingFace ``nemotron_h`` config write it (Nemotron-H, arXiv 2504.03624; Nemotron
    3): ``M`` a Mamba-2 mixer, ``*`` self-attention, ``-`` a dense MLP, ``E`` a mixture of
    experts. Each layer is one pre-normed residual block, so ``layers`` is the pattern's
    length. Empty: a transformer whose every layer is attention followed by an MLP or MoE."""
    mamba_heads: int = 0
    """Mamba-2 heads (``mamba_num_heads``); the inner width is ``mamba_heads x mamba_head_dim``."""
    mamba_head_dim: int = 0
    """Channels per Mamba-2 head (``mamba_head_dim``, P in Dao & Gu 2024)."""
    mamba_state: int = 0
    """State size per channel (``ssm_state_size``, N)."""
    mamba_groups: int = 1
    """Groups sharing the input-dependent B and C projections (``n_groups``, G)."""
    mamba_conv_kernel: int = 4
    """Width of the causal depthwise convolution (``conv_kernel``)."""
    mamba_chunk: int = 128
    """Chunk length of the SSD algorithm (``chunk_size``, Q; Dao & Gu 2024, Sec. 6)."""
    mamba_version: int = 2
    """2: Mamba-2 mixers (SSD, Dao & Gu 2024). 1: Mamba-1 mixers (the selective scan of Gu &
    Dao 2023, arXiv 2312.00752, as Jamba's layers run it): every channel its own state of
    ``mamba_state``, so ``mamba_heads`` is the inner width and ``mamba_head_dim`` 1, and
    the step size comes from a rank-``mamba_dt_rank`` projection."""
    mamba_dt_rank: int = 0
    """Rank of a Mamba-1 mixer's step-size projection (``mamba_dt_rank``; x_proj writes it with
    B and C, dt_proj widens it to the inner width); 0 for Mamba-2."""
    mixer_pattern: str = ""
    """One character per layer of a transformer whose layers differ in their sequence mixer
    (Qwen3-Next and Qwen3.5, whose ``layer_types`` alternate three ``linear_attention`` layers
    with one ``full_attention`` layer): ``A`` self-attention, ``L`` Gated DeltaNet linear
    attention (Yang et al. 2025, arXiv 2412.06464). Every layer keeps its FFN, dense or MoE by
    the MoE fields. Empty: self-attention in every layer (or the blocks of ``layer_pattern``)."""
    attention_output_gate: bool = False
    """The attention output is multiplied by a sigmoid gate of the layer input (Qwen3-Next and
    Qwen3.5's gated attention: the query projection is twice as wide, its second half the
    gate)."""
    linear_key_heads: int = 0
    """Gated DeltaNet query and key heads (``linear_num_key_heads``)."""
    linear_value_heads: int = 0
    """Gated DeltaNet value heads (``linear_num_value_heads``); queries and keys are repeated to
    this many heads, each with its own recurrent state."""
    linear_key_head_dim: int = 0
    """Width of a Gated DeltaNet query and key head (``linear_key_head_dim``)."""
    linear_value_head_dim: int = 0
    """Width of a Gated DeltaNet value head (``linear_value_head_dim``)."""
    linear_conv_kernel: int = 4
    """Width of Gated DeltaNet's causal depthwise convolution (``linear_conv_kernel_dim``)."""
    linear_chunk: int = 64
    """Chunk length of the chunked gated delta rule (flash-linear-attention's
    ``chunk_gated_delta_rule``: 64)."""
    active_params_published: float = 0.0
    notes: str = ""
    sources: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        where = self.id
        for name in _MODEL_POSITIVE:
            _check_count(name, getattr(self, name), 1, where)
        for name in _MODEL_NON_NEGATIVE:
            _check_count(name, getattr(self, name), 0, where)
        if not self.head_dim and self.heads > self.hidden:
            raise SpecError(
                "heads", self.heads, f"at most the hidden width {self.hidden}", where=where
            )
        if self.layers > MAX_MODEL_LAYERS:
            raise SpecError("layers", self.layers, f"at most {MAX_MODEL_LAYERS}", where=where)
        if self.kv_heads > self.heads or self.heads % self.kv_heads:
            raise SpecError(
                "kv_heads",
                self.kv_heads,
                f"must divide the {self.heads} heads (grouped-query attention)",
                where=where,
            )
        activation = canonical_activation(self.activation)
        if activation is None:
            raise SpecError(
                "activation",
                self.activation,
                f"one of {', '.join(MODEL_ACTIVATIONS)} or a spelling of one "
                f"({', '.join(ACTIVATION_SPELLINGS)})",
                where=where,
            )
        object.__setattr__(self, "activation", activation)
        if self.routed_experts and not (0 < self.top_k <= self.routed_experts):
            raise SpecError(
                "top_k",
                self.top_k,
                f"between 1 and the {self.routed_experts} routed experts",
                where=where,
            )
        if self.routed_experts and not self.expert_ffn_hidden:
            raise SpecError(
                "expert_ffn_hidden",
                self.expert_ffn_hidden,
                f"the FFN width of each of the {self.routed_experts} routed experts",
                where=where,
            )
        if self.router_groups > 1 and self.router_group_topk > self.router_groups:
            raise SpecError(
                "router_group_topk",
                self.router_group_topk,
                f"at most the {self.router_groups} router groups",
                where=where,
            )
        for name in ("first_dense_layers", "full_attention_layers"):
            if getattr(self, name) > self.layers:
                raise SpecError(
                    name, getattr(self, name), f"at most the {self.layers} layers", where=where
                )
        for name in ("params_published", "active_params_published"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and 0 <= value < float("inf")):
                raise SpecError(name, value, "zero or a positive finite number", where=where)
        if self.layer_pattern:
            self._check_pattern(where)
        if self.mixer_pattern:
            self._check_mixers(where)

    def _check_layer_string(self, name: str, chars: str, described: str, where: str) -> None:
        """A per-layer pattern field: only ``chars``, one character per layer."""
        pattern = getattr(self, name)
        if not isinstance(pattern, str) or set(pattern) - set(chars):
            raise SpecError(name, pattern, f"a string of {described} characters", where=where)
        if len(pattern) != self.layers:
            raise SpecError(
                name, f"{len(pattern)} characters", f"one per layer: {self.layers}", where=where
            )

    def _require_counts(self, names: tuple[str, ...], reason: str, where: str) -> None:
        """Each of ``names`` at least 1 (the layers ``reason`` names need them)."""
        for name in names:
            if getattr(self, name) < 1:
                raise SpecError(
                    name, getattr(self, name), f"at least 1 where {reason}", where=where
                )

    def _check_divides(self, name: str, whole: str, what: str, where: str) -> None:
        """``name`` divides ``whole`` (its heads into equal groups)."""
        if getattr(self, whole) % getattr(self, name):
            raise SpecError(
                name,
                getattr(self, name),
                f"must divide the {getattr(self, whole)} {what}",
                where=where,
            )

    def _check_mixers(self, where: str) -> None:
        """A mixer pattern: one known character per layer, with the linear-attention fields."""
        self._check_layer_string(
            "mixer_pattern", MIXER_PATTERN_CHARS, "A (attention) and L (Gated DeltaNet)", where
        )
        if self.layer_pattern:
            raise SpecError(
                "mixer_pattern", self.mixer_pattern, "empty where layer_pattern is set", where=where
            )
        if "L" in self.mixer_pattern:
            self._require_counts(LINEAR_ATTENTION_FIELDS, "mixer_pattern has L", where)
            self._check_divides(
                "linear_key_heads", "linear_value_heads", "linear value heads", where
            )

    def _check_pattern(self, where: str) -> None:
        """A hybrid layer pattern: one known character per layer, with the fields each kind of
        layer needs."""
        pattern = self.layer_pattern
        self._check_layer_string(
            "layer_pattern",
            LAYER_PATTERN_CHARS,
            "M (Mamba-2), * (attention), - (MLP) and E (MoE)",
            where,
        )
        if "E" in pattern and not self.routed_experts:
            raise SpecError(
                "routed_experts",
                0,
                "at least 1 where layer_pattern has MoE layers (E)",
                where=where,
            )
        if self.routed_experts and "E" not in pattern:
            raise SpecError(
                "layer_pattern", pattern, "MoE layers (E) where routed_experts is set", where=where
            )
        if "M" in pattern:
            self._require_counts(MAMBA_REQUIRED_FIELDS, "layer_pattern has M", where)
            self._check_divides("mamba_groups", "mamba_heads", "Mamba heads", where)
        if self.mamba_version not in (1, 2):
            raise SpecError("mamba_version", self.mamba_version, "1 or 2", where=where)
        if self.mamba_version == 1 and "M" in pattern:
            if self.mamba_head_dim != 1 or self.mamba_groups != 1:
                raise SpecError(
                    "mamba_head_dim",
                    self.mamba_head_dim,
                    "1 with mamba_groups 1 for Mamba-1 (mamba_heads is the inner width)",
                    where=where,
                )
            if self.mamba_dt_rank < 1:
                raise SpecError(
                    "mamba_dt_rank", self.mamba_dt_rank, "at least 1 for Mamba-1", where=where
                )
        for name in ("first_dense_layers", "sliding_window"):
            if getattr(self, name):
                raise SpecError(
                    name, getattr(self, name), "0 for a hybrid model (layer_pattern)", where=where
                )

    @property
    def is_moe(self) -> bool:
        return self.routed_experts > 0

    @property
    def is_hybrid(self) -> bool:
        """Layers of a hybrid state-space model, one mixer or FFN each (``layer_pattern``)."""
        return bool(self.layer_pattern)

    @property
    def head_size(self) -> int:
        return self.head_dim or self.hidden // self.heads

    @property
    def attention_windows(self) -> tuple[tuple[int, float], ...]:
        """(window, share of the layers) pairs, window 0 for full attention: one pair, or two
        where windowed and full layers alternate. Per-layer attention costs are their mean."""
        if not self.sliding_window:
            return ((0, 1.0),)
        full = self.full_attention_layers / self.layers
        pairs = ((self.sliding_window, 1.0 - full), (0, full))
        return tuple(pair for pair in pairs if pair[1] > 0)


LINEAR_ATTENTION_FIELDS = (
    "linear_key_heads",
    "linear_value_heads",
    "linear_key_head_dim",
    "linear_value_head_dim",
)
"""``ModelSpec`` fields a Gated DeltaNet layer needs (at least 1 each)."""

LINEAR_ATTENTION_SHAPE_FIELDS = (*LINEAR_ATTENTION_FIELDS, "linear_conv_kernel", "linear_chunk")
"""Every Gated DeltaNet field of ``ModelSpec``."""
MAMBA_REQUIRED_FIELDS = ("mamba_heads", "mamba_head_dim", "mamba_state", "mamba_groups")
"""``ModelSpec`` fields a Mamba-2 layer needs (at least 1 each)."""
MAMBA_FIELDS = (
    *MAMBA_REQUIRED_FIELDS,
    "mamba_conv_kernel",
    "mamba_chunk",
    "mamba_version",
    "mamba_dt_rank",
)
"""Every Mamba field of ``ModelSpec``."""

MIXER_PATTERN_CHARS = "AL"
"""``ModelSpec.mixer_pattern`` characters: attention, Gated DeltaNet."""

LAYER_PATTERN_CHARS = "M*-E"
"""``ModelSpec.layer_pattern`` characters: Mamba (``mamba_version``), attention, MLP, mixture of
experts."""

MODEL_ACTIVATIONS = ("gelu", "swiglu", "relu")
"""``ModelSpec.activation`` values: ``swiglu`` has three FFN matrices, the others two."""

ACTIVATION_SPELLINGS = {
    "swiglu": "swiglu",
    "silu": "swiglu",
    "swish": "swiglu",
    "geglu": "swiglu",
    "reglu": "swiglu",
    "gated-gelu": "swiglu",
    "gated-silu": "swiglu",
    "gelu": "gelu",
    "gelu-new": "gelu",
    "gelu-fast": "gelu",
    "gelu-tanh": "gelu",
    "gelu-pytorch-tanh": "gelu",
    "gelu-python": "gelu",
    "gelu-10": "gelu",
    "quick-gelu": "gelu",
    "xielu": "gelu",
    "relu": "relu",
    "relu2": "relu",
    "squared-relu": "relu",
    "relu-squared": "relu",
    "sq-relu": "relu",
}
"""How sources name an FFN's activation -> its ``ModelSpec.activation`` class. Gated units
(SwiGLU, GeGLU, ReGLU; ``silu`` as Llama-style configs name their gated MLP) have a gate, an up
and a down matrix; GeLU and ReLU variants, squared ReLU included (Nemotron-4, Primer's
``relu2``), and xIELU (Apertus: an up and a down projection around it, transformers
``ApertusMLP``; Apertus-8B's 4,096-wide layers with a 21,504-wide FFN count to its 8B only
so) have an up and a down matrix, xIELU's elementwise work taken as GeLU's. Matching ignores
case, ``_`` and spaces."""


def spelling_key(text: object) -> str:
    """A value as sources write it, for looking up its spellings: lower case, underscores,
    brackets, commas and slashes as spaces, runs of spaces as one hyphen
    (``FP8 (delayed scaling)`` -> ``fp8-delayed-scaling``)."""
    return "-".join(re.sub(r"[_(),/]", " ", str(text)).strip().lower().split())


def canonical_activation(name: str) -> str | None:
    """``ModelSpec.activation`` for a spelling of an FFN activation, or None if unknown."""
    return ACTIVATION_SPELLINGS.get(spelling_key(name))


MAX_MODEL_LAYERS = 10_000
"""Most decoder layers a model may have: a bound on input, far above any published model
(hundreds), that keeps per-layer tables (layer patterns, pipeline splits) small."""
_MODEL_POSITIVE = (
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "ffn_hidden",
    "vocab",
    "max_seq_len",
    "moe_layer_freq",
)
_MODEL_NON_NEGATIVE = (
    "head_dim",
    "routed_experts",
    "shared_experts",
    "top_k",
    "expert_ffn_hidden",
    "shared_expert_ffn_hidden",
    "first_dense_layers",
    "router_groups",
    "router_group_topk",
    "q_lora_rank",
    "kv_lora_rank",
    "qk_nope_head_dim",
    "qk_rope_head_dim",
    "v_head_dim",
    "mtp_layers",
    "sliding_window",
    "full_attention_layers",
    "moe_latent",
    *LINEAR_ATTENTION_SHAPE_FIELDS,
    *MAMBA_FIELDS,
)


def _check_count(name: str, value: object, least: int, where: str) -> None:
    """A whole number of at least ``least`` (bool is not a count)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        valid = "a positive integer" if least else "zero or a positive integer"
        raise SpecError(name, value, valid, where=where)


CUDA_GRAPH_SCOPES = ("none", "router", "attention", "layer", "full")
"""``Stack.cuda_graphs`` values, from nothing captured to the whole iteration."""

SELECTIVE_RECOMPUTE = ("attention", "alternate-matmuls", "none")
"""``Stack.selective_recompute`` values: what a plan's ``recompute = "selective"`` rebuilds
(``none``: the stack has no selective mode, only full recompute)."""

PIPELINE_SPLITS = ("megatron", "compute-balanced")
"""``Stack.pipeline_split`` values: how the stack lays the layers on the pipeline stages when the
run does not say."""

FSDP_UNDER_PIPELINE = ("per-micro-batch", "reduce-once", "gather-once")
"""``Stack.fsdp_under_pipeline`` values: FSDP's per-layer collectives under a pipeline."""
MOE_EXPERT_GEMMS = ("per-expert", "single-kernel")
"""``Stack.moe_expert_gemms`` values: how the routed experts' grouped GEMM is launched."""

MOE_UNPERMUTE = ("gather", "scatter-add")
"""``Stack.moe_unpermute`` values: how a token's routed copies are summed back into it."""

MOE_DISPATCHERS = ("alltoall", "flex")
"""``Stack.moe_token_dispatcher`` values: Megatron-Core ``moe_token_dispatcher_type``."""

SOFTMAX_FUSION = ("always", "megatron", "heads-as-keys")
"""``Stack.softmax_fusion`` values: when the unfused attention core's fused scale-mask-softmax
kernel runs, and when it falls back to PyTorch's operator chain."""

ZERO1_GRAD_REDUCE = ("reduce-scatter", "all-reduce")
"""``Stack.zero1_grad_reduce`` values: the gradient collective of a ZeRO-1 step."""

GRAD_ACCUMULATION = ("fused", "hook", "autograd", "deepspeed")
"""``Stack.grad_accumulation`` values: how each micro-batch's weight gradients reach the
gradient buffer the step reduces."""


@dataclass(frozen=True, kw_only=True)
class Stack:
    """What the training software does: one framework release as a user would name it.

    Catalog entries live in ``catalog/data/stacks/<id>.toml``; every field a file sets is cited
    in its ``sources`` (or ``source``). The dataclass defaults are those of the default stack,
    ``megatron-core`` (Megatron-Core 0.8 and later with its communication overlaps on), so a
    bare ``Stack()`` and the default preset agree on every behaviour."""

    id: str = "megatron-core"
    name: str = "Megatron-Core"
    source: str = ""
    aliases: tuple[str, ...] = ()
    """Other names of the same behaviour (releases that changed none of these fields)."""
    notes: str = ""
    sources: dict[str, str] = field(default_factory=dict)
    overlap_grad_reduce: bool = True
    """Gradient reduce-scatter/all-reduce in buckets during the backward pass."""
    overlap_param_gather: bool = True
    """Distributed-optimizer parameter all-gather during the next forward pass."""
    tp_comm_overlap_frac: float = 0.6
    """Fraction of TP/SP collective time hidden behind GEMMs (Transformer Engine userbuffers
    overlap, ``--tp-comm-overlap``; 0 where the stack runs the collectives in line)."""
    overlap_p2p: bool = True
    """Pipeline sends/receives overlapped with compute."""
    flash_attention: bool = True
    """Fused attention (FlashAttention / cuDNN); False: unfused QK^T, softmax, dropout, AV."""
    softmax_fusion: str = "always"
    """When the unfused attention core (``flash_attention`` False) runs Megatron's fused
    scale-mask-softmax kernel; otherwise the scale, mask, softmax and casts run as separate
    PyTorch kernels (``FusedScaleMaskSoftmax.forward_torch_softmax``), at
    ``Efficiency.attention.softmax_fallback_bytes_per_score_fwd``/``_bwd`` more HBM traffic.
    ``always``: every shape runs fused. ``megatron``: Megatron-LM's checks (2021's
    ``custom_kernel_constraint``, ``is_kernel_available`` since PR #133, Aug 2021): 16 < keys <=
    ``softmax_fusion_max_keys``, queries divisible by 4, micro-batch x heads per GPU divisible
    by 4 and by the kernel's batches per block (causal; 4 beyond 128 keys, so the same rule
    for training lengths). ``heads-as-keys``: the same checks in the BigScience
    Megatron-DeepSpeed fork between its PR #151 (Oct 2021) and PR #260 (Mar 2022), whose
    ``get_batch_per_block`` swapped its arguments, so the batches per block came from the heads
    per GPU in place of the key length."""
    softmax_fusion_max_keys: int = 2048
    """Longest key sequence the fused scale-mask-softmax kernel takes under ``softmax_fusion``
    ``megatron`` or ``heads-as-keys``: 2048 in Megatron-LM PR #133 (2021), 4096 later."""
    attention_kernel_frac: float = 0.0
    """Fraction of the BF16 peak the stack's fused attention reaches, forward and backward
    together, at the sustained clock. 0: the accelerator's catalog figure (FlashAttention-2
    generation: 33% on Hopper at long sequences, measured on an H200) or
    ``Efficiency.compute.flash_attention_frac``. The cuDNN kernels measured on the same H200
    (PyTorch SDPA, 2026) reach 0.45-0.54 forward and backward at head width 128 from 4K to 32K
    tokens, about 0.56 at long sequences: less than the FlashAttention-3 figure that follows.
    Warp-specialised asynchronous kernels (FlashAttention-3, cuDNN 9 fused attention on Hopper
    and Blackwell) reach 75% forward and about 55% backward (Shah et al. 2024, arXiv
    2407.08608, Sec. 4.1: 740 TFLOP/s forward of 989; backward 1.5-1.75x FlashAttention-2's
    ~330); weighted by the backward's 2.5x FLOPs: 3.5 / (1/0.75 + 2.5/0.55) = 0.60."""
    elementwise_bytes_per_hidden: float = 40.0
    """HBM bytes moved per hidden element per layer per token by non-GEMM ops, forward+backward
    (norms, residual adds, bias, dropout, rotary), with the stack's kernel fusion."""
    elementwise_bytes_per_ffn: float = 14.0
    """HBM bytes per FFN-hidden element per layer per token (activation function fwd+bwd)."""
    grad_reduce_bytes: float = 4.0
    """Bytes per gradient element in the gradient buffer the backward pass accumulates into and
    the data-parallel reduction sends (Megatron-Core ``grad_reduce_in_fp32``; Megatron-LM forces
    fp32 accumulation for BF16 training: 4). NVIDIA's performance recipes reduce in BF16: 2
    (NeMo-Framework-Launcher gpt3/175b_fp8_performance.yaml ``optim.grad_sync_dtype: bf16``;
    Megatron-Bridge scripts/performance DeepSeek-V3 and Qwen3 configs
    ``cfg.ddp.grad_reduce_in_fp32 = False``)."""
    param_gather_bytes: float = 2.0
    """Bytes per parameter in the distributed-optimizer all-gather (bf16)."""
    grad_buckets: int = 8
    """Gradient buckets per step, each reduced (and, with a sharded optimizer, its parameters
    gathered) by its own collective call: every call pays the collective's latency, and when
    reductions overlap the backward pass the last bucket's stays exposed. Used where
    ``grad_bucket_params`` is 0; otherwise the buckets follow from the bucket size."""
    grad_bucket_params: float = 40_000_000.0
    """Fewest parameters a gradient bucket holds (0: ``grad_buckets`` buckets whatever the
    model). Megatron-Core's DDP: 40,000,000; DeepSpeed ZeRO's ``reduce_bucket_size``:
    500,000,000 elements."""
    grad_bucket_params_per_dp_rank: float = 1_000_000.0
    """Parameters a bucket holds per data-parallel rank (dp x cp) where that is more than
    ``grad_bucket_params``: Megatron-Core's DDP sizes buckets at max(40,000,000, 1,000,000 x
    dp) parameters so that large groups' collectives stay bandwidth-bound, not latency-bound
    (``DistributedDataParallelConfig.bucket_size``). Each model chunk (virtual pipeline stage)
    has its own buffer, split into buckets of its own."""
    zero1_grad_reduce: str = "reduce-scatter"
    """The gradient collective of a ZeRO-1 step (plan ``zero`` = 1), before each rank updates
    its shard and the parameters are all-gathered. ``reduce-scatter``: each rank receives only
    its shard's sums (Megatron-Core's distributed optimizer, DeepSpeed's ZeRO stage 1-2
    optimizer). ``all-reduce``: every rank receives the whole reduced gradient, twice the
    traffic: DeepSpeed's ``BF16_Optimizer`` (BLOOM's) hands its full FP32 gradient buffer to
    the engine's all-reduce (``get_grads_for_reduction``, ``buffered_allreduce_fallback``) and
    then all-gathers the updated BF16 shards."""
    grad_accumulation: str = "fused"
    """How each micro-batch's weight gradients are added to the gradient buffer that the step
    reduces; all but ``fused`` stream every parameter's gradient through HBM once more per
    micro-batch, on the backward's critical path (``perf.data_parallel.grad_accumulation_bytes``).
    ``fused``: the weight-gradient GEMM accumulates into the buffer in its epilogue
    (Megatron-Core ``gradient_accumulation_fusion``, on by default, and Megatron-LM since it
    gained ``--gradient-accumulation-fusion``), or the stack reduces each micro-batch's
    gradients as they appear (PyTorch FSDP, DeepSpeed ZeRO-2/3, whose per-micro-batch
    collectives are data-parallel communication). ``hook``: a backward hook adds the 16-bit
    gradient into the buffer, ``main_grad.add_(grad)`` (Megatron-LM 2021 ``LocalDDP``).
    ``autograd``: PyTorch accumulates into the 16-bit ``param.grad`` in place. ``deepspeed``:
    DeepSpeed's engine under ZeRO stage 0/1 with pipeline parallelism: FP16 as ``autograd``;
    BF16 through ``BF16_Optimizer.update_hp_grads``, which casts each micro-batch's BF16
    gradient to FP32 and adds it into the FP32 buffer."""
    loss_bytes_per_logit: float = 12.0
    """HBM bytes per logit of the fused vocab-parallel cross-entropy, forward and backward
    (read bf16 logits, fp32 max/exp/sum passes, write the bf16 gradient)."""
    step_overhead_s: float = 0.0
    """Fixed per-step cost outside the model (data loading, logging)."""
    scatter_gather_p2p: bool = True
    """Pipeline activations sent as 1/tp shards and all-gathered over NVLink (Megatron)."""
    pp_p2p_transfers_per_micro_batch: float = 2.0
    """Pipeline transfers on a stage's critical path per micro-batch and model chunk in the
    steady state. 2: the send to one neighbour and the receive from the other go as one batched
    call, so a forward and a backward exchange each cost one transfer time (Megatron's
    ``send_forward_recv_backward`` / ``send_backward_recv_forward`` on
    ``torch.distributed.batch_isend_irecv``). 4: every send and receive is its own blocking
    call, one after the other (DeepSpeed's ``PipelineEngine``: ``TrainSchedule`` issues
    RecvActivation, SendGrad, SendActivation and RecvGrad as separate instructions, each
    "blocking and must be paired"), so the stage waits out receive activation, send gradient,
    send activation and receive gradient in turn."""
    optimizer_state_bytes: float = 12.0
    """Bytes of optimizer state per parameter: fp32 master weights and fp32 Adam m and v
    (Rajbhandari et al. 2020). DeepSeek-V3 keeps m and v in BF16: 8."""
    moe_load_imbalance: float = 1.1
    """Tokens of the busiest expert-parallel rank over the mean (max/mean), dropless routing.
    The slowest rank sets the expert GEMMs and the all-to-all of the whole EP group. Balanced
    routing (auxiliary loss or DeepSeek-V3's bias-based auxiliary-loss-free balancing) keeps
    it near 1.1 over a training batch; unbalanced routers reach 1.5-2. Megatron-MoE-ModelZoo's
    Qwen3-235B long-context table (H100, EP 8, 2025) measures each length dropless with an
    auxiliary loss and with forced balance: its gains (24.5% at 16K to 9.0% at 128K tokens)
    are a load factor of 1.5 at every length (``tests/validation/test_megatron_moe_modelzoo.py``),
    the figure for a benchmark's dropless router on mock data; the default stays 1.1."""
    moe_capacity_factor: float = 0.0
    """0: dropless. Otherwise each expert's buffer holds capacity_factor x the mean tokens:
    overflow is dropped and buffers are padded (GShard / Switch style), so every expert
    computes exactly capacity_factor x the mean and the imbalance factor no longer applies."""
    moe_graph_capacity_factor: float = 0.0
    """Capacity, over the mean, that each expert-parallel rank's expert buffers are padded to
    when the whole iteration is replayed from CUDA graphs (``cuda_graphs`` full): dropless
    routing has data-dependent shapes a graph cannot hold, so the expert GEMMs run over the
    padded buffers (the padded rows show in the ``moe_imbalance`` part; the all-to-all still
    carries the routed tokens only). 0: no padding."""
    moe_max_nodes_per_token: int = 0
    """A bound the stack itself puts on the scale-up domains one token's experts lie in (a
    router that places a token's copies on consecutive experts, say). 0: the model's routing
    decides (``ModelSpec.router_groups`` and ``router_group_topk``: DeepSeek-V3's 4 nodes), else
    unlimited. It bounds the network copies of a ``flex`` dispatcher, which sends a token once
    per destination domain; ``alltoall`` sends every copy anyway."""
    moe_expert_gemms: str = "per-expert"
    """How the host launches the routed experts' GEMMs. ``per-expert``: Transformer Engine's
    ``GroupedLinear`` issues one GEMM per local expert for each projection
    (``Efficiency.host.host_ops_per_local_expert_fwd``); ``single-kernel``: one grouped kernel
    per projection whatever the local experts (PyTorch ``torch._grouped_mm``, CUTLASS grouped
    GEMM)."""
    moe_unpermute: str = "gather"
    """How a token's routed copies are summed back into the token (and, backward, how the copy
    gradients are summed into the token's gradient). ``gather``: each token reads its k copies
    and writes the weighted sum once (Transformer Engine's fused ``moe_unpermute`` and
    ``moe_permute`` backward, Megatron-Core ``--moe-permute-fusion``), streaming at HBM speed,
    as ``moe_permute_bytes_per_hidden`` counts it. ``scatter-add``: every copy is added into its
    token's row by atomic scatter-add (PyTorch ``scatter_add`` / ``index_add_``, and the
    backward of a plain ``gather`` or ``index_select``), at
    ``Efficiency.layers.scatter_add_hbm_efficiency``: the unpermute forward and the permute's
    gradient each read the copy and read-modify-write its token row per copy, 6 bytes per
    hidden element in BF16 in place of the gather's 2 + 2/k."""
    moe_consecutive_experts: bool = False
    """The router places a token's k copies on k consecutive experts, (t k + i) mod E for
    token t (NeMo AutoModel's ``FakeBalancedGate`` in its benchmark recipes): a ``flex``
    dispatcher then reaches only the ranks those experts span
    (``collectives.distinct_ranks``). False: the experts are spread uniformly (a trained
    router, Megatron-Core's forced load balancing)."""
    moe_token_dispatcher: str = "alltoall"
    """How routed tokens reach their experts' ranks (Megatron-Core
    ``moe_token_dispatcher_type``). ``alltoall``: one NCCL all-to-all in which each of a
    token's top-k copies travels to its expert's rank on its own, over the network too.
    ``flex`` (``moe_flex_dispatcher_backend`` deepep or hybridep: DeepEP, HybridEP, and
    DeepSeek-V3's own kernels): a token crosses the network once per destination scale-up
    domain, to the rank with the same in-domain index, and is forwarded to its experts there
    over the scale-up fabric (DeepSeek-V3 report Sec. 3.2.2; deepseek-ai/DeepEP README,
    asymmetric-domain forwarding from the NVLink to the RDMA domain)."""
    moe_host_sync: bool = True
    """Dropless routing synchronises the host with the GPU in every MoE layer's forward: the
    dispatcher copies the per-expert token counts to the host to size the all-to-all and the
    per-expert GEMMs (Megatron-Core ``MoEAlltoAllTokenDispatcher.preprocess``: dropless with
    EP sets ``cuda_sync_point = "before_ep_alltoall"``, without EP "before_finish"; Transformer
    Engine ``GroupedLinear`` takes ``m_splits`` as host integers), so the host cannot issue the
    rest of the layer ahead of the GPU. Capacity-padded buffers need no sync."""
    moe_dispatch_bytes: float = 2.0
    """Bytes per hidden element of a dispatched token (BF16; DeepSeek-V3 dispatches in FP8
    with 128-element block scales: about 1.03)."""
    moe_combine_bytes: float = 2.0
    """Bytes per hidden element of a combined (returned) token, and of both backward passes."""
    moe_permute_bytes_per_hidden: float = 15.0
    """HBM bytes per hidden element per routed token copy for permuting tokens into expert
    order and back, forward and backward, counted from the kernels' reads and writes of BF16
    rows (Megatron-Core ``permute`` / ``unpermute``, Transformer Engine's fused
    ``moe_permute_with_probs`` / ``moe_unpermute``). Forward: the permute reads each copy's
    source row and writes the copy (4); the unpermute reads the k copies of a token and writes
    the weighted sum once (2 + 2/k). Backward: the unpermute's reads the output gradient and
    the saved copy for the routing weight's gradient and writes the copy's gradient (6); the
    permute's sums the k copy gradients into the token's (2 + 2/k). 14 + 4/k: 15 at top-4,
    within 1 of it for top-1 to top-8."""
    moe_sort_chunks_bytes_per_hidden: float = 16.0
    """HBM bytes per hidden element per routed token copy for the all-to-all dispatcher's
    second permutation when a rank holds several experts (Megatron-Core
    ``MoEAlltoAllTokenDispatcher``: ``sort_chunks_by_idxs`` regroups the received tokens by
    local expert after the dispatch and back before the combine): two gathers forward, read 2
    and write 2 each, and two backward. The ``flex`` dispatcher (DeepEP, HybridEP) receives
    the tokens in expert order and has none."""
    ep_comm_overlap_frac: float = 0.0
    """Fraction of the expert all-to-all hidden behind computation of another micro-batch
    (DeepSeek-V3's DualPipe overlaps dispatch and combine with attention and MLP of the paired
    chunk: ~1; Megatron-Core's 1F1B all-to-all overlap likewise). At most the layer's compute."""
    ep_overlap_sm_frac: float = 0.0
    """Fraction of SMs the communication kernels take while they overlap computation
    (DeepSeek-V3: 20 of 132 H800 SMs): compute of the overlapped layers runs that much slower."""
    cuda_graphs: str = "none"
    """What the stack captures in CUDA graphs, which removes the host's per-operation issue time
    from it: ``none``; ``router`` (the MoE router and token preprocessing: Megatron-Core
    ``cuda_graph_scope`` moe_router, moe_preprocess); ``attention`` (attention blocks as well:
    attn, moe_router, moe_preprocess; the expert GEMMs and the dispatch stay eager in both);
    ``layer`` (whole transformer layers); ``full`` (the whole iteration, ``cuda_graph_impl``
    full_iteration)."""
    dualpipe: bool = False
    """DeepSeek-V3's bidirectional DualPipe schedule: bubble (pp/2 - 1) (F&B + B - 3W) instead
    of 1F1B's (pp - 1)(F + B) (report Table 2), so about (pp/2 - 1)/(pp - 1) of it; two
    copies of each rank's parameters, pp + 1 micro-batches of activations in flight."""

    fp8_primary_weights: bool = False
    """Under an FP8 recipe the model weights exist only as FP8 (row-wise and column-wise
    copies), with no BF16 copy beside them; the full-precision main weights live in the
    optimizer state. Megatron-Core ``--fp8-param-gather`` (Transformer Engine FP8 primary
    weights, ``fp8_model_init``; the distributed optimizer's FP32 main params stay in the
    optimizer) and DeepSeek-V3 (report Sec. 3.3, Fig. 6: FP32 master weights cast to FP8 for
    the forward and backward GEMMs). False: BF16 weights plus the FP8 copies."""
    fp8_weight_cache: bool = True
    """Under an FP8 recipe the quantized copies of each weight are made once per step and reused
    by every micro-batch: Transformer Engine caches them when its caller passes
    ``is_first_microbatch`` (Megatron-Core does), or the weights are FP8 already
    (``fp8_primary_weights``). False: every forward quantizes the BF16 weights again (a
    row-wise and a column-wise copy, with the amax pass of per-tensor scaling), paid per
    micro-batch like the activations' casts (``Efficiency.layers.fp8_cast_bytes_per_element``):
    Transformer Engine modules called without ``is_first_microbatch`` (its default None:
    "caching of the FP8 versions of the weights" only when set), and torchao's ``Float8Linear``,
    whose dynamic scaling casts the weight in every forward."""
    fp8_block_keeps_bf16_weights: bool = False
    """With ``fp8_primary_weights``, the block-scaled FP8 recipe (``fp8-block``, 1x128 and
    128x128 scales) still keeps BF16 weights beside its FP8 copies: Megatron-Bridge's
    ``bf16_with_fp8_subchannel_scaling_mixed`` sets ``fp8_param_gather = False`` while its
    per-tensor and MXFP8 recipes set it True."""
    usual_recompute: str = ""
    """The recompute mode the stack runs unless told otherwise (its published runs, example
    scripts or configuration default), taken where a run leaves recompute open (``validate``),
    or a heavier mode where it does not fit (selective, then full); ``""``: no such convention,
    the fastest plan that fits is taken. Megatron-LM 2021's and Megatron-DeepSpeed's runs all
    checkpoint whole layers (``full``); having no selective mode, those stacks' CLI and API
    defaults fall back to full already (``plan.STACK_FALLBACKS``). torchtitan's activation
    checkpointing defaults to selective, and its large models' configurations to full."""
    usual_vpp: int = 0
    """The virtual stages per pipeline rank the stack runs unless told otherwise, taken where a
    run leaves ``vpp`` open (``validate``); 0: no such default, the fastest schedule that fits
    is taken (Megatron's large runs interleave where it pays). torchtitan: 1, its default
    schedule is single-stage 1F1B (``pipeline_parallel_schedule = "1F1B"``); looped schedules
    are asked for by name."""
    selective_recompute: str = "attention"
    """What selective recompute rebuilds in backward. ``attention``: the core attention
    (QK^T, softmax, dropout, AV), keeping every linear's input (Korthikanti et al. 2022 Sec. 5;
    Megatron ``--recompute-granularity selective``); with a fused kernel that stores no scores
    this is the kernel's own recompute. ``alternate-matmuls``: torchtitan's op-level selective
    activation checkpointing (``selective_ac_option = "op"``): in each block the outputs of the
    attention kernel and of every other matmul in forward order are saved, and every second
    matmul with every non-matmul op (norms, activations, rotary embedding) runs again in
    backward from the block's input. ``none``: the stack checkpoints whole layers only
    (Megatron-LM 2021's ``--checkpoint-activations``, DeepSpeed's activation checkpointing,
    PyTorch FSDP's per-block ``checkpoint_wrapper``): a plan cannot ask for selective."""
    tensor_parallel: bool = True
    """The stack runs tensor parallelism (tp > 1): Megatron-style stacks and torchtitan; not the
    data-parallel-only trainers (PyTorch FSDP with Hugging Face Accelerate or MosaicML
    Composer, DeepSpeed's ZeRO engine without Megatron)."""
    pipeline_parallel: bool = True
    """The stack runs pipeline parallelism (pp > 1). PyTorch FSDP with a data-parallel trainer
    (LLM Foundry/Composer, Hugging Face) and DeepSpeed's ZeRO-2/3 engine do not."""
    expert_parallel: bool = True
    """The stack runs expert parallelism (ep > 1: a mixture-of-experts layer's experts split over
    ranks, tokens dispatched to them): Megatron-Core and the stacks built on it, DeepSpeed-MoE
    (with or without Megatron), MegaBlocks under LLM Foundry, torchtitan, nanotron, NeMo
    AutoModel. Not PyTorch FSDP under a data-parallel trainer, whose MoE blocks (Hugging Face
    ``MixtralSparseMoeBlock`` and the like) run every expert on the rank that holds the tokens,
    the experts sharded and gathered as any other parameter, nor Megatron-LM before Megatron-Core
    (no MoE layers). A question that leaves ep open gets 1 on those."""
    context_parallel: bool = True
    """The stack runs context parallelism (cp > 1: the sequence split over ranks, ring or
    all-to-all attention): Megatron-Core since 2024 and the stacks built on it, torchtitan, Meta's
    Llama 3 stack; not Megatron-LM 2021-2022 or the Megatron-DeepSpeed of BLOOM and MT-NLG,
    whose arguments have tensor and pipeline sizes only, nor the data-parallel-only trainers. A
    run that leaves cp open is predicted with 1 on those."""
    pipeline_split: str = "megatron"
    """How the stack lays the decoder layers on the pipeline stages when the run does not say
    (``validate`` with the split open). ``megatron``: Megatron-Core's rules (an even split, else
    the embedding and the loss counted as layers; ``plan.default_stage_split``).
    ``compute-balanced``: nanotron's ``build_model`` (huggingface/nanotron,
    src/nanotron/models/base.py, "Balance compute across PP blocks"): each pipeline block has a
    cost (a decoder layer 4 heads head_dim hidden + 3 ffn hidden, the output layer vocab hidden,
    the others 0), and walking the blocks in order, each joins the current stage, which is closed
    once the running total passes its share (total x (r + 1) / pp):
    ``plan.balanced_stage_split``."""
    interleaved_pipeline: bool = True
    """The stack runs an interleaved (virtual-stage) pipeline schedule (vpp > 1): Megatron-LM
    since 2021 (Narayanan et al. SC'21), torchtitan; not DeepSpeed's pipeline engine (one
    stage per rank, ``TrainSchedule``), nanotron or DualPipe."""
    pipeline_schedule_per_local_batch: bool = False
    """The stack runs gradient accumulation outside the pipeline schedule: each of a step's
    global_batch / (dp x local_batch) forward-backward calls (a plan's ``local_batch``) is a
    whole schedule of local_batch / micro_batch micro-batches, with its own fill and drain, so
    the bubble comes once per call. torch.distributed.pipelining stacks: torchtitan's
    ``Trainer.train_step`` loops over ``gradient_accumulation_steps`` and each
    ``forward_backward_step`` calls ``pp_schedule.step``; NeMo AutoModel's benchmark recipe
    (nemo_automodel/recipes/llm/benchmark.py ``run_benchmark``) loops over ``ga_steps =
    global_batch_size // (local_batch_size x dp_size)`` the same way. False: one schedule
    over all of the step's micro-batches (Megatron's ``get_forward_backward_func``,
    DeepSpeed's ``PipelineEngine.train_batch``)."""
    sequence_parallel_support: bool = True
    """The stack shards the norms' and dropouts' activations over the TP group (Megatron's
    sequence parallelism, Korthikanti et al. 2022): Megatron-LM from 2022 (v3.0) and every
    stack built on it since; not Megatron-LM 2021 or the Megatron-DeepSpeed forks of it."""
    activation_offload: bool = True
    """The stack can move layers' activations to host memory in forward and back for backward
    (a plan's ``offload_layers``): Megatron-Core's ``cpu_offloading`` /
    ``cpu_offloading_num_layers`` (megatron/core/transformer/transformer_config.py), which
    Megatron-Bridge's Llama 3 70B FSDP performance recipes set (``cpu_offloading_num_layers``
    20-30 in scripts/performance/configs/llama/llama3_workload_base_configs.py). Not PyTorch
    FSDP's or DeepSpeed's parameter offload, which move weights, nor the 2021-2023 Megatron-LM
    and Megatron-DeepSpeed releases, which predate it."""
    recompute_mla_up_proj: bool = False
    """Selective recompute also rebuilds multi-head latent attention's up projections (the
    per-head Q, K, V) from the latents in backward instead of keeping them (DeepSeek-V3 report
    Sec. 3.2.3 "Recomputation of RMSNorm and MLA Up-Projection"; Megatron-Core
    ``--recompute-modules mla_up_proj``)."""
    recompute_moe_act: bool = False
    """Selective recompute also rebuilds the routed experts' activation function output in
    backward, keeping only each token copy's expert input and the activation's inputs
    (DeepSeek-V3 report Sec. 3.3.3: SwiGLU inputs cached in FP8, output recomputed;
    Megatron-Core ``--recompute-modules moe_act``)."""
    recompute_layernorm: bool = False
    """Selective recompute also rebuilds the norms whose output a separate module keeps: the
    pre-MLP norm of an MoE block (the router and the dispatch read it) and the input norm of a
    multi-head latent attention block (both down projections read it), instead of keeping the
    normed activation; the other norms are fused into the following linear (an ``IdentityOp``
    in their place), which keeps its own input. Megatron-Core ``--recompute-modules layernorm``
    (``TransformerConfig.recompute_modules``: "recompute the input_layernorm and
    pre_mlp_layernorm", output-discarding checkpointing; "when they are not IdentityOp")."""
    recompute_mlp: bool = False
    """Selective recompute checkpoints each dense MLP block whole: only its input is kept and its
    forward runs again in backward (Megatron-Core ``--recompute-modules mlp``, standard
    checkpointing; DeepSeek-V3's dense first layers in Megatron-Core's DeepSeek-V3 recipe)."""
    recompute_moe: bool = False
    """Selective recompute checkpoints each MoE block whole: only its input is kept, and the
    router, the dispatch and combine all-to-all, the routed and shared experts run again in
    backward (Megatron-Core ``--recompute-modules moe``, standard checkpointing)."""
    selective_modules: bool = False
    """The stack's selective recompute takes Megatron-Core's recompute modules
    (``TransformerConfig.recompute_modules``), and its users add them by cost until a plan
    fits before they recompute whole layers (Megatron-Bridge's activation-recompute guide,
    ``skills/perf-activation-recompute``, 2026: MLA ``mla_up_proj`` first, grouped MoE
    ``moe_act`` then ``layernorm``, the whole ``moe`` block only after, ``mlp`` as a last
    resort, full recompute "only when selective recompute does not fit"). A run stated as
    selective (or with recompute open) whose plans do not fit with the core attention alone
    is predicted with the first rung of ``plan.module_ladder`` that fits, and ``search``
    gives each selective plan that does not fit the first rung with which it does
    (``RankedPlan.recompute_modules``)."""
    recompute_shared_experts: bool = False
    """Selective recompute checkpoints the shared experts of each MoE block: their activations
    are not kept and their forward runs again in backward (Megatron-Core ``--recompute-modules
    shared_experts``)."""
    fsdp_prefetch_layers: float = 1.0
    """Layers whose ZeRO-3 / FSDP parameter all-gather is issued ahead of the layer that
    computes: PyTorch FSDP ``backward_prefetch=BACKWARD_PRE`` and ``forward_prefetch`` (and
    FSDP2's default) gather one layer ahead, so each layer's collectives hide behind one
    layer's compute."""
    zero_shard_ranks: int = 0
    """Data-parallel ranks a ZeRO / FSDP shard group spans: 0 all of them; n > 0 shards within
    groups of n ranks and replicates across the groups, all-reducing the gradient shards
    between replicas (PyTorch FSDP ``ShardingStrategy.HYBRID_SHARD`` with n = GPUs per node;
    torchtitan ``data_parallel_shard_degree``)."""
    zero_stage: int = 1
    """Sharding the stack runs when a plan leaves it open: 0 plain data parallelism (gradient
    all-reduce, replicated optimizer), 1 distributed optimizer (Megatron-Core
    ``--use-distributed-optimizer``, ZeRO-1), 2 gradients sharded too (FSDP SHARD_GRAD_OP,
    ZeRO-2), 3 parameters sharded too (FSDP FULL_SHARD, ZeRO-3)."""
    zero3_gathers_per_micro_batch: float = 2.0
    """Parameter all-gathers per layer per micro-batch under ZeRO-3: 2 when parameters are
    freed after the forward and gathered again for the backward (PyTorch FSDP FULL_SHARD
    ``reshard_after_forward=True``, DeepSpeed ZeRO-3), 1 when they are kept until the backward
    (FSDP2 ``reshard_after_forward=False``)."""
    zero2_per_layer: bool = False
    """Under ZeRO-2 the stack gathers each wrapped layer's parameters in its forward and
    reduce-scatters its gradients in its backward, as ZeRO-3 does without the backward's second
    gather (PyTorch FSDP ``SHARD_GRAD_OP``), instead of one bucketed reduce-scatter and gather
    over the step (DeepSpeed ZeRO-2, Megatron-Core's distributed optimizer)."""
    fsdp_under_pipeline: str = "per-micro-batch"
    """What FSDP's per-layer collectives do under a pipeline schedule (pp > 1).
    ``per-micro-batch``: every micro-batch gathers and reduce-scatters, as without a pipeline.
    ``reduce-once``: each micro-batch's forward gathers and keeps the parameters for its
    backward; gradients accumulate unsharded and are reduce-scattered once, after the last
    backward (PyTorch pipelining's ``PipelineStage`` in 2024 sets FSDP's
    ``set_requires_gradient_sync(last_backward)``; torchtitan keeps ``reshard_after_forward``
    off with PP). ``gather-once``: the parameters also stay gathered across micro-batches, one
    gather per step (the stage turns off ``reshard_after_backward`` until the last backward,
    PyTorch 2025). Under both the stage's parameters and gradients stay unsharded."""

    def __post_init__(self) -> None:
        for name, valid in _STACK_CHOICES.items():
            if getattr(self, name) not in valid:
                names = ", ".join(v or '"" (unset)' for v in valid)
                raise SpecError(name, getattr(self, name), f"one of {names}")
        if self.softmax_fusion_max_keys <= 16:
            raise SpecError(
                "softmax_fusion_max_keys", self.softmax_fusion_max_keys, "an integer above 16"
            )
        for name in _STACK_FRACTIONS:
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise SpecError(name, value, "a fraction between 0 and 1")
        if self.ep_overlap_sm_frac >= 1.0:
            raise SpecError("ep_overlap_sm_frac", self.ep_overlap_sm_frac, "below 1")
        for name in _STACK_POSITIVE:
            if not getattr(self, name) > 0:
                raise SpecError(name, getattr(self, name), "a positive number")
        for name in _STACK_NON_NEGATIVE:
            if getattr(self, name) < 0:
                raise SpecError(name, getattr(self, name), "zero or a positive number")
        if self.zero_stage not in (0, 1, 2, 3):
            raise SpecError("zero_stage", self.zero_stage, "0, 1, 2 or 3")
        if self.moe_load_imbalance < 1.0:
            raise SpecError("moe_load_imbalance", self.moe_load_imbalance, "at least 1")
        if self.zero3_gathers_per_micro_batch not in (1.0, 2.0):
            raise SpecError(
                "zero3_gathers_per_micro_batch", self.zero3_gathers_per_micro_batch, "1 or 2"
            )


_STACK_CHOICES = {
    "fsdp_under_pipeline": FSDP_UNDER_PIPELINE,
    "pipeline_split": PIPELINE_SPLITS,
    "moe_token_dispatcher": MOE_DISPATCHERS,
    "moe_expert_gemms": MOE_EXPERT_GEMMS,
    "moe_unpermute": MOE_UNPERMUTE,
    "selective_recompute": SELECTIVE_RECOMPUTE,
    "usual_recompute": ("", "none", "selective", "full"),
    "softmax_fusion": SOFTMAX_FUSION,
    "zero1_grad_reduce": ZERO1_GRAD_REDUCE,
    "grad_accumulation": GRAD_ACCUMULATION,
    "cuda_graphs": CUDA_GRAPH_SCOPES,
}
"""The categorical ``Stack`` fields and their valid values."""
_STACK_FRACTIONS = ("tp_comm_overlap_frac", "attention_kernel_frac", "ep_comm_overlap_frac")
_STACK_POSITIVE = (
    "grad_reduce_bytes",
    "param_gather_bytes",
    "grad_buckets",
    "pp_p2p_transfers_per_micro_batch",
    "optimizer_state_bytes",
    "moe_dispatch_bytes",
    "moe_combine_bytes",
)
_STACK_NON_NEGATIVE = (
    "usual_vpp",
    "grad_bucket_params",
    "grad_bucket_params_per_dp_rank",
    "elementwise_bytes_per_hidden",
    "elementwise_bytes_per_ffn",
    "loss_bytes_per_logit",
    "step_overhead_s",
    "moe_capacity_factor",
    "moe_graph_capacity_factor",
    "moe_max_nodes_per_token",
    "moe_permute_bytes_per_hidden",
    "moe_sort_chunks_bytes_per_hidden",
    "zero_shard_ranks",
    "ep_overlap_sm_frac",
)

STACK_METADATA = ("id", "name", "source", "aliases", "notes", "sources")
"""``Stack`` fields that describe the entry rather than the behaviour."""
