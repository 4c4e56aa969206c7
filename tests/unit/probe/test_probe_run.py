"""The probe kit on CPU in one process (two gloo ranks under torchrun: tests/cli)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from scalewall.errors import SpecError
from scalewall.probe import ProbeUnavailable, quick_config, read_measurements, write_measurements
from scalewall.probe.attention import attention_flop
from scalewall.probe.collectives import default_group_sizes, element_count
from scalewall.probe.config import check_config
from scalewall.probe.gemm import gemm_flop
from scalewall.probe.runtime import import_torch

torch = pytest.importorskip("torch", reason="PyTorch (the probe extra) is not installed")


def test_flop_counts() -> None:
    assert gemm_flop(2, 3, 4) == 48.0
    # causal forward on (1, 1, 8, 2): 4*1*1*64*2 / 2 = 256; forward+backward 3.5x
    assert attention_flop((1, 1, 8, 2), "causal_fwd") == 256.0
    assert attention_flop((1, 1, 8, 2), "causal_fwd_bwd") == 896.0


def test_group_sizes_and_counts() -> None:
    assert default_group_sizes(1) == ()
    assert default_group_sizes(2) == (2,)
    assert default_group_sizes(12) == (2, 4, 8, 12)
    assert default_group_sizes(16) == (2, 4, 8, 16)
    assert element_count(4096, 4, 3) == 1023  # rounded down to a multiple of the group
    assert element_count(1, 4, 8) == 8  # at least one element per rank


def test_bad_config_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match="parts"):
        check_config(quick_config(parts=("gemm", "fft")))
    with pytest.raises(SpecError, match="iters"):
        check_config(quick_config(iters=0))
    with pytest.raises(SpecError, match="collective_dtype"):
        check_config(quick_config(collective_dtype="fp8_e4m3"))
    with pytest.raises(SpecError, match="gemm_dtypes"):
        check_config(quick_config(gemm_dtypes=("fp7",)))


def test_without_torch_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ProbeUnavailable, match=r"pip install 'scalewall\[probe\]'"):
        import_torch()


def test_single_process_compute_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from scalewall.probe import run_probe

    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    config = quick_config(parts=("gemm", "attention", "hbm", "collectives"))
    m = run_probe(config, device="cpu")
    kinds = [r.kind for r in m.records]
    assert kinds.count("gemm") == len(config.gemm_shapes)  # fp32 on CPU
    assert kinds.count("attention") == 2 * len(config.attention_shapes)  # fwd, fwd+bwd
    assert kinds.count("hbm") == len(config.hbm_sizes_bytes)
    assert any("collectives skipped" in n for n in m.notes)
    for r in m.records:
        assert r.time_min_s is not None and r.time_max_s is not None
        assert r.time_min_s <= r.time_s <= r.time_max_s
        if r.kind == "gemm":
            assert r.flop_per_s == pytest.approx(gemm_flop(*r.shape) / r.time_s)
    assert m.machine.device_type == "cpu" and m.versions.torch == torch.__version__
    assert read_measurements(write_measurements(m, tmp_path / "m.jsonl")) == m
