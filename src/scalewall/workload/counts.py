"""Parameter and FLOP counts of a decoder-only transformer, dense or mixture-of-experts, and of
hybrid models whose layers mix Mamba-2, attention, MLP and MoE blocks (``ModelSpec.layer_pattern``).

Notation: L layers, D hidden, H heads, K kv heads, d head size, F ffn hidden, V vocabulary,
s sequence length; for Mamba-2 (Dao & Gu 2024) h heads of P channels (inner width h P), state
size N, G groups, chunk Q. Counts are exact for the architectures the catalog describes
(checked against published totals in tests).
"""

from __future__ import annotations

from dataclasses import dataclass

from scalewall.catalog.schema import ModelSpec


@dataclass(frozen=True)
class LayerKind:
    """What one layer holds: a sequence mixer (``attention``, ``mamba`` or none) and an FFN
    (``dense``, ``moe`` or none). A transformer layer has both; a hybrid model's layer one."""

    mixer: str
    ffn: str

    @property
    def label(self) -> str:
        return "+".join(part for part in (self.mixer, self.ffn) if part)


DENSE = LayerKind("attention", "dense")
"""A transformer layer: attention and a dense MLP."""
MOE = LayerKind("attention", "moe")
"""A transformer MoE layer: attention, shared and routed experts."""
MAMBA = LayerKind("mamba", "")
ATTENTION = LayerKind("attention", "")
MLP = LayerKind("", "dense")
MOE_FFN = LayerKind("", "moe")
PATTERN_KINDS = {"M": MAMBA, "*": ATTENTION, "-": MLP, "E": MOE_FFN}
"""The layer kind of each ``ModelSpec.layer_pattern`` character."""
LINEAR_DENSE = LayerKind("gdn", "dense")
"""A Gated DeltaNet layer with a dense MLP."""
LINEAR_MOE = LayerKind("gdn", "moe")
"""A Gated DeltaNet layer with an MoE (Qwen3-Next, Qwen3.5)."""
KIND_ORDER = (DENSE, MOE, LINEAR_DENSE, LINEAR_MOE, MAMBA, ATTENTION, MLP, MOE_FFN)


def layer_sequence(model: ModelSpec) -> tuple[LayerKind, ...]:
    """Each layer's kind, first to last (a transformer's: attention with a dense or MoE FFN
    by ``is_moe_layer``; ``mixer_pattern`` sets the mixer; ``layer_pattern`` the block)."""
    if model.layer_pattern:
        return tuple(PATTERN_KINDS[c] for c in model.layer_pattern)
    mixers = model.mixer_pattern or "A" * model.layers
    return tuple(
        LayerKind(
            "attention" if mixer == "A" else "gdn", "moe" if is_moe_layer(model, i) else "dense"
        )
        for i, mixer in enumerate(mixers)
    )


def layer_kinds(model: ModelSpec) -> tuple[LayerKind, ...]:
    """The kinds of layer the model has, in ``KIND_ORDER``."""
    if model.layer_pattern or model.mixer_pattern:
        present = set(layer_sequence(model))
        return tuple(kind for kind in KIND_ORDER if kind in present)
    n_moe = num_moe_layers(model)
    kinds = ((DENSE, model.layers - n_moe), (MOE, n_moe))
    return tuple(kind for kind, n in kinds if n > 0)


def kind_counts(model: ModelSpec) -> dict[LayerKind, int]:
    """Layers of each kind the model has, over all its layers."""
    if model.layer_pattern or model.mixer_pattern:
        sequence = layer_sequence(model)
        return {kind: sequence.count(kind) for kind in layer_kinds(model)}
    n_moe = num_moe_layers(model)
    return {kind: (n_moe if kind == MOE else model.layers - n_moe) for kind in layer_kinds(model)}


@dataclass(frozen=True, kw_only=True)
class LayerParams:
    """Parameters of one transformer layer, split by where they live."""

    attention: float
    """The sequence mixer's projections: attention's Q, K, V and output projections (and their
    biases, MLA's low-rank projections included), or Mamba-2's input and output projections."""
    mlp_dense: float
    """Dense FFN (or the shared experts of an MoE layer)."""
    mlp_routed: float
    """All routed experts of the layer (0 for a dense layer)."""
    router: float
    norms: float
    mixer_other: float = 0.0
    """Mamba-2's convolution, dt bias, A, D and gated norm: parameters no matmul uses."""

    @property
    def total(self) -> float:
        return (
            self.attention
            + self.mlp_dense
            + self.mlp_routed
            + self.router
            + self.norms
            + self.mixer_other
        )


def _ffn_matrices(model: ModelSpec) -> int:
    return 3 if model.activation == "swiglu" else 2


def _norm_params(model: ModelSpec, width: int) -> float:
    return float(width * (2 if model.norm == "layernorm" else 1))


def attention_params(model: ModelSpec) -> float:
    """Attention projections of one layer: MHA/GQA ``D*d*(H+2K) + H*d*D`` or MLA's low-rank form."""
    d_model, heads = model.hidden, model.heads
    if model.kv_lora_rank:
        qk_head = model.qk_nope_head_dim + model.qk_rope_head_dim
        q: float
        if model.q_lora_rank:
            q = d_model * model.q_lora_rank + model.q_lora_rank * heads * qk_head
            q += _norm_params(model, model.q_lora_rank)
        else:
            q = d_model * heads * qk_head
        kv: float = d_model * (model.kv_lora_rank + model.qk_rope_head_dim)
        kv += model.kv_lora_rank * heads * (model.qk_nope_head_dim + model.v_head_dim)
        kv += _norm_params(model, model.kv_lora_rank)
        out = heads * model.v_head_dim * d_model
        return float(q + kv + out)
    d = model.head_size
    qkv = d_model * d * (heads + 2 * model.kv_heads)
    if model.attention_output_gate:
        qkv += d_model * d * heads  # the gate's half of the query projection
    out = heads * d * d_model
    bias = (d * (heads + 2 * model.kv_heads) + d_model) if model.linear_bias else 0
    return float(qkv + out + bias)


def ffn_params(model: ModelSpec, ffn_hidden: int, width: int = 0) -> float:
    """One FFN block of width ``ffn_hidden`` (2 matrices for GeLU, 3 for SwiGLU) between
    ``width`` wide input and output (0: the hidden width)."""
    width = width or model.hidden
    bias = (ffn_hidden * (_ffn_matrices(model) - 1) + width) if model.linear_bias else 0
    return float(_ffn_matrices(model) * width * ffn_hidden + bias)


def is_moe_layer(model: ModelSpec, index: int) -> bool:
    """Layer ``index`` (0-based) is a mixture-of-experts layer (a hybrid pattern's ``E``)."""
    if model.layer_pattern:
        return model.layer_pattern[index] == "E"
    if not model.is_moe or index < model.first_dense_layers:
        return False
    return (index - model.first_dense_layers) % max(model.moe_layer_freq, 1) == 0


def mamba_inner(model: ModelSpec) -> int:
    """Mamba-2's inner width h P (``expand`` x D in the configs that state it)."""
    return model.mamba_heads * model.mamba_head_dim


def mamba_in_proj_width(model: ModelSpec) -> int:
    """Output width of Mamba-2's input projection: z and x (h P each), B and C (G N each) and
    the per-head dt (Dao & Gu 2024, Sec. 7.1; Megatron-Core ``MambaMixer.in_proj``); Mamba-1's
    writes x and z only (B, C and dt come from ``x_proj``)."""
    if model.mamba_version == 1:
        return 2 * mamba_inner(model)
    groups_state = model.mamba_groups * model.mamba_state
    return 2 * mamba_inner(model) + 2 * groups_state + model.mamba_heads


def mamba1_x_proj_width(model: ModelSpec) -> int:
    """Output width of a Mamba-1 mixer's ``x_proj``: the step-size rank and B and C (N each)."""
    return model.mamba_dt_rank + 2 * model.mamba_state


def mamba_params(model: ModelSpec) -> tuple[float, float]:
    """One Mamba mixer's matmul parameters and the others. Mamba-2: the input and output
    projections; the depthwise convolution over x, B and C with its bias, dt bias, A and D per
    head, and the gated RMSNorm over the inner width. Mamba-1 (Gu & Dao 2023, Sec. 3.4; the
    transformers ``JambaMambaMixer``): the input, x, dt and output projections; the convolution
    over x with its bias, the dt bias, A (inner x N) and D, and Jamba's RMSNorms over dt, B and
    C."""
    inner = mamba_inner(model)
    if model.mamba_version == 1:
        rank, state = model.mamba_dt_rank, model.mamba_state
        matmul = float(
            model.hidden * mamba_in_proj_width(model)
            + inner * mamba1_x_proj_width(model)
            + rank * inner
            + inner * model.hidden
        )
        conv = inner * (model.mamba_conv_kernel + 1)
        return matmul, float(conv + inner + inner * state + inner + rank + 2 * state)
    matmul = float(model.hidden * mamba_in_proj_width(model) + inner * model.hidden)
    conv_channels = inner + 2 * model.mamba_groups * model.mamba_state
    other = float(conv_channels * (model.mamba_conv_kernel + 1) + 3 * model.mamba_heads + inner)
    return matmul, other


def expert_width_in(model: ModelSpec) -> int:
    """Width of a routed expert's input and output: the hidden width, or LatentMoE's latent
    width (``ModelSpec.moe_latent``)."""
    return model.moe_latent or model.hidden


def routed_expert_params(model: ModelSpec) -> float:
    """One routed expert's weights: 2 or 3 matrices between its input width
    (``expert_width_in``) and ``expert_ffn_hidden``."""
    return ffn_params(model, model.expert_ffn_hidden, expert_width_in(model))


def latent_projection_params(model: ModelSpec) -> float:
    """LatentMoE's down and up projections between the hidden and the latent width, one pair
    per MoE layer (0 without a latent width)."""
    return float(2 * model.hidden * model.moe_latent)


def gdn_widths(model: ModelSpec) -> tuple[int, int, int]:
    """Gated DeltaNet's query/key width (key heads x key head width), value width (value heads
    x value head width) and the input projections' output width: q, k, v and the output gate z
    (``in_proj_qkvz``), then beta and the decay's input a per value head (``in_proj_ba``)."""
    key = model.linear_key_heads * model.linear_key_head_dim
    value = model.linear_value_heads * model.linear_value_head_dim
    return key, value, 2 * key + 2 * value + 2 * model.linear_value_heads


def gdn_params(model: ModelSpec) -> tuple[float, float]:
    """One Gated DeltaNet mixer's matmul parameters (input projections, output projection)
    and the others: the depthwise convolution over q, k and v, A and dt bias per value head,
    the gated norm's weight (transformers ``Qwen3NextGatedDeltaNet``)."""
    key, value, width = gdn_widths(model)
    matmul = float(model.hidden * width + value * model.hidden)
    other = float(
        (2 * key + value) * model.linear_conv_kernel
        + 2 * model.linear_value_heads
        + model.linear_value_head_dim
    )
    return matmul, other


def gdn_flop_per_token(model: ModelSpec, seq_len: int) -> float:
    """Forward FLOPs per token of one Gated DeltaNet layer's chunked delta rule (Yang et al.
    2025, Sec. 3: the WY representation over chunks of C tokens), per value head: within a
    chunk Q K^T, K K^T and their products with V and the WY factors (2 C (3 d_k + 2 d_v)),
    across chunks the output from the state and the state's update (6 d_k d_v)."""
    if not model.linear_value_heads:
        return 0.0
    c = float(min(model.linear_chunk, seq_len))
    dk, dv = float(model.linear_key_head_dim), float(model.linear_value_head_dim)
    return model.linear_value_heads * (2.0 * c * (3.0 * dk + 2.0 * dv) + 6.0 * dk * dv)


def shared_expert_width(model: ModelSpec) -> int:
    """Width of one shared expert: ``shared_expert_ffn_hidden``, else the routed experts'."""
    return model.shared_expert_ffn_hidden or model.expert_ffn_hidden


def kind_ffn_width(model: ModelSpec, kind: LayerKind) -> float:
    """Width of a layer's dense FFN: the MLP's, an MoE layer's shared experts', 0 for none."""
    if kind.ffn == "moe":
        return float(model.shared_experts * shared_expert_width(model))
    return float(model.ffn_hidden) if kind.ffn == "dense" else 0.0


def kind_params(model: ModelSpec, kind: LayerKind) -> LayerParams:
    """Parameters of one layer of the given kind (one pre-norm per block it holds)."""
    blocks = (kind.mixer != "") + (kind.ffn != "")
    norms = blocks * _norm_params(model, model.hidden)
    mixer, other = 0.0, 0.0
    if kind.mixer == "attention":
        mixer = attention_params(model)
    elif kind.mixer == "mamba":
        mixer, other = mamba_params(model)
    elif kind.mixer == "gdn":
        mixer, other = gdn_params(model)
    if kind.ffn == "moe":
        shared = model.shared_experts * ffn_params(model, shared_expert_width(model))
        return LayerParams(
            attention=mixer,
            mlp_dense=shared + latent_projection_params(model),
            mlp_routed=model.routed_experts * routed_expert_params(model),
            router=float(model.hidden * model.routed_experts),
            norms=norms,
            mixer_other=other,
        )
    mlp = ffn_params(model, model.ffn_hidden) if kind.ffn == "dense" else 0.0
    return LayerParams(
        attention=mixer, mlp_dense=mlp, mlp_routed=0.0, router=0.0, norms=norms, mixer_other=other
    )


def layer_params(model: ModelSpec, moe: bool) -> LayerParams:
    """Parameters of one transformer layer; ``moe`` selects the expert layout."""
    return kind_params(model, MOE if moe else DENSE)


def num_moe_layers(model: ModelSpec) -> int:
    """Layers for which :func:`is_moe_layer` holds: every ``moe_layer_freq``-th layer after the
    dense ones, counted in closed form (a hybrid model's ``E`` layers)."""
    if model.layer_pattern:
        return model.layer_pattern.count("E")
    if not model.is_moe or model.layers <= model.first_dense_layers:
        return 0
    return -(-(model.layers - model.first_dense_layers) // max(model.moe_layer_freq, 1))


def embedding_params(model: ModelSpec) -> float:
    """Input embedding, learned positions, and the output projection when untied."""
    total = float(model.vocab * model.hidden)
    if not model.tied_embeddings:
        total += model.vocab * model.hidden
    if model.position_embedding == "learned":
        total += model.max_seq_len * model.hidden
    return total


def param_count(model: ModelSpec) -> float:
    """Total parameters (multi-token-prediction modules excluded, as DeepSeek-V3's 671B does)."""
    layers = sum(kind_params(model, k).total * n for k, n in kind_counts(model).items())
    return layers + embedding_params(model) + _norm_params(model, model.hidden)


def active_param_count(model: ModelSpec) -> float:
    """Parameters a token passes through: routed experts count only ``top_k`` of them."""
    if not model.is_moe:
        return param_count(model)
    inactive = 0.0
    for kind, n in kind_counts(model).items():
        if kind.ffn == "moe":
            routed = kind_params(model, kind).mlp_routed
            inactive += n * routed * (1.0 - model.top_k / model.routed_experts)
    return param_count(model) - inactive


def kind_matmul_params(model: ModelSpec, kind: LayerKind) -> float:
    """Weights one token's forward multiplies by in a layer of the given kind: the mixer's
    projections, the dense FFN or shared experts, ``top_k`` routed experts and the router."""
    params = kind_params(model, kind)
    routed = params.mlp_routed * model.top_k / model.routed_experts if model.is_moe else 0.0
    return params.attention + params.mlp_dense + routed + params.router


def matmul_flop_per_token(model: ModelSpec) -> float:
    """Forward FLOPs per token in weight matmuls: 2 x active matmul parameters + 2*D*V logits.

    Norms, biases, Mamba-2's convolution and the input embedding lookup do no matmul work.
    """
    active = sum(kind_matmul_params(model, k) * n for k, n in kind_counts(model).items())
    return 2.0 * active + 2.0 * model.hidden * model.vocab


def attention_layers(model: ModelSpec) -> int:
    """Layers with self-attention: all of a transformer's, the ``*`` of a hybrid pattern."""
    return sum(n for kind, n in kind_counts(model).items() if kind.mixer == "attention")


def gdn_layers(model: ModelSpec) -> int:
    """Gated DeltaNet layers (``L`` of a mixer pattern)."""
    return sum(n for kind, n in kind_counts(model).items() if kind.mixer == "gdn")


def mamba_layers(model: ModelSpec) -> int:
    """Mamba-2 layers (``M`` of a hybrid pattern)."""
    return sum(n for kind, n in kind_counts(model).items() if kind.mixer == "mamba")


def ssd_flop_per_token(model: ModelSpec, seq_len: int) -> float:
    """Forward FLOPs per token of one Mamba layer's state-space core. Mamba-2: by the SSD algorithm
    (Dao & Gu 2024, Sec. 6), chunks of Q = min(chunk, s) tokens: within a chunk C B^T (2 Q N
    per group) and its product with x (2 Q P per head); the chunk's final states B^T x and the
    outputs from the states entering it (2 N P per head each)."""
    if not model.mamba_heads:
        return 0.0
    if model.mamba_version == 1:
        # The selective scan, per channel and state: the decay exp(dt A), dt B x, the state
        # update h = a h + b and the output's C h (Gu & Dao 2023, Algorithm 2): 7 FLOPs and an
        # exponential, counted as 8.
        return 8.0 * mamba_inner(model) * model.mamba_state
    q = float(min(model.mamba_chunk, seq_len))
    p, n = float(model.mamba_head_dim), float(model.mamba_state)
    return model.mamba_heads * (2.0 * q * p + 4.0 * n * p) + model.mamba_groups * 2.0 * q * n


def attention_flop_per_token(model: ModelSpec, seq_len: int, causal_half: bool) -> float:
    """Forward FLOPs per token of the score (QK^T) and context (AV) products, all layers.

    ``2 * s * H * (d_qk + d_v)`` per layer over the full s x s square; a causal kernel that skips
    the masked half does half of it (``causal_half``). Sliding windows cap s at the window in
    the layers that use it (``ModelSpec.attention_windows``).
    """
    span = sum(
        share * (min(seq_len, window) if window else seq_len)
        for window, share in model.attention_windows
    )
    if model.kv_lora_rank:
        d_qk = model.qk_nope_head_dim + model.qk_rope_head_dim
        d_v = model.v_head_dim
    else:
        d_qk = d_v = model.head_size
    flop = 2.0 * span * model.heads * (d_qk + d_v) * attention_layers(model)
    return flop * (0.5 if causal_half else 1.0)


def model_flop_per_token(model: ModelSpec, seq_len: int) -> float:
    """Model FLOPs per trained token (forward + backward = 3x forward), the MFU numerator.

    Megatron's convention (Narayanan et al. SC'21, eq. 3): weight matmuls plus the full s x s
    attention products, no recomputation; a hybrid model adds its Mamba-2 layers' SSD products.
    """
    forward = matmul_flop_per_token(model) + attention_flop_per_token(model, seq_len, False)
    forward += mamba_layers(model) * ssd_flop_per_token(model, seq_len)
    forward += gdn_layers(model) * gdn_flop_per_token(model, seq_len)
    return 3.0 * forward
