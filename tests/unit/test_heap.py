"""The heap setting for large batches: set once, harmless where it does not apply."""

from __future__ import annotations

import platform
import sys

from scalewall import _heap as heap


def test_retain_freed_memory_is_set_once_and_reports_it() -> None:
    first = heap.retain_freed_memory()
    assert heap.retain_freed_memory() is first
    # glibc accepts both values (mallopt returns 0 for one out of its range); elsewhere nothing
    # is set.
    glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
    assert first is glibc


def test_small_batches_leave_the_allocator_alone(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls: list[int] = []
    monkeypatch.setattr(heap, "retain_freed_memory", lambda: calls.append(1) or True)
    heap.for_batch(heap.LARGE_BATCH_ROWS - 1)
    assert calls == []
    heap.for_batch(heap.LARGE_BATCH_ROWS)
    assert calls == [1]
