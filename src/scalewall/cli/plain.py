"""Output that needs no rich: JSON documents, and the progress bar of a run that draws none.

A command's ``--json`` path imports this module only, so it never loads rich (``output`` holds
the tables and the bar that draws, and re-exports these)."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    from types import TracebackType

    from rich.progress import TaskID

JSON_VERSION = 1
"""Version of every ``--json`` layout: it changes when a key is renamed or removed."""


def plain(value: Any) -> Any:
    """``value`` as JSON-ready Python: numpy scalars as numbers, NaN and inf as None."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def print_json(data: Any, kind: str | None = None) -> None:
    """Print one JSON document (NaN and inf become null) to stdout; with ``kind``, an object
    that starts with ``"format": "scalewall-<kind>/1"``."""
    if kind is not None:
        data = {"format": f"scalewall-{kind}/{JSON_VERSION}", **data}
    print(json.dumps(plain(data), indent=2, sort_keys=False))


class NullProgress:
    """The progress bar of a run that draws none (``--json``, or stderr not a terminal): the
    calls a command makes on a rich ``Progress``, doing nothing."""

    def __enter__(self) -> NullProgress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        return None

    def add_task(self, description: str, **fields: Any) -> TaskID:
        return cast("TaskID", 0)

    def update(self, task_id: TaskID, **fields: Any) -> None:
        return None

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        return None
