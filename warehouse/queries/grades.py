"""The judge's QA grades and reviewers' grades of them."""

from __future__ import annotations

from typing import Any

from lilo.warehouse.queries._read import Source, rows

__all__ = ["grade_reviews", "judged_consistency"]


def judged_consistency(source: Source, version: str) -> list[dict[str, Any]]:
    """The consistency scores (their details hold the judge's QA grades) of the dataset
    version's summaries in each sample's own paper order."""
    return rows(
        source,
        """
        SELECT s.generation_id, s.judge, s.detail, d.dataset_version
        FROM fct_scores AS s
        JOIN fct_generations AS g USING (generation_id)
        JOIN dim_samples AS d USING (sample_id)
        WHERE s.score = 'consistency' AND d.dataset_version = ? AND coalesce(g.rotation, 0) = 0
        """,
        [version],
    )


def grade_reviews(source: Source) -> list[dict[str, Any]]:
    """Every reviewer's grade beside the judge's."""
    return rows(
        source,
        "SELECT judge, dataset_version, judge_grade, human_grade FROM fct_grade_reviews "
        "ORDER BY ALL",
    )
