"""Accelerator names as users and sources write them resolve to the catalog's parts; names of
other parts do not."""

from __future__ import annotations

import pytest

from scalewall import catalog
from scalewall.catalog import loader
from scalewall.errors import ScalewallError


@pytest.mark.parametrize(
    ("name", "part"),
    [
        ("h100-sxm-80gb", "h100-sxm-80gb"),
        ("H100", "h100-sxm-80gb"),
        ("NVIDIA H100 80GB HBM3", "h100-sxm-80gb"),
        ("NVIDIA H100-SXM5-80GB", "h100-sxm-80gb"),
        ("NVIDIA H100 96GB HBM2e", "h100-sxm-96gb-hbm2e"),
        ("NVIDIA A100 80GB", "a100-sxm-80gb"),
        ("A100-SXM4-40GB", "a100-sxm-40gb"),
        ("NVIDIA B200", "b200"),
        ("GB200 NVL72", "gb200"),
        ("AMD Instinct MI300X", "mi300x"),
        ("Tesla V100-SXM2-32GB", "v100-sxm2-32gb"),
        ("DGX B200", "b200"),
        ("HGX H100", "h100-sxm-80gb"),
        ("H200 SXM 141GB", "h200"),
        ("NVIDIA A800-SXM4-80GB", "a800-sxm-80gb"),
        ("A800", "a800-sxm-80gb"),
    ],
)
def test_names_as_written(name: str, part: str) -> None:
    assert loader.accelerator_id(name) == part
    assert catalog.accelerator(name).id == part


@pytest.mark.parametrize("name", ["H100 PCIe", "H100 NVL", "NVIDIA", "L40S"])
def test_other_parts_are_not_guessed(name: str) -> None:
    # A PCIe or NVL H100 is another part (clocks, power, memory): no silent mapping.
    assert loader.accelerator_id(name) is None
    with pytest.raises(ScalewallError):
        catalog.accelerator(name)


def test_a800_is_an_a100_with_slower_nvlink() -> None:
    a800, a100 = catalog.accelerator("a800"), catalog.accelerator("a100-sxm-80gb")
    assert a800.scale_up_bytes_per_s == pytest.approx(a100.scale_up_bytes_per_s * 400 / 600)
    for field in ("peak_bf16_flop_per_s", "hbm_bytes_per_s", "hbm_usable_bytes", "sm_count"):
        assert getattr(a800, field) == getattr(a100, field), field
