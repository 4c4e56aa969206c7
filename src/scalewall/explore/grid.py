"""The grid of an exploration: models x cluster designs x sizes x fabrics x batch rules.

Each point is one plan search (the ``search`` command's, top 1) of a model on a design built at
a size, under a batch rule; its key hashes the point and everything the search depends on
(search space, stack, efficiency, sequence length, token budget and the model code), so a rerun
recognises finished points.
"""

from __future__ import annotations

import dataclasses
import itertools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scalewall import catalog
from scalewall.catalog.schema import ModelSpec
from scalewall.errors import SpecError
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.search.objective import DEFAULT_TOKEN_BUDGET, check_token_budget
from scalewall.search.space import SearchSpace
from scalewall.stack import resolve_stack
from scalewall.sweep import store
from scalewall.sweep.wall import ClusterDesign, cluster_design
from scalewall.workload.user import model_from_args

BATCH_KINDS = ("tokens", "seqs", "per-gpu")
"""Batch rules: ``tokens=N`` tokens per step, ``seqs=N`` sequences per step, ``per-gpu=N``
sequences per GPU (the batch grows with the cluster)."""
DEFAULT_BATCH = "tokens=16777216"
"""16M tokens per step, the search's own default."""


@dataclass(frozen=True, kw_only=True)
class BatchRule:
    kind: str
    value: int

    @classmethod
    def parse(cls, text: str) -> BatchRule:
        kind, _, number = text.strip().partition("=")
        valid = "tokens=N, seqs=N or per-gpu=N (N a positive integer)"
        try:
            value = int(float(number)) if number else 0
        except ValueError:
            value = 0
        if kind not in BATCH_KINDS or value < 1:
            raise SpecError("batch", text, valid)
        return cls(kind=kind, value=value)

    @property
    def text(self) -> str:
        return f"{self.kind}={self.value}"

    def global_batch(self, gpus: int, seq_len: int) -> int:
        """Sequences per step at ``gpus`` GPUs."""
        if self.kind == "tokens":
            return max(1, self.value // seq_len)
        return self.value if self.kind == "seqs" else self.value * gpus


@dataclass(frozen=True, kw_only=True)
class Point:
    """One search: ``model`` on ``design`` (a label of ``ExploreConfig.designs``) at ``gpus``."""

    model: str
    design: str
    gpus: int
    batch: str
    key: str


@dataclass(frozen=True, kw_only=True)
class ExploreConfig:
    """What every point's search depends on besides the point (picklable)."""

    models: dict[str, ModelSpec]
    designs: dict[str, ClusterDesign]
    space: SearchSpace
    stack: Stack
    efficiency: Efficiency = field(default_factory=Efficiency)
    seq_len: int | None = None
    """Sequence length (None: the search's default, capped by the model)."""
    token_budget: float = DEFAULT_TOKEN_BUDGET


@dataclass(frozen=True, kw_only=True)
class ExploreSpec:
    """The axes of an exploration as the user gives them (ids and rules)."""

    models: tuple[str, ...] = ("llama3-8b",)
    gpus: tuple[str, ...] = ()
    """Accelerator or system ids, each resized with its default system and fabric."""
    clusters: tuple[str, ...] = ()
    """Catalog cluster ids or TOML files, each resized."""
    sizes: tuple[int, ...] = (64, 128, 256, 512, 1024)
    fabrics: tuple[str, ...] = ()
    """Fabric ids to try on every design (empty: each design's own)."""
    batch: tuple[str, ...] = (DEFAULT_BATCH,)
    seq_len: int | None = None
    precisions: tuple[str, ...] = ("bf16",)
    max_cp: int = SearchSpace.max_cp
    max_micro_batch: int = SearchSpace.max_micro_batch
    tp: tuple[int, ...] = ()
    """Only these TP widths (empty: every valid one)."""
    pp: tuple[int, ...] = ()
    """Only these PP widths (empty: every valid one)."""
    stack: str | None = None
    stack_set: tuple[str, ...] = ()
    """Overrides of the stack's fields, ``field=value`` each (``--stack-set``)."""
    token_budget: float = DEFAULT_TOKEN_BUDGET


_LIST_FIELDS = {
    "models", "gpus", "clusters", "sizes", "fabrics", "batch", "precisions", "tp", "pp",
    "stack_set",
}  # fmt: skip


def load_spec(path: Path) -> ExploreSpec:
    """An ``ExploreSpec`` from a TOML file whose keys are its fields (lists for the axes)."""
    try:
        raw = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SpecError("grid", str(path), f"a readable TOML file ({exc})") from exc
    names = {f.name for f in dataclasses.fields(ExploreSpec)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        name = key.replace("-", "_")
        if name not in names:
            raise SpecError(key, value, f"one of {', '.join(sorted(names))}", where=str(path))
        if name in _LIST_FIELDS:
            if not isinstance(value, list):
                raise SpecError(key, value, "a list", where=str(path))
            value = tuple(value)
        values[name] = value
    return ExploreSpec(**values)


def _designs(spec: ExploreSpec) -> dict[str, ClusterDesign]:
    bases = [(g, cluster_design(None, g)) for g in spec.gpus]
    bases += [(Path(c).stem, cluster_design(c, None)) for c in spec.clusters]
    if not bases:
        bases = [("h100-sxm-80gb", cluster_design(None, "h100-sxm-80gb"))]
    designs: dict[str, ClusterDesign] = {}
    for (label, base), fabric_id in itertools.product(bases, spec.fabrics or ("",)):
        design = base
        if fabric_id:
            fabric = catalog.fabric(fabric_id)
            design = dataclasses.replace(base, fabric=fabric, link=catalog.link(fabric.link))
        designs[f"{label}/{design.fabric.id}"] = design
    return designs


def _check(spec: ExploreSpec) -> None:
    if not spec.models:
        raise SpecError("models", spec.models, "one or more model ids or files")
    if not spec.sizes or min(spec.sizes) < 1:
        raise SpecError("sizes", spec.sizes, "one or more positive GPU counts")
    if spec.seq_len is not None and spec.seq_len < 1:
        raise SpecError("seq_len", spec.seq_len, "a positive number of tokens")
    check_token_budget(spec.token_budget)


def check_spec(spec: ExploreSpec) -> None:
    """Raise the ``SpecError`` that ``build`` would for ``spec``, without listing its points
    (a command checks its input before it shows progress)."""
    _check(spec)
    for rule in spec.batch:
        BatchRule.parse(rule)
    for name in spec.models:
        model_from_args(name)
    _designs(spec)
    resolve_stack(spec.stack, spec.stack_set, where="stack_set")


def build(spec: ExploreSpec) -> tuple[ExploreConfig, list[Point]]:
    """The config and the points of ``spec``, in axis order (models, designs, sizes, batch)."""
    _check(spec)
    rules = [BatchRule.parse(b) for b in spec.batch] or [BatchRule.parse(DEFAULT_BATCH)]
    models = {m.id: m for m in (model_from_args(name) for name in spec.models)}
    space = SearchSpace(
        precisions=spec.precisions,
        max_cp=spec.max_cp,
        max_micro_batch=spec.max_micro_batch,
        tp_values=spec.tp,
        pp_values=spec.pp,
    )
    config = ExploreConfig(
        models=models,
        designs=_designs(spec),
        space=space,
        stack=resolve_stack(spec.stack, spec.stack_set, where="stack_set"),
        seq_len=spec.seq_len,
        token_budget=spec.token_budget,
    )
    shared = settings_key(config)
    points = [
        Point(
            model=m,
            design=d,
            gpus=g,
            batch=r.text,
            key=store.key_of(
                {
                    "settings": shared,
                    "model": dataclasses.asdict(models[m]),
                    "design": d,
                    "system": dataclasses.asdict(config.designs[d]),
                    "gpus": g,
                    "batch": r.text,
                }
            )[:32],
        )
        for m, d, g, r in itertools.product(models, config.designs, sorted(set(spec.sizes)), rules)
    ]
    return config, points


def settings_key(config: ExploreConfig) -> str:
    """A hash of the settings every point shares and of the model code."""
    return store.key_of(
        {
            "space": dataclasses.asdict(config.space),
            "stack": dataclasses.asdict(config.stack),
            "efficiency": config.efficiency.flat(),
            "seq_len": config.seq_len,
            "token_budget": config.token_budget,
            "code": store.code_fingerprint(),
        }
    )[:32]
