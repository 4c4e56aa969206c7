"""One storage description for cost and reliability (`scalewall.storage`)."""

from __future__ import annotations

import dataclasses

import pytest

from scalewall.cost import storage_bought
from scalewall.errors import SpecError
from scalewall.reliability import CheckpointLayout, checkpoint_cost
from scalewall.storage import storage_tier


def test_cost_buys_the_servers_checkpoints_are_written_to() -> None:
    tier = storage_tier("parallel-fs")
    bought = storage_bought(tier, 384)
    # 384 GPUs / 3.2768 GPUs per server -> 118 servers (Llama 3: 7,500 for 24,576 GPUs)
    assert tier.servers(384) == 118
    assert bought.bandwidth_bytes_per_s == 118 * tier.write_bytes_per_s_per_server
    assert bought.capacity_bytes == 118 * tier.capacity_bytes_per_server
    # A checkpoint from all 48 nodes gets exactly that bandwidth (each node below its port).
    layout = CheckpointLayout(params=176e9, gpus=384, gpus_per_node=8)
    cost = checkpoint_cost(layout, tier)
    expected = cost.total_bytes / bought.bandwidth_bytes_per_s + tier.commit_latency_s
    assert cost.write_s == pytest.approx(expected, rel=1e-12)


def test_a_rented_tier_buys_no_servers() -> None:
    bought = storage_bought("object-store", 4096)
    assert bought.capacity_bytes == bought.bandwidth_bytes_per_s == 0.0


def test_drain_shares_the_client_link() -> None:
    """An asynchronous drain gets its share of the node's link; training traffic the rest."""
    tier = storage_tier("local-nvme")
    assert tier.node_write_bytes_per_s(4, 32, 0.5) == tier.write_bytes_per_s_per_node / 2


def test_servers_without_bandwidth_are_rejected() -> None:
    from scalewall.storage import _check_tier

    bad = dataclasses.replace(storage_tier("parallel-fs"), write_bytes_per_s_per_server=0.0)
    with pytest.raises(SpecError, match="write_bytes_per_s_per_server"):
        _check_tier(bad)
