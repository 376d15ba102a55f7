"""The `lilo reproduce ral-writer` report page: every table and figure of the RAL-Writer paper
from one result version, the published numbers beside lilo's, the statistics, and what the
runs were estimated to cost against what they made. Rendered from
`tasks/results_report/templates/reproduce.html.j2`; figures are embedded PNGs, so the page is
one file."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from lilo.tasks.results_report import data_uri, render_template

__all__ = ["PaperPage", "Section", "render_page"]


@dataclass(frozen=True)
class Section:
    """One table or figure: its title, what it shows, its rows, and a PNG when a figure."""

    key: str
    title: str
    note: str
    table: pd.DataFrame
    png: bytes | None = None
    marked: str = ""  # a boolean column whose true rows the page highlights


@dataclass(frozen=True)
class PaperPage:
    dataset_version: str
    version: int
    backbone: str
    judge: str
    sections: list[Section]
    cost: pd.DataFrame
    notes: list[str] = field(default_factory=list)


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        value = round(value, 2) + 0.0  # never -0.0
        return f"{value:.0f}" if value.is_integer() else f"{value:.2f}"
    return str(value)


def _rows(df: pd.DataFrame, marked: str) -> list[dict[str, Any]]:
    return [
        {"cells": [_cell(v) for v in row.values()], "marked": bool(marked and row[marked])}
        for row in df.astype(object).to_dict(orient="records")
    ]


def render_page(page: PaperPage) -> str:
    sections = [
        {
            "key": s.key,
            "title": s.title,
            "note": s.note,
            "columns": list(s.table.columns),
            "rows": _rows(s.table, s.marked),
            "image": data_uri(s.png) if s.png else None,
        }
        for s in page.sections
    ]
    cost = {"columns": list(page.cost.columns), "rows": _rows(page.cost, "")}
    title = f"RAL-Writer reproduced: dataset {page.dataset_version}, result version {page.version}"
    return render_template(
        "reproduce.html.j2", title=title, page=page, sections=sections, cost=cost
    )
