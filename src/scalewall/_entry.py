"""The plain functions ``scalewall`` exports. Each takes ids, files or objects alike, resolves
them with the same functions the CLI uses, and returns a frozen result whose ``to_dict()`` is
the command's ``--json`` document."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scalewall._result import ResultDisplay
from scalewall.catalog.schema import ModelSpec
from scalewall.cluster import resolve_cluster
from scalewall.errors import ScalewallError, SpecError
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.plan.defaults import DEFAULT_GPU, DEFAULT_GPUS, layout_widths, plan_from_fields
from scalewall.plan.plan import ParallelPlan
from scalewall.plan.topology import Cluster
from scalewall.stack import StackSpec, resolve_stack, with_recompute_modules
from scalewall.units import DAY_S
from scalewall.workload.user import model_from_args

if TYPE_CHECKING:
    import pandas as pd

    from scalewall.api import StepEstimate
    from scalewall.cost import ClusterHardware, Tco, Throughput, TrainingCost
    from scalewall.reliability import GoodputInputs, GoodputResult
    from scalewall.report.build import Report
    from scalewall.report.scenario import Scenario
    from scalewall.sched.cluster import Cluster as SchedCluster
    from scalewall.sched.metrics import SimResult

ModelArg = ModelSpec | str
ClusterArg = Cluster | str | Path | None
PlanArg = ParallelPlan | Mapping[str, Any]


def _recompute_modules(plan: PlanArg | None, software: Stack) -> tuple[PlanArg | None, Stack]:
    """A plan mapping whose ``recompute`` lists Megatron-Core recompute modules: selective
    recompute on the stack with their fields set (``with_recompute_modules``)."""
    if not isinstance(plan, Mapping) or "recompute" not in plan:
        return plan, software
    recompute, software = with_recompute_modules(plan["recompute"], software, "plan.recompute")
    return {**plan, "recompute": recompute}, software


DEFAULT_COST_CLUSTER = "dgx-h100-superpod-1024"
"""``cost`` without a cluster prices the 1,024-GPU DGX H100 SuperPOD."""
PRETRAIN_SEQ_LEN = 8192
"""Default cap on the sequence length for FLOPs per token: pre-training runs at shorter
sequences than the context a model finally supports (Llama 3 pre-trains at 8,192 tokens before
its long-context stage; arXiv 2407.21783, Sec. 3.4)."""
DEFAULT_RUN_S = 30 * DAY_S
"""``goodput``'s default wall-clock run length."""


def resolve_model(model: ModelArg) -> ModelSpec:
    """A model from a catalog id, a HuggingFace config.json, a TOML file, or as given."""
    return model if isinstance(model, ModelSpec) else model_from_args(model)


def resolve_any_cluster(cluster: ClusterArg, gpu: str | None, gpus: int | None) -> Cluster:
    """A cluster as given, or from a catalog id, a cluster TOML or ``gpu`` x ``gpus``; with
    neither a cluster nor a GPU, ``DEFAULT_GPUS`` (or ``gpus``) of the ``DEFAULT_GPU``."""
    if isinstance(cluster, Cluster):
        return cluster
    if cluster is None and gpu is None:
        gpu, gpus = DEFAULT_GPU, DEFAULT_GPUS if gpus is None else gpus
    return resolve_cluster(str(cluster) if cluster is not None else None, gpu=gpu, gpus=gpus)


def resolve_plan(
    cluster: Cluster,
    model: ModelSpec,
    plan: PlanArg | None,
    stack: Stack,
    global_batch_tokens: int | None = None,
    efficiency: Efficiency | None = None,
) -> ParallelPlan:
    """A plan as given, or from its fields with the others from ``PLAN_DEFAULTS`` (``dp``
    fills the cluster, ``zero`` is the stack's sharding; an MoE question's open widths
    ranked with ``efficiency``)."""
    if isinstance(plan, ParallelPlan):
        return plan
    return plan_from_fields(
        cluster,
        model,
        plan or {},
        zero=stack.zero_stage,
        global_batch_tokens=global_batch_tokens,
        stack=stack,
        efficiency=efficiency,
    )


def estimate(
    model: ModelArg,
    cluster: ClusterArg = None,
    plan: PlanArg | None = None,
    *,
    gpu: str | None = None,
    gpus: int | None = None,
    stack: StackSpec = None,
    stack_overrides: Mapping[str, Any] | Sequence[str] | None = None,
    efficiency: Efficiency | None = None,
    global_batch_tokens: int | None = None,
) -> StepEstimate:
    """One plan's training step (``scalewall estimate``); ``plan`` is a ``ParallelPlan`` or
    some of its fields (``{"tp": 8, "pp": 4}``), the others as the CLI's (``PLAN_DEFAULTS``;
    dp fills the cluster, zero is the stack's)."""
    from scalewall.api import estimate as estimate_step

    spec = resolve_model(model)
    resolved = resolve_any_cluster(cluster, gpu, gpus)
    software = resolve_stack(stack, stack_overrides)
    plan, software = _recompute_modules(plan, software)
    return estimate_step(
        spec,
        resolved,
        resolve_plan(resolved, spec, plan, software, global_batch_tokens, efficiency),
        stack=software,
        efficiency=efficiency,
    )


@dataclass(frozen=True, kw_only=True)
class Job:
    """The plan a goodput question is about, and where its step time comes from."""

    plan: ParallelPlan
    plan_source: str
    """``given``; ``given; chosen: tp, pp`` where the widths named were left open and the
    fastest layout that fits was taken (``plan.defaults.open_layout``); or ``search`` (the best
    plan by goodput-adjusted tokens/s)."""
    step_time_s: float
    step_source: str
    """``estimate`` (the step model), ``search`` or ``given``."""
    fits: bool

    @property
    def tokens_per_s(self) -> float:
        return self.plan.tokens_per_step / self.step_time_s

    def to_dict(self, goodput_frac: float) -> dict[str, Any]:
        return {
            "plan": {k: getattr(self.plan, k) for k in self.plan.__dataclass_fields__},
            "plan_source": self.plan_source,
            "fits": self.fits,
            "step_time_s": self.step_time_s,
            "step_time_source": self.step_source,
            "tokens_per_s": self.tokens_per_s,
            "goodput_tokens_per_s": self.tokens_per_s * goodput_frac,
        }


@dataclass(frozen=True, kw_only=True, repr=False)
class GoodputRun(ResultDisplay):
    """Goodput of one job: the reliability result and the job it is about."""

    REPR_FIELDS = ("gpus", "goodput_frac", "interval_s", "mttf_s", "step_time_s")

    result: GoodputResult
    job: Job
    inputs: GoodputInputs
    """What the goodput model was given (the what-if tables start from it)."""

    def to_dict(self) -> dict[str, Any]:
        """The ``scalewall-goodput/1`` document (``scalewall schema goodput``)."""
        return {
            "format": "scalewall-goodput/1",
            **self.result.to_dict(),
            **self.job.to_dict(self.result.goodput_frac),
        }


def goodput(
    model: ModelArg,
    cluster: ClusterArg = None,
    plan: PlanArg | None = None,
    *,
    gpu: str | None = None,
    gpus: int | None = None,
    best_plan: bool = False,
    run_s: float = DEFAULT_RUN_S,
    storage: str | None = None,
    failure_rates: str | None = None,
    interval_s: float | None = None,
    step_s: float | None = None,
    spare_nodes: int | None = None,
    asynchronous: bool = False,
    monte_carlo_runs: int = 10_000,
    seed: int = 0,
    stack: StackSpec = None,
    stack_overrides: Mapping[str, Any] | Sequence[str] | None = None,
    global_batch: int | None = None,
    global_batch_tokens: int | None = None,
    seq_len: int | None = None,
    efficiency: Efficiency | None = None,
) -> GoodputRun:
    """Failures, checkpoints, the optimal interval and goodput of one job
    (``scalewall goodput``): ``plan`` (or ``best_plan=True``: the search's best by tokens/s x
    goodput), its step time from the step model unless ``step_s`` is given."""
    from scalewall.reliability import CheckpointSpec, GoodputTokensPerSecond
    from scalewall.reliability import goodput as reliability_goodput
    from scalewall.reliability.adapter import goodput_inputs
    from scalewall.reliability.catalog import DEFAULT_FAILURE_RATES, DEFAULT_STORAGE

    if monte_carlo_runs < 0:
        raise SpecError("mc_runs", monte_carlo_runs, "must be >= 0")
    if not run_s > 0:
        raise SpecError("run_s", run_s, "must be > 0")
    if step_s is not None and not step_s > 0:
        raise SpecError("step_s", step_s, "must be > 0")
    spec = resolve_model(model)
    resolved = resolve_any_cluster(cluster, gpu, gpus)
    software = resolve_stack(stack, stack_overrides)
    plan, software = _recompute_modules(plan, software)
    storage = storage or DEFAULT_STORAGE
    failure_rates = failure_rates or DEFAULT_FAILURE_RATES
    checkpoint = CheckpointSpec(asynchronous=asynchronous)
    if best_plan:
        objective = GoodputTokensPerSecond(
            storage=storage,
            failure_rates=failure_rates,
            checkpoint=checkpoint,
            spare_nodes=spare_nodes,
            run_s=run_s,
        )
        job = _best_plan_job(
            spec,
            resolved,
            objective,
            global_batch,
            global_batch_tokens,
            seq_len,
            software,
            efficiency,
        )
    else:
        from scalewall.api import estimate as estimate_step

        fields: PlanArg = (
            plan
            if isinstance(plan, ParallelPlan)
            else {"global_batch": global_batch, "seq_len": seq_len, **(plan or {})}
        )
        given = resolve_plan(resolved, spec, fields, software, global_batch_tokens, efficiency)
        est = estimate_step(spec, resolved, given, stack=software, efficiency=efficiency)
        chosen = [] if isinstance(fields, ParallelPlan) else [
            name for name in layout_widths(spec) if fields.get(name) is None
        ]  # fmt: skip
        job = Job(
            plan=given,
            plan_source=f"given; chosen: {', '.join(chosen)}" if chosen else "given",
            step_time_s=est.step_time_s,
            step_source="estimate",
            fits=est.fits,
        )
    if step_s is not None:
        job = Job(
            plan=job.plan,
            plan_source=job.plan_source,
            step_time_s=step_s,
            step_source="given",
            fits=job.fits,
        )
    inputs = goodput_inputs(
        spec,
        resolved,
        job.plan,
        run_s=run_s,
        storage=storage,
        failure_rates=failure_rates,
        checkpoint=checkpoint,
        interval_s=interval_s,
        step_s=job.step_time_s,
        spare_nodes=spare_nodes,
    )
    result = reliability_goodput(inputs, monte_carlo_runs=monte_carlo_runs, seed=seed)
    return GoodputRun(result=result, job=job, inputs=inputs)


def _best_plan_job(
    model: ModelSpec,
    cluster: Cluster,
    objective: Any,
    global_batch: int | None,
    global_batch_tokens: int | None,
    seq_len: int | None,
    stack: Any,
    efficiency: Efficiency | None,
) -> Job:
    """The search's best plan by goodput-adjusted tokens/s, with its step time."""
    from scalewall.search.engine import search as search_plans

    result = search_plans(
        model,
        cluster,
        global_batch=global_batch,
        global_batch_tokens=global_batch_tokens,
        seq_len=seq_len,
        objective_name=objective,
        top_k=1,
        stack=stack,
        efficiency=efficiency,
    )
    if result.best is None:
        raise ScalewallError(f"{cluster.num_gpus} GPUs: {result.reason}")
    best = result.best
    return Job(
        plan=best.plan,
        plan_source="search",
        step_time_s=best.step_time_s,
        step_source="search",
        fits=True,
    )


@dataclass(frozen=True, kw_only=True, repr=False)
class CostRun(ResultDisplay):
    """A cluster's total cost of ownership, and a training run's cost when a budget is given."""

    REPR_FIELDS = ("cluster", "gpus", "usd_per_gpu_hour", "usd_per_million_tokens")

    tco: Tco
    training: TrainingCost | None
    price_files: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The ``scalewall-cost/1`` document (``scalewall schema cost``)."""
        return {
            "format": "scalewall-cost/1",
            "tco": self.tco.to_dict(),
            "price_files": list(self.price_files),
            "training": self.training.to_dict() if self.training else None,
        }

    def __repr__(self) -> str:
        t = self.tco.to_dict()
        shown = ", ".join(f"{k}={t[k]!r}" for k in self.REPR_FIELDS if k in t)
        return f"CostRun({shown})"

    def to_pandas(self) -> pd.DataFrame:
        """The capex lines (bill of materials priced)."""
        import pandas as pd

        return pd.DataFrame(self.tco.to_dict()["capex"]["lines"])


def cost_hardware(cluster: ClusterArg, gpu: str | None, gpus: int | None) -> ClusterHardware:
    """The hardware to price: a cluster, ``gpu`` x ``gpus``, or the default SuperPOD."""
    from scalewall.cost import hardware_from_cluster

    if gpu and cluster:
        raise SpecError("gpu", gpu, "give either --cluster or --gpu, not both")
    if not gpu:
        cluster = cluster or DEFAULT_COST_CLUSTER
    return hardware_from_cluster(resolve_any_cluster(cluster, gpu, gpus))


def cost_throughput(
    hw: ClusterHardware,
    model: ModelArg | None,
    seq_len: int,
    tokens_per_s: float,
    mfu: float,
    goodput: float,
) -> Throughput | None:
    """From ``tokens_per_s`` (MFU from ``model`` if given), or from ``model`` and ``mfu``."""
    from scalewall.cost import Throughput, mfu_from_tokens, throughput_from_mfu
    from scalewall.workload import model_flop_per_token

    if not 0.0 <= tokens_per_s < math.inf:
        raise SpecError("tokens_per_s", tokens_per_s, "zero (not given) or a positive number")
    if not 0.0 <= mfu <= 1.0:
        raise SpecError("mfu", mfu, "a fraction in (0, 1], or 0 for not given")
    if not 0.0 < goodput <= 1.0:
        raise SpecError("goodput", goodput, "a fraction in (0, 1]")
    if seq_len < 0:
        raise SpecError("seq_len", seq_len, "a positive number of tokens, or 0 for the model's")
    flop = 0.0
    if model:
        spec = resolve_model(model)
        flop = model_flop_per_token(spec, seq_len or min(spec.max_seq_len, PRETRAIN_SEQ_LEN))
    if tokens_per_s > 0.0:
        mfu_frac = mfu or (mfu_from_tokens(hw, flop, tokens_per_s) if flop else None)
        return Throughput(tokens_per_s=tokens_per_s, mfu_frac=mfu_frac, goodput_frac=goodput)
    if mfu > 0.0:
        if not flop:
            raise SpecError("model", None, "--mfu without --tokens-per-s needs --model")
        return throughput_from_mfu(hw, flop, mfu, goodput)
    return None


def cost(
    cluster: ClusterArg = None,
    *,
    gpu: str | None = None,
    gpus: int | None = None,
    prices: Sequence[Path | str] = (),
    facility: str = "owned",
    utilisation: float = 1.0,
    tokens_per_s: float = 0.0,
    model: ModelArg | None = None,
    seq_len: int = 0,
    mfu: float = 0.0,
    goodput: float = 1.0,
    tokens: float = 0.0,
) -> CostRun:
    """Capex, opex, network bill of materials and unit costs of a cluster (``scalewall cost``);
    a model with ``mfu`` or ``tokens_per_s`` gives the per-token figures, ``tokens`` a budget."""
    from scalewall.cost import TcoOptions, load_prices, tco, training_cost

    book = load_prices([Path(p) for p in prices])
    if not 0.0 <= tokens < math.inf:
        raise SpecError("tokens", tokens, "a positive token budget, e.g. 15e12 (0: none)")
    hw = cost_hardware(cluster, gpu, gpus)
    throughput = cost_throughput(hw, model, seq_len, tokens_per_s, mfu, goodput)
    result = tco(hw, book, throughput, TcoOptions(facility=facility, utilisation_frac=utilisation))
    run = training_cost(result, tokens) if tokens else None
    return CostRun(tco=result, training=run, price_files=tuple(book.files))


def report(scenario: Scenario | Path | str | None = None) -> Report:
    """The decision report (``scalewall report``) of a scenario, its TOML file, or the
    built-in scenario."""
    from scalewall.report.build import build_report
    from scalewall.report.scenario import Scenario, load_scenario

    if scenario is None:
        scenario = Scenario()
    elif not isinstance(scenario, Scenario):
        scenario = load_scenario(Path(scenario))
    return build_report(scenario)


def simulate(
    cluster: SchedCluster | str | Path,
    trace: pd.DataFrame | str | Path,
    *,
    queue: str = "fifo",
    placement: str = "bestfit",
    seed: int = 0,
    demand: float | None = None,
    **options: Any,
) -> SimResult:
    """Replay a trace on a cluster (``scalewall simulate``): the cluster a scheduler cluster, a
    catalog cluster id or a machine-list file; the trace a job frame or a trace spec (a file,
    ``synthetic:<cluster>:<jobs>``). ``options`` go to ``scalewall.sched.simulate``."""
    import pandas as pd

    from scalewall.sched import api as sched

    frame = (
        trace if isinstance(trace, pd.DataFrame) else sched.load_trace(str(trace), seed=seed).frame
    )
    resolved = sched.load_cluster(str(cluster)) if isinstance(cluster, str | Path) else cluster
    return sched.simulate(
        resolved, frame, queue=queue, placement=placement, seed=seed, demand=demand, **options
    )
