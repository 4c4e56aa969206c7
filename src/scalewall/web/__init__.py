"""``scalewall serve``: a local REST API and browser UI over the planner.

The API's endpoints mirror the commands (estimate, search, wall, goodput, cost, report,
simulate, catalog, schema) and answer with the documents their ``--json`` prints; long work runs
as background jobs whose results are kept in SQLite. FastAPI and uvicorn come from the ``web``
extra and are imported only by :func:`scalewall.web.app.create_app`.
"""

from __future__ import annotations

__all__: list[str] = []
