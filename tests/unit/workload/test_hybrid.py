"""Hybrid Mamba models (``nemotron_h`` configs, Jamba's Mamba-1 hybrids): the layer pattern,
parameter counts against the published totals, and the errors for what is not modelled."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from scalewall.catalog.schema import ModelSpec
from scalewall.errors import SpecError
from scalewall.workload import counts
from scalewall.workload.user import model_from_hf_config

NANO_PATTERN = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"
CONFIGS: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).parents[2] / "data" / "hybrid_configs.json").read_text()
)
"""Each model's own config.json on the HuggingFace Hub (the fields that shape the model)."""
NANO = CONFIGS["nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"]
H8B = CONFIGS["nvidia/Nemotron-H-8B-Base-8K"]


def test_nemotron_3_nano_counts_as_published() -> None:
    """The model card: 31.6B total, 3.2B active, 3.6B active with the embeddings."""
    model = model_from_hf_config(NANO, "nano.json")
    assert model.layer_pattern == NANO_PATTERN
    assert model.activation == "relu"  # squared ReLU: two matrices, not gated
    assert model.shared_experts == 2  # one shared expert of twice the routed width
    assert counts.param_count(model) == pytest.approx(31.6e9, rel=0.005)
    active = counts.active_param_count(model)
    assert active == pytest.approx(3.6e9, rel=0.01)
    assert active - model.vocab * model.hidden == pytest.approx(3.2e9, rel=0.02)
    assert counts.kind_counts(model) == {counts.MAMBA: 23, counts.ATTENTION: 6, counts.MOE_FFN: 23}


def test_nemotron_h_8b_counts_8b() -> None:
    """Nemotron-H 8B (arXiv 2504.03624): 24 Mamba-2, 4 attention and 24 MLP layers."""
    model = model_from_hf_config(H8B, "h8b.json")
    assert counts.kind_counts(model) == {counts.MAMBA: 24, counts.ATTENTION: 4, counts.MLP: 24}
    assert counts.param_count(model) == pytest.approx(8.1e9, rel=0.01)
    assert not model.is_moe
    # Attention products in the 4 attention layers only.
    dense = counts.attention_flop_per_token(model, 8192, causal_half=False)
    assert dense == pytest.approx(2.0 * 8192 * 32 * 256 * 4)


def test_block_type_list_reads_as_the_pattern() -> None:
    blocks = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}
    listed = {k: v for k, v in NANO.items() if k != "hybrid_override_pattern"}
    listed["layers_block_type"] = [blocks[c] for c in NANO_PATTERN]
    assert model_from_hf_config(listed, "x.json").layer_pattern == NANO_PATTERN


def test_a_nemotron_h_config_must_state_its_mamba_head_width() -> None:
    """Only Granite 4.0-H and Bamba configs default their head width ("auto")."""
    missing = {k: v for k, v in NANO.items() if k != "mamba_head_dim"}
    with pytest.raises(SpecError, match="mamba_head_dim"):
        model_from_hf_config(missing, "x.json")


def test_a_pattern_of_the_wrong_length_is_refused() -> None:
    with pytest.raises(SpecError, match="hybrid_override_pattern"):
        model_from_hf_config({**NANO, "num_hidden_layers": 50}, "x.json")


MAMBA2_SPEC: dict[str, Any] = dict(
    id="h", name="h", layers=4, hidden=256, heads=4, kv_heads=4, ffn_hidden=512,
    vocab=1000, activation="relu", source="test", layer_pattern="M*-M",
    mamba_heads=8, mamba_head_dim=64, mamba_state=16, mamba_groups=2,
)  # fmt: skip
MAMBA1_SPEC: dict[str, Any] = MAMBA2_SPEC | dict(
    layer_pattern="M-*-", mamba_version=1, mamba_heads=512, mamba_head_dim=1, mamba_groups=1,
    mamba_dt_rank=16,
)  # fmt: skip


@pytest.mark.parametrize(
    ("base", "changes", "field"),
    [
        (MAMBA2_SPEC, {"layer_pattern": "MX*-"}, "layer_pattern"),
        (MAMBA2_SPEC, {"layer_pattern": "M*-"}, "layer_pattern"),
        (MAMBA2_SPEC, {"layer_pattern": "M*-E"}, "routed_experts"),
        (MAMBA2_SPEC, {"mamba_heads": 0}, "mamba_heads"),
        (MAMBA2_SPEC, {"mamba_groups": 3}, "mamba_groups"),
        (MAMBA2_SPEC, {"first_dense_layers": 1}, "first_dense_layers"),
        (MAMBA1_SPEC, {"mamba_version": 3}, "mamba_version"),
        (MAMBA1_SPEC, {"mamba_head_dim": 64}, "mamba_head_dim"),
        (MAMBA1_SPEC, {"mamba_dt_rank": 0}, "mamba_dt_rank"),
    ],
)
def test_model_spec_checks_the_pattern(
    base: dict[str, Any], changes: dict[str, Any], field: str
) -> None:
    ModelSpec(**base)
    with pytest.raises(SpecError, match=field):
        ModelSpec(**{**base, **changes})


def test_nemotron_3_super_latent_experts_count_as_published() -> None:
    """NVIDIA's figures for Nemotron 3 Super: 120B total, 12B active. LatentMoE's experts are
    1,024 wide (not 4,096), with a down and an up projection per MoE layer."""
    model = model_from_hf_config(CONFIGS["nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16"], "s")
    assert model.moe_latent == 1024
    assert model.mtp_layers == 1
    assert counts.param_count(model) == pytest.approx(120e9, rel=0.01)
    active = counts.active_param_count(model) - model.vocab * model.hidden
    assert active == pytest.approx(12e9, rel=0.03)
    # Without the latent width the experts would be four times as large.
    wide = counts.routed_expert_params(dataclasses.replace(model, moe_latent=0))
    assert wide == pytest.approx(4.0 * counts.routed_expert_params(model))


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"model_type": "zamba2"}, "model_type"),
        (
            {"model_type": "llama", "layer_types": ["linear_attention", "full_attention"] * 2},
            "layer_types",
        ),
    ],
)
def test_other_linear_attention_layers_are_refused_not_read_as_attention(
    extra: dict[str, Any], field: str
) -> None:
    """Linear-attention or recurrent layers outside the Gated DeltaNet model types would
    otherwise be read as attention in every layer: refused by name."""
    base = {"hidden_size": 2048, "num_attention_heads": 16, "num_hidden_layers": 4}
    with pytest.raises(SpecError, match=field):
        model_from_hf_config({**base, "vocab_size": 1000, **extra}, "x.json")


def test_qwen3_next_counts_as_published() -> None:
    """The model card: 80B in total, 79B without the embeddings; three Gated DeltaNet layers
    to one gated-attention layer, every layer MoE."""
    cfg = CONFIGS["Qwen/Qwen3-Next-80B-A3B-Instruct"]
    model = model_from_hf_config(cfg, "next.json")
    assert model.mixer_pattern == "LLLA" * 12
    assert model.attention_output_gate
    assert counts.kind_counts(model) == {counts.MOE: 12, counts.LINEAR_MOE: 36}
    assert counts.param_count(model) == pytest.approx(80e9, rel=0.01)
    embeddings = 2 * model.vocab * model.hidden
    assert counts.param_count(model) - embeddings == pytest.approx(79e9, rel=0.01)
    # The same layout stated as layer_types reads the same.
    listed = dict(cfg, layer_types=["linear_attention"] * 3 + ["full_attention"])
    listed["layer_types"] = listed["layer_types"] * 12
    assert model_from_hf_config(listed, "next.json").mixer_pattern == model.mixer_pattern
    # Attention products only in the 12 attention layers.
    assert counts.attention_layers(model) == 12
    assert counts.gdn_flop_per_token(model, 4096) > 0.0


def test_mixer_pattern_is_checked() -> None:
    base: dict[str, Any] = dict(
        id="g", name="g", layers=4, hidden=256, heads=4, kv_heads=4, ffn_hidden=512,
        vocab=1000, activation="swiglu", source="test", mixer_pattern="LLLA",
        linear_key_heads=2, linear_value_heads=4, linear_key_head_dim=32,
        linear_value_head_dim=32,
    )  # fmt: skip
    ModelSpec(**base)
    for changes, field in (
        ({"mixer_pattern": "LLXA"}, "mixer_pattern"),
        ({"mixer_pattern": "LLA"}, "mixer_pattern"),
        ({"linear_key_heads": 3}, "linear_key_heads"),
        ({"linear_value_heads": 0}, "linear_value_heads"),
    ):
        with pytest.raises(SpecError, match=field):
            ModelSpec(**{**base, **changes})


def test_a_runs_file_states_a_hybrid_shape_inline(tmp_path: Path) -> None:
    """The runs format's inline shape takes the hybrid fields (layer pattern, Mamba-2, LatentMoE
    width) and reads to the same parameters as the model's config.json."""
    from scalewall.validation.runs import read_runs_file

    shape = {
        "layers": 52, "hidden": 2688, "heads": 32, "kv_heads": 2, "head_dim": 128,
        "ffn_hidden": 1856, "vocab": 131072, "activation": "relu",
        "layer_pattern": NANO_PATTERN, "mamba_heads": 64, "mamba_head_dim": 64,
        "mamba_state": 128, "mamba_groups": 8,
        "moe": {"routed_experts": 128, "shared_experts": 2, "top_k": 6,
                "expert_ffn_hidden": 1856, "first_dense_layers": 0},
    }  # fmt: skip
    case = {
        "id": "inline_nano",
        "source": "test",
        "model": shape,
        "training": {"seq_len": 4096, "global_batch": 512, "micro_batch": 4, "precision": "bf16"},
        "plan": {"tp": 1, "pp": 1, "ep": 8},
        "hardware": {"gpu": "h100-sxm-80gb", "gpus": 8},
        "published": {"step_time_s": 15.6},
    }
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"format": "scalewall-runs/1", "cases": [case]}))
    read = read_runs_file(path)
    assert not read.errors
    inline = read.cases[0].model
    assert inline.layer_pattern == NANO_PATTERN
    assert counts.param_count(inline) == pytest.approx(
        counts.param_count(model_from_hf_config(NANO, "nano.json")), rel=1e-9
    )


JAMBA = CONFIGS["ai21labs/Jamba-v0.1"]


def test_jamba_counts_as_published() -> None:
    """Lieber et al. 2024 (Jamba, arXiv 2403.19887), Sec. 3: 12B active of 52B total; one
    attention layer in eight (offset 4), experts in every other layer (offset 1), Mamba-1
    mixers of state 16 and step-size rank 256."""
    model = model_from_hf_config(JAMBA, "jamba.json")
    assert (model.mamba_version, model.mamba_heads, model.mamba_head_dim) == (1, 8192, 1)
    assert (model.mamba_state, model.mamba_dt_rank) == (16, 256)
    mixers, ffns = model.layer_pattern[0::2], model.layer_pattern[1::2]
    assert mixers == "".join("*" if i % 8 == 4 else "M" for i in range(32))
    assert ffns == "-E" * 16
    assert counts.param_count(model) == pytest.approx(52e9, rel=0.01)
    assert counts.active_param_count(model) == pytest.approx(12e9, rel=0.02)
    # "auto" is ceil(hidden / 16).
    auto = model_from_hf_config({**JAMBA, "mamba_dt_rank": "auto"}, "jamba.json")
    assert auto.mamba_dt_rank == 256
    for field, value in (("attn_layer_period", 0), ("attn_layer_offset", 8)):
        with pytest.raises(SpecError, match=field):
            model_from_hf_config({**JAMBA, field: value}, "jamba.json")


def test_mamba1_scan_is_linear_in_the_sequence() -> None:
    """A Mamba-1 mixer's scan costs the same per token at any length (8 FLOPs per channel and
    state), unlike attention's products."""
    model = model_from_hf_config(JAMBA, "jamba.json")
    assert counts.ssd_flop_per_token(model, 4096) == counts.ssd_flop_per_token(model, 65536)
    assert counts.ssd_flop_per_token(model, 4096) == pytest.approx(8.0 * 8192 * 16)


def test_ssd_traffic_counts_the_backward_kernels() -> None:
    """The SSD kernels' bytes per token for Nemotron 3 Nano's Mamba-2 layer (64 heads of 64,
    8 groups of state 128, chunk 128) at 8K tokens, by hand from ``mamba_core_bytes``'s
    per-kernel count: the forward 3 X + 4 BC + 2 CB + 4 S, the backward (which first re-runs
    four forward kernels) 11 X + 13 BC + 6 CB + 11 S."""
    import numpy as np

    from scalewall.perf.layers import mamba_core_bytes

    model = model_from_hf_config(NANO, "nano.json")
    x = 2.0 * 64 * 64  # one inner-wide BF16 row
    bc = 2.0 * 8 * 128  # B or C
    cb = 4.0 * 8 * 128  # the FP32 C B^T row of a token, chunk 128
    s = 4.0 * 64 * 64 * 128 / 128  # FP32 states per token
    forward = 3 * x + 4 * bc + 2 * cb + 4 * s
    backward = 11 * x + 13 * bc + 6 * cb + 11 * s
    _, ssd = mamba_core_bytes(model, np.array([8192.0]))
    assert float(ssd[0]) == pytest.approx(forward + backward)
    assert backward / forward == pytest.approx(3.0, abs=0.05)


@pytest.mark.parametrize(
    "model_id", ["jamba-v0.1", "nemotron-h-8b", "granite-4.0-h-small", "qwen3-next-80b-a3b"]
)
def test_op_level_selective_recompute_covers_every_mixer(model_id: str) -> None:
    """torchtitan's op-level selective checkpointing recomputes every second matmul: Mamba-1's
    four projections, Mamba-2's and Gated DeltaNet's two are counted like attention's, and
    recomputing some costs less than the whole forward."""
    from scalewall import catalog
    from scalewall.api import estimate
    from scalewall.cluster import resolve_cluster
    from scalewall.plan.plan import ParallelPlan

    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=8)

    def recompute_s(mode: str) -> float:
        plan = ParallelPlan(
            tp=1, pp=1, dp=8, micro_batch=1, global_batch=8, seq_len=4096, recompute=mode, zero=3
        )
        est = estimate(catalog.model(model_id), cluster, plan, stack="torchtitan-fsdp2")
        return float(est.breakdown_s["recompute"])

    assert 0.0 < recompute_s("selective") < recompute_s("full")
