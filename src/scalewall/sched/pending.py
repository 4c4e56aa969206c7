"""Pending jobs kept in a policy's order as they arrive and leave, so a pass reads the queue's
front instead of sorting the whole queue (a month's queue holds 10^4-10^5 jobs; a pass starts a
few).

An order is a fixed rank per job (``numpy.lexsort`` of its keys, job index last so ties keep
arrival order); the pending jobs' ranks sit in one sorted list.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import numpy.typing as npt


class PendingOrder:
    """The pending jobs sorted by a fixed per-job rank."""

    def __init__(
        self,
        keys: Sequence[npt.NDArray[np.generic]],
        pending: Iterable[int],
        *,
        groups: npt.NDArray[np.int64] | None = None,
    ) -> None:
        """``keys``: per-job sort keys, most significant first; ties go to the job index.
        ``groups``: when the first key is a group index (a tenant), each group's rank range
        is kept in :attr:`groups`."""
        n = len(keys[0]) if keys else 0
        order = np.lexsort((np.arange(n), *reversed(keys)))
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        self.job_at: list[int] = order.tolist()
        """Job index at each rank."""
        self.rank: list[int] = rank.tolist()
        """Rank of each job."""
        self.ranks: list[int] = sorted(self.rank[j] for j in pending)
        self.groups: dict[int, tuple[int, int]] = {}
        """Group -> [first rank, end rank) of its jobs (with ``groups`` given)."""
        if groups is not None:
            counts = np.bincount(groups)
            ends = np.cumsum(counts)
            for group in np.flatnonzero(counts).tolist():
                self.groups[group] = (int(ends[group] - counts[group]), int(ends[group]))

    def add(self, job: int) -> None:
        bisect.insort(self.ranks, self.rank[job])

    def remove(self, job: int) -> None:
        self.ranks.pop(bisect.bisect_left(self.ranks, self.rank[job]))

    def __iter__(self) -> Iterator[int]:
        return self.between(0, len(self.rank))

    def between(self, lo: int, hi: int) -> Iterator[int]:
        """Pending jobs with rank in ``[lo, hi)``, in order; jobs may start or be added while
        it runs (it resumes after the last rank it gave)."""
        ranks = self.ranks
        i = bisect.bisect_left(ranks, lo)
        while i < len(ranks) and ranks[i] < hi:
            r = ranks[i]
            yield self.job_at[r]
            i = bisect.bisect_right(ranks, r)
