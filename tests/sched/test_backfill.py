"""Backfill keeps the head job's reservation: placement-aware, EASY and conservative."""

from __future__ import annotations

import pandas as pd
import pytest

from scalewall.sched.cluster import SyntheticClusterSpec, synthetic_cluster
from scalewall.sched.duration import TierSlowdownModel
from scalewall.sched.engine import SimConfig, Simulation
from scalewall.sched.jobs import job_table


def _sim(rows: list[tuple[float, float, int]], queue: str) -> Simulation:
    frame = pd.DataFrame(
        {
            "job_id": [f"j{i}" for i in range(len(rows))],
            "submit_s": [r[0] for r in rows],
            "run_s": [r[1] for r in rows],
            "num_gpu": [r[2] for r in rows],
            "gpu_milli": 1000,
            "cpu_milli": [1000 * r[2] for r in rows],
            "memory_bytes": 0,
            "gpu_models": "",
            "priority": 0,
            "tenant": "a",
            "est_run_s": [r[1] for r in rows],
        }
    )
    cluster = synthetic_cluster(SyntheticClusterSpec(num_nodes=3, gpus_per_node=8))
    config = SimConfig(queue=queue, placement="bestfit", check_invariants=True)
    sim = Simulation(
        cluster, job_table(frame), config, duration=TierSlowdownModel(slowdown_per_tier_frac=0.0)
    )
    sim.run()
    return sim


@pytest.mark.parametrize("queue", ["backfill", "backfill-conservative"])
def test_backfilled_job_stays_off_the_reserved_node(queue: str) -> None:
    # Two 7-GPU jobs hold nodes for 50,000 s, a 4-GPU job holds the third until 100 s. The
    # 8-GPU head job can start at 100 s on that third node. A 2-GPU 50,000 s job fits now only
    # there (the others have one GPU free each): counting GPUs (10 free at 100 s, 2 spare) it
    # would backfill onto the head job's node and hold it to 50,000 s.
    rows = [(0, 50_000, 7), (0, 50_000, 7), (0, 100, 4), (10, 1_000, 8), (20, 50_000, 2)]
    sim = _sim(rows, queue)
    assert sim.state.first_start_s[3] == 100
    assert sim.state.first_start_s[4] >= 100


def test_short_job_backfills_before_the_shadow_time() -> None:
    # A 2-GPU job that ends (by its estimate) before 100 s may use the reserved node now.
    rows = [(0, 50_000, 7), (0, 50_000, 7), (0, 100, 4), (10, 1_000, 8), (20, 50, 2)]
    sim = _sim(rows, "backfill")
    assert sim.state.first_start_s[4] == 20
    assert sim.state.first_start_s[3] == 100


def test_walltime_limit_ends_an_overrunning_job_and_frees_its_node() -> None:
    # The 4-GPU job's estimate says 100 s but it runs 5,000 s; with a limit of 1.5 x the
    # estimate it is ended at 150 s and the head job starts then, not at 5,000 s.
    rows = [(0, 50_000, 7), (0, 50_000, 7), (0, 5_000, 4), (10, 1_000, 8)]
    frame = pd.DataFrame(
        {
            "job_id": [f"j{i}" for i in range(4)],
            "submit_s": [r[0] for r in rows],
            "run_s": [r[1] for r in rows],
            "num_gpu": [r[2] for r in rows],
            "gpu_milli": 1000,
            "cpu_milli": [1000 * r[2] for r in rows],
            "memory_bytes": 0,
            "gpu_models": "",
            "priority": 0,
            "tenant": "a",
            "est_run_s": [50_000, 50_000, 100, 1_000],
        }
    )
    cluster = synthetic_cluster(SyntheticClusterSpec(num_nodes=3, gpus_per_node=8))
    config = SimConfig(queue="backfill", walltime_factor=1.5, check_invariants=True)
    sim = Simulation(
        cluster, job_table(frame), config, duration=TierSlowdownModel(slowdown_per_tier_frac=0.0)
    )
    sim.run()
    assert sim.state.timed_out.tolist() == [False, False, True, False]
    assert sim.state.end_s[2] == 150
    assert sim.state.first_start_s[3] == 150
    assert (150, "timeout", 2) in sim.events
