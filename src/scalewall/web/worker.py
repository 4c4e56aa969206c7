"""Runs one command in a child process, as ``scalewall <command> ... --json`` would, and sends
back its JSON document or its one-line error.

A command runs in its own process so that a request past its time limit can be killed, one
request's crash cannot take the server down, and the command's own stdout (where ``--json``
prints) can be captured without touching other requests.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from multiprocessing.connection import Connection
from typing import Any

PRELOAD = ("scalewall.cli.app", "scalewall.cli.common", "scalewall.api", "numpy")
"""Modules the fork server imports once, so each forked worker starts warm."""

OK, USER_ERROR, INTERNAL_ERROR = "ok", "user", "internal"


def run_command(command: str, argv: list[str]) -> tuple[str, Any]:
    """``(OK, document)`` from the command's ``--json`` output, or ``(USER_ERROR, line)`` with
    the line the CLI prints after ``error:``, or ``(INTERNAL_ERROR, line)``."""
    from scalewall.cli.app import load_command
    from scalewall.errors import ScalewallError

    out = io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(io.StringIO()):
            load_command(command).main(
                args=[*argv, "--json"], prog_name=f"scalewall {command}", standalone_mode=False
            )
    except ScalewallError as exc:
        return USER_ERROR, str(exc)
    except Exception as exc:
        # click's usage errors (a bad option value) carry their own message
        message = getattr(exc, "format_message", None)
        if callable(message) and isinstance(getattr(exc, "exit_code", None), int):
            return USER_ERROR, str(message())
        return INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"
    try:
        return OK, json.loads(out.getvalue())
    except json.JSONDecodeError:
        return INTERNAL_ERROR, f"scalewall {command} printed no JSON document"


def child_main(command: str, argv: list[str], conn: Connection) -> None:
    """Process entry: run the command and send its outcome down ``conn``."""
    try:
        conn.send(run_command(command, argv))
    finally:
        conn.close()
