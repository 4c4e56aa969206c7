"""``scalewall probe``: run under torchrun on CPU, import nccl-tests, show; errors exit 2."""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from scalewall.probe import quick_config, read_measurements

DATA = Path(__file__).resolve().parents[1] / "data" / "probe"
HAS_TORCH = importlib.util.find_spec("torch") is not None


# A finder that makes ``import torch`` fail, as on a machine without the probe extra.
_NO_TORCH = """
import sys
class _NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("No module named 'torch'")
        return None
sys.meta_path.insert(0, _NoTorch())
"""


def run_cli(*args: str, block_torch: bool = False) -> subprocess.CompletedProcess[str]:
    """The CLI in a fresh interpreter (only where the process itself must differ)."""
    code = f"{_NO_TORCH if block_torch else ''}\nfrom scalewall.cli.app import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False
    )


def call_cli(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in this process (fast): exit code and captured output."""
    from scalewall.cli.app import main

    argv = sys.argv
    sys.argv = ["scalewall", *args]
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.argv = argv
    out = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, out.out, out.err)


def _one_line_exit_2(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr


def test_without_torch_one_line_install_hint() -> None:
    err = _one_line_exit_2(run_cli("probe", "--quick", block_torch=True))
    assert "pip install 'scalewall[probe]'" in err


def test_show_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    result = call_cli(capsys, "probe", "show", str(DATA / "probe_cpu_gloo_2ranks.jsonl"), "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["format"] == "scalewall-measurements/1"
    assert {row["kind"] for row in doc["summary"]} >= {"gemm", "all_reduce"}


def test_show_malformed_names_file_and_line(capsys: pytest.CaptureFixture[str]) -> None:
    bad = DATA / "bad_negative_time_line3.jsonl"
    err = _one_line_exit_2(call_cli(capsys, "probe", "show", str(bad)))
    assert f"{bad}:3:" in err and "time_s" in err


def test_import_nccl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "nccl.jsonl"
    logs = [DATA / "all_reduce_perf_8xh100.txt", DATA / "alltoall_perf_8xh100.txt"]
    result = call_cli(capsys, "probe", "import-nccl", *map(str, logs), "-o", str(out))
    assert result.returncode == 0, result.stderr
    m = read_measurements(out)
    assert {r.kind for r in m.records} == {"all_reduce", "all_to_all"}
    assert m.source == "nccl-tests" and m.machine.world_size == 8


def test_import_nccl_truncated_row_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = DATA / "all_reduce_perf_truncated.txt"
    result = call_cli(capsys, "probe", "import-nccl", str(log), "-o", str(tmp_path / "x"))
    err = _one_line_exit_2(result)
    assert f"{log}:20:" in err


@pytest.mark.skipif(not HAS_TORCH, reason="PyTorch (the probe extra) is not installed")
def test_bad_shape_option_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    err = _one_line_exit_2(call_cli(capsys, "probe", "--gemm-shape", "64x64", "--device", "cpu"))
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
    launcher = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2"]
    rendezvous = ["--master-addr", "127.0.0.1", "--master-port", str(_free_port())]
    probe = ["probe", "--quick", "--device", "cpu", "--hbm-size", "1M", "--all-ranks"]
    cmd = [*launcher, *rendezvous, str(script), *probe, "-o", str(out)]
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
    assert sorted({r.rank for r in m.of_kind("gemm")}) == [0, 1]  # --all-ranks gathers both
    sizes = quick_config().message_sizes_bytes()
    for kind in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all"):
        records = m.of_kind(kind)
        assert len(records) == len(sizes), (kind, m.notes)
        for r in records:
            assert r.group_size == 2 and r.num_nodes == 1
            assert r.bytes_per_s == pytest.approx(r.size_bytes / r.time_s)
            factor = 1.0 if kind == "all_reduce" else 0.5  # 2(n-1)/n and (n-1)/n at n=2
            assert r.busbw_bytes_per_s == pytest.approx(r.bytes_per_s * factor)


def test_option_parsers() -> None:
    from scalewall.cli.probe_cmd import parse_bytes, parse_shape
    from scalewall.errors import SpecError

    assert parse_bytes("--max-bytes", "4096") == 4096
    assert parse_bytes("--max-bytes", "64K") == 65536
    assert parse_bytes("--max-bytes", "1GiB") == 2**30
    assert parse_shape("--gemm-shape", "8x16x32", 3, "MxNxK") == (8, 16, 32)
    with pytest.raises(SpecError, match="--max-bytes"):
        parse_bytes("--max-bytes", "lots")
    with pytest.raises(SpecError, match="--gemm-shape"):
        parse_shape("--gemm-shape", "8x0x32", 3, "MxNxK")


def test_show_works_without_torch() -> None:
    result = run_cli("probe", "show", str(DATA / "alltoall_perf_8xh100.txt"), block_torch=True)
    assert result.returncode == 0, result.stderr
    assert "all_to_all" in result.stdout
