"""Calibration profiles name ``Efficiency`` fields flat; files written before the fields were
grouped load unchanged and round-trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from scalewall.calibrate.profile import profile_text, read_profile
from scalewall.errors import SpecError
from scalewall.perf.assumptions import Efficiency

OLD_STYLE = """\
format = "scalewall-calibration/1"
created_utc = "2026-01-31T12:00:00Z"
accelerator = "h100-sxm-80gb"

[efficiency]
gemm_sustained_ratio = 0.93
scale_out_bw_efficiency = 0.85
pp_p2p_sync_s = 7.5e-05
host_op_s = 4.0e-05

[accelerator_fit]
training_clock_frac = 0.81

[uncertainty]
parameters = ["gemm_sustained_ratio", "scale_out_bw_efficiency", "pp_p2p_sync_s", \
"host_op_s", "training_clock_frac"]
residual_log_sd = {step = 0.05}
"""


def test_an_old_style_profile_loads_into_the_groups_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "old.toml"
    path.write_text(OLD_STYLE, encoding="utf-8")
    cal = read_profile(path)
    eff = cal.efficiency()
    assert eff.compute.gemm_sustained_ratio == 0.93
    assert eff.comm.scale_out_bw_efficiency == 0.85
    assert eff.pipeline.pp_p2p_sync_s == 7.5e-05
    assert eff.host.host_op_s == 4.0e-05
    untouched = Efficiency()
    assert eff.memory == untouched.memory and eff.step == untouched.step
    assert cal.clocks() == {"h100-sxm-80gb": 0.81}
    again = tmp_path / "again.toml"
    again.write_text(profile_text(cal), encoding="utf-8")
    back = read_profile(again)
    assert back.values == cal.values
    assert back.efficiency() == eff
    assert "[efficiency]\ngemm_sustained_ratio = 0.93\n" in again.read_text(encoding="utf-8")


def test_a_profile_naming_a_group_instead_of_a_field_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        'format = "scalewall-calibration/1"\n[efficiency]\ncompute = 0.9\n', encoding="utf-8"
    )
    with pytest.raises(SpecError, match="compute"):
        read_profile(path)
