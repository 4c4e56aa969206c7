"""scalewall calibrate from the command line: profile written, one-line errors, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

DATA = Path(__file__).parents[1] / "data" / "probe"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    code = "from scalewall.cli.app import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False
    )


def test_calibrate_nccl_log_writes_profile_used_by_estimate(
    tmp_path: Path, check_schema: Callable[[Any, str], None]
) -> None:
    out = tmp_path / "cal.toml"
    result = cli("calibrate", str(DATA / "all_reduce_perf_8xh100.txt"), "-o", str(out), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    check_schema(data, "calibration-fit")
    assert data["fitted"] and out.exists()
    est = cli(
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
        "--calibration",
        str(out),
        "--json",
    )
    assert est.returncode == 0, est.stderr
    got = json.loads(est.stdout)
    check_schema(got, "estimate")
    low, high = got["step_time_interval_s"]
    assert low < got["step_time_s"] < high
    assert got["tokens_per_s_interval"][0] < got["tokens_per_s"]


def test_malformed_measurements_file_is_one_line_exit_2() -> None:
    result = cli("calibrate", str(DATA / "bad_negative_time_line3.jsonl"))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "bad_negative_time_line3.jsonl:3" in lines[0]


def test_malformed_profile_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("x = [\n")
    result = cli("estimate", "--calibration", str(bad))
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
