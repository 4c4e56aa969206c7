"""Shared job shapes for the reliability tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from scalewall.reliability import CheckpointLayout, GoodputInputs, JobFootprint
from scalewall.units import DAY_S

LLAMA3_GPUS = 16_384
"""Llama 3 405B pre-training: up to 16,384 H100, 8 per server, one 400 Gb/s NIC per GPU,
16 GPUs per rack switch (Dubey et al., arXiv 2407.21783, Sec. 3.3)."""
LLAMA3_DAYS = 54.0
LLAMA3_PARAMS = 405e9


def footprint(gpus: int, *, gpus_per_leaf: int = 16, spines: int = 0) -> JobFootprint:
    return JobFootprint(
        gpus=gpus, gpus_per_node=8, nics_per_node=8, gpus_per_leaf=gpus_per_leaf, spines=spines
    )


@pytest.fixture
def make_job() -> Callable[..., JobFootprint]:
    return footprint


@pytest.fixture
def llama3() -> Callable[..., GoodputInputs]:
    """Llama 3 405B on 16,384 H100 with TP 8, PP 16 (the paper's Table 4 layout), 54 days."""

    def make(gpus: int = LLAMA3_GPUS, **overrides: Any) -> GoodputInputs:
        base: dict[str, Any] = {
            "job": footprint(gpus),
            "layout": CheckpointLayout(
                params=LLAMA3_PARAMS, gpus=gpus, gpus_per_node=8, tp=8, pp=16
            ),
            "run_s": LLAMA3_DAYS * DAY_S,
        }
        base.update(overrides)
        return GoodputInputs(**base)

    return make
