"""The step model against published training runs (shipped copy of ../shared/validation).

One set of constants for every case. Bounds come from the project's requirements: MAPE <= 8% over
the Megatron SC'21, Megatron-Core H100, Korthikanti and Llama 3 cases with no case off by more than
20%, and MAPE <= 10% over vTrain's 109 measured multi-node runs (vTrain reports 14.73%).
Each run writes the full error table to test-artifacts/validation.json.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from scalewall.perf.assumptions import Efficiency
from scalewall.perf.batch import PlanBatch
from scalewall.perf.step import step_model
from scalewall.units import GIB
from scalewall.validation.harness import ValidationReport, predict_case, validate_cases
from scalewall.validation.runs import Case, case_cluster, read_runs

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PUBLISHED_GROUPS = ("megatron_sc21", "megatron_core_h100", "korthikanti", "llama3")


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return {c.id: c for c in read_runs()}


@pytest.fixture(scope="module")
def report(cases: dict[str, Case]) -> ValidationReport:
    result = validate_cases(list(cases.values()))
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "validation.json").write_text(json.dumps(result.to_dict(), indent=1))
    return result


def test_shipped_copy_matches_shared_when_present() -> None:
    shared = Path(__file__).resolve().parents[3] / "shared" / "validation" / "published_runs.json"
    if not shared.exists():
        pytest.skip("../shared is not beside this checkout")
    ours = json.loads(
        (
            Path(__file__).resolve().parents[2]
            / "src"
            / "scalewall"
            / "validation"
            / "data"
            / "published_runs.json"
        ).read_text()
    )
    # The shipped copy states each stack as a catalog id (with overrides) where the shared file
    # describes it in words; the words move to the case's notes. Everything else is the same.
    theirs = json.loads(shared.read_text())["cases"]
    assert [c["id"] for c in theirs] == [c["id"] for c in ours["cases"]]
    for shared_case, shipped in zip(theirs, ours["cases"], strict=True):
        words = shared_case["plan"].pop("stack")
        shipped = json.loads(json.dumps(shipped))
        stated = shipped["plan"].pop("stack")
        assert isinstance(stated, str | dict)
        assert words in shipped.pop("notes", "")
        shared_case.pop("notes", None)
        assert shared_case == shipped


def test_published_groups_mape_within_8_percent(report: ValidationReport) -> None:
    errors = [
        abs(c.error_frac)
        for c in report.comparisons
        if c.group in PUBLISHED_GROUPS and not c.metric.startswith("memory")
    ]
    assert len(errors) >= 60
    assert float(np.mean(errors)) <= 0.08


def test_no_published_case_off_by_more_than_20_percent(report: ValidationReport) -> None:
    worst = max(
        (
            c
            for c in report.comparisons
            if c.group in PUBLISHED_GROUPS and not c.metric.startswith("memory")
        ),
        key=lambda c: abs(c.error_frac),
    )
    assert abs(worst.error_frac) <= 0.20, (worst.id, worst.metric, worst.error_frac)


def test_vtrain_mape_within_10_percent(report: ValidationReport) -> None:
    errors = [abs(c.error_frac) for c in report.comparisons if c.group == "vtrain_multi"]
    assert len(errors) == 109
    assert float(np.mean(errors)) <= 0.10


def _memory_gib(case: Case, **plan_changes: object) -> tuple[dict[str, float], bool]:
    pred = predict_case(case)
    plan = replace(pred.plan, **plan_changes)  # type: ignore[arg-type]
    out = step_model(
        case.model,
        case_cluster(case.hardware),
        PlanBatch.from_plans(case.model, [plan]),
        Efficiency(),
        case.stack,
    )
    mem = {k: float(v[0]) / GIB for k, v in out.memory_bytes.items()}
    wgo = mem["weights"] + mem["gradients"] + mem["optimizer_state"]
    return {"weights_grads_optimizer": wgo, "activations": mem["activations"]}, bool(out.fits[0])


# The published bars fix two plan details the case records leave open or state otherwise:
# - 22B (pp=1): the bars equal 4x the b=1 value of Korthikanti's eq. 2 (selective:
#   34 s b h L / t = 34*2048*6144*48/8 B = 2.39 GiB at b=1; the bar reads 9.56 = 4 x 2.39), so
#   the figure was drawn for a micro-batch of 4, the whole batch;
# - 1T no-recompute: the same schedule as its selective sibling, no interleaving (eq. 1 without
#   SP: (10 + 24/t + 5as/(ht)) s h = (10 + 3 + 8) x 2048 x 25600 bytes per layer, times the 128
#   layers the first stage holds over its pp micro-batches in flight = 131.25 GiB exactly, the
#   bar's value; interleaving with vpp=2 would add (p-1)/(p v) = 49%).
MEMORY_PLAN = {
    "korthikanti_22B_selective": {"micro_batch": 4},
    "korthikanti_22B_no_recompute_memory": {"micro_batch": 4},
    "korthikanti_1T_no_recompute_memory": {"vpp": 1},
    # The bars share one schedule; with the usable 80 GiB the throughput fit picks vpp=2 for
    # the selective run, whose memory bar (26.6 GiB = eq. 2 over 128 layers in flight) is
    # drawn without interleaving.
    "korthikanti_1T_selective": {"vpp": 1},
}


@pytest.mark.parametrize(
    "case_id",
    [
        "korthikanti_22B_selective",
        "korthikanti_175B_selective",
        "korthikanti_530B_selective",
        "korthikanti_1T_selective",
        "korthikanti_22B_no_recompute_memory",
        "korthikanti_175B_no_recompute_memory",
        "korthikanti_530B_no_recompute_memory",
        "korthikanti_1T_no_recompute_memory",
    ],
)
def test_memory_within_10_percent_of_korthikanti(cases: dict[str, Case], case_id: str) -> None:
    case = cases[case_id]
    predicted, fits = _memory_gib(case, **MEMORY_PLAN.get(case_id, {}))
    for part, published in case.published["memory_gib"].items():
        assert predicted[part] == pytest.approx(published, rel=0.10), part
    if "fits" in case.published:
        assert fits == case.published["fits"]
