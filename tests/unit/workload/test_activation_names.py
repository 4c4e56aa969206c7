"""FFN activations as sources spell them: each maps to its class, unknown ones are refused."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from scalewall import catalog
from scalewall.catalog.schema import canonical_activation
from scalewall.errors import SpecError
from scalewall.validation import harness
from scalewall.validation.runs import read_runs_file
from scalewall.workload import counts
from scalewall.workload.user import model_from_args, model_from_hf_config


@pytest.mark.parametrize(
    ("spelling", "expected"),
    [
        ("SwiGLU", "swiglu"),
        ("silu", "swiglu"),
        ("GeGLU", "swiglu"),
        ("gelu_pytorch_tanh", "gelu"),
        ("GELU", "gelu"),
        ("relu2", "relu"),
        ("squared_relu", "relu"),
        ("Squared ReLU", "relu"),
        ("xielu", "gelu"),
        ("mish", None),
    ],
)
def test_spellings_map_to_the_ffn_class(spelling: str, expected: str | None) -> None:
    assert canonical_activation(spelling) == expected


def test_a_spelling_gives_the_same_model_as_the_class() -> None:
    base = catalog.model("llama3-8b")
    assert replace(base, activation="SiLU").activation == "swiglu"
    squared = replace(base, activation="squared-relu", ffn_hidden=4 * base.hidden)
    plain = replace(base, activation="gelu", ffn_hidden=4 * base.hidden)
    assert squared.activation == "relu"
    assert counts.param_count(squared) == counts.param_count(plain)


def test_an_unknown_activation_names_the_valid_ones() -> None:
    with pytest.raises(SpecError, match=r"activation=.mish.*gelu, swiglu, relu"):
        replace(catalog.model("llama3-8b"), activation="mish")


def test_nemotron_configs_relu2_is_an_ungated_relu_ffn() -> None:
    cfg = {
        "model_type": "nemotron",
        "hidden_size": 4096,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 16384,
        "vocab_size": 256000,
        "hidden_act": "relu2",
    }
    spec = model_from_hf_config(cfg, "nemotron.json")
    assert spec.activation == "relu"
    assert counts.param_count(spec) == pytest.approx(
        32 * (4 * 4096 * 4096 * 0.625 + 2 * 4096 * 16384) + 2 * 256000 * 4096, rel=0.01
    )


def test_command_line_and_runs_file_take_a_squared_relu(tmp_path: Path) -> None:
    shape = "layers=96,hidden=18432,heads=96,kv_heads=8,ffn_hidden=73728,vocab=256000"
    assert model_from_args(f"custom:{shape},activation=relu2").activation == "relu"
    case = {
        "id": "nemotron4_340b",
        "source": "test",
        "model": {
            "layers": 96,
            "hidden": 18432,
            "heads": 96,
            "kv_heads": 8,
            "ffn_hidden": 73728,
            "vocab": 256000,
            "activation": "squared-relu",
        },
        "training": {"seq_len": 4096, "global_batch": 768, "micro_batch": 1},
        "plan": {"tp": 8, "pp": 12, "vpp": 8, "stack": "megatron-core"},
        "hardware": {"gpu": "h100-sxm-80gb", "gpus": 1536},
        "published": {"step_time_s": 10.3},
    }
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"format": "scalewall-runs/1", "cases": [case]}))
    (parsed,) = read_runs_file(path).cases
    assert parsed.model.activation == "relu"
    assert parsed.model.position_embedding == "rope"
    (comparison,) = harness.compare(harness.predict_case(parsed))
    assert comparison.predicted > 0


def test_apertus_config_counts_its_eight_billion() -> None:
    """Apertus-8B (swiss-ai, 2025): an ungated xIELU MLP, 32 layers of 4,096 with a 21,504-wide
    FFN and a 131,072-token vocabulary, untied: 8.05B parameters; a gated reading would
    count 9.8B."""
    cfg = {
        "model_type": "apertus",
        "hidden_size": 4096,
        "intermediate_size": 21504,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "vocab_size": 131072,
        "hidden_act": "xielu",
        "tie_word_embeddings": False,
    }
    model = model_from_hf_config(cfg, "apertus-8b")
    assert model.activation == "gelu"
    assert counts.param_count(model) == pytest.approx(8.05e9, rel=0.01)
