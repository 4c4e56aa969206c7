"""The planner UI in headless Chromium against a real server: an estimate, a search, a wall
and a comparison, each drawn with data, in English and Chinese, with a clean console; a
shared link reopens its view. Screenshots go to test-artifacts/web-*.png.

Needs the ``playwright`` package and Debian's Chromium (/usr/bin/chromium); Playwright's own
browser downloads are not used.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.unit.web.conftest import Server

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
CHROMIUM = Path(os.environ.get("SCALEWALL_CHROMIUM", "/usr/bin/chromium"))
if not CHROMIUM.exists() and shutil.which("chromium") is None:
    pytest.skip(f"no Chromium at {CHROMIUM} or on PATH", allow_module_level=True)
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
PLOT_JS = """(id) => { const el = document.getElementById(id);
  return { traces: el.data ? el.data.length : 0,
           points: el.data ? el.data.reduce(
             (n, t) => n + (t.y ? t.y.filter(v => v !== null).length : 0), 0) : 0,
           marks: Array.from(el.querySelectorAll('.trace path, .trace .point'))
             .filter(p => (p.getAttribute('d') || '').length > 2).length }; }"""
WAIT_MS = 90_000
"""Longest wait for a computation on a busy 2-core machine."""


@pytest.fixture(scope="module")
def page(server: Server) -> Iterator[tuple[Any, list[str]]]:
    executable = str(CHROMIUM if CHROMIUM.exists() else shutil.which("chromium"))
    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=ARGS, headless=True)
        tab = browser.new_page(viewport={"width": 1280, "height": 1000})
        tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        tab.on("pageerror", lambda e: errors.append(str(e)))
        # Only the server itself may be asked for anything: no CDN, no outside request.
        tab.route(
            "**/*",
            lambda r: (
                r.continue_()
                if r.request.url.startswith(server.url)
                else (errors.append(r.request.url), r.abort())
            ),
        )
        yield tab, errors
        browser.close()


def _drawn(tab: Any, plot: str) -> dict[str, int]:
    tab.wait_for_function(f"document.querySelector('#{plot} .main-svg') !== null", timeout=WAIT_MS)
    return tab.evaluate(PLOT_JS, plot)  # type: ignore[no-any-return]


def _shot(tab: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    tab.screenshot(path=str(ARTIFACTS / f"web-{name}.png"), full_page=True)


def test_walk_estimate_search_wall_compare_explore(
    server: Server, page: tuple[Any, list[str]]
) -> None:
    tab, errors = page
    tab.goto(f"{server.url}/#tab=estimate&model=megatron-1.7b&gpu=h100-sxm-80gb&gpus=16&tp=2")
    tab.wait_for_selector("body[data-ready='1']", timeout=WAIT_MS)
    # the shared link computes its view on opening
    breakdown = _drawn(tab, "plot-breakdown")
    assert breakdown["points"] >= 3 and breakdown["marks"] >= 3
    assert _drawn(tab, "plot-memory")["points"] >= 2
    # the plan as plan.format_plan writes it (the API's plan_text): etp and cp are in it
    assert "tp=2" in tab.inner_text("#estimate-summary")
    assert "etp=1" in tab.inner_text("#estimate-summary")
    _shot(tab, "estimate")

    tab.click("button[data-tab='search']")
    tab.fill("#top", "3")
    tab.click("#run-search")
    assert _drawn(tab, "plot-search")["points"] == 3
    assert tab.locator("#search-table tr").count() == 4
    assert tab.inner_text("#search-table").count("etp=") == 3
    _shot(tab, "search")

    tab.click("button[data-tab='wall']")
    tab.fill("#sizes", "8,16,32")
    tab.click("#run-wall")
    wall = _drawn(tab, "plot-wall")
    assert wall["traces"] == 3 and wall["points"] >= 6
    assert _drawn(tab, "plot-losses")["points"] >= 6
    assert tab.inner_text("#wall-knee")
    _shot(tab, "wall")

    tab.click("#lang")  # Chinese from here on
    tab.click("button[data-tab='compare']")
    tab.select_option("#a_model", "megatron-1.7b")
    tab.select_option("#b_model", "megatron-1.7b")
    tab.fill("#a_gpus", "8")
    tab.fill("#b_gpus", "16")
    tab.click("#run-compare")
    compare = _drawn(tab, "plot-compare")
    assert compare["traces"] == 2 and compare["marks"] >= 4
    assert "方案 A" in tab.inner_text("#compare-table")
    assert "lang=zh" in tab.url and "tab=compare" in tab.url
    _shot(tab, "compare-zh")

    tab.click("button[data-tab='explore']")
    tab.fill("#x_models", "megatron-1.7b")
    tab.fill("#x_sizes", "8")
    tab.click("#run-explore")
    explore = _drawn(tab, "plot-explore")
    assert explore["traces"] == 1 and explore["points"] >= 1
    assert "已完成 1" in tab.inner_text("#explore-state")
    assert tab.locator("#explore-table tr").count() == 1 + explore["points"]
    _shot(tab, "explore-zh")
    assert errors == []
