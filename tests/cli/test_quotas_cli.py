"""``scalewall simulate --quotas FILE``: a multi-tenant run from a quota file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest

from scalewall.schemas import schema

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


def test_helios_quota_table_drives_a_multi_tenant_run(run_cli: Callable[..., object]) -> None:
    """Helios Earth's VCs on their first day (784 GPUs) as quotas on 98 x 8 GPUs; the
    synthetic jobs' tenants are the VCs, in proportion to their quotas."""
    args = ("simulate", "--trace", "synthetic:Seren:400:1", "--nodes", "98", "--queue", "quota")
    result = run_cli(
        *args, "--quotas", "helios-earth:first", "--tenants-from-quotas", "--demand", "1", "--json"
    )
    assert result.returncode == 0, result.stderr  # type: ignore[attr-defined]
    summary = json.loads(result.stdout)  # type: ignore[attr-defined]
    jsonschema.validate(summary, schema("simulate"))
    shares = summary["tenant_gpu_time_share"]
    assert all(t.startswith("vc") for t in shares) and len(shares) >= 10
    # A VC whose quota is 0 on that day draws no jobs.
    assert "vc4om" not in shares
    assert summary["tenant_quota_share"]["vchbv"] == pytest.approx(112 / 784)
    over = summary["tenant_gpu_share_over_time"]
    assert len(over["bin_start_s"]) >= 2 and set(over["share"]) == set(
        summary["tenant_quota_share"]
    )
    held = [sum(s[i] for s in over["share"].values()) for i in range(len(over["bin_start_s"]))]
    assert max(held) <= 1.0 + 1e-9 and max(held) > 0
    assert 0 < summary["jain_index_tenant_slowdown"] <= 1.0
    assert set(summary["tenant_slowdown_mean"]) <= set(shares)


def test_tenants_from_quotas_needs_quotas(run_cli: Callable[..., object]) -> None:
    result = run_cli("simulate", "--trace", "synthetic:Seren:30", "--tenants-from-quotas")
    assert result.returncode == 2  # type: ignore[attr-defined]
    assert "needs --quotas" in result.stderr  # type: ignore[attr-defined]
