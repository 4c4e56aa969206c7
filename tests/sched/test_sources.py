"""Catalog clusters, node failures recorded in a trace, the step-model duration adapter, and the
public names of ``scalewall.sched``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from scalewall import sched
from scalewall.errors import SpecError
from scalewall.sched.duration import JobView, PlacementSummary
from scalewall.sched.engine import FailureModel, SimConfig, Simulation
from scalewall.sched.jobs import job_table
from scalewall.sched.traces._common import RecordedAttempt
from scalewall.sched.traces.philly import read_philly


def test_catalog_cluster_layout() -> None:
    # gb200-nvl72-576: 576 GPUs, 4 per tray, NVL72 scale-up domains of 18 trays.
    cluster = sched.load_cluster("gb200-nvl72-576")
    assert (cluster.num_nodes, cluster.total_gpus) == (144, 576)
    assert set(cluster.gpu_count.tolist()) == {4}
    assert np.bincount(cluster.domain).tolist() == [18] * 8
    # dgx-h100-superpod-1024: 8-GPU nodes, each its own NVLink domain, leaves of 256 GPUs.
    pod = sched.load_cluster("dgx-h100-superpod-1024")
    assert (pod.num_nodes, pod.total_gpus) == (128, 1024)
    assert np.unique(pod.domain).size == 128
    assert np.bincount(pod.rack).tolist() == [32] * 4


def test_unknown_cluster_names_the_choices() -> None:
    with pytest.raises(SpecError, match=r"catalog cluster id.*gb200-nvl72-576"):
        sched.load_cluster("no-such-cluster")
    with pytest.raises(SpecError, match="no such file"):
        sched.load_cluster("missing/nodes.csv")


def _philly_log(tmp_path: Path) -> Path:
    # Job 1 fails once on m1 after 2 h of a 3 h run (attempt 1), then reruns; job 2 is fine.
    jobs = [
        {
            "status": "Pass",
            "vc": "vc1",
            "jobid": "application_1",
            "user": "x",
            "submitted_time": "2017-10-03 10:00:00",
            "attempts": [
                {
                    "start_time": "2017-10-03 10:00:00",
                    "end_time": "2017-10-03 12:00:00",
                    "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}],
                },
                {
                    "start_time": "2017-10-03 12:10:00",
                    "end_time": "2017-10-03 13:10:00",
                    "detail": [{"ip": "m2", "gpus": ["gpu0", "gpu1"]}],
                },
            ],
        },
        {
            "status": "Failed",
            "vc": "vc2",
            "jobid": "application_2",
            "user": "y",
            "submitted_time": "2017-10-03 10:00:00",
            "attempts": [
                {
                    "start_time": "2017-10-03 10:00:00",
                    "end_time": "2017-10-03 10:30:00",
                    "detail": [{"ip": "m2", "gpus": ["gpu0"]}],
                }
            ],
        },
    ]
    path = tmp_path / "cluster_job_log"
    path.write_text(json.dumps(jobs))
    return path


def test_philly_attempts_are_kept_and_sum_to_the_run_time(tmp_path: Path) -> None:
    read = read_philly(_philly_log(tmp_path))
    # Job 1's retried attempt failed on m1; job 2 failed without a retry (its end, no restart).
    assert read.attempts == (
        (
            "application_1",
            (
                RecordedAttempt(run_s=7200.0, machine="m1", failed=True),
                RecordedAttempt(run_s=3600.0, machine="m2", failed=False),
            ),
        ),
    )
    # 2 h + 1 h of attempts, not the 3 h 10 min span: the 10 minutes between them were a wait.
    assert list(read.frame["run_s"]) == [10_800.0, 1_800.0]
    assert read.node_failures == ()
    machines = tmp_path / "cluster_machine_list"
    machines.write_text("machineId,number of GPUs,single GPU mem\nm1,8,24GB\nm2,8,24GB\n")
    cluster = sched.load_cluster(str(machines))
    assert cluster.names == ["m1", "m2"] and cluster.total_gpus == 16


def test_trace_failures_restart_the_job_on_the_node(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "job_id": ["a"],
            "submit_s": [0.0],
            "run_s": [10_000.0],
            "num_gpu": [8],
            "gpu_milli": [1000],
            "cpu_milli": [0],
            "memory_bytes": [0],
            "gpu_models": [""],
            "priority": [0],
            "tenant": ["t"],
            "est_run_s": [10_000.0],
        }
    )
    cluster = sched.synthetic_cluster(num_nodes=2, gpus_per_node=8)
    failures = FailureModel(
        failures_per_1000_node_days=0.0,
        repair_time_s=100.0,
        trace_failures=((5_000.0, "node-000000"), (6_000.0, "node-000001")),
    )
    config = SimConfig(
        placement="bestfit", failures=failures, checkpoint_interval_s=3600.0, check_invariants=True
    )
    sim = Simulation(
        cluster,
        job_table(frame),
        config,
        duration=sched.TierSlowdownModel(slowdown_per_tier_frac=0.0),
    )
    sim.run()
    fails = [(t, i) for t, e, i in sim.events if e == "node_fail"]
    assert fails == [(5_000.0, 0), (6_000.0, 1)]
    # Whichever node the job got, one of the two failures hits it.
    assert int(sim.state.restarts[0]) >= 1
    # Lost work: 5,000 s done, the checkpoint at 3,600 s kept, 1,400 s x 8 GPUs lost (or more
    # when the second failure hits it too).
    assert float(sim.state.lost_gpu_s[0]) >= 1_400.0 * 8
    bad = FailureModel(failures_per_1000_node_days=0.0, trace_failures=((1.0, "nope"),))
    with pytest.raises(SpecError, match="nope"):
        Simulation(cluster, job_table(frame), SimConfig(failures=bad)).run()


def _spans_estimator(calls: list[list[int]]) -> Any:
    def estimate(_model: str, cluster: Any, _plan: Any) -> float:
        spans = [t.span_gpus for t in cluster.tiers]
        calls.append(spans)
        # A stand-in step model: 10% per tier the job's GPUs do not fit inside.
        return 1.0 + 0.1 * sum(s < cluster.num_gpus for s in spans)

    return estimate


def test_step_duration_stretches_spread_placements() -> None:
    calls: list[list[int]] = []
    model = sched.StepModelDuration(cluster="h100-16k-ndr", estimator=_spans_estimator(calls))
    job = JobView(job_index=0, num_gpu=64, gpu_milli=1000, base_run_s=100.0)
    compact = PlacementSummary(num_nodes=8, num_domains=8, num_racks=1, num_pods=1)
    spread = PlacementSummary(num_nodes=8, num_domains=8, num_racks=4, num_pods=2)
    assert model.run_time_s(job, compact) == pytest.approx(100.0)
    assert model.run_time_s(job, spread) == pytest.approx(100.0 * 1.3 / 1.1)
    # Catalog spans 8 / 256 / 2048 / 16384; spread: 16 GPUs per rack, 32 per pod.
    assert calls[-1] == [8, 16, 32, 16384]
    shared = JobView(job_index=1, num_gpu=1, gpu_milli=500, base_run_s=50.0)
    assert model.run_time_s(shared, spread) == 50.0


def test_step_duration_uses_the_step_model() -> None:
    model = sched.StepModelDuration(model="llama3-8b", cluster="h100-16k-ndr")
    job = JobView(job_index=0, num_gpu=64, gpu_milli=1000, base_run_s=1000.0)
    compact = PlacementSummary(num_nodes=8, num_domains=8, num_racks=1, num_pods=1)
    spread = PlacementSummary(num_nodes=8, num_domains=8, num_racks=8, num_pods=8)
    assert model.run_time_s(job, compact) == pytest.approx(1000.0)
    assert model.run_time_s(job, spread) > 1000.0


def test_public_names() -> None:
    for name in ("simulate", "load_cluster", "load_trace", "fgd_experiment", "fgd_summary"):
        assert name in sched.__all__
    assert all(hasattr(sched, name) for name in sched.__all__)
    assert sorted(sched.__all__) == sched.__all__
