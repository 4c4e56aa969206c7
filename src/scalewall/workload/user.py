"""User-defined models: a HuggingFace ``config.json``, a TOML file, or ``key=value`` pairs."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from scalewall import catalog
from scalewall.catalog.loader import build
from scalewall.catalog.schema import (
    ACTIVATION_SPELLINGS,
    MAX_MODEL_LAYERS,
    ModelSpec,
    canonical_activation,
)
from scalewall.errors import ScalewallError, SpecError

INLINE_PREFIX = "custom:"

GATED_MLP_TYPES = frozenset(
    {
        "llama", "llama4_text", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3",
        "qwen3_moe", "deepseek_v2", "deepseek_v3", "gemma", "gemma2", "gemma3_text",
        "phi3", "olmo", "olmo2", "olmoe", "granite", "granitemoe", "cohere", "cohere2",
        "internlm2", "baichuan", "minicpm", "exaone", "glm", "glm4", "glm4_moe", "dbrx",
        "arctic", "ernie4_5", "ernie4_5_moe", "hunyuan_v1_dense", "hunyuan_v1_moe",
        "smollm3", "seed_oss", "gpt_oss", "yi", "jetmoe",
    }
)  # fmt: skip
"""transformers model types whose MLP is gated (gate, up and down matrices: three FFN GEMMs
whatever the activation, e.g. Gemma's GeGLU), read from each type's ``modeling_*.py``."""

UNGATED_MLP_TYPES = frozenset(
    {
        "gpt2", "gpt_neox", "gptj", "opt", "bloom", "falcon", "mpt", "phi", "starcoder2",
        "gpt_bigcode", "nemotron", "codegen", "gpt_neo",
    }
)  # fmt: skip
"""Model types with a two-matrix MLP (up and down)."""

TIED_BY_DEFAULT_TYPES = frozenset(
    {"gpt2", "opt", "bloom", "mpt", "falcon", "gemma", "gemma2", "gemma3_text", "gpt_bigcode"}
)
"""Model types whose config class defaults ``tie_word_embeddings`` to true (``save_pretrained``
omits a key equal to its class default, so a missing key means that default)."""

LEARNED_POSITION_TYPES = frozenset({"gpt2", "opt", "gpt_bigcode", "gpt_neo"})
"""Model types with learned absolute position embeddings (``max_position_embeddings x hidden``
parameters)."""

BIASED_LINEAR_TYPES = frozenset(
    {"gpt2", "opt", "bloom", "gpt_neox", "gptj", "phi", "gpt_bigcode", "starcoder2", "gpt_neo"}
)
"""Model types whose linear layers carry biases."""


def _hf_get(cfg: dict[str, Any], *names: str, default: Any = None) -> Any:
    for name in names:
        if cfg.get(name) is not None:
            return cfg[name]
    return default


HF_MAX_WHOLE = 1e12
"""Bound on a config.json count or width (a trillion; the largest real ones, vocabularies and
context lengths, are millions): past it a value is a typo, and its products overflow floats."""


def _hf_int(cfg: dict[str, Any], *names: str, default: int | None = None, where: str) -> int:
    """A whole-number field (the first of ``names`` present); a wrong type names the field. A
    per-layer list whose entries are all equal (Hunyuan's ``moe_topk``,
    ``moe_intermediate_size`` and ``num_shared_expert``) is that one value; a list that varies
    from layer to layer is refused (every MoE layer is modelled alike)."""
    for name in names:
        value = cfg.get(name)
        if value is None:
            continue
        if isinstance(value, list) and value and all(v == value[0] for v in value):
            value = value[0]
        elif isinstance(value, list):
            raise SpecError(
                name,
                value,
                "a whole number, or a per-layer list of one repeated value",
                where=where,
            )
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not abs(value) < HF_MAX_WHOLE
            or value != int(value)
        ):
            raise SpecError(name, value, f"a whole number below {HF_MAX_WHOLE:.0e}", where=where)
        return int(value)
    if default is None:
        raise SpecError(
            names[0], None, f"required: config.json needs {' or '.join(names)}", where=where
        )
    return default


def _text_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """The language model's part of a multimodal config (``text_config``, as Llama 4, Gemma 3
    and Mistral 3 write them); the config itself otherwise."""
    text = cfg.get("text_config")
    if isinstance(text, dict) and "hidden_size" not in cfg:
        return {"model_type": cfg.get("model_type", "")} | text
    return cfg


NESTED_BLOCKS = ("ffn_config", "attn_config")
"""Sub-tables some configs keep their FFN and attention keys in (DBRX: ``ffn_config``
``moe_num_experts``, ``moe_top_k``, ``ffn_hidden_size``; ``attn_config`` ``kv_n_heads``)."""


def _nested_blocks(cfg: dict[str, Any]) -> dict[str, Any]:
    """The config with the keys of its FFN and attention sub-tables read as its own (a key the
    config states itself wins)."""
    if not any(isinstance(cfg.get(block), dict) for block in NESTED_BLOCKS):
        return cfg
    out = dict(cfg)
    for block in NESTED_BLOCKS:
        inner = cfg.get(block)
        if isinstance(inner, dict):
            for key, value in inner.items():
                out.setdefault(key, value)
    attn = cfg.get("attn_config")
    multihead = isinstance(attn, dict) and attn.get("attn_type") == "multihead_attention"
    if multihead and "kv_n_heads" not in cfg:
        # MPT: ``kv_n_heads`` applies to its grouped- and multi-query types only.
        out.pop("kv_n_heads", None)
    return out


def _sliding_window(cfg: dict[str, Any], layers: int, window: int) -> tuple[int, int]:
    """The attention window and how many layers attend to the whole sequence anyway
    (``ModelSpec.full_attention_layers``); (0, 0) for full attention everywhere.

    Qwen2/3 write a window they do not use (``use_sliding_window: false``) and give the first
    ``max_window_layers`` layers full attention; gpt-oss and recent Gemma configs list each
    layer's kind (``layer_types``); Gemma 3 has one full layer every ``sliding_window_pattern``
    layers (``modeling_gemma3.py``: ``(i + 1) % pattern == 0``), Gemma 2 every other
    (``modeling_gemma2.py``: odd layers)."""
    if not window or cfg.get("use_sliding_window") is False:
        return 0, 0
    kinds = cfg.get("layer_types")
    if isinstance(kinds, list) and kinds:
        full = sum(1 for k in kinds[:layers] if k != "sliding_attention")
    elif isinstance(cfg.get("sliding_window_pattern"), int) and cfg["sliding_window_pattern"] > 0:
        full = layers // int(cfg["sliding_window_pattern"])
    elif cfg.get("model_type") == "gemma2":
        full = layers // 2
    elif isinstance(cfg.get("max_window_layers"), int):
        full = min(int(cfg["max_window_layers"]), layers)
    else:
        full = 0
    return (0, 0) if full >= layers else (window, full)


NON_TRANSFORMER_TYPES = frozenset(
    {
        "mamba", "mamba2", "falcon_mamba", "zamba", "zamba2", "falcon_h1",
        "rwkv", "rwkv7", "recurrent_gemma", "lfm2", "xlstm", "minimax", "minimax_m1",
    }
)  # fmt: skip
"""Model types with state-space, recurrent or linear-attention layers the step model does not
describe (it models Mamba-2 blocks laid out as ``nemotron_h`` configs lay them out, or as
``MIXER_FFN_HYBRID_TYPES`` pair them with an FFN): refused rather than modelled as attention
layers."""

MIXER_FFN_HYBRID_TYPES = frozenset({"granitemoehybrid", "bamba", "jamba"})
"""Mamba hybrids whose every layer is a mixer (Mamba or attention) followed by an FFN: IBM
Granite 4.0-H (transformers ``GraniteMoeHybridDecoderLayer``: the Mamba-2 or attention mixer,
then the routed experts with a shared MLP beside them, or the shared MLP alone), Bamba (Mamba-2,
a gated MLP) and AI21's Jamba (``JambaDecoderLayer``s: Mamba-1 mixers with attention every
``attn_layer_period``-th layer, experts every ``expert_layer_period``-th). Read into
``layer_pattern`` as two blocks per layer."""

ATTENTION_LAYER_TYPES = frozenset({"full_attention", "sliding_attention"})
"""``layer_types`` entries the step model describes (Gemma, gpt-oss, Qwen windows), and
``linear_attention`` in the Gated DeltaNet model types (``GATED_DELTANET_TYPES``); any other is
refused by name."""

GATED_DELTANET_TYPES = frozenset(
    {"qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"}
)
"""Model types whose ``linear_attention`` layers are Gated DeltaNet (Qwen3-Next, Qwen3.5) and
whose attention is gated: read into ``ModelSpec.mixer_pattern`` and the linear-attention
fields."""


def _mixer_pattern(cfg: dict[str, Any], layers: int, where: str) -> str:
    """A Gated DeltaNet model's mixers: ``layer_types`` (``linear_attention`` L,
    ``full_attention`` A), or every ``full_attention_interval``-th layer attention."""
    kinds = cfg.get("layer_types")
    if isinstance(kinds, list):
        if len(kinds) != layers:
            raise SpecError(
                "layer_types", f"{len(kinds)} entries", f"one per layer: {layers}", where=where
            )
        return "".join("L" if k == "linear_attention" else "A" for k in kinds)
    interval = _hf_int(cfg, "full_attention_interval", default=4, where=where)
    if interval < 1:
        raise SpecError("full_attention_interval", interval, "a positive integer", where=where)
    return "".join("A" if (i + 1) % interval == 0 else "L" for i in range(layers))


_BLOCK_TYPES = {"mamba": "M", "attention": "*", "mlp": "-", "moe": "E"}
"""``layers_block_type`` entries of a ``nemotron_h`` config and their pattern characters."""


def _hybrid_pattern(cfg: dict[str, Any], layers: int, where: str) -> str:
    """A ``nemotron_h`` config's layer pattern: ``hybrid_override_pattern`` (Nemotron-H,
    Nemotron 3), or the ``layers_block_type`` list later configs write instead."""
    pattern = cfg.get("hybrid_override_pattern")
    blocks = cfg.get("layers_block_type")
    if pattern is None and isinstance(blocks, list):
        unknown = [b for b in blocks if b not in _BLOCK_TYPES]
        if unknown:
            raise SpecError(
                "layers_block_type", unknown[0], f"one of {', '.join(_BLOCK_TYPES)}", where=where
            )
        pattern = "".join(_BLOCK_TYPES[b] for b in blocks)
    if not isinstance(pattern, str) or not pattern:
        raise SpecError(
            "hybrid_override_pattern",
            pattern,
            "a string of M, *, - and E characters, one per layer (or layers_block_type)",
            where=where,
        )
    if len(pattern) != layers:
        raise SpecError(
            "hybrid_override_pattern",
            pattern,
            f"one character per layer: num_hidden_layers is {layers}",
            where=where,
        )
    return pattern


def _period(cfg: dict[str, Any], name: str, layers: int, default: int, where: str) -> list[int]:
    """Layers ``i`` with ``i % period == offset`` of a Jamba config's ``{name}_period`` and
    ``{name}_offset``."""
    period = _hf_int(cfg, f"{name}_period", default=default, where=where)
    offset = _hf_int(cfg, f"{name}_offset", default=0, where=where)
    if period < 1:
        raise SpecError(f"{name}_period", period, "a positive integer", where=where)
    if not 0 <= offset < period:
        raise SpecError(
            f"{name}_offset", offset, f"from 0 to {name}_period - 1 ({period - 1})", where=where
        )
    return [i for i in range(layers) if i % period == offset]


def _mixer_ffn_pattern(cfg: dict[str, Any], layers: int, ffn: str, where: str) -> str:
    """A Granite 4.0-H, Bamba or Jamba config's blocks: each layer's mixer (``layer_types``
    mamba or attention; Bamba's ``attn_layer_indices``; Jamba's ``attn_layer_period`` and
    offset; Mamba where none says) followed by its FFN (``ffn``: E for routed experts, - for an
    MLP; Jamba: experts every ``expert_layer_period``-th layer from its offset, MLPs
    between)."""
    kinds = cfg.get("layer_types", cfg.get("layers_block_type"))
    indices = cfg.get("attn_layer_indices")
    if cfg.get("model_type") == "jamba":
        attention = _period(cfg, "attn_layer", layers, 8, where)
        experts = _period(cfg, "expert_layer", layers, 2, where) if ffn == "E" else []
        return "".join(
            ("*" if i in attention else "M") + ("E" if i in experts else "-") for i in range(layers)
        )
    if isinstance(kinds, list):
        unknown = [k for k in kinds if k not in ("mamba", "attention")]
        if unknown:
            raise SpecError("layer_types", unknown[0], "mamba or attention", where=where)
        if len(kinds) != layers:
            raise SpecError(
                "layer_types", f"{len(kinds)} entries", f"one per layer: {layers}", where=where
            )
        mixers = ["*" if k == "attention" else "M" for k in kinds]
    elif isinstance(indices, list):
        bad = [i for i in indices if not isinstance(i, int) or not 0 <= i < layers]
        if bad:
            raise SpecError(
                "attn_layer_indices", bad[0], f"layer indices from 0 to {layers - 1}", where=where
            )
        mixers = ["*" if i in indices else "M" for i in range(layers)]
    else:
        mixers = ["M"] * layers
    return "".join(m + ffn for m in mixers)


NON_DECODER_TYPES = frozenset(
    {
        "t5", "mt5", "umt5", "longt5", "switch_transformers", "bart", "mbart", "pegasus",
        "marian", "whisper", "bert", "roberta", "xlm-roberta", "deberta", "deberta-v2",
        "electra", "albert", "distilbert", "modernbert",
    }
)  # fmt: skip
"""Encoder-decoder and encoder-only model types: the step model's layers are a decoder's
(causal attention over one sequence, one output layer), so these are refused by name rather
than read as a decoder with missing keys."""


def model_from_hf_config(cfg: dict[str, Any], name: str) -> ModelSpec:
    """Map a HuggingFace transformers ``config.json`` onto a ModelSpec.

    Understands Llama-style dense configs (Llama, Mistral, Qwen, Gemma, Phi-3, OLMo, ...),
    GPT-2, GPT-NeoX, GPT-J, OPT, BLOOM, Falcon and MPT, Mixtral (``num_local_experts``),
    Qwen-MoE (``num_experts``, ``decoder_sparse_step``, ``mlp_only_layers``), DeepSeek-V2/V3
    (MLA ranks, ``n_routed_experts``, group-limited routing ``n_group`` / ``topk_group``),
    ERNIE 4.5 MoE (``moe_num_experts``, ``moe_k``, ``moe_layer_start_index``,
    ``moe_layer_interval``, ``moe_num_shared_experts``), Hunyuan
    (``moe_topk``, ``num_shared_expert``), Ling 2.0 (``num_shared_experts``) and multimodal
    configs' ``text_config``. The MLP has three matrices for the gated model types
    (:data:`GATED_MLP_TYPES`) and two for the others; an unknown type is read by its
    activation. Llama 4 (``interleave_moe_layer_step``, the dense width
    ``intermediate_size_mlp``, a shared expert per MoE layer), DBRX (``ffn_config`` and
    ``attn_config`` sub-tables), gpt-oss (``experts_per_token``), Arctic (the dense residual
    MLP of ``parallel_attn_mlp_res``, read as a shared expert) and MiniMax (a per-layer
    ``moe_layer_freq`` list) MoE keys too. Mamba-2 hybrids: ``nemotron_h`` block patterns, and
    Granite 4.0-H and Bamba layers of a mixer and an FFN (``MIXER_FFN_HYBRID_TYPES``); Jamba's
    the same with Mamba-1 mixers.
    """
    where = f"{name}"
    if not isinstance(cfg, dict):
        raise SpecError("config.json", type(cfg).__name__, "a JSON object", where=where)
    cfg = _nested_blocks(_text_config(cfg))
    attn_config = cfg.get("attn_config")
    mpt_attn: dict[str, Any] = attn_config if isinstance(attn_config, dict) else {}

    def num(*names: str, default: int | None = None) -> int:
        return _hf_int(cfg, *names, default=default, where=where)

    model_type = str(cfg.get("model_type") or "")
    if model_type in NON_TRANSFORMER_TYPES:
        raise SpecError(
            "model_type",
            model_type,
            "a transformer whose every layer is attention and an MLP or MoE, or a Mamba hybrid "
            "(nemotron_h, granitemoehybrid, bamba, jamba; other state-space, recurrent and "
            "linear-attention layers are not modelled)",
            where=where,
        )
    kinds = cfg.get("layer_types")
    known = ATTENTION_LAYER_TYPES | (
        {"linear_attention"} if model_type in GATED_DELTANET_TYPES else set()
    )
    if isinstance(kinds, list) and model_type not in MIXER_FFN_HYBRID_TYPES:
        other = sorted({str(k) for k in kinds} - known)
        if other:
            raise SpecError(
                "layer_types",
                other[0],
                f"attention layers ({', '.join(sorted(ATTENTION_LAYER_TYPES))}): linear-attention "
                "and recurrent layers are not modelled",
                where=where,
            )
    if model_type in NON_DECODER_TYPES or cfg.get("is_encoder_decoder") is True:
        raise SpecError(
            "model_type",
            model_type or "encoder-decoder",
            "a decoder-only transformer (encoder-decoder and encoder-only models are not modelled)",
            where=where,
        )
    hidden = num("hidden_size", "n_embd", "d_model")
    heads = num("num_attention_heads", "n_head", "n_heads")
    paired = model_type in MIXER_FFN_HYBRID_TYPES
    hybrid = model_type == "nemotron_h" or paired
    if (
        model_type == "nemotron_h"
        and cfg.get("num_hidden_layers") is None
        and isinstance(cfg.get("layers_block_type"), list)
    ):
        layers = len(cfg["layers_block_type"])
    else:
        layers = num("num_hidden_layers", "n_layer", "n_layers")
    if not 0 < layers <= MAX_MODEL_LAYERS:
        # Checked before the per-layer patterns are built from it.
        raise SpecError(
            "num_hidden_layers", layers, f"between 1 and {MAX_MODEL_LAYERS}", where=where
        )
    vocab = num("vocab_size")
    act = str(_hf_get(cfg, "mlp_hidden_act", "hidden_act", "activation_function", default="silu"))
    if paired:
        ffn_kind = "E" if num("num_local_experts", "num_experts", default=0) > 1 else "-"
        pattern = _mixer_ffn_pattern(cfg, layers, ffn_kind, where)
        layers = len(pattern)
    else:
        pattern = _hybrid_pattern(cfg, layers, where) if hybrid else ""
    named = canonical_activation(act)
    if hybrid:
        activation: str | None = named
    elif model_type in GATED_MLP_TYPES:
        activation = "swiglu"
    elif model_type in UNGATED_MLP_TYPES:
        activation = "relu" if named == "relu" else "gelu"
    else:
        activation = named
    if activation is None:
        valid = ", ".join(ACTIVATION_SPELLINGS)
        raise SpecError("hidden_act", act, f"one of {valid}", where=where)
    if cfg.get("expansion_ratio") is not None:  # MPT
        ratio = cfg["expansion_ratio"]
        if not (isinstance(ratio, int | float) and not isinstance(ratio, bool) and ratio > 0):
            raise SpecError("expansion_ratio", ratio, "a positive number", where=where)
        ffn_hidden = int(ratio * hidden)
    elif model_type == "granitemoehybrid" and "E" not in pattern:
        # Granite 4.0-H without experts: the shared MLP is the layer's FFN.
        ffn_hidden = num("shared_intermediate_size")
    else:
        ffn_hidden = num(
            "intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size", default=4 * hidden
        )
    if model_type == "falcon":
        if cfg.get("new_decoder_architecture"):
            kv_heads = num("num_kv_heads", "n_head_kv", default=heads)
        else:
            kv_heads = 1 if cfg.get("multi_query", True) else heads
    else:
        kv_heads = num(
            "num_key_value_heads", "num_kv_heads", "n_head_kv", "kv_n_heads", default=heads
        )
    routed = num(
        "n_routed_experts", "num_local_experts", "num_experts", "moe_num_experts", default=0
    )
    if paired and "E" not in pattern:
        routed = 0  # Jamba with num_experts 1: an MLP in every layer
    expert_ffn = num("moe_intermediate_size", default=0) or (ffn_hidden if routed else 0)
    shared = num(
        "n_shared_experts",
        "moe_num_shared_experts",
        "num_shared_experts",
        "num_shared_expert",
        default=0,
    )
    if routed and cfg.get("intermediate_size_mlp") is not None:
        # Llama 4: ``intermediate_size`` is the expert's width, ``intermediate_size_mlp`` the
        # dense layers'; every MoE layer adds one shared expert of the expert's width
        # (transformers ``Llama4TextMoe.shared_expert``).
        expert_ffn = ffn_hidden
        ffn_hidden = num("intermediate_size_mlp")
        shared = shared or 1
    if routed and cfg.get("parallel_attn_mlp_res") is True and not shared:
        # Arctic: a dense MLP of ``intermediate_size`` beside the MoE in every layer, summed
        # into the residual; the same weights and FLOPs as a shared expert of that width.
        shared = max(1, ffn_hidden // expert_ffn) if expert_ffn else 1
    shared_width = num(
        "shared_expert_intermediate_size",
        "moe_shared_expert_intermediate_size",
        "shared_intermediate_size",
        default=0,
    )
    shared_expert_ffn = 0
    stated_apart = not shared or shared * expert_ffn != shared_width
    if routed and shared_width and expert_ffn and stated_apart:
        if shared_width % expert_ffn == 0:
            # One shared expert of a multiple of the routed experts' width (Nemotron 3: one of
            # twice it) counts as that many experts of the routed width: the same weights and
            # FLOPs.
            shared = shared_width // expert_ffn
        else:
            # Granite 4.0-H: one shared MLP of its own width beside the routed experts.
            shared, shared_expert_ffn = 1, shared_width
    first_dense = num("first_k_dense_replace", "moe_layer_start_index", default=0)
    dense_layers = cfg.get("mlp_only_layers")
    if routed and isinstance(dense_layers, list) and dense_layers:
        if sorted(dense_layers) != list(range(len(dense_layers))):
            raise SpecError(
                "mlp_only_layers", dense_layers, "the first layers (0, 1, ...) only", where=where
            )
        first_dense = max(first_dense, len(dense_layers))
    flags = cfg.get("moe_layer_freq")
    if routed and isinstance(flags, list):
        first_dense = max(first_dense, _leading_dense_layers(flags, layers, where))
    if model_type in LEARNED_POSITION_TYPES:
        position = "learned"
    elif model_type == "bloom" or mpt_attn.get("alibi") or cfg.get("alibi"):
        position = "alibi"
    else:
        position = "rope"
    head_dim = num("head_dim", default=0)
    if not head_dim and num("kv_lora_rank", default=0):
        # Multi-head latent attention: the value (and no-RoPE query/key) head width, as the
        # catalog's DeepSeek shapes state it.
        head_dim = num("v_head_dim", "qk_nope_head_dim", default=0)
    tied = cfg.get("tie_word_embeddings")
    if tied is None:
        tied = model_type in TIED_BY_DEFAULT_TYPES
    window, full_layers = _sliding_window(cfg, layers, num("sliding_window", default=0))
    return ModelSpec(
        id=Path(name).stem,
        name=str(_hf_get(cfg, "_name_or_path", default=name)),
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        ffn_hidden=ffn_hidden,
        vocab=vocab,
        activation=activation,
        source=f"HuggingFace config {name}",
        head_dim=head_dim,
        tied_embeddings=bool(tied),
        position_embedding=position,
        max_seq_len=num("max_position_embeddings", "n_positions", "max_seq_len", default=2048),
        # Nemotron-H writes its RMSNorm's epsilon as ``layer_norm_epsilon`` (Megatron-Core's name).
        norm="rmsnorm" if "rms_norm_eps" in cfg or hybrid else "layernorm",
        linear_bias=model_type in BIASED_LINEAR_TYPES,
        routed_experts=routed,
        shared_experts=shared,
        top_k=num(
            "num_experts_per_tok", "experts_per_token", "moe_topk", "moe_top_k", "moe_k", default=0
        ),
        expert_ffn_hidden=expert_ffn,
        shared_expert_ffn_hidden=shared_expert_ffn,
        first_dense_layers=first_dense,
        moe_layer_freq=_moe_layer_freq(cfg, num) if routed else 1,
        moe_latent=num("moe_latent_size", default=0) if routed else 0,
        router_groups=num("n_group", default=0) if routed else 0,
        router_group_topk=num("topk_group", default=0) if routed else 0,
        q_lora_rank=num("q_lora_rank", default=0),
        kv_lora_rank=num("kv_lora_rank", default=0),
        qk_nope_head_dim=num("qk_nope_head_dim", default=0),
        qk_rope_head_dim=num("qk_rope_head_dim", default=0),
        v_head_dim=num("v_head_dim", default=0),
        mtp_layers=num("num_nextn_predict_layers", default=0),
        sliding_window=window,
        full_attention_layers=full_layers,
        **(_mamba_fields(cfg, num, pattern) if hybrid else {}),
        **(_gdn_fields(cfg, num, layers, where) if model_type in GATED_DELTANET_TYPES else {}),
    )


def _gdn_fields(cfg: dict[str, Any], num: Any, layers: int, where: str) -> dict[str, Any]:
    """The Gated DeltaNet fields of a Qwen3-Next or Qwen3.5 config: the mixer pattern, the
    linear-attention heads and widths, the convolution, and the gated attention (transformers
    ``Qwen3NextAttention`` always gates; Qwen3.5 configs state ``attn_output_gate``)."""
    return {
        "mixer_pattern": _mixer_pattern(cfg, layers, where),
        "attention_output_gate": bool(cfg.get("attn_output_gate", True)),
        "linear_key_heads": num("linear_num_key_heads"),
        "linear_value_heads": num("linear_num_value_heads"),
        "linear_key_head_dim": num("linear_key_head_dim"),
        "linear_value_head_dim": num("linear_value_head_dim"),
        "linear_conv_kernel": num("linear_conv_kernel_dim", default=4),
    }


def _mamba_fields(cfg: dict[str, Any], num: Any, pattern: str) -> dict[str, Any]:
    """The Mamba-2 fields of a ``nemotron_h`` config (``mamba_num_heads``, ``mamba_head_dim``,
    ``ssm_state_size``, ``n_groups``, ``conv_kernel``, ``chunk_size``) or of a Granite 4.0-H
    or Bamba config (``mamba_n_heads``, ``mamba_d_head``, ``mamba_d_state``,
    ``mamba_n_groups``, ``mamba_d_conv``, ``mamba_chunk_size``), or the Mamba-1 fields of a
    Jamba config, with its layer pattern."""
    if "M" not in pattern:
        return {"layer_pattern": pattern}
    if cfg.get("model_type") == "jamba":
        # Mamba-1: one state per channel of the inner width, dt from a low-rank projection
        # (rank "auto": ceil(hidden / 16), Gu & Dao 2023's default and transformers').
        hidden = num("hidden_size")
        rank = cfg.get("mamba_dt_rank", "auto")
        return {
            "layer_pattern": pattern,
            "mamba_version": 1,
            "mamba_heads": num("mamba_expand", default=2) * hidden,
            "mamba_head_dim": 1,
            "mamba_state": num("mamba_d_state", default=16),
            "mamba_groups": 1,
            "mamba_conv_kernel": num("mamba_d_conv", default=4),
            "mamba_dt_rank": -(-hidden // 16) if rank == "auto" else num("mamba_dt_rank"),
        }
    heads = num("mamba_num_heads", "mamba_n_heads")
    head_dim = cfg.get("mamba_head_dim", cfg.get("mamba_d_head"))
    paired = cfg.get("model_type") in MIXER_FFN_HYBRID_TYPES
    if head_dim == "auto" or (head_dim is None and paired):
        # Granite 4.0-H / Bamba ("auto", their configs' default): the inner width
        # mamba_expand x hidden split over the heads. A nemotron_h config must state it.
        head_dim = num("mamba_expand", default=2) * num("hidden_size") // max(heads, 1)
    else:
        head_dim = num("mamba_head_dim", "mamba_d_head")
    return {
        "layer_pattern": pattern,
        "mamba_heads": heads,
        "mamba_head_dim": head_dim,
        "mamba_state": num("ssm_state_size", "mamba_d_state"),
        "mamba_groups": num("n_groups", "mamba_n_groups", "mamba_num_groups", default=1),
        "mamba_conv_kernel": num("conv_kernel", "mamba_d_conv", default=4),
        "mamba_chunk": num("chunk_size", "mamba_chunk_size", default=128),
    }


def _leading_dense_layers(flags: list[Any], layers: int, where: str) -> int:
    """A per-layer ``moe_layer_freq`` list (MiniMax: 0 dense, 1 MoE): the number of dense layers
    before the first MoE one, where every later layer is MoE."""
    if len(flags) != layers or any(f not in (0, 1) for f in flags):
        raise SpecError(
            "moe_layer_freq", flags, f"{layers} entries of 0 (dense) or 1 (MoE)", where=where
        )
    first = flags.index(1) if 1 in flags else layers
    if any(f != 1 for f in flags[first:]):
        raise SpecError(
            "moe_layer_freq",
            flags,
            "dense layers (0) at the front only, every later layer MoE (1)",
            where=where,
        )
    return first


def _moe_layer_freq(cfg: dict[str, Any], num: Any) -> int:
    """Every how many layers an MoE layer comes: Qwen-MoE ``decoder_sparse_step``, Llama 4
    ``interleave_moe_layer_step``, Arctic ``moe_layer_frequency``, DeepSeek ``moe_layer_freq``
    (an integer there)."""
    value = cfg.get("moe_layer_freq")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    step: int = num(
        "decoder_sparse_step",
        "interleave_moe_layer_step",
        "moe_layer_interval",
        "moe_layer_frequency",
        default=1,
    )
    return max(step, 1)


HF_INLINE_MARKERS = frozenset(
    {"model_type", "num_hidden_layers", "hidden_size", "num_attention_heads", "n_layer", "n_embd"}
)
"""Keys that mark an inline model as written in ``config.json``'s words, not the catalog's."""

HF_COSTLESS_KEYS = frozenset(
    {
        "max_position_embeddings",
        "rope_theta",
        "rope_scaling",
        "torch_dtype",
        "dtype",
        "initializer_range",
        "use_cache",
        "bos_token_id",
        "eos_token_id",
        "pad_token_id",
        "transformers_version",
        "architectures",
        "_name_or_path",
    }
)
"""``config.json`` keys that do not change what a training step costs; an inline model may
carry them (pasted from the file) and they are not refused as unread."""


class _ReadKeys(dict[str, Any]):
    """A config that records which keys the parser looked at, so an inline model can refuse a
    key nothing reads (a misspelling, or a key that does not apply to this model)."""

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.read: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.read.add(str(key))
        return super().__contains__(key)


def _inline(text: str) -> ModelSpec:
    """``custom:layers=32,hidden=4096,heads=32,kv_heads=8,ffn_hidden=14336,vocab=128256`` (the
    catalog's field names), or the same pairs in ``config.json``'s words
    (``num_hidden_layers=32,hidden_size=4096,...``), read as that file would be."""
    pairs: dict[str, Any] = {}
    for item in text.removeprefix(INLINE_PREFIX).split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep:
            raise SpecError("model", item, "key=value pairs, e.g. custom:layers=32,hidden=4096")
        pairs[key.strip()] = _parse_value(value.strip())
    fields = {f.name for f in dataclasses.fields(ModelSpec)}
    if not set(pairs) <= fields and set(pairs) & HF_INLINE_MARKERS:
        return _inline_hf_config(pairs)
    data: dict[str, Any] = {
        "id": "custom",
        "name": "custom model",
        "source": "command line",
        "activation": "swiglu",
    }
    data.update(pairs)
    data.setdefault("kv_heads", data.get("heads"))
    return build(ModelSpec, data, where="--model")


def _inline_hf_config(pairs: dict[str, Any]) -> ModelSpec:
    """An inline model in ``config.json``'s keys: parsed as that file; a key the parser never
    reads is refused."""
    cfg = _ReadKeys(pairs)
    spec = model_from_hf_config(cfg, "--model")
    unread = [k for k in pairs if k not in cfg.read and k not in HF_COSTLESS_KEYS]
    if unread:
        raise SpecError(
            unread[0],
            pairs[unread[0]],
            "a config.json key this model's parse reads (num_hidden_layers, hidden_size, "
            "num_attention_heads, num_key_value_heads, intermediate_size, vocab_size, ...)",
            where="--model",
        )
    return dataclasses.replace(spec, id="custom", name="custom model", source="command line")


def _parse_value(value: str) -> Any:
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            continue
    return value


def model_from_args(spec: str) -> ModelSpec:
    """A model from a catalog id, a ``config.json``, a TOML file or inline ``key=value`` pairs
    (``custom:`` optional; the catalog's field names or ``config.json``'s keys)."""
    path = Path(spec)
    if spec.startswith(INLINE_PREFIX) or ("=" in spec and path.suffix not in (".toml", ".json")):
        return _inline(spec)
    if path.suffix == ".toml":
        return catalog.load_entry(path, ModelSpec)
    if path.suffix == ".json":
        try:
            cfg = json.loads(path.read_text())
        except OSError as exc:
            raise ScalewallError(f"{path}: cannot read: {exc.strerror}") from None
        except json.JSONDecodeError as exc:
            raise ScalewallError(f"{path}: line {exc.lineno}: not valid JSON: {exc.msg}") from None
        except UnicodeDecodeError:
            raise ScalewallError(f"{path}: not valid JSON: not UTF-8 text") from None
        return model_from_hf_config(cfg, str(path))
    return catalog.model(spec)
