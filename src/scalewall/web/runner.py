"""Runs commands in child processes with a time limit, and background jobs through the store."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from scalewall.web import store as jobstore
from scalewall.web.documents import with_plan_texts
from scalewall.web.limits import Limits
from scalewall.web.worker import INTERNAL_ERROR, OK, PRELOAD, USER_ERROR, child_main

TIMED_OUT = "timeout"
POLL_S = 0.2
"""How often a waiting thread checks its worker (and a job's progress)."""
ProgressFn = Callable[[], "tuple[float, dict[str, int] | None] | None"]
"""A job's progress: (fraction done, counts or None), or None while unknown."""


class Runner:
    """Child processes from one fork server (warm with ``PRELOAD``); a thread pool of
    ``max_running_jobs`` for background jobs."""

    def __init__(self, store: jobstore.Store, limits: Limits) -> None:
        self.store = store
        self.limits = limits
        self._ctx = multiprocessing.get_context("forkserver")
        self._ctx.set_forkserver_preload(list(PRELOAD))
        self._jobs = ThreadPoolExecutor(limits.max_running_jobs, thread_name_prefix="job")
        self._sync = threading.BoundedSemaphore(limits.max_sync_requests)
        self._live: set[BaseProcess] = set()
        self._live_lock = threading.Lock()
        self.scratch = Path(tempfile.mkdtemp(prefix="scalewall-serve-"))

    def close(self) -> None:
        """Kill running workers, stop the pool, remove scratch files."""
        with self._live_lock:
            for proc in self._live:
                proc.kill()
        self._jobs.shutdown(wait=False, cancel_futures=True)
        shutil.rmtree(self.scratch, ignore_errors=True)

    def workdir(self) -> Path:
        """A fresh folder of the server's own for one request's files."""
        return Path(tempfile.mkdtemp(dir=self.scratch))

    def run(
        self,
        command: str,
        argv: list[str],
        time_s: float,
        on_poll: Callable[[], None] | None = None,
    ) -> tuple[str, Any]:
        """The command's outcome (see ``worker.run_command``), or ``(TIMED_OUT, line)``."""
        receiver, sender = self._ctx.Pipe(duplex=False)
        proc = self._ctx.Process(target=child_main, args=(command, argv, sender))
        proc.start()
        sender.close()
        with self._live_lock:
            self._live.add(proc)
        try:
            return self._wait(proc, receiver, time_s, on_poll)
        finally:
            if proc.is_alive():
                proc.kill()
            proc.join(5)
            receiver.close()
            with self._live_lock:
                self._live.discard(proc)

    def _wait(
        self, proc: BaseProcess, receiver: Any, time_s: float, on_poll: Callable[[], None] | None
    ) -> tuple[str, Any]:
        deadline = time.monotonic() + time_s
        while time.monotonic() < deadline:
            if receiver.poll(POLL_S):
                try:
                    outcome: tuple[str, Any] = receiver.recv()
                except EOFError:
                    break
                return outcome
            if on_poll is not None:
                on_poll()
            if not proc.is_alive() and not receiver.poll(0):
                break
        else:
            return TIMED_OUT, f"the work ran past its limit of {time_s:g} s; ask for less"
        return INTERNAL_ERROR, f"the worker stopped (exit code {proc.exitcode}) without a result"

    def run_sync(self, command: str, argv: list[str]) -> tuple[str, Any]:
        """A synchronous request: at most ``max_sync_requests`` at once."""
        with self._sync:
            return self.run(command, argv, self.limits.request_time_s)

    def submit(
        self,
        job_id: str,
        command: str,
        argv: list[str],
        progress: ProgressFn | None = None,
        finish: Callable[[Any], tuple[Any, str | None]] | None = None,
        cleanup: Path | None = None,
    ) -> None:
        """Queue a background job; its state, progress and result go to the store.
        ``finish(document) -> (document, html)`` runs on the result before it is saved."""
        self._jobs.submit(self._job, job_id, command, argv, progress, finish, cleanup)

    def _job(
        self,
        job_id: str,
        command: str,
        argv: list[str],
        progress: ProgressFn | None,
        finish: Callable[[Any], tuple[Any, str | None]] | None,
        cleanup: Path | None,
    ) -> None:
        store = self.store
        store.update(job_id, state=jobstore.RUNNING)
        last: list[Any] = [None]

        def poll() -> None:
            value = progress() if progress else None
            if value is not None and value != last[0]:
                last[0] = value
                frac, counts = value
                store.update(job_id, progress=frac, counts=counts and json.dumps(counts))

        try:
            status, payload = self.run(command, argv, self.limits.job_time_s, poll)
            if status == OK:
                poll()  # the counts the job last wrote
                payload = with_plan_texts(payload)
                html = None
                if finish is not None:
                    payload, html = finish(payload)
                store.update(
                    job_id,
                    state=jobstore.DONE,
                    progress=1.0,
                    result=json.dumps(payload),
                    html=html,
                    finished_s=time.time(),
                )
            else:
                store.update(
                    job_id, state=jobstore.FAILED, message=str(payload), finished_s=time.time()
                )
        except Exception as exc:  # a defect of the server itself: keep the job's record
            store.update(
                job_id,
                state=jobstore.FAILED,
                message=f"{type(exc).__name__}: {exc}",
                finished_s=time.time(),
            )
        finally:
            if cleanup is not None:
                shutil.rmtree(cleanup, ignore_errors=True)


__all__ = ["INTERNAL_ERROR", "OK", "TIMED_OUT", "USER_ERROR", "Runner"]
