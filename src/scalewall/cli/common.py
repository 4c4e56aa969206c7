"""Options shared by the subcommands that take a model, a cluster and a plan."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scalewall import catalog
from scalewall.catalog.schema import ModelSpec
from scalewall.cluster import resolve_cluster
from scalewall.errors import ScalewallError, SpecError
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.plan.defaults import DEFAULT_GPU, DEFAULT_GPUS, PLAN_DEFAULTS, plan_from_fields
from scalewall.plan.plan import ParallelPlan
from scalewall.plan.topology import Cluster
from scalewall.stack import DEFAULT_STACK, parse_assignments, resolve_stack, stack_ids
from scalewall.workload.user import model_from_args

if TYPE_CHECKING:
    from scalewall.calibrate import Calibration

ModelOpt = Annotated[
    str,
    typer.Option(
        "--model", "-m", help="Catalog model id, a HuggingFace config.json, or a TOML file."
    ),
]
ClusterOpt = Annotated[
    str | None, typer.Option("--cluster", "-c", help="Catalog cluster id or a cluster TOML file.")
]
GpuOpt = Annotated[
    str | None,
    typer.Option("--gpu", help="Accelerator (or system) id, with --gpus, instead of --cluster."),
]
GpusOpt = Annotated[int | None, typer.Option("--gpus", "-n", help="Number of GPUs.")]
ExecutorOpt = Annotated[
    str,
    typer.Option(
        "--executor", help="Where independent tasks run: local (worker processes) or ray."
    ),
]
RayAddressOpt = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="Ray cluster to join with --executor ray (host:port, ray://head:10001, auto); "
        "default: start or join a local Ray instance.",
    ),
]
StackOpt = Annotated[
    str,
    typer.Option(
        "--stack",
        help=f"Software stack (catalog id or alias; `scalewall catalog stacks` lists them; "
        f"default {DEFAULT_STACK}).",
    ),
]
StackSetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--stack-set",
        help="Override one stack field, field=value (repeatable), e.g. "
        "--stack-set tp_comm_overlap_frac=0 --stack-set grad_reduce_bytes=2.",
    ),
]
CudaGraphsOpt = Annotated[
    str | None,
    typer.Option(
        "--cuda-graphs",
        help="What the stack captures in CUDA graphs: none, router, attention, layer or full "
        "(default: the preset's; removes the host's kernel-issue time from what it captures).",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
WideOpt = Annotated[
    bool,
    typer.Option(
        "--wide", help="Show every table column (lines may wrap); default: what fits the width."
    ),
]
# Plan flags shared by every subcommand that takes one plan; their defaults are
# PLAN_DEFAULTS (scalewall.plan.defaults), which the API and the web app read too.
TpOpt = Annotated[
    int | None,
    typer.Option(
        help="Tensor-parallel width. Left out: with --pp (and --ep for an MoE model), the "
        "fastest layout that fits in memory, tp 1, 2, 4 or 8 dividing the heads (1 or 2 for "
        "an MoE model; 1 where the stack has none); where none fits, "
        f"{PLAN_DEFAULTS.tp} or the largest of 4, 2, 1 that lays out."
    ),
]
PpOpt = Annotated[
    int | None,
    typer.Option(
        help="Pipeline stages. Left out: with --tp, the fastest layout that fits, in powers of "
        f"two (1 where the stack has none); where none fits, {PLAN_DEFAULTS.pp} or the largest "
        "of 2, 1 that lays out."
    ),
]
VppOpt = Annotated[
    int | None,
    typer.Option(help=f"Virtual stages per pipeline rank (default {PLAN_DEFAULTS.vpp})."),
]
DpOpt = Annotated[int | None, typer.Option(help="Data-parallel replicas (default: fill).")]
CpOpt = Annotated[
    int | None,
    typer.Option(
        help=f"Context-parallel width (default {PLAN_DEFAULTS.cp}; 1 where the stack has none)."
    ),
]
EpOpt = Annotated[
    int | None,
    typer.Option(
        help=f"Expert-parallel width (MoE; default {PLAN_DEFAULTS.ep} for a dense model). Left "
        "out for an MoE model, chosen with --tp and --pp: the fastest layout that fits."
    ),
]
EtpOpt = Annotated[int, typer.Option(help="Expert tensor-parallel width (MoE).")]
CpModeOpt = Annotated[
    str, typer.Option(help="Context parallelism: ring (KV ring) or a2a (Ulysses).")
]
FirstStageLayersOpt = Annotated[
    int | None,
    typer.Option(
        help="Layers on the first pipeline stage (0: even split; default: the stack's split, "
        "even or, for nanotron, balanced by compute).",
        show_default=False,
    ),
]
LastStageLayersOpt = Annotated[
    int | None,
    typer.Option(
        help="Layers on the last pipeline stage (0: even split; default: the stack's split).",
        show_default=False,
    ),
]
OffloadLayersOpt = Annotated[
    int | None,
    typer.Option(
        help="Layers whose activations go to host memory and back (Megatron-Core "
        "cpu_offloading_num_layers; pp 1, no recompute; default 0: none).",
        show_default=False,
    ),
]
MicroBatchOpt = Annotated[int, typer.Option(help="Sequences per micro-batch.")]
LocalBatchOpt = Annotated[
    int,
    typer.Option(
        help="Sequences per replica in one forward-backward call (torchtitan's and NeMo "
        "AutoModel's local_batch_size: a pipeline schedule per call; 0: the whole "
        "per-replica batch in one)."
    ),
]
GlobalBatchOpt = Annotated[
    int | None,
    typer.Option(help=f"Sequences per step (default {PLAN_DEFAULTS.global_batch})."),
]
GlobalBatchTokensOpt = Annotated[
    int | None, typer.Option(help="Tokens per step, instead of --global-batch.")
]
SeqLenOpt = Annotated[int, typer.Option(help="Sequence length in tokens.")]
RecomputeOpt = Annotated[
    str | None,
    typer.Option(
        help=f"none, selective or full (default {PLAN_DEFAULTS.recompute}, or full where that "
        "lets an open layout fit or run faster; none or full where the stack has no selective "
        "mode)."
    ),
]
ZeroOpt = Annotated[
    int | None,
    typer.Option(
        help="0 all-reduce, 1 distributed optimizer, 2, 3 (default: the stack's sharding)."
    ),
]
SequenceParallelOpt = Annotated[
    bool | None,
    typer.Option(
        "--sequence-parallel/--no-sequence-parallel",
        help="Megatron sequence parallelism (default on, off where the stack has none).",
    ),
]
PrecisionOpt = Annotated[
    str, typer.Option(help="bf16, fp16, fp8 (per-tensor), fp8-block, mxfp8 or nvfp4.")
]
CalibrationOpt = Annotated[
    Path | None,
    typer.Option("--calibration", help="Calibration profile from `scalewall calibrate` (TOML)."),
]


def load_model(spec: str) -> ModelSpec:
    """A model from a catalog id, a HuggingFace config.json, or a TOML file."""
    return model_from_args(spec)


def load_cluster(cluster: str | None, gpu: str | None, gpus: int | None) -> Cluster:
    """The cluster named, or ``gpus`` of ``gpu``; with neither, ``DEFAULT_GPUS`` (or
    ``gpus``) of the ``DEFAULT_GPU``."""
    if cluster is None and gpu is None:
        gpu, gpus = DEFAULT_GPU, DEFAULT_GPUS if gpus is None else gpus
    return resolve_cluster(cluster, gpu=gpu, gpus=gpus)


def load_stack(
    name: str | None, cuda_graphs: str | None = None, stack_set: list[str] | None = None
) -> Stack:
    """The stack ``--stack`` names (default: the catalog default), with ``--stack-set``
    overrides and ``--cuda-graphs`` (a shorthand for ``--stack-set cuda_graphs=...``)."""
    overrides = parse_assignments(stack_set or [])
    if cuda_graphs is not None:
        overrides["cuda_graphs"] = cuda_graphs
    return resolve_stack(name or DEFAULT_STACK, overrides, where="--stack-set")


def load_calibration(path: Path | None) -> Calibration | None:
    """A calibration profile, or None without one; a defect is a one-line error."""
    if path is None:
        return None
    from scalewall.calibrate import read_profile

    return read_profile(path)


def load_efficiency(path: Path | None) -> Efficiency:
    """The step model's constants: the defaults, with a calibration profile's fitted values."""
    cal = load_calibration(path)
    return cal.efficiency() if cal else Efficiency()


def parse_sizes(text: str) -> list[int]:
    """A comma-separated list of positive integers (``8,64,512``)."""
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SpecError(
            "sizes", text, "a comma-separated list of integers, e.g. 8,64,512"
        ) from None
    if not sizes or min(sizes) < 1:
        raise SpecError("sizes", text, "positive integers")
    return sizes


def plan_from_options(
    cluster: Cluster,
    model: ModelSpec,
    stack: Stack,
    *,
    global_batch_tokens: int | None = None,
    efficiency: Efficiency | None = None,
    **fields: Any,
) -> ParallelPlan:
    """A plan from CLI flags (``fields`` are ParallelPlan fields; None: the default): the
    resolver the Python API uses too (``dp`` fills the cluster, ``zero`` is the stack's, open
    widths are the fastest layout that fits, ranked with ``efficiency``)."""
    return plan_from_fields(
        cluster,
        model,
        fields,
        zero=stack.zero_stage,
        global_batch_tokens=global_batch_tokens,
        stack=stack,
        efficiency=efficiency,
    )


def check_output_path(option: str, path: Path | None, *, directory: bool = False) -> None:
    """Raise before any work starts if ``path`` cannot be written: an existing entry of the
    other kind (a folder where a file goes, or a file where a folder goes), or a nearest
    existing parent that is not a writable folder. Missing parent folders are created on
    write."""
    if path is None:
        return
    kind = "a folder" if directory else "a file"
    if path.exists() and path.is_dir() != directory:
        raise SpecError(option, str(path), f"exists and is not {kind}; give a path for {kind}")
    parent = path.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise SpecError(option, str(path), f"{parent} is not a folder; give a path for {kind}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise SpecError(option, str(path), f"the folder {parent} is not writable")


def read_json_file(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except OSError as exc:
        raise ScalewallError(f"{path}: cannot read: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise ScalewallError(f"{path}: line {exc.lineno}: not valid JSON: {exc.msg}") from None


__all__ = [
    "PLAN_DEFAULTS",
    "CalibrationOpt",
    "ClusterOpt",
    "CpModeOpt",
    "CpOpt",
    "CudaGraphsOpt",
    "DpOpt",
    "EpOpt",
    "EtpOpt",
    "FirstStageLayersOpt",
    "GlobalBatchOpt",
    "GlobalBatchTokensOpt",
    "GpuOpt",
    "GpusOpt",
    "JsonOpt",
    "LastStageLayersOpt",
    "LocalBatchOpt",
    "MicroBatchOpt",
    "ModelOpt",
    "OffloadLayersOpt",
    "PpOpt",
    "PrecisionOpt",
    "RecomputeOpt",
    "SeqLenOpt",
    "SequenceParallelOpt",
    "StackOpt",
    "StackSetOpt",
    "TpOpt",
    "VppOpt",
    "WideOpt",
    "ZeroOpt",
    "catalog",
    "check_output_path",
    "load_calibration",
    "load_cluster",
    "load_efficiency",
    "load_model",
    "load_stack",
    "parse_sizes",
    "plan_from_options",
    "read_json_file",
    "stack_ids",
]
