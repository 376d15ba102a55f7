"""One result version as a single static HTML page: inline CSS, figures as base64 PNG, no
script and nothing fetched, so the file can be mailed, archived or opened offline.

Tables show the warehouse's values as they are (scores are already rounded to 2 decimals
by the views), so the page can be checked against the views number for number.
"""

from __future__ import annotations

import base64
import html
import math
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from tasks.leaderboard import comparison
from tasks.report._data import ReportData
from tasks.report._plots import (
    consistency_png,
    cost_png,
    histogram_png,
    lengths_png,
    position_curve_png,
)

__all__ = ["data_uri", "render_html"]

_CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 72rem;
       padding: 0 1rem; color: #1d232a; }
h1 { margin-bottom: .2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #dde; }
.meta { color: #556; }
.partial { background: #fff3cd; border: 1px solid #e0c36c; padding: .6rem .9rem; }
table { border-collapse: collapse; margin: .6rem 0; font-size: 13px; }
th, td { border: 1px solid #d6dae0; padding: .25rem .55rem; }
th { background: #f1f3f6; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.partial-row td { background: #fff8e1; }
img { max-width: 100%; height: auto; display: block; margin: .6rem 0; }
.note { color: #556; font-size: 13px; }
"""


def data_uri(png: bytes) -> str:
    """A PNG as a `data:` URI, for an <img> or a Markdown image."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _cell(value: Any) -> tuple[str, bool]:
    """(text, numeric) of one value: floats with 2 decimals, whole floats as integers."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return "–", False
    if isinstance(value, bool):
        return ("yes" if value else "no"), False
    if isinstance(value, int):
        return str(value), True
    if isinstance(value, float):
        return (f"{value:.0f}" if value.is_integer() else f"{value:.2f}"), True
    return str(value), False


def _table(df: pd.DataFrame, table_id: str) -> str:
    if df.empty:
        return f'<p class="note" id="{table_id}">No rows.</p>'
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = []
    for record in df.astype(object).to_dict(orient="records"):
        cells = []
        for value in record.values():
            text, numeric = _cell(value)
            cells.append(f"<td{' class=num' if numeric else ''}>{html.escape(text)}</td>")
        marked = ' class="partial-row"' if record.get("partial") is True else ""
        rows.append(f"<tr{marked}>{''.join(cells)}</tr>")
    return (
        f'<table id="{table_id}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _figure(png: bytes, alt: str) -> str:
    return f'<img src="{data_uri(png)}" alt="{html.escape(alt)}">'


def _stats_section(data: ReportData) -> str:
    stats = data.stats
    if stats is None:
        return '<p class="note">No dataset statistics in this warehouse.</p>'
    words = pd.DataFrame([stats.words_summary()]).round(0)
    surveys = pd.DataFrame(
        [
            {
                "survey": s.survey_id,
                "title": s.title,
                "references": s.references,
                "resolved": s.resolved,
                "resolved_pct": round(100 * s.resolved_rate, 2),
                "samples": s.samples,
            }
            for s in stats.surveys
        ]
    )
    how = pd.DataFrame(
        sorted(stats.how.items(), key=lambda i: -i[1]), columns=["how resolved", "entries"]
    )
    number = f" (#{stats.number})" if stats.number is not None else ""
    parts = [
        f"<p>Dataset <b>{html.escape(stats.dataset_version)}</b>{number}: "
        f'<span id="stats-samples">{stats.samples}</span> samples, '
        f'<span id="stats-papers">{stats.papers}</span> papers, '
        f"{len(stats.surveys)} surveys.</p>",
        "<h3>Input words per sample</h3>",
        _table(words, "stats-words"),
    ]
    if stats.samples:
        parts.append(_figure(histogram_png(stats), "histogram of input words per sample"))
    parts += [
        "<h3>Surveys</h3>",
        _table(surveys, "stats-surveys"),
        "<h3>How references were resolved</h3>",
        _table(how, "stats-how"),
    ]
    return "\n".join(parts)


def _paired(data: ReportData, lb: pd.DataFrame) -> str:
    """The paired comparison with the reference method under the leaderboard; a difference
    whose interval covers zero is marked within noise."""
    title, header, body = comparison(data.paired, list(lb["variant"]) if not lb.empty else [])
    if not body:
        return ""
    return f"<h3>{html.escape(title)}</h3>" + _table(pd.DataFrame(body, columns=header), "paired")


def _section(title: str, anchor: str, *body: str) -> str:
    return f'<section id="{anchor}-section"><h2>{html.escape(title)}</h2>{"".join(body)}</section>'


def render_html(data: ReportData, generated_at: datetime | None = None) -> str:
    """The report page of one result version."""
    generated_at = generated_at or datetime.now(UTC)
    lb = data.leaderboard
    judges = sorted({j for v in lb["judge"].dropna() for j in v.split(", ")})
    backbones = sorted(lb["backbone"].unique()) if not lb.empty else []
    partial = (
        '<p class="partial"><b>Partial:</b> some expected summaries failed or are unscored; '
        "rows marked in the leaderboard average fewer summaries than expected (see "
        '<a href="#failures-section">failures</a>).</p>'
        if data.partial
        else ""
    )
    curve = data.position_curve
    scored = lb.dropna(subset=["s_c"]) if not lb.empty else lb
    sections = [
        _section(
            "Leaderboard",
            "leaderboard",
            '<p class="note">S_l length, S_c consistency, S_q quality (x100): means over the '
            "scored summaries in each sample's own paper order; scored/expected counts "
            "summaries; <code>_low</code>/<code>_high</code>: each score's 95% bootstrap "
            "interval over samples.</p>",
            _table(lb, "leaderboard"),
            _paired(data, lb),
        ),
        _section(
            "S_single by paper position",
            "position_curve",
            _figure(position_curve_png(curve), "S_single by paper position, per length")
            if not curve.empty
            else "",
            _table(curve, "position_curve"),
        ),
        _section(
            "Required vs generated length",
            "lengths",
            _figure(lengths_png(data.lengths), "generated against required words per summary")
            if not data.lengths.empty
            else '<p class="note">No summaries.</p>',
        ),
        _section(
            "S_c by length",
            "consistency",
            _figure(consistency_png(lb), "S_c by required length, per method")
            if not scored.empty
            else '<p class="note">No consistency scores.</p>',
        ),
        _section(
            "Cost",
            "cost",
            '<p class="note">Tokens per summary (mean over the version\'s summaries).</p>',
            _figure(cost_png(data.cost), "tokens per summary by method and length")
            if not data.cost.empty
            else "",
            _table(data.cost, "cost"),
        ),
        _section("Dataset statistics", "stats", _stats_section(data)),
        _section(
            "Failures",
            "failures",
            '<p class="note">Every failed generation or score in the warehouse when this page '
            "was written, with its reason.</p>",
            _table(data.failures, "failures"),
        ),
    ]
    title = f"lilo results, version {data.version}"
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{_CSS}</style></head><body>\n"
        f"<h1>{title}</h1>\n"
        f'<p class="meta">Dataset {html.escape(data.dataset_version)} · created '
        f"{data.created_at:%Y-%m-%d %H:%M} UTC · backbone {html.escape(', '.join(backbones))}"
        f" · judge {html.escape(', '.join(judges) or '-')} · page written "
        f"{generated_at:%Y-%m-%d %H:%M} UTC</p>\n"
        f"{partial}\n" + "\n".join(sections) + "\n</body></html>\n"
    )
