"""Request bodies of the API, and how each becomes the command line of its command.

Each body's fields are the command's options (``global_batch`` is ``--global-batch``), with the
command's defaults, so a request with a field left out asks what the command would. Names that
reach the server's disk are not taken from the client: a model is a catalog id or an uploaded
config (``upload:<id>``), a cluster a catalog id or a system, fabric and node count that the
server writes into a cluster file of its own.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from scalewall.errors import SpecError
from scalewall.plan.defaults import DEFAULT_MODEL, PLAN_DEFAULTS
from scalewall.web.limits import Limits

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,79}$"
"""A catalog id: no path separators."""
UPLOAD_PREFIX = "upload:"
UPLOAD_PATTERN = r"^upload:[0-9a-f]{16}$"
FILE_SUFFIXES = (".json", ".toml", ".csv", ".jsonl", ".parquet")
"""Suffixes that make the commands read a file; an id never ends in one."""

Id = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
ModelName = Annotated[str, StringConstraints(pattern=f"{ID_PATTERN}|{UPLOAD_PATTERN}")]
Word = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._+,-]{0,79}$")]
Count = Annotated[int, Field(ge=0, le=10**9)]
Positive = Annotated[int, Field(ge=1, le=10**9)]
Amount = Annotated[float, Field(ge=0, le=1e30)]
Assignment = Annotated[
    str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}=[A-Za-z0-9._+-]{1,64}$")
]
"""One stack override, ``field=value`` (``--stack-set``)."""
StackSet = Annotated[list[Assignment], Field(max_length=32)]


class Body(BaseModel):
    """Strict JSON: unknown keys, NaN and infinities are refused."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    def options(self) -> dict[str, Any]:
        """The fields set away from their defaults: the options to pass."""
        return self.model_dump(exclude_defaults=True)


class ClusterChoice(Body):
    """A catalog cluster, an accelerator (or system) id with a GPU count, or a system and a
    fabric from the catalog with a node count."""

    cluster: Id | None = None
    gpu: Id | None = None
    gpus: Positive | None = None
    system: Id | None = None
    fabric: Id | None = None
    nodes: Positive | None = None


OPEN_FIELDS = ("tp", "pp", "ep", "recompute")
"""Plan fields a request may leave open (None) for the command to choose
(``plan.defaults.open_layout``)."""


class PlanFields(Body):
    """One plan's options, with the defaults the CLI and the API have (``PLAN_DEFAULTS``). The
    widths and the recompute mode that the command chooses where they are left out
    (``OPEN_FIELDS``) default to None, so a value a request gives, the default's included, is
    passed on as given."""

    model: ModelName = DEFAULT_MODEL
    tp: Positive | None = None
    pp: Positive | None = None
    vpp: Positive = PLAN_DEFAULTS.vpp
    dp: Positive | None = None
    cp: Positive = PLAN_DEFAULTS.cp
    ep: Positive | None = None
    etp: Positive = PLAN_DEFAULTS.etp
    cp_mode: Word = PLAN_DEFAULTS.cp_mode
    first_stage_layers: Count = PLAN_DEFAULTS.first_stage_layers
    last_stage_layers: Count = PLAN_DEFAULTS.last_stage_layers
    offload_layers: Count = PLAN_DEFAULTS.offload_layers
    micro_batch: Positive = PLAN_DEFAULTS.micro_batch
    local_batch: Count = PLAN_DEFAULTS.local_batch
    global_batch: Positive | None = None
    global_batch_tokens: Positive | None = None
    seq_len: Positive = PLAN_DEFAULTS.seq_len
    recompute: Word | None = None
    zero: Annotated[int, Field(ge=0, le=3)] | None = None
    sequence_parallel: bool = PLAN_DEFAULTS.sequence_parallel
    precision: Word = PLAN_DEFAULTS.precision
    stack: Word | None = None
    stack_set: StackSet = Field(default_factory=list)
    cuda_graphs: Word | None = None


class EstimateRequest(ClusterChoice, PlanFields):
    """``scalewall estimate``."""


class SearchRequest(ClusterChoice):
    """``scalewall search``."""

    model: ModelName = DEFAULT_MODEL
    global_batch: Positive | None = None
    global_batch_tokens: Positive | None = None
    seq_len: Positive | None = None
    precision: Word = "bf16"
    tp_beyond_scale_up: bool = False
    max_cp: Positive = 32
    max_micro_batch: Positive = 16
    objective: Word = "tokens_per_s"
    token_budget: Amount = 15e12
    top: Positive = 5
    stack: Word | None = None
    stack_set: StackSet = Field(default_factory=list)
    cuda_graphs: Word | None = None


class WallRequest(Body):
    """``scalewall wall`` (one worker per job; the results file is the job's own)."""

    model: ModelName = DEFAULT_MODEL
    cluster: Id | None = None
    gpu: Id | None = None
    system: Id | None = None
    fabric: Id | None = None
    sizes: list[Positive] | None = None
    max_gpus: Positive = 32768
    global_batch: Positive | None = None
    global_batch_tokens: Positive | None = None
    max_global_batch: Positive | None = None
    seq_len: Positive | None = None
    token_budget: Amount = 15e12
    knee_threshold: Annotated[float, Field(gt=0, lt=1)] = 0.5
    goodput: bool = True
    precision: Word = "bf16"
    stack: Word | None = None
    stack_set: StackSet = Field(default_factory=list)


class GoodputRequest(ClusterChoice, PlanFields):
    """``scalewall goodput``."""

    best_plan: bool = False
    storage: Word | None = None
    failure_rates: Word | None = None
    interval: Word = "auto"
    run_days: Annotated[float, Field(gt=0, le=3650)] = 30.0
    step_s: Annotated[float, Field(gt=0, le=1e6)] | None = None
    spare_nodes: Count | None = None
    asynchronous: bool = False
    mc_runs: Count = 10_000
    seed: Count = 0
    what_if: bool = False


class CostRequest(ClusterChoice):
    """``scalewall cost`` (built-in prices only: a price file is a path)."""

    facility: Word = "owned"
    utilisation: Annotated[float, Field(ge=0, le=1)] = 1.0
    tokens_per_s: Amount = 0.0
    model: ModelName | None = None
    seq_len: Count = 0
    mfu: Annotated[float, Field(ge=0, le=1)] = 0.0
    goodput: Annotated[float, Field(gt=0, le=1)] = 1.0
    tokens: Amount = 0.0


OptionText = Annotated[
    str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,79}:\d{1,7}$")
]


class ReportRequest(Body):
    """``scalewall report``: options as ``CLUSTER:GPUS`` or ``GPU:GPUS``."""

    model: ModelName | None = None
    clusters: list[OptionText] = Field(default_factory=list)
    token_budget: Amount | None = None
    target_days: Annotated[float, Field(gt=0, le=36500)] | None = None
    stack: Word | None = None
    stack_set: StackSet = Field(default_factory=list)
    lang: Word = "en"


TraceName = Annotated[
    str,
    StringConstraints(
        pattern=r"^(openb(:[A-Za-z0-9_.-]+)?|synthetic:\w+:\d{1,6}(:\d{1,4}(\.\d+)?)?)$"
    ),
]


class SimulateRequest(Body):
    """``scalewall simulate`` on a shipped (openb) or synthetic trace."""

    trace: TraceName = "openb"
    cluster: Id = "openb"
    nodes: Count = 0
    gpus_per_node: Positive = 8
    nodes_per_domain: Positive = 1
    gpu_model: Word = "H100"
    queue: Word = "fifo"
    placement: Word = "bestfit"
    seed: Count = 0
    demand: Annotated[float, Field(ge=0, le=100)] = 0.0
    failures: bool = False
    failure_rate: Annotated[float, Field(ge=0, le=1e6)] = 6.5
    repair_hours: Annotated[float, Field(ge=0, le=1e5)] = 4.0
    spare_nodes: Count = 0
    checkpoint_interval_s: Annotated[float, Field(gt=0, le=1e9)] = 3600.0
    slowdown_per_tier: Annotated[float, Field(ge=0, le=100)] = 0.05
    step_model: Word | None = None
    step_cluster: Word | None = None
    sample_interval_s: Annotated[float, Field(ge=60, le=1e9)] = 3600.0


BatchRuleText = Annotated[
    str, StringConstraints(pattern=r"^(tokens|seqs|per-gpu)=[1-9][0-9]{0,11}$")
]
Axis = Annotated[list[Id], Field(max_length=64)]


class ExploreRequest(Body):
    """``scalewall explore``: one plan search per point of models x designs x sizes x batch
    rules (a design is an accelerator or a catalog cluster, on each fabric given). The job
    writes its dataset in its own folder; the result is the summary with the frontier."""

    models: Annotated[list[ModelName], Field(min_length=1, max_length=64)] = Field(
        default_factory=lambda: [DEFAULT_MODEL]
    )
    gpus: Axis = Field(default_factory=list)
    clusters: Axis = Field(default_factory=list)
    sizes: Annotated[list[Positive], Field(min_length=1, max_length=64)] = Field(
        default_factory=lambda: [64, 128, 256]
    )
    fabrics: Axis = Field(default_factory=list)
    batch: Annotated[list[BatchRuleText], Field(max_length=16)] = Field(default_factory=list)
    seq_len: Positive | None = None
    precision: Word | None = None
    """Comma-separated precisions (default: the command's)."""
    max_cp: Positive | None = None
    max_micro_batch: Positive | None = None
    tp: Annotated[list[Positive], Field(max_length=16)] = Field(default_factory=list)
    pp: Annotated[list[Positive], Field(max_length=16)] = Field(default_factory=list)
    stack: Word | None = None
    stack_set: StackSet = Field(default_factory=list)
    token_budget: Amount | None = None

    def options(self) -> dict[str, Any]:
        """Every axis given explicitly (so ``points`` counts what runs); an empty axis or a
        None is the command's default."""
        return {k: v for k, v in self.model_dump().items() if v not in ([], None)}

    def points(self) -> int:
        """Points of the grid (``explore.grid.build``'s product, before any is searched)."""
        designs = (len(self.gpus) + len(self.clusters) or 1) * (len(self.fabrics) or 1)
        return len(self.models) * designs * len(set(self.sizes)) * (len(self.batch) or 1)


class UploadRequest(Body):
    """An uploaded HuggingFace ``config.json``: its name and its parsed content."""

    name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._()+-]{0,79}$")]
    config: dict[str, Any]


FLAG_NAMES = {"asynchronous": "async"}
"""Fields whose option is not the field name with dashes."""
LIST_OPTIONS = {"clusters": "cluster", "stack_set": "stack-set"}
"""List fields passed as a repeated option."""
COMMA_LISTS = {"explore": ("clusters",)}
"""Commands whose list field is one comma-separated option although ``LIST_OPTIONS`` names it."""


def command_line(options: dict[str, Any], kind: str = "") -> list[str]:
    """``{"global_batch": 512, "sequence_parallel": False}`` ->
    ``["--global-batch", "512", "--no-sequence-parallel"]``."""
    argv: list[str] = []
    repeated = {k: v for k, v in LIST_OPTIONS.items() if k not in COMMA_LISTS.get(kind, ())}
    for name, value in options.items():
        if value is None:
            continue
        flag = FLAG_NAMES.get(name, name).replace("_", "-")
        if isinstance(value, bool):
            argv.append(f"--{flag}" if value else f"--no-{flag}")
        elif name in repeated:
            for item in value:
                argv += [f"--{repeated[name]}", str(item)]
        elif isinstance(value, list):
            argv += [f"--{flag}", ",".join(str(v) for v in value)]
        else:
            argv += [f"--{flag}", repr(value) if isinstance(value, float) else str(value)]
    return argv


def check_ids(options: dict[str, Any]) -> None:
    """No id may name a file (the commands read a path ending in .json or .toml)."""
    for name, value in options.items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item.lower().endswith(FILE_SUFFIXES):
                raise SpecError(name, item, "a catalog id; upload a config.json instead of a path")


def check_limits(kind: str, options: dict[str, Any], limits: Limits) -> None:
    """Raise SpecError for a request past one of ``limits``."""
    bounds = {
        "gpus": limits.max_gpus,
        "max_gpus": limits.max_gpus,
        "top": limits.max_top,
        "mc_runs": limits.max_monte_carlo_runs,
    }
    for name, bound in bounds.items():
        # explore's ``gpus`` is a list of accelerator ids, not a count
        value = options.get(name)
        if isinstance(value, int | float) and value > bound:
            raise SpecError(name, options[name], f"at most {bound} in scalewall serve")
    sizes = options.get("sizes") or []
    if len(sizes) > limits.max_sizes:
        raise SpecError("sizes", sizes, f"at most {limits.max_sizes} sizes per sweep")
    if sizes and max(sizes) > limits.max_gpus:
        raise SpecError("sizes", sizes, f"sizes of at most {limits.max_gpus} GPUs")
    if kind == "explore" and options.get("_points", 0) > limits.max_explore_points:
        raise SpecError(
            "points",
            options["_points"],
            f"at most {limits.max_explore_points} (models x designs x sizes x batch rules)",
        )
    if kind == "wall" and not sizes and options.get("max_gpus", 32768) > limits.max_gpus:
        raise SpecError("max_gpus", options["max_gpus"], f"at most {limits.max_gpus}")
    if kind == "report":
        _check_report_options(options.get("clusters") or [], limits)
    trace = str(options.get("trace", ""))
    if trace.startswith("synthetic:") and int(trace.split(":")[2]) > limits.max_synthetic_jobs:
        raise SpecError("trace", trace, f"at most {limits.max_synthetic_jobs} synthetic jobs")


def _check_report_options(clusters: list[str], limits: Limits) -> None:
    if len(clusters) > limits.max_options:
        raise SpecError("clusters", clusters, f"at most {limits.max_options} options")
    for text in clusters:
        if int(text.rpartition(":")[2]) > limits.max_gpus:
            raise SpecError("clusters", text, f"at most {limits.max_gpus} GPUs per option")


def upload_id(text: str) -> str | None:
    """The upload id of ``upload:<id>``, else None."""
    match = re.fullmatch(UPLOAD_PATTERN, text)
    return text[len(UPLOAD_PREFIX) :] if match else None
