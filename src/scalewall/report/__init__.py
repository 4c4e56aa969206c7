"""The decision report: one self-contained HTML page (plotly inlined), its JSON and a summary.

Entry points: ``build_report(Scenario | None) -> Report``; ``content(report, lang)`` (the same
content as data, in one language); ``render_html(report, lang)``; ``summary_lines(report,
lang)``. Scenarios come from ``load_scenario(path)`` or the built-in ``Scenario()``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scalewall.report.scenario import ClusterOption, Scenario, load_scenario

if TYPE_CHECKING:
    from scalewall.report.build import SCHEMA, Report, build_report

_LAZY = ("SCHEMA", "Report", "build_report")
"""Names from `scalewall.report.build`, imported on first use: reading a scenario (the CLI
before it builds anything) does not load the step model, search and cost models."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from scalewall.report import build

        return getattr(build, name)
    raise AttributeError(f"module 'scalewall.report' has no attribute {name!r}")


__all__ = [
    "SCHEMA",
    "ClusterOption",
    "Report",
    "Scenario",
    "build_report",
    "load_scenario",
]
