"""A real ``scalewall serve`` on 127.0.0.1 (a free port), one for the whole session."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx", reason="httpx is not installed (test extra)")
pytest.importorskip("fastapi", reason="fastapi is not installed (web extra)")
pytest.importorskip("uvicorn", reason="uvicorn is not installed (web extra)")

SRC = Path(__file__).resolve().parents[3] / "src"
START_S = 60.0
"""Longest wait for a server to answer (a cold start imports the app on a busy machine)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """``scalewall serve`` as a child process on ``db``."""

    def __init__(self, db: Path, *options: str) -> None:
        self.db = db
        self.options = options
        self.start()

    def start(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "PYTHONPATH": str(SRC)}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from scalewall.cli.app import main; main()",
                "serve",
                "--port",
                str(self.port),
                "--db",
                str(self.db),
                *self.options,
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/api/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                if self.proc.poll() is not None:
                    log = self.proc.stderr.read().decode() if self.proc.stderr else ""
                    raise RuntimeError(log) from None
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("scalewall serve did not answer")

    def restart(self) -> None:
        """Stop the server and start it again on the same database (a new port)."""
        self.stop()
        self.start()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


SESSION_LIMITS = ("--max-jobs", "2", "--max-running-jobs", "1", "--max-explore-points", "8")
"""The session server's limits, from the command line: two jobs in the system, one running at
once (so a second job waits and a third is refused), small explorations."""


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(tmp_path_factory.mktemp("serve") / "serve.sqlite3", *SESSION_LIMITS)
    yield running
    running.stop()


def wait_job(url: str, job_id: str, timeout_s: float = 120.0) -> dict[str, object]:
    """Poll a job until it is done or failed."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status: dict[str, object] = httpx.get(f"{url}/api/jobs/{job_id}", timeout=10).json()
        if status["state"] in ("done", "failed"):
            return status
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} did not finish in {timeout_s} s")
