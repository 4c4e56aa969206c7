"""HuggingFace ``config.json`` files of many architectures read into shapes whose parameter count
is the published one. Each config is the model's own file on the HuggingFace Hub (the fields
that shape the model; tokenizer and runtime keys left out), named by its repository."""

from __future__ import annotations

from typing import Any

import pytest

from scalewall.errors import SpecError
from scalewall.workload.counts import active_param_count, param_count
from scalewall.workload.user import model_from_hf_config

CONFIGS: dict[str, tuple[dict[str, Any], float]] = {
    # repository: (config.json fields, published total parameters)
    "baidu/ERNIE-4.5-300B-A47B-PT": (
        {"model_type": "ernie4_5_moe", "hidden_size": 8192, "intermediate_size": 28672,
         "num_attention_heads": 64, "num_key_value_heads": 8, "num_hidden_layers": 54,
         "vocab_size": 103424, "hidden_act": "silu", "rms_norm_eps": 1e-5,
         "moe_num_experts": 64, "moe_k": 8, "moe_intermediate_size": 3584,
         "moe_layer_start_index": 3, "moe_layer_interval": 1, "tie_word_embeddings": True},
        300e9,
    ),
    "meta-llama/Meta-Llama-3-8B": (
        {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
         "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
         "vocab_size": 128256, "hidden_act": "silu", "rms_norm_eps": 1e-5,
         "max_position_embeddings": 8192, "tie_word_embeddings": False},
        8.03e9,
    ),
    "mistralai/Mistral-7B-v0.1": (
        {"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
         "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
         "vocab_size": 32000, "hidden_act": "silu", "rms_norm_eps": 1e-5,
         "sliding_window": 4096, "tie_word_embeddings": False},
        7.24e9,
    ),
    "Qwen/Qwen2.5-7B": (
        {"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
         "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 28,
         "vocab_size": 152064, "hidden_act": "silu", "rms_norm_eps": 1e-6,
         "sliding_window": 131072, "use_sliding_window": False, "max_window_layers": 28,
         "tie_word_embeddings": False},
        7.62e9,
    ),
    "Qwen/Qwen3-30B-A3B": (
        {"model_type": "qwen3_moe", "hidden_size": 2048, "intermediate_size": 6144,
         "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8,
         "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
         "num_hidden_layers": 48, "vocab_size": 151936, "hidden_act": "silu",
         "rms_norm_eps": 1e-6, "decoder_sparse_step": 1, "mlp_only_layers": [],
         "use_sliding_window": False, "sliding_window": None, "tie_word_embeddings": False},
        30.5e9,
    ),
    "mistralai/Mixtral-8x7B-v0.1": (
        {"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336,
         "num_local_experts": 8, "num_experts_per_tok": 2, "num_attention_heads": 32,
         "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 32000,
         "hidden_act": "silu", "rms_norm_eps": 1e-5, "sliding_window": None,
         "tie_word_embeddings": False},
        46.7e9,
    ),
    "deepseek-ai/DeepSeek-V3": (
        {"model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432,
         "moe_intermediate_size": 2048, "n_routed_experts": 256, "n_shared_experts": 1,
         "num_experts_per_tok": 8, "first_k_dense_replace": 3, "moe_layer_freq": 1,
         "num_attention_heads": 128, "num_key_value_heads": 128, "num_hidden_layers": 61,
         "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
         "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 129280,
         "hidden_act": "silu", "rms_norm_eps": 1e-6, "num_nextn_predict_layers": 1,
         "n_group": 8, "topk_group": 4, "tie_word_embeddings": False},
        671e9,
    ),
    "google/gemma-7b": (
        {"model_type": "gemma", "hidden_size": 3072, "intermediate_size": 24576,
         "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 256,
         "num_hidden_layers": 28, "vocab_size": 256000, "hidden_act": "gelu",
         "rms_norm_eps": 1e-6},
        8.54e9,
    ),
    "openai-community/gpt2-xl": (
        {"model_type": "gpt2", "n_embd": 1600, "n_layer": 48, "n_head": 25, "n_inner": None,
         "n_positions": 1024, "vocab_size": 50257, "activation_function": "gelu_new"},
        1.56e9,
    ),
    "facebook/opt-1.3b": (
        {"model_type": "opt", "hidden_size": 2048, "ffn_dim": 8192, "num_attention_heads": 32,
         "num_hidden_layers": 24, "vocab_size": 50272, "activation_function": "relu",
         "max_position_embeddings": 2048, "word_embed_proj_dim": 2048},
        1.3e9,
    ),
    "bigscience/bloom-7b1": (
        {"model_type": "bloom", "hidden_size": 4096, "n_head": 32, "n_layer": 30,
         "vocab_size": 250880},
        7.07e9,
    ),
    "tiiuae/falcon-7b": (
        {"model_type": "falcon", "hidden_size": 4544, "num_attention_heads": 71,
         "num_hidden_layers": 32, "multi_query": True, "new_decoder_architecture": False,
         "vocab_size": 65024, "parallel_attn": True},
        6.92e9,
    ),
    "tiiuae/falcon-40b": (
        {"model_type": "falcon", "hidden_size": 8192, "num_attention_heads": 128,
         "num_hidden_layers": 60, "num_kv_heads": 8, "new_decoder_architecture": True,
         "vocab_size": 65024},
        41.8e9,
    ),
    "mosaicml/mpt-7b": (
        {"model_type": "mpt", "d_model": 4096, "n_heads": 32, "n_layers": 32,
         "expansion_ratio": 4, "max_seq_len": 2048, "vocab_size": 50432,
         "attn_config": {"alibi": True}},
        6.65e9,
    ),
    "EleutherAI/gpt-neox-20b": (
        {"model_type": "gpt_neox", "hidden_size": 6144, "intermediate_size": 24576,
         "num_attention_heads": 64, "num_hidden_layers": 44, "vocab_size": 50432,
         "hidden_act": "gelu_fast", "tie_word_embeddings": False},
        20.6e9,
    ),
    "microsoft/Phi-3-mini-4k-instruct": (
        {"model_type": "phi3", "hidden_size": 3072, "intermediate_size": 8192,
         "num_attention_heads": 32, "num_key_value_heads": 32, "num_hidden_layers": 32,
         "vocab_size": 32064, "hidden_act": "silu", "rms_norm_eps": 1e-5,
         "tie_word_embeddings": False},
        3.82e9,
    ),
    "meta-llama/Llama-4-Scout-17B-16E": (
        {"model_type": "llama4", "text_config": {
            "model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
            "intermediate_size_mlp": 16384, "num_local_experts": 16, "num_experts_per_tok": 1,
            "interleave_moe_layer_step": 1, "num_attention_heads": 40,
            "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 48,
            "vocab_size": 202048, "hidden_act": "silu", "rms_norm_eps": 1e-5},
         "tie_word_embeddings": False},
        109e9,
    ),
    "meta-llama/Llama-4-Maverick-17B-128E": (
        {"model_type": "llama4", "text_config": {
            "model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
            "intermediate_size_mlp": 16384, "num_local_experts": 128, "num_experts_per_tok": 1,
            "interleave_moe_layer_step": 2, "num_attention_heads": 40,
            "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 48,
            "vocab_size": 202048, "hidden_act": "silu", "rms_norm_eps": 1e-5},
         "tie_word_embeddings": False},
        400e9,
    ),
    "databricks/dbrx-base": (
        {"model_type": "dbrx", "d_model": 6144, "n_heads": 48, "n_layers": 40,
         "vocab_size": 100352, "max_seq_len": 32768, "tie_word_embeddings": False,
         "ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16, "moe_top_k": 4,
                        "ffn_act_fn": {"name": "silu"}},
         "attn_config": {"kv_n_heads": 8, "clip_qkv": 8, "rope_theta": 500000}},
        132e9,
    ),
    "allenai/OLMoE-1B-7B-0924": (
        {"model_type": "olmoe", "hidden_size": 2048, "intermediate_size": 1024,
         "num_experts": 64, "num_experts_per_tok": 8, "num_attention_heads": 16,
         "num_key_value_heads": 16, "num_hidden_layers": 16, "vocab_size": 50304,
         "hidden_act": "silu", "rms_norm_eps": 1e-5, "tie_word_embeddings": False},
        6.92e9,
    ),
    "inclusionAI/Ling-mini-2.0": (
        # 16B total, 1.4B activated (the Ling-V2 README); one shared expert per MoE layer
        {"model_type": "bailing_moe", "hidden_size": 2048, "intermediate_size": 5120,
         "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128,
         "num_hidden_layers": 20, "vocab_size": 157184, "hidden_act": "silu",
         "rms_norm_eps": 1e-6, "num_experts": 256, "num_shared_experts": 1,
         "num_experts_per_tok": 8, "n_group": 8, "topk_group": 4,
         "moe_intermediate_size": 512, "first_k_dense_replace": 1,
         "tie_word_embeddings": False},
        16e9,
    ),
    "tencent/Hunyuan-A13B-Pretrain": (
        # 80B total, 13B activated (the model card); its MoE keys are per-layer lists of one
        # repeated value
        {"model_type": "hunyuan_v1_moe", "hidden_size": 4096, "intermediate_size": 3072,
         "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
         "num_hidden_layers": 32, "vocab_size": 128167, "hidden_act": "silu",
         "rms_norm_eps": 1e-5, "num_experts": 64, "moe_topk": [8] * 32,
         "moe_intermediate_size": [3072] * 32, "num_shared_expert": [1] * 32,
         "use_qk_norm": True, "tie_word_embeddings": True},
        80e9,
    ),
    "Snowflake/snowflake-arctic-base": (
        # 480B total (Snowflake's model card): a dense residual MLP beside the 128-expert MoE in
        # every layer (parallel_attn_mlp_res), read as one shared expert of its width
        {"model_type": "arctic", "hidden_size": 7168, "intermediate_size": 4864,
         "num_attention_heads": 56, "num_key_value_heads": 8, "num_hidden_layers": 35,
         "vocab_size": 32000, "hidden_act": "silu", "rms_norm_eps": 1e-5,
         "num_local_experts": 128, "num_experts_per_tok": 2, "moe_layer_frequency": 1,
         "parallel_attn_mlp_res": True, "tie_word_embeddings": False},
        480e9,
    ),
    "ibm-granite/granite-4.0-h-small": (
        # 32.2B total, 9B active (IBM's model card): 36 Mamba-2 and 4 attention layers, each
        # followed by 72 routed experts (top-10) with a shared MLP of twice their width
        {"model_type": "granitemoehybrid", "hidden_size": 4096, "intermediate_size": 768,
         "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 40,
         "layer_types": ["attention" if i in (5, 15, 25, 35) else "mamba" for i in range(40)],
         "num_local_experts": 72, "num_experts_per_tok": 10, "shared_intermediate_size": 1536,
         "mamba_n_heads": 128, "mamba_d_head": 64, "mamba_d_state": 128, "mamba_n_groups": 1,
         "mamba_d_conv": 4, "mamba_expand": 2, "mamba_chunk_size": 256, "hidden_act": "silu",
         "rms_norm_eps": 1e-5, "position_embedding_type": "nope", "vocab_size": 100352,
         "tie_word_embeddings": True},
        32.2e9,
    ),
    "ibm-ai-platform/Bamba-9B": (
        # 9.78B (the Hub's count): 29 Mamba-2 and 3 attention layers, each with a gated MLP
        {"model_type": "bamba", "hidden_size": 4096, "intermediate_size": 14336,
         "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
         "attn_layer_indices": [9, 18, 27], "mamba_n_heads": 128, "mamba_d_head": 64,
         "mamba_d_state": 128, "mamba_n_groups": 1, "mamba_d_conv": 4, "mamba_expand": 2,
         "mamba_chunk_size": 256, "hidden_act": "silu", "rms_norm_eps": 1e-5,
         "vocab_size": 128256, "tie_word_embeddings": False},
        9.78e9,
    ),
}  # fmt: skip


@pytest.mark.parametrize("repo", sorted(CONFIGS))
def test_config_reads_to_the_published_parameter_count(repo: str) -> None:
    cfg, published = CONFIGS[repo]
    model = model_from_hf_config(cfg, repo)
    counted = param_count(model)  # DeepSeek-V3's 671B and this count leave out its MTP module
    assert counted == pytest.approx(published, rel=0.02), (repo, counted)


def test_deepseek_config_is_the_catalog_shape() -> None:
    from scalewall import catalog

    read = model_from_hf_config(CONFIGS["deepseek-ai/DeepSeek-V3"][0], "d")
    assert param_count(read) == pytest.approx(param_count(catalog.model("deepseek-v3")), rel=1e-9)
    assert active_param_count(read) == pytest.approx(37e9, rel=0.02)
    dsv3 = catalog.model("deepseek-v3")
    assert (read.router_groups, read.router_group_topk) == (8, 4)
    assert (read.router_groups, read.router_group_topk) == (
        dsv3.router_groups,
        dsv3.router_group_topk,
    )


def test_multimodal_text_config_is_the_language_model() -> None:
    cfg, published = CONFIGS["meta-llama/Meta-Llama-3-8B"]
    wrapped = {"model_type": "llava", "text_config": cfg, "vision_config": {"hidden_size": 1024}}
    assert param_count(model_from_hf_config(wrapped, "x")) == pytest.approx(published, rel=0.02)


def test_windows_that_are_written_but_unused_are_full_attention() -> None:
    assert model_from_hf_config(CONFIGS["Qwen/Qwen2.5-7B"][0], "q").sliding_window == 0
    assert model_from_hf_config(CONFIGS["mistralai/Mistral-7B-v0.1"][0], "m").sliding_window == 4096
    every_layer_full = CONFIGS["mistralai/Mistral-7B-v0.1"][0] | {
        "layer_types": ["full_attention"] * 32
    }
    assert model_from_hf_config(every_layer_full, "f").sliding_window == 0


def test_alternating_windows_count_their_full_layers() -> None:
    """gpt-oss lists each layer's kind; Gemma 3 has one full layer per pattern, Gemma 2 every
    other one, Qwen2 the first ``max_window_layers``."""
    mistral = CONFIGS["mistralai/Mistral-7B-v0.1"][0]
    listed = mistral | {"layer_types": ["sliding_attention", "full_attention"] * 16}
    spec = model_from_hf_config(listed, "g")
    assert (spec.sliding_window, spec.full_attention_layers) == (4096, 16)
    assert spec.attention_windows == ((4096, 0.5), (0, 0.5))
    pattern = model_from_hf_config(mistral | {"sliding_window_pattern": 6}, "g3")
    assert pattern.full_attention_layers == 32 // 6
    qwen = model_from_hf_config(mistral | {"max_window_layers": 8}, "q")
    assert qwen.full_attention_layers == 8
    assert model_from_hf_config(mistral | {"max_window_layers": 32}, "q").sliding_window == 0


def test_gated_gelu_has_three_ffn_matrices_and_gpt_two() -> None:
    assert model_from_hf_config(CONFIGS["google/gemma-7b"][0], "g").activation == "swiglu"
    assert model_from_hf_config(CONFIGS["EleutherAI/gpt-neox-20b"][0], "n").activation == "gelu"


def test_qwen3_moe_activates_three_billion() -> None:
    model = model_from_hf_config(CONFIGS["Qwen/Qwen3-30B-A3B"][0], "q")
    assert active_param_count(model) == pytest.approx(3.3e9, rel=0.05)


def test_dense_layers_not_at_the_front_are_refused() -> None:
    cfg = CONFIGS["Qwen/Qwen3-30B-A3B"][0] | {"mlp_only_layers": [5, 7]}
    with pytest.raises(SpecError, match="mlp_only_layers"):
        model_from_hf_config(cfg, "q")


@pytest.mark.parametrize(
    ("repo", "active"),
    [
        ("meta-llama/Llama-4-Scout-17B-16E", 17e9),
        ("meta-llama/Llama-4-Maverick-17B-128E", 17e9),
        ("databricks/dbrx-base", 36e9),
        ("allenai/OLMoE-1B-7B-0924", 1.3e9),
        ("baidu/ERNIE-4.5-300B-A47B-PT", 47e9),
        ("inclusionAI/Ling-mini-2.0", 1.4e9),
        ("tencent/Hunyuan-A13B-Pretrain", 13e9),
        ("ibm-granite/granite-4.0-h-small", 9e9),
    ],
)
def test_moe_configs_activate_their_published_parameters(repo: str, active: float) -> None:
    model = model_from_hf_config(CONFIGS[repo][0], repo)
    assert active_param_count(model) == pytest.approx(active, rel=0.05), repo


def test_mpt_multihead_attention_ignores_kv_n_heads() -> None:
    cfg = CONFIGS["mosaicml/mpt-7b"][0]
    cfg = cfg | {"attn_config": {"attn_type": "multihead_attention", "kv_n_heads": 1}}
    assert model_from_hf_config(cfg, "m").kv_heads == 32


def test_encoder_decoder_and_encoder_models_are_refused_by_name() -> None:
    t5 = {"model_type": "t5", "d_model": 1024, "d_ff": 2816, "num_layers": 24, "num_heads": 16,
          "vocab_size": 32128, "is_encoder_decoder": True}  # fmt: skip
    with pytest.raises(SpecError, match=r"model_type='t5'.*decoder-only"):
        model_from_hf_config(t5, "t5")
    bert = CONFIGS["mistralai/Mistral-7B-v0.1"][0] | {"model_type": "bert"}
    with pytest.raises(SpecError, match="decoder-only"):
        model_from_hf_config(bert, "bert")


def test_state_space_hybrids_are_refused_not_modelled_as_attention() -> None:
    cfg = CONFIGS["mistralai/Mistral-7B-v0.1"][0] | {"model_type": "zamba2"}
    with pytest.raises(SpecError, match="model_type='zamba2'"):
        model_from_hf_config(cfg, "j")


def test_ling_shared_expert_counts_in_the_active_parameters() -> None:
    # Ling 2.0 names its shared experts ``num_shared_experts``; the Ling-V2 README gives
    # Ling-mini-2.0 789M activated non-embedding parameters (input and output embeddings
    # untied), which the 19 MoE layers reach only with their shared expert.
    cfg = CONFIGS["inclusionAI/Ling-mini-2.0"][0]
    model = model_from_hf_config(cfg, "inclusionAI/Ling-mini-2.0")
    assert model.shared_experts == 1
    embeddings = 2 * model.vocab * model.hidden
    assert active_param_count(model) - embeddings == pytest.approx(789e6, rel=0.01)


def test_per_layer_lists_of_one_value_read_as_that_value_and_varying_ones_are_refused() -> None:
    cfg = CONFIGS["tencent/Hunyuan-A13B-Pretrain"][0]
    model = model_from_hf_config(cfg, "h")
    assert (model.routed_experts, model.top_k, model.shared_experts) == (64, 8, 1)
    with pytest.raises(SpecError, match="moe_topk"):
        model_from_hf_config(cfg | {"moe_topk": [8] * 31 + [4]}, "h")


def test_arctic_counts_its_dense_residual_mlp_as_a_shared_expert() -> None:
    cfg = CONFIGS["Snowflake/snowflake-arctic-base"][0]
    model = model_from_hf_config(cfg, "a")
    assert (model.shared_experts, model.expert_ffn_hidden) == (1, 4864)
    without = model_from_hf_config(cfg | {"parallel_attn_mlp_res": False}, "a")
    assert without.shared_experts == 0
    assert active_param_count(model) - active_param_count(without) == pytest.approx(
        35 * 3 * 7168 * 4864, rel=1e-3
    )
    every_other = model_from_hf_config(cfg | {"moe_layer_frequency": 2}, "a")
    assert every_other.moe_layer_freq == 2


def test_granite_hybrid_layers_are_a_mixer_then_an_ffn() -> None:
    cfg = CONFIGS["ibm-granite/granite-4.0-h-small"][0]
    model = model_from_hf_config(cfg, "g")
    mixers, ffns = model.layer_pattern[0::2], model.layer_pattern[1::2]
    assert mixers == "".join("*" if k == "attention" else "M" for k in cfg["layer_types"])
    assert ffns == "E" * 40
    assert (model.mamba_heads, model.mamba_head_dim, model.mamba_state) == (128, 64, 128)
    # The shared MLP (1536) is two experts of the routed width (768).
    assert (model.shared_experts, model.shared_expert_ffn_hidden) == (2, 0)
    # Without experts (Granite 4.0-H-Micro's layout) the shared MLP is every layer's FFN.
    dense = model_from_hf_config(cfg | {"num_local_experts": 0}, "g")
    assert dense.layer_pattern[1::2] == "-" * 40 and dense.ffn_hidden == 1536
    # A head width left "auto" is the inner width over the heads.
    auto = model_from_hf_config(cfg | {"mamba_d_head": "auto"}, "g")
    assert auto.mamba_head_dim == 2 * 4096 // 128


def test_shared_expert_of_its_own_width_counts_that_width() -> None:
    cfg = CONFIGS["ibm-granite/granite-4.0-h-small"][0]
    model = model_from_hf_config(cfg, "g")
    odd = model_from_hf_config(cfg | {"shared_intermediate_size": 1000}, "g")
    assert (odd.shared_experts, odd.shared_expert_ffn_hidden) == (1, 1000)
    assert param_count(model) - param_count(odd) == pytest.approx(40 * 3 * 4096 * 536)


def test_per_layer_moe_flags_give_the_leading_dense_layers() -> None:
    cfg = CONFIGS["deepseek-ai/DeepSeek-V3"][0]
    layers = cfg["num_hidden_layers"]
    flags = [0, 0] + [1] * (layers - 2)
    model = model_from_hf_config(cfg | {"first_k_dense_replace": 0, "moe_layer_freq": flags}, "d")
    assert (model.first_dense_layers, model.moe_layer_freq) == (2, 1)
    with pytest.raises(SpecError, match="moe_layer_freq"):
        model_from_hf_config(cfg | {"moe_layer_freq": [0, 1] * (layers // 2) + [1]}, "d")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"num_hidden_layers": 10**9}, "num_hidden_layers"),
        ({"hidden_size": 1e300}, "hidden_size"),
        ({"vocab_size": float("inf")}, "vocab_size"),
    ],
)
def test_absurd_sizes_are_refused_before_anything_is_built(
    change: dict[str, Any], field: str
) -> None:
    # A billion layers would build a billion-entry layer pattern; 1e300 overflows every count.
    bamba = {
        "model_type": "bamba", "hidden_size": 4096, "intermediate_size": 14336,
        "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
        "attn_layer_indices": [9, 18, 27], "mamba_n_heads": 128, "mamba_d_head": 64,
        "mamba_d_state": 128, "mamba_d_conv": 4, "mamba_expand": 2, "vocab_size": 128256,
        "hidden_act": "silu",
    }  # fmt: skip
    model_from_hf_config(bamba, "ok")
    with pytest.raises(SpecError, match=field):
        model_from_hf_config(bamba | change, "b")


def test_mpt_expansion_ratio_must_be_a_number() -> None:
    mpt = {
        "model_type": "mpt", "d_model": 4096, "n_heads": 32, "n_layers": 32,
        "expansion_ratio": 4, "max_seq_len": 2048, "vocab_size": 50432,
    }  # fmt: skip
    assert model_from_hf_config(mpt, "m").ffn_hidden == 4 * 4096
    with pytest.raises(SpecError, match=r"expansion_ratio=\[4\] is invalid; a positive number"):
        model_from_hf_config(mpt | {"expansion_ratio": [4]}, "m")
