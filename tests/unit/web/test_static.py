"""The UI's strings and the request-to-command-line mapping, without a server."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from scalewall.errors import SpecError
from scalewall.web import requests as rq
from scalewall.web.limits import Limits

STATIC = resources.files("scalewall.web") / "static"


def test_every_string_is_in_both_languages_and_every_key_is_used() -> None:
    strings = json.loads((STATIC / "strings.json").read_text())
    assert set(strings) == {"en", "zh"}
    assert set(strings["en"]) == set(strings["zh"])
    for key in strings["en"]:
        assert re.findall(r"\{\w+\}", strings["en"][key]) == re.findall(
            r"\{\w+\}", strings["zh"][key]
        ), key
    used = set(re.findall(r'data-i18n="(\w+)"', (STATIC / "index.html").read_text()))
    used |= set(re.findall(r'(?<![\w$.])t\("(\w+)"', (STATIC / "app.js").read_text()))
    assert used <= set(strings["en"]), used - set(strings["en"])


def test_fields_become_the_commands_flags() -> None:
    body = rq.EstimateRequest(model="llama3-8b", tp=2, sequence_parallel=False)
    argv = rq.command_line(body.options())
    # only the fields set away from the command's defaults are passed
    assert sorted(argv) == sorted(["--tp", "2", "--no-sequence-parallel", "--model", "llama3-8b"])
    assert rq.command_line({"asynchronous": True, "sizes": [8, 16]}) == [
        "--async",
        "--sizes",
        "8,16",
    ]
    assert rq.command_line({"clusters": ["a:8", "b:16"]}) == [
        "--cluster",
        "a:8",
        "--cluster",
        "b:16",
    ]


@pytest.mark.parametrize("value", ["x.json", "cfg.TOML", "trace.csv"])
def test_an_id_never_names_a_file(value: str) -> None:
    with pytest.raises(SpecError, match="a catalog id"):
        rq.check_ids({"model": value})


def test_limits_name_the_field() -> None:
    with pytest.raises(SpecError, match="sizes"):
        rq.check_limits("wall", {"sizes": list(range(1, 20))}, Limits(max_sizes=4))
    with pytest.raises(SpecError, match="trace"):
        rq.check_limits("simulate", {"trace": "synthetic:Seren:50000"}, Limits())
