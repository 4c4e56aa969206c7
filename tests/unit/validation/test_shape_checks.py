"""Inline model shapes as users write them: an MoE with one FFN width, and a stated parameter
count that the shape does not reproduce."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from scalewall import catalog
from scalewall.errors import SpecError
from scalewall.validation import harness
from scalewall.validation.runs import read_runs_file
from scalewall.workload import counts

_SHIPPED = catalog.model("mixtral-8x7b")
MIXTRAL: dict[str, Any] = {
    "id": "mixtral",
    "source": "test",
    # The catalog's Mixtral 8x7B as a user writes it: one FFN width, no expert width.
    "model": {name: getattr(_SHIPPED, name) for name in ("layers", "hidden", "heads", "kv_heads")}
    | {
        "ffn_hidden": _SHIPPED.expert_ffn_hidden,
        "vocab": _SHIPPED.vocab,
        "activation": "swiglu",
        "params": 46.7e9,
        "moe": {"routed_experts": _SHIPPED.routed_experts, "top_k": _SHIPPED.top_k},
    },
    "training": {"seq_len": 4096, "global_batch": 256, "micro_batch": 1, "precision": "bf16"},
    "plan": {"tp": 1, "pp": 4, "ep": 8, "stack": "megatron-core"},
    "hardware": {"gpu": "h100-sxm-80gb", "gpus": 64},
    "published": {"step_time_s": 3.0},
}


def _read(tmp_path: Path, cases: list[dict[str, Any]]):  # type: ignore[no-untyped-def]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"format": "scalewall-runs/1", "cases": cases}))
    return read_runs_file(path)


def test_an_moe_with_one_ffn_width_gives_it_to_the_experts(tmp_path: Path) -> None:
    explicit = copy.deepcopy(MIXTRAL) | {"id": "explicit"}
    explicit["model"]["moe"]["expert_ffn_hidden"] = 14336
    runs = _read(tmp_path, [MIXTRAL, explicit])
    one, both = runs.cases
    assert one.model.expert_ffn_hidden == 14336
    assert counts.param_count(one.model) == counts.param_count(both.model)
    assert counts.param_count(one.model) == pytest.approx(46.7e9, rel=0.01)
    assert not one.read_warnings
    times = [harness.compare(harness.predict_case(c))[0].predicted for c in runs.cases]
    assert times[0] == times[1]


def test_a_shape_that_misses_the_stated_parameters_is_warned(tmp_path: Path) -> None:
    wrong = copy.deepcopy(MIXTRAL) | {"id": "wrong"}
    wrong["model"]["ffn_hidden"] = 18432  # a dense width where the experts' was meant
    (case,) = _read(tmp_path, [wrong]).cases
    (warning,) = case.read_warnings
    assert warning.startswith("model.params=4.67e+10 but the shape counts")
    assert "+28%" in warning


def test_routed_experts_need_a_width() -> None:
    with pytest.raises(SpecError, match="expert_ffn_hidden=0"):
        replace(catalog.model("mixtral-8x7b"), expert_ffn_hidden=0)


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("8B", 8e9),
        ("1.5T", 1.5e12),
        ("405 billion", 405e9),
        ("8,030,261,248", 8030261248.0),
        ("236M", 236e6),
        ("1e9", 1e9),
        (7e9, 7e9),
    ],
)
def test_parameter_counts_as_sources_write_them(text: Any, count: float) -> None:
    from scalewall.validation.runs import parse_count

    assert parse_count(text) == pytest.approx(count)


def test_a_stated_total_tells_a_gated_ffn_from_a_plain_one(tmp_path: Path) -> None:
    # Llama 3 8B stated as a shape and "8B", its activation left open: three FFN matrices
    # reproduce the total, two (GPT's GeLU) fall 23% short.
    llama = catalog.model("llama3-8b")
    shape = {n: getattr(llama, n) for n in ("layers", "hidden", "heads", "kv_heads", "vocab")}
    case = copy.deepcopy(MIXTRAL) | {"id": "llama"}
    case["model"] = shape | {"ffn_hidden": llama.ffn_hidden, "params": "8B"}
    gpt = copy.deepcopy(case) | {"id": "gpt"}
    gpt["model"] = {k: v for k, v in case["model"].items() if k != "params"}
    runs = _read(tmp_path, [case, gpt])
    assert not runs.errors
    stated, open_total = runs.cases
    assert counts.param_count(stated.model) == pytest.approx(8.03e9, rel=0.01)
    assert not stated.read_warnings
    # Without a total the format's default stands: GeLU.
    assert counts.param_count(open_total.model) < 0.8 * counts.param_count(stated.model)
