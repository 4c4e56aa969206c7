"""Widths a source leaves open while it states others: the validator's layout search holds
every stated width (dp and vpp included), and an open batch is made of the stated
micro-batch, so a statement that names only some fields is predicted, not refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scalewall.validation.harness import compare, predict_case
from scalewall.validation.runs import _data_path, read_runs


def _case(file: str, case_id: str) -> dict[str, Any]:
    data = json.loads(_data_path(file).read_text())
    case: dict[str, Any] = next(c for c in data["cases"] if c["id"] == case_id)
    return case


def _predict(tmp_path: Path, case: dict[str, Any]):  # type: ignore[no-untyped-def]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"format": "scalewall-runs/1", "cases": [case]}))
    return predict_case(read_runs(path)[0])


@pytest.mark.parametrize(
    ("file", "case_id"),
    [
        # NeMo 25.02's Llama 3 405B on 128 B200: dp 2, cp 2 and vpp 8 stated, tp and pp open.
        ("nemo_tables_runs.json", "nemo2502_llama3_405b_b200_128_fp8cs"),
        # torchtitan's interleaved 405B row: dp 8 and vpp 2 stated, tp and pp open.
        ("torchtitan_runs.json", "torchtitan_h100_llama3.1-405b_3d_interleaved_512gpu"),
    ],
)
def test_stated_dp_and_vpp_hold_when_tp_and_pp_are_open(
    tmp_path: Path, file: str, case_id: str
) -> None:
    case = _case(file, case_id)
    stated = dict(case["plan"])
    case["plan"] = {**stated, "tp": None, "pp": None}
    pred = _predict(tmp_path, case)
    assert pred.plan.dp == stated["dp"] and pred.plan.vpp == stated["vpp"]
    assert pred.plan.pp > 1 and "tp" in pred.chosen and "pp" in pred.chosen


def test_an_open_batch_is_made_of_the_stated_micro_batch(tmp_path: Path) -> None:
    # LLM Foundry's MPT-30B on 8 A100 at micro-batch 3, its global batch left open.
    case = _case("fsdp_a100_runs.json", "llmfoundry_a10080_mpt30b_s2048_8gpu")
    case["training"] = {**case["training"], "global_batch": None}
    pred = _predict(tmp_path, case)
    assert pred.plan.micro_batch == 3
    assert pred.plan.global_batch % (3 * pred.plan.dp) == 0
    assert compare(pred)


def test_the_one_open_width_is_what_the_stated_ones_leave(tmp_path: Path) -> None:
    # nanotron's Llama 8B on 16 nodes with DP 8 and PP 1 stated and TP left open: 128 GPUs
    # leave TP 16, across two 8-GPU nodes as the run had it (a search would stop at 8).
    case = _case("nanotron_playbook_runs.json", "nanotron_usp_8b_16n_dp8_tp16_mbs4_z0")
    case["plan"] = {**case["plan"], "tp": None}
    pred = _predict(tmp_path, case)
    assert pred.plan.tp == 16 and pred.plan.dp == 8


def test_an_open_pipeline_is_one_the_stated_interleaving_fits(tmp_path: Path) -> None:
    # Qwen3-235B (94 layers) on 256 B300 with VP 4 stated and tp, pp, ep and the micro-batch
    # open: two stages of 47 layers cannot interleave 4 ways, so the search may not offer them.
    case = _case("megatron_bridge_tables_runs.json", "mbtables_mb2602_qwen3_235b_b300_256_mxfp8")
    case["plan"] = {**case["plan"], "tp": None, "pp": None, "ep": None}
    case["training"] = {**case["training"], "micro_batch": None}
    pred = _predict(tmp_path, case)
    assert pred.plan.vpp == 4 and pred.plan.pp > 2


def test_a_gpu_named_alone_runs_in_its_systems_nvlink_domain(tmp_path: Path) -> None:
    # A GB200 run stated as {"gpu": "gb200", "gpus": 256}: the GB200 NVL72 rack's 72-GPU
    # NVLink domain, not its 4-GPU tray (which made DeepSeek-V3's EP 32 cross the network,
    # -63%); a node of another size stated keeps its own domain.
    from scalewall.validation.runs import case_cluster

    assert case_cluster({"gpu": "gb200", "gpus": 256}).system.scale_up_domain_gpus == 72
    assert (
        case_cluster({"gpu": "gb200", "gpus": 256, "gpus_per_node": 8}).system.scale_up_domain_gpus
        == 8
    )
    case = _case("frontier_runs.json", "frontier_mb2511_dsv3_gb200_256_bf16")
    stated = _predict(tmp_path, case)
    case["hardware"] = {"gpu": "gb200", "gpus": 256}
    bare = _predict(tmp_path, case)
    assert bare.row["tokens_per_s"] == pytest.approx(stated.row["tokens_per_s"], rel=0.02)


def test_an_open_layout_keeps_the_stated_local_batch_whole(tmp_path: Path) -> None:
    # torchtitan's Llama 3.1 405B at 128K tokens on 512 H100: global batch 16 and local batch
    # 8 stated, every width open. A replica runs 8 sequences per call, so the layout keeps at
    # most 2 replicas; a search blind to it took dp 8 and the case was an error.
    from scalewall.validation.harness import _local_batch_dps

    case = _case("torchtitan_runs.json", "torchtitan_h100_llama3.1-405b_4d_cp4_128k")
    case["plan"] = {
        k: (None if k in ("tp", "pp", "dp", "cp", "vpp") else v) for k, v in case["plan"].items()
    }
    pred = _predict(tmp_path, case)
    assert pred.plan.global_batch // pred.plan.dp % 8 == 0
    assert compare(pred)
    assert _local_batch_dps(read_runs(tmp_path / "runs.json")[0]) == (1, 2)


def test_an_open_batch_is_made_of_the_stated_local_batch(tmp_path: Path) -> None:
    # torchtitan's Llama 3.1 70B on 256 H100 with local batch 16 stated and the global batch
    # and micro-batch open: each replica's share is whole local batches (it was 1 sequence).
    case = _case("torchtitan_runs.json", "torchtitan_h100_llama3.1-70b_2d_256gpu")
    case["training"] = {**case["training"], "global_batch": None, "micro_batch": None}
    pred = _predict(tmp_path, case)
    assert pred.plan.global_batch // pred.plan.dp % 16 == 0
    assert compare(pred)
