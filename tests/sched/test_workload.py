"""The synthetic generator follows the Acme summary within stated tolerances."""

from __future__ import annotations

import pytest

from scalewall.errors import SpecError
from scalewall.sched.workload import (
    DAY_S,
    MixedWorkloadSpec,
    WorkloadSpec,
    acme_targets,
    mixed_jobs,
    synthetic_jobs,
    tenant_weights,
)


@pytest.mark.parametrize("like", ["Seren", "Kalos"])
def test_statistics_match_acme(like: str) -> None:
    jobs = synthetic_jobs(WorkloadSpec(num_jobs=50_000, like=like, cpu_jobs=False), seed=1)
    t = acme_targets(like)
    # Heavy-tailed sizes and run times: a 50k-job sample's mean lands within 10% of the target.
    assert jobs["num_gpu"].mean() == pytest.approx(t.avg_gpu_num, rel=0.10)
    assert jobs["run_s"].mean() == pytest.approx(t.avg_run_time_s, rel=0.10)
    assert jobs["num_gpu"].median() == 1
    assert jobs["run_s"].median() == pytest.approx(t.med_run_time_s, rel=0.05)
    assert jobs["num_gpu"].max() <= t.max_gpu
    # Outcome shares: binomial noise at n = 50k is ~0.2 percentage points; allow 1.
    assert (jobs["status"] == "failed").mean() == pytest.approx(t.fail_rate, abs=0.01)
    assert (jobs["status"] == "canceled").mean() == pytest.approx(t.cancel_rate, abs=0.01)
    # GPU time by outcome: expected shares are solved exactly on the drawn jobs; the drawn
    # outcomes of the few largest jobs (1,024 GPUs for days) move the realised shares by a few
    # points at 50k jobs, so 5 points. Drawing outcomes independently of size gave failed jobs
    # about 43% of Seren's GPU time against the trace's 12.4%.
    gpu_s = jobs["num_gpu"] * jobs["run_s"]
    share = gpu_s.groupby(jobs["status"]).sum() / gpu_s.sum()
    assert share["failed"] == pytest.approx(t.fail_time_share, abs=0.05)
    assert share["canceled"] == pytest.approx(t.cancel_time_share, abs=0.05)
    assert share["completed"] == pytest.approx(t.complete_time_share, abs=0.05)


@pytest.mark.parametrize(("like", "num_jobs"), [("Seren", 20_000), ("Kalos", 62_413)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gpu_time_by_outcome_over_seeds(like: str, num_jobs: int, seed: int) -> None:
    """Each seed's GPU-time shares by outcome lie within 8 points of the summary's (Kalos at
    its trace's 62,413 jobs, of which 32% use GPUs): one job of 1,024 GPUs for days can carry
    10-30% of the GPU time, so its one outcome moves a share by several points (the stratified
    draw keeps the rest close); failed jobs' share, the one that was 45% against 12.4%,
    within 4."""
    jobs = synthetic_jobs(WorkloadSpec(num_jobs=num_jobs, like=like), seed=seed)
    t = acme_targets(like)
    gpu = jobs[jobs["num_gpu"] > 0]
    gpu_s = gpu["num_gpu"] * gpu["run_s"]
    share = gpu_s.groupby(gpu["status"]).sum() / gpu_s.sum()
    assert share["failed"] == pytest.approx(t.fail_time_share, abs=0.04)
    assert share["canceled"] == pytest.approx(t.cancel_time_share, abs=0.08)
    assert share["completed"] == pytest.approx(t.complete_time_share, abs=0.08)


@pytest.mark.parametrize("like", ["Seren", "Kalos"])
def test_cpu_only_jobs_in_the_summary_proportion(like: str) -> None:
    jobs = synthetic_jobs(WorkloadSpec(num_jobs=50_000, like=like), seed=2)
    t = acme_targets(like)
    cpu = jobs[jobs["num_gpu"] == 0]
    # The count is rounded, not drawn: exact to one job.
    assert len(cpu) == round(50_000 * t.cpu_job_frac)
    assert (cpu["gpu_milli"] == 0).all() and (cpu["cpu_milli"] > 0).all()
    # Median of a 18k-job sample: within 15% (the median is a few seconds, rounded to 1 s).
    assert cpu["run_s"].median() == pytest.approx(t.cpu_med_run_time_s, rel=0.15)
    # A log-normal with sigma near 3: the sample mean converges slowly, within 35%.
    assert cpu["run_s"].mean() == pytest.approx(t.cpu_avg_run_time_s, rel=0.35)
    # Outcome rates: stratified draw, ~0.3 points of noise; allow 1.
    assert (cpu["status"] == "failed").mean() == pytest.approx(t.cpu_fail_rate, abs=0.01)
    assert (cpu["status"] == "canceled").mean() == pytest.approx(t.cpu_cancel_rate, abs=0.01)
    # Interleaved with GPU jobs over the whole window, not appended at its end.
    assert cpu.index.to_series().mean() == pytest.approx(len(jobs) / 2, rel=0.05)
    gpu_only = synthetic_jobs(WorkloadSpec(num_jobs=500, like=like, cpu_jobs=False), seed=2)
    assert (gpu_only["num_gpu"] > 0).all()


def test_same_seed_same_jobs() -> None:
    a = synthetic_jobs(WorkloadSpec(num_jobs=500), seed=3)
    b = synthetic_jobs(WorkloadSpec(num_jobs=500), seed=3)
    assert a.equals(b)


def test_mixed_workload_offers_its_load_with_sharing_and_gangs() -> None:
    spec = MixedWorkloadSpec(num_jobs=300, span_s=DAY_S, max_run_s=DAY_S / 4, warmup_s=0.0)
    jobs = mixed_jobs(spec, total_gpus=128, gpus_per_node=8, seed=2)
    assert jobs.equals(mixed_jobs(spec, total_gpus=128, gpus_per_node=8, seed=2))
    gpu_s = (jobs["num_gpu"] * jobs["gpu_milli"] / 1000 * jobs["run_s"]).sum()
    # Gang run times are rounded to whole seconds: the load is met to a part in 10^4.
    assert gpu_s / 128 / DAY_S == pytest.approx(spec.load_frac, rel=1e-4)
    assert jobs["run_s"].max() <= spec.max_run_s
    sharing = jobs["gpu_milli"] < 1000
    assert 0.1 < sharing.mean() < 0.4 and (jobs.loc[sharing, "num_gpu"] == 1).all()
    gangs = jobs[jobs["num_gpu"] > 1]
    assert len(gangs) > 100 and gangs["num_gpu"].max() <= 32  # max_gang_frac of 128
    assert ((gangs["num_gpu"] <= 8) | (gangs["num_gpu"] % 8 == 0)).all()
    assert jobs["tenant"].nunique() == spec.num_tenants
    assert tenant_weights(spec.num_tenants).sum() == pytest.approx(1.0)


def test_mixed_workload_rejects_bad_fields() -> None:
    with pytest.raises(SpecError, match="load_frac"):
        MixedWorkloadSpec(num_jobs=10, load_frac=0.0)
    with pytest.raises(SpecError, match="max_run_s"):
        MixedWorkloadSpec(num_jobs=10, span_s=DAY_S, max_run_s=2 * DAY_S)
