"""Hypothesis over the endpoints' parameters against a real server: whatever the body, the
answer is a 2xx document or a 4xx with one line naming what is wrong, never a 500.

The same examples run every time (``derandomize``) unless SCALEWALL_FUZZ_RANDOM=1.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.unit.web.conftest import Server, httpx

ENDPOINTS = {
    "/api/estimate": [
        "model",
        "gpu",
        "gpus",
        "tp",
        "pp",
        "cp",
        "micro_batch",
        "global_batch",
        "seq_len",
        "recompute",
        "precision",
        "zero",
        "system",
        "fabric",
        "nodes",
    ],
    "/api/search": ["model", "gpu", "gpus", "top", "precision", "max_cp", "objective"],
    "/api/goodput": ["model", "gpu", "gpus", "tp", "pp", "mc_runs", "run_days", "interval"],
    "/api/cost": ["gpu", "gpus", "facility", "utilisation", "mfu", "tokens"],
    "/api/wall": ["model", "gpu", "sizes", "knee_threshold", "max_gpus"],
    "/api/simulate": ["trace", "nodes", "queue", "placement", "demand"],
    "/api/uploads": ["name", "config"],
}
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(
        [
            "",
            "llama3-8b",
            "h100-sxm-80gb",
            "../x.toml",
            "/etc/passwd",
            "upload:ab",
            "bf16,fp9",
            "synthetic:Seren:999999999",
            "openb:nope",
            "auto",
            "x" * 300,
        ]
    ),
    st.text(max_size=12),
    st.lists(st.integers(min_value=-5, max_value=10**6), max_size=20),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
# Valid bodies make the work run; these keep each one small on a 2-core machine.
SMALL = {
    "model": "megatron-1.7b",
    "gpu": "h100-sxm-80gb",
    "gpus": 8,
    "sizes": [8],
    "mc_runs": 0,
    "nodes": 2,
    "trace": "synthetic:Seren:20",
}


@st.composite
def requests(draw: Any) -> tuple[str, dict[str, Any]]:
    path = draw(st.sampled_from(sorted(ENDPOINTS)))
    fields = draw(
        st.lists(st.sampled_from([*ENDPOINTS[path], "nonsense"]), max_size=3, unique=True)
    )
    body = {k: v for k, v in SMALL.items() if k in ENDPOINTS[path]}
    body.update({name: draw(VALUES) for name in fields})
    return path, body


def test_bad_bodies_get_a_4xx_line_never_a_500(server: Server) -> None:
    @settings(
        max_examples=20,
        deadline=None,
        database=None,
        derandomize=not os.environ.get("SCALEWALL_FUZZ_RANDOM"),
        suppress_health_check=list(HealthCheck),
    )
    @given(requests())
    def check(request: tuple[str, dict[str, Any]]) -> None:
        path, body = request
        answer = httpx.post(f"{server.url}{path}", json=body, timeout=180)
        assert answer.status_code < 500, (path, body, answer.text)
        if answer.status_code >= 400:
            error = answer.json()["error"]
            assert error and "\n" not in error and "Traceback" not in error, (path, body)

    check()
