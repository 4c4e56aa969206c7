"""What every API result shares: a short ``repr``, an HTML table for notebooks, a frame."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

SCALAR_TYPES = (bool, int, float, str)


def scalar_items(data: dict[str, Any]) -> list[tuple[str, Any]]:
    """The top-level scalar entries of a result's ``to_dict()`` (nested parts left out)."""
    return [(k, v) for k, v in data.items() if isinstance(v, SCALAR_TYPES) and k != "format"]


def short_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return repr(value) if isinstance(value, str) else str(value)


class ResultDisplay:
    """Mixin for frozen result dataclasses that define ``to_dict()`` (declare them with
    ``repr=False`` so this ``__repr__`` is kept)."""

    REPR_FIELDS: tuple[str, ...] = ()
    """The fields ``repr`` shows (default: the first five scalars of ``to_dict()``)."""

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def __repr__(self) -> str:
        data = self.to_dict()
        items = (
            [(k, data[k]) for k in self.REPR_FIELDS if k in data]
            if self.REPR_FIELDS
            else scalar_items(data)[:5]
        )
        body = ", ".join(f"{k}={short_value(v)}" for k, v in items)
        return f"{type(self).__name__}({body})"

    def to_pandas(self) -> pd.DataFrame:
        """One row of the top-level scalar entries of ``to_dict()``."""
        import pandas as pd

        return pd.DataFrame([dict(scalar_items(self.to_dict()))])

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th>{html.escape(k)}</th><td>{html.escape(short_value(v))}</td></tr>"
            for k, v in scalar_items(self.to_dict())
        )
        return f"<table><caption>{html.escape(type(self).__name__)}</caption>{rows}</table>"
