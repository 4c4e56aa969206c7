"""The Python API: plain frozen results from plain inputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from scalewall._result import ResultDisplay
from scalewall.catalog.schema import ModelSpec
from scalewall.cluster import resolve_cluster
from scalewall.perf.assumptions import Efficiency
from scalewall.perf.batch import PlanBatch
from scalewall.perf.step import step_model
from scalewall.plan.plan import ParallelPlan, check_precision, validate, validate_for_stack
from scalewall.plan.topology import Cluster
from scalewall.stack import StackSpec, resolve_stack
from scalewall.validation.error_bars import validation_interval
from scalewall.workload.user import model_from_args

if TYPE_CHECKING:
    import pandas as pd

_DEFAULT_EFFICIENCY = Efficiency()
"""The shipped constants, built once (``Efficiency`` is frozen)."""


@dataclass(frozen=True, kw_only=True, repr=False)
class StepEstimate(ResultDisplay):
    """One plan's predicted training step; ``to_dict()`` is ``scalewall estimate --json``."""

    REPR_FIELDS = ("model", "cluster", "step_time_s", "tokens_per_s", "mfu", "fits")

    model: str
    cluster: str
    plan: ParallelPlan
    step_time_s: float
    tokens_per_s: float
    mfu: float
    """Model FLOPs (6N-style matmuls plus attention, no recompute) over the dense BF16 peak."""
    hfu: float
    """Hardware FLOPs (recomputation included) over the dense BF16 peak."""
    model_tflops_per_gpu: float
    hardware_tflops_per_gpu: float
    fits: bool
    memory_bytes: dict[str, float] = field(default_factory=dict)
    """Bytes per GPU on the most loaded pipeline stage, by part."""
    memory_total_bytes: float = 0.0
    hbm_bytes: float = 0.0
    breakdown_s: dict[str, float] = field(default_factory=dict)
    """Seconds per step by part; the parts add up to ``step_time_s``."""
    stack: str = ""
    """The software stack's catalog id (``<id>+overrides`` when fields were overridden)."""
    step_time_interval_s: tuple[float, float] | None = None
    """90% prediction interval of the step time: without calibration, from the out-of-sample
    errors of the closest validation group (``validation.error_bars``); None where no
    validation group has errors."""
    interval_basis: str = ""
    """Where ``step_time_interval_s`` comes from."""
    interval_level: float = 0.9
    """Probability the interval holds the measured step time."""

    def to_dict(self) -> dict[str, Any]:
        """The ``scalewall-estimate/1`` document (``scalewall schema estimate``)."""
        return {"format": "scalewall-estimate/1", **asdict(self), "limiter": self.limiter}

    def to_pandas(self) -> pd.DataFrame:
        """One row: the scalars, the plan's fields and the breakdown as ``<part>_s``."""
        import pandas as pd

        row = {k: v for k, v in self.to_dict().items() if not isinstance(v, dict | list)}
        row.update({f"plan_{k}": getattr(self.plan, k) for k in self.plan.__dataclass_fields__})
        row.update({f"{k}_s": v for k, v in self.breakdown_s.items()})
        row.update({f"{k}_bytes": v for k, v in self.memory_bytes.items()})
        return pd.DataFrame([row])

    @property
    def breakdown(self) -> dict[str, float]:
        """``breakdown_s`` (the name search results use for the same parts)."""
        return self.breakdown_s

    @property
    def memory(self) -> dict[str, float]:
        """``memory_bytes``."""
        return self.memory_bytes

    @property
    def limiter(self) -> str:
        """The largest part of the step other than useful compute."""
        losses = {k: v for k, v in self.breakdown_s.items() if k != "compute"}
        return max(losses, key=lambda k: losses[k])


def estimate(
    model: ModelSpec | str,
    cluster: Cluster | str,
    plan: ParallelPlan,
    *,
    stack: StackSpec = None,
    stack_overrides: Mapping[str, Any] | Sequence[str] | None = None,
    efficiency: Efficiency | None = None,
) -> StepEstimate:
    """Predict one training step of ``model`` on ``cluster`` with ``plan``.

    Raises SpecError for an invalid plan; a plan that does not fit in memory is a result with
    ``fits=False``.
    """
    if isinstance(model, str):
        model = model_from_args(model)
    if isinstance(cluster, str):
        cluster = resolve_cluster(cluster)
    resolved_stack = resolve_stack(stack, stack_overrides)
    validate(model, plan, cluster.num_gpus)
    validate_for_stack(plan, resolved_stack)
    check_precision(cluster.accelerator, plan.precision)
    batch = PlanBatch.from_plans(model, [plan])
    out = step_model(model, cluster, batch, efficiency or _DEFAULT_EFFICIENCY, resolved_stack)
    step_time_s = float(out.step_time_s[0])
    band = validation_interval(
        step_time_s,
        stack=resolved_stack.id,
        accelerator=cluster.accelerator.id,
        moe=model.routed_experts > 0,
        gpus=cluster.num_gpus,
    )
    return StepEstimate(
        model=model.id,
        cluster=cluster.name,
        plan=plan,
        step_time_s=step_time_s,
        tokens_per_s=float(out.tokens_per_s[0]),
        mfu=float(out.mfu[0]),
        hfu=float(out.hfu[0]),
        model_tflops_per_gpu=float(out.model_tflops_per_gpu[0]),
        hardware_tflops_per_gpu=float(out.hardware_tflops_per_gpu[0]),
        fits=bool(out.fits[0]),
        memory_bytes={k: float(v[0]) for k, v in out.memory_bytes.items()},
        memory_total_bytes=float(out.memory_total_bytes[0]),
        hbm_bytes=cluster.accelerator.hbm_capacity_bytes,
        breakdown_s={k: float(v[0]) for k, v in out.breakdown_s.items()},
        stack=resolved_stack.id,
        step_time_interval_s=band.step_time_interval_s,
        interval_basis=band.basis,
        interval_level=band.level,
    )
