"""``scalewall search``: table, JSON, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import sys

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


SMALL = (
    "search",
    "-m",
    "llama3-8b",
    "--gpu",
    "h100-sxm-80gb",
    "--gpus",
    "16",
    "--global-batch",
    "64",
    "--seq-len",
    "4096",
)


def test_table_shows_counts_plans_and_limits(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, monkeypatch, *SMALL, "--top", "2")
    assert code == 0
    assert "plans enumerated" in out and "pruned (memory)" in out
    assert "limited by" in out and "#2" in out


def test_json(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, monkeypatch, *SMALL, "--json", "--objective", "time_to_train")
    assert code == 0
    data = json.loads(out)
    assert data["objective"] == "time_to_train" and data["objective_unit"] == "days"
    assert data["counts"]["evaluated"] > 0 and len(data["top"]) == 5
    assert data["top"][0]["plan"]["tp"] * data["top"][0]["plan"]["dp"] >= 1


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("-m", "no-such-model", "--gpus", "8", "--gpu", "h100-sxm-80gb"), "no-such-model"),
        (
            (
                "-m",
                "llama3-70b",
                "--gpu",
                "h100-sxm-80gb",
                "--gpus",
                "32768",
                "--global-batch",
                "2",
            ),
            "too small",
        ),
        (("-m", "llama3-8b", "--gpu", "h100-sxm-80gb", "--gpus", "13"), "cannot be split"),
        (("-m", "llama3-70b", "--gpu", "h100-sxm-80gb", "--gpus", "8"), "no plan fits"),
        (
            ("-m", "llama3-8b", "--gpus", "8", "--gpu", "h100-sxm-80gb", "--objective", "x"),
            "objective",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, monkeypatch, args, needle) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run(capsys, monkeypatch, "search", *args)
    assert code == 2
    assert err.strip().count("\n") == 0 and needle in err and "Traceback" not in err


def test_the_cli_and_the_api_find_the_same_best_plan(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One question asked both ways (default stack, batch and space): one best plan."""
    import dataclasses

    import scalewall

    code, out, err = run(
        capsys,
        monkeypatch,
        "search",
        "-m",
        "llama3-8b",
        "--gpu",
        "h100-sxm-80gb",
        "--gpus",
        "64",
        "--json",
    )
    assert code == 0, err
    top = json.loads(out)["top"][0]
    best = scalewall.search("llama3-8b", gpu="h100-sxm-80gb", gpus=64).best
    assert best is not None
    assert top["plan"] == dataclasses.asdict(best.plan)
    assert top["tokens_per_s"] == best.tokens_per_s
