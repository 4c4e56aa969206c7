"""``scalewall goodput``: JSON keys, and bad inputs give one stderr line and exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

JOB = ["goodput", "--model", "llama3-70b", "--gpu", "h100-sxm-80gb", "--gpus", "1024", "--pp", "4"]
JSON_KEYS = {
    "mttf_s",
    "interruptions_per_day",
    "checkpoint_write_s",
    "optimal_interval_s",
    "goodput_frac",
    "goodput_ci",
    "lost_gpu_hours_per_day",
}


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    code = "from scalewall.cli.app import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False
    )


def test_json_has_the_documented_keys() -> None:
    result = run_cli(*JOB, "--mc-runs", "300", "--what-if", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) >= JSON_KEYS
    low, high = data["goodput_ci"]
    assert low <= data["goodput_mc_frac"] <= high
    assert 0 < data["goodput_frac"] < 1
    assert set(data["what_if"]) == {"failure_rate", "checkpoint_bandwidth", "spare_nodes"}


@pytest.mark.parametrize(
    ("extra", "word"),
    [
        (["--storage", "tape"], "tape"),
        (["--interval", "1e9"], "interval_s"),
        (["--interval", "soon"], "interval"),
        (["--failure-rates", "nope"], "nope"),
        (["--spare-nodes", "-3"], "spare_nodes"),
    ],
)
def test_bad_input_one_line_exit_2(extra: list[str], word: str) -> None:
    result = run_cli(*JOB, "--mc-runs", "0", *extra)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert word in result.stderr and "Traceback" not in result.stderr
