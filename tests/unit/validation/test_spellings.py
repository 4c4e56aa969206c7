"""Runs files as sources write them: precisions, FP8 recipes and recompute modes in their
usual spellings read as the format's values; a wrong type is one error line for its case."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scalewall.plan.plan import canonical_precision, canonical_recompute
from scalewall.validation import harness
from scalewall.validation.runs import read_runs_file


@pytest.mark.parametrize(
    ("spelling", "expected"),
    [
        ("BF16", "bf16"),
        ("bf16-mixed", "bf16"),
        ("FP16 mixed precision", "fp16"),
        ("bfloat16", "bf16"),
        ("FP8", "fp8"),
        ("fp8 (delayed scaling)", "fp8"),
        ("FP8-CS", "fp8"),
        ("fp8_blockwise", "fp8-block"),
        ("MXFP8", "mxfp8"),
        ("mixed", None),
        ("tf32", None),
    ],
)
def test_precision_spellings(spelling: str, expected: str | None) -> None:
    assert canonical_precision(spelling) == expected


@pytest.mark.parametrize(
    ("spelling", "expected"),
    [("Full", "full"), ("uniform", "full"), ("activation checkpointing", "full"),
     ("selective", "selective"), ("off", "none"), ("sometimes", None)],
)  # fmt: skip
def test_recompute_spellings(spelling: str, expected: str | None) -> None:
    assert canonical_recompute(spelling) == expected


def _case(case_id: str, training: dict[str, Any], plan: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": case_id,
        "source": "test",
        "model": {"catalog": "llama3-8b"},
        "training": {"seq_len": 8192, "global_batch": 512, "micro_batch": 1} | training,
        "plan": {"tp": 1, "pp": 1, "stack": "megatron-core"} | plan,
        "hardware": {"gpu": "NVIDIA H100 Tensor Core GPU", "gpus": 64},
        "published": {"step_time_s": 10.0},
    }


def _predicted(path: Path, cases: list[dict[str, Any]]) -> tuple[list[float], list[str]]:
    path.write_text(json.dumps({"format": "scalewall-runs/1", "cases": cases}))
    runs = read_runs_file(path)
    times = [harness.compare(harness.predict_case(c))[0].predicted for c in runs.cases]
    return times, [f"{e.id}: {e.text}" for e in runs.errors]


def test_spelled_fields_predict_as_the_format_values(tmp_path: Path) -> None:
    written, _ = _predicted(
        tmp_path / "a.json",
        [
            _case("a", {"precision": "BF16-mixed"}, {"recompute": "uniform"}),
            _case("b", {"precision": "FP8", "fp8_recipe": "Delayed scaling"}, {}),
        ],
    )
    canonical, _ = _predicted(
        tmp_path / "b.json",
        [
            _case("a", {"precision": "bf16"}, {"recompute": "full"}),
            _case("b", {"precision": "fp8", "fp8_recipe": "per-tensor"}, {}),
        ],
    )
    assert written == canonical
    assert written[0] > written[1]


def test_a_string_for_a_flag_is_one_error_naming_the_field(tmp_path: Path) -> None:
    times, errors = _predicted(
        tmp_path / "c.json",
        [_case("flag", {}, {"sequence_parallel": "true"}), _case("ok", {}, {})],
    )
    assert len(times) == 1
    assert errors == [
        "flag: plan.sequence_parallel='true' is invalid; true, false or null",
    ]
