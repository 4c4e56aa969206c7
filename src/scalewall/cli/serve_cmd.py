"""``scalewall serve``: the REST API and the browser UI on one local port."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from scalewall.errors import ScalewallError, SpecError

DEFAULT_HOST = "127.0.0.1"
"""Only this machine can reach the server unless --host says otherwise."""
DEFAULT_PORT = 8765


def default_db() -> Path:
    """``$XDG_CACHE_HOME/scalewall/serve.sqlite3``, else under ``~/.cache``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "scalewall" / "serve.sqlite3"


def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = DEFAULT_HOST,
    port: Annotated[int, typer.Option(help="Port to listen on.")] = DEFAULT_PORT,
    db: Annotated[
        Path | None,
        typer.Option(help="SQLite file of jobs and uploads (default: the user's cache dir)."),
    ] = None,
) -> None:
    """Serve the REST API (OpenAPI page at /docs) and the browser UI (needs the web extra)."""
    from scalewall.cli.common import check_output_path

    if not 0 <= port <= 65535:
        raise SpecError("port", port, "0..65535")
    path = db or default_db()
    check_output_path("--db", path)
    try:
        import uvicorn

        from scalewall.web.app import create_app
    except ImportError as exc:
        raise ScalewallError(
            f"scalewall serve needs the web extra ({exc.name} is missing): "
            "pip install 'scalewall[web]'"
        ) from None
    print(f"scalewall serve: http://{host}:{port}/ (API docs at /docs), jobs in {path}")
    uvicorn.run(create_app(path), host=host, port=port, log_level="warning")


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)
