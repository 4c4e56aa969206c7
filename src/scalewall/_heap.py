"""Keep freed heap memory for reuse while the step model evaluates large batches.

A batch of 10^5 plans makes a few hundred temporary arrays of 0.8 MB each. glibc's malloc maps
such blocks afresh (the mmap threshold starts at 128 KiB) and gives the top of the heap back to
the system once more than twice the largest freed block lies free there, so every pass over the
batch faults its working set in again: on a 10^5-plan batch more than half of the CPU time went
to page faults. Raising both thresholds (``mallopt(3)``) lets the heap keep and reuse those pages.
Only the C library's allocator parameters change; no computed value does. A process embedding
scalewall that manages its own allocator sets ``SCALEWALL_RETAIN_HEAP=0`` to leave them alone.
"""

from __future__ import annotations

import os
import sys

MMAP_THRESHOLD_BYTES = 32 * 2**20
"""Blocks below this come from the heap, not from their own mapping: 32 MiB, glibc's largest
permitted value on 64-bit systems (``DEFAULT_MMAP_THRESHOLD_MAX``), an array of 4 million rows."""
TRIM_THRESHOLD_BYTES = 256 * 2**20
"""Free memory at the top of the heap below this is kept: the peak temporaries of one step-model
call over the search's 2^18-plan chunks. At most this much freed memory stays with the process."""

LARGE_BATCH_ROWS = 16_384
"""Batches from this many plans on (float64 arrays of 128 KiB, glibc's initial mmap threshold)
set the thresholds (``for_batch``)."""

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_done: list[bool] = []


def retain_freed_memory() -> bool:
    """Set glibc's mmap and trim thresholds once per process; whether they are set (False on
    other platforms and C libraries, where nothing changes)."""
    if _done:
        return _done[0]
    ok = False
    if os.environ.get("SCALEWALL_RETAIN_HEAP", "1") != "0" and sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None)
            # Only glibc has both mallopt and gnu_get_libc_version (musl has neither setting).
            if hasattr(libc, "gnu_get_libc_version") and hasattr(libc, "mallopt"):
                ok = bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(
                    libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
                )
        except OSError:
            ok = False
    _done.append(ok)
    return ok


def for_batch(rows: int) -> None:
    """``retain_freed_memory`` for a batch of ``rows`` plans of ``LARGE_BATCH_ROWS`` or more."""
    if rows >= LARGE_BATCH_ROWS:
        retain_freed_memory()
