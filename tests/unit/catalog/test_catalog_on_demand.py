"""Entries named by id are read from their one file; aliases and listings still see the whole
table, and give the same objects."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scalewall import catalog
from scalewall.catalog import loader
from scalewall.errors import SpecError
from scalewall.stack import preset


@pytest.fixture
def files_read(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The catalog files parsed from a cold cache, by ``<kind>/<stem>``."""
    read: list[str] = []
    real = loader.load_toml

    def counting(path: Path) -> dict[str, Any]:
        read.append(f"{path.parent.name}/{path.stem}")
        return real(path)

    for cached in (loader.entries, loader._read_entry, loader._accelerator_names):
        cached.cache_clear()
    monkeypatch.setattr(loader, "load_toml", counting)
    yield read
    for cached in (loader.entries, loader._read_entry, loader._accelerator_names):
        cached.cache_clear()


def test_an_id_reads_one_file(files_read: list[str]) -> None:
    assert catalog.model("llama3-70b").id == "llama3-70b"
    assert catalog.accelerator("H100_SXM_80GB").id == "h100-sxm-80gb"
    assert preset("megatron-core").id == "megatron-core"
    assert files_read == ["models/llama3-70b", "accelerators/h100-sxm-80gb", "stacks/megatron-core"]


def test_aliases_fall_back_to_the_table(files_read: list[str]) -> None:
    assert catalog.accelerator("h100-sxm5").id == "h100-sxm-80gb"
    assert preset("mcore").id == "megatron-core"
    assert len(files_read) == len(catalog.accelerators()) + len(catalog.stacks())


def test_table_and_single_lookup_share_objects(files_read: list[str]) -> None:
    one = catalog.model("llama3-70b")
    assert catalog.models()["llama3-70b"] is one
    assert files_read.count("models/llama3-70b") == 1


@pytest.mark.parametrize("bad", ["no-such-model", "../models/llama3-70b", "", "Llama3 70B!"])
def test_unknown_or_unsafe_ids_list_the_valid_ones(bad: str) -> None:
    with pytest.raises(SpecError, match=r"valid: .*llama3-70b"):
        catalog.model(bad)
