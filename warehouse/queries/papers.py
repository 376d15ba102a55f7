"""Fetched sources and cleaned papers."""

from __future__ import annotations

import json

from lilo.tasks.records import PaperText, RawSource
from lilo.warehouse.queries._read import Source, rows, tuples

__all__ = [
    "clean_paper_ids",
    "hashes_of",
    "hashes_of_others",
    "load_papers",
    "raw_sources",
    "sources_to_clean",
]


def load_papers(source: Source) -> dict[str, PaperText]:
    """Every clean paper by id."""
    return {
        r["paper_id"]: PaperText(
            **{
                **r,
                "removed": json.loads(r["removed"] or "{}"),
                "warnings": tuple(r["warnings"] or ()),
            }
        )
        for r in rows(source, "SELECT * EXCLUDE (run_id) FROM dim_papers")
    }


def clean_paper_ids(source: Source) -> set[str]:
    return {r[0] for r in tuples(source, "SELECT paper_id FROM dim_papers")}


def hashes_of_others(source: Source, paper_ids: list[str]) -> dict[str, str]:
    """Content hash -> paper id of the clean papers not in `paper_ids` (a paper whose text
    one of those repeats is a copy)."""
    return dict(
        tuples(
            source,
            "SELECT content_sha256, paper_id FROM dim_papers WHERE NOT list_contains(?, paper_id)",
            [paper_ids],
        )
    )


def hashes_of(source: Source, paper_ids: list[str]) -> dict[str, str]:
    """Paper id -> content hash of the stored papers among `paper_ids`."""
    return dict(
        tuples(
            source,
            "SELECT paper_id, content_sha256 FROM dim_papers WHERE list_contains(?, paper_id)",
            [paper_ids],
        )
    )


def raw_sources(source: Source) -> dict[str, RawSource]:
    """Every fetched source by its bare arXiv id."""
    fields = ", ".join(RawSource.__dataclass_fields__)  # the record's own field names
    return {
        r["arxiv_id"]: RawSource(**r) for r in rows(source, f"SELECT {fields} FROM stg_raw_sources")
    }


def sources_to_clean(source: Source, cleaner_version: str, tag: str) -> list[RawSource]:
    """Fetched papers that cleaner `cleaner_version` has neither cleaned nor rejected (a
    rejection's detail starts with `tag`), by id."""
    return [
        RawSource(**{k: r[k] for k in RawSource.__dataclass_fields__})
        for r in rows(
            source,
            "SELECT * EXCLUDE (run_id) FROM stg_raw_sources s WHERE role = 'paper' "
            "AND NOT EXISTS (SELECT 1 FROM dim_papers p WHERE p.paper_id = s.arxiv_id "
            "                AND p.cleaner_version = ?) "
            "AND NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.item_id = s.arxiv_id "
            "                AND q.stage IN ('clean', 'validate') "
            "                AND starts_with(q.detail, ?)) ORDER BY arxiv_id",
            [cleaner_version, tag],
        )
    ]
