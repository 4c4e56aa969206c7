"""The data-parallel overlap window against the pipeline schedule itself.

An event simulation of Megatron's (interleaved) 1F1B schedule (Narayanan et al. SC'21, Sec. 2.2;
the op order of Megatron-LM ``forward_backward_pipelining_with_interleaving``: rank r runs
(pp - r - 1) * 2 + (v - 1) * pp warm-up forwards, then one forward and one backward in turn,
then the cool-down backwards) gives the time at which each model chunk of the first stage gets
its last gradient. A gradient reduction that starts on a chunk's gradients as they are produced
(bucketed, as Megatron-Core's ``overlap_grad_reduce``) is then exposed for whatever runs past the
end of the step; ``schedule_exposed_s`` must give exactly that.
"""

from __future__ import annotations

import numpy as np
import pytest

from scalewall.perf.data_parallel import schedule_exposed_s

Op = tuple[str, int, int]  # (kind "F" or "B", chunk, micro-batch)


def _stage_ops(rank: int, pp: int, vpp: int, m: int) -> list[Op]:
    total = m * vpp

    def chunk(k: int, forward: bool) -> int:
        c = (k % (pp * vpp)) // pp
        return c if forward else vpp - 1 - c

    def micro(k: int) -> int:
        return (k // (pp * vpp)) * pp + k % pp

    if vpp == 1:
        warmup = min(pp - rank - 1, total)
    else:
        warmup = min((pp - rank - 1) * 2 + (vpp - 1) * pp, total)
    ops: list[Op] = [("F", chunk(k, True), micro(k)) for k in range(warmup)]
    for i in range(total - warmup):
        ops.append(("F", chunk(warmup + i, True), micro(warmup + i)))
        ops.append(("B", chunk(i, False), micro(i)))
    ops += [("B", chunk(k, False), micro(k)) for k in range(total - warmup, total)]
    return ops


def _simulate(pp: int, vpp: int, m: int, f: float, b: float) -> dict[tuple[int, Op], float]:
    """End time of every op on every stage; chunk forward f, backward b."""
    ops = [_stage_ops(r, pp, vpp, m) for r in range(pp)]
    end: dict[tuple[int, Op], float] = {}
    cursor, free = [0] * pp, [0.0] * pp

    def needs(rank: int, op: Op) -> tuple[int, Op] | None:
        kind, c, i = op
        if kind == "F":
            if rank > 0:
                return rank - 1, ("F", c, i)
            return (pp - 1, ("F", c - 1, i)) if c > 0 else None
        if rank < pp - 1:
            return rank + 1, ("B", c, i)
        return (0, ("B", c + 1, i)) if c < vpp - 1 else (pp - 1, ("F", c, i))

    while any(cursor[r] < len(ops[r]) for r in range(pp)):
        progressed = False
        for r in range(pp):
            while cursor[r] < len(ops[r]):
                op = ops[r][cursor[r]]
                dep = needs(r, op)
                if dep is not None and dep not in end:
                    break
                start = max(free[r], end[dep] if dep is not None else 0.0)
                free[r] = start + (f if op[0] == "F" else b)
                end[(r, op)] = free[r]
                cursor[r] += 1
                progressed = True
        assert progressed, "schedule deadlock"
    return end


def _exposed_reduction(pp: int, vpp: int, m: int, f: float, b: float, comm: float) -> float:
    """Reduction of the first stage's gradients (``comm`` seconds in all, 1/vpp per chunk)
    run on one link as each chunk's last backward produces them; its time past the step."""
    end = _simulate(pp, vpp, m, f, b)
    step_end = max(end.values())
    last = sorted(
        max(t for (r, op), t in end.items() if r == 0 and op[:2] == ("B", c)) for c in range(vpp)
    )
    link = 0.0
    for ready in last:
        # Gradients arrive uniformly over the chunk's last backward; the link finishes the
        # chunk no earlier than its last gradient and no faster than its share of the time.
        link = max(ready, max(link, ready - b) + comm / vpp)
    return max(0.0, link - step_end)


@pytest.mark.parametrize(
    ("pp", "vpp", "m"), [(4, 1, 8), (8, 1, 16), (4, 2, 8), (8, 4, 16), (4, 4, 8)]
)
def test_exposed_reduction_is_what_the_schedule_leaves(pp: int, vpp: int, m: int) -> None:
    f, b = 1.0, 2.0
    for comm in (0.5, 2.0, 5.0, 10.0, 20.0, 40.0, 80.0):
        model = schedule_exposed_s(
            np.array([comm]), np.array([vpp * b]), np.array([float(pp)]), np.array([float(vpp)])
        )
        assert float(model[0]) == pytest.approx(
            _exposed_reduction(pp, vpp, m, f, b, comm), abs=1e-9
        )


def test_plain_1f1b_window_is_the_last_backward() -> None:
    """1F1B: the first stage's last gradients come from the step's very last backward, so a
    reduction longer than that backward shows by exactly the excess."""
    pp, m, f, b = 8, 16, 1.0, 2.0
    for comm in (5.0, 20.0):
        assert _exposed_reduction(pp, 1, m, f, b, comm) == pytest.approx(comm - b, rel=1e-12)


def test_interleaving_hides_more_than_the_last_backward() -> None:
    """With v chunks, chunks 1..v-1 finish their last backwards during the cool-down, so the
    schedule hides more than one backward: the credit the window gives is real."""
    pp, vpp, m, f, b = 8, 4, 16, 1.0, 2.0
    comm = 20.0
    assert _exposed_reduction(pp, vpp, m, f, b, comm) < comm - vpp * b
