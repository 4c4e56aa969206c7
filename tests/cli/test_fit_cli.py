"""``scalewall fit``: the published-runs profile with provenance."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scalewall.calibrate import read_profile
from scalewall.validation.runs import FORMAT, default_runs_path


def test_fit_writes_a_profile_with_provenance(
    tmp_path: Path, run_cli: Callable[..., Any], check_schema: Callable[[Any, str], None]
) -> None:
    cases = json.loads(default_runs_path().read_text())["cases"]
    keep = [c for c in cases if c["id"].startswith(("llama3", "megatron_core_h100"))]
    runs = tmp_path / "runs.json"
    runs.write_text(json.dumps({"format": FORMAT, "cases": keep}))
    out = tmp_path / "fit.toml"
    result = run_cli("fit", str(runs), "-o", str(out), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    check_schema(data, "fit")
    assert set(data["fitted"]) == {
        "gemm_sustained_ratio",
        "dp_overlap_efficiency",
        "host_op_s",
        "overlap_compute_slowdown_frac",
        "tp_overlap_compute_slowdown_frac",
        "expert_alltoall_bw_efficiency",
        "expert_dispatch_copy_s",
        "fp4_gemm_ceiling_ratio",
        "training_clock_frac:h100-sxm-80gb",
    }
    assert "hbm_efficiency" in data["fixed"]
    profile = read_profile(out)
    assert set(profile.values) == set(data["fitted"])
    (source,) = profile.provenance["inputs"]
    assert source["sha256"] == hashlib.sha256(runs.read_bytes()).hexdigest()
    assert profile.provenance["cases"] == len(keep)
    assert {"scalewall", "numpy", "scipy", "python"} <= set(profile.provenance)
