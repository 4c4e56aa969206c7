"""The workload: a transformer's parameter and FLOP counts, and user-defined models."""

from __future__ import annotations

from scalewall.workload.counts import (
    active_param_count,
    attention_flop_per_token,
    matmul_flop_per_token,
    model_flop_per_token,
    param_count,
)

__all__ = [
    "active_param_count",
    "attention_flop_per_token",
    "matmul_flop_per_token",
    "model_flop_per_token",
    "param_count",
]
