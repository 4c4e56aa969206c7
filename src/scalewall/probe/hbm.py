"""Device-memory bandwidth from a large copy: ``dst.copy_(src)``.

A copy of S bytes reads S and writes S, so the rate reported is ``2*S / t`` (the convention of
the STREAM "Copy" kernel, McCalpin). On a CPU this measures DRAM bandwidth of one process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scalewall.probe.config import ProbeConfig
from scalewall.probe.measurements import Record
from scalewall.probe.runtime import Context, first_line, time_op

BYTES_MOVED_PER_BYTE_COPIED = 2.0
"""One read and one write per byte (STREAM Copy counting)."""


def _copier(src: Any, dst: Any) -> Callable[[], object]:
    return lambda: dst.copy_(src)


def measure_hbm(ctx: Context, config: ProbeConfig, notes: list[str]) -> list[Record]:
    """One record per buffer size that fits."""
    torch = ctx.torch
    records = []
    for size in config.hbm_sizes_bytes:
        try:
            src = torch.ones(size, dtype=torch.uint8, device=ctx.device)
            dst = torch.empty_like(src)
            t = time_op(
                _copier(src, dst),
                ctx.sync,
                events=ctx.event_pair,
                warmup=config.warmup_iters,
                iters=config.iters,
                repeats=config.repeats,
            )
        except (RuntimeError, ValueError) as exc:
            notes.append(f"hbm copy of {size} bytes skipped: {first_line(exc)}")
            continue
        records.append(
            Record(
                kind="hbm",
                variant="copy",
                dtype="uint8",
                time_s=t.median_s,
                size_bytes=size,
                bytes_per_s=BYTES_MOVED_PER_BYTE_COPIED * size / t.median_s,
                time_min_s=t.min_s,
                time_max_s=t.max_s,
                num_iters=t.num_iters,
                rank=ctx.rank,
            )
        )
        del src, dst
    return records
