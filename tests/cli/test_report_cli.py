"""``scalewall report``: writes one HTML file and prints the summary; --json; one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scalewall.cli.report_cmd import parse_option
from scalewall.errors import SpecError

SCENARIO = """
model = "llama3-8b"
candidate_models = ["llama3-8b"]
sizes = [64, 256]
growth = [64, 256]
token_budget = 1e12
sched_jobs = 100
[[options]]
name = "64 GPUs"
cluster = "dgx-h100-superpod-1024"
gpus = 64
[[options]]
name = "256 GPUs"
gpu = "h100-sxm-80gb"
gpus = 256
"""


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    return path


def test_report_writes_html_and_prints_summary(
    run_cli: Any, scenario: Path, tmp_path: Path
) -> None:
    out = tmp_path / "r.html"
    result = run_cli("report", "--scenario", str(scenario), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert "64 GPUs" in result.stdout and "256 GPUs" in result.stdout
    assert str(out) in result.stdout


def test_json_carries_the_page_content(run_cli: Any, scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = run_cli("report", "-s", str(scenario), "-o", str(out), "--json", "--lang", "zh")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["lang"] == "zh" and doc["html"] == str(out)
    assert doc["comparison"]["columns"][1:] == ["64 GPUs", "256 GPUs"]
    assert doc["data"]["options"][1]["gpus"] == 256
    assert 1 <= len(doc["verdict"]) <= 5
    decision = doc["decision"]
    assert decision["choice"]["name"] in ("64 GPUs", "256 GPUs")
    assert [o["feasible"] for o in decision["options"]] == [
        o["calendar_s"] <= decision["target_s"] for o in decision["options"]
    ]
    assert decision["breakeven"]["big"] == "256 GPUs" and decision["breakeven"]["model"]["kind"]
    page = out.read_text()
    for row in doc["comparison"]["rows"]:
        assert row[0] in page


def test_cluster_option_overrides_the_scenario(
    run_cli: Any, scenario: Path, tmp_path: Path
) -> None:
    result = run_cli(
        "report", "-s", str(scenario), "-c", "h100-16k-ndr:128", "-o", str(tmp_path / "r.html"),
        "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert [o["gpus"] for o in json.loads(result.stdout)["data"]["options"]] == [128]


def test_parse_option() -> None:
    assert parse_option("h100-16k-ndr:512").cluster == "h100-16k-ndr"
    assert parse_option("h100-sxm-80gb:64").gpu == "h100-sxm-80gb"
    with pytest.raises(SpecError, match="CLUSTER:GPUS"):
        parse_option("h100-16k-ndr")


@pytest.mark.parametrize(
    ("text", "field"),
    [("[[options]]\ngpus = 'x'\n", "gpus='x'"), ("nonsense = 1\n", "nonsense=1"), ("[x\n", "TOML")],
)
def test_bad_scenario_is_one_line_exit_2(
    run_cli: Any, tmp_path: Path, text: str, field: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    result = run_cli("report", "-s", str(path), "-o", str(tmp_path / "r.html"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and field in result.stderr
    assert str(path) in result.stderr
    assert not (tmp_path / "r.html").exists()


def test_missing_scenario_and_bad_lang_exit_2(run_cli: Any, tmp_path: Path) -> None:
    result = run_cli("report", "-s", str(tmp_path / "none.toml"))
    assert result.returncode == 2 and "cannot read" in result.stderr
    result = run_cli("report", "--lang", "fr")
    assert result.returncode == 2 and "lang='fr'" in result.stderr
    result = run_cli("report", "--value-of-time", "-5", "-o", str(tmp_path / "r.html"))
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "value_of_time_usd_per_day=-5.0" in result.stderr
