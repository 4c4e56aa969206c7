"""The report's numbers and text: sections present, losses add up, growth advice, languages."""

from __future__ import annotations

import json
import re
import string

import pytest

from scalewall.errors import SpecError
from scalewall.report import SCHEMA, Report
from scalewall.report.advice import dominant_loss, growth_path
from scalewall.report.content import advice_text, content, count_text, summary_lines
from scalewall.report.figures import FIGURES
from scalewall.report.html import render_html
from scalewall.report.strings import EN, LANGUAGES, ZH, strings
from scalewall.units import DAY_S


def _fields(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def test_every_language_has_every_string_with_the_same_fields() -> None:
    assert set(EN) == set(ZH)
    for key in EN:
        assert _fields(EN[key]) == _fields(ZH[key]), key


def test_unknown_language_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match="lang='fr'"):
        strings("fr")


def test_data_is_json_and_has_every_section(small_report: Report) -> None:
    data = json.loads(json.dumps(small_report.data))
    assert data["schema"] == SCHEMA
    names = [o["name"] for o in data["options"]]
    assert names == ["256 x H100", "4,096 x H100"]
    for option in data["options"]:
        for key in ("sweep", "best", "reliability", "cost", "training", "bom", "candidates"):
            assert option[key], key
        assert option["best"]["memory_total_bytes"] <= option["best"]["hbm_bytes"]
        assert option["bom"]["tiers"]
    assert [s["gpus"] for s in data["growth"]] == [256, 1024, 4096]


def test_mfu_and_losses_add_up_to_one_at_every_size(small_report: Report) -> None:
    for option in small_report.data["options"]:
        for row in option["sweep"]["rows"]:
            step_parts = {k: v for k, v in row["loss_fracs"].items() if k != "goodput"}
            # the step's parts add up exactly; float sums over ~10 terms
            assert row["mfu"] + sum(step_parts.values()) == pytest.approx(1.0, rel=1e-9)
            assert 0.0 < row["goodput_frac"] <= 1.0


def test_the_larger_cluster_trains_faster_and_fails_more(small_report: Report) -> None:
    small, big = small_report.data["options"]
    assert big["training"]["calendar_s"] < small["training"]["calendar_s"]
    assert (
        big["reliability"]["interruptions_per_day"] > small["reliability"]["interruptions_per_day"]
    )
    assert big["cost"]["capex_usd"] > small["cost"]["capex_usd"]


def test_growth_names_the_new_network_tier_before_it_is_needed(small_report: Report) -> None:
    stages = small_report.data["growth"]
    tiers = [s["switch_tiers"] for s in stages]
    assert tiers == [2, 2, 3]
    kinds = [[i["kind"] for i in s["invest"]] for s in stages]
    assert "network_tier" in kinds[1]  # 1,024 -> 4,096 adds the core tier
    assert "network_tier" not in kinds[0]
    assert stages[-1]["next_gpus"] is None and stages[-1]["invest"] == []


def _row(gpus: int, tokens_per_s: float, **losses: float) -> dict[str, object]:
    base = dict.fromkeys(("compute_efficiency", "dp_comm", "straggler", "goodput"), 0.0)
    return {"gpus": gpus, "tokens_per_s": tokens_per_s, "loss_fracs": {**base, **losses}}


def test_dominant_loss_leaves_kernel_efficiency_aside() -> None:
    row = _row(8, 1.0, compute_efficiency=0.3, dp_comm=0.1, straggler=0.05)
    assert dominant_loss(row) == "dp_comm"


def test_growth_path_skips_sizes_without_a_plan(small_report: Report) -> None:
    rows = small_report.data["options"][1]["sweep"]["rows"]
    assert [s["gpus"] for s in growth_path(rows, (256, 3000, 4096))] == [256, 4096]


@pytest.mark.parametrize("lang", sorted(LANGUAGES))
def test_every_advice_renders_in_every_language(small_report: Report, lang: str) -> None:
    t = strings(lang)
    kinds = [k.split(".", 1)[1] for k in t if k.startswith("inv.")]
    for kind in kinds:
        assert advice_text(t, {"kind": kind, "part": "dp_comm", "tier": "core"})
    needs = [k.split(".", 1)[1] for k in t if k.startswith("need.")]
    for kind in needs:
        assert advice_text(t, {"kind": kind}, "need")


def test_summary_and_content_in_both_languages(small_report: Report) -> None:
    en = summary_lines(small_report, "en")
    zh = summary_lines(small_report, "zh")
    assert len(en) == len(zh)
    assert en[0].startswith("Cluster decision report") and zh[0].startswith("集群决策报告")
    page = content(small_report, "zh")
    assert page["comparison"]["rows"][0][0] == "规模"
    assert len(page["comparison"]["columns"]) == 3
    assert page["data"] is small_report.data


def test_html_is_self_contained_with_every_figure(small_report: Report) -> None:
    page = render_html(small_report, "en")
    for fig in FIGURES:
        assert f'id="fig-{fig}"' in page
    assert page.count("Plotly.newPlot") == len(FIGURES)
    assert "<script src=" not in page.replace('<script src="data:', "")  # nothing fetched
    assert "plotly.js v" in page  # the library is inlined


def test_zh_page_has_no_english_section_titles(small_report: Report) -> None:
    page = render_html(small_report, "zh")
    text = re.sub(r"<script.*?</script>", "", page, flags=re.S)  # plotly.js has English words
    assert '<html lang="zh">' in text
    keys = ("sec.compare", "sec.growth", "sec.failures", "dim.scale", "col.invest", "sec.verdict")
    keys += ("sec.breakeven", "sec.stages", "stage.name.bringup", "stage.auto_yes", "dim.total")
    for key in keys:
        assert (EN[key] in text, ZH[key] in text) == (False, True), key


def test_count_text() -> None:
    assert count_text(15e12) == "15T"
    assert count_text(405e9) == "405B"


def test_largest_model_in_target_time_is_monotone_in_size(small_report: Report) -> None:
    small, big = small_report.data["options"]
    for a, b in zip(small["candidates"], big["candidates"], strict=True):
        assert a["id"] == b["id"]
        assert b["calendar_s"] <= a["calendar_s"] + DAY_S * 1e-6
