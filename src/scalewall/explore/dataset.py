"""The exploration's Parquet dataset: ``model=<id>/accelerator=<id>/part-<hash>.parquet``.

Each finished chunk is written as one file per partition, first under a hidden temporary name
and then renamed (atomic on one file system), under a name hashed from the point keys it holds:
a reader never sees half a file, and the same chunk written twice replaces itself. A rerun reads
the point keys already written and skips those points, so each point is written once.
``_explore.json`` records the settings key; files starting with ``_`` or ``.`` are not data.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from scalewall.errors import ScalewallError
from scalewall.explore.points import COLUMNS
from scalewall.sweep import store

PARTITIONS = ("model", "accelerator")
MANIFEST = "_explore.json"

_FILE_SCHEMA = pa.schema(
    [(name, pa.type_for_alias(kind)) for name, kind in COLUMNS.items() if name not in PARTITIONS]
)
_PARTITIONING = pads.partitioning(pa.schema([(p, pa.string()) for p in PARTITIONS]), flavor="hive")


def open_dataset(root: Path, settings: str, *, fresh: bool) -> set[str]:
    """Prepare ``root`` for a run with settings key ``settings``; the point keys written so far.

    A dataset written under other settings (search space, stack, model code) is refused unless
    ``fresh``, which deletes its part files first."""
    manifest = root / MANIFEST
    if manifest.exists() and not fresh:
        written = json.loads(manifest.read_text()).get("settings")
        if written != settings:
            raise ScalewallError(
                f"out={str(root)!r} holds an exploration with other settings (search space, "
                "stack, budget or model code); pass --fresh to replace it or choose another --out"
            )
    if fresh:
        for part in root.glob("*=*/*=*/part-*.parquet"):
            part.unlink()
    root.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({"format": "scalewall-explore/1", "settings": settings}))
    return written_keys(root)


def _part_files(root: Path) -> list[Path]:
    return sorted(root.glob("*=*/*=*/part-*.parquet"))


def written_keys(root: Path) -> set[str]:
    """Point keys already in the dataset."""
    keys: set[str] = set()
    for part in _part_files(root):
        keys.update(pq.read_table(part, columns=["point_key"]).column(0).to_pylist())
    return keys


def write_rows(root: Path, rows: Sequence[dict[str, Any]]) -> list[Path]:
    """Write one chunk's rows: one file per (model, accelerator), atomically, named by its keys."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["model"], row["accelerator"]), []).append(row)
    paths = []
    for (model, accelerator), group in sorted(groups.items()):
        group = sorted(group, key=lambda r: str(r["point_key"]))
        folder = (
            root / f"model={quote(model, safe='')}" / f"accelerator={quote(accelerator, safe='')}"
        )
        folder.mkdir(parents=True, exist_ok=True)
        name = store.key_of([r["point_key"] for r in group])[:24]
        table = pa.Table.from_pylist(
            [{k: v for k, v in r.items() if k not in PARTITIONS} for r in group], _FILE_SCHEMA
        )
        temporary = folder / f".part-{name}.{os.getpid()}.tmp"
        pq.write_table(table, temporary)
        final = folder / f"part-{name}.parquet"
        os.replace(temporary, final)
        paths.append(final)
    return paths


def load(path: Path | str) -> pd.DataFrame:
    """The exploration at ``path`` as one DataFrame, one row per point, sorted by point key."""
    root = Path(path)
    if not root.is_dir():
        raise ScalewallError(f"path={str(root)!r} is invalid; an exploration's dataset folder")
    if not _part_files(root):
        return pd.DataFrame({c: pd.Series(dtype=object) for c in COLUMNS})
    dataset = pads.dataset(root, format="parquet", partitioning=_PARTITIONING)
    frame: pd.DataFrame = dataset.to_table().to_pandas()
    frame = frame[list(COLUMNS)].sort_values("point_key", kind="stable")
    return frame.reset_index(drop=True)
