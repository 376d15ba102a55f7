"""Generations and what has been done with them (scores, win-rate pairs, judge repeats)."""

from __future__ import annotations

import json

from lilo.tasks.records import Generation
from lilo.warehouse.queries._read import Source, rows, tuples

__all__ = [
    "judge_repeats_done",
    "judged_pairs",
    "load_generations",
    "scored_generations",
    "succeeded_generations",
]


def load_generations(
    source: Source, sample_ids: list[str], *, scored_originals: bool = False
) -> list[Generation]:
    """The generations of `sample_ids` that succeeded (no error), by id; with
    `scored_originals`, only those in the sample's own paper order that have scores (what
    judge repeats score again)."""
    return [
        Generation(
            **{
                **r,
                "method_args": json.loads(r["method_args"] or "{}"),
                "plan": tuple(json.loads(r["plan"] or "[]")),
                "restated": tuple(json.loads(r["restated"] or "[]")),
                "papers_read": tuple(r["papers_read"] or ()),
            }
        )
        for r in rows(
            source,
            "SELECT * EXCLUDE (run_id, config_hash, code_version) FROM fct_generations "
            "WHERE error = '' AND list_contains(?, sample_id) AND (NOT ? OR "
            "(coalesce(rotation, 0) = 0 "
            "AND generation_id IN (SELECT generation_id FROM fct_scores))) ORDER BY generation_id",
            [sample_ids, scored_originals],
        )
    ]


def succeeded_generations(source: Source) -> set[str]:
    """Ids of the generations that succeeded (a failed one is tried again)."""
    return {
        r[0] for r in tuples(source, "SELECT generation_id FROM fct_generations WHERE error = ''")
    }


def scored_generations(source: Source) -> set[str]:
    return {r[0] for r in tuples(source, "SELECT DISTINCT generation_id FROM fct_scores")}


def judged_pairs(source: Source) -> set[tuple[str, str]]:
    """(generation_a, generation_b) of the win-rate comparisons made."""
    return set(tuples(source, "SELECT DISTINCT generation_a, generation_b FROM fct_winrate"))


def judge_repeats_done(source: Source) -> set[tuple[str, int]]:
    """(generation_id, repeat) of the judge repeats made."""
    return set(tuples(source, "SELECT DISTINCT generation_id, repeat FROM fct_judge_repeats"))
