"""Spec dataclasses for the catalog. One TOML file per entry; field names carry their units.

Every entry has ``source`` (the main citation) and may have ``sources``: a table mapping a field
name to the citation of that field when it comes from somewhere else.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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
    forward and backward (0: use the step model's default)."""
    uncertain: bool = False
    notes: str = ""
    sources: dict[str, str] = field(default_factory=dict)
    hbm_usable_bytes: float = 0.0
    """HBM bytes the driver reports as the device's total (``nvidia-smi`` memory.total,
    ``rocm-smi`` VRAM Total Memory, ``npu-smi`` HBM capacity): what a training process can
    allocate from, its own CUDA context included. 0: ``hbm_bytes``."""

    @property
    def hbm_capacity_bytes(self) -> float:
        """The capacity the memory model fits plans against: the driver's figure if known."""
        return self.hbm_usable_bytes or self.hbm_bytes


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
    first_dense_layers: int = 0
    moe_layer_freq: int = 1
    """Every n-th layer after the dense ones is MoE (1: all)."""
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
    dropout: bool = False
    """Trained with hidden and attention dropout (GPT-era Megatron recipes use 0.1)."""
    active_params_published: float = 0.0
    notes: str = ""
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def is_moe(self) -> bool:
        return self.routed_experts > 0

    @property
    def head_size(self) -> int:
        return self.head_dim or self.hidden // self.heads
