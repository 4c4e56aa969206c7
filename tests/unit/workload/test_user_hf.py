"""MoE fields of HuggingFace ``config.json`` files read into a ModelSpec."""

from __future__ import annotations

from typing import Any

from scalewall import catalog
from scalewall.workload import counts
from scalewall.workload.user import model_from_hf_config

# Qwen/Qwen3-30B-A3B config.json (2025), the keys the step model reads.
QWEN3_30B: dict[str, Any] = {
    "hidden_size": 2048,
    "num_hidden_layers": 48,
    "num_attention_heads": 32,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "intermediate_size": 6144,
    "moe_intermediate_size": 768,
    "num_experts": 128,
    "num_experts_per_tok": 8,
    "decoder_sparse_step": 1,
    "mlp_only_layers": [],
    "vocab_size": 151936,
    "max_position_embeddings": 40960,
    "tie_word_embeddings": False,
    "hidden_act": "silu",
    "rms_norm_eps": 1e-6,
}


def test_qwen3_moe_config_gives_the_catalog_shape() -> None:
    spec = model_from_hf_config(QWEN3_30B, "qwen3.json")
    shipped = catalog.model("qwen3-30b-a3b")
    for name in ("routed_experts", "top_k", "expert_ffn_hidden", "head_dim", "moe_layer_freq"):
        assert getattr(spec, name) == getattr(shipped, name), name
    assert counts.param_count(spec) == counts.param_count(shipped)


def test_top_k_and_interleaved_moe_layers_under_other_names() -> None:
    """gpt-oss names the routed experts per token ``experts_per_token``; Llama 4 places an
    MoE layer every ``interleave_moe_layer_step`` layers (dense layers in between)."""
    renamed = {k: v for k, v in QWEN3_30B.items() if k != "num_experts_per_tok"}
    assert model_from_hf_config(renamed | {"experts_per_token": 4}, "oss.json").top_k == 4
    every_other = model_from_hf_config(QWEN3_30B | {"decoder_sparse_step": 2}, "a.json")
    assert every_other.moe_layer_freq == 2
    llama4 = {k: v for k, v in QWEN3_30B.items() if k != "decoder_sparse_step"}
    interleaved = model_from_hf_config(llama4 | {"interleave_moe_layer_step": 2}, "b.json")
    assert interleaved.moe_layer_freq == 2
    assert counts.param_count(interleaved) < counts.param_count(
        model_from_hf_config(QWEN3_30B, "c.json")
    )
