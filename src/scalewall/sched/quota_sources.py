"""Where a replay's tenant queues come from: a TOML quota file, or a per-tenant quota table
such as Helios' GPUs per virtual cluster per day (``resolve_quotas``, the one resolver the CLI
and the API call).

The Helios table (Hu et al., SC'21; ``data/helios/NOTICE.md``) has one row per day
(``date``), one column per virtual cluster (VC) and a ``total``. A day's row becomes one queue
per VC with that many nominal GPUs, all in one cohort (``HELIOS_COHORT``), so a VC's unused
quota is lent to the others as Kueue lends within a cohort; in Helios itself a VC's GPUs are
its own (give the queues ``lending_limit = 0`` in a TOML file for that).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from scalewall.errors import SpecError
from scalewall.sched.tenancy import Quotas, TenantQueue, load_quotas

HELIOS_DIR = Path(__file__).resolve().parent / "data" / "helios"
QUOTA_TABLES = {"helios-earth": HELIOS_DIR / "Earth_gpu_number.csv"}
"""Shipped per-tenant quota tables by id."""
HELIOS_COHORT = "helios"
DAY_CHOICES = ("last", "first", "max")
"""Besides a date: the table's last or first day, or its first day with the most GPUs in all."""


def resolve_quotas(spec: str) -> Quotas:
    """Queues from ``spec``: a TOML quota file; ``helios-earth`` or a CSV in its format, with an
    optional ``:DAY`` (a ``YYYY-MM-DD`` of the table, ``last`` (default), ``first`` or
    ``max``)."""
    source, _, day = spec.partition(":")
    if source in QUOTA_TABLES:
        return helios_quotas(QUOTA_TABLES[source], day or "last")
    path = Path(source)
    if path.suffix.lower() == ".csv":
        return helios_quotas(path, day or "last")
    if day:
        raise SpecError("quotas", spec, "a :DAY only follows helios-earth or a quota table .csv")
    return load_quotas(path)


def helios_quotas(path: Path, day: str = "last") -> Quotas:
    """One queue per VC with its GPUs on ``day`` (see :data:`DAY_CHOICES`)."""
    header, rows = _read_table(path)
    vcs = [c for c in header[1:] if c != "total"]
    if day == "max":
        chosen = max(rows.values(), key=sum)  # the first of the largest days
    elif day in ("last", "first"):
        chosen = rows[max(rows) if day == "last" else min(rows)]
    elif day in rows:
        chosen = rows[day]
    else:
        valid = f"a date of the table ({min(rows)} to {max(rows)}) or {', '.join(DAY_CHOICES)}"
        raise SpecError("quotas day", day, valid, where=str(path))
    if sum(chosen) <= 0:
        raise SpecError("quotas day", day, "a day with GPUs assigned", where=str(path))
    return Quotas(
        queues=tuple(
            TenantQueue(name=vc, nominal_gpus=gpus, cohort=HELIOS_COHORT)
            for vc, gpus in zip(vcs, chosen, strict=True)
        )
    )


def _read_table(path: Path) -> tuple[list[str], dict[str, list[float]]]:
    """Header and per-day GPU counts (the ``total`` column dropped); one-line errors."""
    where = str(path)
    try:
        with path.open(newline="", encoding="utf-8") as f:
            lines = list(csv.reader(f))
    except OSError as err:
        raise SpecError("quotas", where, f"a readable quota table ({err.strerror})") from err
    if not lines or not lines[0] or lines[0][0] != "date" or len(lines) < 2:
        raise SpecError("quotas", where, "a table with a 'date' column, one row per day")
    header = lines[0]
    keep = [i for i, c in enumerate(header) if i > 0 and c != "total"]
    rows: dict[str, list[float]] = {}
    for number, line in enumerate(lines[1:], start=2):
        if len(line) != len(header):
            raise SpecError(
                "columns", len(line), f"{len(header)} as the header", where=f"{where} row {number}"
            )
        rows[line[0]] = [_gpus(line[i], header[i], f"{where} row {number}") for i in keep]
    return header, rows


def _gpus(text: str, column: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise SpecError(column, text, "a number of GPUs >= 0", where=where)
    return value
