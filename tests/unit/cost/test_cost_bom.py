"""Network bill of materials against known fat-tree designs."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scalewall.cost import ClusterHardware, hardware, network_bom, port_split
from scalewall.errors import SpecError

K = 64  # NDR Quantum-2 radix (catalog link ib-ndr)


def _dgx(
    nodes: int,
    *,
    tiers: int = 2,
    oversub: tuple[float, ...] = (1.0,),
    wiring: str = "rail-optimized",
) -> ClusterHardware:
    hw = hardware("dgx-h100", "ndr-rail-2tier", 1)
    fabric = dataclasses.replace(
        hw.fabric,
        id=f"test-{tiers}tier",
        tiers=tiers,
        oversubscription=list(oversub),
        wiring=wiring,
        leaf_gpus=0,
        pod_gpus=0,
    )
    return dataclasses.replace(hw, fabric=fabric, nodes=nodes)


def test_port_split_follows_the_oversubscription() -> None:
    assert port_split(K, 1.0) == (32, 32)
    assert port_split(K, 3.0) == (48, 16)
    assert port_split(K, 7.0) == (56, 8)  # Llama 3's 1:7 aggregation layer
    with pytest.raises(SpecError, match="oversubscription"):
        port_split(K, 0.5)


@pytest.mark.parametrize("scalable_units", [1, 2, 4])
def test_superpod_scalable_unit_has_eight_rail_leaves(scalable_units: int) -> None:
    # DGX H100 SuperPOD: an SU is 32 nodes; leaf r takes NIC r of all 32 nodes (32 down ports,
    # 32 up at full bisection), so an SU needs 8 leaves, one per rail.
    bom = network_bom(_dgx(32 * scalable_units))
    assert bom.leaf_switches == 8 * scalable_units


def test_superpod_four_units_is_32_leaves_and_16_spines() -> None:
    # 128 nodes x 8 NICs = 1,024 ports -> 32 leaves x 32 uplinks = 1,024 uplinks / 64 = 16
    # spines: 48 switches, as in the 1,024-GPU SuperPOD (and the 'H100 Freakonomics' sheet).
    bom = network_bom(_dgx(128))
    assert (bom.leaf_switches, bom.spine_switches, bom.core_switches) == (32, 16, 0)
    assert [t.links for t in bom.tiers] == [1024, 1024]
    assert bom.transceivers == 2 * 2048  # every link optical, a transceiver at each end


def test_two_tier_serves_k_squared_over_two_and_no_more() -> None:
    # Full 2-tier radix-k fat tree: k leaves x k/2 down ports = k^2/2 = 2,048 NIC ports.
    bom = network_bom(_dgx(256))
    assert bom.max_endpoints == K * K // 2 == bom.endpoints
    assert (bom.leaf_switches, bom.spine_switches) == (64, 32)
    with pytest.raises(SpecError, match="serves at most 2048 NIC ports"):
        network_bom(_dgx(257))


def test_full_three_tier_is_k_cubed_over_four_with_five_k_squared_over_four_switches() -> None:
    # k pods of k/2 leaves and k/2 spines; (k/2)^2 core switches: k^3/4 ports, 5k^2/4 switches.
    bom = network_bom(_dgx(K**3 // 4 // 8, tiers=3, oversub=(1.0, 1.0)))
    assert bom.max_endpoints == K**3 // 4 == bom.endpoints
    assert bom.pods == K
    assert bom.core_switches == K * K // 4
    assert bom.switches == 5 * K * K // 4


def test_half_full_three_tier_matches_published_switch_count() -> None:
    # 'H100 Freakonomics' sheet (Aug 2024): 4,096 nodes (32,768 H100) need 2,560 switches:
    # 1,024 leaves, 32 pods x 32 spines, 1,024 x 32 / 64 = 512 core.
    bom = network_bom(_dgx(4096, tiers=3, oversub=(1.0, 1.0)))
    assert (bom.leaf_switches, bom.spine_switches, bom.core_switches) == (1024, 1024, 512)


def test_one_pod_of_a_three_tier_fabric_builds_no_core() -> None:
    bom = network_bom(_dgx(128, tiers=3, oversub=(1.0, 1.0)))
    assert bom.core_switches == 0 and bom.switch_tiers == 2


def test_top_of_rack_leaves_use_copper_and_oversubscription_cuts_spines() -> None:
    full = network_bom(_dgx(64, wiring="top-of-rack"))
    thin = network_bom(_dgx(64, oversub=(3.0,), wiring="top-of-rack"))
    assert full.tiers[0].medium == "dac" and full.dac_cables == full.endpoints
    assert full.tiers[0].transceivers == 0
    assert thin.spine_switches < full.spine_switches
    assert thin.leaf_switches < full.leaf_switches  # 48 down ports: 6 nodes per leaf, not 4


def test_catalog_llama3_pods_are_counted_by_ports() -> None:
    # Llama 3: 16 GPUs per rack switch, 3,072-GPU pods, 1:7 at aggregation, 24K GPUs = 8 pods.
    hw = hardware("grand-teton-h100", "llama3-roce-3tier", 3072)
    bom = network_bom(hw)
    assert bom.pods == 8
    assert bom.leaf_switches == 24576 // 16
    assert bom.tiers[2].links == 8 * (3072 // 7 + 1)  # ceil(3,072 uplinks per pod / 7)


@settings(max_examples=40, deadline=None)
@given(nodes=st.integers(1, 2000), tiers=st.sampled_from([2, 3]))
def test_more_nodes_never_need_fewer_switches_or_links(nodes: int, tiers: int) -> None:
    oversub = (1.0,) if tiers == 2 else (1.0, 1.0)
    cap = 256 if tiers == 2 else 8192
    a = network_bom(_dgx(min(nodes, cap), tiers=tiers, oversub=oversub))
    b = network_bom(_dgx(min(nodes + 1, cap), tiers=tiers, oversub=oversub))
    assert b.switches >= a.switches and b.links >= a.links
    assert a.tiers[0].links == a.endpoints == a.nics
    optical = sum(t.links for t in a.tiers if t.medium == "optical")
    assert a.transceivers == 2 * optical
