"""The probe's view of the process it runs in: torch, the device, the distributed group.

torch is an optional extra: it is imported here, lazily, and nowhere at module level, so that
``import scalewall.probe`` works without it and ``scalewall probe`` can say how to install it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import platform
import re
import socket
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scalewall import __version__
from scalewall.errors import ScalewallError, SpecError
from scalewall.probe.measurements import Machine, Versions

INSTALL_HINT = "PyTorch is not installed; install the probe extra: pip install 'scalewall[probe]'"
DEVICES = ("auto", "cuda", "cpu")


class ProbeUnavailable(ScalewallError):
    """The probe cannot run here (no PyTorch); the CLI prints the line and exits 2."""


def import_torch() -> Any:
    """The torch module, or ProbeUnavailable with the install command."""
    try:
        import torch
    except ImportError:
        raise ProbeUnavailable(INSTALL_HINT) from None
    return torch


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise SpecError(name, raw, "environment variable must be an integer") from None


@dataclasses.dataclass(frozen=True, kw_only=True)
class Context:
    """The device this rank measures on and its place in the (possibly one-rank) world."""

    torch: Any
    device: Any
    """``torch.device`` of this rank."""
    device_type: str
    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    backend: str
    """torch.distributed backend, or empty when the world is one process."""
    object_group: Any
    """A gloo group for exchanging Python objects (host names, records), or None."""
    owns_group: bool
    """True when the probe initialised torch.distributed and must tear it down."""

    def sync(self) -> None:
        """Wait until the device has finished all queued work."""
        if self.device_type == "cuda":
            self.torch.cuda.synchronize(self.device)

    def event_pair(self) -> tuple[Any, Any] | None:
        """A start and an end timing event on the current CUDA stream; None off CUDA."""
        if self.device_type != "cuda":
            return None
        event = self.torch.cuda.Event
        return event(enable_timing=True), event(enable_timing=True)


def pick_device(torch: Any, device: str) -> str:
    """``cuda`` or ``cpu`` for a requested ``auto``, ``cuda`` or ``cpu``."""
    if device not in DEVICES:
        raise SpecError("device", device, f"valid: {', '.join(DEVICES)}")
    if device == "cuda" and not torch.cuda.is_available():
        raise SpecError("device", device, "no CUDA device is visible; use --device cpu")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def start(device: str = "auto", timeout_s: float = 600.0) -> Context:
    """Pick the device and, under torchrun (``WORLD_SIZE`` > 1), join the process group."""
    torch = import_torch()
    device_type = pick_device(torch, device)
    rank, world = _env_int("RANK", 0), _env_int("WORLD_SIZE", 1)
    local_rank = _env_int("LOCAL_RANK", 0)
    local_world = _env_int("LOCAL_WORLD_SIZE", world)
    if device_type == "cuda":
        torch.cuda.set_device(local_rank)
    dev = torch.device(device_type, local_rank) if device_type == "cuda" else torch.device("cpu")
    dist = torch.distributed
    owns = False
    if world > 1 and not dist.is_initialized():
        backend = "nccl" if device_type == "cuda" else "gloo"
        timeout = dt.timedelta(seconds=timeout_s)
        dist.init_process_group(backend=backend, rank=rank, world_size=world, timeout=timeout)
        owns = True
    if world > 1:
        backend = str(dist.get_backend())
        timeout = dt.timedelta(seconds=timeout_s)
        gloo = backend == "gloo"
        objects = dist.group.WORLD if gloo else dist.new_group(backend="gloo", timeout=timeout)
    else:
        backend, objects = "", None
    return Context(
        torch=torch,
        device=dev,
        device_type=device_type,
        rank=rank,
        world_size=world,
        local_rank=local_rank,
        local_world_size=local_world,
        backend=backend,
        object_group=objects,
        owns_group=owns,
    )


def finish(ctx: Context) -> None:
    """Leave the process group if the probe joined it."""
    if ctx.owns_group:
        ctx.torch.distributed.destroy_process_group()


def all_gather_objects(ctx: Context, value: Any) -> list[Any]:
    """``value`` from every rank, in rank order (a one-element list in a one-rank world)."""
    if ctx.world_size == 1:
        return [value]
    out: list[Any] = [None] * ctx.world_size
    ctx.torch.distributed.all_gather_object(out, value, group=ctx.object_group)
    return out


def broadcast_object(ctx: Context, value: Any) -> Any:
    """Rank 0's ``value`` on every rank."""
    if ctx.world_size == 1:
        return value
    box = [value]
    ctx.torch.distributed.broadcast_object_list(box, src=0, group=ctx.object_group)
    return box[0]


# ---------------------------------------------------------------- timing


@dataclasses.dataclass(frozen=True, kw_only=True)
class Timing:
    """Per-operation time over ``repeats`` timed runs of ``num_iters`` operations each."""

    median_s: float
    min_s: float
    max_s: float
    num_iters: int


def time_op(
    fn: Callable[[], object],
    sync: Callable[[], None],
    *,
    warmup: int,
    iters: int,
    repeats: int,
    events: Callable[[], tuple[Any, Any] | None] | None = None,
) -> Timing:
    """Time ``fn``: warm up, then ``repeats`` x (``iters`` calls, wait for the device).

    Waiting once per repeat rather than per call keeps launch gaps out of the figure, as
    nccl-tests and GEMM benchmarks do; the median resists one-off stalls. With ``events``
    (``Context.event_pair``: CUDA events) a repeat is timed on the device, from an event
    before the first call to one after the last, so the host's wait and the first launch's
    latency stay out of short kernels' figures; without, by the host clock.
    """
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeats):
        pair = events() if events is not None else None
        if pair is not None:
            start, end = pair
            start.record()
            for _ in range(iters):
                fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3 / iters)
            continue
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / iters)
    return Timing(
        median_s=statistics.median(times), min_s=min(times), max_s=max(times), num_iters=iters
    )


# ---------------------------------------------------------------- machine and versions


def _driver_version() -> str:
    """The NVIDIA kernel driver version from /proc, or empty when there is none."""
    path = Path("/proc/driver/nvidia/version")
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    match = re.search(r"Kernel Module\s+(?:for \S+\s+)?([\d.]+)", text)
    return match.group(1) if match else ""


def versions(ctx: Context) -> Versions:
    """Versions of the software stack on this rank."""
    torch = ctx.torch
    nccl = ""
    if ctx.device_type == "cuda":
        raw = torch.cuda.nccl.version()
        nccl = ".".join(map(str, raw)) if isinstance(raw, tuple) else str(raw)
    return Versions(
        python=platform.python_version(),
        torch=str(torch.__version__),
        cuda=str(torch.version.cuda or ""),
        nccl=nccl,
        driver=_driver_version() if ctx.device_type == "cuda" else "",
        scalewall=__version__,
        platform=platform.platform(),
    )


def _cpu_name() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    match = re.search(r"^model name\s*:\s*(.+)$", text, flags=re.MULTILINE)
    name = match.group(1).strip() if match else (platform.processor() or platform.machine())
    return f"{name} ({os.cpu_count()} logical CPUs)"


def _device(ctx: Context) -> tuple[str, int]:
    if ctx.device_type == "cuda":
        props = ctx.torch.cuda.get_device_properties(ctx.device)
        return str(props.name), int(props.total_memory)
    return _cpu_name(), 0


def machine(ctx: Context, hostnames_by_rank: list[str]) -> Machine:
    """The machine as rank 0 sees it, with every rank's host name."""
    name, memory = _device(ctx)
    hosts = tuple(dict.fromkeys(hostnames_by_rank))
    return Machine(
        hostname=hostnames_by_rank[0],
        hostnames=hosts,
        num_nodes=len(hosts),
        world_size=ctx.world_size,
        devices_per_node=ctx.local_world_size,
        device_type=ctx.device_type,
        device_name=name,
        device_memory_bytes=memory,
        backend=ctx.backend,
    )


def first_line(exc: BaseException) -> str:
    """First line of an exception message (torch errors run to many lines)."""
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def hostname() -> str:
    return socket.gethostname()


def now_utc() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
