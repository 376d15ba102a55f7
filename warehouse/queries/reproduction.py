"""What the reproduction page of the paper's tables and figures reads."""

from __future__ import annotations

import pandas as pd

from lilo.warehouse.queries._read import Source, frame, tuples

__all__ = ["REPRODUCTION_VIEWS", "reproduction_views", "score_means"]

# The views the page's sections are drawn from.
REPRODUCTION_VIEWS = (
    "cell_intervals",
    "cost",
    "ral_sweep",
    "output_lengths",
    "position_curve",
    "position_permutation",
    "judge_spread",
)


def reproduction_views(source: Source) -> dict[str, pd.DataFrame]:
    """Each of REPRODUCTION_VIEWS, whole, by name."""
    return {name: frame(source, f"SELECT * FROM {name}") for name in REPRODUCTION_VIEWS}


def score_means(source: Source, version: int, variant: str, target_words: int) -> dict[str, float]:
    """Score -> mean value of the variant's summaries at `target_words` in result version
    `version`, in each sample's own paper order."""
    return dict(
        tuples(
            source,
            "SELECT score, avg(value) FROM res_scores WHERE version = ? AND variant = ? "
            "AND target_words = ? AND coalesce(rotation, 0) = 0 GROUP BY score",
            [version, variant, target_words],
        )
    )
