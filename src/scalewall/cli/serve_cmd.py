"""``scalewall serve``: the REST API and the browser UI on one local port."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from scalewall.errors import ScalewallError, SpecError

DEFAULT_HOST = "127.0.0.1"
"""Only this machine can reach the server unless --host says otherwise."""
DEFAULT_PORT = 8765


def default_db() -> Path:
    """``$XDG_CACHE_HOME/scalewall/serve.sqlite3``, else under ``~/.cache``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "scalewall" / "serve.sqlite3"


def _limit(flag: str, what: str) -> Any:
    return typer.Option(flag, help=f"{what} (default: scalewall.web.limits.Limits).")


def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = DEFAULT_HOST,
    port: Annotated[int, typer.Option(help="Port to listen on.")] = DEFAULT_PORT,
    db: Annotated[
        Path | None,
        typer.Option(help="SQLite file of jobs and uploads (default: the user's cache dir)."),
    ] = None,
    max_gpus: Annotated[int | None, _limit("--max-gpus", "Largest cluster a request names")] = None,
    max_sizes: Annotated[int | None, _limit("--max-sizes", "Sizes in one sweep")] = None,
    max_explore_points: Annotated[
        int | None, _limit("--max-explore-points", "Points in one exploration")
    ] = None,
    max_options: Annotated[int | None, _limit("--max-options", "Options in one report")] = None,
    max_top: Annotated[int | None, _limit("--max-top", "Plans one search returns")] = None,
    max_monte_carlo_runs: Annotated[
        int | None, _limit("--max-mc-runs", "Monte Carlo runs of one goodput request")
    ] = None,
    max_synthetic_jobs: Annotated[
        int | None, _limit("--max-synthetic-jobs", "Jobs of a synthetic trace")
    ] = None,
    max_body_bytes: Annotated[int | None, _limit("--max-body-bytes", "Bytes of a body")] = None,
    max_uploads: Annotated[int | None, _limit("--max-uploads", "Uploads kept")] = None,
    request_time_s: Annotated[
        float | None, _limit("--request-time-s", "Seconds one request may compute")
    ] = None,
    job_time_s: Annotated[float | None, _limit("--job-time-s", "Seconds one job may run")] = None,
    max_running_jobs: Annotated[
        int | None, _limit("--max-running-jobs", "Background jobs running at once")
    ] = None,
    max_queued_jobs: Annotated[
        int | None, _limit("--max-jobs", "Background jobs queued or running; past it 429")
    ] = None,
    max_sync_requests: Annotated[
        int | None, _limit("--max-sync-requests", "Requests computed at once")
    ] = None,
) -> None:
    """Serve the REST API (OpenAPI page at /docs) and the browser UI (needs the web extra)."""
    from scalewall.cli.common import check_output_path
    from scalewall.web.limits import Limits

    if not 0 <= port <= 65535:
        raise SpecError("port", port, "0..65535")
    path = db or default_db()
    check_output_path("--db", path)
    limits = Limits.from_options(
        {"max_queued_jobs": "--max-jobs", "max_monte_carlo_runs": "--max-mc-runs"},
        max_gpus=max_gpus, max_sizes=max_sizes, max_explore_points=max_explore_points,
        max_options=max_options, max_top=max_top, max_monte_carlo_runs=max_monte_carlo_runs,
        max_synthetic_jobs=max_synthetic_jobs, max_body_bytes=max_body_bytes,
        max_uploads=max_uploads, request_time_s=request_time_s, job_time_s=job_time_s,
        max_running_jobs=max_running_jobs, max_queued_jobs=max_queued_jobs,
        max_sync_requests=max_sync_requests,
    )  # fmt: skip
    try:
        import uvicorn

        from scalewall.web.app import create_app
    except ImportError as exc:
        raise ScalewallError(
            f"scalewall serve needs the web extra ({exc.name} is missing): "
            "pip install 'scalewall[web]'"
        ) from None
    print(f"scalewall serve: http://{host}:{port}/ (API docs at /docs), jobs in {path}")
    uvicorn.run(create_app(path, limits), host=host, port=port, log_level="warning")


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)
