"""``scalewall probe``: run under torchrun on CPU, import nccl-tests, show; errors exit 2."""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from scalewall.probe import read_measurements

DATA = Path(__file__).resolve().parents[1] / "data" / "probe"
HAS_TORCH = importlib.util.find_spec("torch") is not None


def run_cli(*args: str, block_torch: bool = False) -> subprocess.CompletedProcess[str]:
    block = "import sys; sys.modules['torch'] = None; " if block_torch else ""
    code = f"{block}from scalewall.cli.app import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False
    )


def _one_line_exit_2(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr


def test_without_torch_one_line_install_hint() -> None:
    err = _one_line_exit_2(run_cli("probe", "--quick", block_torch=True))
    assert "pip install 'scalewall[probe]'" in err


def test_show_and_json() -> None:
    result = run_cli("probe", "show", str(DATA / "probe_cpu_gloo_2ranks.jsonl"), "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["format"] == "scalewall-measurements/1"
    assert {row["kind"] for row in doc["summary"]} >= {"gemm", "all_reduce"}


def test_show_malformed_names_file_and_line() -> None:
    bad = DATA / "bad_negative_time_line3.jsonl"
    err = _one_line_exit_2(run_cli("probe", "show", str(bad)))
    assert f"{bad}:3:" in err and "time_s" in err


def test_import_nccl(tmp_path: Path) -> None:
    out = tmp_path / "nccl.jsonl"
    logs = [DATA / "all_reduce_perf_8xh100.txt", DATA / "alltoall_perf_8xh100.txt"]
    result = run_cli("probe", "import-nccl", *map(str, logs), "-o", str(out))
    assert result.returncode == 0, result.stderr
    m = read_measurements(out)
    assert {r.kind for r in m.records} == {"all_reduce", "all_to_all"}
    assert m.source == "nccl-tests" and m.machine.world_size == 8


def test_import_nccl_truncated_row_exit_2(tmp_path: Path) -> None:
    log = DATA / "all_reduce_perf_truncated.txt"
    err = _one_line_exit_2(run_cli("probe", "import-nccl", str(log), "-o", str(tmp_path / "x")))
    assert f"{log}:20:" in err


@pytest.mark.skipif(not HAS_TORCH, reason="PyTorch (the probe extra) is not installed")
def test_bad_shape_option_exit_2() -> None:
    err = _one_line_exit_2(run_cli("probe", "--gemm-shape", "64x64", "--device", "cpu"))
    assert "--gemm-shape" in err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.skipif(not HAS_TORCH, reason="PyTorch (the probe extra) is not installed")
def test_torchrun_two_cpu_ranks_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "m.jsonl"
    code = "from scalewall.cli.app import main; main()"
    script = tmp_path / "scalewall_main.py"
    script.write_text(code + "\n", encoding="utf-8")
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-addr",
        "127.0.0.1",
        "--master-port",
        str(_free_port()),
        str(script),
        "probe",
        "--quick",
        "--device",
        "cpu",
        "--hbm-size",
        "1M",
        "-o",
        str(out),
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    m = read_measurements(out)
    assert m.machine.world_size == 2 and m.machine.backend == "gloo"
    kinds = {r.kind for r in m.records}
    assert kinds == {
        "gemm",
        "attention",
        "hbm",
        "all_reduce",
        "all_gather",
        "reduce_scatter",
        "all_to_all",
    }
    assert "wrote" in result.stdout
