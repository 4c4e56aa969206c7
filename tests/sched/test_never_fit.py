"""Jobs that can never fit are skipped with a warning (or rejected) instead of blocking FIFO."""

from __future__ import annotations

import pandas as pd
import pytest
from tests.sched.frames import job_frame

from scalewall import sched
from scalewall.errors import SpecError
from scalewall.sched.engine import SimConfig


def _frame(num_gpu: list[int], run_s: float = 100.0) -> pd.DataFrame:
    return job_frame(num_gpu, run_s=run_s)


def test_a_job_larger_than_the_cluster_is_skipped_and_fifo_moves_on() -> None:
    cluster = sched.synthetic_cluster(num_nodes=2, gpus_per_node=8)
    result = sched.simulate(cluster, _frame([8, 32, 4, 4]), queue="fifo")
    jobs = result.jobs.set_index("job_id")
    assert list(jobs["skipped"]) == [False, True, False, False]
    assert jobs["finished"].sum() == 3
    assert result.summary["skipped_never_fit"] == 1
    assert result.summary["unfinished"] == 0
    assert "1 jobs can never fit" in result.summary["warnings"][0]


def test_reject_names_the_job() -> None:
    cluster = sched.synthetic_cluster(num_nodes=2, gpus_per_node=8)
    config = SimConfig(never_fit="reject")
    with pytest.raises(SpecError, match="j1 asks 32 GPUs"):
        sched.simulate(cluster, _frame([8, 32]), config=config)


def test_a_long_wait_is_warned_of_once() -> None:
    cluster = sched.synthetic_cluster(num_nodes=1, gpus_per_node=8)
    config = SimConfig(long_wait_warning_s=500.0, check_invariants=True)
    result = sched.simulate(cluster, _frame([8, 8, 8, 8, 8, 8, 8, 8], run_s=200.0), config=config)
    waits = [w for w in result.summary["warnings"] if "had waited" in w]
    # j2 ends at 600 s and j3 starts; j4 (submitted at 4 s) has then waited 596 s >= 500 s.
    assert len(waits) == 1 and waits[0].startswith("job j4 (8 GPUs) had waited")
    assert "at 600 s" in waits[0]


def test_bad_option_is_one_line() -> None:
    with pytest.raises(SpecError, match="never_fit"):
        SimConfig(never_fit="drop")
