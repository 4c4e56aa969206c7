"""Shared paths and helpers for the probe tests."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "data" / "probe"


@pytest.fixture
def data_dir() -> Path:
    return DATA
