"""The default report (Llama-3-70B) and the Llama-3.1-405B one opened in headless Chromium:
every plot rendered with data and no console errors, and the drawn figures read back to check
that they tell the truth: each option's legend colour is its trace colour, the same in every
figure; stacked parts add up to their stated totals; no tick is NaN or unformatted; the
verdict is on the first screen. Screenshots (full page and first screen) are kept in
test-artifacts/.

Needs the ``playwright`` Python package and a Chromium executable (Debian's ``chromium`` at
/usr/bin/chromium, installed by ``.ci/run``); Playwright's own browser downloads are not used.
One browser serves every page.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scalewall.report import Report, Scenario, build_report
from scalewall.report.figures import FIGURES, option_colour
from scalewall.report.html import write_html

CHROMIUM = Path(os.environ.get("SCALEWALL_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PLOTS_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(el => ({
  id: el.id,
  traces: el.data.length,
  points: el.data.reduce((n, t) => n + (t.y ? t.y.length : 0), 0),
  svgs: el.querySelectorAll('svg.main-svg').length,
  marks: Array.from(el.querySelectorAll('.trace path, .trace .point'))
    .filter(p => (p.getAttribute('d') || '').length > 2).length,
  data: el._fullData.map(t => ({
    name: t.name, type: t.type, x: Array.from(t.x || []), y: Array.from(t.y || []),
    yaxis: t.yaxis || 'y', showlegend: t.showlegend,
    colour: (t.type === 'bar' ? t.marker.color : (t.line && t.mode.includes('lines')
      ? t.line.color : t.marker.color)),
  })),
  stacks: (el.layout.meta || {}).stacks || null,
  legend: Array.from(el.querySelectorAll('.legend .traces')).map(g => {
    const path = g.querySelector('.legendsymbols path');
    const fill = path ? path.style.fill : '';
    const colour = fill && fill !== 'none' ? fill : (path ? path.style.stroke : '');
    return {text: g.querySelector('.legendtext').textContent, colour: colour};
  }),
  ticks: Array.from(el.querySelectorAll('.xtick text, .ytick text, .x2tick text, .y2tick text,'
    + ' .x3tick text, .y3tick text')).map(e => e.textContent),
}))"""
VERDICT_JS = """() => { const r = document.getElementById('verdict').getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, items: document.querySelectorAll('#verdict li').length,
          height: window.innerHeight}; }"""
UNFORMATTED = re.compile(r"NaN|undefined|Infinity|\d\.\d{4,}|\d{7,}")
"""A tick with NaN, five or more decimals or seven bare digits is not formatted for a reader."""

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if not CHROMIUM.exists() and shutil.which("chromium") is None:
    pytest.skip(
        f"no Chromium at {CHROMIUM} or on PATH (apt-get install chromium)", allow_module_level=True
    )


def _rgb(colour: str) -> str:
    """'#1F77B4' or 'rgb(31, 119, 180)' -> 'rgb(31, 119, 180)'."""
    if colour.startswith("#"):
        r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
        return f"rgb({r}, {g}, {b})"
    return colour.replace(" ", "").replace(",", ", ")


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    default = Scenario()
    return {
        "llama3-70b": build_report(default),
        "llama3.1-405b": build_report(dataclasses.replace(default, model="llama3.1-405b")),
    }


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = str(CHROMIUM if CHROMIUM.exists() else shutil.which("chromium"))
    with sync_api.sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=executable, args=ARGS, headless=True)
        try:
            yield instance
        finally:
            instance.close()


def _open(browser: Any, path: Path, stem: str) -> tuple[list[dict[str, Any]], dict, list[str]]:
    errors: list[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    # file:// only: the page must open offline; any network request is an error
    page.route("http*://**", lambda route: (errors.append(route.request.url), route.abort()))
    page.goto(path.as_uri())
    page.wait_for_function(
        f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {len(FIGURES)}"
    )
    plots = page.evaluate(PLOTS_JS)
    verdict = page.evaluate(VERDICT_JS)
    page.screenshot(path=str(ARTIFACTS / f"{stem}-first-screen.png"))
    page.screenshot(path=str(ARTIFACTS / f"{stem}.png"), full_page=True)
    page.close()
    return plots, verdict, errors


@pytest.fixture(scope="module")
def rendered(reports: dict[str, Report], browser: Any) -> dict[str, Any]:
    ARTIFACTS.mkdir(exist_ok=True)
    out = {}
    for model, lang in (("llama3-70b", "en"), ("llama3-70b", "zh"), ("llama3.1-405b", "en")):
        stem = f"report-{model}-{lang}"
        html = write_html(reports[model], ARTIFACTS / f"{stem}.html", lang)
        out[stem] = (reports[model], *_open(browser, html, stem))
    return out


def test_every_plot_renders_without_console_errors(rendered: dict[str, Any]) -> None:
    for stem, (_, plots, _, errors) in rendered.items():
        assert errors == [], stem
        assert sorted(p["id"] for p in plots) == sorted(f"fig-{name}" for name in FIGURES)
        for plot in plots:
            assert plot["svgs"] >= 1, plot["id"]
            assert plot["traces"] >= 1 and plot["points"] >= 1, plot["id"]
            assert plot["marks"] >= 1, plot["id"]  # drawn SVG shapes with a non-empty path
        assert (ARTIFACTS / f"{stem}.png").stat().st_size > 10_000


def test_the_verdict_is_on_the_first_screen(rendered: dict[str, Any]) -> None:
    for stem, (_, _, verdict, _) in rendered.items():
        assert 1 <= verdict["items"] <= 5, stem
        assert verdict["top"] >= 0 and verdict["bottom"] <= verdict["height"], (stem, verdict)


def test_each_option_has_one_colour_in_traces_and_legends(rendered: dict[str, Any]) -> None:
    for stem, (report, plots, _, _) in rendered.items():
        names = [o["name"] for o in report.data["options"]]
        seen: dict[str, set[str]] = defaultdict(set)
        for plot in plots:
            legend = {item["text"]: _rgb(item["colour"]) for item in plot["legend"]}
            for trace in plot["data"]:
                if trace["name"] not in names:
                    continue
                colour = _rgb(trace["colour"])
                seen[trace["name"]].add(colour)
                if trace["showlegend"]:
                    assert legend[trace["name"]] == colour, (stem, plot["id"], trace["name"])
        for i, name in enumerate(names):
            assert seen[name] == {_rgb(option_colour(i))}, (stem, name, seen[name])
        assert len({next(iter(c)) for c in seen.values()}) == len(names)


def test_stack_parts_are_distinct_and_add_up_to_the_stated_totals(
    rendered: dict[str, Any],
) -> None:
    for stem, (_, plots, _, _) in rendered.items():
        stacked = [p for p in plots if p["stacks"]]
        assert {p["id"] for p in stacked} >= {"fig-losses", "fig-failures", "fig-bom"}
        for plot in stacked:
            for axis, totals in plot["stacks"].items():
                bars = [t for t in plot["data"] if t["type"] == "bar" and t["yaxis"] == axis]
                colours = [_rgb(t["colour"]) for t in bars]
                assert len(set(colours)) == len(colours), (stem, plot["id"], axis)
                sums: dict[str, float] = defaultdict(float)
                for bar in bars:
                    for x, y in zip(bar["x"], bar["y"], strict=True):
                        sums[x] += y
                for label, total in totals.items():
                    # parts are the model's own numbers: they add up to rounding
                    assert sums[label] == pytest.approx(total, rel=0.01), (stem, plot["id"])


def test_no_tick_is_nan_or_unformatted(rendered: dict[str, Any]) -> None:
    for stem, (_, plots, _, _) in rendered.items():
        for plot in plots:
            assert plot["ticks"], plot["id"]
            bad = [tick for tick in plot["ticks"] if UNFORMATTED.search(tick)]
            assert bad == [], (stem, plot["id"], bad)
