"""Catalog loaders: every built-in entry loads, cites a source, and bad files are rejected."""

from __future__ import annotations

from pathlib import Path

import pytest

from scalewall import catalog
from scalewall.catalog.loader import KINDS
from scalewall.errors import SpecError


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_entry_loads_and_cites_a_source(kind: str) -> None:
    table = catalog.entries(kind)
    assert table, f"no built-in {kind}"
    for entry_id, entry in table.items():
        assert entry_id == entry_id.lower()
        assert len(entry.source) > 20, f"{kind}/{entry_id} has no real source"


def test_unknown_key_is_rejected_with_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_text(
        'id = "x"\nname = "X"\nlink = "ib-ndr"\nwiring = "rail-optimized"\n'
        'tiers = 2\noversubscription = [1.0]\nsource = "s"\nbogus = 1\n'
    )
    with pytest.raises(SpecError, match=r"x\.toml: bogus=1 is invalid; unknown key"):
        catalog.load_entry(path, catalog.Fabric)


def test_missing_key_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "y.toml"
    path.write_text('id = "y"\nname = "Y"\n')
    with pytest.raises(SpecError, match=r"y.toml: .* required key is missing"):
        catalog.load_entry(path, catalog.Fabric)


def test_wrong_type_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "z.toml"
    path.write_text(
        'id = "z"\nname = "Z"\nlink = "ib-ndr"\nwiring = "rail-optimized"\n'
        'tiers = "two"\noversubscription = [1.0]\nsource = "s"\n'
    )
    with pytest.raises(SpecError, match="tiers='two'"):
        catalog.load_entry(path, catalog.Fabric)


def test_unknown_id_lists_valid_ones() -> None:
    with pytest.raises(SpecError, match=r"valid: .*h100-sxm-80gb"):
        catalog.accelerator("h1000")


def test_accelerator_aliases_resolve_and_never_collide() -> None:
    from scalewall import catalog

    assert catalog.accelerator("H100 SXM").id == "h100-sxm-80gb"
    assert catalog.accelerator("a100_80gb").id == "a100-sxm-80gb"
    names = [catalog.normal_name(a) for e in catalog.accelerators().values() for a in e.aliases]
    assert len(names) == len(set(names))
    assert not set(names) & set(catalog.accelerators()) & set(catalog.systems())


def test_b300_is_a_blackwell_ultra_board_part() -> None:
    """B300 (HGX/DGX B300): B200's BF16 and FP8 peaks, 13.5 PFLOP/s dense FP4, 288 GB HBM3e;
    its default system is the 8-GPU DGX B300 with one 800 Gb/s NIC per GPU."""
    from scalewall.cluster import default_system

    acc = catalog.accelerator("b300")
    b200 = catalog.accelerator("b200")
    assert acc.peak_bf16_flop_per_s == b200.peak_bf16_flop_per_s
    assert acc.peak_fp8_flop_per_s == b200.peak_fp8_flop_per_s
    assert acc.peak_fp4_flop_per_s == 13.5e15
    assert acc.hbm_bytes == 288e9
    system = default_system("b300")
    assert (system.gpus_per_node, system.nic_bytes_per_s) == (8, 100e9)


def test_gh200_runs_in_quad_nodes() -> None:
    """GH200: H100's tensor peaks with 96 GB HBM3 at 4 TB/s; its default system is the quad
    node (4 GPUs in one NVLink domain without NVSwitch reduction, one 200 Gb/s NIC each)."""
    from scalewall.cluster import default_system

    acc = catalog.accelerator("grace-hopper")
    h100 = catalog.accelerator("h100")
    assert acc.id == "gh200"
    assert acc.peak_bf16_flop_per_s == h100.peak_bf16_flop_per_s
    assert (acc.hbm_bytes, acc.hbm_bytes_per_s) == (96e9, 4e12)
    system = default_system("gh200")
    assert (system.gpus_per_node, system.scale_up_domain_gpus) == (4, 4)
    assert system.nic_bytes_per_s == 25e9 and not system.scale_up_in_network_reduction


def test_v100_is_fp16_only() -> None:
    """V100 (Volta): FP16 tensor cores only. A bf16 plan is refused in one line; an fp16 plan
    runs, with MFU counted against the FP16 peak; its default system is the 16-GPU DGX-2."""
    from scalewall.api import estimate
    from scalewall.cluster import default_system
    from scalewall.plan.plan import check_precision

    acc = catalog.accelerator("Tesla V100")
    assert (acc.peak_bf16_flop_per_s, acc.peak_16bit_flop_per_s) == (0.0, 125e12)
    with pytest.raises(SpecError, match="no BF16 tensor cores: fp16"):
        check_precision(acc, "bf16")
    check_precision(acc, "fp16")
    system = default_system("v100")
    assert (system.gpus_per_node, system.scale_up_domain_gpus) == (16, 16)
    from scalewall.cluster import resolve_cluster
    from scalewall.plan.plan import ParallelPlan

    plan = ParallelPlan(tp=4, pp=1, dp=16, micro_batch=4, global_batch=512, precision="fp16")
    result = estimate("megatron-7.5b", resolve_cluster(None, gpu="v100", gpus=64), plan)
    assert 0.0 < result.mfu < 1.0
    assert result.mfu * 125e12 == pytest.approx(result.model_tflops_per_gpu * 1e12, rel=1e-6)
