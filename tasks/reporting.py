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
    """S_single against the position of the paper a question is about, one line per
    method and length: the "lost in the middle" U (or its absence)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4), dpi=110)
    for (method, target), group in curve.groupby(["method", "target_words"], sort=True):
        ax.plot(group["position"], group["s_single"], marker="o", label=f"{method} @ {target}")
    ax.set_xlabel("position of the paper in the input")
    ax.set_ylabel("S_single (x100)")
    ax.set_xticks(sorted(curve["position"].unique()))
    ax.set_title("Single-context consistency by paper position")
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
