"""``scalewall cost``: JSON content, token budgets, and one-line errors for bad price files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def test_cost_json_prices_a_cluster_and_a_token_budget(run_cli: Any) -> None:
    result = run_cli(
        "cost",
        "--cluster",
        "dgx-h100-superpod-1024",
        "--tokens-per-s",
        "3e6",
        "--mfu",
        "0.4",
        "--goodput",
        "0.9",
        "--tokens",
        "15e12",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    tco = data["tco"]
    assert tco["gpus"] == 1024 and tco["bom"]["switches"] == 48
    assert tco["usd_per_gpu_hour"] > 0 and tco["usd_per_million_tokens"] > 0
    assert data["training"]["calendar_s"] == 15e12 / (3e6 * 0.9)


def test_cost_human_output_resizes_a_cluster(run_cli: Any) -> None:
    result = run_cli("cost", "--cluster", "h100-16k-ndr", "--gpus", "512")
    assert result.returncode == 0, result.stderr
    assert "512 x h100-sxm-80gb" in result.stdout and "per GPU-hour" in result.stdout


def test_bad_price_file_is_one_line_with_file_and_key(run_cli: Any, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[rates.pue]\nvalue = "low"\nsource = "site survey"\ndate = "2026"\n')
    result = run_cli("cost", "--prices", str(bad))
    assert result.returncode == 2
    line = result.stderr.strip()
    assert line.count("\n") == 0 and "Traceback" not in line
    assert "bad.toml" in line and "rates.pue" in line and "value='low'" in line


def test_unpriced_hardware_says_how_to_price_it(run_cli: Any) -> None:
    result = run_cli("cost", "--cluster", "deepseek-v3-2048")
    assert result.returncode == 2
    assert "[servers.hgx-h800]" in result.stderr and "--prices" in result.stderr


def test_list_prices_shows_sources_and_dates(run_cli: Any) -> None:
    result = run_cli("cost", "--list-prices", "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)["prices"]
    assert all(row["source"] and row["date"] for row in rows)
    assert {"servers", "switches", "optics", "rentals", "rates"} <= {r["section"] for r in rows}
