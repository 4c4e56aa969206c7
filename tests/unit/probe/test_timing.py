"""``time_op``: device events time a repeat where there are any, the host clock otherwise."""

from __future__ import annotations

from scalewall.probe.runtime import time_op


class _Event:
    """A stand-in for a CUDA timing event: ``elapsed_time`` in milliseconds, as CUDA's."""

    def __init__(self, log: list[str], name: str, ms: float = 0.0) -> None:
        self.log, self.name, self.ms = log, name, ms

    def record(self) -> None:
        self.log.append(f"record {self.name}")

    def synchronize(self) -> None:
        self.log.append(f"wait {self.name}")

    def elapsed_time(self, end: _Event) -> float:
        return end.ms


def test_events_time_each_repeat_on_the_device() -> None:
    log: list[str] = []
    calls = []
    timing = time_op(
        lambda: calls.append(1),
        lambda: log.append("sync"),
        warmup=2,
        iters=4,
        repeats=3,
        events=lambda: (_Event(log, "start"), _Event(log, "end", ms=8.0)),
    )
    # 8 ms over 4 calls: 2 ms each, whatever the host clock read.
    assert timing.median_s == 2e-3 and timing.min_s == timing.max_s == 2e-3
    assert len(calls) == 2 + 3 * 4
    # One host sync after the warm-up; each repeat waits on its end event only.
    assert log.count("sync") == 1
    assert log.count("wait end") == 3 and log.count("record start") == 3


def test_without_events_the_host_clock_times_a_repeat() -> None:
    timing = time_op(lambda: None, lambda: None, warmup=0, iters=2, repeats=2, events=lambda: None)
    assert 0.0 <= timing.median_s < 0.01
