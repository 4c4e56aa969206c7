"""The report's prediction band: in the data, drawn per option in the wall figure, and said in
the summary (from which size it is too wide to trust, from which it extrapolates)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from scalewall.report import Report
from scalewall.report.content import band_lines, content
from scalewall.report.figures import band_colour, option_colour, wall_figure
from scalewall.report.strings import LANGUAGES, strings


def test_band_brackets_every_planned_size(small_report: Report) -> None:
    for o in small_report.data["options"]:
        band = o["sweep"]["band"]
        rows = {r["gpus"]: r for r in o["sweep"]["rows"]}
        assert band["basis"] == "validation"  # the report takes no calibration
        assert [r["gpus"] for r in band["rows"]] == list(rows)
        for r in band["rows"]:
            low, high = r["tokens_per_s_interval"]
            assert low < rows[r["gpus"]]["tokens_per_s"] < high, (o["name"], r["gpus"])
            assert r["relative_width"] == pytest.approx(
                (high - low) / rows[r["gpus"]]["tokens_per_s"]
            )
        wide = [r["gpus"] for r in band["rows"] if r["relative_width"] > band["max_relative_width"]]
        assert band["too_wide_from_gpus"] == (wide[0] if wide else None)


def _band_traces(fig: Any) -> dict[str, Any]:
    return {t.meta["band"]: t for t in fig.data if isinstance(t.meta, dict) and "band" in t.meta}


def test_each_option_band_is_drawn_behind_its_line_in_its_colour(small_report: Report) -> None:
    t = strings("en")
    data = small_report.data
    fig = wall_figure(t, data)
    bands = _band_traces(fig)
    names = [o["name"] for o in data["options"]]
    assert sorted(bands) == sorted(names)
    order = [tr.name for tr in fig.data]
    for i, o in enumerate(data["options"]):
        trace = bands[o["name"]]
        assert trace.fill == "toself" and trace.legendgroup == o["name"]
        assert trace.fillcolor == band_colour(i)
        r, g, b = (int(option_colour(i)[k : k + 2], 16) for k in (1, 3, 5))
        assert trace.fillcolor.startswith(f"rgba({r},{g},{b},")
        rows = o["sweep"]["band"]["rows"]
        assert (
            list(trace.y)
            == [r["tokens_per_s_interval"][1] for r in rows]
            + [r["tokens_per_s_interval"][0] for r in rows][::-1]
        )
        group = rows[0]["group"]
        assert (
            trace.name
            == f"{o['name']}: 90.0% band (out-of-sample errors of validation group {group})"
        )
        assert order.index(trace.name) < order.index(o["name"])  # drawn behind the line
        assert trace.name not in names  # the browser test's colour check skips it


def test_summary_says_where_the_band_is_too_wide_in_both_languages(small_report: Report) -> None:
    for lang in LANGUAGES:
        page = content(small_report, lang)
        assert page["bands"] and set(page["bands"]) <= set(page["summary"])
        for o in small_report.data["options"]:
            wide = o["sweep"]["band"]["too_wide_from_gpus"]
            mine = [line for line in page["bands"] if line.startswith(o["name"])]
            assert len(mine) == 2, (lang, mine)  # too wide (or within), and extrapolation
            if wide is not None:
                assert f"{wide:,}" in mine[0]


def _with_band(report: Report, **band: Any) -> dict[str, Any]:
    data = copy.deepcopy(report.data)
    for o in data["options"]:
        o["sweep"]["band"].update(band)
    return data


def test_band_lines_follow_the_band(small_report: Report) -> None:
    t = strings("en")
    calm = band_lines(
        t, _with_band(small_report, too_wide_from_gpus=None, extrapolated_from_gpus=None)
    )
    assert all("stays within 25.0%" in line or "no size up to" in line for line in calm)
    far = band_lines(
        t, _with_band(small_report, too_wide_from_gpus=1024, extrapolated_from_gpus=256)
    )
    assert any("wider than 25.0% of the prediction from 1,024 GPUs" in line for line in far)
    assert any("from 256 GPUs on" in line and "extrapolation" in line for line in far)
    calibrated = _with_band(small_report, basis="calibrated", extrapolated_from_gpus=None)
    lines = band_lines(t, calibrated)
    assert len(lines) == len(calibrated["options"])  # no extrapolation claim without groups
    assert all("(calibrated)" in line for line in lines)
    fig = wall_figure(t, calibrated)
    assert all(tr.name.endswith("90.0% band (calibrated)") for tr in _band_traces(fig).values())
