"""Scenario files: the documented format loads; every mistake is one line naming file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from scalewall.errors import ScalewallError, SpecError
from scalewall.report import Scenario, load_scenario
from scalewall.units import DAY_S

GOOD = """
title = "two options"
model = "llama3-70b"
token_budget = 1e12
target_days = 30
sizes = [64, 512]
growth = [64, 512]
[[options]]
name = "small"
cluster = "dgx-h100-superpod-1024"
gpus = 64
[[options]]
gpu = "h100-sxm-80gb"
gpus = 512
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenario.toml"
    path.write_text(text)
    return path


def test_documented_format_loads(tmp_path: Path) -> None:
    sc = load_scenario(_write(tmp_path, GOOD))
    assert sc.model == "llama3-70b"
    assert sc.target_s == 30 * DAY_S
    assert [o.gpus for o in sc.options] == [64, 512]
    assert sc.options[1].gpu == "h100-sxm-80gb" and sc.options[1].cluster is None
    assert sc.largest.gpus == 512
    assert sc.source.endswith("scenario.toml")


def test_a_scenario_names_its_stack(tmp_path: Path) -> None:
    text = GOOD.replace(
        'model = "llama3-70b"',
        'model = "llama3-70b"\nstack = "fsdp"\nstack_overrides = { grad_reduce_bytes = 2.0 }',
    )
    sc = load_scenario(_write(tmp_path, text))
    assert sc.stack == "fsdp" and sc.stack_overrides == {"grad_reduce_bytes": 2.0}


def test_default_scenario_is_512_against_16384_h100() -> None:
    sc = Scenario()
    assert [o.gpus for o in sc.options] == [512, 16384]
    assert sc.model == "llama3-70b"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("model = 'x'\n", "options"),
        (GOOD + "colour = 'red'\n", "colour='red' is invalid; unknown key"),
        (GOOD.replace("gpus = 64", "gpus = 'many'"), "gpus='many'"),
        (GOOD.replace("gpus = 64", "gpus = 0"), "gpus=0"),
        (GOOD.replace('cluster = "dgx-h100-superpod-1024"\n', ""), "cluster=None"),
        (GOOD.replace("token_budget = 1e12", "token_budget = -1"), "token_budget=-1"),
        (GOOD + "facility = 'moon'\n", "facility='moon'"),
        ("[[options]\n", "not valid TOML"),
        (GOOD.replace('model = "llama3-70b"', 'model = "llama3-70b"\nstack = "nope"'), "stack"),
        (
            GOOD.replace(
                'model = "llama3-70b"',
                'model = "llama3-70b"\nstack_overrides = { tp_comm_overlap_frac = 2.0 }',
            ),
            "tp_comm_overlap_frac",
        ),
    ],
)
def test_mistakes_are_one_line_errors(tmp_path: Path, text: str, match: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ScalewallError, match=match) as info:
        load_scenario(path)
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ScalewallError, match="cannot read"):
        load_scenario(tmp_path / "nope.toml")


def test_option_with_cluster_and_gpu_is_rejected(tmp_path: Path) -> None:
    text = GOOD.replace('gpu = "h100-sxm-80gb"', 'gpu = "h100-sxm-80gb"\ncluster = "h100-16k-ndr"')
    with pytest.raises(SpecError, match="either cluster or gpu"):
        load_scenario(_write(tmp_path, text))
