"""Quotas from Helios' per-VC table and the one resolver the CLI calls."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from scalewall.errors import SpecError
from scalewall.sched.quota_sources import HELIOS_COHORT, QUOTA_TABLES, resolve_quotas

TABLE = QUOTA_TABLES["helios-earth"]


def _day(date: str) -> dict[str, float]:
    row = pd.read_csv(TABLE).set_index("date").loc[date]
    return {str(k): float(v) for k, v in row.items() if k != "total"}


def test_shipped_table_and_its_notice() -> None:
    assert (TABLE.parent / "NOTICE.md").read_text().count("HeliosArtifact") == 1
    table = pd.read_csv(TABLE)
    # Per the source's README: 25 VCs, 2020-04-01 to 2020-09-28, 784 to 1,232 GPUs in all.
    assert table.shape == (181, 27)
    assert table["total"].min() == 784 and table["total"].max() == 1232
    vcs = [c for c in table.columns if c not in ("date", "total")]
    assert (table[vcs].sum(axis=1) == table["total"]).all()


@pytest.mark.parametrize(
    ("spec", "date"),
    [
        ("helios-earth", "2020-09-28"),  # the last day by default
        ("helios-earth:last", "2020-09-28"),
        ("helios-earth:first", "2020-04-01"),
        ("helios-earth:2020-06-15", "2020-06-15"),
    ],
)
def test_a_day_of_the_table_becomes_one_queue_per_vc(spec: str, date: str) -> None:
    quotas = resolve_quotas(spec)
    expected = _day(date)
    assert {q.name: q.nominal_gpus for q in quotas.queues} == expected
    assert {q.cohort for q in quotas.queues} == {HELIOS_COHORT}


def test_max_is_the_first_day_with_the_most_gpus() -> None:
    table = pd.read_csv(TABLE)
    first_max = str(table.loc[table["total"].idxmax(), "date"])
    got = {q.name: q.nominal_gpus for q in resolve_quotas("helios-earth:max").queues}
    assert got == _day(first_max) and sum(got.values()) == 1232


def test_a_csv_path_in_the_same_format(tmp_path: Path) -> None:
    path = tmp_path / "vc.csv"
    path.write_text("date,vcA,vcB,total\n2021-01-01,8,0,8\n2021-01-02,16,8,24\n")
    assert {q.name: q.nominal_gpus for q in resolve_quotas(f"{path}:2021-01-01").queues} == {
        "vcA": 8.0,
        "vcB": 0.0,
    }
    assert sum(q.nominal_gpus for q in resolve_quotas(str(path)).queues) == 24


@pytest.mark.parametrize(
    ("spec", "text", "field"),
    [
        ("helios-earth:2021-01-01", None, "quotas day"),
        ("{path}", "date,vcA,total\n2021-01-01,-3,-3\n", "vcA"),
        ("{path}", "date,vcA,total\n2021-01-01,8\n", "columns"),
        ("{path}", "day,vcA\n2021-01-01,8\n", "quotas"),
        ("{path}:2021-01-01", "date,vcA,total\n2021-01-01,0,0\n", "quotas day"),
        ("q.toml:last", None, "quotas"),
    ],
)
def test_bad_tables_name_the_field(tmp_path: Path, spec: str, text: str | None, field: str) -> None:
    path = tmp_path / "vc.csv"
    if text is not None:
        path.write_text(text)
    with pytest.raises(SpecError) as err:
        resolve_quotas(spec.format(path=path))
    assert err.value.field == field
