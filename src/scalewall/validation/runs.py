"""Reader for the ``scalewall-runs/1`` format: published training runs and how to model them."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from scalewall import catalog
from scalewall.catalog.schema import Fabric, Link, ModelSpec, System
from scalewall.cluster import default_system
from scalewall.errors import ScalewallError, SpecError
from scalewall.perf.assumptions import Stack, preset
from scalewall.plan.topology import Cluster, make_cluster_from_parts
from scalewall.units import gbps_to_bytes_per_s

FORMAT = "scalewall-runs/1"
DEFAULT_VOCAB = 50257
"""GPT-2's BPE vocabulary, Megatron's default for GPT shapes when a source gives none."""
VOCAB_PAD_MULTIPLE = 128
"""Megatron pads the vocabulary to a multiple of 128 x tp (``make_vocab_size_divisible_by``)."""
GELU_FFN_MULTIPLE = 4
"""GPT-style FFN width (4 x hidden) when a source gives none."""


@dataclass(frozen=True, kw_only=True)
class Case:
    """One published run: what was trained, how, on what, and what was measured."""

    id: str
    source: str
    model: ModelSpec
    training: dict[str, Any]
    plan: dict[str, Any]
    hardware: dict[str, Any]
    published: dict[str, Any]
    stack: Stack

    @property
    def group(self) -> str:
        for prefix in (
            "megatron_sc21",
            "megatron_core_h100",
            "korthikanti",
            "llama3",
            "vtrain_multi",
            "frontier",
            "megascale",
        ):
            if self.id.startswith(prefix):
                return prefix
        return self.id.rsplit("_", 1)[0]


def default_runs_path() -> Path:
    """The copy of the published runs shipped in the package."""
    return Path(str(resources.files("scalewall.validation") / "data" / "published_runs.json"))


def scaling_runs_path() -> Path:
    """Published scaling series (one model and plan over many cluster sizes) shipped in the
    package."""
    return Path(str(resources.files("scalewall.validation") / "data" / "scaling_runs.json"))


def frontier_runs_path() -> Path:
    """Published mixture-of-experts, FP8 and Blackwell runs shipped in the package."""
    return Path(str(resources.files("scalewall.validation") / "data" / "frontier_runs.json"))


CUDA_GRAPH_PHRASES = {
    "full-iteration cuda graphs": "full",
    "cuda graphs of whole layers": "layer",
    "cuda graphs of attention and router": "attention",
    "cuda graphs of the router": "router",
}
"""Phrases of a case's ``stack`` text naming what the run captured in CUDA graphs (absent or
"no CUDA graphs": nothing)."""


BF16_GRADIENTS_PHRASE = "bf16 gradient reduction"
"""Phrase of a case's ``stack`` text stating that gradients were accumulated and reduced in BF16
rather than the Megatron default FP32."""
BF16_GRADIENT_BYTES = 2.0


def stack_for(text: str, source: str = "") -> Stack:
    """The software-stack preset a case's ``stack`` description names, with the CUDA-graph
    capture its text states; Megatron-Core runs whose source is a Megatron-Bridge performance
    table, or whose stack text names a NeMo 2.0 performance recipe (the recipes Megatron-Bridge
    took over, NeMo containers 25.x), get the Megatron-Bridge presets."""
    stack = _preset_for(text, source)
    if BF16_GRADIENTS_PHRASE in text.lower():
        stack = replace(stack, grad_reduce_bytes=BF16_GRADIENT_BYTES)
    for phrase, scope in CUDA_GRAPH_PHRASES.items():
        if phrase in text.lower():
            return replace(stack, cuda_graphs=scope)
    return stack


def _preset_for(text: str, source: str) -> Stack:
    lowered = text.lower()
    recipes = "megatron-bridge" in source.lower() or "nemo 2.0 performance recipe" in lowered
    if recipes and "megatron-core" in lowered:
        if "all-to-all overlap" in lowered and "no expert all-to-all overlap" not in lowered:
            return preset("megatron-bridge-moe")
        return preset("megatron-bridge")
    if "dualpipe" in lowered:
        return preset("deepseek-v3")
    if "all-to-all overlap" in lowered and "no expert all-to-all overlap" not in lowered:
        return preset("megatron-core-moe")
    if "deepspeed" in lowered:
        return preset("megatron-deepspeed")
    if "2021" in lowered:
        return preset("megatron-2021")
    if "2022" in lowered:
        return preset("megatron-2022")
    if "meta" in lowered:
        return preset("fsdp-2024")
    return preset("megatron-core")


def _model(case_id: str, data: dict[str, Any], tp: int) -> ModelSpec:
    if data.get("catalog"):
        # Shapes the format has no fields for (MLA, MTP): the catalog entry the case names;
        # ``mtp_layers`` (an extension key) states a run trained without, or with fewer,
        # multi-token-prediction modules than the catalog shape.
        spec = catalog.model(data["catalog"])
        if data.get("mtp_layers") is not None:
            spec = replace(spec, mtp_layers=int(data["mtp_layers"]))
        return spec
    vocab = data.get("vocab") or DEFAULT_VOCAB
    multiple = VOCAB_PAD_MULTIPLE * tp
    vocab = -(-vocab // multiple) * multiple
    moe = data.get("moe") or {}
    return ModelSpec(
        id=case_id,
        name=case_id,
        layers=data["layers"],
        hidden=data["hidden"],
        heads=data["heads"],
        kv_heads=data.get("kv_heads") or data["heads"],
        ffn_hidden=data.get("ffn_hidden") or GELU_FFN_MULTIPLE * data["hidden"],
        vocab=vocab,
        activation=data.get("activation") or "gelu",
        source="validation case",
        position_embedding="learned" if (data.get("activation") or "gelu") == "gelu" else "rope",
        norm="layernorm" if (data.get("activation") or "gelu") == "gelu" else "rmsnorm",
        linear_bias=(data.get("activation") or "gelu") == "gelu",
        dropout=(data.get("activation") or "gelu") == "gelu",
        params_published=float(data.get("params") or 0.0),
        routed_experts=moe.get("routed_experts") or 0,
        shared_experts=moe.get("shared_experts") or 0,
        top_k=moe.get("top_k") or 0,
        expert_ffn_hidden=moe.get("expert_ffn_hidden") or 0,
        first_dense_layers=moe.get("first_dense_layers") or 0,
    )


def _link(transport: str, nic_bytes_per_s: float) -> Link:
    links = sorted(catalog.links().values(), key=lambda x: x.id)
    kind = "roce" if transport == "roce" else "infiniband"
    for link in links:
        if link.transport == kind and link.bytes_per_s == nic_bytes_per_s:
            return link
    return min(links, key=lambda x: abs(x.bytes_per_s - nic_bytes_per_s))


def case_cluster(hw: dict[str, Any]) -> Cluster:
    """The cluster a case ran on, built from its hardware description and catalog defaults."""
    accelerator = catalog.accelerator(hw["gpu"])
    base = default_system(accelerator.id)
    gpn = hw.get("gpus_per_node") or base.gpus_per_node
    if hw.get("nic_gbps") and hw.get("nics_per_node"):
        nics, nic_bw = hw["nics_per_node"], gbps_to_bytes_per_s(hw["nic_gbps"])
    elif hw.get("node_scale_out_gbps"):
        nics, nic_bw = gpn, gbps_to_bytes_per_s(hw["node_scale_out_gbps"]) / gpn
    else:
        nics, nic_bw = base.nics_per_node, base.nic_bytes_per_s
    system = System(
        id="case",
        name="case",
        accelerator=accelerator.id,
        gpus_per_node=gpn,
        scale_up_domain_gpus=hw.get("scale_up_domain_gpus") or gpn,
        nics_per_node=nics,
        nic_bytes_per_s=nic_bw,
        scale_up_in_network_reduction=base.scale_up_in_network_reduction,
        source="validation case",
    )
    link = _link(hw.get("transport") or "", nic_bw)
    oversub = float(hw.get("oversubscription_above_pod") or 1.0)
    fabric = Fabric(
        id="case",
        name="case",
        link=link.id,
        wiring="rail-optimized",
        tiers=3,
        oversubscription=[1.0, oversub],
        pod_gpus=hw.get("pod_gpus") or 0,
        source="validation case",
    )
    return make_cluster_from_parts(
        system=system,
        fabric=fabric,
        link=link,
        accelerator=accelerator,
        num_gpus=hw["gpus"],
        name="case",
    )


def read_runs(path: Path | None = None) -> list[Case]:
    """Read a ``scalewall-runs/1`` file (default: the files shipped with scalewall, the
    published runs, the frontier runs and the scaling series)."""
    if path is None:
        return (
            _read_file(default_runs_path())
            + _read_file(frontier_runs_path())
            + _read_file(scaling_runs_path())
        )
    return _read_file(path)


def _read_file(path: Path) -> list[Case]:
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise ScalewallError(f"{path}: cannot read: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise ScalewallError(f"{path}: line {exc.lineno}: not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else None
        raise SpecError("format", found, f"expected {FORMAT!r}", where=str(path))
    cases = []
    for index, raw in enumerate(data.get("cases", [])):
        where = f"{path}: case {index} ({raw.get('id', '?')})"
        try:
            plan = raw["plan"]
            cases.append(
                Case(
                    id=raw["id"],
                    source=raw.get("source", ""),
                    model=_model(raw["id"], raw["model"], plan.get("tp") or 1),
                    training=raw["training"],
                    plan=plan,
                    hardware=raw["hardware"],
                    published=raw["published"],
                    stack=stack_for(plan.get("stack") or "", raw.get("source", "")),
                )
            )
        except KeyError as exc:
            raise SpecError(
                str(exc.args[0]), None, "required key is missing", where=where
            ) from None
    return cases
