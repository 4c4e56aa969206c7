"""Hold-out validation: fit on the small runs of a published series, predict the large ones.

Coverage of the 90% prediction interval is asserted. The issue's second criterion, a held-out
error below the uncalibrated model's, does not hold on these splits. The default constants were
themselves fitted on every published run, the held-out ones included, so they are a leaked
baseline. The fit (prior at the defaults, parameters chosen by rolling-origin validation on the
training runs) fits nothing on vTrain, so it equals the defaults there (7.6% mean absolute log
error both), and on Megatron SC'21 fits ``hbm_efficiency`` (0.80 -> 0.89), which the small runs
(too slow in the model, no pipeline but one of two stages) support and the pipeline-heavy large
runs (too fast in the model) do not: 7.5% vs 6.5%. That test is an expected failure (strict), so
it flags the day it starts to pass.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
import pytest

from scalewall.calibrate import Calibration, fit, from_cases, step_interval
from scalewall.calibrate.observations import step_metric
from scalewall.calibrate.published import fit_published, fitted_efficiency
from scalewall.perf.assumptions import Efficiency
from scalewall.validation.harness import compare, predict_case
from scalewall.validation.runs import case_cluster, read_runs


@dataclass(frozen=True)
class HoldOut:
    default_error: float
    calibrated_error: float
    coverage: float


def _metric(pred: object, metric: str) -> float:
    if metric == "step_time_s":
        return float(pred.row["step_time_s"])  # type: ignore[attr-defined]
    return float(compare(pred)[0].predicted)  # type: ignore[arg-type]


def holdout(group: str, max_fit_gpus: int, base: Efficiency | None = None) -> HoldOut:
    """Calibrate on the series' runs up to ``max_fit_gpus`` starting from ``base`` (default:
    the shipped constants), predict the larger ones; errors of ``base`` and of the calibration,
    and the interval's coverage."""
    base = base or Efficiency()
    cases = [c for c in read_runs() if c.group == group]
    train = [c for c in cases if c.hardware["gpus"] <= max_fit_gpus]
    test = [c for c in cases if c.hardware["gpus"] > max_fit_gpus]
    cal = Calibration.from_fit(
        fit(from_cases(train, group, base), base=base), created_utc="", provenance={}
    )
    eff = cal.efficiency(base)
    e0, e1, inside = [], [], []
    for case in test:
        metric = step_metric(case)
        assert metric is not None
        published = float(case.published[metric])
        p0, p1 = predict_case(case, base), predict_case(case, eff)
        v0, v1 = _metric(p0, metric), _metric(p1, metric)
        band = step_interval(
            case.model, case_cluster(case.hardware), p1.plan, cal, stack=case.stack, base=base
        )
        low, high = band.step_time_interval_s
        if metric != "step_time_s":  # a rate: inversely proportional to the step time
            low, high = v1 * band.step_time_s / high, v1 * band.step_time_s / low
        e0.append(abs(np.log(v0 / published)))
        e1.append(abs(np.log(v1 / published)))
        inside.append(low <= published <= high)
    return HoldOut(float(np.mean(e0)), float(np.mean(e1)), float(np.mean(inside)))


@pytest.fixture(scope="module")
def megatron(holdouts: dict[tuple[str, bool], HoldOut]) -> HoldOut:
    return holdouts["megatron_sc21", False]


@pytest.fixture(scope="module")
def vtrain(holdouts: dict[tuple[str, bool], HoldOut]) -> HoldOut:
    return holdouts["vtrain_multi", False]


def test_megatron_interval_covers_held_out_runs(megatron: HoldOut) -> None:
    assert megatron.coverage >= 0.8, megatron


def test_vtrain_interval_covers_held_out_runs(vtrain: HoldOut) -> None:
    assert vtrain.coverage >= 0.8, vtrain


def test_held_out_error_stays_near_the_default(megatron: HoldOut, vtrain: HoldOut) -> None:
    # Not the criterion (below), a guard against a fit that runs away: within 3 points.
    for result in (megatron, vtrain):
        assert result.calibrated_error < result.default_error + 0.03, result


@pytest.mark.xfail(
    strict=True,
    reason="defaults were fitted on the held-out runs too: SC'21 7.5% calibrated vs 6.5% default, "
    "vTrain 7.6% both (nothing passes validation)",
)
def test_held_out_error_below_uncalibrated(megatron: HoldOut, vtrain: HoldOut) -> None:
    assert megatron.calibrated_error < megatron.default_error
    assert vtrain.calibrated_error < vtrain.default_error


# ---------------------------------------------------------------- against the honest baseline
# The calibration hold-out against the honest baseline: the shipped constants refitted without
# the series (``calibrate.published``, as ``validate --cv source`` does), so the baseline never saw
# the runs it is scored on.
#
# Fit on the small runs of a published A100 series, starting from that baseline, and predict the
# large runs. Asserted: at least 80% of the held-out values inside the 90% interval, and the
# calibrated error below the baseline's where it is (strict expected failures name the numbers
# where it is not). A100 series only: the A100 is the clock reference, so the baseline carries no
# fitted clock that ``from_cases`` would have to take over.

SERIES = {
    # group: largest cluster the calibration sees (the rest are predicted)
    "megatron_sc21": 512,
    "vtrain_multi": 256,
    "megascale": 1024,
}


def refitted_baseline(group: str) -> Efficiency:
    return fitted_efficiency(fit_published([c for c in read_runs() if c.group != group]).values)


HOLDOUTS = [*((g, n, True) for g, n in SERIES.items()), ("megatron_sc21", 512, False)]
HOLDOUTS += [("vtrain_multi", 256, False)]
"""Every hold-out of this module as (series, largest cluster fitted, from the refitted
baseline), the slowest first: a baseline refit is a MAP fit over every other published run."""


def _holdout_task(task: tuple[str, int, bool]) -> tuple[tuple[str, bool], HoldOut]:
    group, max_fit_gpus, from_baseline = task
    base = refitted_baseline(group) if from_baseline else None
    return (group, from_baseline), holdout(group, max_fit_gpus, base)


@pytest.fixture(scope="module")
def holdouts() -> dict[tuple[str, bool], HoldOut]:
    """Every hold-out, by (series, from the refitted baseline). They are independent and pure,
    so they run at once in forked worker processes, one per core (the same results as one
    after the other; the module's time is then its slowest refit's, not the sum)."""
    workers = min(len(HOLDOUTS), os.cpu_count() or 1)
    if workers == 1:
        return dict(map(_holdout_task, HOLDOUTS))
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        return dict(pool.map(_holdout_task, HOLDOUTS))


@pytest.fixture(scope="module", params=list(SERIES))
def result(
    request: pytest.FixtureRequest, holdouts: dict[tuple[str, bool], HoldOut]
) -> tuple[str, HoldOut]:
    group = str(request.param)
    return group, holdouts[group, True]


def test_interval_covers_held_out_runs_from_the_baseline(result: tuple[str, HoldOut]) -> None:
    group, r = result
    assert r.coverage >= 0.8, (group, r)


@pytest.mark.xfail(
    strict=True,
    reason="from the refitted baseline no constant lowers the rolling-origin validation error on "
    "the small runs, so the calibration keeps the baseline: held-out mean abs. log error "
    "SC'21 7.2%, vTrain 8.0%, MegaScale 2.8%, calibrated and baseline alike",
)
def test_held_out_error_below_refitted_baseline(result: tuple[str, HoldOut]) -> None:
    group, r = result
    assert r.calibrated_error < r.default_error, (group, r)
