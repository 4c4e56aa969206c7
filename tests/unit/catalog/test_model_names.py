"""Model names as users and sources write them resolve to the catalog's models; a name that fits
several, or only part of an id, resolves to none."""

from __future__ import annotations

import pytest

from scalewall import catalog
from scalewall.catalog import loader
from scalewall.errors import ScalewallError


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("llama3.1-405b", "llama3.1-405b"),
        ("Llama 3.1 405B", "llama3.1-405b"),
        ("meta-llama/Llama-3.1-8B", "llama3.1-8b"),
        ("meta-llama/Meta-Llama-3-70B", "llama3-70b"),
        ("Llama-3.1-70B-Instruct", "llama3.1-70b"),
        ("meta-llama/Llama-2-7b-hf", "llama2-7b"),
        ("DeepSeek-V3", "deepseek-v3"),
        ("deepseek-ai/DeepSeek-V3-Base", "deepseek-v3"),
        ("mistralai/Mixtral-8x22B-v0.1", "mixtral-8x22b"),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
        ("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"),
        ("openai/gpt-oss-120b", "gpt-oss-120b"),
        ("GPT-3 175B", "gpt3-175b"),
        ("MT-NLG 530B", "mt-nlg-530b"),
        ("BLOOM", "bloom-176b"),
        ("meta-llama/Llama-4-Scout-17B-16E", "llama4-scout"),
        ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", "llama4-maverick"),
        ("Llama 4 Maverick", "llama4-maverick"),
    ],
)
def test_names_as_written(name: str, model: str) -> None:
    assert loader.model_id(name) == model
    assert catalog.model(name).id == model


@pytest.mark.parametrize(
    "name", ["Llama 3", "Mixtral", "DeepSeek", "Qwen3", "llama3.1-8", "Llama 4", "Llama-4-17B-16E"]
)
def test_ambiguous_or_partial_names_are_not_guessed(name: str) -> None:
    assert loader.model_id(name) is None
    with pytest.raises(ScalewallError, match="valid: "):
        catalog.model(name)


def test_llama_3_and_3_1_stay_apart() -> None:
    assert catalog.model("Llama 3 70B").id == "llama3-70b"
    assert catalog.model("Llama 3.1 70B").id == "llama3.1-70b"
