"""Markdown tables for Prefect artifacts (the figures are in tasks/report)."""

from __future__ import annotations

import pandas as pd

__all__ = ["markdown_table"]


def markdown_table(df: pd.DataFrame) -> str:
    if df.empty:
        return "_(no rows)_"
    cells = df.astype(object).where(df.notna(), "")
    lines = [
        "| " + " | ".join(map(str, df.columns)) + " |",
        "|" + "---|" * len(df.columns),
        *("| " + " | ".join(map(str, row)) + " |" for row in cells.itertuples(index=False)),
    ]
    return "\n".join(lines)
