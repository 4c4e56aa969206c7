"""estimate / validate from the command line: JSON keys, one-line errors, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    code = "from scalewall.cli.app import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False
    )


def test_estimate_json_keys() -> None:
    result = cli(
        "estimate",
        "--model",
        "llama3-8b",
        "--gpu",
        "h100-sxm-80gb",
        "--gpus",
        "64",
        "--tp",
        "2",
        "--pp",
        "1",
        "--global-batch",
        "256",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    for key in (
        "step_time_s",
        "tokens_per_s",
        "mfu",
        "hfu",
        "model_tflops_per_gpu",
        "hardware_tflops_per_gpu",
        "fits",
        "memory_bytes",
        "breakdown_s",
    ):
        assert key in data
    assert data["plan"]["dp"] == 32
    assert abs(sum(data["breakdown_s"].values()) - data["step_time_s"]) < 1e-9


def test_hf_config_and_inline_model(tmp_path: Path) -> None:
    cfg = {
        "hidden_size": 2048,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "num_hidden_layers": 16,
        "intermediate_size": 8192,
        "vocab_size": 32000,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-5,
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    for spec in (
        str(path),
        "custom:layers=16,hidden=2048,heads=16,kv_heads=8,ffn_hidden=8192,vocab=32000",
    ):
        result = cli(
            "estimate",
            "--model",
            spec,
            "--gpu",
            "a100-sxm-80gb",
            "--gpus",
            "8",
            "--tp",
            "1",
            "--pp",
            "1",
            "--global-batch",
            "64",
            "--seq-len",
            "2048",
            "--json",
        )
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["fits"] is True


def test_invalid_plans_are_one_line_exit_2() -> None:
    cases = [
        (["--tp", "3"], "tp=3"),
        (["--tp", "8", "--pp", "4", "--dp", "5"], "dp=5"),
        (["--micro-batch", "3"], "micro_batch=3"),
        (["--gpu", "h1000", "--gpus", "8"], "gpu"),
        (["--recompute", "sometimes"], "recompute"),
        (["--cuda-graphs", "most"], "cuda_graphs='most'"),
    ]
    for extra, needle in cases:
        result = cli("estimate", *extra)
        assert result.returncode == 2, (extra, result.stderr)
        assert needle in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
        assert "Traceback" not in result.stderr


def test_cuda_graphs_remove_the_host_issue_time() -> None:
    """DeepSeek-V3 on 256 B200, EP 8 (32 local experts per GPU), one 4K sequence per
    micro-batch: eager issue of the expert GEMMs outlasts their GPU work (several percent of
    the step); full-iteration graphs remove that part of the step."""
    args = [
        "estimate",
        "-m",
        "deepseek-v3",
        "--gpu",
        "b200",
        "--gpus",
        "256",
        "--tp",
        "1",
        "--pp",
        "16",
        "--ep",
        "8",
        "--first-stage-layers",
        "4",
        "--last-stage-layers",
        "1",
        "--precision",
        "mxfp8",
        "--global-batch",
        "4096",
        "--seq-len",
        "4096",
        "--json",
    ]
    eager = json.loads(cli(*args).stdout)
    graphed = json.loads(cli(*args, "--cuda-graphs", "full").stdout)
    assert eager["breakdown_s"]["host_overhead"] > 0.05 * eager["step_time_s"]
    assert graphed["breakdown_s"]["host_overhead"] == 0.0
    assert graphed["tokens_per_s"] > eager["tokens_per_s"]


def test_validate_json_shape() -> None:
    result = cli("validate", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    first = data["cases"][0]
    assert set(first) >= {"id", "metric", "published", "predicted", "error_frac", "chosen"}
    assert "vtrain_multi" in data["groups"]


def test_validate_rejects_unknown_format(tmp_path: Path) -> None:
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"format": "other/2", "cases": []}))
    result = cli("validate", "--cases", str(path))
    assert result.returncode == 2
    assert "format" in result.stderr


def test_estimate_json_has_an_interval_without_calibration() -> None:
    result = cli(
        "estimate",
        "--model",
        "llama3-8b",
        "--gpu",
        "h100-sxm-80gb",
        "--gpus",
        "64",
        "--tp",
        "2",
        "--pp",
        "1",
        "--global-batch",
        "256",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    low, high = data["step_time_interval_s"]
    assert 0 < low < high
    assert data["interval_level"] == 0.9
    assert "out-of-sample errors of validation group" in data["interval_basis"]


def test_the_cli_and_the_api_give_the_same_estimate() -> None:
    """The README's question asked both ways (default stack, default sharding): one answer."""
    from scalewall.api import estimate
    from scalewall.cluster import resolve_cluster
    from scalewall.plan.plan import ParallelPlan

    result = cli(
        "estimate",
        "--model",
        "llama3-70b",
        "--gpu",
        "h100-sxm-80gb",
        "--gpus",
        "1024",
        "--tp",
        "8",
        "--pp",
        "4",
        "--vpp",
        "5",
        "--micro-batch",
        "1",
        "--global-batch",
        "512",
        "--seq-len",
        "8192",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    plan = ParallelPlan(tp=8, pp=4, vpp=5, dp=32, micro_batch=1, global_batch=512, seq_len=8192)
    api = estimate("llama3-70b", resolve_cluster(gpu="h100-sxm-80gb", gpus=1024), plan)
    assert data["step_time_s"] == api.step_time_s
    assert data["memory_total_bytes"] == api.memory_total_bytes
    assert data["stack"] == api.stack == "megatron-core"


def test_a_stack_that_balances_its_pipeline_lays_out_an_open_split_in_both_ways() -> None:
    """nanotron balances its stages by compute (the output layer counts), so Llama 3.1 8B on
    two stages runs 18 and 14 layers; the CLI and the API both lay it out so when the split is
    left open, and both keep a split the question gives."""
    import scalewall

    args = ("estimate", "--model", "llama3.1-8b", "--stack", "nanotron", "--gpus", "8")
    args += ("--tp", "1", "--pp", "2", "--json")
    result = cli(*args)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    api = scalewall.estimate("llama3.1-8b", gpus=8, plan={"tp": 1, "pp": 2}, stack="nanotron")
    assert (data["plan"]["first_stage_layers"], data["plan"]["last_stage_layers"]) == (18, 14)
    assert (api.plan.first_stage_layers, api.plan.last_stage_layers) == (18, 14)
    assert data["step_time_s"] == api.step_time_s
    even = json.loads(cli(*args, "--first-stage-layers", "0").stdout)
    assert even["plan"]["first_stage_layers"] == 0
    assert even["step_time_s"] < data["step_time_s"]
