"""The validator on files it has never seen: any layer count, one error line per case that
cannot be modelled, every documented published metric compared."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from scalewall.validation.harness import (
    candidate_splits,
    compare,
    predict_case,
    predict_cases,
    series_key,
    validate_cases,
)
from scalewall.validation.runs import (
    FORMAT,
    default_runs_path,
    frontier_runs_path,
    fsdp_a100_runs_path,
    fsdp_runs_path,
    read_runs,
    read_runs_file,
    scaling_runs_path,
    transport_kind,
)


def _raw(path: Path, case_id: str) -> dict[str, Any]:
    cases = json.loads(path.read_text())["cases"]
    return copy.deepcopy(next(c for c in cases if c["id"] == case_id))


def _dense() -> dict[str, Any]:
    return _raw(default_runs_path(), "vtrain_multi_000")


def _moe() -> dict[str, Any]:
    return _raw(frontier_runs_path(), "frontier_mb2511_qwen3_30b_h100_16_fp8")


def _write(tmp_path: Path, cases: list[Any]) -> Path:
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"format": FORMAT, "cases": cases}))
    return path


def _deep_61(case_id: str, pp: int, vpp: int) -> dict[str, Any]:
    case = _dense()
    case["id"] = case_id
    case["model"]["layers"] = 61
    # Megatron-Core: the interleaved schedule (vpp 2) that vTrain's DeepSpeed engine lacks
    # (stated on it, the case would be predicted with a warning).
    case["plan"] |= {"pp": pp, "dp": 64 // pp, "vpp": vpp, "stack": "megatron-core"}
    return case


@pytest.mark.parametrize(("pp", "vpp"), [(8, 1), (8, 2), (16, 1), (16, 2)])
def test_61_layers_get_a_split_and_say_so(tmp_path: Path, pp: int, vpp: int) -> None:
    runs = read_runs_file(_write(tmp_path, [_deep_61("deep", pp, vpp)]))
    report = validate_cases(runs.cases, read_errors=runs.errors)
    assert report.errors == []
    chosen = report.comparisons[0].chosen
    assert set(chosen) == {"first_stage_layers", "last_stage_layers"}
    # No Megatron-Core rule divides 61 layers by 8 or 16: one of the splits with the fewest
    # layers on the middle stages, the fastest, is taken and reported.
    split = (chosen["first_stage_layers"], chosen["last_stage_layers"])
    assert split in candidate_splits(61, pp)
    assert report.comparisons[0].stack == report.stacks["deep"] != ""


def test_one_bad_case_is_one_error_the_rest_run(tmp_path: Path) -> None:
    bad_ep = _moe()
    bad_ep["id"] = "moe_ep_7"
    bad_ep["plan"]["ep"] = 7  # divides neither the 128 experts nor tp x cp x dp
    missing = _dense()
    missing["id"] = "no_training"
    del missing["training"]
    wrong_type = _dense()
    wrong_type["id"] = "pp_as_text"
    wrong_type["plan"]["pp"] = "2"
    runs = read_runs_file(_write(tmp_path, [_dense(), bad_ep, missing, wrong_type, _moe()]))
    report = validate_cases(runs.cases, read_errors=runs.errors)
    assert {c.id for c in report.comparisons} == {"vtrain_multi_000", _moe()["id"]}
    by_id = {e.id: e.text for e in report.errors}
    assert set(by_id) == {"moe_ep_7", "no_training", "pp_as_text"}
    assert "ep=7" in by_id["moe_ep_7"]
    assert "'training'" in by_id["no_training"]
    assert "plan.pp" in by_id["pp_as_text"]
    assert all("\n" not in text for text in by_id.values())


def test_every_documented_metric_is_compared(tmp_path: Path) -> None:
    case = _dense()
    step = case["published"]["step_time_s"]
    tokens = case["training"]["global_batch"] * case["training"]["seq_len"] / step
    case["published"] |= {
        "tokens_per_s_per_gpu": tokens / case["hardware"]["gpus"],
        "memory_gib": {"activations": 10.0},
        "made_up_metric": 1.0,
    }
    runs = read_runs_file(_write(tmp_path, [case]))
    report = validate_cases(runs.cases)
    got = {c.metric: c for c in report.comparisons}
    assert set(got) == {"step_time_s", "tokens_per_s_per_gpu", "memory_gib.activations"}
    per_gpu = got["tokens_per_s_per_gpu"]
    # the same figure as the step time, per GPU: equal errors up to rounding
    assert per_gpu.error_frac == pytest.approx(
        got["step_time_s"].published / got["step_time_s"].predicted - 1.0, rel=1e-9
    )
    assert [w.text.split()[0] for w in report.warnings] == ["published.made_up_metric"]
    assert report.to_dict()["warnings"][0]["id"] == "vtrain_multi_000"


def test_layout_given_wins(tmp_path: Path) -> None:
    case = _deep_61("layout", 8, 1)
    case["plan"]["pipeline_layout"] = [5, 8, 8, 8, 8, 8, 8, 8]
    bad = _deep_61("bad_layout", 8, 1)
    bad["plan"]["pipeline_layout"] = [5, 8, 8, 8, 8, 8, 8]
    runs = read_runs_file(_write(tmp_path, [case, bad]))
    report = validate_cases(runs.cases, read_errors=runs.errors)
    assert report.comparisons[0].chosen == {}
    assert [e.id for e in report.errors] == ["bad_layout"]
    assert "pipeline_layout" in report.errors[0].text


def test_fit_mismatch_is_reported() -> None:
    """Korthikanti et al. could not fit 22B without recompute at micro-batch 4; the model
    agrees, and at micro-batch 1 (a quarter of the activations) says it fits: a mismatch."""
    runs = read_runs_file()
    case = next(c for c in runs.cases if c.id == "korthikanti_22B_no_recompute_memory")
    assert validate_cases([case]).fit_mismatches == []
    case = dataclasses.replace(case, training={**case.training, "micro_batch": 1})
    report = validate_cases([case])
    assert report.fit_mismatches == [case.id]
    assert report.to_dict()["fits"][case.id] == {
        "published": False,
        "predicted": True,
        "mismatch": True,
    }


DEEPSEEK_V3_CONFIG = {
    "hidden_size": 7168,
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "num_experts_per_tok": 8,
    "first_k_dense_replace": 3,
    "q_lora_rank": 1536,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "vocab_size": 129280,
    "num_nextn_predict_layers": 1,
    "hidden_act": "silu",
    "rms_norm_eps": 1e-6,
    "max_position_embeddings": 163840,
}
"""The keys of deepseek-ai/DeepSeek-V3's config.json the step model reads."""


def test_a_case_states_its_model_as_a_config_json(tmp_path: Path) -> None:
    """The same run with the model as a catalog id, an inline HuggingFace config, the config's
    keys in place of the shape, and a config.json beside the file predicts the same."""
    from scalewall.validation.harness import predict_case
    from scalewall.validation.runs import read_runs

    shipped = next(c for c in read_runs() if c.id == "frontier_deepseek_v3_h800_2048")
    reference = predict_case(shipped).row["tokens_per_s"]
    raw = next(
        c for c in json.loads(frontier_runs_path().read_text())["cases"] if c["id"] == shipped.id
    )
    (tmp_path / "config.json").write_text(json.dumps(DEEPSEEK_V3_CONFIG))
    for model in (
        {"hf_config": DEEPSEEK_V3_CONFIG},
        dict(DEEPSEEK_V3_CONFIG),
        {"config_json": "config.json"},
    ):
        case = json.loads(json.dumps(raw)) | {"model": model}
        path = tmp_path / "runs.json"
        path.write_text(json.dumps({"format": "scalewall-runs/1", "cases": [case]}))
        runs = read_runs_file(path)
        assert not runs.errors
        predicted = predict_case(runs.cases[0]).row["tokens_per_s"]
        # The catalog shape ties nothing and counts the same layers: within 1%.
        assert predicted == pytest.approx(reference, rel=0.01)


def test_an_unreadable_config_json_is_that_cases_error(tmp_path: Path) -> None:

    raw = json.loads(frontier_runs_path().read_text())["cases"][0]
    case = raw | {"model": {"config_json": "missing.json"}}
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"format": "scalewall-runs/1", "cases": [case]}))
    runs = read_runs_file(path)
    assert len(runs.errors) == 1 and "config_json" in runs.errors[0].text


def test_no_mutated_case_escapes_as_an_exception(tmp_path: Path) -> None:
    """Cases with fields replaced by zeros, negatives, nulls, strings, lists or huge numbers
    are read and predicted or become error lines; none raises."""
    import random

    from scalewall.validation.harness import validate_cases as run

    cases = json.loads(frontier_runs_path().read_text())["cases"][:4]
    cases += json.loads(default_runs_path().read_text())["cases"][:4]
    values: list[Any] = [0, -1, None, "x", 1e30, 2.5, [], {}, True, 61]
    rng = random.Random(7)
    path = tmp_path / "runs.json"
    for _ in range(150):
        case = copy.deepcopy(rng.choice(cases))
        for _ in range(rng.randint(1, 3)):
            section = case[rng.choice(["model", "training", "plan", "hardware", "published"])]
            key = rng.choice(sorted(section))
            section[key] = rng.choice(values)
        path.write_text(json.dumps({"format": FORMAT, "cases": [case]}))
        runs = read_runs_file(path)
        report = run(runs.cases, read_errors=runs.errors)
        assert len(report.errors) + len({c.id for c in report.comparisons}) <= 1


def test_keys_the_format_does_not_define_are_warned_not_dropped_silently(tmp_path: Path) -> None:
    case = _dense()
    case["model"]["experts"] = 8
    case["plan"]["expert_parallel"] = 2
    runs = read_runs_file(_write(tmp_path, [case]))
    report = validate_cases(runs.cases)
    texts = [w.text for w in report.warnings]
    assert "model.experts is not a field of the runs format; not read" in texts
    assert "plan.expert_parallel is not a field of the runs format; not read" in texts


def test_a_non_finite_published_metric_is_that_cases_error(tmp_path: Path) -> None:
    case = _dense()
    case["published"]["mfu"] = float("nan")
    runs = read_runs_file(_write(tmp_path, [case]))
    assert not runs.cases
    assert "published.mfu=nan" in runs.errors[0].text


def test_an_open_data_parallel_width_fills_the_gpus(tmp_path: Path) -> None:
    stated = _dense()
    open_dp = copy.deepcopy(stated)
    open_dp["id"] = "open_dp"
    open_dp["plan"]["dp"] = None
    runs = read_runs_file(_write(tmp_path, [stated, open_dp]))
    report = validate_cases(runs.cases)
    assert not report.errors
    by_id: dict[str, list[float]] = {}
    for c in report.comparisons:
        by_id.setdefault(c.id, []).append(c.predicted)
    assert by_id["open_dp"] == by_id[stated["id"]]


def test_an_open_layout_is_searched_and_reported(tmp_path: Path) -> None:
    """A source that gives only the cluster and batch: tp, pp and cp (and an MoE model's ep)
    left open are taken from the plan search's best layouts, then every other open field as
    usual; the widths chosen are reported and the plan is at least as fast as the one the
    authors published (the search holds it among its candidates or beats it)."""
    stated = _raw(frontier_runs_path(), "frontier_mb2511_qwen3_30b_gb300_8_mxfp8")
    open_layout = copy.deepcopy(stated)
    open_layout["id"] = "open_layout"
    for key in ("tp", "pp", "cp", "ep", "dp", "vpp"):
        open_layout["plan"][key] = None
    runs = read_runs_file(_write(tmp_path, [stated, open_layout]))
    published, chosen = predict_cases(runs.cases)
    assert not isinstance(published, Exception) and not isinstance(chosen, Exception)
    assert {"tp", "pp", "cp", "ep"} <= set(chosen.chosen)
    assert chosen.fits
    # The search ranks layouts at the stated micro-batch (4): at another it would rank EP 4
    # first, which is 26% slower at 4.
    assert chosen.plan.micro_batch == 4
    assert chosen.row["tokens_per_s"] >= 0.98 * published.row["tokens_per_s"]
    # Held widths stay held: only pp open on a dense run keeps the stated tp and cp.
    dense = _dense()
    dense["plan"]["pp"] = None
    only_pp = predict_cases(read_runs_file(_write(tmp_path, [dense])).cases)[0]
    assert not isinstance(only_pp, Exception)
    assert (only_pp.plan.tp, only_pp.plan.cp) == (dense["plan"]["tp"], dense["plan"]["cp"])
    assert "pp" in only_pp.chosen and "ep" not in only_pp.chosen
    # No plan fits (DeepSeek-V3 on one node): the open widths stay at 1, and they are still
    # reported as the harness's choice beside the prediction that does not fit.
    crowded = copy.deepcopy(open_layout)
    crowded["id"] = "crowded"
    crowded["model"] = {"catalog": "deepseek-v3"}
    crowded["hardware"]["gpus"] = 8
    pred = predict_cases(read_runs_file(_write(tmp_path, [crowded])).cases)[0]
    assert not isinstance(pred, Exception)
    assert not pred.fits
    assert {k: pred.chosen[k] for k in ("tp", "pp", "cp", "ep")} == dict.fromkeys(
        ("tp", "pp", "cp", "ep"), 1
    )


def test_a_scaling_series_gets_one_choice_of_its_open_fields() -> None:
    """MegaScale's eight sizes (one model, stack and plan, grown in data parallelism) leave
    the micro-batch and schedule open: validate chooses them once for the series, where each
    size alone would pick its own (6 virtual stages at micro-batch 1 at 12,288 GPUs)."""
    cases = [c for c in read_runs(scaling_runs_path()) if c.group == "megascale"]
    assert len({series_key(c) for c in cases}) == 1
    preds = predict_cases(cases)
    chosen = [p.chosen for p in preds if not isinstance(p, Exception)]
    assert len(chosen) == len(cases)
    assert all(c == chosen[0] for c in chosen)
    alone = [predict_case(c).chosen for c in cases]
    assert any(a != chosen[0] for a in alone)
    assert all(p.fits for p in preds if not isinstance(p, Exception))


def test_cases_that_differ_beyond_size_choose_alone() -> None:
    """A different sequence length is another experiment, not a size of the same one: each
    case keeps its own choice, the one ``predict_case`` makes."""
    cases = [c for c in read_runs(scaling_runs_path()) if c.group == "megascale"][-2:]
    other = dataclasses.replace(cases[1], training=cases[1].training | {"seq_len": 4096})
    assert series_key(cases[0]) != series_key(other)
    for case, pred in zip([cases[0], other], predict_cases([cases[0], other]), strict=True):
        assert not isinstance(pred, Exception)
        assert pred.chosen == predict_case(case).chosen
        assert pred.row == predict_case(case).row


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("hardware", "nic_gbps", -1),
        ("hardware", "gpus_per_node", 0),
        ("model", "vocab", 0),
        ("plan", "cp", 0),
        ("hardware", "oversubscription_above_pod", 0.5),
    ],
)
def test_a_zero_or_negative_size_is_that_cases_error(
    tmp_path: Path, section: str, key: str, value: float
) -> None:
    case = _dense()
    case[section][key] = value
    runs = read_runs_file(_write(tmp_path, [case]))
    assert runs.cases == []
    assert len(runs.errors) == 1
    assert f"{section}.{key}={value}" in runs.errors[0].text
    assert not runs.errors[0].text.startswith(case["id"])


@pytest.mark.parametrize(
    ("words", "kind"),
    [
        ("InfiniBand", "infiniband"),
        ("8 x 400G NDR", "infiniband"),
        ("RoCEv2", "roce"),
        ("Ethernet", "roce"),
        ("Omni-Path", "omni-path"),
        ("AWS EFA", "roce"),
        ("Slingshot-11", "roce"),
        ("not stated", None),
        ("preface", None),
    ],
)
def test_a_transport_is_read_from_how_sources_write_it(words: str, kind: str | None) -> None:
    assert transport_kind(words) == kind


def test_a_transport_it_cannot_read_is_a_warning_and_the_default(tmp_path: Path) -> None:
    case = _dense()
    case["hardware"]["transport"] = "carrier pigeon"
    plain = _dense()
    plain["id"] = "plain"
    plain["hardware"]["transport"] = None
    runs = read_runs_file(_write(tmp_path, [case, plain]))
    report = validate_cases(runs.cases)
    assert [w.id for w in report.warnings] == [case["id"]]
    assert "carrier pigeon" in report.warnings[0].text
    by_id = {c.id: c.predicted for c in report.comparisons}
    assert by_id[case["id"]] == by_id["plain"]


@pytest.mark.parametrize(
    ("training", "message"),
    [
        (
            {"precision": "nvfp4"},
            "training.precision='nvfp4' is invalid; the a100-sxm-80gb has no FP4 tensor cores",
        ),
        (
            {"precision": "fp8", "fp8_recipe": "nvfp4"},
            "training.precision='nvfp4' is invalid; the a100-sxm-80gb has no FP4 tensor cores",
        ),
        ({"precision": "fp8"}, "the a100-sxm-80gb has no FP8 tensor cores: bf16 or fp16"),
        (
            {"precision": "fp8", "fp8_recipe": "fp4"},
            "training.fp8_recipe='fp4' is invalid; one of per-tensor, blockwise, mxfp8, nvfp4",
        ),
        ({"precision": "int8"}, "training.precision='int8' is invalid; one of bf16"),
    ],
)
def test_a_precision_the_accelerator_cannot_run_is_that_cases_error(
    tmp_path: Path, training: dict[str, str], message: str
) -> None:
    """A run stated in NVFP4 or FP8 on an A100, or in a recipe the model does not know, is one
    error line naming what would be valid, not a prediction at the BF16 rate."""
    case = _dense()
    case["training"] |= training
    runs = read_runs_file(_write(tmp_path, [case, _moe()]))
    report = validate_cases(runs.cases, read_errors=runs.errors)
    assert {c.id for c in report.comparisons} == {_moe()["id"]}
    (error,) = report.errors
    assert message in error.text and "\n" not in error.text


def test_a_run_that_published_a_throughput_counts_as_fitting() -> None:
    """A measured time or throughput means the configuration ran: the report holds it as a
    published fit, so a plan predicted not to fit is a mismatch even where the source never
    says "fits"; a case with only memory figures states nothing."""
    from scalewall.validation.harness import ran_fit

    assert ran_fit({"tokens_per_s": 1.0}) is True
    assert ran_fit({"step_time_s": 2.0, "fits": False}) is False
    assert ran_fit({"memory_gib": {"activations": 3.0}}) is None
    runs = read_runs_file()
    case = next(c for c in runs.cases if c.id == "vtrain_multi_000")
    report = validate_cases([case])
    assert report.fits[case.id] == (True, True)
    # The same run at 512 sequences per micro-batch cannot fit: reported, not silently compared.
    huge = dataclasses.replace(
        case,
        training={**case.training, "micro_batch": 512, "global_batch": 512 * 64},
        plan={**case.plan, "recompute": "none"},
    )
    assert validate_cases([huge]).fit_mismatches == [case.id]


def test_an_open_micro_batch_without_a_pipeline_tries_every_divisor(tmp_path: Path) -> None:
    """LLM Foundry's MPT-125M row on 16 A100 40GB ran 26 sequences per micro-batch, its whole
    per-replica batch. Left open, the micro-batch may take 13 or 26 (divisors of 26), not only
    the power-of-two candidates, of which only 1 and 2 divide 26; under a pipeline it keeps
    the candidates (a 52-sequence replica then runs 1, 2 or 4, never 13 or 26)."""
    open_mb = _raw(fsdp_a100_runs_path(), "llmfoundry_a10040_mpt125m_s2048_16gpu")
    open_mb["training"]["micro_batch"] = None
    piped = copy.deepcopy(open_mb) | {"id": "piped"}
    piped["plan"] |= {"pp": 2, "dp": 8}
    runs = read_runs_file(_write(tmp_path, [open_mb, piped]))
    flat, pipelined = (predict_case(c) for c in runs.cases)
    assert flat.chosen["micro_batch"] in (13, 26)
    assert abs(compare(flat)[0].error_frac) < 0.1
    assert pipelined.chosen["micro_batch"] in (1, 2, 4)


def test_an_open_recompute_takes_the_stacks_usual_mode(tmp_path: Path) -> None:
    """vTrain's Megatron-DeepSpeed runs all checkpoint whole layers, as every published run of
    that stack does: left open, recompute is full there (and predicts what the stated full
    does), where a stack without such a convention takes the fastest plan that fits."""
    stated = _raw(default_runs_path(), "vtrain_multi_022")
    assert stated["plan"]["recompute"] == "full"
    open_rc = copy.deepcopy(stated) | {"id": "open_rc"}
    open_rc["plan"]["recompute"] = None
    other = copy.deepcopy(open_rc) | {"id": "other_stack"}
    other["plan"]["stack"] = "megatron-core"
    runs = read_runs_file(_write(tmp_path, [stated, open_rc, other]))
    first, usual, fastest = (predict_case(c) for c in runs.cases)
    assert usual.chosen["recompute"] == "full"
    assert usual.row["step_time_s"] == first.row["step_time_s"]
    assert fastest.chosen["recompute"] != "full"


def test_a_series_without_a_pipeline_tunes_an_open_micro_batch_in_every_case() -> None:
    """LLM Foundry's MPT-1B series on 8 to 512 H100 with the micro-batch left open: without a
    pipeline each case's candidates are the divisors of its own per-replica batch, so the
    series shares no micro-batch but 1 and 2, and shared, every row came out 37% slow. Each
    case now takes its own, within 7% of the published throughput; MegaScale's pipelined
    series still shares one (``test_scaling_runs``)."""
    prefix = "llmfoundry_h100_mpt1b_s2048_"
    cases = [c for c in read_runs(fsdp_runs_path()) if c.id.startswith(prefix)]
    assert len(cases) == 7
    opened = [dataclasses.replace(c, training={**c.training, "micro_batch": None}) for c in cases]
    assert len({series_key(c) for c in opened}) < len(opened)  # series to choose jointly
    preds = predict_cases(opened)
    chosen = set()
    for case, pred in zip(cases, preds, strict=True):
        assert not isinstance(pred, Exception)
        metric = "tokens_per_s" if "tokens_per_s" in case.published else "mfu"
        assert pred.row[metric] / case.published[metric] - 1.0 == pytest.approx(0.0, abs=0.07)
        chosen.add(pred.chosen["micro_batch"])
    assert len(chosen) > 2
