"""A Ray backend for the sweep ``Executor`` interface (the ``ray`` extra).

Ray is imported only when a ``RayExecutor`` first runs tasks, so nothing else in scalewall
loads it. Tasks go to Ray in chunks of ``chunk`` tasks (one Ray task each), so Ray's per-task
cost (scheduling, argument and result transfer) is paid once per chunk. A task whose worker
process or node dies is resubmitted by Ray itself (``max_retries``); the driver receives each
chunk's results exactly once, whatever the retries, so results written by the caller are
written once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from scalewall.errors import ScalewallError, SpecError

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_MAX_RETRIES = 3
"""Resubmissions of a task whose worker died (Ray's own default for tasks)."""


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ScalewallError(
            "executor=ray needs Ray; install it with: pip install 'scalewall[ray]'"
        ) from exc
    return ray


def connect(address: str | None) -> Any:
    """The ``ray`` module, connected to ``address`` (``None``: ``$RAY_ADDRESS``, a running
    local instance, else a new local one; ``ray://host:10001``: a remote cluster's client
    server). Worker output is not forwarded, so ``--json`` stays one document on stdout."""
    ray = _ray()
    if ray.is_initialized():
        return ray
    try:
        ray.init(address=address, log_to_driver=False, logging_level="ERROR")
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise ScalewallError(
            f"ray_address={address!r} is invalid ({exc}); a running Ray cluster's address "
            "(host:port, ray://host:10001 or auto), or none to start a local instance"
        ) from exc
    return ray


def _run_chunk(fn: Callable[[Any], Any], chunk: list[Any]) -> list[Any]:
    return [fn(task) for task in chunk]


def _noop(_: int) -> int:
    return 0


@dataclass(frozen=True, kw_only=True)
class RayExecutor:
    """Runs the tasks as Ray tasks on a Ray cluster, ``chunk`` tasks per Ray task."""

    address: str | None = None
    """Ray cluster to join (``None``: start or join a local instance)."""
    chunk: int = 1
    """Tasks per Ray task (see ``explore.points_per_task`` for choosing it)."""
    max_retries: int = DEFAULT_MAX_RETRIES
    """Resubmissions of a Ray task whose worker process or node died."""
    num_cpus_per_task: float = 1.0
    """CPUs Ray reserves for each task (the step model runs on one core)."""

    def __post_init__(self) -> None:
        if self.chunk < 1:
            raise SpecError("chunk", self.chunk, "one or more tasks per Ray task")
        if self.max_retries < 0:
            raise SpecError("max_retries", self.max_retries, "0 or more")

    def cluster_cpus(self) -> int:
        """CPUs the Ray cluster offers (its ``CPU`` resource)."""
        ray = connect(self.address)
        return max(1, int(ray.cluster_resources().get("CPU", 1)))

    def task_overhead_s(self, samples: int = 20) -> float:
        """Ray's round-trip cost of one empty task (submit, schedule, run, return), measured
        as the median of ``samples`` tasks run one at a time."""
        ray = connect(self.address)
        remote = ray.remote(_noop).options(num_cpus=self.num_cpus_per_task)
        ray.get(remote.remote(0))  # the first task may start a worker process
        times = []
        for i in range(samples):
            start = time.perf_counter()
            ray.get(remote.remote(i))
            times.append(time.perf_counter() - start)
        return sorted(times)[len(times) // 2]

    def map_unordered(self, fn: Callable[[T], R], tasks: Iterable[T]) -> Iterator[R]:
        todo = list(tasks)
        if not todo:
            return
        ray = connect(self.address)
        remote = ray.remote(_run_chunk).options(
            max_retries=self.max_retries, num_cpus=self.num_cpus_per_task
        )
        pending = [
            remote.remote(fn, todo[i : i + self.chunk]) for i in range(0, len(todo), self.chunk)
        ]
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                yield from ray.get(done[0])
        except BaseException:
            for ref in pending:  # Ctrl-C or a failed task: drop what has not run yet
                ray.cancel(ref)
            raise
