"""The FastAPI app of ``scalewall serve``: the REST API, the background jobs and the UI.

Every compute endpoint runs its command (``scalewall estimate`` ... ``--json``) in a worker
process and answers with that command's JSON document, so the API and the CLI cannot drift
(the API adds one thing: beside every plan its ``plan_text``, ``web.documents``);
a user error is a 4xx whose ``error`` is the line the CLI prints.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.responses import StreamingResponse

from scalewall import __version__
from scalewall.errors import ScalewallError, SpecError
from scalewall.web import requests as rq
from scalewall.web import store as jobstore
from scalewall.web.documents import api_schema, with_plan_texts
from scalewall.web.limits import Limits
from scalewall.web.runner import OK, TIMED_OUT, USER_ERROR, Runner

STATIC = Path(str(resources.files("scalewall.web") / "static"))
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    422: {"description": "Invalid input: {'error': the one line the CLI prints}"},
    413: {"description": "Request body too large"},
    429: {"description": "Too many background jobs"},
}
SSE_POLL_S = 0.5
"""How often an event stream looks for a change in its job."""


def _doc(kind: str) -> dict[int | str, dict[str, Any]]:
    """OpenAPI responses: 200 is the ``scalewall-<kind>/1`` document (its shipped schema, with
    ``plan_text`` beside every plan: ``documents.api_schema``)."""
    return {
        200: {
            "description": f"The `scalewall {kind} --json` document, each plan with its text",
            "content": {"application/json": {"schema": api_schema(kind)}},
        },
        **ERROR_RESPONSES,
    }


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _validation_line(exc: RequestValidationError) -> str:
    """The first problem as one line: ``field=value is invalid; what is valid``."""
    first = exc.errors()[0]
    loc = [str(p) for p in first.get("loc", ()) if p != "body"]
    field = ".".join(loc) or "body"
    if first.get("type") == "extra_forbidden":
        return f"{field}={first.get('input')!r} is invalid; unknown field"
    if first.get("type") in ("json_invalid", "model_attributes_type", "dict_type"):
        return f"body is invalid; a JSON object ({first.get('msg')})"
    return f"{field}={first.get('input')!r} is invalid; {first.get('msg')}"


class Planner:
    """The app's state: the store, the runner, and the catalog listing (read once)."""

    def __init__(self, db: Path, limits: Limits) -> None:
        self.limits = limits
        self.store = jobstore.Store(db)
        self.runner = Runner(self.store, limits)
        self._cache: dict[tuple[str, ...], Any] = {}

    def close(self) -> None:
        self.runner.close()
        self.store.close()

    def files(self, options: dict[str, Any], workdir: Path) -> dict[str, Any]:
        """Options with uploads and user-built clusters written to server files in
        ``workdir``; raises SpecError for a path, an unknown upload or a cluster too large."""
        rq.check_ids(options)
        kind = options.get("_kind", "")
        rq.check_limits(kind, options, self.limits)
        options = {k: v for k, v in options.items() if not k.startswith("_")}
        for key in ("model", "step_model"):
            if key in options:
                options[key] = self._upload_file(key, options[key], workdir)
        if "models" in options:
            options["models"] = [self._upload_file("models", m, workdir) for m in options["models"]]
        # simulate's --nodes is its own synthetic cluster, not a catalog system's node count
        if kind != "simulate" and ({"system", "fabric", "nodes"} & set(options)):
            options = self._cluster_file(options, workdir)
        return options

    def _upload_file(self, key: str, value: Any, workdir: Path) -> Any:
        """``value``, or the server file an ``upload:<id>`` is written to."""
        upload = rq.upload_id(str(value or ""))
        if upload is None:
            return value
        found = self.store.upload(upload)
        if found is None:
            raise SpecError(key, value, "an upload id from POST /api/uploads")
        path = workdir / f"{re.sub(r'[^A-Za-z0-9._-]', '-', found[0])}.json"
        path.write_text(json.dumps(found[1]))
        return str(path)

    def _cluster_file(self, options: dict[str, Any], workdir: Path) -> dict[str, Any]:
        from scalewall import catalog

        system_id, fabric_id = options.pop("system", None), options.pop("fabric", None)
        nodes = options.pop("nodes", None)
        if system_id is None or fabric_id is None:
            raise SpecError("system", system_id, "give a system and a fabric (and nodes)")
        if options.get("cluster") or options.get("gpu"):
            raise SpecError(
                "cluster",
                options.get("cluster") or options.get("gpu"),
                "give a cluster, a gpu or a system with a fabric, not two",
            )
        system = catalog.system(system_id)
        catalog.fabric(fabric_id)
        nodes = nodes or max(1, 1024 // system.gpus_per_node)
        if nodes * system.gpus_per_node > self.limits.max_gpus:
            raise SpecError("nodes", nodes, f"at most {self.limits.max_gpus} GPUs in all")
        path = workdir / "cluster.toml"
        path.write_text(
            f'id = "custom"\nname = "{nodes} x {system_id} on {fabric_id}"\n'
            f'system = "{system_id}"\nfabric = "{fabric_id}"\nnodes = {nodes}\n'
            'source = "built in scalewall serve from catalog entries"\n'
        )
        options["cluster"] = str(path)
        return options

    async def compute(self, command: str, body: rq.Body) -> JSONResponse:
        """Run a synchronous command; its document, or its error as a 4xx."""
        workdir = self.runner.workdir()
        try:
            options = self.files({**body.options(), "_kind": command}, workdir)
            status, payload = await run_in_threadpool(
                self.runner.run_sync, command, rq.command_line(options)
            )
        except ScalewallError as exc:
            return _error(422, str(exc))
        finally:
            import shutil

            shutil.rmtree(workdir, ignore_errors=True)
        return self.outcome(status, payload)

    def outcome(self, status: str, payload: Any) -> JSONResponse:
        if status == OK:
            return JSONResponse(with_plan_texts(payload))
        if status in (USER_ERROR, TIMED_OUT):
            return _error(422, str(payload))
        return _error(500, str(payload))

    async def cached(self, command: str, argv: list[str]) -> JSONResponse:
        """A catalog document (the catalog does not change while the server runs)."""
        key = (command, *argv)
        if key not in self._cache:
            status, payload = await run_in_threadpool(self.runner.run_sync, command, argv)
            if status != OK:
                return self.outcome(status, payload)
            self._cache[key] = payload
        return JSONResponse(self._cache[key])

    def start_job(self, kind: str, body: rq.Body) -> JSONResponse:
        """Queue a background job and answer 202 with its status document."""
        if self.store.active_jobs() >= self.limits.max_queued_jobs:
            return _error(
                429,
                f"{self.limits.max_queued_jobs} jobs are queued or running; wait for one to finish",
            )
        workdir = self.runner.workdir()
        points = body.points() if isinstance(body, rq.ExploreRequest) else 0
        try:
            options = self.files({**body.options(), "_kind": kind, "_points": points}, workdir)
        except ScalewallError as exc:
            import shutil

            shutil.rmtree(workdir, ignore_errors=True)
            return _error(422, str(exc))
        job_id = self.store.add_job(kind, body.model_dump())
        options, progress, finish = _job_files(kind, options, workdir, job_id, points)
        self.runner.submit(
            job_id, kind, rq.command_line(options, kind), progress, finish, cleanup=workdir
        )
        row = self.store.job(job_id)
        assert row is not None
        return JSONResponse(row.to_dict(), status_code=202)


JOB_FILES = {"wall": "rows.jsonl", "report": "report.html", "explore": "dataset"}
"""The file (or folder) each job writes in its own scratch folder. A result names it by this
job-relative name only: the server's paths never leave the server."""


def _job_files(
    kind: str, options: dict[str, Any], workdir: Path, job_id: str, points: int
) -> tuple[dict[str, Any], Any, Any]:
    """The job's options with its output paths in ``workdir``, its progress and its finish."""
    name = JOB_FILES.get(kind)
    if kind == "wall":
        rows = workdir / str(name)
        options = {**options, "workers": 1, "results": str(rows)}
        return (
            options,
            _rows_progress(rows, len(options.get("sizes") or [])),
            _renamed("results_path", name),
        )
    if kind == "report":
        options = {**options, "out": str(workdir / str(name))}
        return options, None, _report_finish(workdir / str(name), job_id)
    if kind == "explore":
        counts = workdir / "progress.json"
        options = {**options, "workers": 1, "out": str(workdir / str(name)),
                   "progress_file": str(counts)}  # fmt: skip
        return options, _counts_progress(counts, points), _renamed("out", name)
    return options, None, None


def _renamed(key: str, name: str | None) -> Any:
    def finish(document: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        return {**document, key: name}, None

    return finish


def _rows_progress(path: Path, sizes: int) -> Any:
    def progress() -> tuple[float, None] | None:
        if not sizes or not path.exists():
            return None
        return min(1.0, sum(1 for _ in path.open()) / sizes), None

    return progress


def _counts_progress(path: Path, points: int) -> Any:
    """The exploration's done, running and failed counts from its progress file."""

    def progress() -> tuple[float, dict[str, int]] | None:
        try:
            counts = {k: int(v) for k, v in json.loads(path.read_text()).items()}
        except (OSError, ValueError):
            return None
        finished = counts.get("done", 0) + counts.get("failed", 0)
        return (min(1.0, finished / points) if points else 0.0), counts

    return progress


def _report_finish(path: Path, job_id: str) -> Any:
    def finish(document: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        html = path.read_text() if path.exists() else None
        # The page is served by the API; the worker's scratch path means nothing to a client.
        return {**document, "html": f"/api/jobs/{job_id}/html"}, html

    return finish


def create_app(db: Path, limits: Limits | None = None) -> FastAPI:
    """The app over the SQLite file ``db``."""
    planner = Planner(db, limits or Limits())

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        planner.close()

    app = FastAPI(
        lifespan=lifespan,
        title="scalewall",
        version=__version__,
        summary="Plan AI training clusters: the scalewall commands over HTTP",
        description="Each endpoint answers with the document its command prints with --json "
        "(`scalewall schema KIND`); errors are {'error': the line the CLI prints}.",
    )
    app.state.planner = planner
    _guards(app, planner.limits)
    _compute_routes(app, planner)
    _job_routes(app, planner)
    _info_routes(app, planner)
    _ui_routes(app)
    return app


def _guards(app: FastAPI, limits: Limits) -> None:
    @app.middleware("http")
    async def json_only(request: Request, call_next: Any) -> Response:
        if request.method in ("POST", "PUT", "PATCH"):
            ctype = request.headers.get("content-type", "").split(";")[0].strip()
            if ctype != "application/json":
                return _error(415, f"content-type={ctype!r} is invalid; application/json")
            length = request.headers.get("content-length")
            if length is None or not length.isdigit():
                return _error(411, "content-length is required")
            if int(length) > limits.max_body_bytes:
                return _error(
                    413, f"body of {length} bytes is invalid; at most {limits.max_body_bytes} bytes"
                )
        response: Response = await call_next(request)
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, _validation_line(exc))

    @app.exception_handler(ScalewallError)
    async def user_error(_: Request, exc: ScalewallError) -> JSONResponse:
        return _error(422, str(exc))


def _compute_routes(app: FastAPI, planner: Planner) -> None:
    @app.post("/api/estimate", responses=_doc("estimate"), tags=["plan"])
    async def estimate(body: rq.EstimateRequest) -> JSONResponse:
        """One plan's step time, tokens/s, MFU, memory and breakdown (`scalewall estimate`)."""
        return await planner.compute("estimate", body)

    @app.post("/api/search", responses=_doc("search"), tags=["plan"])
    async def search(body: rq.SearchRequest) -> JSONResponse:
        """The best parallel plans and what limits each (`scalewall search`)."""
        return await planner.compute("search", body)

    @app.post("/api/goodput", responses=_doc("goodput"), tags=["plan"])
    async def goodput(body: rq.GoodputRequest) -> JSONResponse:
        """Failures, checkpoints, the optimal interval and goodput (`scalewall goodput`)."""
        return await planner.compute("goodput", body)

    @app.post("/api/cost", responses=_doc("cost"), tags=["plan"])
    async def cost(body: rq.CostRequest) -> JSONResponse:
        """Capex, opex, network bill of materials, cost per token (`scalewall cost`)."""
        return await planner.compute("cost", body)

    @app.get("/api/prices", responses=_doc("prices"), tags=["catalog"])
    async def prices() -> JSONResponse:
        """Every built-in price with its source (`scalewall cost --list-prices`)."""
        return await planner.cached("cost", ["--list-prices"])


def _job_routes(app: FastAPI, planner: Planner) -> None:
    job_doc = {202: {"description": "The job's status (GET /api/jobs/{id})"}, **ERROR_RESPONSES}

    @app.post("/api/wall", status_code=202, responses=job_doc, tags=["jobs"])
    async def wall(body: rq.WallRequest) -> JSONResponse:
        """Start a scale-wall sweep (`scalewall wall`); its result is a `wall` document."""
        return planner.start_job("wall", body)

    @app.post("/api/report", status_code=202, responses=job_doc, tags=["jobs"])
    async def report(body: rq.ReportRequest) -> JSONResponse:
        """Start a decision report (`scalewall report`); result `report`, page at .../html."""
        return planner.start_job("report", body)

    @app.post("/api/explore", status_code=202, responses=job_doc, tags=["jobs"])
    async def explore(body: rq.ExploreRequest) -> JSONResponse:
        """Start an exploration (`scalewall explore`): one search per point of models x
        designs x sizes x batch rules; counts of done, running and failed points in the job's
        status; its result is an `explore` document (`out` is the job's own name `dataset`)."""
        return planner.start_job("explore", body)

    @app.post("/api/simulate", status_code=202, responses=job_doc, tags=["jobs"])
    async def simulate(body: rq.SimulateRequest) -> JSONResponse:
        """Start a scheduler replay (`scalewall simulate`); its result is `simulate`."""
        return planner.start_job("simulate", body)

    @app.get("/api/jobs", tags=["jobs"])
    async def jobs() -> JSONResponse:
        """The latest jobs, newest first."""
        return JSONResponse({"jobs": [j.to_dict() for j in planner.store.jobs()]})

    @app.get("/api/jobs/{job_id}", tags=["jobs"])
    async def job(job_id: str) -> JSONResponse:
        """A job's state (queued, running, done, failed), progress and message."""
        row = planner.store.job(job_id)
        return (
            _error(404, f"job={job_id!r} is invalid; no such job")
            if row is None
            else (JSONResponse(row.to_dict()))
        )

    @app.get("/api/jobs/{job_id}/result", tags=["jobs"])
    async def result(job_id: str) -> Response:
        """A finished job's document (as its command prints it with --json)."""
        row = planner.store.job(job_id)
        if row is None:
            return _error(404, f"job={job_id!r} is invalid; no such job")
        if row.state != jobstore.DONE:
            return _error(409, f"job {job_id} is {row.state}; no result yet ({row.message})")
        return Response(planner.store.result(job_id), media_type="application/json")

    @app.get("/api/jobs/{job_id}/html", tags=["jobs"])
    async def html(job_id: str) -> Response:
        """A finished report job's page."""
        page = planner.store.html(job_id)
        if page is None:
            return _error(404, f"job={job_id!r} is invalid; no finished report with a page")
        return HTMLResponse(page)

    @app.get("/api/jobs/{job_id}/events", tags=["jobs"])
    async def events(job_id: str) -> Response:
        """Server-sent events: the job's status on every change, until it is done or failed."""
        if planner.store.job(job_id) is None:
            return _error(404, f"job={job_id!r} is invalid; no such job")
        return StreamingResponse(_stream(planner.store, job_id), media_type="text/event-stream")


async def _stream(store: jobstore.Store, job_id: str) -> Any:
    import asyncio

    last = None
    while True:
        row = store.job(job_id)
        if row is None:
            return
        text = json.dumps(row.to_dict())
        if text != last:
            last = text
            yield f"data: {text}\n\n"
        if row.state in (jobstore.DONE, jobstore.FAILED):
            return
        await asyncio.sleep(SSE_POLL_S)


def _info_routes(app: FastAPI, planner: Planner) -> None:
    kinds_pattern = r"^[a-z_]{1,32}$"

    @app.get("/api/health", tags=["info"])
    async def health() -> JSONResponse:
        return JSONResponse({"status": "ok", "version": __version__})

    @app.get("/api/catalog", responses=_doc("catalog"), tags=["catalog"])
    async def catalog_all() -> JSONResponse:
        """Every catalog kind with its ids and names (`scalewall catalog`)."""
        return await planner.cached("catalog", [])

    @app.get("/api/catalog/{kind}", responses=_doc("catalog"), tags=["catalog"])
    async def catalog_kind(kind: str) -> JSONResponse:
        """One kind's ids and names (`scalewall catalog KIND`)."""
        if not re.fullmatch(kinds_pattern, kind):
            return _error(422, f"kind={kind!r} is invalid; a catalog kind")
        return await planner.cached("catalog", [kind])

    @app.get("/api/catalog/{kind}/{entry_id}", responses=_doc("catalog-entry"), tags=["catalog"])
    async def catalog_entry(kind: str, entry_id: str) -> JSONResponse:
        """One entry in full (`scalewall catalog KIND ID`)."""
        if not re.fullmatch(kinds_pattern, kind) or not re.fullmatch(rq.ID_PATTERN, entry_id):
            return _error(422, f"entry={kind}/{entry_id} is invalid; a catalog kind and id")
        return await planner.cached("catalog", [kind, entry_id])

    @app.get("/api/schemas/{kind}", tags=["info"])
    async def schema(kind: str) -> JSONResponse:
        """The JSON Schema of a document kind as the API answers it (`scalewall schema KIND`,
        with each plan's `plan_text`)."""
        return JSONResponse(api_schema(kind))

    @app.post("/api/uploads", tags=["catalog"])
    async def upload(body: rq.UploadRequest) -> JSONResponse:
        """Keep a HuggingFace config.json; answer its model id (`upload:<id>`) and shape."""
        from scalewall.workload.user import model_from_hf_config

        spec = model_from_hf_config(body.config, body.name)
        text = json.dumps(body.config, sort_keys=True)
        upload_id = hashlib.sha256(f"{body.name}\n{text}".encode()).hexdigest()[:16]
        if planner.store.upload(upload_id) is None:
            if planner.store.uploads() >= planner.limits.max_uploads:
                return _error(429, f"{planner.limits.max_uploads} uploads are kept; no more")
            planner.store.add_upload(upload_id, body.name, body.config)
        return JSONResponse(
            {
                "model": f"{rq.UPLOAD_PREFIX}{upload_id}",
                "name": body.name,
                "layers": spec.layers,
                "hidden": spec.hidden,
                "heads": spec.heads,
            }
        )


def _ui_routes(app: FastAPI) -> None:
    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/static/plotly.min.js", include_in_schema=False)
    async def plotly_js() -> FileResponse:
        import plotly

        return FileResponse(
            Path(plotly.__file__).parent / "package_data" / "plotly.min.js",
            media_type="text/javascript",
        )

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
