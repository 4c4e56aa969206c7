"""The model constants calibration may fit: bounds, typical magnitudes, and how to apply them.

Every fitted name is a flat field name of :class:`scalewall.perf.assumptions.Efficiency`
(``Efficiency.field_path`` says which group holds it), except
``training_clock_frac``, which belongs to the accelerator (``Accelerator.training_clock_frac``).
The GEMM ceiling is ``gemm_max_frac x gemm_sustained_ratio x training_clock_frac`` and the fused
attention rate ``attention_frac x training_clock_frac``, so the clock is only identifiable apart
from ``gemm_sustained_ratio`` when attention records pin it (an accelerator with a catalog
``attention_frac``); the identifiability check finds that from the data.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scalewall import catalog
from scalewall.errors import SpecError
from scalewall.perf.assumptions import Efficiency
from scalewall.plan.topology import Cluster

FloatArray = NDArray[np.float64]

CLOCK = "training_clock_frac"
CLOCK_PREFIX = CLOCK + ":"
"""``training_clock_frac:<accelerator id>`` names one accelerator's clock in a fit over runs on
several accelerators (``CLOCK`` alone is the clock of the one accelerator measured)."""


@dataclass(frozen=True, kw_only=True)
class Parameter:
    """One fitted constant: its bounds and the magnitude that counts as a change."""

    name: str
    lower: float
    upper: float
    scale: float
    """Typical magnitude: the fit's variable scaling, and the yardstick of the identifiability
    test (a standard error larger than this means the data did not pin the value)."""


PARAMETERS: dict[str, Parameter] = {
    p.name: p
    for p in (
        Parameter(name="gemm_sustained_ratio", lower=0.2, upper=1.3, scale=0.1),
        Parameter(name="gemm_k_half_efficiency", lower=0.0, upper=4096.0, scale=64.0),
        Parameter(name="gemm_k_half_fp8_factor", lower=0.25, upper=8.0, scale=0.5),
        Parameter(name="gemm_launch_s", lower=0.0, upper=2e-4, scale=4e-6),
        Parameter(name="hbm_efficiency", lower=0.2, upper=1.0, scale=0.1),
        Parameter(name="unfused_attention_bytes_per_score", lower=0.0, upper=24.0, scale=1.0),
        Parameter(name="attention_dropout_bytes_per_score", lower=0.0, upper=20.0, scale=1.0),
        Parameter(name="dropout_bytes_per_hidden", lower=0.0, upper=80.0, scale=4.0),
        Parameter(name="flash_attention_frac", lower=0.05, upper=1.0, scale=0.1),
        Parameter(name="scale_up_bw_efficiency", lower=0.05, upper=1.0, scale=0.1),
        Parameter(name="scale_up_nvls_algbw_efficiency", lower=0.05, upper=1.5, scale=0.1),
        Parameter(name="scale_out_bw_efficiency", lower=0.05, upper=1.0, scale=0.1),
        Parameter(name="collective_launch_s", lower=0.0, upper=2e-3, scale=20e-6),
        Parameter(name="ring_step_latency_scale_up_s", lower=0.0, upper=1e-4, scale=3.4e-6),
        Parameter(name="ring_step_latency_scale_out_s", lower=0.0, upper=2e-4, scale=14e-6),
        Parameter(name="dp_overlap_efficiency", lower=0.0, upper=1.0, scale=0.2),
        Parameter(name="pp_p2p_overlap_frac", lower=0.0, upper=1.0, scale=0.2),
        Parameter(name="pp_p2p_sync_s", lower=0.0, upper=5e-3, scale=50e-6),
        Parameter(name="rank_jitter_cv", lower=0.0, upper=0.3, scale=0.01),
        Parameter(name="rank_noise_duty_frac", lower=0.0, upper=0.01, scale=1e-4),
        Parameter(name="rank_noise_event_s", lower=1e-4, upper=0.1, scale=3e-3),
        Parameter(name="overlap_compute_slowdown_frac", lower=0.0, upper=1.0, scale=0.1),
        Parameter(name="tp_overlap_compute_slowdown_frac", lower=0.0, upper=1.0, scale=0.1),
        Parameter(name="host_op_s", lower=0.0, upper=5e-4, scale=10e-6),
        Parameter(name="expert_alltoall_bw_efficiency", lower=0.1, upper=1.0, scale=0.1),
        Parameter(name="expert_dispatch_copy_s", lower=0.0, upper=1e-6, scale=5e-9),
        Parameter(name="fp4_gemm_ceiling_ratio", lower=0.2, upper=1.2, scale=0.1),
        Parameter(name=CLOCK, lower=0.3, upper=1.2, scale=0.05),
    )
}

#: Which parameters each kind of observation can inform (the fit starts from their union).
BY_KIND: dict[str, tuple[str, ...]] = {
    "gemm": (
        "gemm_sustained_ratio",
        "gemm_k_half_efficiency",
        "gemm_k_half_fp8_factor",
        "gemm_launch_s",
    ),
    "attention": ("flash_attention_frac", CLOCK),
    "hbm": ("hbm_efficiency",),
    "collective": (
        "scale_up_bw_efficiency",
        "scale_out_bw_efficiency",
        "collective_launch_s",
        "ring_step_latency_scale_up_s",
        "ring_step_latency_scale_out_s",
    ),
    "step": (
        "gemm_sustained_ratio",
        "gemm_k_half_efficiency",
        "hbm_efficiency",
        "flash_attention_frac",
        "scale_up_bw_efficiency",
        "scale_out_bw_efficiency",
        "collective_launch_s",
        "dp_overlap_efficiency",
        "pp_p2p_sync_s",
        "rank_jitter_cv",
        "rank_noise_duty_frac",
        "rank_noise_event_s",
        "host_op_s",
    ),
}


def clock_name(accelerator: str) -> str:
    """The parameter name of one accelerator's ``training_clock_frac``."""
    return CLOCK_PREFIX + accelerator


def is_clock(name: str) -> bool:
    return name == CLOCK or name.startswith(CLOCK_PREFIX)


def parameter(name: str) -> Parameter:
    """The fittable parameter ``name`` (an accelerator's clock shares ``CLOCK``'s bounds)."""
    if name.startswith(CLOCK_PREFIX):
        return dataclasses.replace(PARAMETERS[CLOCK], name=name)
    return PARAMETERS[name]


def check_names(names: Sequence[str], field: str = "params") -> tuple[str, ...]:
    """The names, checked against the fittable ones."""
    for name in names:
        if name not in PARAMETERS and not name.startswith(CLOCK_PREFIX):
            raise SpecError(field, name, f"fittable: {', '.join(PARAMETERS)}")
    return tuple(dict.fromkeys(names))


def default_value(name: str, base: Efficiency, clock: float) -> float:
    """The value the model uses now: ``base``'s field, or the accelerator's clock (``clock``,
    or the catalog's for a ``training_clock_frac:<id>`` name)."""
    if name.startswith(CLOCK_PREFIX):
        return catalog.accelerator(name.removeprefix(CLOCK_PREFIX)).training_clock_frac
    return clock if name == CLOCK else float(base.value(name))


def apply(
    values: Mapping[str, Any], base: Efficiency, cluster: Cluster | None = None
) -> tuple[Efficiency, Cluster | None]:
    """``base`` (and ``cluster``'s accelerator) with ``values`` put in.

    Values may be numpy arrays (one entry per draw) as the step model broadcasts over them.
    A ``training_clock_frac:<id>`` value applies only to a cluster of that accelerator.
    """
    fields = {k: v for k, v in values.items() if not is_clock(k)}
    eff = base.replace(**fields)
    if cluster is None:
        return eff, None
    clock = values.get(CLOCK, values.get(clock_name(cluster.accelerator.id)))
    if clock is not None:
        acc = dataclasses.replace(cluster.accelerator, training_clock_frac=clock)
        cluster = dataclasses.replace(cluster, accelerator=acc)
    return eff, cluster
