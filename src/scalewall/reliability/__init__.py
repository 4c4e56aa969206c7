"""Reliability and goodput: failure rates by component, checkpoint cost by storage tier,
checkpoint intervals, and goodput analytically and by Monte Carlo.

Entry point: ``goodput(GoodputInputs(...), monte_carlo_runs=..., seed=...)``. Search objective:
``goodput_tokens_per_s`` (`GoodputTokensPerSecond`), tokens/s times goodput.
"""

from __future__ import annotations

from scalewall.reliability.api import (
    GoodputInputs,
    GoodputResult,
    goodput,
    goodput_model,
    required_spares,
)
from scalewall.reliability.catalog import (
    failure_rate_profiles,
    failure_rates,
    storage_tier,
    storage_tiers,
)
from scalewall.reliability.checkpoint import (
    CheckpointCost,
    CheckpointLayout,
    CheckpointSpec,
    RestartSpec,
    checkpoint_cost,
)
from scalewall.reliability.ettr import GoodputModel, MonteCarloResult, simulate
from scalewall.reliability.failures import (
    CATEGORIES,
    CAUSE_NAMES,
    InterruptionRates,
    JobFootprint,
    interruption_rates,
    node_mttf_s,
)
from scalewall.reliability.interval import (
    daly_interval_s,
    daly_wall_time_s,
    optimal_interval_s,
    young_interval_s,
)
from scalewall.reliability.objective import GoodputTokensPerSecond
from scalewall.reliability.spares import nodes_in_repair_tail, spares_for_risk
from scalewall.reliability.specs import FailureRates, StorageTier
from scalewall.reliability.whatif import (
    bandwidth_table,
    failure_rate_table,
    required_scale,
    restart_table,
    spares_table,
)

__all__ = [
    "CATEGORIES",
    "CAUSE_NAMES",
    "CheckpointCost",
    "CheckpointLayout",
    "CheckpointSpec",
    "FailureRates",
    "GoodputInputs",
    "GoodputModel",
    "GoodputResult",
    "GoodputTokensPerSecond",
    "InterruptionRates",
    "JobFootprint",
    "MonteCarloResult",
    "RestartSpec",
    "StorageTier",
    "bandwidth_table",
    "checkpoint_cost",
    "daly_interval_s",
    "daly_wall_time_s",
    "failure_rate_profiles",
    "failure_rate_table",
    "failure_rates",
    "goodput",
    "goodput_model",
    "interruption_rates",
    "node_mttf_s",
    "nodes_in_repair_tail",
    "optimal_interval_s",
    "required_scale",
    "required_spares",
    "restart_table",
    "simulate",
    "spares_for_risk",
    "spares_table",
    "storage_tier",
    "storage_tiers",
    "young_interval_s",
]
