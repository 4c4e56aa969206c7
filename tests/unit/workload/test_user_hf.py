"""MoE fields of HuggingFace ``config.json`` files read into a ModelSpec."""

from __future__ import annotations

from typing import Any

import pytest

from scalewall import catalog
from scalewall.errors import SpecError
from scalewall.workload import counts
from scalewall.workload.user import model_from_args, model_from_hf_config

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


LLAMA3_8B_INLINE = (
    "num_hidden_layers=32,hidden_size=4096,num_attention_heads=32,num_key_value_heads=8,"
    "intermediate_size=14336,vocab_size=128256,model_type=llama,rope_theta=500000"
)


def test_an_inline_model_in_config_json_words_reads_as_that_file() -> None:
    pairs = dict(item.split("=") for item in LLAMA3_8B_INLINE.split(","))
    cfg = {k: (v if k == "model_type" else int(v)) for k, v in pairs.items()}
    from_file = model_from_hf_config(cfg, "config.json")
    inline = model_from_args(LLAMA3_8B_INLINE)
    assert counts.param_count(inline) == counts.param_count(from_file)
    assert (inline.layers, inline.kv_heads, inline.ffn_hidden) == (32, 8, 14336)
    shipped = counts.param_count(catalog.model("llama3.1-8b"))
    assert counts.param_count(inline) == pytest.approx(shipped, rel=1e-4)


def test_an_inline_model_needs_no_prefix_and_refuses_a_key_nothing_reads() -> None:
    native = "layers=16,hidden=2048,heads=16,kv_heads=8,ffn_hidden=8192,vocab=32000"
    assert model_from_args(native) == model_from_args("custom:" + native)
    # A misspelt config.json key would otherwise leave kv heads at the query heads.
    with pytest.raises(SpecError, match="num_key_value_head=8"):
        model_from_args(LLAMA3_8B_INLINE.replace("num_key_value_heads", "num_key_value_head"))
    with pytest.raises(SpecError, match="unknown key"):
        model_from_args(native + ",hiden=5")
