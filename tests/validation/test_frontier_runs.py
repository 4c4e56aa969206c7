"""The step model against published mixture-of-experts, FP8 and Blackwell runs
(src/scalewall/validation/data/frontier_runs.json).

Bounds: MAPE <= 10% over the file; DeepSeek-V3 on 2,048 H800 (report: 180K GPU-hours per
trillion tokens = 1,543 tokens/s per GPU) within 15%. Each run writes its error table, with the
mean signed error per accelerator, to test-artifacts/frontier_validation.json.

The file holds NVIDIA's Megatron-Bridge performance-summary rows (NeMo containers 25.09, 25.11,
26.02: DeepSeek-V3, Qwen3-30B-A3B and Qwen3-235B-A22B on DGX-GB300/GB200/B200/H100, dense Llama 3
in FP8 on the same systems), NeMo 24.07's H100 FP8 table, NeMo's long-sequence tables (Llama 2 7B
on H100 and Llama 3 8B on B200 up to 1M tokens with context parallelism) next to the DeepSeek-V3
report and the Megatron-Core MoE report. MAPE over the 57 cases is 7.1% (the 32 dense ones
2.4%). The largest misses, all kept in the file: Qwen3-30B-A3B on 16 H100 (25.11, PP2 VP24)
+98% (the 26.02 row of the same model and layout with one sequence per micro-batch runs as fast
per GPU and is predicted +9%); Qwen3-30B-A3B on 8 GB300 (26.02) +26%; Qwen3-235B-A22B on 256
B200 (26.02) -25%, on 256 GB200 (26.02) +23%, on 256 H100 +15% and +18%; DeepSeek-V3 on 256
B200 (25.11) +14%.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from scalewall.validation.harness import ValidationReport, validate_cases
from scalewall.validation.runs import frontier_runs_path, read_runs

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture(scope="module")
def report() -> ValidationReport:
    cases = read_runs(frontier_runs_path())
    result = validate_cases(cases)
    gpu = {c.id: c.hardware["gpu"] for c in cases}
    by_gpu: dict[str, list[float]] = defaultdict(list)
    for comparison in result.comparisons:
        by_gpu[gpu[comparison.id]].append(comparison.error_frac)
    table = result.to_dict()
    table["mean_signed_error_by_accelerator"] = {
        g: {"mean": float(np.mean(e)), "cases": len(e)} for g, e in sorted(by_gpu.items())
    }
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "frontier_validation.json").write_text(json.dumps(table, indent=1))
    return result


def test_frontier_mape_within_10_percent(report: ValidationReport) -> None:
    errors = [abs(c.error_frac) for c in report.comparisons]
    assert len(errors) >= 57
    assert float(np.mean(errors)) <= 0.10


def test_deepseek_v3_tokens_per_gpu_within_15_percent(report: ValidationReport) -> None:
    (case,) = [c for c in report.comparisons if c.id == "frontier_deepseek_v3_h800_2048"]
    # 1e12 tokens / (180,000 GPU-h x 3,600 s/h) = 1,543 tokens/s per GPU x 2,048 GPUs.
    assert case.published == pytest.approx(1543.2 * 2048, rel=1e-3)
    assert abs(case.error_frac) <= 0.15


def test_default_runs_read_both_files() -> None:
    groups = {c.group for c in read_runs()}
    assert "frontier" in groups and "vtrain_multi" in groups


def test_megatron_bridge_rows_match_their_sources() -> None:
    """Each Megatron-Bridge row's published total is its quoted tokens/s/GPU x its GPU count."""
    rows = [c for c in read_runs(frontier_runs_path()) if c.id.startswith("frontier_mb")]
    assert len(rows) >= 15
    for case in rows:
        quoted = re.search(r"measured (\d+) tokens/s/GPU", case.source)
        assert quoted is not None, case.id
        gpus = case.hardware["gpus"]
        assert case.published["tokens_per_s"] == int(quoted.group(1)) * gpus, case.id
        assert f"{gpus} GPUs" in case.source, case.id


LONG_CONTEXT_TOKENS = 131_072
LONG_CONTEXT_BOUND = 0.20


def test_long_context_runs_within_20_percent(report: ValidationReport) -> None:
    """NeMo's long-sequence runs from 128K to 1M tokens (ring context parallelism, 4 to 32
    ranks; Llama 2 7B on H100, Llama 3 8B on B200): each within 20% (at present -14% to -17%
    on H100, +8% to +10% on B200)."""
    cases = {c.id: c for c in read_runs(frontier_runs_path())}
    long = [c for c in report.comparisons if cases[c.id].training["seq_len"] >= LONG_CONTEXT_TOKENS]
    assert len(long) >= 8
    assert max(abs(c.error_frac) for c in long) <= LONG_CONTEXT_BOUND
