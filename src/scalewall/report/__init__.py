"""The decision report: one self-contained HTML page (plotly inlined), its JSON and a summary.

Entry points: ``build_report(Scenario | None) -> Report``; ``content(report, lang)`` (the same
content as data, in one language); ``render_html(report, lang)``; ``summary_lines(report,
lang)``. Scenarios come from ``load_scenario(path)`` or the built-in ``Scenario()``.
"""

from __future__ import annotations

from scalewall.report.build import SCHEMA, Report, build_report
from scalewall.report.scenario import ClusterOption, Scenario, load_scenario

__all__ = [
    "SCHEMA",
    "ClusterOption",
    "Report",
    "Scenario",
    "build_report",
    "load_scenario",
]
