"""The step model against published mixture-of-experts, FP8 and Blackwell runs
(src/scalewall/validation/data/frontier_runs.json).

Bounds: MAPE <= 10% over the file; DeepSeek-V3 on 2,048 H800 (report: 180K GPU-hours per
trillion tokens = 1,543 tokens/s per GPU) within 15%. Each run writes its error table to
test-artifacts/frontier_validation.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from scalewall.validation.harness import ValidationReport, validate_cases
from scalewall.validation.runs import frontier_runs_path, read_runs

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture(scope="module")
def report() -> ValidationReport:
    result = validate_cases(read_runs(frontier_runs_path()))
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "frontier_validation.json").write_text(json.dumps(result.to_dict(), indent=1))
    return result


def test_frontier_mape_within_10_percent(report: ValidationReport) -> None:
    errors = [abs(c.error_frac) for c in report.comparisons]
    assert len(errors) >= 2
    assert float(np.mean(errors)) <= 0.10


def test_deepseek_v3_tokens_per_gpu_within_15_percent(report: ValidationReport) -> None:
    (case,) = [c for c in report.comparisons if c.id == "frontier_deepseek_v3_h800_2048"]
    # 1e12 tokens / (180,000 GPU-h x 3,600 s/h) = 1,543 tokens/s per GPU x 2,048 GPUs.
    assert case.published == pytest.approx(1543.2 * 2048, rel=1e-3)
    assert abs(case.error_frac) <= 0.15


def test_default_runs_read_both_files() -> None:
    groups = {c.group for c in read_runs()}
    assert "frontier" in groups and "vtrain_multi" in groups
