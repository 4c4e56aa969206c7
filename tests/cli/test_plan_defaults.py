"""One place for plan defaults: the CLI options, the Python API and the web request bodies
all read ``PLAN_DEFAULTS``, so a question with plan fields left out gets one answer."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import scalewall
from scalewall.cli.app import load_command
from scalewall.errors import SpecError
from scalewall.plan.defaults import DEFAULT_MODEL, PLAN_DEFAULTS, STACK_SPLIT_FIELDS
from scalewall.plan.plan import STACK_PLAN_FIELDS, default_stage_split
from scalewall.web.requests import OPEN_FIELDS, EstimateRequest, GoodputRequest

PLAN_COMMANDS = ("estimate", "goodput")


def _options(command: str) -> dict[str, Any]:
    """The command's option defaults, by parameter name."""
    cmd = load_command(command)
    return {p.name: p.default for p in cmd.params if p.param_type_name == "option"}


@pytest.mark.parametrize("command", PLAN_COMMANDS)
def test_cli_option_defaults_are_the_plan_defaults(command: str) -> None:
    defaults = _options(command)
    for name, value in PLAN_DEFAULTS.fields().items():
        if name in ("global_batch", "ep") or name in STACK_PLAN_FIELDS + STACK_SPLIT_FIELDS:
            # Left out (None): the resolver fills PLAN_DEFAULTS.global_batch, or the tokens;
            # the stack-dependent fields PLAN_DEFAULTS' value, or what the stack runs (the
            # pipeline split: the stack's own where it balances it); ep PLAN_DEFAULTS' for a
            # dense model, an MoE model's widths together (``open_layout``).
            assert defaults[name] is None, name
        else:
            assert defaults[name] == value, name
    assert defaults["model"] == DEFAULT_MODEL
    assert defaults["dp"] is None and defaults["zero"] is None


@pytest.mark.parametrize("request_model", [EstimateRequest, GoodputRequest])
def test_web_request_defaults_are_the_plan_defaults(request_model: Any) -> None:
    body = request_model()
    for name, value in PLAN_DEFAULTS.fields().items():
        expected = None if name == "global_batch" or name in OPEN_FIELDS else value
        assert getattr(body, name) == expected, name
    # Nothing left at its default is passed on, so the command's own default applies; a width
    # the request gives is passed on even where it equals the fallback default.
    assert body.options() == {}
    assert request_model(tp=PLAN_DEFAULTS.tp).options() == {"tp": PLAN_DEFAULTS.tp}


def test_cli_equals_api_with_plan_fields_left_out(run_cli: Callable[..., Any]) -> None:
    args = ["--model", "llama3-8b", "--gpu", "h100-sxm-80gb", "--gpus", "64"]
    result = run_cli("estimate", *args, "--json")
    assert result.returncode == 0, result.stderr
    cli = json.loads(result.stdout)
    api = json.loads(
        json.dumps(scalewall.estimate("llama3-8b", gpu="h100-sxm-80gb", gpus=64).to_dict())
    )
    assert api == cli
    assert cli["plan"]["seq_len"] == PLAN_DEFAULTS.seq_len
    assert cli["plan"]["global_batch"] == PLAN_DEFAULTS.global_batch


def test_api_plan_fields_override_only_what_they_name() -> None:
    est = scalewall.estimate("llama3-8b", gpu="h100-sxm-80gb", gpus=64, plan={"tp": 4})
    plan = est.plan
    assert plan.tp == 4 and plan.dp == 64 // (4 * plan.pp)
    assert plan.seq_len == PLAN_DEFAULTS.seq_len
    both = scalewall.estimate("llama3-8b", gpu="h100-sxm-80gb", gpus=64, plan={"tp": 4, "pp": 2})
    assert (both.plan.tp, both.plan.pp, both.plan.dp) == (4, 2, 8)


def test_global_batch_tokens_sets_the_batch(run_cli: Callable[..., Any]) -> None:
    args = ["--model", "llama3-8b", "--gpu", "h100-sxm-80gb", "--gpus", "64"]
    result = run_cli("estimate", *args, "--global-batch-tokens", str(2**22), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["plan"]["global_batch"] == 2**22 // PLAN_DEFAULTS.seq_len
    bad = run_cli("estimate", *args, "--global-batch-tokens", "100", "--json")
    assert bad.returncode == 2 and "global_batch_tokens" in bad.stderr


def test_goodput_states_the_llama3_405b_paper_plan(run_cli: Callable[..., Any]) -> None:
    """Llama 3 405B on 16,384 H100 (arXiv 2407.21783, Table 4: TP 8, CP 1, PP 16, DP 128,
    16M tokens per step), one layer off the first and last stage as the README's estimate."""
    plan = ["--tp", "8", "--pp", "16", "--first-stage-layers", "7", "--last-stage-layers", "7"]
    args = ["--model", "llama3.1-405b", "--gpu", "h100-sxm-80gb", "--gpus", "16384", *plan]
    extra = ["--global-batch-tokens", str(16 * 2**20), "--etp", "1", "--cp-mode", "ring"]
    result = run_cli("goodput", *args, *extra, "--cuda-graphs", "none", "--mc-runs", "0", "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["plan"]["dp"] == 128
    assert doc["plan"]["global_batch"] == 2048
    assert (doc["plan"]["first_stage_layers"], doc["plan"]["last_stage_layers"]) == (7, 7)
    same = scalewall.goodput(
        "llama3.1-405b",
        gpu="h100-sxm-80gb",
        gpus=16384,
        plan={"tp": 8, "pp": 16, "first_stage_layers": 7, "last_stage_layers": 7},
        global_batch_tokens=16 * 2**20,
        stack_overrides={"cuda_graphs": "none"},
        monte_carlo_runs=0,
    )
    assert json.loads(json.dumps(same.to_dict())) == doc


def test_goodput_takes_every_plan_option_estimate_takes() -> None:
    assert set(_options("estimate")) - set(_options("goodput")) == set()


@pytest.mark.parametrize("command", ["estimate", "goodput", "search", "wall", "cost", "report"])
def test_shared_options_are_spelled_once(command: str) -> None:
    """Where a command takes a model, cluster, stack or batch option, it is the common one."""
    cmd = load_command(command)
    flags = {p.name: tuple(p.opts) for p in cmd.params if p.param_type_name == "option"}
    common = {
        "model": ("--model", "-m"),
        "gpu": ("--gpu",),
        "gpus": ("--gpus", "-n"),
        "stack_set": ("--stack-set",),
        "cuda_graphs": ("--cuda-graphs",),
        "global_batch_tokens": ("--global-batch-tokens",),
        "calibration": ("--calibration",),
    }
    for name, opts in common.items():
        if name in flags:
            assert set(flags[name]) == set(opts), (command, name)


def test_defaults_a_stack_cannot_run_give_way_and_stated_ones_are_refused(
    run_cli: Callable[..., Any],
) -> None:
    args = ["--model", "llama3-8b", "--gpu", "h100-sxm-80gb", "--gpus", "64", "--json"]
    result = run_cli("estimate", *args, "--stack", "pytorch-fsdp-full-shard")
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)["plan"]
    assert (plan["tp"], plan["pp"], plan["recompute"], plan["dp"]) == (1, 1, "none", 64)
    api = scalewall.estimate("llama3-8b", gpu="h100-sxm-80gb", gpus=64, stack="fsdp")
    assert json.loads(json.dumps(api.to_dict())) == json.loads(result.stdout)
    refused = run_cli("estimate", *args, "--stack", "fsdp", "--pp", "2")
    assert refused.returncode == 2
    assert "pp=2" in refused.stderr and "no pipeline" in refused.stderr


def test_open_widths_lay_out_on_a_small_cluster() -> None:
    """Where no layout fits (Llama 3.1 405B on a few GPUs), the open widths are
    ``PLAN_DEFAULTS``' as they lay out: tp 8 x pp 4 is 32 GPUs, so on 8 the open pp gives way
    (8 x 1), on 4 the open tp too, and on 16 pp takes 2."""
    eight = scalewall.estimate("llama3.1-405b", gpu="h100-sxm-80gb", gpus=8)
    assert (eight.plan.tp, eight.plan.pp, eight.plan.dp) == (8, 1, 1) and not eight.fits
    four = scalewall.estimate("llama3.1-405b", gpu="h100-sxm-80gb", gpus=4).plan
    assert (four.tp, four.pp, four.dp) == (4, 1, 1)
    sixteen = scalewall.estimate("llama3.1-405b", gpu="h100-sxm-80gb", gpus=16).plan
    assert (sixteen.tp, sixteen.pp, sixteen.dp) == (8, 2, 1)


def _fastest_fitting_layout(model: str, gpus: int, **question: Any) -> tuple[float, int, int]:
    """The fastest (step time, tp, pp) over every tp of 1, 2, 4, 8 and power-of-two pp that
    fits, each estimated with the widths given: what an open question should get."""
    best = (float("inf"), 0, 0)
    for tp in (1, 2, 4, 8):
        for pp in (1, 2, 4, 8, 16, 32):
            try:
                est = scalewall.estimate(
                    model, gpu="h100-sxm-80gb", gpus=gpus, plan={"tp": tp, "pp": pp}, **question
                )
            except SpecError:
                continue
            if est.fits:
                best = min(best, (est.step_time_s, tp, pp))
    return best


@pytest.mark.parametrize(
    ("model", "gpus", "stack"),
    [("llama3-70b", 512, None), ("llama3-8b", 64, "torchtitan-fsdp2"), ("llama3-8b", 8, None)],
)
def test_open_dense_widths_are_the_fastest_layout_that_fits(
    model: str, gpus: int, stack: str | None
) -> None:
    """A dense question that leaves tp and pp out gets the fastest layout that fits, as an MoE
    question does, not a fixed tp 8 x pp 4: before, Llama 3 8B under torchtitan on 64 GPUs
    was estimated at tp 8 x pp 4, 34% below the FSDP layout torchtitan runs."""
    question = {"stack": stack} if stack else {}
    est = scalewall.estimate(model, gpu="h100-sxm-80gb", gpus=gpus, **question)
    best_s, tp, pp = _fastest_fitting_layout(model, gpus, **question)
    assert est.fits
    assert (est.plan.tp, est.plan.pp) == (tp, pp)
    assert est.step_time_s == pytest.approx(best_s)


def test_a_stack_without_selective_recompute_runs_none_where_it_fits() -> None:
    """PyTorch FSDP checkpoints whole layers only: an open recompute is none where that fits
    (Llama 3 8B on 64 H100) and full where it does not (Llama 3 70B on 64 H100)."""
    small = scalewall.estimate("llama3-8b", gpu="h100-sxm-80gb", gpus=64, stack="fsdp")
    assert small.plan.recompute == "none" and small.fits
    large = scalewall.estimate("llama3-70b", gpu="h100-sxm-80gb", gpus=64, stack="fsdp")
    assert large.plan.recompute == "full" and large.fits


def test_open_tp_divides_the_heads_and_a_given_width_is_kept() -> None:
    """A model of 28 heads takes a tp that divides them when tp is left out; a tp the question
    gives stays, and its error names it."""
    model = "custom:layers=28,hidden=3584,heads=28,kv_heads=4,ffn_hidden=18944,vocab=152064"
    plan = scalewall.estimate(model, gpu="h100-sxm-80gb", gpus=64).plan
    assert 28 % plan.tp == 0
    with pytest.raises(SpecError, match="tp"):
        scalewall.estimate(model, gpu="h100-sxm-80gb", gpus=64, plan={"tp": 8})
    with pytest.raises(SpecError, match="must divide the cluster's 8 GPUs"):
        scalewall.estimate("llama3-8b", gpu="h100-sxm-80gb", gpus=8, plan={"pp": 4, "tp": 8})


def test_cli_equals_api_on_a_small_cluster(run_cli: Callable[..., Any]) -> None:
    args = ["--model", "llama3-8b", "--gpu", "h100-sxm-80gb", "--gpus", "8"]
    result = run_cli("estimate", *args, "--json")
    assert result.returncode == 0, result.stderr
    api = scalewall.estimate("llama3-8b", gpu="h100-sxm-80gb", gpus=8).to_dict()
    assert json.loads(result.stdout) == json.loads(json.dumps(api))


def test_stages_that_cannot_split_evenly_take_megatrons_split(run_cli: Callable[..., Any]) -> None:
    """DeepSeek-V3's 61 layers on the stages an open question gets, or on 16 the question
    names: with the split left out the plan takes ``default_stage_split``, as ``validate``
    does, in the CLI and the API alike; a split the question gives is kept."""
    plan = scalewall.estimate("deepseek-v3", gpu="h100-sxm-80gb", gpus=512).plan
    assert plan.pp > 1  # 61 is prime: no pp > 1 divides it
    split = default_stage_split(61, plan.pp)
    assert (plan.first_stage_layers, plan.last_stage_layers) == split
    assert plan.first_stage_layers > 0
    sixteen = scalewall.estimate(
        "deepseek-v3", gpu="h100-sxm-80gb", gpus=2048, plan={"pp": 16, "tp": 1, "ep": 64}
    ).plan
    split = (sixteen.first_stage_layers, sixteen.last_stage_layers)
    assert split == default_stage_split(61, 16)
    given = scalewall.estimate(
        "deepseek-v3",
        gpu="h100-sxm-80gb",
        gpus=2048,
        plan={"pp": 16, "tp": 1, "ep": 64, "first_stage_layers": 4, "last_stage_layers": 1},
    ).plan
    assert (given.first_stage_layers, given.last_stage_layers) == (4, 1)
    args = ["--model", "deepseek-v3", "--gpu", "h100-sxm-80gb", "--gpus", "512", "--json"]
    result = run_cli("estimate", *args)
    assert result.returncode == 0, result.stderr
    api = scalewall.estimate("deepseek-v3", gpu="h100-sxm-80gb", gpus=512).to_dict()
    assert json.loads(result.stdout) == json.loads(json.dumps(api))


def test_an_moe_question_with_open_widths_gets_expert_parallelism(
    run_cli: Callable[..., Any],
) -> None:
    """Qwen3-30B-A3B on 512 H100 with tp, pp and ep left out: before, the dense defaults
    (tp 8, pp 4, ep 1) put every expert on every GPU at 1.5% MFU. Now the widths come from
    the MoE candidates (tp 1 or 2, expert parallelism), the fastest that fits."""
    args = ["--model", "qwen3-30b-a3b", "--gpu", "h100-sxm-80gb", "--gpus", "512"]
    result = run_cli("estimate", *args, "--json")
    assert result.returncode == 0, result.stderr
    cli = json.loads(result.stdout)
    api = scalewall.estimate("qwen3-30b-a3b", gpu="h100-sxm-80gb", gpus=512)
    assert json.loads(json.dumps(api.to_dict())) == cli
    plan = api.plan
    assert plan.tp <= 2 and plan.ep > 1 and api.fits
    assert api.mfu > 0.15
    # A width the question gives is kept; the others are still chosen around it.
    given = scalewall.estimate("qwen3-30b-a3b", gpu="h100-sxm-80gb", gpus=512, plan={"ep": 16})
    assert given.plan.ep == 16 and given.plan.tp <= 2
    # A dense model gets no expert parallelism.
    assert scalewall.estimate("llama3-70b", gpu="h100-sxm-80gb", gpus=512).plan.ep == 1


def test_open_moe_widths_are_ranked_with_the_questions_constants(
    run_cli: Callable[..., Any], tmp_path: Any
) -> None:
    """The MoE widths a question leaves open are the fastest under the constants it is
    answered with: a calibration whose expert all-to-all runs at 2% of the bus bandwidth
    narrows expert parallelism (Qwen3-30B-A3B on 64 H100: ep 4 with the defaults, at most 2
    with the slow all-to-all), from the Python API and from ``estimate --calibration``."""
    import dataclasses

    from scalewall.calibrate.published import shipped_profile_path
    from scalewall.perf.assumptions import Efficiency

    base = Efficiency()
    slow = dataclasses.replace(
        base, comm=dataclasses.replace(base.comm, expert_alltoall_bw_efficiency=0.02)
    )
    question = {"model": "qwen3-30b-a3b", "gpu": "h100-sxm-80gb", "gpus": 64}
    default = scalewall.estimate(**question)
    narrow = scalewall.estimate(**question, efficiency=slow)
    assert default.plan.ep >= 4
    assert narrow.plan.ep <= 2 < default.plan.ep
    profile = shipped_profile_path().read_text()
    line = next(x for x in profile.splitlines() if x.startswith("expert_alltoall_bw_efficiency"))
    path = tmp_path / "slow_a2a.toml"
    path.write_text(profile.replace(line, "expert_alltoall_bw_efficiency = 0.02"))
    args = ["--model", "qwen3-30b-a3b", "--gpu", "h100-sxm-80gb", "--gpus", "64", "--json"]
    result = run_cli("estimate", *args, "--calibration", str(path))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["plan"]["ep"] == narrow.plan.ep


def test_estimate_says_which_widths_it_chose(run_cli: Callable[..., Any]) -> None:
    args = ["--model", "llama3-8b", "--gpu", "h100-sxm-80gb", "--gpus", "64"]
    chosen = run_cli("estimate", *args)
    assert chosen.returncode == 0, chosen.stderr
    assert "tp, pp left out: the fastest layout that fits (--tp, --pp to set)" in chosen.stdout
    given = run_cli("estimate", *args, "--tp", "2", "--pp", "1")
    assert "left out" not in given.stdout
    moe = run_cli("estimate", "--model", "mixtral-8x7b", "--gpu", "h100-sxm-80gb", "--gpus", "64")
    assert "tp, pp, ep left out" in moe.stdout
