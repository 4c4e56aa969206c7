"""The reliability catalog kinds (failure-rate profiles, storage tiers), read with the catalog's
strict loader (`scalewall.catalog.load_entry`); only the directory walk lives here."""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import TypeVar

from scalewall.catalog import load_entry
from scalewall.errors import SpecError
from scalewall.reliability.specs import STORAGE_KINDS, FailureRates, StorageTier

T = TypeVar("T", FailureRates, StorageTier)

DEFAULT_FAILURE_RATES = "llama3-h100"
"""Calibrated on the largest published root-cause table (Llama 3, Table 5)."""
DEFAULT_STORAGE = "parallel-fs"


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


def _check_tier(entry: StorageTier) -> StorageTier:
    if entry.kind not in STORAGE_KINDS:
        raise SpecError("kind", entry.kind, f"valid: {', '.join(STORAGE_KINDS)}", where=entry.id)
    for name in ("write_bytes_per_s_per_node", "read_bytes_per_s_per_node"):
        if getattr(entry, name) <= 0:
            raise SpecError(name, getattr(entry, name), "must be > 0", where=entry.id)
    for name in ("write_bytes_per_s_aggregate", "read_bytes_per_s_aggregate", "commit_latency_s"):
        if getattr(entry, name) < 0:
            raise SpecError(name, getattr(entry, name), "must be >= 0 (0: no cap)", where=entry.id)
    if entry.copies < 1:
        raise SpecError("copies", entry.copies, "must be >= 1", where=entry.id)
    return entry


@cache
def failure_rate_profiles() -> dict[str, FailureRates]:
    """All built-in failure-rate profiles, by id."""
    return {k: _check_rates(v) for k, v in _load_kind("failure_rates", FailureRates).items()}


@cache
def storage_tiers() -> dict[str, StorageTier]:
    """All built-in storage tiers, by id."""
    return {k: _check_tier(v) for k, v in _load_kind("storage", StorageTier).items()}


def failure_rates(profile_id: str) -> FailureRates:
    """One failure-rate profile by id; an unknown id lists the valid ones."""
    table = failure_rate_profiles()
    if profile_id not in table:
        raise SpecError("failure_rates", profile_id, f"valid: {', '.join(sorted(table))}")
    return table[profile_id]


def storage_tier(tier_id: str) -> StorageTier:
    """One storage tier by id; an unknown id lists the valid ones."""
    table = storage_tiers()
    if tier_id not in table:
        raise SpecError("storage", tier_id, f"valid: {', '.join(sorted(table))}")
    return table[tier_id]
