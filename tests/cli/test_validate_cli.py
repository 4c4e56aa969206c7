"""``scalewall validate --cases F``: one error line per case it cannot model, never a
traceback; exit 2 only for a file it cannot read."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scalewall.validation.runs import FORMAT, frontier_runs_path


def _cases() -> list[dict[str, Any]]:
    cases = json.loads(frontier_runs_path().read_text())["cases"]
    good = copy.deepcopy(
        next(c for c in cases if c["id"] == "frontier_mb2511_qwen3_30b_h100_16_fp8")
    )
    bad = copy.deepcopy(good)
    bad["id"] = "moe_ep_7"
    bad["plan"]["ep"] = 7
    return [good, bad]


def test_validate_file_with_a_bad_case(tmp_path: Path, run_cli: Callable[..., Any]) -> None:
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"format": FORMAT, "cases": _cases()}))
    result = run_cli("validate", "--cases", str(path))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    errors = [line for line in result.stdout.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith("error: moe_ep_7: ")
    assert "1 cases compared" in result.stdout and "1 errors" in result.stdout


def test_validate_json_has_errors_and_stacks(tmp_path: Path, run_cli: Callable[..., Any]) -> None:
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"format": FORMAT, "cases": _cases()}))
    result = run_cli("validate", "--cases", str(path), "--json")
    assert result.returncode == 0
    data = json.loads(result.stdout)
    assert [e["id"] for e in data["errors"]] == ["moe_ep_7"]
    good = _cases()[0]["id"]
    assert data["stacks"][good] == data["cases"][0]["stack"] != ""


def test_validate_non_json_file_exits_2(tmp_path: Path, run_cli: Callable[..., Any]) -> None:
    path = tmp_path / "runs.json"
    path.write_text("this is not JSON\n")
    result = run_cli("validate", "--cases", str(path))
    assert result.returncode == 2
    assert "Traceback" not in result.stdout + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "not valid JSON" in result.stderr


def _small_runs(tmp_path: Path) -> Path:
    """The Llama 3 and Megatron-Core H100 runs of the shipped file: two groups, 12 runs."""
    from scalewall.validation.runs import default_runs_path

    cases = json.loads(default_runs_path().read_text())["cases"]
    keep = [c for c in cases if c["id"].startswith(("llama3", "megatron_core_h100"))]
    path = tmp_path / "small.json"
    path.write_text(json.dumps({"format": FORMAT, "cases": keep}))
    return path


def test_validate_cv_json_has_both_errors(
    tmp_path: Path, run_cli: Callable[..., Any], check_schema: Callable[[Any, str], None]
) -> None:
    path = _small_runs(tmp_path)
    errors = tmp_path / "errors.json"
    result = run_cli(
        "validate", "--cases", str(path), "--cv", "source", "--json", "--write-errors", str(errors)
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    check_schema(data, "cross-validation")
    assert set(data["groups"]) == {"llama3", "megatron_core_h100"}
    for g in data["groups"].values():
        assert {"in_sample_mape", "out_of_sample_mape", "defaults_mape"} <= set(g)
    assert data["overall"]["metrics"] > 0
    written = json.loads(errors.read_text())
    assert set(written["groups"]) == {"llama3", "megatron_core_h100"}


def test_validate_unknown_holdout_is_one_line(tmp_path: Path, run_cli: Callable[..., Any]) -> None:
    result = run_cli("validate", "--cases", str(_small_runs(tmp_path)), "--holdout", "nope")
    assert result.returncode == 2
    assert "holdout" in result.stderr and "Traceback" not in result.stderr


def test_validate_with_a_calibration(tmp_path: Path, run_cli: Callable[..., Any]) -> None:
    from scalewall.calibrate.published import shipped_profile_path

    path = _small_runs(tmp_path)
    result = run_cli(
        "validate", "--cases", str(path), "--calibration", str(shipped_profile_path()), "--json"
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data["defaults_groups"]) == set(data["groups"]) == {"llama3", "megatron_core_h100"}
    # The shipped profile's H100 clock differs from the catalog's: the predictions move.
    assert data["groups"]["llama3"]["mape"] != data["defaults_groups"]["llama3"]["mape"]


def test_validate_held_out_reads_the_unfitted_files(run_cli: Callable[..., Any]) -> None:
    """``--held-out`` predicts the shipped files no constant is fitted to, one group per
    source, and refuses to be combined with a file of its own or with cross-validation."""
    result = run_cli("validate", "--held-out", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert not data["errors"]
    groups = set(data["groups"])
    assert {"torchtitan", "automodel", "nemomoe", "mcore", "nanotron"} <= groups
    assert not groups & {"megatron_sc21", "llama3", "mbtables"}
    for extra in (["--cases", "x.json"], ["--cv", "source"]):
        bad = run_cli("validate", "--held-out", *extra)
        assert bad.returncode == 2 and "--held-out" in bad.stderr
