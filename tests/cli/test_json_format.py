"""Every ``--json`` document says what it is (``"format": "scalewall-<kind>/1"`` first) and
validates against the schema that ships for its kind."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from scalewall.schemas import KINDS, OUTPUT_KINDS, schema
from scalewall.validation.runs import frontier_runs_path, shipped_runs_paths

CASES = {
    "catalog": ["catalog"],
    "catalog-entry": ["catalog", "models", "llama3-8b"],
    "cost": ["cost"],
    "prices": ["cost", "--list-prices"],
    "search": ["search", "--model", "llama3-8b", "--gpus", "64"],
    "wall": ["wall", "--model", "llama3-8b", "--sizes", "64", "--workers", "1", "--fresh"],
    "goodput": ["goodput", "--model", "llama3-8b", "--gpus", "64", "--tp", "2", "--pp", "2"],
    "simulate": ["simulate", "--trace", "synthetic:Seren:30"],
    "fgd": ["fgd", "--seeds", "1", "--policies", "random", "--max-demand", "0.05", "--at", "0.05"],
    "report": ["report", "--model", "llama3-8b", "--cluster", "h100-sxm-80gb:64", "-o", "r.html"],
    "estimate": ["estimate", "--model", "llama3-8b", "--gpus", "64", "--gpu", "h100-sxm-80gb"],
    "validation": ["validate", "--cases", "SMALL_RUNS"],
    # one point, one plan shape, in this process: the document, not the search, is checked
    "explore": [
        "explore",
        "-o",
        "ds",
        "--models",
        "megatron-1.7b",
        "--sizes",
        "8",
        "--tp",
        "1",
        "--pp",
        "1",
        "--max-micro-batch",
        "1",
        "--workers",
        "1",
    ],
}


# Kinds whose run is slow enough to share the command its own test already runs.
CHECKED_ELSEWHERE = {
    "cross-validation": "tests/cli/test_validate_cli.py",
    "calibration-fit": "tests/cli/test_calibrate_cli.py",
    "fit": "tests/cli/test_fit_cli.py",
}


def test_every_output_kind_is_checked() -> None:
    assert set(CASES) | set(CHECKED_ELSEWHERE) == set(OUTPUT_KINDS)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_schemas_are_valid_draft_2020_12(kind: str) -> None:
    jsonschema.Draft202012Validator.check_schema(schema(kind))


@pytest.mark.parametrize("kind", sorted(CASES))
def test_json_names_its_format_and_matches_its_schema(
    kind: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    run_cli: Callable[..., Any],
    check_schema: Callable[[Any, str], None],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    args = list(CASES[kind])
    if "SMALL_RUNS" in args:
        runs = json.loads(frontier_runs_path().read_text())
        small = tmp_path / "runs.json"
        small.write_text(json.dumps({"format": runs["format"], "cases": runs["cases"][:2]}))
        args[args.index("SMALL_RUNS")] = str(small)
    result = run_cli(*args, "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert next(iter(doc.items())) == ("format", f"scalewall-{kind}/1")
    check_schema(doc, kind)


def test_a_renamed_or_missing_key_fails_its_schema(
    run_cli: Callable[..., Any], check_schema: Callable[[Any, str], None]
) -> None:
    result = run_cli(*CASES["estimate"], "--json")
    doc = json.loads(result.stdout)
    check_schema(doc, "estimate")
    renamed = {("memory" if k == "memory_bytes" else k): v for k, v in doc.items()}
    with pytest.raises(jsonschema.ValidationError):
        check_schema(renamed, "estimate")
    del doc["step_time_s"]
    with pytest.raises(jsonschema.ValidationError):
        check_schema(doc, "estimate")


def test_shipped_runs_files_match_the_runs_schema(check_schema: Callable[[Any, str], None]) -> None:
    for path in shipped_runs_paths():
        check_schema(json.loads(path.read_text()), "runs")


def test_readme_scenario_matches_the_scenario_schema(
    check_schema: Callable[[Any, str], None],
) -> None:
    """The scenario TOML block of the README parses to an object the schema accepts."""
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", readme, flags=re.S)
    scenarios = [tomllib.loads(b) for b in blocks if "[[options]]" in b]
    assert scenarios
    for doc in scenarios:
        check_schema(doc, "scenario")
    with pytest.raises(jsonschema.ValidationError):
        check_schema({**scenarios[0], "facility": "rented"}, "scenario")
