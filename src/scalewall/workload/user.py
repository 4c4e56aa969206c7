"""User-defined models: a HuggingFace ``config.json``, a TOML file, or ``key=value`` pairs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scalewall import catalog
from scalewall.catalog.loader import build
from scalewall.catalog.schema import ModelSpec
from scalewall.errors import ScalewallError, SpecError

INLINE_PREFIX = "custom:"

_ACTIVATIONS = {
    "silu": "swiglu",
    "swiglu": "swiglu",
    "gelu": "gelu",
    "gelu_new": "gelu",
    "gelu_pytorch_tanh": "gelu",
    "relu": "relu",
}


def _hf_get(cfg: dict[str, Any], *names: str, default: Any = None) -> Any:
    for name in names:
        if cfg.get(name) is not None:
            return cfg[name]
    return default


def _hf_int(cfg: dict[str, Any], *names: str, default: int | None = None, where: str) -> int:
    """A whole-number field (the first of ``names`` present); a wrong type names the field."""
    for name in names:
        value = cfg.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
            raise SpecError(name, value, "a whole number", where=where)
        return int(value)
    if default is None:
        raise SpecError(
            names[0],
            None,
            "required: config.json needs hidden_size, num_attention_heads, "
            "num_hidden_layers and vocab_size",
            where=where,
        )
    return default


def model_from_hf_config(cfg: dict[str, Any], name: str) -> ModelSpec:
    """Map a HuggingFace transformers ``config.json`` onto a ModelSpec.

    Understands Llama/Mistral/Qwen-style dense configs, Mixtral (``num_local_experts``),
    Qwen-MoE (``num_experts``, ``decoder_sparse_step``), DeepSeek-V2/V3 (MLA ranks,
    ``n_routed_experts``), Llama 4 (``interleave_moe_layer_step``) and gpt-oss
    (``experts_per_token``).
    """
    where = f"{name}"
    if not isinstance(cfg, dict):
        raise SpecError("config.json", type(cfg).__name__, "a JSON object", where=where)

    def num(*names: str, default: int | None = None) -> int:
        return _hf_int(cfg, *names, default=default, where=where)

    hidden = num("hidden_size", "n_embd", "d_model")
    heads = num("num_attention_heads", "n_head")
    layers = num("num_hidden_layers", "n_layer")
    vocab = num("vocab_size")
    act = str(_hf_get(cfg, "hidden_act", "activation_function", default="silu"))
    activation = _ACTIVATIONS.get(act)
    if activation is None:
        raise SpecError("hidden_act", act, f"one of {', '.join(_ACTIVATIONS)}", where=where)
    routed = num("n_routed_experts", "num_local_experts", "num_experts", default=0)
    expert_ffn = num("moe_intermediate_size", default=0) or (
        num("intermediate_size", default=4 * hidden) if routed else 0
    )
    shared = num("n_shared_experts", default=0)
    shared_width = num("shared_expert_intermediate_size", default=0)
    if not shared and shared_width and expert_ffn:
        shared = shared_width // expert_ffn
    return ModelSpec(
        id=Path(name).stem,
        name=str(_hf_get(cfg, "_name_or_path", default=name)),
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=num("num_key_value_heads", default=heads),
        ffn_hidden=num("intermediate_size", "n_inner", default=4 * hidden),
        vocab=vocab,
        activation=activation,
        source=f"HuggingFace config {name}",
        head_dim=num("head_dim", default=0),
        tied_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        max_seq_len=num("max_position_embeddings", default=2048),
        norm="rmsnorm" if "rms_norm_eps" in cfg else "layernorm",
        routed_experts=routed,
        shared_experts=shared,
        top_k=num("num_experts_per_tok", "experts_per_token", "moe_topk", default=0),
        expert_ffn_hidden=expert_ffn,
        first_dense_layers=num("first_k_dense_replace", default=0),
        moe_layer_freq=_moe_layer_freq(cfg, num) if routed else 1,
        q_lora_rank=num("q_lora_rank", default=0),
        kv_lora_rank=num("kv_lora_rank", default=0),
        qk_nope_head_dim=num("qk_nope_head_dim", default=0),
        qk_rope_head_dim=num("qk_rope_head_dim", default=0),
        v_head_dim=num("v_head_dim", default=0),
        mtp_layers=num("num_nextn_predict_layers", default=0),
        sliding_window=num("sliding_window", default=0),
    )


def _moe_layer_freq(cfg: dict[str, Any], num: Any) -> int:
    """Every how many layers an MoE layer comes: Qwen-MoE ``decoder_sparse_step``, Llama 4
    ``interleave_moe_layer_step``, DeepSeek ``moe_layer_freq`` (an integer there)."""
    value = cfg.get("moe_layer_freq")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    step: int = num("decoder_sparse_step", "interleave_moe_layer_step", default=1)
    return max(step, 1)


def _inline(text: str) -> ModelSpec:
    """``custom:layers=32,hidden=4096,heads=32,kv_heads=8,ffn_hidden=14336,vocab=128256``."""
    data: dict[str, Any] = {
        "id": "custom",
        "name": "custom model",
        "source": "command line",
        "activation": "swiglu",
    }
    for item in text[len(INLINE_PREFIX) :].split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep:
            raise SpecError("model", item, "key=value pairs, e.g. custom:layers=32,hidden=4096")
        key = key.strip()
        data[key] = _parse_value(value.strip())
    data.setdefault("kv_heads", data.get("heads"))
    return build(ModelSpec, data, where="--model")


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
    """A model from a catalog id, a ``config.json``, a TOML file or ``custom:key=value,...``."""
    if spec.startswith(INLINE_PREFIX):
        return _inline(spec)
    path = Path(spec)
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
