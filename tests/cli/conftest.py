"""Shared fixture: run the ``scalewall`` CLI in-process (a subprocess per call would cost
seconds of imports)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from scalewall.cli.app import main


@dataclass(frozen=True, kw_only=True)
class Result:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def run_cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Result]:
    def run(*args: str) -> Result:
        monkeypatch.setattr(sys, "argv", ["scalewall", *args])
        code = 0
        try:
            main()
        except SystemExit as exc:
            code = int(exc.code or 0)
        out = capsys.readouterr()
        return Result(returncode=code, stdout=out.out, stderr=out.err)

    return run


def check_schema(doc: Any, kind: str) -> None:
    """Fail unless ``doc`` validates against the shipped schema of ``kind``."""
    import jsonschema

    from scalewall.schemas import schema

    jsonschema.Draft202012Validator(schema(kind)).validate(doc)


@pytest.fixture(name="check_schema")
def check_schema_fixture() -> Callable[[Any, str], None]:
    return check_schema
