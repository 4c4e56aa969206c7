"""Bus bandwidth of a collective, with the nccl-tests definitions.

``algbw = S / t`` where S is the size of the whole array in bytes (for all-gather the gathered
output, for reduce-scatter the input before scattering). ``busbw = algbw * factor(kind, n)``
with the factors of NVIDIA nccl-tests ``doc/PERFORMANCE.md`` (reference/facts.md section 7):

- all-reduce ``2(n-1)/n`` (each element crosses n-1 links reducing and n-1 broadcasting)
- reduce-scatter, all-gather, all-to-all ``(n-1)/n``
- broadcast, reduce ``1`` (everything leaves or enters the root)

so that busbw can be compared with a link's peak whatever the number of ranks n.
"""

from __future__ import annotations

from scalewall.errors import SpecError

#: Collective kinds that have a bus-bandwidth factor (the names used in measurements files).
COLLECTIVE_KINDS = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "all_to_all",
    "broadcast",
    "reduce",
)


def bus_bandwidth_factor(kind: str, group_size: int) -> float:
    """The factor that turns algbw into busbw for ``kind`` on ``group_size`` ranks.

    A group of one rank moves nothing over a bus; its factor is 0 for the collectives whose
    factor vanishes at n = 1 (all of them except broadcast and reduce), as nccl-tests prints.
    """
    if group_size < 1:
        raise SpecError("group_size", group_size, "must be at least 1")
    n = float(group_size)
    if kind == "all_reduce":
        return 2.0 * (n - 1.0) / n
    if kind in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1.0) / n
    if kind in ("broadcast", "reduce"):
        return 1.0
    raise SpecError("kind", kind, f"valid collective kinds: {', '.join(COLLECTIVE_KINDS)}")
