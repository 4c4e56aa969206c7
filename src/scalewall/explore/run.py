"""Running an exploration: chunks of points through an executor, rows written as chunks finish."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from scalewall.explore import dataset
from scalewall.explore.grid import ExploreConfig, ExploreSpec, Point, build, settings_key
from scalewall.explore.points import ChunkTask, run_chunk, run_point
from scalewall.sweep.executor import Executor, ProcessExecutor

MAX_OVERHEAD_FRAC = 0.1
"""Largest share of a task's time that the executor's per-task cost may take."""
TASKS_PER_WORKER = 4
"""At least this many tasks per worker, so the last tasks finish together and a lost worker
loses little; it caps the points per task from above."""

Progress = Callable[[int, int, int], None]
"""Called with (points done, points submitted and not finished, points failed)."""


def points_per_task(overhead_s: float, point_s: float, points: int, workers: int) -> int:
    """Points per task so the per-task cost stays under ``MAX_OVERHEAD_FRAC`` of a task:
    o / (o + k t) <= f  <=>  k >= o (1 - f) / (f t); capped so every worker still gets
    ``TASKS_PER_WORKER`` tasks (then the overhead bound yields to load balance). An unknown
    (infinite) overhead gives the largest balanced chunk."""
    f = MAX_OVERHEAD_FRAC
    balanced = max(1, points // (TASKS_PER_WORKER * max(workers, 1)))
    if not math.isfinite(overhead_s):
        return balanced
    needed = math.ceil(overhead_s * (1.0 - f) / (f * max(point_s, 1e-9)))
    return max(1, min(needed, balanced))


def pareto_frontier(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows no other row beats on both time to train (lower) and tokens per USD (higher)."""
    rows = frame[frame["found"].astype(bool) & frame["tokens_per_usd"].notna()]
    rows = rows.sort_values(["time_to_train_s", "tokens_per_usd"], ascending=[True, False])
    best, keep = -math.inf, []
    for index, value in zip(rows.index, rows["tokens_per_usd"], strict=True):
        if value > best:
            best = value
            keep.append(index)
    return rows.loc[keep]


@dataclass(frozen=True, kw_only=True)
class ExploreResult:
    out: str
    points: int
    skipped: int
    """Points already in the dataset (a resumed run)."""
    written: int
    failed: int
    failures: tuple[tuple[str, str], ...]
    found: int
    points_per_task: int
    elapsed_s: float
    frontier: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "points": self.points,
            "skipped": self.skipped,
            "written": self.written,
            "failed": self.failed,
            "failures": [{"point_key": k, "error": e} for k, e in self.failures[:20]],
            "found": self.found,
            "points_per_task": self.points_per_task,
            "elapsed_s": self.elapsed_s,
            "points_per_s": self.written / self.elapsed_s if self.elapsed_s > 0 else 0.0,
            "frontier": self.frontier,
        }


def _workers(executor: Executor) -> int:
    cpus = getattr(executor, "cluster_cpus", None)
    if callable(cpus):
        return int(cpus())
    return int(getattr(executor, "max_workers", 0) or os.cpu_count() or 1)


def _auto_chunk(config: ExploreConfig, todo: list[Point], executor: Executor, root: Path) -> int:
    """Time the first point here (its row is written), measure the executor's per-task cost."""
    start = time.perf_counter()
    dataset.write_rows(root, [run_point(config, todo[0])])
    point_s = time.perf_counter() - start
    overhead = getattr(executor, "task_overhead_s", None)
    # Local processes: no measured cost; chunks as large as load balance allows.
    overhead_s = float(overhead()) if callable(overhead) else math.inf
    return points_per_task(overhead_s, point_s, len(todo), _workers(executor))


def _chunks(todo: Sequence[Point], size: int) -> list[tuple[Point, ...]]:
    """Chunks of ``size`` points within one (model, accelerator design), in grid order."""
    groups: dict[tuple[str, str], list[Point]] = {}
    for p in todo:
        groups.setdefault((p.model, p.design), []).append(p)
    return [tuple(g[i : i + size]) for g in groups.values() for i in range(0, len(g), size)]


def explore(
    spec: ExploreSpec,
    out: Path | str,
    *,
    executor: Executor | None = None,
    chunk: int = 0,
    fresh: bool = False,
    progress: Progress | None = None,
) -> ExploreResult:
    """Search every point of ``spec``'s grid and write its row to the dataset at ``out``.

    Points already written are skipped; ``chunk`` points go to each task (0: chosen from the
    measured point time and the executor's per-task cost, ``points_per_task``)."""
    start = time.perf_counter()
    config, points = build(spec)
    root = Path(out)
    done_keys = dataset.open_dataset(root, settings_key(config), fresh=fresh)
    todo = [p for p in points if p.key not in done_keys]
    executor = executor or ProcessExecutor()
    size, first = chunk, 0
    if todo and size < 1:
        size, first = _auto_chunk(config, todo, executor, root), 1
    tasks = [ChunkTask(config=config, points=c) for c in _chunks(todo[first:], max(size, 1))]
    done, failures = first, []
    running = len(todo) - first
    if progress:
        progress(done, running, 0)
    for result in executor.map_unordered(run_chunk, tasks):
        dataset.write_rows(root, result.rows)
        done += len(result.rows)
        running -= len(result.rows) + len(result.failed)
        failures.extend(result.failed)
        if progress:
            progress(done, running, len(failures))
    frame = dataset.load(root)
    frontier = pareto_frontier(frame)
    return ExploreResult(
        out=str(root),
        points=len(points),
        skipped=len(points) - len(todo),
        written=done,
        failed=len(failures),
        failures=tuple(failures),
        found=int(frame["found"].astype(bool).sum()) if len(frame) else 0,
        points_per_task=max(size, 1),
        elapsed_s=time.perf_counter() - start,
        frontier=_frontier_rows(frontier),
    )


def _frontier_rows(frontier: pd.DataFrame) -> list[dict[str, Any]]:
    columns = ["model", "accelerator", "fabric", "gpus", "batch_rule", "tokens_per_s",
               "time_to_train_s", "tokens_per_usd"]  # fmt: skip
    return [
        {c: (v.item() if hasattr(v, "item") else v) for c, v in zip(columns, values, strict=True)}
        for values in frontier[columns].itertuples(index=False)
    ]
