"""The API's documents: the command's JSON with ``plan_text`` (the one plan formatter) beside
every plan, a schema that says so, and a page that shows those texts and formats no plan."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

import jsonschema
import pytest

import scalewall
from scalewall.plan import ParallelPlan, format_plan
from scalewall.schemas import schema
from scalewall.web.documents import api_schema, with_plan_texts, without_plan_texts

STATIC = resources.files("scalewall.web") / "static"
MOE_FP8 = ParallelPlan(tp=2, pp=1, dp=4, ep=4, etp=2, cp=2, precision="fp8", global_batch=64)


def _json(doc: object) -> Any:
    return json.loads(json.dumps(doc))


def test_every_plan_gets_the_formatters_text_at_any_depth() -> None:
    plan = {k: getattr(MOE_FP8, k) for k in MOE_FP8.__dataclass_fields__}
    doc = {"plan": plan, "top": [{"rank": 1, "plan": plan}], "rows": [{"gpus": 8}], "n": 3}
    out = with_plan_texts(doc)
    text = format_plan(MOE_FP8)
    assert out["plan_text"] == text and out["top"][0]["plan_text"] == text
    # EP, expert TP, CP (with its mode) and the precision are all in the text the page shows
    for word in ("ep=4", "etp=2", "cp=2 (", "fp8"):
        assert word in text, (word, text)
    assert "plan_text" not in out["rows"][0] and out["n"] == 3
    assert without_plan_texts(out) == doc
    assert "plan_text" not in doc  # the command's document is left as it was


def test_the_api_schema_requires_the_texts_the_api_adds() -> None:
    result = scalewall.search("megatron-1.7b", gpu="h100-sxm-80gb", gpus=16, top_k=2)
    found = _json(result.to_dict())
    jsonschema.validate(found, schema("search"))
    answer = with_plan_texts(found)
    jsonschema.validate(answer, api_schema("search"))
    assert [r["plan_text"] for r in answer["top"]] == [
        format_plan(ParallelPlan(**r["plan"])) for r in found["top"]
    ]
    with pytest.raises(jsonschema.ValidationError, match="plan_text"):
        jsonschema.validate(found, api_schema("search"))
    # an input kind (a file the user sends) is the command's schema unchanged
    assert api_schema("runs") == schema("runs")


def test_the_page_shows_the_api_plan_text_and_formats_no_plan() -> None:
    js = (STATIC / "app.js").read_text()
    assert re.search(r"\bplan_text\b", js)
    # no template that spells out plan fields: tp=${...}, pp=${...}, ...
    assert not re.search(r"(tp|pp|ep|dp)=\$\{", js), "app.js formats a plan itself"
    assert "fmt.plan" not in js
