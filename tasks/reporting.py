"""Numbers as lilo shows them, and Markdown tables for Prefect artifacts (the figures are in
tasks/report)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

__all__ = ["fixed", "markdown_table", "unsigned_zero"]


def unsigned_zero(value: Any) -> Any:
    """A float zero as 0.0, never -0.0; anything else as it is."""
    return value + 0.0 if isinstance(value, float) and value == 0.0 else value


def fixed(value: Any, decimals: int = 1, *, sign: bool = False) -> str:
    """`value` with `decimals` decimals, `+` before a positive one with `sign`; "-" for
    None or NaN. Never "-0.0": a value that rounds to zero shows as 0.0 (+0.0)."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "-"
    rounded = round(float(value), decimals) + 0.0
    return f"{rounded:+.{decimals}f}" if sign else f"{rounded:.{decimals}f}"


def markdown_table(df: pd.DataFrame) -> str:
    if df.empty:
        return "_(no rows)_"
    cells = df.astype(object).where(df.notna(), "").map(unsigned_zero)
    lines = [
        "| " + " | ".join(map(str, df.columns)) + " |",
        "|" + "---|" * len(df.columns),
        *("| " + " | ".join(map(str, row)) + " |" for row in cells.itertuples(index=False)),
    ]
    return "\n".join(lines)
