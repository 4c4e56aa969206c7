"""``scalewall wall``: table with the knee, JSON, CSV, HTML plot, rerun reuse, errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from scalewall.cli.app import main


def run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["scalewall", *args])
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    flat = out.out if out.out.lstrip().startswith("{") else " ".join(out.out.split())
    return code, flat, out.err


def small(tmp_path: Path) -> tuple[str, ...]:
    return (
        "wall",
        "-m",
        "llama3-8b",
        "--gpu",
        "h100-sxm-80gb",
        "--sizes",
        "8,64,512",
        "--global-batch",
        "64",
        "--seq-len",
        "4096",
        "--workers",
        "1",
        "--results",
        str(tmp_path / "rows.jsonl"),
    )


def test_outputs(capsys, monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    csv, html = tmp_path / "wall.csv", tmp_path / "wall.html"
    code, out, _ = run(
        capsys, monkeypatch, *small(tmp_path), "--csv", str(csv), "--plot", str(html)
    )
    assert code == 0
    assert "Loss attribution" in out and ("Knee at" in out or "No knee" in out)
    frame = pd.read_csv(csv)
    assert list(frame["gpus"]) == [8, 64, 512]
    assert "loss_pipeline_bubble_frac" in frame.columns
    assert "plotly" in html.read_text()
    code, out, _ = run(capsys, monkeypatch, *small(tmp_path), "--json")
    data = json.loads(out)
    assert code == 0 and data["reused_rows"] == 3 and len(data["rows"]) == 3
    assert data["rows"][0]["scaling_efficiency_frac"] == 1.0
    # Without a calibration the band comes from the validation groups' out-of-sample errors.
    band = data["band"]
    assert band["basis"] == "validation" and [r["gpus"] for r in band["rows"]] == [8, 64, 512]
    for row, r in zip(data["rows"], band["rows"], strict=True):
        low, high = r["tokens_per_s_interval"]
        assert low < row["tokens_per_s"] < high and r["group"]


def test_no_size_with_a_plan_is_exit_2(capsys, monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run(
        capsys,
        monkeypatch,
        "wall",
        "-m",
        "llama3-70b",
        "--sizes",
        "8",
        "--workers",
        "1",
        "--results",
        str(tmp_path / "r.jsonl"),
    )
    assert code == 2 and err.strip().count("\n") == 0 and "no plan fits" in err


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            (
                "-m",
                "no-such-model",
            ),
            "no-such-model",
        ),
        (("--sizes", "8,x"), "sizes"),
        (("--global-batch", "64", "--max-global-batch", "8", "--sizes", "8"), "max_global_batch"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, monkeypatch, tmp_path, args, needle) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run(
        capsys, monkeypatch, "wall", *args, "--workers", "1", "--results", str(tmp_path / "r.jsonl")
    )
    assert code == 2
    assert err.strip().count("\n") == 0 and needle in err and "Traceback" not in err
