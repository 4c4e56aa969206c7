"""The server's SQLite file: background jobs with their state, progress and results, and the
uploaded model configs. Every write commits at once, so a finished job survives a restart."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
create table if not exists jobs (
  id text primary key,
  kind text not null,
  request text not null,
  state text not null,
  progress real not null default 0,
  counts text,
  message text not null default '',
  result text,
  html text,
  created_s real not null,
  finished_s real
);
create table if not exists uploads (
  id text primary key,
  name text not null,
  config text not null,
  created_s real not null
);
"""
QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
INTERRUPTED = "the server stopped before this job finished; submit it again"


@dataclass(frozen=True, kw_only=True)
class JobRow:
    id: str
    kind: str
    request: dict[str, Any]
    state: str
    progress_frac: float
    counts: dict[str, int] | None
    """Points done, running and failed (an exploration); None for other jobs."""
    message: str
    created_s: float
    finished_s: float | None
    has_html: bool

    def to_dict(self) -> dict[str, Any]:
        """The job's status document (without its result)."""
        return {
            "format": "scalewall-job/1",
            "id": self.id,
            "kind": self.kind,
            "request": self.request,
            "state": self.state,
            "progress_frac": self.progress_frac,
            "counts": self.counts,
            "message": self.message,
            "created_s": self.created_s,
            "finished_s": self.finished_s,
            "has_html": self.has_html,
        }


class Store:
    """One SQLite file, shared by the server's threads (one connection behind a lock)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("pragma journal_mode=wal")
        self._db.executescript(SCHEMA)
        columns = {row[1] for row in self._db.execute("pragma table_info(jobs)")}
        if "counts" not in columns:  # a database written before jobs had counts
            self._db.execute("alter table jobs add column counts text")
        # Jobs a stopped server left unfinished cannot resume: their worker died with it.
        self._db.execute(
            "update jobs set state=?, message=?, finished_s=? where state in (?, ?)",
            (FAILED, INTERRUPTED, time.time(), QUEUED, RUNNING),
        )

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def add_job(self, kind: str, request: dict[str, Any]) -> str:
        job_id = uuid.uuid4().hex[:16]
        with self._lock:
            self._db.execute(
                "insert into jobs (id, kind, request, state, created_s) values (?, ?, ?, ?, ?)",
                (job_id, kind, json.dumps(request), QUEUED, time.time()),
            )
        return job_id

    def update(self, job_id: str, **fields: Any) -> None:
        """Set ``state``, ``progress``, ``counts`` (JSON text), ``message``, ``result`` (JSON
        text), ``html`` or ``finished_s``."""
        names = ", ".join(f"{k}=?" for k in fields)
        with self._lock:
            self._db.execute(f"update jobs set {names} where id=?", (*fields.values(), job_id))

    def job(self, job_id: str) -> JobRow | None:
        rows = self._jobs("where id=?", (job_id,))
        return rows[0] if rows else None

    def jobs(self, limit: int = 100) -> list[JobRow]:
        return self._jobs("order by created_s desc limit ?", (limit,))

    def active_jobs(self) -> int:
        with self._lock:
            (count,) = self._db.execute(
                "select count(*) from jobs where state in (?, ?)", (QUEUED, RUNNING)
            ).fetchone()
        return int(count)

    def result(self, job_id: str) -> str | None:
        with self._lock:
            row = self._db.execute("select result from jobs where id=?", (job_id,)).fetchone()
        return None if row is None else row[0]

    def html(self, job_id: str) -> str | None:
        with self._lock:
            row = self._db.execute("select html from jobs where id=?", (job_id,)).fetchone()
        return None if row is None else row[0]

    def _jobs(self, where: str, args: tuple[Any, ...]) -> list[JobRow]:
        query = (
            "select id, kind, request, state, progress, message, created_s, finished_s, "
            f"html is not null, counts from jobs {where}"
        )
        with self._lock:
            rows = self._db.execute(query, args).fetchall()
        return [
            JobRow(
                id=r[0],
                kind=r[1],
                request=json.loads(r[2]),
                state=r[3],
                progress_frac=float(r[4]),
                message=r[5],
                created_s=float(r[6]),
                finished_s=r[7],
                has_html=bool(r[8]),
                counts=None if r[9] is None else json.loads(r[9]),
            )
            for r in rows
        ]

    def add_upload(self, upload_id: str, name: str, config: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute(
                "insert or replace into uploads (id, name, config, created_s) values (?,?,?,?)",
                (upload_id, name, json.dumps(config), time.time()),
            )

    def upload(self, upload_id: str) -> tuple[str, dict[str, Any]] | None:
        with self._lock:
            row = self._db.execute(
                "select name, config from uploads where id=?", (upload_id,)
            ).fetchone()
        return None if row is None else (row[0], json.loads(row[1]))

    def uploads(self) -> int:
        with self._lock:
            (count,) = self._db.execute("select count(*) from uploads").fetchone()
        return int(count)
