"""Collective-communication time on a cluster's tiers, vectorized over groups.

A group of ``n`` ranks with stride ``stride`` in the rank order has ``members(t)`` ranks inside one
domain of tier ``t`` (span / stride, at least 1, at most n). A collective library runs it
hierarchically: tier by tier, each level over ``f_t = members(t) / members(t-1)`` peers, the
message shrinking by the lower levels' factors (reduce-scatter inside, then across), and on each
level it picks the fastest algorithm it has there (ring, tree, or in-network reduction).

Costs use the alpha-beta model (Hockney): time = latency x steps + bytes / bandwidth, with the
bus-bandwidth factors of nccl-tests (NVIDIA/nccl-tests doc/PERFORMANCE.md): all-reduce moves
2(f-1)/f of the message per rank, reduce-scatter and all-gather (f-1)/f.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import NDArray

from scalewall.perf.assumptions import Efficiency
from scalewall.plan.topology import Cluster, Tier

FloatArray = NDArray[np.float64]


def hash_imbalance(tier: Tier, eff: Efficiency) -> float:
    """Load of the busiest hashed path over the mean (1 with adaptive routing)."""
    return float(hash_slowdown(tier, eff, np.ones(1))[0])


def hash_slowdown(tier: Tier, eff: Efficiency, share: FloatArray) -> FloatArray:
    """Slowdown of traffic through ``tier``'s hashed paths when a share ``share`` of the
    paths' capacity carries it: ``max(1, s + sqrt(2 s ln U / k))``.

    ECMP hashes each flow onto one of U paths. With k flows filling one path at line rate
    (``Efficiency.comm.ecmp_flows_per_path``), traffic at a share s of the capacity puts s k flows
    on a path on average and, balls into bins with m >> n, about s k + sqrt(2 s k ln U) on
    the busiest one (Raab and Steger 1998); a flow slows only where that exceeds the k flows
    the path carries at full rate. s = 1 (every byte crosses, 1:1 links) gives the busiest
    path's load over the mean, 1 + sqrt(2 ln U / k); a ring that leaves each lower domain
    once loads the paths lightly and pays nothing."""
    if tier.hashed_paths <= 1:
        return np.ones_like(share)
    spread = np.sqrt(2.0 * share * math.log(tier.hashed_paths) / eff.comm.ecmp_flows_per_path)
    result: FloatArray = np.maximum(share + spread, 1.0)
    return result


def ring_hash_slowdown(cluster: Cluster, factors: list[FloatArray], eff: Efficiency) -> FloatArray:
    """Slowdown of a ring (or tree) collective whose network hops cross hashed tiers.

    NCCL runs one ring through every rank, pipelined in chunks, so every byte passes every
    hop and the slowest hop sets the rate of the whole message, not only of the share the
    tier-by-tier accounting gives the upper tier. A ring over ``members`` ranks per domain
    below hashed tier t leaves each such domain once: of the uplinks of a domain, whose
    ranks all run such rings at once (the other replicas of the group), a share
    ``1 / members`` carries crossing traffic, and ``hash_slowdown`` at that share is the
    crossing hop's slowdown. The worst crossed tier slows the ring's network levels."""
    worst = np.ones_like(factors[0])
    members = np.ones_like(factors[0])
    for tier, f in zip(cluster.tiers, factors, strict=True):
        if not tier.scale_up and tier.hashed_paths > 1:
            crossed = hash_slowdown(tier, eff, 1.0 / members)
            worst = np.where(f > 1.0, np.maximum(worst, crossed), worst)
        members = members * f
    return worst


def _ring_bandwidth(tier: Tier, eff: Efficiency, slowdown: FloatArray) -> FloatArray:
    """Per-GPU ring bandwidth on one level: line rate x bus efficiency, network levels slowed
    by the ring's hash slowdown (``ring_hash_slowdown``)."""
    if tier.scale_up:
        return np.full_like(slowdown, tier.bytes_per_s_per_gpu * eff.comm.scale_up_bw_efficiency)
    result: FloatArray = tier.bytes_per_s_per_gpu * eff.comm.scale_out_bw_efficiency / slowdown
    return result


def _bandwidth(tier: Tier, eff: Efficiency) -> float:
    factor = eff.comm.scale_up_bw_efficiency if tier.scale_up else eff.comm.scale_out_bw_efficiency
    return tier.bytes_per_s_per_gpu * factor / hash_imbalance(tier, eff)


def _alltoall_bandwidth(tier: Tier, eff: Efficiency) -> float:
    """Bus bandwidth per GPU of an all-to-all of grouped sends and receives on ``tier``: the
    ring collectives' (``_bandwidth``), or the measured all-to-all figure where that is lower."""
    ring = _bandwidth(tier, eff)
    if tier.alltoall_bytes_per_s_per_gpu > 0.0:
        return min(ring, tier.alltoall_bytes_per_s_per_gpu)
    return ring


def _step_latency(tier: Tier, eff: Efficiency) -> float:
    base = (
        eff.comm.ring_step_latency_scale_up_s
        if tier.scale_up
        else eff.comm.ring_step_latency_scale_out_s
    )
    return base + tier.hop_latency_s


def level_factors(cluster: Cluster, n: FloatArray, stride: FloatArray) -> list[FloatArray]:
    """Peers per level: ``f_t`` with the product over tiers equal to ``n``."""
    factors: list[FloatArray] = []
    below = np.ones_like(n)
    for index, tier in enumerate(cluster.tiers):
        top = index == len(cluster.tiers) - 1
        inside = n if top else np.minimum(np.maximum(np.floor(tier.span_gpus / stride), 1.0), n)
        inside = np.maximum(inside, below)
        factors.append(inside / below)
        below = inside
    return factors


def allreduce_time_s(
    cluster: Cluster,
    eff: Efficiency,
    n: FloatArray,
    stride: FloatArray,
    message_bytes: FloatArray,
    *,
    in_network: bool = True,
) -> FloatArray:
    """Hierarchical all-reduce of ``message_bytes`` per rank over ``n`` ranks."""
    total = np.where(n > 1, eff.comm.collective_launch_s, 0.0)
    shard = np.asarray(message_bytes, dtype=np.float64)
    factors = level_factors(cluster, n, stride)
    slowdown = ring_hash_slowdown(cluster, factors, eff)
    for tier, f in zip(cluster.tiers, factors, strict=True):
        if not (f > 1.0).any():
            continue  # no row has peers on this level: it adds 0 and leaves the shard whole
        bw, lat = _ring_bandwidth(tier, eff, slowdown), _step_latency(tier, eff)
        ring = 2.0 * (f - 1.0) / f * shard / bw + 2.0 * (f - 1.0) * lat
        best = ring
        if not tier.scale_up:
            tree = 2.0 * shard / bw + 2.0 * np.log2(np.maximum(f, 1.0)) * lat
            best = np.minimum(best, tree)
        if tier.scale_up and tier.in_network_reduction and in_network:
            nvls = (
                shard / (tier.bytes_per_s_per_gpu * eff.comm.scale_up_nvls_algbw_efficiency)
                + 2 * lat
            )
            best = np.minimum(best, nvls)
        total = total + np.where(f > 1.0, best, 0.0)
        shard = shard / f
    return total


def reduce_scatter_time_s(
    cluster: Cluster, eff: Efficiency, n: FloatArray, stride: FloatArray, message_bytes: FloatArray
) -> FloatArray:
    """Reduce-scatter (or all-gather: the same traffic reversed) of a message whose full size
    per rank is ``message_bytes``: the bytes tier by tier as above, the latency of NCCL's one
    ring through all ``n`` ranks.

    NCCL runs reduce-scatter and all-gather as a ring of every rank (no tree), n - 1 steps,
    each step's hop inside the lowest tier that joins the two neighbours; its tuning model
    charges (n - nodes) intra-node and (nodes - 1) inter-node step latencies (NCCL
    ``src/graph/tuning.cc``, ring ``nInterSteps = nNodes - 1``). Generalised to the tiers:
    level t's ``f_t - 1`` hops repeat once per domain of that tier, ``n / members(t)`` times,
    so the latency grows with the group, where a hierarchical algorithm's would not: what
    ZeRO-3 / FSDP's per-layer collectives pay at scale."""
    total = np.where(n > 1, eff.comm.collective_launch_s, 0.0)
    shard = np.asarray(message_bytes, dtype=np.float64)
    members = np.ones_like(n)
    factors = level_factors(cluster, n, stride)
    slowdown = ring_hash_slowdown(cluster, factors, eff)
    for tier, f in zip(cluster.tiers, factors, strict=True):
        if not (f > 1.0).any():
            continue  # no row has peers on this level: nothing added, members and shard kept
        bw, lat = _ring_bandwidth(tier, eff, slowdown), _step_latency(tier, eff)
        members = members * f
        ring = (f - 1.0) / f * shard / bw + (f - 1.0) * (n / members) * lat
        total = total + np.where(f > 1.0, ring, 0.0)
        shard = shard / f
    return total


allgather_time_s = reduce_scatter_time_s


def alltoall_time_s(
    cluster: Cluster, eff: Efficiency, n: FloatArray, stride: FloatArray, message_bytes: FloatArray
) -> FloatArray:
    """All-to-all where each rank holds ``message_bytes`` split evenly over the ``n`` ranks.

    The share bound for peers first reached at tier t crosses that tier's links; the tiers'
    links work at the same time, so the slowest tier sets the time.
    """
    total = np.where(n > 1, eff.comm.collective_launch_s, 0.0)
    slowest = np.zeros_like(np.asarray(message_bytes, dtype=np.float64))
    below = np.ones_like(n)
    for tier, f in zip(cluster.tiers, level_factors(cluster, n, stride), strict=True):
        inside = below * f
        share = (inside - below) / n * message_bytes
        time = share / _alltoall_bandwidth(tier, eff) + np.where(
            f > 1, (f - 1.0) * _step_latency(tier, eff), 0
        )
        slowest = np.maximum(slowest, time)
        below = inside
    return total + slowest


def p2p_time_s(
    cluster: Cluster, eff: Efficiency, stride: FloatArray, message_bytes: FloatArray
) -> FloatArray:
    """Send ``message_bytes`` to the rank ``stride`` places away (pipeline neighbours)."""
    time = np.full_like(np.asarray(message_bytes, dtype=np.float64), np.inf)
    for tier in reversed(cluster.tiers):
        inside = stride < tier.span_gpus
        cost = message_bytes / _bandwidth(tier, eff) + _step_latency(tier, eff)
        time = np.where(inside, cost, time)
    top = cluster.tiers[-1]
    return np.where(np.isinf(time), message_bytes / _bandwidth(top, eff), time)


def distinct_ranks(
    experts: int, copies: float, n: FloatArray, consecutive: bool = False
) -> FloatArray:
    """Mean distinct ranks of an ``n``-rank expert-parallel group that hold one token's k
    experts (each rank holds E / n consecutive experts). Uniform routing (a trained router or
    Megatron-Core's forced load balancing, which routes by random scores): n (1 - (1 - 1/n)^k).
    ``consecutive`` (NeMo AutoModel's ``FakeBalancedGate``: token t takes experts
    (t k + i) mod E, i < k): the ranks those k experts span, averaged over the starting
    experts the gate cycles through."""
    n = np.asarray(n, dtype=np.float64)
    if not consecutive:
        result: FloatArray = n * (1.0 - (1.0 - 1.0 / np.maximum(n, 1.0)) ** copies)
        return result
    flat = n.ravel()
    values = {int(v): _consecutive_ranks(experts, int(copies), int(v)) for v in np.unique(flat)}
    spans = np.array([values[int(v)] for v in flat], dtype=np.float64)
    return spans.reshape(n.shape)


@functools.lru_cache(maxsize=256)
def _consecutive_ranks(experts: int, k: int, n: int) -> float:
    """``distinct_ranks`` of the consecutive layout for whole-number E, k and n."""
    per_rank = max(experts // max(n, 1), 1)
    cycle = experts // math.gcd(experts, k)
    spans = [len({((t * k + i) % experts) // per_rank for i in range(k)}) for t in range(cycle)]
    return sum(spans) / len(spans)


def alltoall_peer_factor(peers: FloatArray, eff: Efficiency, nccl: bool = False) -> FloatArray:
    """Share of its reference bandwidth an expert dispatch keeps when it spans ``peers`` ranks
    of one scale-up domain: (peers / reference)^-exponent past the reference, 1 up to it;
    DeepEP's and HybridEP's kernels by ``CommEfficiency.expert_alltoall_peer_exponent`` (from
    HybridEP's rank sweep on GB200), NCCL's all-to-all (``nccl``) by
    ``nccl_alltoall_peer_exponent``."""
    reference = eff.comm.expert_alltoall_reference_peers
    wider = np.maximum(np.asarray(peers, dtype=np.float64), reference) / reference
    exponent = (
        eff.comm.nccl_alltoall_peer_exponent if nccl else eff.comm.expert_alltoall_peer_exponent
    )
    result: FloatArray = wider ** (-exponent)
    return result


def expert_alltoall_time_s(
    cluster: Cluster,
    eff: Efficiency,
    n: FloatArray,
    stride: FloatArray,
    token_bytes: FloatArray,
    copies: float,
    max_domains: int,
    per_domain: bool = False,
    groups: int = 0,
    group_topk: int = 0,
    experts: int = 0,
    consecutive: bool = False,
) -> FloatArray:
    """MoE dispatch (or combine) over an expert-parallel group of ``n`` ranks ``stride`` apart:
    each rank sends ``copies`` (k) copies of tokens whose one copy totals ``token_bytes``, to
    experts spread uniformly over the group.

    The share of destinations first reached at tier t is ``(inside_t - inside_{t-1}) / n``.
    Without ``per_domain`` (an all-to-all dispatcher) every copy travels on its own: k times
    that share crosses tier t. With ``per_domain`` (DeepEP / HybridEP) a token crosses the
    network once per remote scale-up domain holding one of its experts, and the receiving
    domain forwards the copies over the scale-up fabric, which carries them too. Over D
    domains with k uniform picks, a token reaches (D - 1)(1 - (1 - 1/D)^k) remote domains on
    average; node-limited routing bounds that by M (D - 1) / D: M is the stack's
    ``max_domains`` where it sets one, or the model's group-limited routing, ``group_topk`` of
    ``groups`` expert groups, each group's n / groups consecutive ranks spanning
    max(1, n / (groups d)) domains of d ranks (DeepSeek-V3: 4 of 8 groups, M = 4 at 64-way
    expert parallelism over 8-GPU nodes). The remote crossings are spread over the tiers by
    their shares. Tiers work at the same time: the slowest sets the time (as
    ``alltoall_time_s``).

    Given the model's ``experts`` (E), a ``per_domain`` dispatcher also sends a token once per
    destination rank, not once per expert copy (DeepEP's dispatch layout marks
    ``is_token_in_rank``; the combine reduces a rank's copies before returning them): over
    the scale-up fabric it moves the distinct ranks holding a token's experts,
    ``distinct_ranks`` of them, instead of k copies.

    Over the scale-up tier the bandwidth falls with the group's ranks in one domain past the
    measurements' 8 (``alltoall_peer_factor``): 64-way expert parallelism inside an NVL72 gets
    0.79 of the 8-way rate under a ``per_domain`` dispatcher's kernels, 0.63 under NCCL's
    all-to-all.
    """
    total = np.where(n > 1, eff.comm.collective_launch_s, 0.0)
    slowest = np.zeros_like(np.asarray(token_bytes, dtype=np.float64))
    below = np.ones_like(n)
    factors = level_factors(cluster, n, stride)
    domains = n / factors[0]
    remote = 1.0 - 1.0 / domains
    network = copies * remote
    if per_domain:
        network = (domains - 1.0) * (1.0 - (1.0 - 1.0 / domains) ** copies)
        if max_domains > 0:
            network = np.minimum(network, max_domains * remote)
        elif groups > 1 and group_topk > 0:
            spanned = np.maximum(n / (groups * factors[0]), 1.0)
            network = np.minimum(network, group_topk * spanned * remote)
    per_remote = np.where(remote > 0, network / np.maximum(remote, 1e-30), 0.0)
    scale_up_copies: FloatArray | float = copies
    if per_domain and experts:
        scale_up_copies = distinct_ranks(experts, copies, n, consecutive)
    for index, (tier, f) in enumerate(zip(cluster.tiers, factors, strict=True)):
        inside = below * f
        share = (inside - below) / n
        if index == 0:
            crossing = scale_up_copies * share + (scale_up_copies * remote if per_domain else 0.0)
        else:
            crossing = per_remote * share
        # DeepEP / HybridEP forward over the scale-up fabric with their own kernels; the
        # all-to-all dispatcher's grouped sends and receives reach what NCCL's all-to-all does.
        reach = _bandwidth(tier, eff) if per_domain else _alltoall_bandwidth(tier, eff)
        # Over the scale-up tier, wider groups in one domain lose bandwidth past the reference.
        peers = (
            alltoall_peer_factor(inside, eff, nccl=not per_domain)
            if index == 0
            else np.ones_like(inside)
        )
        bandwidth = reach * eff.comm.expert_alltoall_bw_efficiency * peers
        time = crossing * token_bytes / bandwidth + np.where(
            f > 1, (f - 1.0) * _step_latency(tier, eff), 0.0
        )
        slowest = np.maximum(slowest, time)
        below = inside
    return total + slowest
