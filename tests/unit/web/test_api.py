"""The REST API against a real ``scalewall serve``: the CLI's documents, errors as the CLI's
line, limits, uploads, background jobs with progress and events, and a restart."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import pytest
from tests.unit.web.conftest import SRC, Server, httpx, wait_job

import scalewall
from scalewall.plan import format_plan
from scalewall.web.documents import api_schema, without_plan_texts

SMALL = {"model": "megatron-1.7b", "gpu": "h100-sxm-80gb", "gpus": 16}


def _post(server: Server, path: str, body: object) -> httpx.Response:
    return httpx.post(f"{server.url}{path}", json=body, timeout=120)


def test_estimate_is_the_cli_json(server: Server) -> None:
    answer = _post(server, "/api/estimate", {**SMALL, "tp": 2, "pp": 1, "global_batch": 64})
    assert answer.status_code == 200
    cli = subprocess.run(
        [
            sys.executable,
            "-c",
            "from scalewall.cli.app import main; main()",
            "estimate",
            "-m",
            "megatron-1.7b",
            "--gpu",
            "h100-sxm-80gb",
            "--gpus",
            "16",
            "--tp",
            "2",
            "--pp",
            "1",
            "--global-batch",
            "64",
            "--json",
        ],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC)},
        check=True,
    )
    doc = answer.json()
    # the CLI's document, with the plan written by the one plan formatter beside the plan
    assert doc["plan_text"] == format_plan(doc["plan"])
    assert without_plan_texts(doc) == json.loads(cli.stdout)
    jsonschema.validate(doc, api_schema("estimate"))
    # and the Python API's document for the same plan (JSON turns tuples into lists)
    api = scalewall.estimate("megatron-1.7b", gpu="h100-sxm-80gb", gpus=16, plan=doc["plan"])
    assert without_plan_texts(doc) == json.loads(json.dumps(api.to_dict()))


def test_stack_overrides_are_the_cli_and_api_overrides(server: Server) -> None:
    body = {**SMALL, "tp": 2, "pp": 1, "global_batch": 64, "stack": "megatron-core"}
    base = _post(server, "/api/estimate", body).json()
    changed = _post(server, "/api/estimate", {**body, "stack_set": ["tp_comm_overlap_frac=0"]})
    assert changed.status_code == 200
    doc = changed.json()
    api = scalewall.estimate(
        "megatron-1.7b",
        gpu="h100-sxm-80gb",
        gpus=16,
        plan=doc["plan"],
        stack="megatron-core",
        stack_overrides={"tp_comm_overlap_frac": 0},
    )
    assert doc["stack"] == api.stack == "megatron-core+overrides"
    assert doc["step_time_s"] == api.step_time_s > base["step_time_s"]
    bad = _post(server, "/api/estimate", {**body, "stack_set": ["tp_comm_overlap_frac=2"]})
    assert bad.status_code == 422 and "tp_comm_overlap_frac=2.0 is invalid" in bad.json()["error"]


def test_search_and_catalog_follow_their_schemas(server: Server) -> None:
    found = _post(server, "/api/search", {**SMALL, "top": 2}).json()
    jsonschema.validate(found, api_schema("search"))
    assert [r["plan_text"] for r in found["top"]] == [format_plan(r["plan"]) for r in found["top"]]
    assert (
        len(found["top"]) == 2
        and found["top"][0]["tokens_per_s"] >= found["top"][1]["tokens_per_s"]
    )
    listing = httpx.get(f"{server.url}/api/catalog").json()
    jsonschema.validate(listing, api_schema("catalog"))
    assert "megatron-1.7b" in listing["models"]
    spec = httpx.get(f"{server.url}/openapi.json").json()
    assert {"/api/estimate", "/api/wall", "/api/jobs/{job_id}/events"} <= set(spec["paths"])


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"tp": 5, "model": "megatron-1.7b"}, 422, "tp=5 is invalid; must divide the"),
        ({"tp": "x"}, 422, "tp='x' is invalid"),
        ({"tpp": 2}, 422, "tpp=2 is invalid; unknown field"),
        ({"model": "config.json"}, 422, "model='config.json' is invalid"),
        ({"model": "../../etc/passwd"}, 422, "model='../../etc/passwd' is invalid"),
        ({"gpu": "h100-sxm-80gb", "gpus": 10**7}, 422, "gpus=10000000 is invalid; at most"),
        ({"model": "upload:0123456789abcdef"}, 422, "an upload id"),
        ({"model": "no-such-model"}, 422, "no-such-model"),
    ],
)
def test_bad_input_is_the_cli_line(server: Server, body: dict, status: int, words: str) -> None:
    answer = _post(server, "/api/estimate", body)
    assert answer.status_code == status
    error = answer.json()["error"]
    assert words in error and "\n" not in error


def test_json_only_and_body_size(server: Server) -> None:
    form = httpx.post(
        f"{server.url}/api/estimate",
        content=b"tp=2",
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert form.status_code == 415
    huge = httpx.post(
        f"{server.url}/api/uploads",
        content=b"{" + b" " * 2_000_000 + b"}",
        headers={"content-type": "application/json"},
    )
    assert huge.status_code == 413


def test_uploaded_config_is_estimated(server: Server) -> None:
    config = {
        "hidden_size": 2048,
        "num_attention_heads": 16,
        "num_hidden_layers": 12,
        "vocab_size": 32000,
        "intermediate_size": 5632,
        "hidden_act": "silu",
    }
    made = _post(server, "/api/uploads", {"name": "tiny-llama", "config": config}).json()
    assert made["model"].startswith("upload:") and made["layers"] == 12
    est = _post(server, "/api/estimate", {**SMALL, "model": made["model"], "tp": 2, "pp": 1})
    assert est.status_code == 200 and est.json()["model"] == "tiny-llama"
    bad = _post(server, "/api/uploads", {"name": "broken", "config": {"hidden_size": 1}})
    assert bad.status_code == 422 and "broken" in bad.json()["error"]


def test_wall_job_reports_progress_and_events(server: Server) -> None:
    job = _post(
        server, "/api/wall", {"model": "megatron-1.7b", "gpu": "h100-sxm-80gb", "sizes": [8, 16]}
    )
    assert job.status_code == 202
    job_id = job.json()["id"]
    with httpx.stream("GET", f"{server.url}/api/jobs/{job_id}/events", timeout=120) as events:
        states = [json.loads(line[6:]) for line in events.iter_lines() if line.startswith("data: ")]
    assert states[-1]["state"] == "done" and states[-1]["progress_frac"] == 1.0
    result = httpx.get(f"{server.url}/api/jobs/{job_id}/result").json()
    jsonschema.validate(result, api_schema("wall"))
    assert all(r["plan_text"] == format_plan(r["plan"]) for r in result["rows"])
    assert [r["gpus"] for r in result["rows"]] == [8, 16]
    assert result["results_path"] == "rows.jsonl" and server_paths(result) == []
    too_many = _post(server, "/api/wall", {"sizes": list(range(1, 40))})
    assert too_many.status_code == 422 and "sizes" in too_many.json()["error"]


def server_paths(doc: object) -> list[str]:
    """Strings of ``doc`` that look like a server's absolute file path."""
    if isinstance(doc, dict):
        return [p for v in doc.values() for p in server_paths(v)]
    if isinstance(doc, list):
        return [p for v in doc for p in server_paths(v)]
    return [doc] if isinstance(doc, str) and (doc.startswith("/") and "/api/" not in doc) else []


EXPLORE = {
    "models": ["megatron-1.7b"],
    "gpus": ["h100-sxm-80gb"],
    "sizes": [8, 16],
    "tp": [1, 2],
    "pp": [1],
    "max_micro_batch": 2,
}


def test_explore_and_report_jobs_and_the_job_cap(server: Server) -> None:
    """With one job running and one queued (the session's --max-jobs 2 --max-running-jobs 1),
    a third is refused; both finish with their documents and no server path in them."""
    rules = ["tokens=1048576", "seqs=256"]
    too_big = _post(
        server, "/api/explore", {**EXPLORE, "sizes": [8, 16, 32, 64, 128], "batch": rules}
    )
    assert (
        too_big.status_code == 422 and "points=10 is invalid; at most 8" in too_big.json()["error"]
    )
    explore = _post(server, "/api/explore", EXPLORE)
    report = _post(
        server, "/api/report", {"model": "megatron-1.7b", "clusters": ["h100-sxm-80gb:16"]}
    )
    assert explore.status_code == 202 and report.status_code == 202, report.text
    refused = _post(server, "/api/simulate", {"trace": "synthetic:Seren:10"})
    assert refused.status_code == 429
    assert refused.json()["error"].startswith("2 jobs are queued or running")

    status = wait_job(server.url, explore.json()["id"])
    assert status["state"] == "done", status["message"]
    assert status["counts"] == {"done": 2, "running": 0, "failed": 0}
    found = httpx.get(f"{server.url}/api/jobs/{status['id']}/result").json()
    jsonschema.validate(found, api_schema("explore"))
    assert (found["out"], found["points"], found["written"]) == ("dataset", 2, 2)
    assert found["frontier"] and {r["gpus"] for r in found["frontier"]} <= {8, 16}
    assert server_paths(found) == []

    status = wait_job(server.url, report.json()["id"])
    assert status["state"] == "done", status["message"]
    page = httpx.get(f"{server.url}/api/jobs/{status['id']}/result").json()
    jsonschema.validate(page, api_schema("report"))
    assert page["html"] == f"/api/jobs/{status['id']}/html" and server_paths(page) == []
    html = httpx.get(f"{server.url}{page['html']}")
    assert html.status_code == 200 and "megatron-1.7b" in html.text


def test_finished_job_survives_a_restart(server: Server) -> None:
    body = {"trace": "synthetic:Seren:40", "nodes": 4}
    job_id = _post(server, "/api/simulate", body).json()["id"]
    assert wait_job(server.url, job_id)["state"] == "done"
    before = httpx.get(f"{server.url}/api/jobs/{job_id}/result").json()
    jsonschema.validate(before, api_schema("simulate"))
    server.restart()
    assert httpx.get(f"{server.url}/api/jobs/{job_id}").json()["state"] == "done"
    assert httpx.get(f"{server.url}/api/jobs/{job_id}/result").json() == before
