"""The explore on a real Ray cluster on 127.0.0.1 (a head and a worker node, one CPU each): a
worker process killed mid-run, every point written once, rows equal to the local executor's."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'scalewall[ray]')")

from scalewall.explore import ExploreSpec, explore, load  # noqa: E402
from scalewall.sweep import SerialExecutor  # noqa: E402
from scalewall.sweep.ray_executor import RayExecutor  # noqa: E402

SRC = str(Path(__file__).resolve().parents[3] / "src")
RAY = str(Path(sys.executable).with_name("ray"))

# 2 models x 2 accelerators x 64 sizes x 4 batch rules = 1,024 cheap points (TP 1, PP 1, no CP,
# micro-batch 1); sizes that do not divide the batch are rows with a reason.
SPEC = ExploreSpec(
    models=("megatron-1.7b", "llama3-8b"),
    gpus=("h100-sxm-80gb", "a100-sxm-80gb"),
    sizes=tuple(range(1, 65)),
    batch=("seqs=256", "seqs=192", "per-gpu=2", "per-gpu=4"),
    seq_len=2048,
    max_cp=1,
    max_micro_batch=1,
    tp=(1,),
    pp=(1,),
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(*args: str) -> subprocess.Popen[bytes]:
    # No token authentication: a token left in ~/.ray by another Ray use must not turn it on.
    env = {**os.environ, "PYTHONPATH": SRC, "RAY_USAGE_STATS_ENABLED": "0"}
    env.update(RAY_AUTH_MODE="disabled", HOME=tempfile.gettempdir())
    # --block keeps the node's processes under this one session, which the fixture ends.
    return subprocess.Popen(
        [RAY, "start", "--block", "--num-cpus=1", "--disable-usage-stats", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    # The node's processes are this session's group; nothing of it needs a clean shutdown.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=20)


@dataclass(frozen=True, kw_only=True)
class Cluster:
    address: str
    local_rows: pd.DataFrame
    """The same exploration on the local executor, computed while the nodes start."""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    port = _free_port()
    address = f"127.0.0.1:{port}"
    # The system temp folder, not pytest's deeper tmp_path: Ray's socket paths have a length limit.
    temp = tempfile.mkdtemp(prefix="swray")
    head = _start("--head", f"--port={port}", "--node-ip-address=127.0.0.1", f"--temp-dir={temp}")
    # Most of the nodes' start is their own processes booting: the serial run overlaps it.
    local = tmp_path_factory.mktemp("local")
    serial = threading.Thread(
        target=explore, args=(SPEC, local), kwargs={"executor": SerialExecutor(), "chunk": 256}
    )
    serial.start()
    worker = None
    try:
        ray.init(address=address, log_to_driver=False, logging_level="ERROR")
        worker = _start(f"--address={address}", "--node-ip-address=127.0.0.1")
        deadline = time.monotonic() + 60
        while ray.cluster_resources().get("CPU", 0) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert ray.cluster_resources().get("CPU", 0) >= 2, "the worker node did not join"
        serial.join()
        yield Cluster(address=address, local_rows=load(local))
    finally:
        serial.join()
        ray.shutdown()
        for proc in (worker, head):
            if proc is not None:
                _stop(proc)


def _chunk_worker_pids() -> list[int]:
    """Ray worker processes running a chunk (Ray titles them ``ray::_run_chunk``)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(b"ray::_run_chunk"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _kill_one_worker(out: Path, killed: list[int]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not killed:
        pids = _chunk_worker_pids()
        if pids and list(out.glob("*=*/*=*/part-*.parquet")):
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])
        time.sleep(0.05)


CHUNK = 64
"""Points per Ray task: 16 tasks, few enough that Ray's per-task cost stays small on this
machine, enough (8 per worker) that a worker is killed with tasks still to come."""


@pytest.mark.slow
def test_explore_on_ray_survives_a_killed_worker(cluster: Cluster, tmp_path: Path) -> None:
    out = tmp_path / "ray"
    killed: list[int] = []
    killer = threading.Thread(target=_kill_one_worker, args=(out, killed))
    killer.start()
    result = explore(SPEC, out, executor=RayExecutor(address=cluster.address), chunk=CHUNK)
    killer.join()
    assert killed, "no worker was running a chunk to kill"
    assert result.points == 1024 and result.failed == 0
    ray_rows = load(out)
    assert ray_rows["point_key"].is_unique and len(ray_rows) == 1024
    assert len(cluster.local_rows) == 1024
    pd.testing.assert_frame_equal(ray_rows, cluster.local_rows)
    # A rerun finds every point written and runs nothing.
    again = explore(SPEC, out, executor=RayExecutor(address=cluster.address), chunk=CHUNK)
    assert again.skipped == 1024 and again.written == 0
