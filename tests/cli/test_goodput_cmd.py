"""``scalewall goodput``: JSON keys, the step time from the step model or the search, and bad
inputs give one stderr line and exit code 2."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scalewall import catalog
from scalewall.api import estimate
from scalewall.cluster import resolve_cluster
from scalewall.plan.plan import ParallelPlan
from scalewall.reliability import GoodputTokensPerSecond
from scalewall.search import search

JOB = ["goodput", "--model", "llama3-70b", "--gpu", "h100-sxm-80gb", "--gpus", "1024", "--pp", "4"]
JSON_KEYS = {
    "mttf_s",
    "interruptions_per_day",
    "checkpoint_write_s",
    "optimal_interval_s",
    "goodput_frac",
    "goodput_ci",
    "lost_gpu_hours_per_day",
    "restart_phases_s",
    "interruptions_per_day_by_category",
}


def test_json_has_the_documented_keys(run_cli: Any) -> None:
    result = run_cli(*JOB, "--mc-runs", "300", "--what-if", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) >= JSON_KEYS
    low, high = data["goodput_ci"]
    assert low <= data["goodput_mc_frac"] <= high
    assert 0 < data["goodput_frac"] < 1
    # --pp given, --tp left open: the output says which width the command chose.
    assert data["plan_source"] == "given; chosen: tp" and data["plan"]["pp"] == 4
    levers = {"failure_rate", "checkpoint_bandwidth", "restart_time", "spare_nodes"}
    assert set(data["what_if"]) == levers
    # The required spares are among the rows of the spares lever, and enough for it.
    rows = data["what_if"]["spare_nodes"]
    need = data["required_spare_nodes"]
    ideal = rows[-1]["goodput_frac"]
    (at_need,) = [r["goodput_frac"] for r in rows if r["spare_nodes"] == need]
    assert at_need >= ideal - 1e-3


@pytest.mark.parametrize(
    ("extra", "word"),
    [
        (["--storage", "tape"], "tape"),
        (["--interval", "1e9"], "interval_s"),
        (["--interval", "soon"], "interval"),
        (["--failure-rates", "nope"], "nope"),
        (["--spare-nodes", "-3"], "spare_nodes"),
        (["--step-s", "-1"], "step_s"),
        (["--tp", "3"], "tp"),
    ],
)
def test_bad_input_one_line_exit_2(run_cli: Any, extra: list[str], word: str) -> None:
    result = run_cli(*JOB, "--mc-runs", "0", *extra)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert word in result.stderr and "Traceback" not in result.stderr


def test_step_time_comes_from_the_step_model_unless_given(run_cli: Any) -> None:
    """Without --step-s the step time is `scalewall.api.estimate`'s for the same plan; with it,
    the given one (and tokens/s follows from the batch)."""
    result = run_cli(*JOB, "--global-batch", "256", "--seq-len", "4096", "--mc-runs", "0", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    plan = ParallelPlan(tp=8, pp=4, dp=32, global_batch=256, seq_len=4096)
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=1024)
    expected = estimate("llama3-70b", cluster, plan, stack="megatron-core")
    assert data["step_time_source"] == "estimate"
    assert data["step_time_s"] == pytest.approx(expected.step_time_s, rel=1e-12)
    assert data["tokens_per_s"] == pytest.approx(expected.tokens_per_s, rel=1e-9)
    assert data["goodput_tokens_per_s"] == pytest.approx(
        data["tokens_per_s"] * data["goodput_frac"], rel=1e-12
    )
    given = json.loads(run_cli(*JOB, "--step-s", "2.5", "--mc-runs", "0", "--json").stdout)
    assert given["step_time_source"] == "given" and given["step_time_s"] == 2.5
    assert given["tokens_per_s"] == pytest.approx(512 * 8192 / 2.5)


def test_best_plan_is_the_searchs_best_by_goodput_tokens(run_cli: Any) -> None:
    args = ["--global-batch", "256", "--seq-len", "4096", "--storage", "object-store"]
    result = run_cli(*JOB, *args, "--best-plan", "--run-days", "20", "--mc-runs", "0", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    objective = GoodputTokensPerSecond(storage="object-store", run_s=20 * 86400.0)
    best = search(
        catalog.model("llama3-70b"),
        resolve_cluster(gpu="h100-sxm-80gb", gpus=1024),
        global_batch=256,
        seq_len=4096,
        objective_name=objective,
        top_k=1,
        stack="megatron-core",
    ).top[0]
    assert data["plan_source"] == "search" and data["step_time_source"] == "search"
    assert data["plan"]["tp"] == best.plan.tp and data["plan"]["pp"] == best.plan.pp
    assert data["step_time_s"] == pytest.approx(best.step_time_s, rel=1e-12)
    # The CLI's goodput uses the optimiser on the plan alone; the objective clips a shared
    # optimum: equal to the optimiser's tolerance.
    assert data["goodput_tokens_per_s"] == pytest.approx(best.score, rel=1e-6)


def test_search_ranks_by_the_goodput_objective_from_the_command_line(run_cli: Any) -> None:
    """The objective is registered when the CLI runs: its value is tokens/s x goodput < tokens/s."""
    result = run_cli(
        *("search", "-m", "llama3-70b", "--gpu", "h100-sxm-80gb", "--gpus", "1024"),
        *("--objective", "goodput_tokens_per_s", "--top", "1", "--json"),
    )
    assert result.returncode == 0, result.stderr
    top = json.loads(result.stdout)["top"][0]
    assert 0.9 * top["tokens_per_s"] < top["objective_value"] < top["tokens_per_s"]
