"""Where the sizes of a sweep run: a small executor interface, so a distributed engine can plug in.

An executor maps a picklable function over picklable tasks and yields results as they complete
(in any order). Two are built in: ``SerialExecutor`` (in this process, in order) and
``ProcessExecutor`` (local worker processes, the default).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    """Runs ``fn`` on every task; yields results as they finish, in any order."""

    def map_unordered(self, fn: Callable[[T], R], tasks: Iterable[T]) -> Iterator[R]: ...


@dataclass(frozen=True, kw_only=True)
class SerialExecutor:
    """Runs the tasks one after another in this process."""

    def map_unordered(self, fn: Callable[[T], R], tasks: Iterable[T]) -> Iterator[R]:
        for task in tasks:
            yield fn(task)


@dataclass(frozen=True, kw_only=True)
class ProcessExecutor:
    """Runs the tasks in local worker processes."""

    max_workers: int = 0
    """Worker processes; 0: one per CPU core, at most one per task."""

    def map_unordered(self, fn: Callable[[T], R], tasks: Iterable[T]) -> Iterator[R]:
        todo = list(tasks)
        if not todo:
            return
        workers = min(self.max_workers or os.cpu_count() or 1, len(todo))
        if workers == 1:
            yield from SerialExecutor().map_unordered(fn, todo)
            return
        pool = ProcessPoolExecutor(max_workers=workers)
        try:
            futures = [pool.submit(fn, task) for task in todo]
            for future in as_completed(futures):
                yield future.result()
        except BaseException:
            # Ctrl-C (or a failed task): drop the queued tasks instead of running them all
            # first; the workers, in the same process group, take the same Ctrl-C.
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()


EXECUTORS = ("local", "ray")
"""Executor names the CLI's ``--executor`` takes."""


def executor_from_options(
    name: str, *, workers: int = 0, ray_address: str | None = None, chunk: int = 1
) -> Executor:
    """The executor a command's ``--executor``, ``--workers``, ``--ray-address`` and ``--chunk``
    name: ``local`` is worker processes (``workers`` 1: in this process), ``ray`` a Ray cluster
    (imported only here, from the ``ray`` extra)."""
    from scalewall.errors import SpecError

    if name not in EXECUTORS:
        raise SpecError("executor", name, " or ".join(EXECUTORS))
    if workers < 0:
        raise SpecError("workers", workers, "0 (one per core) or more")
    if name == "ray":
        from scalewall.sweep.ray_executor import RayExecutor

        return RayExecutor(address=ray_address, chunk=chunk)
    if ray_address is not None:
        raise SpecError("ray-address", ray_address, "only with --executor ray")
    return SerialExecutor() if workers == 1 else ProcessExecutor(max_workers=workers)
