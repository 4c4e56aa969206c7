"""The reliability catalog kinds (failure-rate profiles, storage tiers), read with the catalog's
strict loader (`scalewall.catalog.load_entry`); only the directory walk lives here."""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import TypeVar

from scalewall.catalog import load_entry
from scalewall.errors import SpecError
from scalewall.reliability.specs import FailureRates
from scalewall.storage import DEFAULT_STORAGE, StorageTier, storage_tier, storage_tiers

__all__ = [
    "DEFAULT_FAILURE_RATES",
    "DEFAULT_STORAGE",
    "StorageTier",
    "failure_rate_profiles",
    "failure_rates",
    "storage_tier",
    "storage_tiers",
]

T = TypeVar("T", bound=FailureRates)

DEFAULT_FAILURE_RATES = "llama3-h100"
"""Calibrated on the largest published root-cause table (Llama 3, Table 5)."""


def _kind_dir(kind: str) -> Path:
    return Path(str(resources.files("scalewall.catalog") / "data" / kind))


def _load_kind(kind: str, cls: type[T]) -> dict[str, T]:
    out: dict[str, T] = {}
    for path in sorted(_kind_dir(kind).glob("*.toml")):
        entry = load_entry(path, cls)
        if entry.id != path.stem:
            valid = f"must equal the file name {path.stem!r}"
            raise SpecError("id", entry.id, valid, where=str(path))
        out[entry.id] = entry
    return out


def _check_rates(entry: FailureRates) -> FailureRates:
    for name, value in vars(entry).items():
        if name.endswith("_day") and value < 0:
            raise SpecError(name, value, "a failure rate must be >= 0", where=entry.id)
    return entry


@cache
def failure_rate_profiles() -> dict[str, FailureRates]:
    """All built-in failure-rate profiles, by id."""
    return {k: _check_rates(v) for k, v in _load_kind("failure_rates", FailureRates).items()}


def failure_rates(profile_id: str) -> FailureRates:
    """One failure-rate profile by id; an unknown id lists the valid ones."""
    table = failure_rate_profiles()
    if profile_id not in table:
        raise SpecError("failure_rates", profile_id, f"valid: {', '.join(sorted(table))}")
    return table[profile_id]
