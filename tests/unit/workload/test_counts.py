"""Parameter counts against published exact totals."""

from __future__ import annotations

import pytest

from scalewall import catalog
from scalewall.workload import active_param_count, param_count


@pytest.mark.parametrize(
    ("model_id", "exact"),
    [
        # Sums of the tensor shapes in the released checkpoints' safetensors index (HF model cards
        # list 8.03B, 70.6B, 405.9B, 46.7B and 671B (without the 14B MTP module)).
        ("llama3-8b", 8_030_261_248),
        ("llama3-70b", 70_553_706_496),
        ("llama3.1-405b", 405_853_388_800),
        ("mixtral-8x7b", 46_702_792_704),
        ("llama2-7b", 6_738_415_616),
    ],
)
def test_total_parameters_exact(model_id: str, exact: int) -> None:
    assert param_count(catalog.model(model_id)) == exact


def test_gpt3_175b() -> None:
    # Brown et al. 2020 report 175.0B; the shape gives 174.6B (learned positions, tied output).
    assert param_count(catalog.model("gpt3-175b")) == pytest.approx(175.0e9, rel=0.003)


def test_moe_active_parameters() -> None:
    # Mixtral 8x7B: 12.9B active of 46.7B (Mistral AI, 2024); DeepSeek-V3: 37B of 671B.
    assert active_param_count(catalog.model("mixtral-8x7b")) == pytest.approx(12.9e9, rel=0.01)
    v3 = catalog.model("deepseek-v3")
    assert param_count(v3) == pytest.approx(671e9, rel=0.001)
    assert active_param_count(v3) == pytest.approx(37e9, rel=0.02)
