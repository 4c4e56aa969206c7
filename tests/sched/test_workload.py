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
    jobs = synthetic_jobs(WorkloadSpec(num_jobs=50_000, like=like), seed=1)
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
