"""Failures as they happen: the reliability model's restart charged to a failed job, goodput
per job and for the cluster, and Philly's recorded attempts replayed without double counting."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scalewall import sched
from scalewall.errors import SpecError
from scalewall.reliability.checkpoint import RestartSpec
from scalewall.sched.engine import FailureModel, SimConfig, Simulation
from scalewall.sched.jobs import job_table
from scalewall.sched.metrics import collect
from scalewall.sched.traces._common import RecordedAttempt
from scalewall.sched.traces.philly import read_philly

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"
NO_TIER_SLOWDOWN = sched.TierSlowdownModel(slowdown_per_tier_frac=0.0)


def _jobs(*rows: tuple[str, float, float, int]) -> pd.DataFrame:
    """(job id, submit s, run s, GPUs) rows as canonical job columns."""
    ids, submit, run, gpus = zip(*rows, strict=True)
    n = len(ids)
    return pd.DataFrame(
        {
            "job_id": list(ids),
            "submit_s": list(submit),
            "run_s": list(run),
            "num_gpu": list(gpus),
            "gpu_milli": [1000] * n,
            "cpu_milli": [0] * n,
            "memory_bytes": [0] * n,
            "gpu_models": [""] * n,
            "priority": [0] * n,
            "tenant": ["t"] * n,
            "est_run_s": list(run),
        }
    )


def _one_failure(failures: FailureModel) -> Simulation:
    """A 10,000 s, 8-GPU job on a one-node cluster whose node fails at 5,000 s."""
    cluster = sched.synthetic_cluster(num_nodes=1, gpus_per_node=8)
    config = SimConfig(failures=failures, checkpoint_interval_s=3600.0, check_invariants=True)
    sim = Simulation(
        cluster, job_table(_jobs(("a", 0.0, 10_000.0, 8))), config, duration=NO_TIER_SLOWDOWN
    )
    sim.run()
    return sim


def _failure_at_5000(**fields: object) -> FailureModel:
    return FailureModel(
        failures_per_1000_node_days=0.0,
        repair_time_s=100.0,
        trace_failures=((5_000.0, "node-000000"),),
        **fields,  # type: ignore[arg-type]
    )


def _charged_restart_s(spec: RestartSpec, state_load_s: float) -> float:
    """The restart a one-node, 8-rank job pays: every phase but rescheduling."""
    phases = spec.phases(ranks=8, restore_s=state_load_s, nodes=1, new_node=True)
    return sum(s for name, s in phases.items() if name != "rescheduling")


def test_a_failed_job_pays_the_reliability_models_restart() -> None:
    spec = RestartSpec(detection_s=400.0, warmup_s=90.0)
    sim = _one_failure(_failure_at_5000(restart=spec, state_load_s=45.0))
    restart_s = _charged_restart_s(spec, 45.0)
    # Down at 5,000 s, back after the 100 s repair; the restart, then the 6,400 s of work left
    # after rolling back to the checkpoint at 3,600 s.
    assert float(sim.state.end_s[0]) == pytest.approx(5_100.0 + restart_s + 6_400.0, rel=1e-12)
    assert float(sim.state.restart_gpu_s[0]) == pytest.approx(restart_s * 8, rel=1e-12)
    assert float(sim.state.lost_gpu_s[0]) == pytest.approx(1_400.0 * 8, rel=1e-12)
    free = _one_failure(_failure_at_5000(charge_restarts=False))
    assert float(free.state.end_s[0]) == pytest.approx(5_100.0 + 6_400.0, rel=1e-12)
    assert float(free.state.restart_gpu_s[0]) == 0.0


def test_the_default_restart_is_the_reliability_models_default() -> None:
    sim = _one_failure(_failure_at_5000())
    restart_s = _charged_restart_s(RestartSpec(), FailureModel().state_load_s)
    assert float(sim.state.end_s[0]) == pytest.approx(5_100.0 + restart_s + 6_400.0, rel=1e-12)


def test_goodput_per_job_and_for_the_cluster() -> None:
    sim = _one_failure(_failure_at_5000())
    result = collect(sim)
    row = result.jobs.iloc[0]
    restart_s = _charged_restart_s(RestartSpec(), FailureModel().state_load_s)
    metered = (5_000.0 + restart_s + 6_400.0) * 8
    wasted = (1_400.0 + restart_s) * 8
    assert row["gpu_hours_metered"] * 3600 == pytest.approx(metered, rel=1e-12)
    assert row["goodput_frac"] == pytest.approx(1 - wasted / metered, rel=1e-12)
    assert result.summary["goodput_frac"] == pytest.approx(1 - wasted / metered, rel=1e-12)
    assert result.summary["job_goodput_frac"]["p50"] == pytest.approx(row["goodput_frac"])
    assert result.summary["gpu_hours_restart"] * 3600 == pytest.approx(restart_s * 8)


def test_a_job_cut_short_while_restarting_pays_the_restart_again() -> None:
    # The node fails again 100 s into the first restart: that restart is charged for the 100 s
    # it ran, then a whole new one.
    spec = RestartSpec()
    restart_s = _charged_restart_s(spec, 60.0)
    assert restart_s > 100.0
    second = 5_100.0 + 100.0
    sim = _one_failure(
        FailureModel(
            failures_per_1000_node_days=0.0,
            repair_time_s=100.0,
            trace_failures=((5_000.0, "node-000000"), (second, "node-000000")),
        )
    )
    assert float(sim.state.end_s[0]) == pytest.approx(second + 100.0 + restart_s + 6_400.0)
    assert float(sim.state.restart_gpu_s[0]) == pytest.approx((100.0 + restart_s) * 8)
    assert int(sim.state.restarts[0]) == 2


def _readme_log(tmp_path: Path) -> tuple[Path, Path]:
    """The Philly README's example job (real: a 74 s attempt on m47 that failed, then the run
    on m412), plus a schema-written 8-GPU job that runs for two days, and the two machines."""
    entry = json.loads((TRACES / "philly" / "readme_example_entry.json").read_text())
    other = {
        "status": "Pass",
        "vc": "ee9e8c",
        "jobid": "long_neighbour",
        "user": "u",
        "submitted_time": entry["submitted_time"],
        "attempts": [
            {
                "start_time": entry["submitted_time"],
                "end_time": "2017-10-09 01:11:39",
                "detail": [{"ip": "m412", "gpus": [f"gpu{i}" for i in range(8)]}],
            }
        ],
    }
    log = tmp_path / "cluster_job_log"
    log.write_text(json.dumps([entry, other]))
    machines = tmp_path / "cluster_machine_list"
    machines.write_text("machineId,number of GPUs,single GPU mem\nm47,8,24GB\nm412,8,24GB\n")
    return log, machines


def test_philly_reader_on_the_readmes_real_entry(tmp_path: Path) -> None:
    log, _ = _readme_log(tmp_path)
    read = read_philly(log)
    job = read.frame.iloc[0]
    # 01:12:09-01:13:23 and 2017-10-07 01:13:30 to 2017-10-09 06:53:12.
    first, retry = 74.0, 2 * 86_400.0 + 5 * 3600.0 + 39 * 60.0 + 42.0
    assert (job["job_id"], job["num_gpu"], job["tenant"]) == (
        "application_1506638472019_14199",
        8,
        "ee9e8c",
    )
    assert job["run_s"] == first + retry
    ((job_id, attempts),) = read.attempts
    assert job_id == job["job_id"]
    assert [(a.run_s, a.machine, a.failed) for a in attempts] == [
        (first, "m47", True),
        (retry, "m412", False),
    ]


def test_philly_machine_list_reader_on_the_readmes_real_row(tmp_path: Path) -> None:
    # The README's row has no header; the reader needs the published one.
    machines = tmp_path / "cluster_machine_list"
    header = "machineId,number of GPUs,single GPU mem\n"
    machines.write_text(header + (TRACES / "philly" / "readme_example_machine.csv").read_text())
    cluster = sched.load_cluster(str(machines))
    assert cluster.names == ["m31"] and cluster.total_gpus == 8


def _replay(tmp_path: Path) -> Simulation:
    log, machines = _readme_log(tmp_path)
    read = read_philly(log)
    failures = FailureModel(failures_per_1000_node_days=0.0, recorded_attempts=read.attempts)
    sim = Simulation(
        sched.load_cluster(str(machines)),
        job_table(read.frame),
        SimConfig(failures=failures, check_invariants=True),
        duration=NO_TIER_SLOWDOWN,
    )
    sim.run()
    return sim


def test_philly_replay_does_not_double_count_and_charges_the_recorded_machine(
    tmp_path: Path,
) -> None:
    sim = _replay(tmp_path)
    job = sim.jobs.job_id.index("application_1506638472019_14199")
    neighbour = sim.jobs.job_id.index("long_neighbour")
    run_s = float(sim.jobs.run_s[job])
    # Nothing waits on this cluster, so the job ends after exactly its recorded attempts: the
    # failed 74 s one, then the rest; no simulated failure on top, no restart cost added.
    assert float(sim.state.end_s[job]) == pytest.approx(run_s, rel=1e-12)
    assert int(sim.state.restarts[job]) == 1
    assert float(sim.state.lost_gpu_s[job]) == pytest.approx(74.0 * 8, rel=1e-12)
    assert float(sim.state.metered_gpu_s[job]) == pytest.approx(run_s * 8, rel=1e-12)
    assert (74.0, "recorded_fail", job) in sim.events
    # The fault is m47's; the job on the other machine is never stopped.
    m47 = sim.cluster.names.index("m47")
    assert sim.faults == {m47: [74.0]} and (74.0, "machine_fault", m47) in sim.events
    assert sim.recorded_faults == {"m47": 1}
    assert int(sim.state.restarts[neighbour]) == 0
    assert not [e for e in sim.events if e[1] == "node_fail"]


def test_a_node_failure_after_a_recorded_one_rolls_back_no_further_than_the_retry() -> None:
    # The 74 s attempt failed as recorded; the node then fails 500 s into the retry, before
    # any checkpoint: the job resumes where the retry began (74 s of work), not from zero.
    frame = _jobs(("a", 0.0, 74.0 + 10_000.0, 8))
    attempts = (
        RecordedAttempt(run_s=74.0, machine="node-000000", failed=True),
        RecordedAttempt(run_s=10_000.0, machine="node-000000", failed=False),
    )
    failures = FailureModel(
        failures_per_1000_node_days=0.0,
        repair_time_s=100.0,
        trace_failures=((574.0, "node-000000"),),
        recorded_attempts=(("a", attempts),),
    )
    cluster = sched.synthetic_cluster(num_nodes=1, gpus_per_node=8)
    config = SimConfig(failures=failures, checkpoint_interval_s=3600.0, check_invariants=True)
    sim = Simulation(cluster, job_table(frame), config, duration=NO_TIER_SLOWDOWN)
    sim.run()
    restart_s = _charged_restart_s(RestartSpec(), failures.state_load_s)
    assert float(sim.state.end_s[0]) == pytest.approx(574.0 + 100.0 + restart_s + 10_000.0)
    assert int(sim.state.restarts[0]) == 2
    assert float(sim.state.lost_gpu_s[0]) == pytest.approx((74.0 + 500.0) * 8)


def test_philly_replay_summary(tmp_path: Path) -> None:
    summary = collect(_replay(tmp_path)).summary
    assert summary["recorded_failures"] == 1 and summary["machines_with_recorded_failures"] == 1
    assert summary["node_failures"] == 0 and summary["finished"] == 2
    assert summary["gpu_hours_restart"] == 0.0


def test_recorded_attempts_of_an_unknown_job_are_refused() -> None:
    attempts = (("nope", (RecordedAttempt(run_s=5.0, machine="m1", failed=True),)),)
    failures = FailureModel(failures_per_1000_node_days=0.0, recorded_attempts=attempts)
    cluster = sched.synthetic_cluster(num_nodes=1, gpus_per_node=8)
    with pytest.raises(SpecError, match=r"recorded_attempts.*nope"):
        Simulation(cluster, job_table(_jobs(("a", 0.0, 10.0, 1))), SimConfig(failures=failures))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_recorded_attempts_with_rate_failures_and_preemption_lose_nothing(seed: int) -> None:
    # Jobs with recorded attempts, node failures from a high rate and priority preemption at
    # once: the books balance at every event, every job ends, and each recorded failure is
    # replayed exactly once.
    rng = np.random.default_rng(seed)
    n = 40
    frame = _jobs(
        *(
            (f"j{i}", float(rng.uniform(0, 20_000)), 1.0, int(rng.choice([1, 4, 8])))
            for i in range(n)
        )
    )
    frame["priority"] = rng.choice([0, 1], size=n)
    recorded = []
    for i in range(0, n, 2):
        runs = rng.uniform(100, 5_000, size=int(rng.integers(2, 4)))
        attempts = tuple(
            RecordedAttempt(run_s=float(r), machine="node-000001", failed=k < len(runs) - 1)
            for k, r in enumerate(runs)
        )
        recorded.append((f"j{i}", attempts))
        frame.loc[i, "run_s"] = frame.loc[i, "est_run_s"] = float(runs.sum())
    others = frame.index % 2 == 1
    frame.loc[others, "run_s"] = frame.loc[others, "est_run_s"] = rng.uniform(100, 9_000, n // 2)
    failures = FailureModel(
        failures_per_1000_node_days=3_000.0,
        repair_time_s=600.0,
        isolate_after_faults=1_000,  # keep every node: isolating all of them ends the replay
        recorded_attempts=tuple(recorded),
    )
    config = SimConfig(
        queue="priority",
        seed=seed,
        failures=failures,
        min_run_before_preempt_s=0.0,
        check_invariants=True,
    )
    cluster = sched.synthetic_cluster(num_nodes=4, gpus_per_node=8)
    sim = Simulation(cluster, job_table(frame), config, duration=NO_TIER_SLOWDOWN)
    sim.run()
    assert np.isfinite(sim.state.end_s).all()
    for job_id, attempts in recorded:
        j = sim.jobs.job_id.index(job_id)
        assert int(sim.state.recorded_next[j]) == sum(a.failed for a in attempts)
    assert sum(sim.recorded_faults.values()) == sum(len(a) - 1 for _, a in recorded)
    assert any(e[1] == "node_fail" for e in sim.events)
    assert (collect(sim).jobs["goodput_frac"].dropna().between(0.0, 1.0)).all()
