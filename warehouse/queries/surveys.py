"""Surveys, their references and citation groups."""

from __future__ import annotations

from typing import Any

from lilo.tasks.records import CitationGroup
from lilo.warehouse.queries._read import Source, rows, scalar, tuples

__all__ = [
    "cited_papers",
    "citation_groups",
    "read_surveys",
    "searched_references",
    "settled_surveys",
    "survey_failure",
]


def read_surveys(source: Source) -> set[str]:
    """The surveys read so far."""
    return {r[0] for r in tuples(source, "SELECT survey_id FROM dim_surveys")}


def settled_surveys(source: Source) -> set[str]:
    """Surveys read, or whose fetch failed for good (a `fetch_failed` one is retried)."""
    return {
        r[0]
        for r in tuples(
            source,
            "SELECT survey_id FROM dim_surveys UNION SELECT item_id FROM quarantine "
            "WHERE stage = 'fetch' AND reason <> 'fetch_failed'",
        )
    }


def survey_failure(source: Source, survey_id: str) -> str | None:
    """Why the survey could not be fetched or read, while it is not read; else None."""
    return scalar(
        source,
        "SELECT reason FROM quarantine WHERE item_id = ? AND stage IN ('fetch', 'survey') "
        "AND NOT EXISTS (SELECT 1 FROM dim_surveys WHERE survey_id = ?)",
        [survey_id, survey_id],
    )


def cited_papers(source: Source, survey_ids: list[str]) -> list[str]:
    """The arXiv ids the surveys' references resolved to."""
    return [
        r[0]
        for r in tuples(
            source,
            "SELECT DISTINCT arxiv_id FROM dim_survey_references "
            "WHERE arxiv_id IS NOT NULL AND list_contains(?, survey_id) ORDER BY 1",
            [survey_ids],
        )
    ]


def searched_references(source: Source, survey_ids: list[str]) -> list[dict[str, Any]]:
    """The surveys' references that a title search resolved, missed or failed on."""
    return rows(
        source,
        "SELECT survey_id, cite_key, title, arxiv_id, how, title_searches, title_searched_at, "
        "title_search_error FROM dim_survey_references WHERE list_contains(?, survey_id) "
        "AND how IN ('title_search', 'no_title_match', 'title_search_failed')",
        [survey_ids],
    )


def citation_groups(source: Source, survey_ids: list[str]) -> dict[str, list[CitationGroup]]:
    """Each survey's citation groups by group id, a key for each survey asked for."""
    groups: dict[str, list[CitationGroup]] = {s: [] for s in survey_ids}
    for row in rows(
        source,
        "SELECT * EXCLUDE (run_id) FROM dim_citation_groups "
        "WHERE list_contains(?, survey_id) ORDER BY group_id",
        [survey_ids],
    ):
        groups[row.pop("survey_id")].append(
            CitationGroup(
                **{
                    **row,
                    "cite_keys": tuple(row["cite_keys"]),
                    "paper_ids": tuple(row["paper_ids"]),
                }
            )
        )
    return groups
