"""What people see: Markdown tables for Prefect artifacts, and plots where a curve says
more than a table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

__all__ = ["markdown_table", "plot_position_curve"]


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


def plot_position_curve(curve: pd.DataFrame, path: Path) -> Path:
    """S_single against the position of the paper a question is about, a panel per target
    length and a line per method (the report's figure): the "lost in the middle" U."""
    from tasks.report import position_curve_png

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(position_curve_png(curve))
    return path
