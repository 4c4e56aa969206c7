"""One self-contained HTML page: the text content of `content()` and the plotly figures, with
plotly.js inlined once (the page opens offline)."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from scalewall.errors import ScalewallError
from scalewall.report.build import Report
from scalewall.report.content import content, count_text
from scalewall.report.figures import FIGURES
from scalewall.report.strings import strings

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.6rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; margin: 0.8rem 0; }
th, td { border: 1px solid #ddd; padding: 0.35rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f4f6f8; } .note { color: #555; font-size: 0.9rem; }
ul.summary li { margin: 0.25rem 0; }
ul.verdict { font-size: 1.05rem; background: #f4f8fb; border-left: 4px solid #1f77b4;
  padding: 0.6rem 0.6rem 0.6rem 2rem; } ul.verdict li { margin: 0.3rem 0; }
"""

SECTIONS: tuple[tuple[str, str | None, str | None], ...] = (
    ("breakeven", "breakeven", None),
    ("compare", None, "comparison"),
    ("stages", None, "stages"),
    ("wall", "wall", None),
    ("efficiency", "efficiency", None),
    ("losses", "losses", None),
    ("memory", "memory", None),
    ("failures", "failures", "failures"),
    ("bom", "bom", "bom"),
    ("growth", "growth", "growth"),
)
"""(section id, figure id, table key in the content), in page order."""


def _table(table: dict[str, Any], css_id: str) -> str:
    head = "".join(f"<th>{escape(str(c))}</th>" for c in table["columns"])
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>"
        for row in table["rows"]
    )
    return f'<table id="{css_id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _notes(t: dict[str, str], section: str, page: dict[str, Any]) -> list[str]:
    data = page["data"]
    sc = data["scenario"]
    big = max(data["options"], key=lambda o: o["gpus"])
    notes: dict[str, list[str]] = {
        "wall": [t["wall.text"].format(threshold=f"{big['sweep']['knee_threshold']:.0%}")]
        + page["knees"]
        + page["bands"],
        "breakeven": [
            t["breakeven.text"].format(
                tokens=count_text(sc["token_budget"]), days=f"{sc['target_days']:.0f}"
            )
        ],
        "efficiency": [t["efficiency.text"]],
        "bom": [t["bom.text"]],
        "losses": [t["losses.text"].format(name=big["name"])],
        "memory": [t["memory.text"]],
        "failures": [t["failures.text"].format(rates=sc["failure_rates"], storage=sc["storage"])],
        "growth": [t["growth.text"].format(design=big["design"])],
        "stages": [t["stages.text"].format(design=big["design"])],
    }
    return notes.get(section, [])


def render_html(report: Report, lang: str = "en", *, command: str = "scalewall report") -> str:
    """The whole page as one string."""
    t = strings(lang)
    page = content(report, lang)
    data = page["data"]
    model = data["model"]
    sc = data["scenario"]
    parts = [
        f"<h1>{escape(page['title'])}</h1>",
        f'<h2 id="sec-verdict">{escape(t["sec.verdict"])}</h2>',
        '<ul class="verdict" id="verdict">'
        + "".join(f"<li>{escape(line)}</li>" for line in page["verdict"])
        + "</ul>",
        '<p class="note">'
        + escape(
            t["subtitle"].format(
                model=model["name"] or model["id"],
                params=f"{model['params'] / 1e9:,.1f}B",
                tokens=count_text(sc["token_budget"]),
                batch=f"{sc['global_batch_tokens']:,}",
            )
        )
        + "</p>",
        f'<p class="note">{escape(t["scenario_source"].format(source=sc["source"]))}</p>',
        f'<h2 id="sec-summary">{escape(t["sec.summary"])}</h2>',
        '<ul class="summary">'
        + "".join(
            f"<li>{escape(line)}</li>" for line in page["summary"][1 + len(page["verdict"]) :]
        )
        + "</ul>",
    ]
    first = True
    for section, figure, table in SECTIONS:
        parts.append(f'<h2 id="sec-{section}">{escape(t["sec." + section])}</h2>')
        parts += [f'<p class="note">{escape(n)}</p>' for n in _notes(t, section, page)]
        if figure is not None:
            fig = FIGURES[figure](t, data)
            parts.append(
                fig.to_html(
                    full_html=False,
                    include_plotlyjs=first,
                    div_id=f"fig-{figure}",
                    config={"displaylogo": False, "responsive": True},
                )
            )
            first = False
        if table is not None:
            parts.append(_table(page[table], f"table-{table}"))
    parts.append(f'<h2 id="sec-method">{escape(t["sec.method"])}</h2>')
    method = t["method.text"].format(facility=sc["facility"], command=command)
    parts.append(f'<p class="note">{escape(method)}</p>')
    body = "\n".join(parts)
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape(page['title'])}</title>\n<style>{STYLE}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )


def write_html(report: Report, path: Path, lang: str = "en", *, command: str = "") -> Path:
    """Write the page to ``path``; an unwritable path is a one-line error."""
    page = render_html(report, lang, command=command or "scalewall report")
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise ScalewallError(f"{path}: cannot write: {exc.strerror}") from None
    return path
