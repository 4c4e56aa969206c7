"""Collective bandwidth by message size and group size with ``torch.distributed``.

NCCL on GPUs, gloo on CPUs. A group of g ranks is ranks 0..g-1 (under torchrun ranks are
node-major, so a group no larger than a node stays inside it and larger ones cross nodes).
Sizes follow nccl-tests' S: all-reduce the buffer, all-gather the gathered output,
reduce-scatter the input before scattering, all-to-all one rank's send buffer. Each rank times
its own runs; a record keeps the slowest rank's times, since a collective ends when its last
rank does. Buffers hold zeros so that repeated sums neither overflow nor hit denormals.
"""

from __future__ import annotations

from collections.abc import Callable

from scalewall.probe.busbw import bus_bandwidth_factor
from scalewall.probe.config import TORCH_DTYPES, ProbeConfig
from scalewall.probe.measurements import Record
from scalewall.probe.runtime import Context, Timing, first_line, time_op

#: The torch.distributed form each kind is measured in (torch's all_reduce is in place only).
VARIANT = {
    "all_reduce": "in_place",
    "all_gather": "out_of_place",
    "reduce_scatter": "out_of_place",
    "all_to_all": "out_of_place",
}


def default_group_sizes(world_size: int) -> tuple[int, ...]:
    """2, 4, 8 ... below the world size, then the world size (none for a one-rank world)."""
    sizes = []
    g = 2
    while g < world_size:
        sizes.append(g)
        g *= 2
    if world_size >= 2:
        sizes.append(world_size)
    return tuple(sizes)


def element_count(size_bytes: int, element_bytes: int, group_size: int) -> int:
    """Elements of the whole array: ``size_bytes`` rounded down to a multiple of the group."""
    per_rank = max(1, size_bytes // element_bytes // group_size)
    return per_rank * group_size


def _op(ctx: Context, kind: str, count: int, dtype: str, group: object) -> Callable[[], object]:
    torch, dist = ctx.torch, ctx.torch.distributed
    tdtype = getattr(torch, TORCH_DTYPES[dtype])
    size = dist.get_world_size(group=group)

    def zeros(n: int) -> object:
        return torch.zeros(n, dtype=tdtype, device=ctx.device)

    if kind == "all_reduce":
        buf = zeros(count)
        return lambda: dist.all_reduce(buf, group=group)
    if kind == "all_gather":
        out, inp = zeros(count), zeros(count // size)
        # torch 2.13 renamed the flat-tensor forms; older releases have only the old names
        gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
        return lambda: gather(out, inp, group=group)
    if kind == "reduce_scatter":
        out, inp = zeros(count // size), zeros(count)
        scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
        return lambda: scatter(out, inp, group=group)
    send, recv = zeros(count), zeros(count)
    return lambda: dist.all_to_all_single(recv, send, group=group)


def _slowest(ctx: Context, timing: Timing, group: object) -> Timing:
    """The element-wise maximum of the ranks' timings."""
    torch, dist = ctx.torch, ctx.torch.distributed
    values = torch.tensor(
        [timing.median_s, timing.min_s, timing.max_s], dtype=torch.float64, device=ctx.device
    )
    dist.all_reduce(values, op=dist.ReduceOp.MAX, group=group)
    median, low, high = (float(v) for v in values.tolist())
    return Timing(median_s=median, min_s=low, max_s=high, num_iters=timing.num_iters)


def _measure_one(
    ctx: Context, config: ProbeConfig, kind: str, size_bytes: int, group: object, g: int
) -> tuple[int, Timing]:
    element = ctx.torch.tensor([], dtype=getattr(ctx.torch, TORCH_DTYPES[config.collective_dtype]))
    count = element_count(size_bytes, element.element_size(), g)
    op = _op(ctx, kind, count, config.collective_dtype, group)
    ctx.torch.distributed.barrier(group=group)
    t = time_op(
        op, ctx.sync, warmup=config.warmup_iters, iters=config.iters, repeats=config.repeats
    )
    return count * element.element_size(), _slowest(ctx, t, group)


def _record(kind: str, dtype: str, size: int, t: Timing, g: int, nodes: int) -> Record:
    algbw = size / t.median_s
    return Record(
        kind=kind,
        variant=VARIANT[kind],
        dtype=dtype,
        time_s=t.median_s,
        size_bytes=size,
        group_size=g,
        num_nodes=nodes,
        bytes_per_s=algbw,
        busbw_bytes_per_s=algbw * bus_bandwidth_factor(kind, g),
        time_min_s=t.min_s,
        time_max_s=t.max_s,
        num_iters=t.num_iters,
    )


def _sweep_group(
    ctx: Context,
    config: ProbeConfig,
    group: object,
    g: int,
    nodes: int,
    notes: list[str],
    tick: Callable[[str], None],
) -> list[Record]:
    records = []
    for kind in config.collective_kinds:
        for size in config.message_sizes_bytes():
            try:
                actual, t = _measure_one(ctx, config, kind, size, group, g)
            except (RuntimeError, ValueError) as exc:
                # an unsupported collective fails alike on every rank of the group
                notes.append(f"{kind} on {g} ranks ({ctx.backend}) skipped: {first_line(exc)}")
                break
            records.append(_record(kind, config.collective_dtype, actual, t, g, nodes))
            tick(f"{kind} {g} ranks {size} B")
    return records


def measure_collectives(
    ctx: Context,
    config: ProbeConfig,
    hostnames_by_rank: list[str],
    notes: list[str],
    tick: Callable[[str], None],
) -> list[Record]:
    """Sweep every group size; every rank must call this (all take part in making groups)."""
    dist = ctx.torch.distributed
    sizes = config.group_sizes or default_group_sizes(ctx.world_size)
    records: list[Record] = []
    for g in sizes:
        if g > ctx.world_size:
            notes.append(f"group size {g} skipped: only {ctx.world_size} ranks")
            continue
        ranks = list(range(g))
        group = dist.group.WORLD if g == ctx.world_size else dist.new_group(ranks)
        if ctx.rank < g:
            nodes = len(set(hostnames_by_rank[:g]))
            records.extend(_sweep_group(ctx, config, group, g, nodes, notes, tick))
        dist.barrier(group=ctx.object_group)
    return records


def num_collective_steps(config: ProbeConfig, world_size: int) -> int:
    """How many (kind, group, size) measurements a sweep makes: the progress bar's total."""
    sizes = config.group_sizes or default_group_sizes(world_size)
    groups = sum(1 for g in sizes if g <= world_size)
    return groups * len(config.collective_kinds) * len(config.message_sizes_bytes())
