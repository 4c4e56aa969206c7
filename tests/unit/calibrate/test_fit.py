"""The fit recovers known constants from synthetic measurements, flags what it cannot pin, and
the profile survives a round trip."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from scalewall import catalog
from scalewall.calibrate import Calibration, fit, read_profile, step_interval, write_profile
from scalewall.calibrate.interval import _step_times, parameter_draws
from scalewall.calibrate.observations import Collected, from_measurements
from scalewall.calibrate.parameters import apply
from scalewall.calibrate.published import shipped_profile_path
from scalewall.cluster import resolve_cluster
from scalewall.errors import ScalewallError, SpecError
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import PlanBatch
from scalewall.perf.compute import Device, gemm_time_s
from scalewall.perf.step import step_model
from scalewall.plan.plan import ParallelPlan
from scalewall.probe import Machine, Measurements, Record, Versions

H100 = catalog.accelerator("h100-sxm-80gb")
TRUE = Efficiency().replace(gemm_sustained_ratio=0.85, gemm_k_half_efficiency=300.0)


def gemm_file(noise: float, seed: int = 1) -> Measurements:
    rng = np.random.default_rng(seed)
    shapes = [(m, n, k) for m in (1024, 4096, 8192) for n in (1024, 8192) for k in (64, 256, 8192)]
    arr = np.array(shapes, dtype=np.float64)
    dev = Device.of(H100, np.zeros(len(shapes)), TRUE)
    times = gemm_time_s(arr[:, 0], arr[:, 1], arr[:, 2], dev, TRUE)
    times = times * np.exp(rng.normal(0.0, noise, len(shapes)))
    records = tuple(
        Record(
            kind="gemm",
            variant="matmul",
            dtype="bf16",
            time_s=float(t),
            shape=s,
            flop_per_s=2.0 * s[0] * s[1] * s[2] / float(t),
            rank=0,
        )
        for s, t in zip(shapes, times, strict=True)
    )
    return Measurements(
        created_utc="2026-01-01T00:00:00Z",
        source="probe",
        machine=Machine(
            hostname="h",
            device_type="cuda",
            device_name="NVIDIA H100 80GB HBM3",
            device_memory_bytes=80 * 10**9,
        ),
        versions=Versions(),
        records=records,
    )


def test_gemm_fit_recovers_known_constants() -> None:
    result = fit(from_measurements(gemm_file(0.02), "synthetic"))
    for name in ("gemm_sustained_ratio", "gemm_k_half_efficiency"):
        value, se = result.values[name], result.standard_errors[name]
        # 2% noise on 18 points: the truth lies within 4 standard errors (and SE is small)
        assert abs(value - TRUE.value(name)) < 4 * se + 1e-9
        assert se < 0.2 * TRUE.value(name)
    assert result.residual_log_sd["gemm"] == pytest.approx(0.02, rel=0.6)


def test_unpinned_parameters_kept_at_defaults() -> None:
    # Only K = 8192: K / (K + k_half) is one constant, indistinguishable from the GEMM ratio.
    m = gemm_file(0.0)
    big = dataclasses.replace(m, records=tuple(r for r in m.records if r.shape[2] == 8192))
    result = fit(
        from_measurements(big, "synthetic"),
        params=["gemm_sustained_ratio", "gemm_k_half_efficiency", "gemm_launch_s"],
    )
    assert "gemm_sustained_ratio" in result.values
    assert "gemm_k_half_efficiency" in result.not_identifiable


def test_cpu_measurements_are_skipped_with_a_note() -> None:
    path = Path(__file__).parents[2] / "data" / "probe" / "probe_cpu_gloo_2ranks.jsonl"
    from scalewall.probe import read_measurements

    got = from_measurements(read_measurements(path), path.name)
    assert not got.sets and "give --gpu" in got.notes[0]
    with pytest.raises(ScalewallError):
        fit(Collected(notes=got.notes))


def test_profile_round_trip_and_interval(tmp_path: Path) -> None:
    result = fit(from_measurements(gemm_file(0.03), "synthetic"))
    cal = Calibration.from_fit(
        result, created_utc="2026-01-01T00:00:00Z", provenance={"inputs": [{"path": "x"}]}
    )
    path = write_profile(cal, tmp_path / "cal.toml")
    back = read_profile(path)
    assert back.values == pytest.approx(cal.values)
    assert np.allclose(back.covariance, cal.covariance)
    assert back.efficiency().compute.gemm_sustained_ratio == pytest.approx(
        result.values["gemm_sustained_ratio"]
    )
    model = catalog.model("llama3-8b")
    cluster = resolve_cluster(None, gpu="h100-sxm-80gb", gpus=64)
    plan = ParallelPlan(tp=2, pp=1, dp=32, micro_batch=1, global_batch=256, seq_len=2048)
    band = step_interval(model, cluster, plan, back)
    low, high = band.step_time_interval_s
    assert low < band.step_time_s < high
    assert band.tokens_per_s_interval[0] < band.tokens_per_s < band.tokens_per_s_interval[1]


def test_bad_profile_is_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('format = "scalewall-calibration/1"\n[efficiency]\nno_such_field = 1.0\n')
    with pytest.raises(SpecError, match="no_such_field"):
        read_profile(path)


def test_noise_around_the_defaults_fits_nothing() -> None:
    # Measurements the default constants produce, with 2% noise: no constant should move.
    m = gemm_file(0.02, seed=3)
    shapes = np.array([r.shape for r in m.records], dtype=np.float64)
    base = Efficiency()
    times = gemm_time_s(
        shapes[:, 0], shapes[:, 1], shapes[:, 2], Device.of(H100, np.zeros(len(shapes)), base), base
    )
    noise = np.exp(np.random.default_rng(3).normal(0.0, 0.02, len(times)))
    records = tuple(
        dataclasses.replace(r, time_s=float(t))
        for r, t in zip(m.records, times * noise, strict=True)
    )
    result = fit(from_measurements(dataclasses.replace(m, records=records), "synthetic"))
    assert result.validation_folds == "5-fold" and result.validation[0][0] == 0
    assert result.values == {}


def test_calibration_draws_as_plan_rows_equal_each_draw_alone() -> None:
    # The interval evaluates every parameter draw in one step-model call (the plan repeated
    # once per draw, each Efficiency field an array of draws): each row must be the step time
    # of that draw's constants on their own.
    cal = read_profile(shipped_profile_path())
    model = catalog.model("mixtral-8x7b")
    cluster = resolve_cluster(None, gpu="h100-sxm-80gb", gpus=64)
    plan = ParallelPlan(tp=2, pp=2, dp=16, ep=8, micro_batch=1, global_batch=256, seq_len=4096)
    values = parameter_draws(cal, 6, np.random.default_rng(0))
    base = Efficiency()
    together = _step_times(model, cluster, plan, Stack(), base, values, 6)
    for d in range(6):
        eff, clus = apply({k: float(v[d]) for k, v in values.items()}, base, cluster)
        assert clus is not None
        alone = step_model(model, clus, PlanBatch.from_plans(model, [plan]), eff, Stack())
        assert together[d] == pytest.approx(float(alone.step_time_s[0]), rel=1e-12)
    assert np.ptp(together) > 0.0
