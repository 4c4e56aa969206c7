"""Parameter and FLOP counts of a decoder-only transformer, dense or mixture-of-experts.

Notation: L layers, D hidden, H heads, K kv heads, d head size, F ffn hidden, V vocabulary,
s sequence length. Counts are exact for the architectures the catalog describes (checked against
published totals in tests).
"""

from __future__ import annotations

from dataclasses import dataclass

from scalewall.catalog.schema import ModelSpec


@dataclass(frozen=True, kw_only=True)
class LayerParams:
    """Parameters of one transformer layer, split by where they live."""

    attention: float
    """Q, K, V and output projections (and their biases), MLA low-rank projections included."""
    mlp_dense: float
    """Dense FFN (or the shared experts of an MoE layer)."""
    mlp_routed: float
    """All routed experts of the layer (0 for a dense layer)."""
    router: float
    norms: float

    @property
    def total(self) -> float:
        return self.attention + self.mlp_dense + self.mlp_routed + self.router + self.norms


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
    out = heads * d * d_model
    bias = (d * (heads + 2 * model.kv_heads) + d_model) if model.linear_bias else 0
    return float(qkv + out + bias)


def ffn_params(model: ModelSpec, ffn_hidden: int) -> float:
    """One FFN block of width ``ffn_hidden`` (2 matrices for GeLU, 3 for SwiGLU)."""
    bias = (ffn_hidden * (_ffn_matrices(model) - 1) + model.hidden) if model.linear_bias else 0
    return float(_ffn_matrices(model) * model.hidden * ffn_hidden + bias)


def is_moe_layer(model: ModelSpec, index: int) -> bool:
    """Layer ``index`` (0-based) is a mixture-of-experts layer."""
    if not model.is_moe or index < model.first_dense_layers:
        return False
    return (index - model.first_dense_layers) % max(model.moe_layer_freq, 1) == 0


def layer_params(model: ModelSpec, moe: bool) -> LayerParams:
    """Parameters of one layer; ``moe`` selects the expert layout."""
    norms = 2 * _norm_params(model, model.hidden)
    attention = attention_params(model)
    if not moe:
        return LayerParams(
            attention=attention,
            mlp_dense=ffn_params(model, model.ffn_hidden),
            mlp_routed=0.0,
            router=0.0,
            norms=norms,
        )
    expert = ffn_params(model, model.expert_ffn_hidden)
    return LayerParams(
        attention=attention,
        mlp_dense=model.shared_experts * expert,
        mlp_routed=model.routed_experts * expert,
        router=float(model.hidden * model.routed_experts),
        norms=norms,
    )


def num_moe_layers(model: ModelSpec) -> int:
    """Layers for which :func:`is_moe_layer` holds: every ``moe_layer_freq``-th layer after the
    dense ones, counted in closed form."""
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
    n_moe = num_moe_layers(model)
    dense = layer_params(model, moe=False).total * (model.layers - n_moe)
    sparse = layer_params(model, moe=True).total * n_moe if n_moe else 0.0
    return dense + sparse + embedding_params(model) + _norm_params(model, model.hidden)


def active_param_count(model: ModelSpec) -> float:
    """Parameters a token passes through: routed experts count only ``top_k`` of them."""
    if not model.is_moe:
        return param_count(model)
    moe = layer_params(model, moe=True)
    inactive = moe.mlp_routed * (1.0 - model.top_k / model.routed_experts)
    return param_count(model) - inactive * num_moe_layers(model)


def matmul_flop_per_token(model: ModelSpec) -> float:
    """Forward FLOPs per token in weight matmuls: 2 x active matmul parameters + 2*D*V logits.

    Norms, biases and the input embedding lookup do no matmul work.
    """
    n_moe = num_moe_layers(model)
    dense = layer_params(model, moe=False)
    per_dense = dense.attention + dense.mlp_dense
    active = per_dense * (model.layers - n_moe)
    if n_moe:
        moe = layer_params(model, moe=True)
        routed_active = moe.mlp_routed * model.top_k / model.routed_experts
        active += (moe.attention + moe.mlp_dense + routed_active + moe.router) * n_moe
    return 2.0 * active + 2.0 * model.hidden * model.vocab


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
    flop = 2.0 * span * model.heads * (d_qk + d_v) * model.layers
    return flop * (0.5 if causal_half else 1.0)


def model_flop_per_token(model: ModelSpec, seq_len: int) -> float:
    """Model FLOPs per trained token (forward + backward = 3x forward), the MFU numerator.

    Megatron's convention (Narayanan et al. SC'21, eq. 3): weight matmuls plus the full s x s
    attention products, no recomputation.
    """
    forward = matmul_flop_per_token(model) + attention_flop_per_token(model, seq_len, False)
    return 3.0 * forward
