"""Sanity checks on the built-in catalog data: required ids, cross references, shapes, citations.

Citation rule (enforced by ``test_every_number_is_cited``): every non-zero number an entry file sets
must appear, in some unit, in the citation that covers it: ``sources[field]`` when the entry has
one for that field, else the main ``source``. "In some unit" means the cited text holds a number
that equals the value after one of the unit changes in ``_UNIT_SCALES`` (TFLOP/s, GB/s, Gb/s,
bidirectional GB/s, ns, kW, %, MiB, GiB, ...) within 0.5 % (citations round: 1,979 for
1,978.9 TFLOP/s).
A figure derived from a citation (a rack total divided per GPU, a bidirectional rate halved) must
therefore be written out in the citation, so a change to a number without a change to its
citation fails here. Oversubscription ratios of 1.0 (full bisection) are exempt.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import fields
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from scalewall import catalog
from scalewall.catalog.loader import KINDS
from scalewall.workload.counts import active_param_count, param_count

DATA_ROOT = Path(catalog.__file__).parent / "data"
# ../shared beside the checkout (read-only material for tests).
VALIDATION_RUNS = (
    Path(__file__).resolve().parents[4] / "shared" / "validation" / "published_runs.json"
)

REQUIRED: dict[str, set[str]] = {
    "accelerators": {
        "a100-sxm-40gb",
        "a100-sxm-80gb",
        "h100-sxm-80gb",
        "h800",
        "h200",
        "b200",
        "gb200",
        "gb300",
        "mi300x",
        "mi325x",
        "ascend-910b",
    },
    "systems": {
        "dgx-a100",
        "dgx-a100-40gb",
        "dgx-h100",
        "hgx-h800",
        "hgx-h200",
        "dgx-b200",
        "gb200-nvl72",
        "gb300-nvl72",
        "mi300x-platform",
        "mi325x-platform",
        "ascend-910b-node",
    },
    "links": {"ib-hdr", "ib-ndr", "ib-xdr", "roce-200", "roce-400", "roce-800"},
    "fabrics": {
        "hdr-rail-2tier",
        "hdr-rail-3tier",
        "ndr-rail-2tier",
        "ndr-rail-3tier",
        "xdr-rail-2tier",
        "roce400-rail-3tier",
        "roce400-tor-3tier-oversub",
        "llama3-roce-3tier",
        "selene-hdr",
        "deepseek-ib",
    },
    "clusters": {
        "selene",
        "llama3-24k",
        "dgx-h100-superpod-1024",
        "h100-16k-ndr",
        "deepseek-v3-2048",
        "gb200-nvl72-576",
        "mi300x-1024",
        "vtrain-a100",
    },
    "models": {
        "megatron-1.7b",
        "megatron-3.6b",
        "megatron-7.5b",
        "megatron-18b",
        "megatron-39b",
        "megatron-76b",
        "megatron-145b",
        "megatron-310b",
        "megatron-530b",
        "megatron-1t",
        "gpt3-175b",
        "llama2-7b",
        "llama2-13b",
        "llama2-70b",
        "llama3-8b",
        "llama3-70b",
        "llama3.1-8b",
        "llama3.1-70b",
        "llama3.1-405b",
        "bloom-176b",
        "opt-175b",
        "mt-nlg-530b",
        "mixtral-8x7b",
        "mixtral-8x22b",
        "deepseek-v3",
    },
}

# NVIDIA Hopper and Blackwell parts: the FP8 tensor-core peak is exactly twice BF16.
FP8_DOUBLE_BF16 = {"h100-sxm-80gb", "h800", "h200", "b200", "gb200", "gb300"}

# Value in SI units = number printed in the citation x scale.
_UNIT_SCALES = (
    1.0,
    1e-2,  # percent
    1e3,
    1e6,
    1e9,
    1e12,
    1e15,  # k, M, G, T, P
    1e9 / 2,
    1e12 / 2,  # bidirectional GB/s or TB/s, halved to per direction
    1e9 / 8,
    1e12 / 8,  # Gb/s, Tb/s to bytes/s
    1e-9,
    1e-6,  # ns, us
    2.0**20,
    2.0**30,  # MiB, GiB (driver-reported memory totals)
)
_REL_TOL = 5e-3
# A number not glued to a preceding letter or digit ("H100", "MI300X" name parts, not figures).
_NUMBER = re.compile(r"(?<![A-Za-z0-9.])\d[\d,]*(?:\.\d+)?(?:[eE][+-]?\d+)?")


def _numbers_in(text: str) -> list[float]:
    out = []
    for match in _NUMBER.finditer(text):
        token = match.group().rstrip(",")
        # "2,039" is a thousands separator; "1,2" style lists do not occur in citations.
        out.append(float(token.replace(",", "")))
    return out


def _is_cited(value: float, text: str) -> bool:
    return any(
        abs(number * scale - value) <= _REL_TOL * abs(value)
        for number in _numbers_in(text)
        for scale in _UNIT_SCALES
    )


@cache
def _raw_files() -> list[tuple[str, Path, dict[str, Any]]]:
    rows = []
    for kind in KINDS:
        for path in sorted((DATA_ROOT / kind).glob("*.toml")):
            with path.open("rb") as fh:
                rows.append((kind, path, tomllib.load(fh)))
    return rows


def _numeric_items(raw: dict[str, Any]) -> list[tuple[str, float]]:
    items = []
    for key, value in raw.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float) and value != 0:
            items.append((key, float(value)))
        elif isinstance(value, list):
            items += [(key, float(v)) for v in value if isinstance(v, int | float) and v != 1.0]
    return items


def test_every_required_id_exists() -> None:
    missing = {kind: sorted(ids - set(catalog.entries(kind))) for kind, ids in REQUIRED.items()}
    assert not any(missing.values()), f"missing catalog entries: {missing}"


def test_every_number_is_cited() -> None:
    uncited = []
    for kind, path, raw in _raw_files():
        sources = raw.get("sources", {})
        for key, value in _numeric_items(raw):
            text = sources.get(key, raw["source"])
            if not _is_cited(value, text):
                uncited.append(f"{kind}/{path.name}: {key}={value:g}")
    assert not uncited, "numbers missing from their citation:\n" + "\n".join(uncited)


def test_citation_checker_rejects_an_uncited_number() -> None:
    # The rule above must be able to fail: a figure absent from the text is not cited.
    text = "datasheet (2023): 989.4 TFLOP/s dense, NVLink 900 GB/s bidirectional, 700 W, 80.3%"
    assert _is_cited(989.4e12, text)
    assert _is_cited(450e9, text)  # bidirectional 900 GB/s halved
    assert _is_cited(0.803, text)
    assert not _is_cited(1000e12, text)
    assert not _is_cited(100.0, "NVIDIA H100 datasheet")  # a name part is not a figure


def test_sources_name_real_fields_and_every_source_has_a_year() -> None:
    problems = []
    for kind, path, raw in _raw_files():
        valid = {f.name for f in fields(KINDS[kind])}
        problems += [
            f"{kind}/{path.name}: sources.{key} is not a field"
            for key in raw.get("sources", {})
            if key not in valid
        ]
        if not re.search(r"\b(19|20)\d\d\b", raw["source"]):
            problems.append(f"{kind}/{path.name}: source names no year")
    assert not problems, "\n".join(problems)


def test_accelerator_figures_are_plausible() -> None:
    for acc in catalog.entries("accelerators").values():
        assert 0.0 < acc.gemm_max_frac <= 1.0, acc.id
        # BF16 may be missing (V100: FP16 tensor cores only), never both.
        assert acc.peak_fp16_flop_per_s >= acc.peak_bf16_flop_per_s >= 0, acc.id
        assert acc.peak_16bit_flop_per_s > 0, acc.id
        assert acc.peak_fp4_flop_per_s == 0 or acc.peak_fp4_flop_per_s > acc.peak_fp8_flop_per_s
        # Scale-up per direction is below HBM bandwidth on every part listed.
        assert acc.scale_up_bytes_per_s < acc.hbm_bytes_per_s, acc.id
        if acc.uncertain:
            assert acc.notes, f"{acc.id} is uncertain but says nothing about why"


@pytest.mark.parametrize("acc_id", sorted(FP8_DOUBLE_BF16))
def test_fp8_peak_is_twice_bf16_on_hopper_and_blackwell(acc_id: str) -> None:
    acc = catalog.accelerator(acc_id)
    assert acc.peak_fp8_flop_per_s == pytest.approx(2 * acc.peak_bf16_flop_per_s, rel=1e-3)


def test_h800_differs_from_h100_only_in_nvlink() -> None:
    h100, h800 = catalog.accelerator("h100-sxm-80gb"), catalog.accelerator("h800")
    assert h800.peak_bf16_flop_per_s == h100.peak_bf16_flop_per_s
    assert h800.hbm_bytes == h100.hbm_bytes
    assert h800.scale_up_bytes_per_s == 200e9  # 400 GB/s bidirectional, halved


def test_systems_reference_existing_accelerators_and_fill_their_domain() -> None:
    accelerators = catalog.entries("accelerators")
    for sys in catalog.entries("systems").values():
        assert sys.accelerator in accelerators, f"{sys.id}: unknown {sys.accelerator}"
        assert sys.scale_up_domain_gpus % sys.gpus_per_node == 0, sys.id
        assert sys.nics_per_node > 0 and sys.nic_bytes_per_s > 0, sys.id
    assert catalog.system("gb200-nvl72").scale_up_domain_gpus == 72


def test_fabrics_reference_existing_links_and_have_one_ratio_per_upper_tier() -> None:
    links = catalog.entries("links")
    for fab in catalog.entries("fabrics").values():
        assert fab.link in links, f"{fab.id}: unknown link {fab.link}"
        assert fab.tiers in (2, 3), fab.id
        assert len(fab.oversubscription) == fab.tiers - 1, fab.id
        assert all(r >= 1.0 for r in fab.oversubscription), fab.id
        assert fab.wiring in ("rail-optimized", "top-of-rack"), fab.id
        if fab.in_network_reduction:
            assert links[fab.link].in_network_reduction, f"{fab.id}: SHARP on a link without it"
        if fab.leaf_gpus and fab.pod_gpus:
            assert fab.pod_gpus % fab.leaf_gpus == 0, fab.id


def test_clusters_reference_existing_systems_and_fabrics() -> None:
    systems, fabrics = catalog.entries("systems"), catalog.entries("fabrics")
    for cl in catalog.entries("clusters").values():
        assert cl.system in systems, f"{cl.id}: unknown system {cl.system}"
        assert cl.fabric in fabrics, f"{cl.id}: unknown fabric {cl.fabric}"
        assert cl.nodes > 0


@pytest.mark.parametrize(
    ("cluster_id", "gpus"),
    [
        ("selene", 4480),
        ("llama3-24k", 24576),
        ("h100-16k-ndr", 16384),
        ("deepseek-v3-2048", 2048),
        ("gb200-nvl72-576", 576),
        ("mi300x-1024", 1024),
    ],
)
def test_cluster_gpu_counts_match_their_sources(cluster_id: str, gpus: int) -> None:
    cl = catalog.cluster_spec(cluster_id)
    assert cl.nodes * catalog.system(cl.system).gpus_per_node == gpus


def test_model_shapes_are_consistent() -> None:
    for m in catalog.entries("models").values():
        assert m.heads % m.kv_heads == 0, f"{m.id}: heads not divisible by kv_heads"
        if not m.head_dim:
            assert m.hidden == m.heads * m.head_size, f"{m.id}: hidden != heads * head_size"
        assert m.activation in ("gelu", "swiglu", "relu"), m.id
        assert m.position_embedding in ("rope", "learned", "alibi"), m.id
        assert m.norm in ("layernorm", "rmsnorm"), m.id
        if m.is_moe:
            assert 0 < m.top_k <= m.routed_experts and m.expert_ffn_hidden > 0, m.id
            assert 0 < m.active_params_published < m.params_published, m.id
        if m.kv_lora_rank:
            assert m.head_dim in (m.qk_nope_head_dim, m.v_head_dim), m.id


def test_deepseek_v3_shape() -> None:
    m = catalog.model("deepseek-v3")
    assert (m.routed_experts, m.shared_experts, m.top_k, m.expert_ffn_hidden) == (256, 1, 8, 2048)
    assert (m.first_dense_layers, m.ffn_hidden, m.mtp_layers) == (3, 18432, 1)
    assert (m.q_lora_rank, m.kv_lora_rank, m.qk_nope_head_dim, m.qk_rope_head_dim) == (
        1536,
        512,
        128,
        64,
    )
    assert (m.params_published, m.active_params_published) == (671e9, 37e9)


@pytest.mark.parametrize("model_id", ["qwen3-30b-a3b", "qwen3-235b-a22b"])
def test_qwen3_moe_counts_match_the_model_cards(model_id: str) -> None:
    # All-MoE shapes with head_dim 128 != hidden / heads; the count leaves out only the
    # per-head QK-norm weights (2 x 128 per layer), which the schema has no field for.
    m = catalog.model(model_id)
    assert m.head_size == 128 and m.first_dense_layers == 0 and m.shared_experts == 0
    assert param_count(m) == pytest.approx(m.params_published, rel=0.02)
    assert active_param_count(m) == pytest.approx(m.active_params_published, rel=0.02)


# Validation case -> catalog model of the same shape (the catalog must agree with the runs).
_CASE_MODELS = {
    "megatron_sc21_1p7B_32gpu": "megatron-1.7b",
    "megatron_sc21_3p6B_64gpu": "megatron-3.6b",
    "megatron_sc21_7p5B_128gpu": "megatron-7.5b",
    "megatron_sc21_18p4B_256gpu": "megatron-18b",
    "megatron_sc21_39p1B_512gpu": "megatron-39b",
    "megatron_sc21_76p1B_1024gpu": "megatron-76b",
    "megatron_sc21_145p6B_1536gpu": "megatron-145b",
    "megatron_sc21_310p1B_1920gpu": "megatron-310b",
    "megatron_sc21_529p6B_2520gpu": "megatron-530b",
    "megatron_sc21_1008p0B_3072gpu": "megatron-1t",
    "korthikanti_175B_selective": "gpt3-175b",
    "korthikanti_530B_selective": "mt-nlg-530b",
    "llama3_405B_8192gpu_seq8192": "llama3.1-405b",
}


@pytest.mark.skipif(not VALIDATION_RUNS.exists(), reason="../shared/validation not present")
def test_catalog_agrees_with_the_validation_runs() -> None:
    cases = {c["id"]: c for c in json.loads(VALIDATION_RUNS.read_text())["cases"]}
    accelerators = catalog.entries("accelerators")
    for case in cases.values():
        assert case["hardware"]["gpu"] in accelerators, case["id"]
    for case_id, model_id in _CASE_MODELS.items():
        shape, m = cases[case_id]["model"], catalog.model(model_id)
        for key in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "activation"):
            assert shape[key] == getattr(m, key), f"{case_id} vs {model_id}: {key}"
        if case_id.startswith("megatron_sc21"):
            assert shape["vocab"] == m.vocab
            assert shape["params"] == m.params_published


def test_h100_usable_hbm_is_the_driver_total() -> None:
    # nvidia-smi reports 81,559 MiB on an H100 SXM5 80 GB: 79.65 GiB, not 80e9 B = 74.5 GiB.
    h100 = catalog.accelerator("h100-sxm-80gb")
    assert h100.hbm_capacity_bytes == 81559 * 2**20
    assert h100.hbm_capacity_bytes / 2**30 == pytest.approx(79.6, abs=0.1)


@pytest.mark.parametrize("entry_id", sorted(REQUIRED["accelerators"]))
def test_every_accelerator_states_usable_hbm(entry_id: str) -> None:
    # Exact: the driver's total lies within 10% below the marketed figure read as GiB.
    acc = catalog.accelerator(entry_id)
    assert acc.hbm_usable_bytes > 0
    assert 0.9 * acc.hbm_bytes / 1e9 * 2**30 <= acc.hbm_usable_bytes <= acc.hbm_bytes / 1e9 * 2**30


@pytest.mark.parametrize(
    "model_id",
    [
        "nemotron-h-8b",
        "nemotron-h-56b",
        "nemotron-3-nano-30b-a3b",
        "nemotron-3-super-120b-a12b",
        "qwen3-next-80b-a3b",
    ],
)
def test_hybrid_model_counts_match_their_sources(model_id: str) -> None:
    """Mamba-2 (layer_pattern) and Gated DeltaNet (mixer_pattern) hybrids count to their
    published totals; a published active figure lies between the active count without the
    embeddings and with them (the sources round and differ in which they leave out)."""
    m = catalog.model(model_id)
    assert m.layer_pattern or m.mixer_pattern
    assert param_count(m) == pytest.approx(m.params_published, rel=0.02)
    if m.active_params_published:
        active = active_param_count(m)
        bare = active - m.vocab * m.hidden * (1 if m.tied_embeddings else 2)
        assert 0.9 * bare <= m.active_params_published <= 1.02 * active
