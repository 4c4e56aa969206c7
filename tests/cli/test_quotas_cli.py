"""``scalewall simulate --quotas FILE``: a multi-tenant run from a quota file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

QUOTAS = """
[[queue]]
name = "tenant-0"
cohort = "ml"
nominal_gpus = 16
borrowing_limit = 8
lending_limit = 4
priority = 1
"""
OTHERS = "".join(f'[[queue]]\nname = "tenant-{i}"\nnominal_gpus = 8\n' for i in range(1, 8))


def test_quota_file_drives_a_multi_tenant_run(
    tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    path = tmp_path / "quotas.toml"
    path.write_text(QUOTAS + OTHERS)
    args = ("simulate", "--trace", "synthetic:Seren:30", "--nodes", "8", "--queue", "quota")
    result = run_cli(*args, "--quotas", str(path), "--json")
    assert result.returncode == 0, result.stderr  # type: ignore[attr-defined]
    summary = json.loads(result.stdout)  # type: ignore[attr-defined]
    shares = summary["tenant_gpu_time_share"]
    assert set(shares) <= {f"tenant-{i}" for i in range(8)} and len(shares) >= 4
    assert sum(shares.values()) == pytest.approx(1.0)
    assert set(summary["tenant_slowdown_mean"]) <= set(shares)
    assert 1 / 8 <= summary["jain_index_tenant_slowdown"] <= 1.0
    assert summary["tenant_quota_share"]["tenant-0"] == pytest.approx(16 / 64)  # of the 64 GPUs


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (QUOTAS.replace("16", "-16", 1) + OTHERS, "nominal_gpus=-16"),
        (QUOTAS + OTHERS.replace('"tenant-1"', '"tenant-9"'), "'tenant-1'"),
        (QUOTAS.replace("cohort", "cohrt") + OTHERS, "cohrt"),
        ("not toml [", "valid TOML"),
        (QUOTAS + OTHERS + '[[cohort]]\nname = "ml"\nparent = "org"\n', "parent='org'"),
    ],
)
def test_bad_quota_file_is_exit_2_one_line(
    tmp_path: Path, run_cli: Callable[..., object], text: str, needle: str
) -> None:
    path = tmp_path / "quotas.toml"
    path.write_text(text)
    result = run_cli(
        "simulate", "--trace", "synthetic:Seren:30", "--nodes", "8", "--quotas", str(path)
    )
    assert result.returncode == 2  # type: ignore[attr-defined]
    err = result.stderr.strip()  # type: ignore[attr-defined]
    assert err.count("\n") == 0 and needle in err and "Traceback" not in err
