"""The price book: every price cites a source and a date; user files override field by field."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scalewall.cost import load_prices
from scalewall.cost.specs import RATE_NAMES
from scalewall.errors import SpecError


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "my-prices.toml"
    path.write_text(text)
    return path


def test_every_builtin_price_has_a_source_and_a_date() -> None:
    table = load_prices().table()
    assert set(RATE_NAMES) <= set(table.loc[table.section == "rates", "key"])
    for row in table.itertuples():
        assert len(row.source) > 20, f"{row.section}.{row.key} cites no real source"
        assert re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", row.date), row.key


def test_override_replaces_one_field_and_keeps_the_rest(tmp_path: Path) -> None:
    base = load_prices()
    path = _write(
        tmp_path,
        '[rates.energy_usd_per_j]\nvalue = 1.0e-8\nsource = "our utility contract 2026"\n'
        'date = "2026-01"\n',
    )
    book = load_prices([path])
    assert book.rates.energy_usd_per_j.value == 1.0e-8
    assert book.rates.energy_usd_per_j.source == "our utility contract 2026"
    assert book.rates.pue == base.rates.pue
    assert book.files[-1] == str(path)


def test_override_must_cite_its_own_source(tmp_path: Path) -> None:
    path = _write(tmp_path, "[rates.pue]\nvalue = 1.2\n")
    with pytest.raises(SpecError, match=r"my-prices\.toml: rates\.pue\.source=None"):
        load_prices([path])


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (
            '[rates.pue]\nvalue = "low"\nsource = "s"\ndate = "2026"\n',
            r"my-prices\.toml \[rates\.pue\]: value='low' is invalid",
        ),
        ('[rates.pue]\nvalue = 0.9\nsource = "s"\ndate = "2026"\n', r"rates\.pue\.value=0\.9"),
        ("[rates.cheapness]\nvalue = 1\n", r"rates\.cheapness=.* unknown rate"),
        ("[gizmos.x]\nusd = 1\n", r"gizmos=.* unknown section"),
        (
            '[servers.dgx-h100]\nusd = -5.0\nsource = "s"\ndate = "2026"\n',
            r"servers\.dgx-h100\.usd=-5\.0 is invalid; must be >= 0",
        ),
        (
            '[servers.dgx-h100]\nusd = 5.0\nsource = "s"\ndate = "last year"\n',
            r"servers\.dgx-h100\.date='last year'",
        ),
        (
            '[servers.my-box]\nusd = 5.0\nsource = "s"\n',
            r"\[servers\.my-box\]: date=None is invalid; required key is missing",
        ),
        ("[servers\nusd = 1\n", r"my-prices\.toml: not valid TOML"),
    ],
)
def test_bad_price_files_name_the_file_and_the_key(tmp_path: Path, text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        load_prices([_write(tmp_path, text)])


def test_a_new_server_can_be_priced_by_the_user(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '[servers.hgx-h200]\nusd = 330000.0\nsource = "vendor quote Q-123"\ndate = "2026-02-01"\n',
    )
    assert load_prices([path]).server("hgx-h200").usd == 330000.0


def test_missing_price_says_how_to_add_one() -> None:
    with pytest.raises(SpecError, match=r"no \[servers\.hgx-h800\] price; priced: .*--prices"):
        load_prices().server("hgx-h800")


def test_rental_matches_the_longest_accelerator_prefix() -> None:
    book = load_prices()
    found = book.rental("h100-sxm-80gb")
    assert found is not None and found[0] == "h100"
    gb = book.rental("gb200")
    assert gb is not None and gb[0] == "gb200"  # not b200
    assert book.rental("mi300x") is None
