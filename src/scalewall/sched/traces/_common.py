"""Shared checks for trace readers: one clear line naming the file and row of a bad value."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from scalewall.errors import SpecError

MIB_BYTES = 2**20
GIB_BYTES = 2**30


@dataclass(frozen=True, kw_only=True)
class RecordedAttempt:
    """One scheduling attempt of a job as a trace records it."""

    run_s: float
    """Wall seconds the attempt ran on the trace's cluster (end - start)."""
    machine: str
    """The first machine the attempt lists ("" when it lists none)."""
    failed: bool
    """The attempt ended in a failure and the job was retried."""


@dataclass(frozen=True, kw_only=True)
class TraceRead:
    """A trace as canonical job columns (see ``scalewall.sched.jobs.JOB_COLUMNS``)."""

    frame: pd.DataFrame
    bad_rows: int
    """Rows skipped because a field was malformed (only with ``skip_bad_rows``)."""
    source: str
    node_failures: tuple[tuple[float, str], ...] = ()
    """Node failures the trace records, as (seconds on the jobs' clock, node name); empty for
    traces without node names (openb, Helios, Acme and PAI job tables carry none)."""
    attempts: tuple[tuple[str, tuple[RecordedAttempt, ...]], ...] = ()
    """Per job id with more than one recorded attempt, its attempts in order (Philly); the
    job's ``run_s`` is their sum, so a replay of them adds no failure on top."""


class TraceRowError(SpecError):
    """A malformed trace row: ``file:row: field=value is invalid; ...``."""


def read_csv_text(path: Path, *, names: list[str] | None = None) -> pd.DataFrame:
    """All cells as strings (empty cells as ""); a missing file is a user error."""
    if not path.is_file():
        raise SpecError("trace", str(path), "no such file")
    try:
        return pd.read_csv(
            path, dtype=str, keep_default_na=False, header=None if names else "infer", names=names
        )
    except pd.errors.EmptyDataError:
        raise SpecError("trace", str(path), "an empty file; a CSV with a header row") from None
    except UnicodeDecodeError:
        raise SpecError("trace", str(path), "not UTF-8 text; a CSV file") from None
    except pd.errors.ParserError as exc:
        reason = str(exc).strip().splitlines()[-1]
        raise SpecError("trace", str(path), f"not a readable CSV: {reason}") from None


def numeric(text: pd.Series, *, allow_empty: bool = False) -> npt.NDArray[np.float64]:
    """Column as floats; malformed cells become NaN (empty cells too unless ``allow_empty``)."""
    stripped = text.astype(str).str.strip()
    values = pd.to_numeric(stripped.where(stripped != ""), errors="coerce")
    return np.asarray(values, dtype=np.float64)


def not_whole(values: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    """True where a value is missing, negative or fractional."""
    return np.asarray(np.isnan(values) | (values < 0) | (values != np.round(values)))


def blank(text: pd.Series) -> npt.NDArray[np.bool_]:
    """True where a text cell is empty."""
    return np.asarray(text.astype(str).str.strip() == "")


def check_rows(
    path: Path,
    raw: pd.DataFrame,
    bad: dict[str, npt.NDArray[np.bool_]],
    valid: dict[str, str],
    *,
    skip_bad_rows: bool,
    header_lines: int = 1,
) -> npt.NDArray[np.bool_]:
    """Rows to keep. Without ``skip_bad_rows`` the first bad row raises :class:`TraceRowError`
    naming the file, the 1-based line number, the field and its value."""
    any_bad = np.zeros(len(raw), dtype=bool)
    for mask in bad.values():
        any_bad |= mask
    if any_bad.any() and not skip_bad_rows:
        row = int(np.flatnonzero(any_bad)[0])
        field = next(f for f, mask in bad.items() if mask[row])
        value = raw.iloc[row][field] if field in raw.columns else None
        raise TraceRowError(
            field,
            value,
            valid[field] + " (use --skip-bad-rows to skip such rows)",
            where=f"{path}:{row + 1 + header_lines}",
        )
    return ~any_bad


def require_columns(path: Path, raw: pd.DataFrame, needed: list[str]) -> None:
    """A file without the format's columns is a user error naming them."""
    missing = [c for c in needed if c not in raw.columns]
    if missing:
        raise SpecError("columns", missing, f"{path} needs columns {', '.join(needed)}")


def seconds_since(
    text: pd.Series, origin: pd.Timestamp | None, fmt: str | None = None
) -> tuple[npt.NDArray[np.float64], pd.Timestamp | None]:
    """Timestamps as seconds after ``origin`` (the earliest one when ``origin`` is None).

    Stamps with UTC offsets are compared in UTC, so a file mixing offsets (Acme's Seren logs
    at +08:00, Kalos at +00:00) gives true differences; stamps without one are read as UTC,
    which leaves differences between them unchanged. Without ``fmt`` any ISO 8601 form is
    accepted row by row."""
    stamps = pd.to_datetime(
        text.replace({"": None, "None": None}),
        errors="coerce",
        format=fmt or "ISO8601",
        utc=True,
    )
    if origin is None:
        origin = stamps.min() if stamps.notna().any() else None
    if origin is None:
        return np.full(len(text), np.nan), None
    seconds = np.asarray((stamps - origin).dt.total_seconds(), dtype=np.float64)
    return seconds, origin


Reader = Callable[..., TraceRead]
