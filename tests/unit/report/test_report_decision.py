"""The decision: feasibility against the target, total cost = compute + time, the choice and
the break-even; the four growth stages; the knee against the best per-GPU rate."""

from __future__ import annotations

import math

import pytest

from scalewall.reliability.checkpoint import RESTART_PHASES
from scalewall.report import Report
from scalewall.report.advice import knee_vs_best
from scalewall.report.content import content, verdict
from scalewall.report.decision import choose, model_breakeven, outcome, value_breakeven
from scalewall.report.stages import SCHED_LOAD_FRAC, STAGES, governance, stage_sizes
from scalewall.report.strings import strings
from scalewall.sweep import cluster_design
from scalewall.units import DAY_S

TARGET_S = 90 * DAY_S


def _out(name: str, days: float, usd: float, value: float = 0.0, eff: float = 0.4) -> dict:
    o = outcome(days * DAY_S, usd, target_s=TARGET_S, value_usd_per_day=value, late_usd_per_day=0.0)
    return {"name": name, "effective_frac": eff, **o}


def test_total_cost_is_compute_plus_time_and_late_runs_are_infeasible() -> None:
    o = outcome(100 * DAY_S, 5e6, target_s=TARGET_S, value_usd_per_day=1e4, late_usd_per_day=1e5)
    assert not o["feasible"]
    assert o["late_s"] == pytest.approx(10 * DAY_S)
    # 100 days x $10k + 10 days late x $100k on top of $5M compute
    assert o["total_usd"] == pytest.approx(5e6 + 1e6 + 1e6)
    assert outcome(90 * DAY_S, 1.0, target_s=TARGET_S, value_usd_per_day=0, late_usd_per_day=0)[
        "feasible"
    ]


def test_a_cheaper_option_past_the_target_is_never_chosen() -> None:
    small = _out("small", 347, 6.5e6)
    big = _out("big", 13.5, 8.6e6)
    choice = choose([small, big])
    assert choice["name"] == "big" and choice["feasible"]
    assert choice["reasons"][0] == {"kind": "others_late", "names": ["small"]}


def test_between_feasible_options_the_value_of_time_decides() -> None:
    slow, fast = _out("slow", 60, 1e6), _out("fast", 10, 2e6)
    assert choose([slow, fast])["name"] == "slow"
    # break-even value: $1M extra compute over 50 days saved
    assert value_breakeven(fast, slow) == pytest.approx(2e4)
    slow, fast = _out("slow", 60, 1e6, 3e4), _out("fast", 10, 2e6, 3e4)
    choice = choose([slow, fast])
    assert choice["name"] == "fast"
    assert choice["reasons"][0]["kind"] == "time_pays"


def test_no_feasible_option_picks_the_earliest_and_says_so() -> None:
    choice = choose([_out("a", 400, 1e6), _out("b", 200, 9e6)])
    assert choice == {"name": "b", "feasible": False, "reasons": [{"kind": "none_feasible"}]}


def _point(model: str, params: float, small_days: float, big_days: float) -> dict:
    # compute cost grows with the run: small $20k a day, big $600k a day
    return {
        "id": model,
        "params": params,
        "small": _out("s", small_days, 2e4 * small_days),
        "big": _out("b", big_days, 6e5 * big_days),
    }


def test_model_breakeven_interpolates_where_the_small_run_reaches_the_target() -> None:
    points = [_point("a", 1e10, 45, 1.5), _point("b", 4e10, 180, 6)]
    be = model_breakeven(points, TARGET_S)
    assert be["kind"] == "cross" and be["reason"] == "deadline"
    # days grow as params here (45 -> 180 over 1e10 -> 4e10): 90 days at 2e10 in log-log
    assert be["params"] == pytest.approx(2e10, rel=1e-9)


def test_model_breakeven_always_and_never() -> None:
    late = [_point("a", 1e10, 100, 5), _point("b", 2e10, 200, 10)]
    assert model_breakeven(late, TARGET_S)["kind"] == "always"
    early = [_point("a", 1e10, 10, 1), _point("b", 2e10, 20, 2)]
    assert model_breakeven(early, TARGET_S)["kind"] == "never"  # big costs more and both fit


def test_report_decision_matches_its_options(small_report: Report) -> None:
    d = small_report.data["decision"]
    target = small_report.scenario.target_s
    for o, option in zip(d["options"], small_report.data["options"], strict=True):
        assert o["feasible"] == (option["training"]["calendar_s"] <= target)
        assert o["compute_usd"] == option["training"]["owned_usd"]
    be = d["breakeven"]
    assert [p["id"] for p in be["models"]] == ["llama3-8b", "llama3-70b"]
    assert be["token_budget"] > 0 and be["target_s"] > be["big_target_s"]


def test_verdict_is_five_bullets_or_fewer_and_names_infeasible_options(
    small_report: Report,
) -> None:
    for lang in ("en", "zh"):
        lines = verdict(strings(lang), small_report.data)
        assert 1 <= len(lines) <= 5
    page = content(small_report, "en")
    assert page["verdict"][0].startswith(page["decision"]["choice"]["name"])
    late = [o["name"] for o in page["decision"]["options"] if not o["feasible"]]
    for name in late:
        assert any("Infeasible" in line and name in line for line in page["verdict"])
    assert not any("cheaper per token" in line for line in page["verdict"])


def test_four_stages_with_numbers(small_report: Report) -> None:
    stages = small_report.data["stages"]
    assert [s["stage"] for s in stages] == list(STAGES)
    bringup, governance, network, operations = stages
    assert 0 < bringup["availability_frac"] < 1 and bringup["burn_in_failures"] > 0
    policies = {(r["queue"], r["placement"]) for r in governance["runs"]}
    assert {("fifo", "bestfit"), ("quota", "bestfit"), ("fifo", "fgd")} <= policies
    for run in governance["runs"]:
        assert 0 <= run["utilisation_frac"] <= 1 and run["unfinished"] == 0
    assert network["switch_tiers"] >= 2 and network["data_loading_bytes_per_s"] > 0
    assert network["checkpoint_needed_bytes_per_s"] >= network["checkpoint_write_bytes_per_s"]
    assert operations["interruptions_per_day"] > bringup["interruptions_per_day"] / 16
    phases = operations["restart_phases_s"]
    assert set(phases) == set(RESTART_PHASES)
    assert phases[operations["dominant_restart_phase"]] == max(phases.values())
    assert operations["checkpoint_write_s"] > 0 and operations["checkpoint_restore_s"] > 0
    assert operations["spare_nodes"] >= 1  # thousands of GPUs lose nodes within a repair time
    levers = {r["lever"]: r for r in operations["levers"]}
    assert set(levers) == {"in_memory", "spares", "storage", "restart"}
    assert levers["restart"]["gain_frac"] > 0 and levers["spares"]["gain_frac"] > 0
    gains = [r["gain_frac"] for r in operations["levers"]]
    assert gains == sorted(gains, reverse=True)
    for s in stages:
        assert s["loss"]["frac"] >= 0 and s["loss"]["kind"]
    rows = content(small_report, "zh")["stages"]["rows"]
    assert len(rows) == 4 and rows[0][0].startswith("1. 上线")


def test_governance_measures_queueing_fragmentation_and_fairness() -> None:
    # 200 jobs on 64 GPUs: the offered load is reached and the stage runs in under a second.
    cluster = cluster_design("dgx-h100-superpod-1024", None).at(64)
    stage = governance(cluster, 200)
    assert stage["gpus"] == 64 and stage["jobs"] == 200
    assert stage["load_frac"] == pytest.approx(SCHED_LOAD_FRAC, rel=1e-3)
    assert stage["sharing_job_frac"] > 0.1 and stage["multi_gpu_job_frac"] > 0.3
    runs = {(r["queue"], r["placement"]): r for r in stage["runs"]}
    fifo = runs["fifo", "bestfit"]
    assert 0.5 < fifo["utilisation_frac"] <= 1 and fifo["queue_delay_mean_s"] > 0
    assert max(r["fragmentation_frac"] for r in runs.values()) > 0
    assert runs["drf", "bestfit"]["queue_delay_mean_s"] != fifo["queue_delay_mean_s"]
    for run in runs.values():
        assert 0 < run["fairness_jain"] <= 1 + 1e-12 and run["unfinished"] == 0
        assert run["worst_tenant_queue_delay_s"] >= min(run["tenant_queue_delay_mean_s"].values())


def test_stage_sizes_spread_over_the_growth_path() -> None:
    growth = [{"gpus": g} for g in (256, 1024, 4096, 16384)]
    assert [s["gpus"] for s in stage_sizes(growth)] == [256, 1024, 4096, 16384]
    assert [s["gpus"] for s in stage_sizes(growth[:2])] == [256, 256, 1024, 1024]


def _sweep_row(gpus: int, per_gpu: float, base: float, prev: tuple[int, float] | None) -> dict:
    marginal = math.nan
    if prev is not None:
        marginal = (gpus * per_gpu - prev[0] * prev[1]) / (gpus - prev[0]) / base
    losses = dict.fromkeys(("dp_comm", "pipeline_bubble"), 0.1)
    losses["dp_comm"] = 0.1 + gpus / 1e4
    return {
        "gpus": gpus, "tokens_per_s": gpus * per_gpu, "tokens_per_s_per_gpu": per_gpu,
        "marginal_efficiency_frac": marginal, "mfu": 0.4, "loss_fracs": losses,
        "global_batch": 1024, "plan": {"dp": gpus // 8}, "found": True,
    }  # fmt: skip


def test_knee_is_measured_against_the_best_per_gpu_rate() -> None:
    # a memory-bound smallest size (per-GPU 500) hides the knee when it is the reference
    rates = [(64, 500.0), (128, 1000.0), (256, 980.0), (512, 700.0)]
    rows, prev = [], None
    for gpus, rate in rates:
        rows.append(_sweep_row(gpus, rate, rates[0][1], prev))
        prev = (gpus, rate)
    out = knee_vs_best(rows, 0.5)
    assert out is not None and out["best_gpus"] == 128
    knee = out["knee"]
    # 256 -> 512 adds (358,400 - 250,880) / 256 = 420 tokens/s per GPU: 42% of the best 1,000
    assert knee is not None and knee["gpus"] == 512
    assert knee["marginal_efficiency_frac"] == pytest.approx(0.42)
