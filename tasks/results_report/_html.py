"""One result version as static HTML pages, from the Jinja2 templates in `templates/` (one
per page: `report.html.j2`, `cell.html.j2`, `sample.html.j2`, on `base.html.j2`): the report
page with inline CSS and figures as base64 PNG, and its drill-down, a page per leaderboard
cell and per sample, linked by relative paths. No script and nothing fetched, so the folder
can be mailed, archived or opened offline.

Tables show the warehouse's values as they are (scores are already rounded to 2 decimals
by the views), so the page can be checked against the views number for number.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from functools import cache
from typing import Any

import jinja2
import pandas as pd

from lilo.tasks.leaderboard import OVERALL, TOO_SMALL, comparison, scope_line
from lilo.tasks.report_records import ReportData, SummaryDetail, length_label
from lilo.tasks.results_report._plots import (
    consistency_png,
    cost_png,
    histogram_png,
    lengths_png,
    position_curve_png,
)
from lilo.tasks.scoring import leaderboard_scores
from lilo.tasks.stats import fewest_samples

__all__ = [
    "cell_page",
    "data_uri",
    "render_html",
    "render_pages",
    "render_template",
    "sample_page",
]


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader(__package__, "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_template(name: str, **context: Any) -> str:
    """One of lilo's own pages (`templates/`, each on `base.html.j2` and its style):
    autoescaped, a missing variable an error. Templates from outside lilo are rendered in
    the sandbox instead (tasks/prompts/pack.py)."""
    return _env().get_template(name).render(**context)


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
        value = round(value, 2) + 0.0  # never -0.0
        return (f"{value:.0f}" if value.is_integer() else f"{value:.2f}"), True
    return str(value), False


def _fmt(value: Any) -> str:
    return _cell(value)[0]


def _table(
    df: pd.DataFrame, href: Callable[[dict[str, Any]], str | None] | None = None, *linked: str
) -> dict[str, Any]:
    """A DataFrame as the `table` macro takes it: cells (text, numeric, link); `href(row)`
    is the link of the row's cells in the columns `linked`."""
    rows = []
    for r in df.astype(object).to_dict(orient="records"):
        link = href(r) if href else None
        cells = [(*_cell(v), link if c in linked else None) for c, v in r.items()]
        rows.append({"cells": cells, "partial": r.get("partial") is True})
    return {"columns": [str(c) for c in df.columns], "rows": rows}


def _slug(name: str) -> str:
    """A file name for an id or a method variant (`compress[extractive]`)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "_"


def cell_page(method: str, target_words: int) -> str:
    return f"cells/{_slug(method)}-{target_words}.html"


def sample_page(sample_id: str) -> str:
    return f"samples/{_slug(sample_id)}.html"


def _stats(data: ReportData) -> dict[str, Any]:
    stats = data.stats
    if stats is None:
        return {"stats": None}
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
    return {
        "stats": stats,
        "stats_words": _table(pd.DataFrame([stats.words_summary()]).round(0)),
        "stats_surveys": _table(surveys),
        "stats_how": _table(how),
        "histogram_png": data_uri(histogram_png(stats)) if stats.samples else None,
    }


def _one(value: Any) -> str:
    """A score as Table 2 prints it: one decimal."""
    return "–" if _cell(value)[0] == "–" else f"{value:.1f}"


def _score(values: dict[str, Any], column: str, link: str | None) -> dict[str, Any]:
    """One score cell of Table 2: the score, its interval (when known) and its link."""
    low, high = values.get(f"{column}_low"), values.get(f"{column}_high")
    known = _one(low) != "–" and _one(high) != "–"
    interval = f"[{_one(low)}, {_one(high)}]" if known else ""
    return {"text": _one(values.get(column)), "interval": interval, "link": link}


def _count(scored: int, expected: int, link: str | None) -> dict[str, Any]:
    return {"text": f"{scored}/{expected}", "link": link, "short": scored < expected}


def _table2(lb: pd.DataFrame, href: Callable[[dict[str, Any]], str | None]) -> dict[str, Any]:
    """The leaderboard as the paper's Table 2: a row per method (and backbone, when there are
    several), for each length S_l, S_c, S_q with their 95% intervals and n scored/expected,
    then Overall; each length's numbers link to its cell's page."""
    if lb.empty:
        return {"rows": []}
    lengths = sorted({int(n) for n in lb["target_words"]})
    columns = [h.column for h in leaderboard_scores()]
    several = lb["backbone"].nunique() > 1
    rows = []
    for (variant, backbone), group in lb.groupby(["variant", "backbone"], sort=False):
        records = group.astype(object).where(group.notna(), None).to_dict(orient="records")
        by_length = {int(r["target_words"]): r for r in records}
        cells: list[dict[str, Any]] = []
        for n in lengths:
            r = by_length.get(n)
            if r is None:
                cells += [{"text": "–", "interval": "", "link": None}] * len(columns)
                cells.append({"text": "–", "link": None, "short": False})
                continue
            link = href(r)
            cells += [_score(r, c, link) for c in columns]
            cells.append(_count(int(r["scored"]), int(r["expected"]), link))
        first = records[0]
        cells += [_score(first, f"overall_{c}", None) for c in columns]
        cells.append(_count(int(group["scored"].sum()), int(group["expected"].sum()), None))
        names = [str(variant), str(backbone)] if several else [str(variant)]
        rows.append({"names": names, "cells": cells, "partial": bool(group["partial"].any())})
    return {
        "names": ["method", "backbone"] if several else ["method"],
        "groups": [*map(length_label, lengths), OVERALL],
        "scores": [*(h.label for h in leaderboard_scores()), "n"],
        "rows": rows,
    }


def _paired(data: ReportData, lb: pd.DataFrame) -> dict[str, Any]:
    """The paired comparison with the reference method under the leaderboard (title and
    table; no table when there is none); a difference whose interval covers zero is marked
    within noise. A table whose every row is "n too small" is folded under one line
    (`paired_folded`), so it does not stand between the leaderboard and the figures."""
    title, header, body = comparison(data.paired, list(lb["variant"]) if not lb.empty else [])
    table = _table(pd.DataFrame(body, columns=header)) if body else None
    interval = header.index("95% interval")
    folded = ""
    if body and all(row[interval] == TOO_SMALL for row in body):
        folded = (
            f"Paired comparison: {len(body)} differences, each with n too small (fewer than "
            f"{fewest_samples()} samples scored by both methods), so no interval; open to see "
            "them"
        )
    return {"paired_title": title, "paired": table, "paired_folded": folded}


def render_html(
    data: ReportData, generated_at: datetime | None = None, linked: Iterable[str] = ()
) -> str:
    """The report page of one result version; leaderboard rows whose cell page is in
    `linked` link their numbers to it."""
    generated_at = generated_at or datetime.now(UTC)
    lb = data.leaderboard
    linked = set(linked)
    scored = lb.dropna(subset=["s_c"]) if not lb.empty else lb

    def href(row: dict[str, Any]) -> str | None:
        page = cell_page(row["variant"], int(row["target_words"]))
        return page if page in linked else None

    curve = data.position_curve
    return (
        _env()
        .get_template("report.html.j2")
        .render(
            title=f"lilo results, version {data.version}",
            data=data,
            scope=scope_line(data.scope),
            generated_at=generated_at,
            judges=sorted({j for v in lb["judge"].dropna() for j in v.split(", ")}),
            backbones=sorted(lb["backbone"].unique()) if not lb.empty else [],
            board=_table2(lb, href),
            leaderboard=_table(lb, href, "scored", *(h.column for h in leaderboard_scores())),
            position_curve=_table(curve),
            curve_png=data_uri(position_curve_png(curve)) if not curve.empty else None,
            lengths_png=data_uri(lengths_png(data.lengths)) if not data.lengths.empty else None,
            consistency_png=data_uri(consistency_png(lb)) if not scored.empty else None,
            cost=_table(data.cost),
            cost_png=data_uri(cost_png(data.cost)) if not data.cost.empty else None,
            failures=_table(data.failures),
            **_paired(data, lb),
            **_stats(data),
        )
    )


def cell_rows(summaries: list[SummaryDetail]) -> pd.DataFrame:
    """A cell page's table: each summary's sample, backbone, words, the tokens left out of
    its papers where its input was fitted to the window (generate.fit_input), its scores."""
    fitted = any(d.left_out is not None for d in summaries)
    return pd.DataFrame(
        [
            {
                "sample": d.sample_id,
                "backbone": d.backbone,
                "words": d.words,
                **({"tokens left out": d.left_out} if fitted else {}),
                **{h.column: d.scores.get(h.name) for h in leaderboard_scores()},
            }
            for d in summaries
        ]
    ).round(2)


def render_pages(
    data: ReportData, details: list[SummaryDetail], generated_at: datetime | None = None
) -> dict[str, str]:
    """Every page of the version, by path relative to its folder: `report.html`, a page
    per leaderboard cell (`cells/...`) and one per sample (`samples/...`)."""
    env = _env()
    pages: dict[str, str] = {}
    by_cell: dict[tuple[str, int], list[SummaryDetail]] = {}
    by_sample: dict[str, list[SummaryDetail]] = {}
    for d in details:
        by_cell.setdefault((d.method, d.target_words), []).append(d)
        by_sample.setdefault(d.sample_id, []).append(d)
    for (method, words), summaries in by_cell.items():
        rows = cell_rows(summaries)
        anchor = summaries[0].anchor

        def to_sample(r: dict[str, Any], anchor: str = anchor) -> str:
            return f"../{sample_page(r['sample'])}#{anchor}"

        table = _table(rows, to_sample, "sample")
        pages[cell_page(method, words)] = env.get_template("cell.html.j2").render(
            title=f"{method}, {words} words: {len(summaries)} summaries",
            version=data.version,
            summaries=table,
        )
    for sample_id, summaries in by_sample.items():
        pages[sample_page(sample_id)] = env.get_template("sample.html.j2").render(
            title=f"Sample {sample_id}",
            version=data.version,
            details=summaries,
            fmt=_fmt,
        )
    pages["report.html"] = render_html(data, generated_at, linked=pages)
    return pages
