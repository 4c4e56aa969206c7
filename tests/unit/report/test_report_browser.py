"""The default report opened in headless Chromium: every plot rendered with data, no console
errors; a screenshot is kept in test-artifacts/.

Needs the ``playwright`` Python package and a Chromium executable (Debian's ``chromium`` at
/usr/bin/chromium, installed by ``.ci/run``); Playwright's own browser downloads are not used.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from scalewall.report import Report, build_report
from scalewall.report.figures import FIGURES
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
}))"""

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if not CHROMIUM.exists() and shutil.which("chromium") is None:
    pytest.skip(
        f"no Chromium at {CHROMIUM} or on PATH (apt-get install chromium)", allow_module_level=True
    )


@pytest.fixture(scope="module")
def default_report() -> Report:
    return build_report()


def _open(path: Path, shot: Path) -> tuple[list[dict[str, Any]], list[str]]:
    executable = str(CHROMIUM if CHROMIUM.exists() else shutil.which("chromium"))
    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            # file:// only: the page must open offline; any network request is an error
            page.route(
                "http*://**", lambda route: (errors.append(route.request.url), route.abort())
            )
            page.goto(path.as_uri())
            page.wait_for_function(
                f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {len(FIGURES)}"
            )
            plots = page.evaluate(PLOTS_JS)
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    return plots, errors


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_plot_renders_without_console_errors(default_report: Report, lang: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    html = write_html(default_report, ARTIFACTS / f"report-{lang}.html", lang)
    plots, errors = _open(html, ARTIFACTS / f"report-{lang}.png")
    assert errors == []
    assert sorted(p["id"] for p in plots) == sorted(f"fig-{name}" for name in FIGURES)
    for plot in plots:
        assert plot["svgs"] >= 1, plot
        assert plot["traces"] >= 1 and plot["points"] >= 1, plot
        assert plot["marks"] >= 1, plot  # drawn SVG shapes with a non-empty path
    assert (ARTIFACTS / f"report-{lang}.png").stat().st_size > 10_000
