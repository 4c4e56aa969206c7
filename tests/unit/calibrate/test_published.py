"""The fit of the shipped constants over published runs and its leave-one-group-out error.

Small fits run on three groups (22 runs on A100 and H100) so the tests take seconds; the
refit of the shipped profile over every shipped run is the one slow test (about 20 s).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from scalewall.calibrate import Calibration, from_cases, read_profile, write_profile
from scalewall.calibrate.observations import step_metric
from scalewall.calibrate.parameters import apply, clock_name
from scalewall.calibrate.published import (
    FITTED,
    FIXED,
    CrossValidation,
    cross_validate,
    fit_published,
    published_params,
    shipped_profile_path,
)
from scalewall.errors import SpecError
from scalewall.perf.assumptions import Efficiency
from scalewall.validation.runs import Case, case_cluster, read_runs

SMALL_GROUPS = ("llama3", "megatron_core_h100", "megatron_sc21")
H100 = clock_name("h100-sxm-80gb")


@pytest.fixture(scope="module")
def small() -> list[Case]:
    return [c for c in read_runs() if c.group in SMALL_GROUPS]


@pytest.fixture(scope="module")
def small_cv(small: list[Case]) -> CrossValidation:
    return cross_validate(small, holdout=["llama3"])


def test_params_fit_every_clock_but_the_reference(small: list[Case]) -> None:
    assert published_params(small) == (*FITTED, H100)
    assert set(FIXED).isdisjoint(FITTED)


def test_accelerator_clock_applies_to_its_accelerator_only(small: list[Case]) -> None:
    h100 = next(c for c in small if c.hardware["gpu"] == "h100-sxm-80gb")
    a100 = next(c for c in small if c.hardware["gpu"] == "a100-sxm-80gb")
    _, on_h100 = apply({H100: 0.7}, Efficiency(), case_cluster(h100.hardware))
    _, on_a100 = apply({H100: 0.7}, Efficiency(), case_cluster(a100.hardware))
    assert on_h100 is not None and on_a100 is not None
    assert on_h100.accelerator.training_clock_frac == 0.7
    assert on_a100.accelerator.training_clock_frac == 1.0


def test_points_in_one_call_equal_one_call_per_point(small: list[Case]) -> None:
    obs = from_cases(small, "small", Efficiency()).sets[0]
    points = {"gemm_sustained_ratio": np.array([0.8, 0.95]), H100: np.array([0.7, 0.9])}
    many = obs.predictions(points, Efficiency())
    one = [obs.predict({k: float(v[i]) for k, v in points.items()}, Efficiency()) for i in (0, 1)]
    # The same arithmetic on replicated rows: equal to rounding.
    assert many == pytest.approx(np.vstack(one), rel=1e-12)


def test_held_out_group_is_not_in_its_fit(small: list[Case], small_cv: CrossValidation) -> None:
    (fold,) = small_cv.folds
    held = {c.id for c in small if c.group == "llama3"}
    assert fold.group == "llama3"
    assert held.isdisjoint(fold.fit_case_ids)
    others = {c.id for c in small if c.group != "llama3" and step_metric(c)}
    assert set(fold.fit_case_ids) == others
    assert {c.group for c in fold.report.comparisons} == {"llama3"}
    assert held <= {r.label for r in small_cv.full_fit.residuals}


def test_held_out_values_do_not_move_their_prediction(
    small: list[Case], small_cv: CrossValidation
) -> None:
    """Doubling the held-out group's published figures changes the full fit, never the fold's
    prediction of that group: its fit never read them."""
    doubled = [
        dataclasses.replace(
            c,
            published={
                k: (2.0 * v if isinstance(v, int | float) and not isinstance(v, bool) else v)
                for k, v in c.published.items()
            },
        )
        if c.group == "llama3"
        else c
        for c in small
    ]
    again = cross_validate(doubled, holdout=["llama3"])
    before = [c.predicted for c in small_cv.folds[0].report.comparisons]
    after = [c.predicted for c in again.folds[0].report.comparisons]
    assert after == pytest.approx(before, rel=1e-9)
    assert again.full_fit.values != small_cv.full_fit.values


def test_groups_have_both_errors(small_cv: CrossValidation) -> None:
    g = small_cv.groups()["llama3"]
    assert g["metrics"] > 0
    assert 0.0 <= g["in_sample_mape"] < 1.0 and 0.0 <= g["out_of_sample_mape"] < 1.0
    assert set(small_cv.to_dict()) == {"groups", "overall", "fitted", "folds"}


def test_unknown_group_is_a_user_error(small: list[Case]) -> None:
    with pytest.raises(SpecError, match="holdout"):
        cross_validate(small, holdout=["no_such_group"])


def test_profile_round_trips_accelerator_clocks(small: list[Case], tmp_path: Path) -> None:
    result = fit_published(small)
    cal = Calibration.from_fit(result, created_utc="", provenance={})
    back = read_profile(write_profile(cal, tmp_path / "p.toml"))
    assert back.values == pytest.approx(cal.values, rel=1e-12)
    assert back.clocks() == {"h100-sxm-80gb": pytest.approx(cal.values[H100], rel=1e-12)}
    h100 = next(c for c in small if c.hardware["gpu"] == "h100-sxm-80gb")
    clocked = back.apply_cluster(case_cluster(h100.hardware))
    assert clocked.accelerator.training_clock_frac == pytest.approx(cal.values[H100])


@pytest.fixture(scope="module")
def shipped() -> Calibration:
    return read_profile(shipped_profile_path())


def test_shipped_profile_is_reproduced_by_a_refit(shipped: Calibration) -> None:
    result = fit_published(read_runs())
    assert set(result.values) == set(shipped.values)
    se = shipped.standard_errors
    for name, value in result.values.items():
        # A tenth of the constant's standard error: solver tolerance and platform rounding
        # move a refit far less, a changed run or model moves it more.
        assert abs(value - shipped.values[name]) <= 0.1 * se[name], name


@pytest.mark.parametrize("name", published_params(read_runs()))
def test_shipped_profile_equals_the_model_defaults(shipped: Calibration, name: str) -> None:
    if name.startswith("training_clock_frac:"):
        from scalewall import catalog

        default = catalog.accelerator(name.split(":", 1)[1]).training_clock_frac
    else:
        default = float(Efficiency().value(name))
    # Within one standard error of the fit: the data cannot tell the two apart.
    assert abs(shipped.values[name] - default) <= shipped.standard_errors[name], (
        f"{name}: fitted {shipped.values[name]:.4g} (s.e. {shipped.standard_errors[name]:.2g}),"
        f" default {default:.4g}"
    )
